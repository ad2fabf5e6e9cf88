/**
 * The guarantee (docs/savings.md): under the `spillway` default, no session costs more than raw
 * history before read-backs by more than the bounded overrun (MAX_OVERRUN, for a session that ends
 * right after a clear), under any price model. Checked with fast-check on generated sessions of any
 * length and shape (long and short outputs, repeated commands, re-read files, bursts of parallel
 * calls), replayed with the same meter as the corpus figures, under every price model the replay
 * knows (Anthropic, OpenAI GPT-5 and GPT-4o, DeepSeek, Gemini).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CostLedger, MAX_OVERRUN } from '../../src/engine/guarantee';
import { PRICE_MODELS } from '../../src/replay/metrics';
import { replay } from '../../src/replay/replay';
import type { Transcript } from '../../src/replay/readers';
import { perChar } from '../support/run';

/**
 * How far over raw the meter may find a session: its providers cache in 128-token steps and not
 * under 1,024 tokens, which the engine's ledger leaves out; a few steps of a short session.
 */
const METER_SLACK = 0.002;
const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 40);

type Msg = Record<string, unknown>;

/** One model call of a generated session: the tool calls its reply makes, each with its output. */
const stepArb = fc.array(
  fc.record({
    tool: fc.constantFrom('bash', 'read_file', 'grep'),
    arg: fc.integer({ min: 0, max: 6 }),
    size: fc.oneof(fc.integer({ min: 10, max: 2_000 }), fc.integer({ min: 2_000, max: 60_000 })),
  }),
  { minLength: 1, maxLength: 3 },
);

function session(steps: Array<Array<{ tool: string; arg: number; size: number }>>): Transcript {
  const items: Msg[] = [{ role: 'user', content: 'fix the build' }];
  const calls: Transcript['calls'] = [];
  let id = 0;
  for (const step of steps) {
    const ids = step.map(() => `c${id++}`);
    items.push({
      role: 'assistant',
      content: null,
      tool_calls: step.map((s, i) => ({
        id: ids[i],
        type: 'function',
        function: { name: s.tool, arguments: JSON.stringify(s.tool === 'bash' ? { command: `make t${s.arg}` } : { path: `f${s.arg}.py` }) },
      })),
    });
    step.forEach((s, i) => {
      const line = `${ids[i]} ${s.tool} line of output\n`;
      items.push({ role: 'tool', tool_call_id: ids[i], content: line.repeat(Math.ceil(s.size / line.length)) });
    });
    calls.push({ end: items.length, reply: 'next' });
  }
  return { source: 'openai-chat', wire: 'openai-chat', base: { model: 'm' }, items, calls, skipped: { total: 0, byReason: {}, notes: [] } };
}

describe('the guarantee', () => {
  it.each([
    ['the default', {}],
    ['reduce after use on', { 'offload.afterUseCap': 40_000 }],
  ])('no generated session, of any length, costs more than raw history plus the bounded overrun, under any price model (%s)', (_, over) => {
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 1, maxLength: 80 }), (steps) => {
        const r = replay(session(steps), { config: { preset: 'spillway', ...over }, tokenizer: perChar, prices: PRICE_MODELS });
        for (const pm of PRICE_MODELS) expect(r.totals.cost[pm.name]!.relative).toBeLessThanOrEqual(1 + MAX_OVERRUN + METER_SLACK);
      }),
      { numRuns: RUNS },
    );
  });
});

describe('CostLedger', () => {
  it('affords a call that keeps the projection no dearer than raw, and refuses one that does not', () => {
    const ledger = new CostLedger();
    // a first call that sent 1,000 tokens fewer than raw: 1,250 banked under Anthropic
    ledger.charge({ read: 0, total: 10_000 }, { read: 0, total: 9_000 });
    expect(ledger.banked().anthropic).toBeCloseTo(1_250);
    // a rewrite of 1,000 more tokens than raw writes (1.15 each) fits; of 2,000 it does not
    expect(ledger.affords({ read: 10_000, total: 11_000 }, { read: 8_000, total: 10_000 })).toBe(true);
    expect(ledger.affords({ read: 10_000, total: 11_000 }, { read: 7_000, total: 10_000 })).toBe(false);
  });

  it('lets an expected saving pay for a rewrite, but never past the overrun bound', () => {
    const ledger = new CostLedger();
    ledger.charge({ read: 0, total: 100_000 }, { read: 0, total: 100_000 });
    // a rewrite of 2,000 tokens: 2,300 over raw under Anthropic, under 2% of raw's 136,250
    const raw = { read: 100_000, total: 101_000 },
      rewrite = { read: 98_000, total: 101_000 };
    expect(ledger.paysBack(raw, rewrite, () => 0)).toBe(false);
    expect(ledger.paysBack(raw, rewrite, () => 5_000)).toBe(true);
    // rewriting all 100,000 cached tokens is 84% over raw under Anthropic: no expected saving takes it past MAX_OVERRUN
    expect(ledger.paysBack(raw, { read: 0, total: 101_000 }, () => 1e9)).toBe(false);
    expect(MAX_OVERRUN).toBeLessThan(0.84);
  });
});
