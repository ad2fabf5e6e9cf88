/**
 * The benchmark's measurements, one code path for every strategy: each call's projected request
 * goes through `ReplayMeter` (src/replay/replay.ts, the meter `spillway replay` itself uses) for
 * tokens, cached prefix, cost under both cache price models and missed identifiers; `strategyRow`
 * turns a meter's totals plus the strategy's timings and read-back figures into one table row.
 *
 * Spillway's presets run through `replay()`, whose token shapes come from the engine. Every other
 * strategy's projected items are shaped here by the engine's own counting rule (the tokens of every
 * string value of an item, plus 4 per item; `tools`/`system`/`instructions` as the fixed part), so
 * a request Spillway left alone counts the same either way (test/unit/bench-metrics.test.ts checks).
 */
import { performance } from 'node:perf_hooks';
import { newTokenCounter, type TokenCounter } from '../src/engine';
import { IMAGE_TYPES, imageOfBlock, imageTokens } from '../src/engine/images';
import { THINKING_TYPES, thinkingText } from '../src/engine/thinking';
import { stringTokens } from '../src/engine/tokens';
import type { WireFormat } from '../src/engine/types';
import type { PriceModel, PromptShape } from '../src/replay/metrics';
import { PRICE_MODELS } from '../src/replay/metrics';
import { itemsKey, requestForCall, type Transcript } from '../src/replay/readers';
import { withAgentPrelude } from '../src/replay/prelude';
import { replay, ReplayMeter, type ReplayCall, type ReplayTotals } from '../src/replay/replay';
import { MemoryStore } from '../src/store';
import type { Driver } from './drivers';
import type { Item } from './blocks';

/** Tokens a message costs beyond its text, as the engine counts them (engine.ts ITEM_OVERHEAD_TOKENS). */
const ITEM_OVERHEAD_TOKENS = 4;

/** The request fields the engine counts as sent before the items, per wire format. */
const FIXED_KEYS: Record<WireFormat, readonly string[]> = {
  'openai-chat': ['tools', 'functions'],
  'openai-responses': ['instructions', 'tools'],
  'anthropic-messages': ['system', 'tools'],
  gemini: ['systemInstruction', 'tools', 'toolConfig'],
};
/** The fields replay's shapeOf compares to tell whether the fixed part changed. */
const SHAPE_FIXED_KEYS = new Set(['system', 'tools', 'instructions']);

/**
 * Tokens of an item as the engine counts it: every string, but a thinking block or reasoning item as
 * its readable text (src/engine/thinking.ts), never its signature or encrypted content, and an image
 * block as its pixels are billed (src/engine/images.ts), not as the characters of its base64.
 */
function itemTokens(v: unknown, counter: TokenCounter): number {
  if (Array.isArray(v)) return v.reduce((a: number, x) => a + itemTokens(x, counter), 0);
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    if (typeof o.type === 'string' && THINKING_TYPES.has(o.type)) return counter.count(thinkingText(o));
    if (typeof o.type === 'string' && IMAGE_TYPES.has(o.type)) {
      const img = imageOfBlock(o);
      return imageTokens(img.size, img.detail);
    }
    return Object.values(o).reduce((a: number, x) => a + itemTokens(x, counter), 0);
  }
  return stringTokens(v, counter);
}

/** Token shapes of requests made of `base` plus items, each item serialised and counted once. */
export class Shaper {
  private readonly cache = new WeakMap<object, { json: string; tokens: number }>();
  readonly fixed: string;
  readonly fixedTokens: number;

  constructor(
    readonly wire: WireFormat,
    base: Record<string, unknown>,
    private readonly counter: TokenCounter,
  ) {
    let fixed = '';
    let fixedTokens = 0;
    for (const [k, v] of Object.entries(base)) {
      if (k === itemsKey(wire)) continue;
      if (SHAPE_FIXED_KEYS.has(k)) fixed += `${k}:${JSON.stringify(v)}\n`;
      if (FIXED_KEYS[wire].includes(k)) fixedTokens += stringTokens(v, counter);
    }
    this.fixed = fixed;
    this.fixedTokens = fixedTokens;
  }

  private item(it: Item): { json: string; tokens: number } {
    let c = this.cache.get(it);
    if (!c) {
      c = { json: JSON.stringify(it), tokens: itemTokens(it, this.counter) + ITEM_OVERHEAD_TOKENS };
      this.cache.set(it, c);
    }
    return c;
  }

  shape(items: readonly Item[]): { shape: PromptShape; tokens: number } {
    const json: string[] = new Array(items.length);
    const itemTokens: number[] = new Array(items.length);
    let tokens = this.fixedTokens;
    items.forEach((it, i) => {
      const c = this.item(it);
      json[i] = c.json;
      itemTokens[i] = c.tokens;
      tokens += c.tokens;
    });
    return { shape: { fixed: this.fixed, fixedTokens: this.fixedTokens, items: json, itemTokens }, tokens };
  }
}

/** What one strategy did on one session, before it becomes a row. */
export interface StrategyRun {
  calls: ReplayCall[];
  totals: ReplayTotals;
  /** the strategy's own time per call (engine.project, wrapModelCall, pruneMessages...) */
  engineMs: number[];
  /** tokens removed, summed over calls (original - projected) */
  removedTokens: number;
  /** of those, tokens whose full text a handle in the projection reads back exactly */
  recoverableTokens: number;
}

/**
 * Measures a non-engine strategy: its projected items, call by call, through the shared meter. Its
 * requests carry the agent's prelude (system prompt and tools) as `replay()` gives Spillway's, so
 * both are billed on the requests the agent really sent.
 */
export async function runDriver(
  given: Transcript,
  driver: Driver,
  counter: TokenCounter,
  prices: readonly PriceModel[] = PRICE_MODELS,
): Promise<StrategyRun> {
  const t = withAgentPrelude(given).transcript;
  const shaper = new Shaper(t.wire, t.base, counter);
  const meter = new ReplayMeter(prices, undefined, { counter, wire: t.wire });
  const engineMs: number[] = [];
  let removed = 0;
  for (let k = 0; k < t.calls.length; k++) {
    const { items, ms } = await driver.project(k);
    engineMs.push(ms);
    const orig = shaper.shape(t.items.slice(0, t.calls[k]!.end) as Item[]);
    const proj = shaper.shape(items);
    removed += Math.max(0, orig.tokens - proj.tokens);
    meter.add({
      originalTokens: orig.tokens,
      projectedTokens: proj.tokens,
      originalShape: orig.shape,
      projectedShape: proj.shape,
      reply: t.calls[k]!.reply,
      original: () => JSON.stringify(requestForCall(t, k)),
      projected: () => JSON.stringify({ ...t.base, [itemsKey(t.wire)]: items }),
      reductions: [],
      // billed with the cache's expiry as Spillway's replay is (src/replay/replay.ts)
      ...(t.calls[k]!.at !== undefined ? { at: t.calls[k]!.at } : {}),
    });
  }
  // nothing such a strategy removes is kept anywhere: none of it can be read back
  return { calls: meter.calls, totals: meter.totals(t.skipped.total, []), engineMs, removedTokens: removed, recoverableTokens: 0 };
}

/**
 * Measures Spillway with a configuration, through `replay()` (a fresh token counter, so its time is
 * cold). Removed content counts as readable back when a reduction in force holds it under a handle
 * that `replay` read back equal to the original; per call, at most what the call removed.
 */
export function runSpillway(
  t: Transcript,
  config: Record<string, unknown>,
  tokenizer: 'o200k_base' | 'approximate' | TokenCounter = 'o200k_base',
): StrategyRun {
  const engineMs: number[] = [];
  // per call, tokens the reductions in force removed; per handle, the same summed over calls (kept
  // small: a long session carries hundreds of reductions into every call)
  const reduced: number[] = [];
  const byHandle = new Map<string, number>();
  const r = replay(t, {
    config,
    // a fresh counter by default, so the engine times include counting as a live session's first call does
    tokenizer: typeof tokenizer === 'string' ? newTokenCounter(tokenizer) : tokenizer,
    store: new MemoryStore(),
    onProjection: (_k, c) => {
      engineMs.push(c.engineMs);
      let n = 0;
      // results and file inputs alike: each removed part is held under its handle
      for (const x of [...c.projection.reductions, ...c.projection.inputs]) {
        const saved = Math.max(0, x.originalTokens - x.projectedTokens);
        n += saved;
        byHandle.set(x.handle, (byHandle.get(x.handle) ?? 0) + saved);
      }
      reduced.push(n);
    },
  });
  let removed = 0,
    recoverable = 0;
  r.calls.forEach((c, k) => {
    const gone = Math.max(0, c.originalTokens - c.projectedTokens);
    removed += gone;
    recoverable += Math.min(reduced[k]!, gone);
  });
  // a handle that did not read back takes back everything it was credited with
  for (const h of r.totals.unrecoverable) recoverable -= byHandle.get(h) ?? 0;
  return { calls: r.calls, totals: r.totals, engineMs, removedTokens: removed, recoverableTokens: Math.max(0, recoverable) };
}

/** JSON.parse time of call bodies, for the calls `sample` picks (all of them by default). */
export function parseTimes(t: Transcript, sample: (k: number) => boolean = () => true, reps = 3): Map<number, number> {
  const out = new Map<number, number>();
  for (let k = 0; k < t.calls.length; k++) {
    if (!sample(k)) continue;
    const body = JSON.stringify(requestForCall(t, k));
    let best = Infinity;
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      JSON.parse(body);
      best = Math.min(best, performance.now() - t0);
    }
    out.set(k, best);
  }
  return out;
}

export type StrategyKind = 'raw' | 'peer' | 'spillway' | 'reference';

export interface Row {
  strategy: string;
  kind: StrategyKind;
  calls: number;
  inputTokens: number;
  rawTokens: number;
  /** 1 - input / raw */
  reduction: number;
  largest: number;
  rawLargest: number;
  /** largest / rawLargest */
  largestRel: number;
  /** share of removed tokens a handle reads back; null when nothing was removed */
  recoverableShare: number | null;
  cacheStableShare: number;
  /** cost relative to raw history with caching, per price model */
  cost: Record<string, number>;
  /** the absolute costs behind it, in uncached-token units (for pooling sessions) */
  costUnits: Record<string, { raw: number; projected: number; readBack: number }>;
  /** cost with read-backs relative to raw history with caching, per price model (docs/replay-and-cost.md) */
  costWithReadBacks: Record<string, number>;
  missRate: number | null;
  referencedIds: number;
  missedIds: number;
  /** references and misses under the previous definition of an identifier (src/replay/identifiers.ts) */
  referencedIdsBefore: number;
  missedIdsBefore: number;
  missRateBefore: number | null;
  msPerCall: number;
  /** strategy time over JSON.parse time of the same bodies (calls parse-timed) */
  overParse: number;
  /** the sums behind overParse, and behind recoverableShare */
  sampledEngineMs: number;
  sampledParseMs: number;
  removedTokens: number;
  recoverableTokens: number;
}

/** The figures of a row that come from replay totals, one session's or several pooled (`poolReplays`). */
type TotalsFigures = Pick<
  Row,
  | 'calls'
  | 'inputTokens'
  | 'rawTokens'
  | 'reduction'
  | 'largest'
  | 'rawLargest'
  | 'cacheStableShare'
  | 'cost'
  | 'costUnits'
  | 'costWithReadBacks'
  | 'missRate'
  | 'referencedIds'
  | 'missedIds'
  | 'referencedIdsBefore'
  | 'missedIdsBefore'
  | 'missRateBefore'
>;

export function totalsFigures(t: ReplayTotals): TotalsFigures {
  return {
    calls: t.calls,
    inputTokens: t.projectedTokens,
    rawTokens: t.originalTokens,
    reduction: t.originalTokens ? 1 - t.projectedTokens / t.originalTokens : 0,
    largest: t.maxProjectedTokens,
    rawLargest: t.maxOriginalTokens,
    cacheStableShare: t.cacheStableShare,
    cost: Object.fromEntries(Object.entries(t.cost).map(([k, v]) => [k, v.relative])),
    costUnits: Object.fromEntries(
      Object.entries(t.cost).map(([k, v]) => [
        k,
        { raw: v.raw, projected: v.projected, readBack: t.costWithReadBacks[k]!.projected - v.projected },
      ]),
    ),
    costWithReadBacks: Object.fromEntries(Object.entries(t.costWithReadBacks).map(([k, v]) => [k, v.relative])),
    missRate: t.referencedIds ? t.missRate : null,
    referencedIds: t.referencedIds,
    missedIds: t.missedIds,
    referencedIdsBefore: t.referencedIdsBefore,
    missedIdsBefore: t.missedIdsBefore,
    missRateBefore: t.referencedIdsBefore ? t.missRateBefore : null,
  };
}

/**
 * A row's figures back as the replay totals they came from, for pooling rows with `poolReplays`
 * (what a row does not keep, such as output cost or skipped records, is zero: no pooled figure of a
 * row uses it).
 */
export function rowTotals(r: Row): ReplayTotals {
  const names = Object.keys(r.costUnits);
  return {
    calls: r.calls,
    originalTokens: r.rawTokens,
    projectedTokens: r.inputTokens,
    cacheStableShare: r.cacheStableShare,
    maxOriginalTokens: r.rawLargest,
    maxProjectedTokens: r.largest,
    recoverable: true,
    skippedRecords: 0,
    referencedIds: r.referencedIds,
    missedIds: r.missedIds,
    missRate: r.missRate ?? 0,
    referencedIdsBefore: r.referencedIdsBefore,
    missedIdsBefore: r.missedIdsBefore,
    missRateBefore: r.missRateBefore ?? 0,
    cost: Object.fromEntries(
      names.map((k) => {
        const u = r.costUnits[k]!;
        return [k, { raw: u.raw, projected: u.projected, relative: r.cost[k]!, output: 0 }];
      }),
    ),
    costWithReadBacks: Object.fromEntries(
      names.map((k) => [k, { projected: r.costUnits[k]!.projected + r.costUnits[k]!.readBack, relative: r.costWithReadBacks[k]! }]),
    ),
    outputTokens: 0,
    unrecoverable: [],
  };
}

/** One row: every figure of the table, from a run and the session's parse times. */
export function strategyRow(strategy: string, kind: StrategyKind, run: StrategyRun, parse: ReadonlyMap<number, number>): Row {
  const t = run.totals;
  let eng = 0,
    par = 0;
  for (const [k, ms] of parse) {
    eng += run.engineMs[k] ?? 0;
    par += ms;
  }
  return {
    strategy,
    kind,
    ...totalsFigures(t),
    largestRel: t.maxOriginalTokens ? t.maxProjectedTokens / t.maxOriginalTokens : 1,
    recoverableShare: run.removedTokens > 0 ? run.recoverableTokens / run.removedTokens : null,
    msPerCall: run.engineMs.length ? run.engineMs.reduce((a, b) => a + b, 0) / run.engineMs.length : 0,
    overParse: par > 0 ? eng / par : 0,
    sampledEngineMs: eng,
    sampledParseMs: par,
    removedTokens: run.removedTokens,
    recoverableTokens: run.recoverableTokens,
  };
}
