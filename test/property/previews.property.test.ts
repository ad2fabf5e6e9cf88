/** Per-kind previews as properties: bounded, never longer than the output, the same every time, nothing invented. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { preview } from '../../src/engine/preview';
import { classifyOutput, type PreviewHint } from '../../src/engine/previews';

/** Lines in the shapes the kinds look for, mixed with noise, so every kind is reached. */
const line = fc.oneof(
  fc.constantFrom(
    '============================= test session starts ==============================',
    'FAILED tests/test_models.py::test_save - AssertionError: expected 3 got 4',
    'E       assert 3 == 4',
    'tests/test_models.py:42: AssertionError',
    '=================== 1 failed, 41 passed in 2.31s ===================',
    'diff --git a/src/app.ts b/src/app.ts',
    '@@ -10,7 +10,8 @@ export function main() {',
    '+  const x = 1;',
    '-  const x = 2;',
    'On branch main',
    '\tmodified:   src/app.ts',
    'src/app.ts:12:  const handler = createHandler();',
    'src/app.ts(3,5): error TS2322: Type string is not assignable to type number.',
    'error[E0433]: failed to resolve: use of undeclared crate',
    '  --> src/main.rs:4:5',
    'drwxr-xr-x  2 root root 4096 Jan 16 06:25 src',
    '-rw-r--r--  1 root root  120 Jan 16 06:25 package.json',
    './src/engine/previews/select.ts',
    '├── src',
    '     12→def main():',
    'class Engine:',
    'Successfully installed astroid-2.13.0',
    'npm ERR! code ERESOLVE',
    '<returncode>1</returncode>',
    'Exit code 1',
    '😀 wide characters 中文',
  ),
  fc.string({ maxLength: 300 }),
);
const text = fc.array(line, { minLength: 0, maxLength: 120 }).map((ls) => ls.join('\n'));
const hint = fc.option(
  fc.record({
    tool: fc.constantFrom('Bash', 'Read', 'Grep', 'Glob', 'shell', 'bash', 'open'),
    command: fc.constantFrom(
      'pytest -x',
      'git diff',
      'git status',
      'rg -n foo',
      'ls -la',
      'cargo build',
      'tsc --noEmit',
      'pip install x',
      'cat a.py',
      'echo hi',
    ),
  }),
  { nil: undefined },
) as fc.Arbitrary<PreviewHint | undefined>;

describe('per-kind previews', () => {
  it('never exceed the budget and never make an output longer', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 1, max: 2_000 }), hint, (t, budget, h) => {
        const p = preview('smart', t, budget, h);
        expect(p.length).toBeLessThanOrEqual(budget);
        expect(p.length).toBeLessThanOrEqual(t.length);
      }),
      { numRuns: 400 },
    );
  });

  it('are the same every time for the same output, budget and call', () => {
    fc.assert(
      fc.property(text, fc.integer({ min: 100, max: 2_000 }), hint, (t, budget, h) => {
        expect(preview('smart', t, budget, h)).toBe(preview('smart', t, budget, h));
        expect(classifyOutput(t, h)).toBe(classifyOutput(t, h));
      }),
      { numRuns: 200 },
    );
  });

  it('show only lines of the output (whole or cut), the omission lines, and the exit status and count lines they open with', () => {
    const own = /^\[… [\d,]+ lines(, [\d,]+ chars)? omitted …\]$|^\[\d+ (lines in \d+ files|entries)|^exit_code: /;
    fc.assert(
      fc.property(text, fc.integer({ min: 200, max: 2_000 }), hint, (t, budget, h) => {
        if (h?.command === 'ls -la' || classifyOutput(t, h) === 'listing') return; // listings cut `ls -l` lines to their names
        const source = t.split('\n');
        for (const l of preview('smart', t, budget, h).split('\n')) {
          if (own.test(l)) continue;
          const cut = l.endsWith('…') ? l.slice(0, -1) : l;
          expect(source.some((s) => s === l || s.startsWith(cut) || s.endsWith(l))).toBe(true);
        }
      }),
      { numRuns: 200 },
    );
  });
});
