/**
 * The limits (src/replay/limits.ts) over generated sessions, with fast-check: the floor (no tool
 * output at all) costs no more than the oracle (the lines the agent uses later), which costs no more
 * than raw history, under Anthropic and GPT-5 prices; and the oracle misses nothing.
 *
 * The oracle that decides on arrival only and the floor cache alike, so the order holds item by item.
 * It is exact with the providers' minimum and 128-token steps turned off (the `ideal` price models, as
 * in guarantee.property.test.ts). With them on, a step can cost a side a little more than a larger
 * one: a provider that rounds the cached prefix down to its steps bills up to one step less than
 * that from the cache at each call (stepSlack), and the minimum shifts a little more (within
 * PROVIDER_RULES_SLACK of raw); and a request under the minimum a provider
 * caches is billed whole, so a session where one side's request is under it and the other's is not
 * is compared only under the ideal models. The oracle with hindsight clears misses nothing either and,
 * its clears paid for by the guarantee's ledger, costs no more than raw under the providers' prices.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_PRICES, OPENAI_PRICES, type PriceModel } from '../../src/replay/metrics';
import { replayFloor, replayOracle } from '../../src/replay/limits';
import type { Transcript } from '../../src/replay/readers';
import type { ReplayResult } from '../../src/replay/replay';
import { perChar } from '../support/run';

const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 40);
const PROVIDERS: readonly PriceModel[] = [ANTHROPIC_PRICES, OPENAI_PRICES];
const IDEAL: readonly PriceModel[] = PROVIDERS.map((pm) => ({ ...pm, name: `${pm.name}-ideal`, minCacheableTokens: 0, cacheIncrement: 1 }));
/** How far the providers' own rules (a minimum to cache, 128-token steps) may take one side over the next, relative to raw. */
const PROVIDER_RULES_SLACK = 0.002;
/**
 * The most one side of a comparison can lose, over `calls` calls, to a provider that rounds the
 * cached prefix down to steps of `cacheIncrement`: under a step per call, billed as written rather
 * than read. A 128-token step is 111 tokens of cost at GPT-5 prices, a lot on a short session.
 */
const stepSlack = (pm: PriceModel, calls: number) =>
  pm.caching === 'automatic' ? calls * (pm.cacheIncrement - 1) * (pm.cacheWrite - pm.cachedRead) : 0;
/** Rounding of sums of many products. */
const EPS = 1e-9;

interface Step {
  tool: string;
  size: number;
  /** which earlier outputs' identifiers the reply to this call names (indices into the outputs so far, modulo their count) */
  uses: number[];
}

const stepArb = fc.record({
  tool: fc.constantFrom('bash', 'read_file', 'grep', 'Write'),
  size: fc.oneof(fc.integer({ min: 10, max: 2_000 }), fc.integer({ min: 2_000, max: 40_000 })),
  uses: fc.array(fc.nat(), { maxLength: 3 }),
});
const sessionArb = fc.array(fc.array(stepArb, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 40 });

/** The identifiers of output `id`: one on a line near its start, one in its middle. */
const idsOf = (id: string) => [`early_${id}_name`, `needle_${id}_middle`];

/** A Chat Completions session whose replies name identifiers of earlier outputs, and now and then one that no output holds. */
function session(steps: Step[][]): Transcript {
  const items: Record<string, unknown>[] = [{ role: 'user', content: 'fix the build' }];
  const calls: Transcript['calls'] = [];
  const outputs: string[] = [];
  let n = 0;
  for (const step of steps) {
    const ids = step.map(() => `c${n++}`);
    const body = (i: number, s: Step) => {
      const [early, middle] = idsOf(ids[i]!);
      const line = `${ids[i]} ${s.tool} line of output\n`;
      const half = line.repeat(Math.ceil(s.size / line.length / 2));
      return `${early} = 1\n${half}${middle}\n${half}`;
    };
    items.push({
      role: 'assistant',
      content: null,
      tool_calls: step.map((s, i) => ({
        id: ids[i],
        type: 'function',
        function: {
          name: s.tool,
          arguments: JSON.stringify(
            s.tool === 'Write' ? { file_path: `out_${ids[i]}.py`, content: body(i, s) } : { command: `run ${ids[i]}` },
          ),
        },
      })),
    });
    step.forEach((s, i) => {
      items.push({ role: 'tool', tool_call_id: ids[i], content: s.tool === 'Write' ? 'File written.' : body(i, s) });
      outputs.push(ids[i]!);
    });
    const named = step.flatMap((s) => s.uses).map((u, j) => idsOf(outputs[u % outputs.length]!)[j % 2]!);
    calls.push({ end: items.length, reply: `next: ${named.join(' ')} unknown_name_${calls.length}` });
  }
  return { source: 'openai-chat', wire: 'openai-chat', base: { model: 'm' }, items, calls, skipped: { total: 0, byReason: {}, notes: [] } };
}

describe('the limits on generated sessions', () => {
  it('the floor costs no more than the oracle, and the oracle no more than raw, under Anthropic and GPT-5 prices', () => {
    fc.assert(
      fc.property(sessionArb, (steps) => {
        const t = session(steps);
        const opts = { config: { preset: 'spillway' }, tokenizer: perChar, prices: [...IDEAL, ...PROVIDERS] };
        const oracleRun = replayOracle(t, opts, false);
        const floorRun = replayFloor(t, opts);
        const oracle = oracleRun.totals;
        const floor = floorRun.totals;
        for (const pm of IDEAL) {
          const raw = oracle.cost[pm.name]!.raw;
          expect(floor.cost[pm.name]!.raw).toBeCloseTo(raw, 6);
          expect(floor.cost[pm.name]!.projected).toBeLessThanOrEqual(oracle.costWithReadBacks[pm.name]!.projected * (1 + EPS));
          expect(oracle.costWithReadBacks[pm.name]!.projected).toBeLessThanOrEqual(raw * (1 + EPS));
        }
        for (const pm of PROVIDERS) {
          const raw = oracle.cost[pm.name]!.raw;
          const slack = raw * PROVIDER_RULES_SLACK + stepSlack(pm, oracleRun.calls.length);
          // a side under the provider's minimum where the other is not is billed uncached: no order to expect
          const across = (a: readonly number[], b: readonly number[]) =>
            a.some((x, k) => x < pm.minCacheableTokens !== b[k]! < pm.minCacheableTokens);
          const sent = (r: ReplayResult) => r.calls.map((c) => c.projectedTokens);
          const rawSent = oracleRun.calls.map((c) => c.originalTokens);
          if (!across(sent(floorRun), sent(oracleRun)))
            expect(floor.cost[pm.name]!.projected).toBeLessThanOrEqual(oracle.costWithReadBacks[pm.name]!.projected + slack);
          if (!across(sent(oracleRun), rawSent)) expect(oracle.costWithReadBacks[pm.name]!.projected).toBeLessThanOrEqual(raw + slack);
        }
      }),
      { numRuns: RUNS },
    );
  }, 240_000);

  it('the oracle misses no identifier the agent uses later, with hindsight clears or without', () => {
    fc.assert(
      fc.property(sessionArb, (steps) => {
        for (const clears of [true, false]) {
          const r = replayOracle(session(steps), { config: { preset: 'spillway' }, tokenizer: perChar, prices: PROVIDERS }, clears);
          expect(r.totals.missedIds).toBe(0);
        }
      }),
      { numRuns: RUNS },
    );
  }, 240_000);

  it("the oracle with hindsight clears costs no more than raw under the providers' prices", () => {
    fc.assert(
      fc.property(sessionArb, (steps) => {
        const r = replayOracle(session(steps), { config: { preset: 'spillway' }, tokenizer: perChar, prices: PROVIDERS }, true);
        for (const pm of PROVIDERS) {
          const raw = r.totals.cost[pm.name]!.raw;
          expect(r.totals.costWithReadBacks[pm.name]!.projected).toBeLessThanOrEqual(raw * (1 + PROVIDER_RULES_SLACK));
        }
      }),
      { numRuns: RUNS },
    );
  }, 240_000);
});
