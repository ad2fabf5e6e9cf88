/** Custom per-tool reducers through the module API (Eino's per-tool handlers). */
import { describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine';
import type { CustomReducer, ReducerInput } from '../../src/engine/types';
import { project } from '../support/run';
import { transcript, type ToolStep } from '../support/wire';
import { expectEnd } from '../support/expect';

const tool = (name: string, output: string, extra: Partial<ToolStep> = {}): ToolStep => ({ tool: name, output, ...extra });
const testLog = Array.from({ length: 400 }, (_, i) => (i % 97 === 5 ? `FAIL test ${i}` : `ok test ${i}`)).join('\n');
const failures: CustomReducer = ({ text }) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('FAIL'))
    .join('\n');
const config = { clear: { enabled: false } };

describe('custom reducers', () => {
  it("show the reducer's preview under a marker that names the handle, and store the original", () => {
    const { texts, p, store } = project(config, transcript('q', tool('pytest', testLog)), 'openai-chat', {
      reducers: { pytest: failures },
    });
    expectEnd(texts[0]!, '\nFAIL test 5\nFAIL test 102\nFAIL test 199\nFAIL test 296\nFAIL test 393');
    expect(texts[0]).toContain(`spillway read ${p.reductions[0]!.handle}`);
    expect(p.reductions[0]!.reason).toBe('custom reducer for pytest');
    expect(store.get(p.reductions[0]!.handle)).toBe(testLog);
  });

  it('leave the result verbatim when the reducer returns null', () => {
    const { p } = project(config, transcript('q', tool('pytest', testLog)), 'openai-chat', { reducers: { pytest: () => null } });
    expect(p.stats.unchanged).toBe(true);
  });

  it("leave the result verbatim when the reducer's preview would make it longer", () => {
    const { p } = project(config, transcript('q', tool('pytest', 'short')), 'openai-chat', {
      reducers: { pytest: ({ text }) => text + text },
    });
    expect(p.stats.unchanged).toBe(true);
  });

  it('run even under the cap and with offload disabled', () => {
    const { p } = project({ ...config, offload: { enabled: false } }, transcript('q', tool('pytest', testLog)), 'openai-chat', {
      reducers: { pytest: failures },
    });
    expect(p.reductions.map((r) => r.stage)).toEqual(['offload']);
  });

  it('receive the tool, call id, full text, cap, previewChars and is_error', () => {
    const seen: ReducerInput[] = [];
    const output = 'x'.repeat(3_000);
    project(
      { ...config, toolCaps: { pytest: 2_500 }, previewChars: 321 },
      transcript('q', tool('pytest', output, { id: 'toolu_1', result: { isError: true } })),
      'anthropic-messages',
      {
        reducers: {
          pytest: (input) => {
            seen.push(input);
            return null;
          },
        },
      },
    );
    expect(seen).toEqual([
      { tool: 'pytest', callId: 'toolu_1', text: output, cap: 2_500, previewChars: 321, stage: 'offload', isError: true },
    ]);
  });

  it('keyed by a bare name, run for that tool under a namespaced name', () => {
    const { p } = project(config, transcript('q', tool('mcp__ci__pytest', testLog), tool('ci.pytest', testLog)), 'openai-chat', {
      reducers: { pytest: failures },
    });
    expect(p.reductions.map((r) => r.tool)).toEqual(['mcp__ci__pytest', 'ci.pytest']);
  });

  it('keyed by a * pattern, run for matching tools only', () => {
    const { p } = project(config, transcript('q', tool('test_unit', testLog), tool('bash', testLog)), 'openai-chat', {
      reducers: { 'test_*': failures },
    });
    expect(p.reductions.map((r) => r.tool)).toEqual(['test_unit']);
  });

  it('are recognised next time: projecting the projection calls no reducer and changes nothing', () => {
    let calls = 0;
    const reducers = {
      pytest: ((i) => {
        calls++;
        return failures(i);
      }) as CustomReducer,
    };
    const { p, store } = project(config, transcript('q', tool('pytest', testLog)), 'openai-chat', { reducers });
    calls = 0;
    // a fresh engine over the same store (the handle is stored there)
    const again = createEngine(config, { store, reducers }).project(p.request);
    expect(again.request).toBe(p.request);
    expect(again.stats.markersSeen).toBe(1);
    expect(calls).toBe(0);
  });

  it('must be functions: createEngine names the bad one', () => {
    expect(() => createEngine({}, { reducers: { pytest: 'nope' as unknown as CustomReducer } })).toThrow(
      'reducers.pytest must be a function',
    );
  });
});
