/**
 * The guarantee's read-back ledger (src/engine/guarantee.ts): a read-back the engine finds in a
 * request, or is told of, is charged to the session at the call it happened, attributed to the kind
 * of reduction that hid the output; a kind whose next read-back the bank cannot cover stops for the
 * session, from the call it is found in; what was sent before never changes, and projecting the same
 * request again gives the same projection. The properties over generated sessions are in
 * test/property/guarantee.property.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { CACHE_PRICES } from '../../src/engine/clear-schedule';
import {
  addOwed,
  NOTHING_OWED,
  owedCost,
  owedTokens,
  payOwed,
  paysOwnReadBack,
  readBackAnswerTokens,
  readBackCost,
  READ_BACK_MAX_CHARS,
  stopped,
  stopsAt,
  type GuaranteeRecord,
} from '../../src/engine/guarantee';
import { perChar } from '../support/run';

type Msg = Record<string, unknown>;
const call = (id: string, name: string, args: Record<string, unknown>): Msg => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});
const result = (id: string, content: string): Msg => ({ role: 'tool', tool_call_id: id, content });
const request = (messages: Msg[]) => JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }, ...messages] });
const out = (tag: string) => `${tag} ${'x'.repeat(3_000)}`;
/** The default preset (the guarantee on) with small caps; back-off off, so only the guarantee acts. */
const config = { defaultCap: 1_000, previewChars: 100, inputs: { enabled: false }, offload: { backoff: false } };

function firstCall() {
  const e = createEngine(config, { store: new MemorySink(), tokenizer: perChar });
  const msgs = [call('a', 'bash', { command: 'make' }), result('a', out('A'))];
  const p = e.project(request(msgs), 'openai-chat', { session: 'S' });
  expect(p.reductions.map((r) => r.callId)).toEqual(['a']);
  return { e, msgs, handle: p.reductions[0]!.handle, marker: p.request };
}
const next = [call('b', 'bash', { command: 'make test' }), result('b', out('B'))];

describe('read-backs charged to the session', () => {
  it('stop offloads once the bank cannot cover the next read-back of one, from that call on, keeping what was sent', () => {
    const { e, msgs, handle } = firstCall();
    // one offload banked about 2,800 tokens written once; a read-back of it costs more than that leaves
    const read = [call('r', 'read_output', { handle }), result('r', 'the slice')];
    const second = request([...msgs, ...read, ...next]);
    const p = e.project(second, 'openai-chat', { session: 'S' });
    expect(p.reductions.map((r) => r.callId)).toEqual(['a']);
    expect(p.reductions[0]!.handle).toBe(handle);
    // the same request again: the same projection
    expect(e.project(second, 'openai-chat', { session: 'S' }).request).toBe(p.request);
    // and the stop holds for the rest of the session
    const third = e.project(
      request([...msgs, ...read, ...next, call('c', 'bash', { command: 'make lint' }), result('c', out('C'))]),
      'openai-chat',
      { session: 'S' },
    );
    expect(third.reductions.map((r) => r.callId)).toEqual(['a']);
    expect(third.request.startsWith(p.request.slice(0, p.request.indexOf('make test')))).toBe(true);
  });

  it('still offloads, after the stop, an output that pays for its own read-back in the call it arrives in', () => {
    const { e, msgs, handle } = firstCall();
    const read = [call('r', 'read_output', { handle }), result('r', 'the slice')];
    // a 3,000-character output is stopped as before; one of 200,000 characters spares its call more
    // writing than a read-back of it would cost at this context under every price model (0.5x reads too)
    expect(e.project(request([...msgs, ...read, ...next]), 'openai-chat', { session: 'S' }).reductions.map((r) => r.callId)).toEqual(['a']);
    const huge = [call('h', 'bash', { command: 'dump' }), result('h', `H ${'y'.repeat(200_000)}`)];
    const p = e.project(request([...msgs, ...read, ...next, ...huge]), 'openai-chat', { session: 'S' });
    expect(p.reductions.map((r) => r.callId)).toEqual(['a', 'h']);
    expect(p.reductions[1]!.reason).toMatch(/pays for its own read-back/);
    // sticky: the same request again gives the same projection
    expect(e.project(request([...msgs, ...read, ...next, ...huge]), 'openai-chat', { session: 'S' }).request).toBe(p.request);
  });

  it('charges a read-back a host tells of at the next call', () => {
    const { e, msgs, handle } = firstCall();
    expect(e.noteReadBack('S', handle)).toBe(true);
    expect(e.noteReadBack('S', handle)).toBe(false);
    const p = e.project(request([...msgs, ...next]), 'openai-chat', { session: 'S' });
    expect(p.reductions.map((r) => r.callId)).toEqual(['a']);
  });

  it('goes on offloading without read-backs', () => {
    const { e, msgs } = firstCall();
    const p = e.project(request([...msgs, ...next]), 'openai-chat', { session: 'S' });
    expect(p.reductions.map((r) => r.callId)).toEqual(['a', 'b']);
  });

  it('leaves the ledger alone when the guarantee is off (the trigger schedule)', () => {
    const e = createEngine({ ...config, clear: { schedule: 'trigger' } }, { store: new MemorySink(), tokenizer: perChar });
    const msgs = [call('a', 'bash', { command: 'make' }), result('a', out('A'))];
    const handle = e.project(request(msgs), 'openai-chat', { session: 'S' }).reductions[0]!.handle;
    expect(e.noteReadBack('S', handle)).toBe(false);
    const p = e.project(request([...msgs, ...next]), 'openai-chat', { session: 'S' });
    expect(p.reductions.map((r) => r.callId)).toEqual(['a', 'b']);
  });
});

describe('stopsAt', () => {
  const bank = (banked: number) => ({ call: 4, banked: CACHE_PRICES.map(() => banked), running: 10_000, carried: 0 });
  const rb = { call: 3, kind: 'offload' as const, ask: 30, answer: 500 };
  const dearest = Math.max(...CACHE_PRICES.map((pm) => readBackCost(10_000, [rb], pm)));

  it('stops a kind that was read back when the bank cannot cover its next read-back, and only that kind while the bank is not negative', () => {
    const g: GuaranteeRecord = { readBacks: [rb], stops: {}, bank: bank(dearest - 1) };
    expect(stopsAt(g, 5)).toEqual(['offload']);
    expect(stopsAt({ ...g, bank: bank(dearest) }, 5)).toEqual([]);
  });

  it('stops every kind once the bank is below zero, counting read-backs noted since', () => {
    const g: GuaranteeRecord = { readBacks: [rb, { ...rb, call: 5, kind: 'clear' }], stops: {}, bank: bank(10) };
    expect(stopsAt(g, 5).sort()).toEqual(['budget', 'clear', 'input', 'offload', 'window']);
  });

  it('stops nothing before a call was charged, and nothing twice', () => {
    expect(stopsAt({ readBacks: [rb], stops: {} }, 5)).toEqual([]);
    expect(stopsAt({ readBacks: [rb], stops: { offload: [4] }, bank: bank(0) }, 5)).not.toContain('offload');
  });

  it('lets a stopped kind go on again once the bank covers its next read-back again, and stop again after', () => {
    const g: GuaranteeRecord = { readBacks: [rb], stops: { offload: [4] }, bank: bank(dearest) };
    expect(stopped(g, 'offload', 4)).toBe(true);
    expect(stopsAt(g, 5)).toEqual(['offload']);
    g.stops.offload!.push(5);
    expect(stopped(g, 'offload', 4)).toBe(true);
    expect(stopped(g, 'offload', 5)).toBe(false);
    expect(stopsAt({ ...g, bank: bank(dearest - 1) }, 7)).toEqual(['offload']);
    g.stops.offload!.push(7);
    expect([3, 4, 5, 6, 7, 8].map((c) => stopped(g, 'offload', c))).toEqual([false, true, false, false, true, true]);
  });
});

describe('paysOwnReadBack', () => {
  const g: GuaranteeRecord = { readBacks: [{ call: 1, kind: 'offload', ask: 40, answer: 600 }], stops: { offload: [2] } };
  const own = { ask: 40, answer: 500 };
  it('holds when the tokens spared cover the dearest read-back of the kind at that context under every price model', () => {
    // the dearest is GPT-4o's: 0.5 x 10,000 re-read + 648 written + 40 x 8 output = 5,968 tokens' worth
    const need = Math.max(...CACHE_PRICES.map((pm) => readBackCost(10_000, [{ ask: 40, answer: 600 }], pm) / pm.cacheWrite));
    expect(paysOwnReadBack(g, 'offload', 3, Math.ceil(need), 10_000, own)).toBe(true);
    expect(paysOwnReadBack(g, 'offload', 3, Math.floor(need) - 1, 10_000, own)).toBe(false);
  });
  it('prices this output’s own read-back when it is the dearest, and ignores read-backs after the call', () => {
    const later: GuaranteeRecord = { ...g, readBacks: [...g.readBacks, { call: 9, kind: 'offload', ask: 40, answer: 5_000 }] };
    const big = { ask: 40, answer: 3_000 };
    const need = Math.max(...CACHE_PRICES.map((pm) => readBackCost(1_000, [big], pm) / pm.cacheWrite));
    expect(paysOwnReadBack(later, 'offload', 3, Math.ceil(need), 1_000, big)).toBe(true);
    expect(paysOwnReadBack(later, 'offload', 3, Math.floor(need) - 1, 1_000, big)).toBe(false);
    expect(paysOwnReadBack(later, 'offload', 3, 0, 0, { ask: 0, answer: 0 })).toBe(false);
  });
});

describe('owedCost: the late read-backs a clear holds in the bank', () => {
  const anthropic = CACHE_PRICES.find((pm) => pm.name === 'anthropic')!;
  const ask = 30;
  // one read-back of an answer of 0 at a context of 40,000 tokens: 4,000 read, 38 written, 30 output
  const one = readBackCost(40_000, [{ ask, answer: 0 }], anthropic);
  const owed = (handles: number, largest = 500) => ({ handles, answers: handles * largest, largest });

  it('holds nothing for the one read-back the bound allows, while the session has made none', () => {
    expect(owedCost(40_000, owed(1), 4, ask, false, 0, anthropic)).toBe(0);
    expect(owedCost(40_000, owed(1), 4, ask, true, 0, anthropic)).toBeCloseTo(one + 500 * 1.25);
  });

  it('holds clear.readBacksCovered read-backs besides that one, each of the largest answer; all of them under Infinity', () => {
    expect(owedCost(40_000, owed(3), 4, ask, false, 0, anthropic)).toBeCloseTo(2 * (one + 500 * 1.25));
    expect(owedCost(40_000, owed(40), 4, ask, false, 0, anthropic)).toBeCloseTo(4 * (one + 500 * 1.25));
    expect(owedCost(40_000, owed(40), 4, ask, true, 0, anthropic)).toBeCloseTo(5 * (one + 500 * 1.25));
    expect(owedCost(40_000, owed(40), Number.POSITIVE_INFINITY, ask, false, 0, anthropic)).toBeCloseTo(39 * (one + 500 * 1.25));
    // answers of different sizes: the largest stands for each held, up to all the answers owed
    const mixed = addOwed(owed(1, 2_000), owed(9, 1_000));
    expect(owedCost(40_000, mixed, 1, ask, true, 0, anthropic)).toBeCloseTo(2 * one + 2 * 2_000 * 1.25);
    const fewer = addOwed(owed(1, 2_000), owed(9, 100));
    expect(owedCost(40_000, fewer, 1, ask, true, 0, anthropic)).toBeCloseTo(2 * one + 2_900 * 1.25);
    expect(owedCost(40_000, NOTHING_OWED, 4, ask, true, 0, anthropic)).toBe(0);
  });

  it('counts what each later call saves against the context a read-back re-reads, never below nothing', () => {
    // each call after the clear reads 31,614 tokens fewer than raw, 30,000 once the three read-backs
    // are carried (3 x 38 for the read calls, 1,500 of answers): a read-back re-reads 10,000 beyond that
    expect(owedTokens(owed(3), 3, ask)).toBe(1_614);
    expect(owedCost(40_000, owed(3), 4, ask, false, 31_614, anthropic)).toBeCloseTo(2 * (one - 3_000 + 500 * 1.25));
    expect(owedCost(40_000, owed(3, 0), 4, ask, false, 100_000, anthropic)).toBe(0);
  });

  it('is paid down one read-back at a time', () => {
    expect(payOwed(owed(3), 500)).toEqual(owed(2));
    expect(payOwed(owed(1), 500)).toEqual(NOTHING_OWED);
  });
});

describe('readBackAnswerTokens', () => {
  it('is the whole output when short, else READ_BACK_MAX_CHARS of it at its own tokens per character', () => {
    expect(readBackAnswerTokens(300, 1_200)).toBe(300);
    expect(readBackAnswerTokens(10_000, 40_000)).toBe(READ_BACK_MAX_CHARS / 4);
  });
});

describe('a read-back of a file input a clear replaced', () => {
  it('is known as the clear’s, so it is charged', () => {
    const e = createEngine(
      {
        defaultCap: 1_000_000,
        inputs: { when: 'clear', minTokens: 0 },
        offload: { backoff: true },
        clear: { triggerTokens: 3_000, keep: 0, clearAtLeastTokens: 0, inUseCalls: 0, schedule: 'trigger' },
      },
      { store: new MemorySink(), tokenizer: perChar },
    );
    const msgs = [
      call('w', 'Write', { file_path: 'a.py', content: 'print(1)\n'.repeat(600) }),
      // a result long enough to be cleared itself: the clear's handle is the result's, not the input's
      result('w', 'File written. Lint:\n'.repeat(200)),
      call('b', 'bash', { command: 'make' }),
      result('b', 'ok'),
    ];
    const p = e.project(request(msgs), 'openai-chat', { session: 'S' });
    const cleared = p.reductions.find((r) => r.callId === 'w' && r.stage === 'clear');
    expect(cleared?.inputHandle).toBeDefined();
    expect(cleared!.inputHandle).not.toBe(cleared!.handle);
    expect(e.noteReadBack('S', cleared!.inputHandle!)).toBe(true);
  });
});
