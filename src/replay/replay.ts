/**
 * Replay: run the engine over every model call of a recorded session, as if Spillway had been in
 * the loop, and report per call what the agent sent, what Spillway would have sent, what the
 * provider could have cached, what that costs, and what the agent referred to next that the
 * projection had hidden. The engine runs with a session, exactly as behind the proxy, so the
 * figures include its stickiness.
 */
import { createEngine, readRequest, resultText, type EngineOptions, type SpillwayConfig } from '../engine';
import { parseLazy, type JValue } from '../engine/json';
import type { Reduction, WireFormat } from '../engine/types';
import { MemoryStore } from '../store';
import type { OutputStore } from '../store/entry';
import { requestForCall, type Transcript } from './readers';
import { callCost, missedIdentifiers, PRICE_MODELS, sharedPrefix, type PriceModel, type PromptShape } from './metrics';

export interface ReplayCall {
  index: number;
  originalTokens: number;
  projectedTokens: number;
  reductions: number;
  /** reductions this call made (not carried over from earlier calls) */
  freshReductions: number;
  cachedPrefixTokens: number;
  cacheStable: boolean;
  /** the same two figures for the agent's own requests (raw history) */
  rawCachedPrefixTokens: number;
  referencedIds: number;
  missedIds: number;
  missed: { id: string; handle?: string }[];
  /** the reductions in force in this call (with `detail: true`) */
  reductionList?: Reduction[];
}

export interface ReplayTotals {
  calls: number;
  originalTokens: number;
  projectedTokens: number;
  cacheStableShare: number;
  maxOriginalTokens: number;
  maxProjectedTokens: number;
  recoverable: boolean;
  skippedRecords: number;
  referencedIds: number;
  missedIds: number;
  missRate: number;
  /** input cost under each price model: projected relative to raw history, both with caching */
  cost: Record<string, { raw: number; projected: number; relative: number }>;
  /** handles whose stored text did not read back equal to the original (empty when recoverable) */
  unrecoverable: string[];
}

export interface ReplayResult {
  format: Transcript['source'];
  wire: WireFormat;
  calls: ReplayCall[];
  totals: ReplayTotals;
  skipped: Transcript['skipped'];
}

export interface ReplayOptions {
  config: SpillwayConfig | Record<string, unknown>;
  store?: OutputStore;
  tokenizer?: EngineOptions['tokenizer'];
  reducers?: EngineOptions['reducers'];
  prices?: readonly PriceModel[];
  /** keep each call's reduction list in the result (the inspector wants it; the CLI does not) */
  detail?: boolean;
  signal?: AbortSignal;
  onCall?: (index: number, total: number) => void;
}

function shapeOf(text: string, wire: WireFormat, fixedTokens: number, itemTokens: number[]): PromptShape {
  const root = parseLazy(text);
  const key = wire === 'openai-responses' ? 'input' : 'messages';
  let fixed = '';
  let items: string[] = [];
  if (root.kind === 'object') {
    root.keys.forEach((k, i) => {
      const v = root.values[i]!;
      if (k === key && v.kind === 'array') items = v.items.map((it: JValue) => text.slice(it.start, it.end));
      else if (k === 'system' || k === 'tools' || k === 'instructions') fixed += `${k}:${text.slice(v.start, v.end)}\n`;
    });
  }
  return { fixed, fixedTokens, items, itemTokens };
}

/** Replays a transcript; throws only for engine failures, which are bugs or unreadable calls. */
export function replay(t: Transcript, opts: ReplayOptions): ReplayResult {
  const store = opts.store ?? new MemoryStore();
  const engine = createEngine(opts.config, { store, ...(opts.tokenizer ? { tokenizer: opts.tokenizer } : {}), ...(opts.reducers ? { reducers: opts.reducers } : {}) });
  const prices = opts.prices ?? PRICE_MODELS;
  const calls: ReplayCall[] = [];
  const checked = new Map<string, boolean>();
  const unrecoverable: string[] = [];
  let prevProjected: PromptShape | undefined;
  let prevOriginal: PromptShape | undefined;
  const cost: ReplayTotals['cost'] = Object.fromEntries(prices.map((p) => [p.name, { raw: 0, projected: 0, relative: 1 }]));
  const originals = new Map<string, string>();

  for (let k = 0; k < t.calls.length; k++) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('replay cancelled');
    const text = JSON.stringify(requestForCall(t, k));
    const p = engine.project(text, t.wire, { session: 'replay', detail: true });
    const out = p.request;
    const d = p.detail!;
    const projShape = shapeOf(out, t.wire, d.fixedTokens, d.projectedItemTokens);
    const origShape = shapeOf(text, t.wire, d.fixedTokens, d.originalItemTokens);
    const cached = sharedPrefix(prevProjected, projShape);
    const rawCached = sharedPrefix(prevOriginal, origShape);
    prevProjected = projShape;
    prevOriginal = origShape;
    for (const pm of prices) {
      cost[pm.name]!.raw += callCost(p.stats.originalTokens, rawCached.tokens, pm);
      cost[pm.name]!.projected += callCost(p.stats.projectedTokens, cached.tokens, pm);
    }

    // recoverability: every fresh reduction reads back equal to the result it replaced
    if (p.reductions.some((r) => r.fresh && !checked.has(r.handle))) {
      const req = readRequest(text, t.wire);
      for (const r of p.reductions) {
        if (!r.fresh || checked.has(r.handle)) continue;
        const original = resultText(req, req.results[r.result]!);
        let ok = false;
        try { ok = store.get(r.handle) === original; } catch { ok = false; }
        checked.set(r.handle, ok);
        if (!ok) unrecoverable.push(r.handle);
      }
    }

    const miss = missedIdentifiers(t.calls[k]!.reply, text, out);
    const missed = miss.missed.map((id) => {
      for (const r of p.reductions) {
        let o = originals.get(r.handle);
        if (o === undefined) { try { o = store.get(r.handle); } catch { o = ''; } originals.set(r.handle, o); }
        if (o.includes(id)) return { id, handle: r.handle };
      }
      return { id };
    });
    calls.push({
      index: k,
      originalTokens: p.stats.originalTokens,
      projectedTokens: p.stats.projectedTokens,
      reductions: p.reductions.length,
      freshReductions: p.reductions.filter((r) => r.fresh).length,
      cachedPrefixTokens: cached.tokens,
      cacheStable: cached.stable,
      rawCachedPrefixTokens: rawCached.tokens,
      referencedIds: miss.referenced.length,
      missedIds: miss.missed.length,
      missed,
      ...(opts.detail ? { reductionList: p.reductions } : {}),
    });
    opts.onCall?.(k, t.calls.length);
  }

  for (const pm of prices) {
    const c = cost[pm.name]!;
    c.relative = c.raw > 0 ? c.projected / c.raw : 1;
  }
  const referenced = calls.reduce((a, c) => a + c.referencedIds, 0);
  const missedN = calls.reduce((a, c) => a + c.missedIds, 0);
  // the first call has no predecessor, so it cannot be cache-stable; share over the others
  const stableOf = calls.slice(1);
  return {
    format: t.source,
    wire: t.wire,
    calls,
    skipped: t.skipped,
    totals: {
      calls: calls.length,
      originalTokens: calls.reduce((a, c) => a + c.originalTokens, 0),
      projectedTokens: calls.reduce((a, c) => a + c.projectedTokens, 0),
      cacheStableShare: stableOf.length ? stableOf.filter((c) => c.cacheStable).length / stableOf.length : 1,
      maxOriginalTokens: calls.reduce((a, c) => Math.max(a, c.originalTokens), 0),
      maxProjectedTokens: calls.reduce((a, c) => Math.max(a, c.projectedTokens), 0),
      recoverable: unrecoverable.length === 0,
      skippedRecords: t.skipped.total,
      referencedIds: referenced,
      missedIds: missedN,
      missRate: referenced ? missedN / referenced : 0,
      cost,
      unrecoverable,
    },
  };
}

