/** Per-kind previews on real outputs of the corpus: each keeps what agents come back for in its kind. */
import { describe, expect, it } from 'vitest';
import { genericPreview, preview } from '../../src/engine/preview';
import { classifyOutput } from '../../src/engine/previews';
import { mainProgram } from '../../src/engine/previews/command';
import { unwrap } from '../../src/engine/previews/envelope';
import { selectLines } from '../../src/engine/previews/select';
import { corpusOutput, corpusToolOutput } from '../support/corpus-outputs';
import { expectStart } from '../support/expect';

/** The default previewChars. */
const BUDGET = 1_200;
const GH_ACTION_LOGS = 'dev/claude-code/M-Thisness__gh-action-logs-0d510331.jsonl';
const GITLEAKS = 'dev/claude-code/M-Thisness__gitleaks-redact-72dfed17.jsonl';
const COSMIC = 'dev/claude-code/M-Thisness__cosmic-applet-c7d2069e.jsonl';
const SQLFLUFF = 'dev/mini-swe-agent/SWE-agent__deepseek-reasoner-sqlfluff-1763.traj.json';
const SPHINX = 'long/mini-swe-agent-text/gruckion-mini-swe-agent__gemini-3-pro__sphinx-doc__sphinx-9258.traj.json';
const CODEX = 'dev/codex/AcidicSoil__sample-rollout-019a93b9.jsonl';
const ASTROID = 'dev/mini-swe-agent/SWE-agent__deepseek-chat-astroid-1866.traj.json';

const lines = (t: string) => t.split('\n');

describe('file read preview', () => {
  it('keeps the head and every top-level def of a Python file Claude Code read, with its line numbers', async () => {
    const r = await corpusToolOutput(GH_ACTION_LOGS, 'Read', (t) => t.length > 5_000 && t.includes('→def sync_json_logs'));
    expect(classifyOutput(r.text, r.hint)).toBe('file');
    const p = preview('smart', r.text, BUDGET, r.hint);
    expectStart(p, '     1→import os');
    const defs = lines(r.text).filter((l) => /^\s*\d+→def /.test(l));
    expect(defs.length).toBeGreaterThan(3);
    for (const d of defs) expect(lines(p)).toContain(d);
  });

  it('leaves out the system reminder Claude Code appends to a file read', async () => {
    const r = await corpusToolOutput(GH_ACTION_LOGS, 'Read', (t) => t.length > BUDGET && t.includes('<system-reminder>'));
    expect(preview('smart', r.text, BUDGET, r.hint)).not.toContain('<system-reminder>');
  });
});

describe('test run preview', () => {
  it('keeps a failing pytest run: the failure, its assertion and location, and the summary', async () => {
    const r = await corpusOutput(SQLFLUFF, /pytest test\/core\/file_helpers_test\.py -xvs/, (t) => t.includes('1 failed'));
    expect(classifyOutput(r.text, r.hint)).toBe('test');
    const p = lines(preview('smart', r.text, BUDGET, r.hint));
    expect(p[0]).toBe('<returncode>0</returncode>');
    expect(p).toContain("E       AssertionError: assert 'utf-8' == 'ascii'");
    expect(p).toContain('test/core/file_helpers_test.py:46: AssertionError');
    expect(p.some((l) => /^FAILED test\/core\/file_helpers_test\.py::test__parser__helper_get_encoding/.test(l))).toBe(true);
    expect(p.some((l) => /^=+ 1 failed, 2 warnings in [\d.]+s =+$/.test(l))).toBe(true);
  });

  it('keeps every FAILED line and the summary of a long pytest run that the generic preview cuts', async () => {
    const r = await corpusOutput(SPHINX, /^pytest tests\/test_domain_py\.py$/, (t) => t.includes('3 failed'));
    const failed = lines(r.text).filter((l) => l.startsWith('FAILED '));
    const p = lines(preview('smart', r.text, BUDGET, r.hint));
    expect(failed).toHaveLength(3);
    for (const f of failed) expect(p).toContain(f);
    expect(p.some((l) => /3 failed, 42 passed/.test(l))).toBe(true);
  });
});

describe('search preview', () => {
  it('opens with the files and their counts, then the first hit of every file (rg -n in Codex)', async () => {
    const r = await corpusOutput(CODEX, /^rg -n "lmstudio"/);
    expect(classifyOutput(r.text, r.hint)).toBe('search');
    const p = lines(preview('smart', r.text, BUDGET, r.hint));
    expect(p[0]).toMatch(/^exit_code: \d+$/);
    expect(p[1]).toMatch(/^\[\d+ lines in \d+ files: .+ \(\d+\)/);
    const body = unwrap(r.text).body;
    const firstHits = new Map<string, string>();
    for (const l of lines(body)) {
      const f = /^([^:]+):\d+:/.exec(l)?.[1];
      if (f && !firstHits.has(f)) firstHits.set(f, l);
    }
    expect(firstHits.size).toBeGreaterThan(3);
    for (const [f] of firstHits) expect(p[1]).toContain(f);
    for (const hit of [...firstHits.values()].slice(0, 4)) expect(p.some((l) => hit.startsWith(l.replace(/…$/, '')))).toBe(true);
  });
});

describe('git preview', () => {
  it('keeps the branch, the sections and paths of git status, never its hints', async () => {
    const r = await corpusOutput(GH_ACTION_LOGS, /&& git status$/);
    expect(classifyOutput(r.text, r.hint)).toBe('git');
    const p = preview('smart', r.text, BUDGET, r.hint);
    expectStart(p, 'On branch main');
    expect(p).toContain('Changes not staged for commit:');
    expect(p).toContain('\tmodified:   .github/workflows/generate-markdown.yml');
    expect(lines(p).filter((l) => /^\s+\(use "git /.test(l))).toEqual([]);
  });

  it('keeps the file header and the hunk header of a diff before its changed lines', async () => {
    const r = await corpusOutput(GITLEAKS, /^git diff --cached /);
    const p = lines(preview('smart', r.text, BUDGET, r.hint));
    expect(p[0]).toBe('diff --git a/Projects/Claude-Zima/README.md b/Projects/Claude-Zima/README.md');
    expect(p).toContain('@@ -1,104 +1,98 @@');
    expect(p.filter((l) => /^[+-]/.test(l)).length).toBeGreaterThan(5);
  });
});

describe('diagnostics preview', () => {
  it('keeps rustc errors with their codes and locations, and the could-not-compile summary (cargo build)', async () => {
    const r = await corpusOutput(COSMIC, /cargo build --release 2>&1$/, (t) => t.length > 9_000);
    expect(classifyOutput(r.text, r.hint)).toBe('diagnostics');
    const p = lines(preview('smart', r.text, BUDGET, r.hint));
    expect(p[0]).toBe('Exit code 101');
    const errors = p.filter((l) => /^error\[E\d{4}\]: /.test(l));
    expect(errors.length).toBeGreaterThanOrEqual(5);
    // each kept error is followed by its location
    for (const e of errors) expect(p[p.indexOf(e) + 1]).toMatch(/^\s*--> src\/\S+\.rs:\d+:\d+$/);
    expect(p.some((l) => l.startsWith('error: could not compile'))).toBe(true);
  });
});

describe('listing preview', () => {
  it('cuts ls -la lines to the names so the whole directory fits', async () => {
    const r = await corpusOutput(ASTROID, /^ls -la \/testbed\/$/);
    expect(classifyOutput(r.text, r.hint)).toBe('listing');
    const p = lines(preview('smart', r.text, BUDGET, r.hint));
    expect(p.slice(0, 2)).toEqual(['<returncode>0</returncode>', expect.stringMatching(/^\[\d+ entries\]$/)]);
    expect(p).toContain('astroid/');
    expect(p).toContain('tests/');
    expect(p.some((l) => /^[-d][rwx-]{9}/.test(l))).toBe(false);
    expect(p.some((l) => l.startsWith('[…'))).toBe(false);
  });
});

describe('build preview', () => {
  it('keeps what pip installed', async () => {
    const r = await corpusOutput(ASTROID, /pip install -e \.$/);
    expect(classifyOutput(r.text, r.hint)).toBe('build');
    expect(preview('smart', r.text, 600, r.hint)).toMatch(/^Successfully installed astroid-\S+ /m);
  });
});

describe('dispatch', () => {
  it('names the program behind cd, pipes, python -m and heredocs', () => {
    expect(mainProgram('cd /testbed && python -m pytest tests/x.py -xvs 2>&1 | tail -50')).toBe('pytest');
    expect(mainProgram('cd /testbed && python -m django test responses.tests --settings=test_sqlite')).toBe('manage.py test');
    expect(mainProgram('git --no-pager diff HEAD~1')).toBe('git diff');
    expect(mainProgram('cat setup.py | grep -n version')).toBe('grep');
    expect(mainProgram('git commit -m "$(cat <<\'EOF\'\nFix it\n\nmore words; here\nEOF\n)"')).toBe('git commit');
    expect(mainProgram('timeout 60 npm run lint')).toBe('npm run lint');
  });

  it('names the program a loop or an if runs, not its keywords', () => {
    // SproutSeeds/coda (Codex): four contracts read in one call; the loop was named `done`
    expect(
      mainProgram(
        'for f in /Users/codymitchell/Documents/code/coda/specs/001-build-a-lightweight/contracts/*.md; do echo "--- $f"; cat "$f"; echo; done',
      ),
    ).toBe('cat');
    expect(mainProgram('while read f; do\n  nl -ba "$f"\ndone < files.txt')).toBe('nl');
    expect(mainProgram('if [ -f a.py ]; then sed -n 1,80p a.py; else head -50 b.py; fi')).toBe('head');
    // a loop's output piped to a search is searched; setup in the body is skipped as anywhere
    expect(mainProgram('for f in a b; do sed -n 1,20p $f; done | grep -n foo')).toBe('grep');
    expect(mainProgram('for f in *.ts; do [ "$f" != x.ts ] && mv "$f" ../; done; ls')).toBe('ls');
    expect(mainProgram('for b in one two; do\n  echo "=== $b ==="\n  git log --oneline -3 "$b"\ndone')).toBe('git log');
  });

  it('falls back to the generic preview for output no kind claims', () => {
    const text = Array.from({ length: 200 }, (_, i) => `the weather on day ${i} was mild`).join('\n');
    expect(classifyOutput(text)).toBe('generic');
    expect(preview('smart', text, 500)).toBe(genericPreview(text, 500));
  });

  it('previews a JSON output that is not an agent envelope as a JSON skeleton', () => {
    const text = JSON.stringify({ rows: Array.from({ length: 200 }, (_, i) => ({ id: i, path: `src/f${i}.ts:${i}` })) });
    expect(() => JSON.parse(preview('smart', text, 500, { tool: 'Bash', command: 'rg --json x' }))).not.toThrow();
  });
});

/** A result as Cline's tools send it: a JSON list, one entry per command (its CLI 3.0's run_commands). */
const cline = (...entries: Array<{ query: string; result: string; error?: string }>) =>
  JSON.stringify(
    entries.map((e) => ({ query: e.query, result: e.result, ...(e.error ? { error: e.error, success: false } : { success: true }) })),
  );

describe("Cline's JSON list", () => {
  it('is taken off: the body is the result, a failed entry leads with its error', async () => {
    const r = await corpusOutput(SQLFLUFF, /pytest test\/core\/file_helpers_test\.py -xvs/, (t) => t.includes('1 failed'));
    const body = unwrap(r.text).body;
    expect(unwrap(cline({ query: 'python -m pytest test/core/file_helpers_test.py -xvs', result: body }))).toEqual({ lead: [], body });
    expect(unwrap(cline({ query: 'pytest -x', result: body, error: 'Command exited with code 1:\n  see the output' }))).toEqual({
      lead: ['failed: Command exited with code 1: see the output'],
      body,
    });
    // several commands: each result under its command
    expect(unwrap(cline({ query: 'ls', result: 'a\nb\n' }, { query: 'pwd', result: '/w\n' })).body).toBe('--- ls\na\nb\n\n--- pwd\n/w\n');
    // a list of something else is not Cline's
    const other = JSON.stringify([{ query: 'x', rows: 3 }]);
    expect(unwrap(other)).toEqual({ lead: [], body: other });
  });

  it("previews a test run inside it by its kind, found from the last of the call's commands", async () => {
    const r = await corpusOutput(SQLFLUFF, /pytest test\/core\/file_helpers_test\.py -xvs/, (t) => t.includes('1 failed'));
    const command = 'cd /testbed && python -m pytest test/core/file_helpers_test.py -xvs';
    const text = cline({ query: command, result: unwrap(r.text).body });
    const hint = { tool: 'run_commands', command };
    expect(classifyOutput(text, hint)).toBe('test');
    const p = lines(preview('smart', text, BUDGET, hint));
    expect(p).toContain("E       AssertionError: assert 'utf-8' == 'ascii'");
    expect(p.some((l) => /^=+ 1 failed, 2 warnings in [\d.]+s =+$/.test(l))).toBe(true);
  });

  it('previews an output no kind claims as text, not as a JSON skeleton', () => {
    const rows = Array.from({ length: 560 }, (_, i) => `step-01 row ${String(i + 1).padStart(5, '0')} of the run`);
    const text = cline({ query: 'seq -f "step-01 row %05g of the run" 1 560', result: rows.join('\n') + '\n' });
    const p = preview('smart', text, BUDGET, { tool: 'run_commands', command: 'seq 1 560' });
    expect(p.length).toBeLessThanOrEqual(BUDGET);
    expect(lines(p)[0]).toBe(rows[0]);
    expect(lines(p)).toContain(rows[559]);
    expect(() => JSON.parse(p)).toThrow();
  });
});

describe("Codex's older JSON envelope", () => {
  it('previews an output no kind claims as text, its exit code first, not as a JSON skeleton', () => {
    const rows = Array.from({ length: 400 }, (_, i) => `row ${String(i + 1).padStart(4, '0')}: the weather was mild`);
    const text = JSON.stringify({ output: rows.join('\n') + '\n', metadata: { exit_code: 0, duration_seconds: 0.1 } });
    const p = preview('smart', text, BUDGET, { tool: 'shell', command: 'python report.py' });
    expect(p.length).toBeLessThanOrEqual(BUDGET);
    expect(lines(p).slice(0, 2)).toEqual(['exit_code: 0', rows[0]]);
    expect(lines(p)).toContain(rows[399]);
    expect(() => JSON.parse(p)).toThrow();
  });
});

describe('line selection', () => {
  it('writes the chosen lines in the order of the output, with the count of lines left out between them', () => {
    const text = ['a', 'b', 'c', 'd', 'e', 'f'];
    expect(selectLines(text, [4, 0], 100)).toBe('a\n[… 3 lines omitted …]\ne\n[… 1 lines omitted …]');
  });

  it('skips a line that does not fit and takes a later one that does', () => {
    const text = ['x'.repeat(50), 'short', 'y'.repeat(50)];
    expect(selectLines(text, [0, 1], 60)).toBe('[… 1 lines omitted …]\nshort\n[… 1 lines omitted …]');
  });

  it('returns null when not one wanted line fits', () => {
    expect(selectLines(['x'.repeat(100)], [0], 20)).toBeNull();
  });
});
