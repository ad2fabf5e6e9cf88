/**
 * File inputs a clear replaced (`inputs.when: clear`, stages/clear-result.ts) are reported like those
 * replaced on arrival: once, in the projection's `inputs`, with the figures inputs.ts measures, fresh
 * only in the call that made the clear, carried over after it. Tokens are counted one per character.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink, type Projection } from '../../src/engine/engine';
import { perChar, triggerClear } from '../support/run';
import { build, transcript, type ToolStep, type Transcript } from '../support/wire';

const body = 'def writer_mod.make_thing():\n' + 'w'.repeat(5_000);
const args = { file_path: '/src/writer.py', content: body };
const write: ToolStep = { tool: 'Write', output: 'File created', args };
const step = (i: number): ToolStep => ({ tool: 'bash', output: `${i % 10}`.repeat(10_000), args: { n: i } });
/** whether a request still carries what the Write wrote */
const carriesBody = (p: Projection<string>) => p.request.includes('w'.repeat(5_000));
const session = transcript('q', write, step(1), step(2), step(3), step(4), step(5), step(6));

const config = (when: 'clear' | 'arrival') => ({
  offload: { enabled: false },
  inputs: { enabled: true, when, minTokens: 0, keepRounds: 0 },
  clear: triggerClear({ staleFirst: false }),
});

/** The session projected call by call, as the proxy does: each request ends on a call's results. */
function projectCalls(when: 'clear' | 'arrival'): { calls: Projection<string>[]; store: MemorySink } {
  const store = new MemorySink();
  const engine = createEngine(config(when), { store, tokenizer: perChar });
  const calls: Projection<string>[] = [];
  session.items.forEach((it, k) => {
    if (it.kind !== 'results') return;
    const t: Transcript = { ...session, items: session.items.slice(0, k + 1) };
    calls.push(engine.project(JSON.stringify(build(t, 'anthropic-messages')), 'anthropic-messages', { session: 's' }));
  });
  return { calls, store };
}

describe('a file input a clear replaced', () => {
  const { calls, store } = projectCalls('clear');
  const at = calls.findIndex((p) => p.inputs.length > 0);

  it('is listed once in inputs from the call that made the clear, fresh there only', () => {
    expect(at).toBeGreaterThan(0);
    // and later calls carry it over
    expect(calls.length - at).toBeGreaterThan(1);
    for (const p of calls.slice(0, at)) expect(carriesBody(p)).toBe(true);
    calls.slice(at).forEach((p, n) => {
      expect(p.inputs).toHaveLength(1);
      expect(p.inputs[0]).toMatchObject({ tool: 'Write', callId: 'call_1', item: 1, by: 'clear', fresh: n === 0 });
      expect(carriesBody(p)).toBe(false);
    });
  });

  it('carries its handle, which reads back the input, and the marker in the request names it', () => {
    const [input] = calls[at]!.inputs;
    expect(JSON.parse(store.get(input!.handle)!)).toEqual(args);
    for (const p of calls.slice(at)) {
      expect(p.inputs[0]!.handle).toBe(input!.handle);
      expect(p.request).toContain(input!.handle);
    }
  });

  it('has the figures of the same input replaced on arrival, and a reason that names the clear', () => {
    const arrival = projectCalls('arrival').calls[0]!.inputs[0]!;
    const cleared = calls[at]!.inputs[0]!;
    const figures = (x: typeof cleared) => ({
      handle: x.handle,
      originalChars: x.originalChars,
      projectedChars: x.projectedChars,
      originalTokens: x.originalTokens,
      projectedTokens: x.projectedTokens,
    });
    expect(arrival.by).toBe('arrival');
    expect(figures(cleared)).toEqual(figures(arrival));
    expect(cleared.originalChars).toBeGreaterThan(5_000);
    expect(cleared.projectedChars).toBeLessThan(500);
    expect(cleared.reason).toContain(arrival.reason);
    expect(cleared.reason).toMatch(/replaced with its call's result by a clear: context at [\d,]+ tokens over the trigger of 45,000/);
  });

  it('is not counted again by the reduction of its result, which only points at it', () => {
    for (const p of calls.slice(at)) {
      const r = p.reductions.find((x) => x.callId === 'call_1')!;
      // "File created" is shorter than any marker: the result is sent as it was, only its input replaced
      expect(r).toMatchObject({ stage: 'clear', inputCleared: true, inputOnly: true, inputHandle: p.inputs[0]!.handle });
      expect(r.projectedTokens).toBe(r.originalTokens);
      expect(r.fresh).toBe(p === calls[at]);
      // what the projection saves is what its reductions and its inputs save, each counted once
      const saved = [...p.reductions, ...p.inputs].reduce((a, x) => a + x.originalTokens - x.projectedTokens, 0);
      expect(p.stats.savedTokens).toBe(saved);
    }
  });
});
