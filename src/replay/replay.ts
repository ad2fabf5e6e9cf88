/**
 * Replay: run the engine over every model call of a recorded session, as if Spillway had been in
 * the loop, and report per call what the agent sent, what Spillway would have sent, what the
 * provider could have cached, what that costs, and what the agent referred to next that the
 * projection had hidden. The engine runs with a session, exactly as behind the proxy, so the
 * figures include its stickiness.
 */
import { performance } from 'node:perf_hooks';
import {
  createEngine,
  observationOption,
  readRequest,
  resultText,
  tokenCounter,
  type EngineOptions,
  type Projection,
  type SpillwayConfig,
  type TokenCounter,
} from '../engine';
import { decodeString, parseLazy, type JValue } from '../engine/json';
import { CallMap, type ParsedRequest, type ToolCall } from '../engine/formats';
import type { HeldGroup, InputReduction, KeptWhole, Reduction, SavedByAgent, TruncatedByAgent, WireFormat } from '../engine/types';
import { MemoryStore } from '../store';
import type { OutputStore } from '../store/entry';
import { itemsKey, requestForCall, type Transcript } from './readers';
import {
  billedItemTokens,
  billInput,
  itemBilling,
  PRICE_MODELS,
  readBackCall,
  readBackCost,
  readBackTokens,
  readBackSlices,
  fileText,
  READ_BACK_MAX_CHARS,
  sharedPrefix,
  type ItemBilling,
  type PriceModel,
  type PromptShape,
} from './metrics';
import { missedIdentifiers } from './identifiers';
import {
  attributeMiss,
  missCauseTotals,
  poolMissCauses,
  wroteAround,
  type HeldBy,
  type Miss,
  type MissCauseTotals,
  type ReadBack,
} from './misses';
import { callSources, sourceLabel, type CallSource } from '../engine/names';
import { withAgentPrelude, type PreludeUse } from './prelude';
import { familyOf } from './prices';
import { compactionReports, type CompactionReport } from './compactions';
import type { CostByModel, Limits } from './limits';

export interface ReplayCall {
  index: number;
  originalTokens: number;
  projectedTokens: number;
  reductions: number;
  /** reductions this call made (not carried over from earlier calls) */
  freshReductions: number;
  /**
   * file inputs (a Write's content, a heredoc's body) this call replaced by a marker (not carried over),
   * on arrival or by a clear with their call's result
   */
  freshInputs: number;
  cachedPrefixTokens: number;
  cacheStable: boolean;
  /** the same two figures for the agent's own requests (raw history) */
  rawCachedPrefixTokens: number;
  /** ms since the previous call, when both calls have a time (TranscriptCall.at) */
  gapMs?: number;
  /**
   * the price models whose cache this call found cold: the gap since the previous call was longer
   * than they keep a prefix idle (PriceModel.cacheIdleMs), so raw history and projection alike read
   * only the fixed part (system prompt and tools) and write the items again; absent when none did
   */
  coldFor?: string[];
  referencedIds: number;
  missedIds: number;
  /** the same two counts under the previous definition of an identifier (src/replay/identifiers.ts) */
  referencedIdsBefore: number;
  missedIdsBefore: number;
  /** each missed identifier, the handle that holds it and what hid it (src/replay/misses.ts) */
  missed: Miss[];
  /** the read-backs these misses imply: one grep per stored output, one rerun per identifier no output holds */
  readBacks: ReadBack[];
  /**
   * per price model, this call's input bill for raw history and for the projection (each with its
   * own caching), and the extra cost of the read-backs this call's misses imply (docs/replay-and-cost.md)
   */
  cost: Record<string, { raw: number; projected: number; readBack: number }>;
  /** the reductions in force in this call (with `detail: true`) */
  reductionList?: Reduction[];
  /** the file inputs replaced by a marker in force in this call, those a clear replaced included (with `detail: true`) */
  inputList?: InputReduction[];
  /** results new in this call over their tool's cap that were sent whole, and why (with `detail: true`) */
  keptWholeList?: KeptWhole[];
  /** results new in this call that the agent had truncated itself (with `detail: true`; src/engine/agent-truncation.ts) */
  truncatedList?: TruncatedByAgent[];
  /** results this call sends that the agent had saved to a file itself, its preview or pointer all the model sees (with `detail: true`) */
  savedList?: SavedByAgent[];
  /** the results this call sends whole, grouped by why the clear stage left them so (with `detail: true` and the clear stage on; held.ts) */
  heldList?: HeldGroup[];
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
  /** references, misses and miss rate under the previous definition of an identifier, for comparison */
  referencedIdsBefore: number;
  missedIdsBefore: number;
  missRateBefore: number;
  /**
   * input cost under each price model: projected relative to raw history, both with caching;
   * `output` is what the replies cost (the same with or without Spillway, so not in `relative`)
   */
  cost: Record<string, { raw: number; projected: number; relative: number; output: number }>;
  /** the projection's cost plus the read-backs its misses imply, relative to raw history's cost */
  costWithReadBacks: Record<string, { projected: number; relative: number }>;
  /** tokens of the replies (the agent's text and tool calls; thinking is not in the transcript's reply) */
  outputTokens: number;
  /**
   * per cause (what hid them), the missed identifiers and the read-backs they imply; always set by
   * the replay (optional for totals rebuilt from older figures, such as the benchmark's rows)
   */
  missCauses?: MissCauseTotals;
  /** read-backs the misses imply, summed over the calls (set by the replay, as `missCauses`) */
  readBacks?: number;
  /**
   * per price model, the calls that found its cache cold (`ReplayCall.coldFor`); set by the replay,
   * as `missCauses` (0 for every model when the transcript has no times)
   */
  coldCalls?: Record<string, number>;
  /** handles whose stored text did not read back equal to the original (empty when recoverable) */
  unrecoverable: string[];
  /** the compactions the log records and what the projection does to each (src/replay/compactions.ts); absent: none */
  compactions?: CompactionReport[];
  /**
   * tool outputs the agent had cut to a head and a tail itself before sending them
   * (src/engine/agent-truncation.ts), and which agents cut them; absent: none
   */
  truncatedByAgent?: { outputs: number; agents: string[] };
  /**
   * tool outputs the agent had saved to a file itself and sent as its own preview or pointer
   * (Claude Code's `<persisted-output>`, Gemini CLI's masked outputs, Copilot's: src/engine/markers.ts),
   * which Spillway leaves alone, and which agents saved them; absent: none
   */
  savedByAgent?: { outputs: number; agents: string[] };
  /**
   * what the hindsight oracle and the floor would cost (src/replay/limits.ts); set only when asked
   * for (`spillway replay --limits`, the benchmark), and pooled only when every session has them
   */
  limits?: Limits;
  /**
   * the price models whose columns (cost, cost with read-backs, cold calls) come from a replay routed
   * to their own provider (src/replay/routes.ts), with that replay's misses; absent: every column
   * prices this replay's projection, held to never dearer only under the session's own route
   */
  routedAs?: Record<string, { provider: string; missedIds: number; referencedIds: number }>;
}

export interface ReplayResult {
  format: Transcript['source'];
  wire: WireFormat;
  /** the model the session called, as the transcript names it (absent when it does not) */
  model?: string;
  /** the price model (a key of `cost`) that bills that model (src/replay/prices.ts), when known */
  family?: string;
  calls: ReplayCall[];
  totals: ReplayTotals;
  skipped: Transcript['skipped'];
  /**
   * the agent's system prompt and tool definitions the replay added to every call (src/replay/prelude.ts),
   * with their tokens; absent when none was added (turned off, or the transcript holds them)
   */
  prelude?: PreludeUse & { tokens: number };
}

export interface ReplayOptions {
  config: SpillwayConfig | Record<string, unknown>;
  store?: OutputStore;
  tokenizer?: EngineOptions['tokenizer'];
  reducers?: EngineOptions['reducers'];
  inputFilter?: EngineOptions['inputFilter'];
  /** what the session holds ahead: the limit's oracle only (src/replay/limits.ts) */
  hindsight?: EngineOptions['hindsight'];
  /** the session lengths the payback schedule learns from (EngineOptions.sessionLengths; default the corpus's) */
  sessionLengths?: EngineOptions['sessionLengths'];
  prices?: readonly PriceModel[];
  /**
   * the provider the requests are sent to (`ProjectOptions.provider`: anthropic, openai, openai-4o),
   * so the engine holds its guarantee under that provider's prices as the proxy would; default: the
   * provider of the transcript's model (src/replay/routes.ts replays each price model under its own)
   */
  provider?: string;
  /**
   * add the agent's system prompt and tool definitions to every call of a Claude Code or Codex log,
   * which does not hold them (default true: the request as the agent sent it; src/replay/prelude.ts)
   */
  prelude?: boolean;
  /** keep each call's reduction list in the result (the inspector wants it; the CLI does not) */
  detail?: boolean;
  signal?: AbortSignal;
  onCall?: (index: number, total: number) => void;
  /** each call's request text and projection, with the time `project` took (benchmarks time the engine with it) */
  onProjection?: (index: number, call: { request: string; projection: Projection<string>; engineMs: number }) => void;
}

function shapeOf(text: string, wire: WireFormat, fixedTokens: number, itemTokens: number[]): PromptShape {
  const root = parseLazy(text);
  const key = itemsKey(wire);
  let fixed = '';
  let items: string[] = [];
  if (root.kind === 'object') {
    root.keys.forEach((k, i) => {
      const v = root.values[i]!;
      if (k === key && v.kind === 'array') items = v.items.map((it: JValue) => text.slice(it.start, it.end));
      else if (k === 'system' || k === 'tools' || k === 'instructions' || k === 'systemInstruction')
        fixed += `${k}:${text.slice(v.start, v.end)}\n`;
    });
  }
  return { fixed, fixedTokens, items, itemTokens };
}

/**
 * What the meter needs of one call, whoever projected it: the token shapes of the request as the
 * agent sent it and as projected, the reply, and (only built when the reply names identifiers)
 * both request texts. Benchmarks feed peers' projections through the same meter as the engine's.
 */
export interface MeterCall {
  originalTokens: number;
  projectedTokens: number;
  originalShape: PromptShape;
  projectedShape: PromptShape;
  reply: string;
  original: () => string;
  projected: () => string;
  /** the reductions in force in this call ([] for a strategy that keeps no store) */
  reductions: readonly Reduction[];
  /**
   * the file inputs in force in this call (their markers hide what the agent wrote): the projection's
   * `inputs`, those a clear replaced included
   */
  inputs?: readonly { handle: string; fresh?: boolean; tool?: string; callId?: string }[];
  /** tool results in the request (the engine's count): tells the call each result arrived in */
  toolResults?: number;
  /** the file or command each call named (engine/names.ts callSources), to name what held a miss; absent, misses are not named */
  callSources?: () => ReadonlyMap<string, CallSource>;
  /**
   * when the agent sent the request (ms since the epoch, TranscriptCall.at): a gap since the previous
   * call longer than a price model keeps its cache idle bills this call cold; absent, never cold
   */
  at?: number;
}

/** Options of the meter beyond its price models and store. */
export interface MeterOptions {
  /** the counter the item tokens were counted with; billing adjusts images and thinking with it */
  counter?: TokenCounter;
  /** the wire format of the items (which user messages start a turn, where thinking sits) */
  wire?: WireFormat;
}

/** One side (raw history or projection) as the provider's cache saw it across calls. */
class CacheSide {
  prev?: { fixed: string; items: readonly string[]; stripped: Uint8Array; billing: (ItemBilling | undefined)[] };
  /** per price model, item counts of earlier requests whose end is a breakpoint still a prefix */
  readonly entries = new Map<string, number[]>();

  /**
   * What item `i` bills beyond its count, reused from the previous request when the item is the
   * same text there (only the previous request's strings are kept: each is a slice of a whole
   * request body, which V8 keeps alive as long as the slice is).
   */
  billingOf(i: number, text: string, wire: WireFormat, counter: TokenCounter): ItemBilling {
    const prev = this.prev;
    if (prev && prev.items[i] === text && prev.billing[i]) return prev.billing[i]!;
    let item: unknown;
    try {
      item = JSON.parse(text);
    } catch {
      item = undefined;
    }
    return itemBilling(item, wire, counter);
  }

  /** Leading items equal to the previous request's, or -1 when the fixed part differs or there was none. */
  shared(shape: PromptShape, stripped: Uint8Array): number {
    const prev = this.prev;
    if (!prev || prev.fixed !== shape.fixed) return -1;
    const n = Math.min(prev.items.length, shape.items.length);
    let i = 0;
    while (i < n && prev.items[i] === shape.items[i] && prev.stripped[i] === stripped[i]) i++;
    return i;
  }

  /**
   * The input bill of this request under `pm`, given its billed item tokens; records its breakpoint.
   * `m` is the count of leading items equal to the previous request's (-1: the fixed part differs).
   * A `cold` cache has lost every item: only the fixed part (system prompt, tools), which every call
   * of every session of the agent sends, is still read, and earlier breakpoints past it are gone.
   */
  bill(pm: PriceModel, shape: PromptShape, billed: number[], m: number, cold = false) {
    if (cold) m = Math.min(m, 0);
    const pre = new Array<number>(billed.length + 1);
    pre[0] = shape.fixedTokens;
    for (let i = 0; i < billed.length; i++) pre[i + 1] = pre[i]! + billed[i]!;
    const total = pre[billed.length]!;
    let shared = 0;
    let entries = this.entries.get(pm.name) ?? [];
    if (m >= 0) {
      if (pm.caching === 'automatic') shared = pre[m]!;
      else {
        // the system prompt's breakpoint, then every earlier request's end still a prefix of this one
        if (pre[0]! >= pm.minCacheableTokens) shared = pre[0]!;
        for (const e of entries) if (e <= m) shared = Math.max(shared, pre[e]!);
      }
      entries = entries.filter((e) => e <= m);
    } else entries = [];
    if (total >= pm.minCacheableTokens) entries.push(billed.length);
    this.entries.set(pm.name, entries);
    return { total, ...billInput(total, shared, pm) };
  }
}

/**
 * Per-call accounting shared by `replay` and the benchmarks: cached prefix, the bill under each
 * price model for raw history and projection (both with caching), cache stability, missed
 * identifiers and what reading them back would cost.
 */
export class ReplayMeter {
  readonly calls: ReplayCall[] = [];
  readonly cost: ReplayTotals['cost'];
  private readonly readBack: Record<string, number>;
  private outputTokens = 0;
  private prevProjected?: PromptShape;
  private prevOriginal?: PromptShape;
  /** the previous call's time (undefined when it had none, or before the first call) */
  private prevAt?: number;
  /** per price model, the calls that found its cache cold */
  private readonly coldCalls: Record<string, number>;
  private readonly originals = new Map<string, string>();
  private readonly rawSide = new CacheSide();
  private readonly projSide = new CacheSide();
  /**
   * What the agent has read back so far in this session. A read-back's answer stays in the agent's
   * history, so what it showed is in the agent's context in every later call: an identifier it holds
   * is not missed again, and its tokens are carried (read from the cache) by every later call.
   */
  private readBackText = '';
  private carriedTokens = 0;
  /** the call where each stage first reduced each handle (`stage:handle`; `input:handle` for file inputs) */
  private readonly since = new Map<string, number>();
  /** tool results in each call's request so far (non-decreasing: each request extends the one before) */
  private readonly resultsByCall: number[] = [];

  constructor(
    private readonly prices: readonly PriceModel[] = PRICE_MODELS,
    private readonly store?: { get(handle: string): string | undefined },
    private readonly opts: MeterOptions = {},
  ) {
    this.cost = Object.fromEntries(prices.map((p) => [p.name, { raw: 0, projected: 0, relative: 1, output: 0 }]));
    this.readBack = Object.fromEntries(prices.map((p) => [p.name, 0]));
    this.coldCalls = Object.fromEntries(prices.map((p) => [p.name, 0]));
  }

  private count(text: string): number {
    return this.opts.counter ? this.opts.counter.count(text) : Math.ceil(text.length / 4);
  }

  private storedText(handle: string): string {
    let o = this.originals.get(handle);
    if (o === undefined) {
      try {
        o = this.store?.get(handle) ?? '';
      } catch {
        o = '';
      }
      this.originals.set(handle, o);
    }
    return o;
  }

  /** The first call whose request held tool result `result` (the counts never decrease). */
  private arrivedAt(result: number): number | undefined {
    const counts = this.resultsByCall;
    let lo = 0,
      hi = counts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (counts[mid]! > result) hi = mid;
      else lo = mid + 1;
    }
    return lo < counts.length ? lo : undefined;
  }

  /** Billed item tokens of both sides under each price model, and which items' thinking is stripped. */
  private billed(c: MeterCall) {
    const { counter, wire } = this.opts;
    const o = c.originalShape,
      p = c.projectedShape;
    const n = o.items.length;
    const origB: (ItemBilling | undefined)[] = new Array(n);
    const projB: (ItemBilling | undefined)[] = new Array(p.items.length);
    let turnStart = 0;
    if (counter && wire) {
      for (let i = 0; i < n; i++) {
        origB[i] = this.rawSide.billingOf(i, o.items[i]!, wire, counter);
        if (origB[i]!.turnStart) turnStart = i;
      }
      for (let i = 0; i < p.items.length; i++) {
        projB[i] = i < n && p.items[i] === o.items[i] ? origB[i] : this.projSide.billingOf(i, p.items[i]!, wire, counter);
      }
    }
    const strippedOf = (bs: (ItemBilling | undefined)[]) => Uint8Array.from(bs, (b, i) => (b && b.hasThinking && i < turnStart ? 1 : 0));
    const tokensFor = (shape: PromptShape, bs: (ItemBilling | undefined)[], pm: PriceModel) =>
      shape.itemTokens.map((t, i) => (bs[i] ? billedItemTokens(t, bs[i]!, pm, i >= turnStart) : t));
    return { origB, projB, origStripped: strippedOf(origB), projStripped: strippedOf(projB), tokensFor };
  }

  add(
    c: MeterCall,
    detail?: {
      reductions: Reduction[];
      inputs: InputReduction[];
      keptWhole?: KeptWhole[];
      truncated?: TruncatedByAgent[];
      saved?: SavedByAgent[];
      held?: HeldGroup[];
    },
  ): ReplayCall {
    const cached = sharedPrefix(this.prevProjected, c.projectedShape);
    const rawCached = sharedPrefix(this.prevOriginal, c.originalShape);
    this.prevProjected = c.projectedShape;
    this.prevOriginal = c.originalShape;
    const ids = c.reply
      ? missedIdentifiers(c.reply, c.original(), this.readBackText ? `${c.projected()}\n${this.readBackText}` : c.projected())
      : { referenced: [], missed: [], referencedBefore: 0, missedBefore: 0 };
    // file inputs: those replaced on arrival, and those a clear replaced with their call's result
    // (the engine lists both in its projection's `inputs`)
    const inputs = c.inputs ?? [];
    const sinceKey = (stage: string | undefined, handle: string) => `${stage ?? 'input'}:${handle}`;
    for (const r of c.reductions)
      if (r.fresh && !this.since.has(sinceKey(r.stage, r.handle))) this.since.set(sinceKey(r.stage, r.handle), this.calls.length);
    for (const r of inputs)
      if (r.fresh && !this.since.has(sinceKey(undefined, r.handle))) this.since.set(sinceKey(undefined, r.handle), this.calls.length);
    this.resultsByCall.push(c.toolResults ?? 0);
    const held: HeldBy[] = [
      ...c.reductions.map((r) => ({ handle: r.handle, tool: r.tool, callId: r.callId, stage: r.stage, result: r.result })),
      ...inputs.map((r) => ({ handle: r.handle, tool: r.tool ?? 'input', ...(r.callId !== undefined ? { callId: r.callId } : {}) })),
    ];
    let sources: ReadonlyMap<string, CallSource> | undefined;
    const missed = ids.missed.map((id) => {
      const miss = attributeMiss(id, held, {
        storedText: (h) => this.storedText(h.handle),
        since: (h) => this.since.get(sinceKey(h.stage, h.handle)),
        arrived: (result) => (c.toolResults === undefined ? undefined : this.arrivedAt(result)),
        ...(c.callSources
          ? {
              nameOf: (h: HeldBy) =>
                h.callId === undefined
                  ? undefined
                  : sourceLabel((sources ??= c.callSources!()).get(h.callId), h.stage ? 'result' : 'input'),
            }
          : {}),
      });
      const wrote = wroteAround(c.reply, id);
      return wrote === undefined ? miss : { ...miss, wrote };
    });
    // what each read-back returns and the call that asks for it, in tokens (the same under every
    // price model): one read per stored output, for all that this call missed of it
    const groups = new Map<string, { handle?: string; ids: string[]; miss: Miss }>();
    for (const m of missed) {
      const key = m.handle ?? `rerun:${m.id}`;
      const g = groups.get(key);
      if (g) g.ids.push(m.id);
      else groups.set(key, { ...(m.handle ? { handle: m.handle } : {}), ids: [m.id], miss: m });
    }
    const reads = [...groups.values()].map((g) => {
      let source: string;
      // a file input's content is on disk: the agent reads the file, as the marker says
      if (g.handle) source = inputs.some((r) => r.handle === g.handle) ? fileText(this.storedText(g.handle)) : this.storedText(g.handle);
      else {
        // nothing holds it: the agent reruns the tool; its answer is the same text around the identifier
        const text = c.original();
        const at = text.indexOf(g.ids[0]!);
        source = at < 0 ? '' : text.slice(Math.max(0, at - 4 * READ_BACK_MAX_CHARS), at + 4 * READ_BACK_MAX_CHARS).replace(/\\n/g, '\n');
      }
      const answer = readBackSlices(source, g.ids);
      return { call: this.count(readBackCall(g.ids, g.handle)), answer: this.count(answer), text: answer, group: g };
    });
    const replyTokens = c.reply ? this.count(c.reply) : 0;
    this.outputTokens += replyTokens;

    const b = this.billed(c);
    const mRaw = this.rawSide.shared(c.originalShape, b.origStripped);
    const mProj = this.projSide.shared(c.projectedShape, b.projStripped);
    // a gap longer than a provider keeps its cache idle: cold for raw history and projection alike
    const gapMs = c.at !== undefined && this.prevAt !== undefined ? c.at - this.prevAt : undefined;
    this.prevAt = c.at;
    const coldFor = gapMs === undefined ? [] : this.prices.filter((pm) => gapMs > pm.cacheIdleMs).map((pm) => pm.name);
    const cost: ReplayCall['cost'] = {};
    for (const pm of this.prices) {
      const cold = coldFor.includes(pm.name);
      if (cold) this.coldCalls[pm.name]! += 1;
      const raw = this.rawSide.bill(pm, c.originalShape, b.tokensFor(c.originalShape, b.origB, pm), mRaw, cold);
      const proj = this.projSide.bill(pm, c.projectedShape, b.tokensFor(c.projectedShape, b.projB, pm), mProj, cold);
      // earlier read-backs ride along in this call's cached prefix; this call's own are priced as new
      const readBack = this.carriedTokens * pm.cachedRead + readBackCost(proj.total, reads, pm);
      cost[pm.name] = { raw: raw.cost, projected: proj.cost, readBack };
      const t = this.cost[pm.name]!;
      t.raw += raw.cost;
      t.projected += proj.cost;
      t.output += replyTokens * pm.output;
      this.readBack[pm.name]! += readBack;
    }
    for (const r of reads) {
      this.readBackText += `${r.text}\n`;
      this.carriedTokens += readBackTokens(r.call, r.answer);
    }
    this.rawSide.prev = { fixed: c.originalShape.fixed, items: c.originalShape.items, stripped: b.origStripped, billing: b.origB };
    this.projSide.prev = { fixed: c.projectedShape.fixed, items: c.projectedShape.items, stripped: b.projStripped, billing: b.projB };

    const call: ReplayCall = {
      index: this.calls.length,
      originalTokens: c.originalTokens,
      projectedTokens: c.projectedTokens,
      reductions: c.reductions.length,
      freshReductions: c.reductions.filter((r) => r.fresh).length,
      freshInputs: (c.inputs ?? []).filter((r) => r.fresh).length,
      cachedPrefixTokens: cached.tokens,
      cacheStable: cached.stable,
      rawCachedPrefixTokens: rawCached.tokens,
      ...(gapMs !== undefined ? { gapMs } : {}),
      ...(coldFor.length > 0 ? { coldFor } : {}),
      referencedIds: ids.referenced.length,
      missedIds: ids.missed.length,
      referencedIdsBefore: ids.referencedBefore,
      missedIdsBefore: ids.missedBefore,
      missed,
      readBacks: reads.map((r): ReadBack => ({
        ...(r.group.handle ? { handle: r.group.handle } : {}),
        cause: r.group.miss.cause,
        ...(r.group.miss.tool ? { tool: r.group.miss.tool } : {}),
        ids: r.group.ids,
        tokens: readBackTokens(r.call, r.answer),
      })),
      cost,
      ...(detail ? { reductionList: detail.reductions, inputList: detail.inputs } : {}),
      ...(detail?.keptWhole?.length ? { keptWholeList: detail.keptWhole } : {}),
      ...(detail?.truncated?.length ? { truncatedList: detail.truncated } : {}),
      ...(detail?.saved?.length ? { savedList: detail.saved } : {}),
      ...(detail?.held ? { heldList: detail.held } : {}),
    };
    this.calls.push(call);
    return call;
  }

  totals(skippedRecords: number, unrecoverable: string[]): ReplayTotals {
    const calls = this.calls;
    const costWithReadBacks: ReplayTotals['costWithReadBacks'] = {};
    for (const pm of this.prices) {
      const c = this.cost[pm.name]!;
      c.relative = c.raw > 0 ? c.projected / c.raw : 1;
      const projected = c.projected + this.readBack[pm.name]!;
      costWithReadBacks[pm.name] = { projected, relative: c.raw > 0 ? projected / c.raw : 1 };
    }
    const referenced = calls.reduce((a, c) => a + c.referencedIds, 0);
    const missedN = calls.reduce((a, c) => a + c.missedIds, 0);
    const referencedBefore = calls.reduce((a, c) => a + c.referencedIdsBefore, 0);
    const missedBefore = calls.reduce((a, c) => a + c.missedIdsBefore, 0);
    // the first call has no predecessor, so it cannot be cache-stable; share over the others
    const stableOf = calls.slice(1);
    return {
      calls: calls.length,
      originalTokens: calls.reduce((a, c) => a + c.originalTokens, 0),
      projectedTokens: calls.reduce((a, c) => a + c.projectedTokens, 0),
      cacheStableShare: stableOf.length ? stableOf.filter((c) => c.cacheStable).length / stableOf.length : 1,
      maxOriginalTokens: calls.reduce((a, c) => Math.max(a, c.originalTokens), 0),
      maxProjectedTokens: calls.reduce((a, c) => Math.max(a, c.projectedTokens), 0),
      recoverable: unrecoverable.length === 0,
      skippedRecords,
      referencedIds: referenced,
      missedIds: missedN,
      missRate: referenced ? missedN / referenced : 0,
      referencedIdsBefore: referencedBefore,
      missedIdsBefore: missedBefore,
      missRateBefore: referencedBefore ? missedBefore / referencedBefore : 0,
      cost: this.cost,
      costWithReadBacks,
      outputTokens: this.outputTokens,
      missCauses: missCauseTotals(calls),
      readBacks: calls.reduce((a, c) => a + c.readBacks.length, 0),
      coldCalls: { ...this.coldCalls },
      unrecoverable,
    };
  }
}

/** Every tool call of a request, duplicated ids included. */
function inputsOf(req: ParsedRequest): ToolCall[] {
  return req.calls instanceof CallMap ? req.calls.all : [...req.calls.values()];
}

/** Totals pooled over several sessions, and how many sessions they pool. */
export type PooledTotals = ReplayTotals & { sessions: number };

/**
 * Several replays pooled into one set of totals, as if they were one long session: tokens, costs,
 * read-backs, references and misses summed (so the miss rate and every relative cost are ratios of
 * sums, not means of ratios), the largest context the largest of any, the cache-stable share over
 * all calls that had a predecessor. Price models are those of the first result.
 */
export function poolReplays(results: readonly { totals: ReplayTotals }[]): PooledTotals {
  const ts = results.map((r) => r.totals);
  const sum = (f: (t: ReplayTotals) => number) => ts.reduce((a, t) => a + f(t), 0);
  const names = ts.length ? Object.keys(ts[0]!.cost) : [];
  const cost: ReplayTotals['cost'] = {};
  const costWithReadBacks: ReplayTotals['costWithReadBacks'] = {};
  for (const k of names) {
    const raw = sum((t) => t.cost[k]?.raw ?? 0);
    const projected = sum((t) => t.cost[k]?.projected ?? 0);
    const withReads = sum((t) => t.costWithReadBacks?.[k]?.projected ?? t.cost[k]?.projected ?? 0);
    cost[k] = { raw, projected, relative: raw > 0 ? projected / raw : 1, output: sum((t) => t.cost[k]?.output ?? 0) };
    costWithReadBacks[k] = { projected: withReads, relative: raw > 0 ? withReads / raw : 1 };
  }
  const stableCalls = sum((t) => Math.max(0, t.calls - 1));
  const referencedIds = sum((t) => t.referencedIds);
  const missedIds = sum((t) => t.missedIds);
  const referencedIdsBefore = sum((t) => t.referencedIdsBefore);
  const missedIdsBefore = sum((t) => t.missedIdsBefore);
  const unrecoverable = ts.flatMap((t) => t.unrecoverable);
  const coldCalls = Object.fromEntries(names.map((k) => [k, sum((t) => t.coldCalls?.[k] ?? 0)]));
  const limits = poolLimits(ts.map((t) => t.limits));
  return {
    sessions: ts.length,
    calls: sum((t) => t.calls),
    originalTokens: sum((t) => t.originalTokens),
    projectedTokens: sum((t) => t.projectedTokens),
    cacheStableShare: stableCalls ? sum((t) => t.cacheStableShare * Math.max(0, t.calls - 1)) / stableCalls : 1,
    maxOriginalTokens: ts.reduce((a, t) => Math.max(a, t.maxOriginalTokens), 0),
    maxProjectedTokens: ts.reduce((a, t) => Math.max(a, t.maxProjectedTokens), 0),
    recoverable: unrecoverable.length === 0 && ts.every((t) => t.recoverable),
    skippedRecords: sum((t) => t.skippedRecords),
    referencedIds,
    missedIds,
    missRate: referencedIds ? missedIds / referencedIds : 0,
    referencedIdsBefore,
    missedIdsBefore,
    missRateBefore: referencedIdsBefore ? missedIdsBefore / referencedIdsBefore : 0,
    cost,
    costWithReadBacks,
    outputTokens: sum((t) => t.outputTokens ?? 0),
    missCauses: poolMissCauses(ts.map((t) => t.missCauses)),
    readBacks: sum((t) => t.readBacks ?? 0),
    coldCalls,
    unrecoverable,
    ...(limits ? { limits } : {}),
  };
}

/** Several sessions' limits pooled: sums of costs (a pooled share is then a ratio of sums); undefined unless every session has them. */
function poolLimits(all: readonly (Limits | undefined)[]): Limits | undefined {
  if (all.length === 0 || all.some((l) => l === undefined)) return undefined;
  const sum = (pick: (l: Limits) => CostByModel): CostByModel => {
    const out: CostByModel = {};
    for (const l of all as Limits[]) for (const [k, v] of Object.entries(pick(l))) out[k] = (out[k] ?? 0) + v;
    return out;
  };
  return { oracle: sum((l) => l.oracle), floor: sum((l) => l.floor), oracleMisses: all.reduce((a, l) => a + l!.oracleMisses, 0) };
}

/** Outputs by call id, each with the agent that cut or saved it: how many, and which agents (the totals' shape). */
function byAgent(outputs: ReadonlyMap<string, string>): { outputs: number; agents: string[] } {
  return { outputs: outputs.size, agents: [...new Set(outputs.values())].sort() };
}

/** Replays a transcript; throws only for engine failures, which are bugs or unreadable calls. */
export function replay(t: Transcript, opts: ReplayOptions): ReplayResult {
  const steps = replaySteps(t, opts);
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
  }
}

/** The session the replay's engine keeps its memory under. */
const REPLAY_SESSION = 'replay';

/** Longest stretch of replay work between two yields to the event loop in `replayAsync`. */
const SLICE_MS = 20;

/**
 * `replay` that yields to the event loop between calls (every SLICE_MS of work), so a host such as
 * the extension stays responsive and a cancellation (the signal) stops it between two calls.
 */
export async function replayAsync(t: Transcript, opts: ReplayOptions): Promise<ReplayResult> {
  const steps = replaySteps(t, opts);
  let sliceStart = performance.now();
  for (;;) {
    const next = steps.next();
    if (next.done) return next.value;
    if (performance.now() - sliceStart >= SLICE_MS) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
  }
}

/** The replay as a sequence of steps, one per model call; returns the result after the last. */
function* replaySteps(given: Transcript, opts: ReplayOptions): Generator<number, ReplayResult, void> {
  const { transcript: t, prelude } = opts.prelude === false ? { transcript: given } : withAgentPrelude(given);
  const store = opts.store ?? new MemoryStore();
  const engine = createEngine(opts.config, {
    store,
    ...(opts.tokenizer ? { tokenizer: opts.tokenizer } : {}),
    ...(opts.reducers ? { reducers: opts.reducers } : {}),
    ...(opts.inputFilter ? { inputFilter: opts.inputFilter } : {}),
    ...(opts.hindsight ? { hindsight: opts.hindsight } : {}),
    ...(opts.sessionLengths ? { sessionLengths: opts.sessionLengths } : {}),
  });
  const counter = typeof opts.tokenizer === 'object' ? opts.tokenizer : tokenCounter(opts.tokenizer ?? engine.config.tokenizer);
  const meter = new ReplayMeter(opts.prices ?? PRICE_MODELS, store, { counter, wire: t.wire });
  const checked = new Map<string, boolean>();
  const unrecoverable: string[] = [];
  // the outputs the agent truncated itself, by call id (each is new in exactly one call)
  const truncated = new Map<string, string>();
  // the outputs the agent saved itself, by call id (sent again by every later call)
  const saved = new Map<string, string>();

  for (let k = 0; k < t.calls.length; k++) {
    if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('replay cancelled');
    const request = requestForCall(t, k);
    const text = JSON.stringify(request);
    const started = opts.onProjection ? performance.now() : 0;
    // observations are what the reader marked (the agent's own rules), not the `auto` recognition
    const p = engine.project(text, t.wire, {
      session: REPLAY_SESSION,
      detail: true,
      ...(opts.detail ? { held: true } : {}),
      ...(t.observations ? { observations: t.observations } : {}),
      ...(opts.provider !== undefined ? { provider: opts.provider } : {}),
      // when the agent sent it, as the log says: a call after a pause finds the provider's cache cold
      ...(t.calls[k]!.at !== undefined ? { at: t.calls[k]!.at } : {}),
    });
    if (opts.onProjection) opts.onProjection(k, { request: text, projection: p, engineMs: performance.now() - started });
    const out = p.request;
    const d = p.detail!;
    for (const x of p.stats.truncatedByAgent ?? []) truncated.set(x.callId, x.agent);
    for (const x of p.stats.savedByAgent ?? []) saved.set(x.callId, x.agent);

    // recoverability: every fresh reduction reads back equal to the result it replaced
    if (p.reductions.some((r) => r.fresh && !checked.has(r.handle))) {
      const req = readRequest(text, t.wire, undefined, observationOption(engine.config, t.observations));
      for (const r of p.reductions) {
        if (!r.fresh || checked.has(r.handle)) continue;
        const original = resultText(req, req.results[r.result]!);
        let ok: boolean;
        try {
          ok = store.get(r.handle) === original;
        } catch {
          ok = false;
        }
        checked.set(r.handle, ok);
        if (!ok) unrecoverable.push(r.handle);
      }
    }
    // and every fresh file-input marker reads back equal to the input it replaced
    if (p.inputs.some((r) => r.fresh && !checked.has(r.handle))) {
      const req = readRequest(text, t.wire);
      for (const r of p.inputs) {
        if (!r.fresh || checked.has(r.handle)) continue;
        const ok = inputsOf(req).some((c) => {
          if (c.item !== r.item || c.id !== r.callId || !c.input) return false;
          const original = c.input.kind === 'string' ? decodeString(text, c.input) : text.slice(c.input.start, c.input.end);
          try {
            return store.get(r.handle) === original;
          } catch {
            return false;
          }
        });
        checked.set(r.handle, ok);
        if (!ok) unrecoverable.push(r.handle);
      }
    }

    const metered = meter.add(
      {
        originalTokens: p.stats.originalTokens,
        projectedTokens: p.stats.projectedTokens,
        originalShape: shapeOf(text, t.wire, d.fixedTokens, d.originalItemTokens),
        projectedShape: shapeOf(out, t.wire, d.fixedTokens, d.projectedItemTokens),
        reply: t.calls[k]!.reply,
        original: () => text,
        projected: () => out,
        reductions: p.reductions,
        inputs: p.inputs,
        toolResults: p.stats.toolResults,
        callSources: () => callSources(request),
        ...(t.calls[k]!.at !== undefined ? { at: t.calls[k]!.at } : {}),
      },
      opts.detail
        ? {
            reductions: p.reductions,
            inputs: p.inputs,
            keptWhole: d.keptWhole,
            ...(p.stats.truncatedByAgent ? { truncated: p.stats.truncatedByAgent } : {}),
            ...(p.stats.savedByAgent ? { saved: p.stats.savedByAgent } : {}),
            ...(p.held ? { held: p.held } : {}),
          }
        : undefined,
    );
    // the loop the proxy runs live: a miss the agent would have read back makes that tool back off
    for (const m of metered.missed) if (m.handle) engine.noteReadBack(REPLAY_SESSION, m.handle);
    opts.onCall?.(k, t.calls.length);
    yield k;
  }
  if (opts.signal?.aborted) throw opts.signal.reason ?? new Error('replay cancelled');

  const model = typeof t.base.model === 'string' ? t.base.model : undefined;
  const family = familyOf(model);
  const compactions = compactionReports(t, meter.calls);
  return {
    format: t.source,
    wire: t.wire,
    ...(model !== undefined ? { model } : {}),
    ...(family !== undefined ? { family } : {}),
    calls: meter.calls,
    skipped: t.skipped,
    totals: {
      ...meter.totals(t.skipped.total, unrecoverable),
      ...(compactions.length ? { compactions } : {}),
      ...(truncated.size ? { truncatedByAgent: byAgent(truncated) } : {}),
      ...(saved.size ? { savedByAgent: byAgent(saved) } : {}),
    },
    ...(prelude
      ? { prelude: { ...prelude, tokens: prelude.fields.reduce((a, f) => a + counter.count(JSON.stringify(t.base[f])), 0) } }
      : {}),
  };
}
