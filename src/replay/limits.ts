/**
 * The limit: what a session would cost under two reducers that cannot be built, so that what the
 * default saves can be read against what was there to save (DESIGN.md, "What better means", 5).
 *
 * - **oracle** (hindsight, zero misses): each tool result is reduced, in the call it arrives in, to
 *   the lines that hold the first occurrence of each identifier (src/replay/identifiers.ts, the
 *   current definition) that the agent writes in that call's reply or any later one and that the
 *   request does not already hold outside tool results and replaced file inputs (the agent's own
 *   command names the file it read), under a marker header with its handle. A result whose reduced
 *   form is not shorter in tokens stays whole.
 *   The lines are found in the result as the request's JSON spells it, the text the replay's miss
 *   check (`missedIdentifiers`) looks in, so every identifier the agent uses later is still in every
 *   projection that held it raw: no misses, hence no read-backs. A file input (what the agent wrote)
 *   becomes its marker on arrival unless it holds such an identifier that the request holds nowhere
 *   else (a marker keeps no lines). As a check, a replay that still finds a miss is run again with
 *   the results and inputs that held it kept whole (at most ORACLE_PASSES replays; `oracleMisses`
 *   reports any left).
 *   Clears with hindsight: the clear stage runs with Hindsight (../engine/types.ts). A result may be
 *   cleared once the agent has written each identifier it kept (its own reply holds it from then on),
 *   and a clear fires whenever it pays back its cache rewrite over the calls the session really has
 *   left, under the guarantee's ledger; no trigger, count, in-use window or stale order. The clear
 *   stage still takes the oldest clearable results first. Because the ledger only estimates the
 *   meter's cache (pauses, breakpoints), a clear may not pay back as billed, so the oracle is the
 *   cheaper, per price model, of this replay and one that decides on arrival only.
 * - **floor**: every tool result and file input is replaced, on arrival, by the marker alone (no
 *   preview), unless that marker is not shorter in tokens. Misses are not priced: it is what sending
 *   no tool output at all would cost. Both use the engine's shortest marker (LIMIT_MARKER_STYLE) for
 *   results; file inputs get the engine's own input marker.
 *
 * Both run through the replay itself (its engine with a custom reducer for every tool, its meter
 * with caching, the agent's prelude and cache expiry), so the three figures (raw, oracle, floor)
 * and the default's cost are measured by one meter in one unit: `calls[].cost.<model>.raw`.
 */
import {
  handleFor,
  observationOption,
  readRequest,
  renderMarker,
  tokenCounter,
  validateConfig,
  type CustomReducer,
  type Hindsight,
  type InputFilter,
  type ReducerInput,
  type SpillwayConfig,
  type TokenCounter,
} from '../engine';
import { countLines } from '../engine/lines';
import { countUpTo } from '../engine/stages/prefix-sums';
import { CallMap, type ParsedRequest, type ToolCall } from '../engine/formats';
import { requestForCall, type Transcript } from './readers';
import { identifiersIn } from './identifiers';
import { replay, replayAsync, type ReplayOptions, type ReplayResult, type ReplayTotals } from './replay';

/** Per price model, a session's input cost in the units of `calls[].cost.<model>.raw`. */
export type CostByModel = Record<string, number>;

/** The two limits of a session (or of several, pooled: sums of costs). */
export interface Limits {
  /** the hindsight reducer's cost (read-backs priced, and there are none when `oracleMisses` is 0) */
  oracle: CostByModel;
  /** every tool result and file input as a bare marker on arrival, before read-backs */
  floor: CostByModel;
  /** identifiers the oracle missed (0 by construction; kept so a regression shows) */
  oracleMisses: number;
}

/** Passes over the session the oracle makes at most: a miss left after the first keeps its result whole in the next. */
const ORACLE_PASSES = 4;

/**
 * The largest preview the engine keeps (the schema's bound on `previewChars`); a result whose kept
 * lines are longer stays whole, since the engine would cut them.
 */
const LARGEST_PREVIEW = 100_000;

/**
 * The shortest marker the engine writes: the kept lines (none for the floor), then the characters
 * left out and the handle (`... [+41,000 chars. full output: spillway read sw_…]`, about 25 tokens),
 * so the limits measure what is sent of the outputs, not Spillway's own marker's wording.
 */
const LIMIT_MARKER_STYLE = 'oracle';

/** The base configuration with every stage off: only the custom reducer and file inputs on arrival reduce. */
function limitConfig(base: SpillwayConfig): SpillwayConfig {
  return {
    ...base,
    previewChars: LARGEST_PREVIEW,
    markerStyle: LIMIT_MARKER_STYLE,
    offload: { ...base.offload, enabled: false, dedupe: false, backoff: false },
    window: { ...base.window, enabled: false },
    budget: { enabled: false },
    inputs: { ...base.inputs, enabled: true, when: 'arrival', keepRounds: 0, minTokens: 0 },
    clear: { ...base.clear, enabled: false, schedule: 'trigger' },
  };
}

/**
 * The oracle's configuration: the limits' (limitConfig) with the clear stage on and nothing of the
 * default's caution left to it, since hindsight (../engine/types.ts, Hindsight) says what is needed:
 * no trigger to wait for, no results kept by count, in use, gathered or as a report, no stale-first
 * order; a clear fires whenever it pays back its rewrite over the calls the session really has left,
 * under the guarantee's ledger.
 */
function oracleConfig(base: SpillwayConfig): SpillwayConfig {
  const cfg = limitConfig(base);
  return {
    ...cfg,
    reportTools: [],
    clear: {
      ...cfg.clear,
      enabled: true,
      triggerTokens: 1,
      keep: 0,
      keepUnit: 'results',
      clearAtLeastTokens: 0,
      excludeTools: [],
      clearToolInputs: false,
      staleFirst: false,
      schedule: 'payback',
      inUseCalls: 0,
      keepGathered: false,
    },
  };
}

/** Tokens of the marker the engine writes for `text` with `preview` under it (src/engine/stages/reduce.ts). */
function markerTokens(input: ReducerInput, preview: string, counter: TokenCounter): number {
  const text = input.text;
  const marker = renderMarker({
    style: LIMIT_MARKER_STYLE,
    language: 'en',
    stage: 'offload',
    tool: input.tool,
    callId: input.callId,
    handle: handleFor(text),
    chars: text.length,
    bytes: Buffer.byteLength(text, 'utf8'),
    lines: countLines(text),
    tokens: counter.count(text),
    tokensEstimated: false,
    preview,
    omitted: text.length - preview.length,
    unit: 'chars',
  });
  return counter.count(marker);
}

/**
 * The lines of `text` that hold the first occurrence of each of `ids`, as the request's JSON spells
 * the text (a miss is looked for there), joined by line breaks; '' when it holds none of them. A
 * line owns the escaped line break after it: an occurrence that starts on its `n` keeps that line
 * and the next, whose join spells the break again.
 */
export function linesHolding(text: string, ids: Iterable<string>): string {
  const lines = text.split('\n');
  const escaped = lines.map((l) => JSON.stringify(l).slice(1, -1));
  const starts: number[] = [];
  let at = 0;
  for (const e of escaped) {
    starts.push(at);
    at += e.length + 2; // the escaped line break, `\n`
  }
  const joined = escaped.join('\\n');
  const keep = new Uint8Array(lines.length);
  for (const id of ids) {
    const p = joined.indexOf(id);
    if (p < 0) continue;
    const end = p + id.length;
    // the line whose escaped text or line break holds p, and every later line that starts before `end`
    let lo = 0,
      hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= p) lo = mid;
      else hi = mid - 1;
    }
    keep[lo] = 1;
    for (let i = lo + 1; i < lines.length && starts[i]! < end; i++) keep[i] = 1;
  }
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) if (keep[i]) out.push(lines[i]!);
  return out.join('\n');
}

/** How many times `id` occurs in `text` (overlaps not counted). */
function occurrences(text: string, id: string): number {
  let n = 0;
  for (let at = text.indexOf(id); at >= 0; at = text.indexOf(id, at + id.length)) n++;
  return n;
}

/** Every tool call of a request, duplicated ids included. */
function callsOf(req: ParsedRequest): ToolCall[] {
  return req.calls instanceof CallMap ? req.calls.all : [...req.calls.values()];
}

/**
 * Call k's request as the agent sent it (JSON, as the miss check reads it) without its tool results
 * and the inputs of the calls in `replaced`: what stays in every later projection of the oracle's.
 * The agent's prelude is left out, which only makes it hold less.
 */
function heldOutsideResults(t: Transcript, k: number, cfg: SpillwayConfig, replaced: ReadonlySet<string>): string {
  const text = JSON.stringify(requestForCall(t, k));
  const req = readRequest(text, t.wire, undefined, observationOption(cfg, t.observations));
  const cuts: [number, number][] = [];
  for (const r of req.results) {
    if (r.observation) cuts.push([r.observation.start, r.observation.end]);
    else if (r.content) cuts.push([r.content.start, r.content.end]);
    for (const p of r.textParts) cuts.push([p.start, p.end]);
  }
  for (const c of callsOf(req)) if (c.input && replaced.has(c.id)) cuts.push([c.input.start, c.input.end]);
  cuts.sort((a, b) => a[0] - b[0]);
  const kept: string[] = [];
  let at = 0;
  for (const [s, e] of cuts) {
    if (s > at) kept.push(text.slice(at, s));
    at = Math.max(at, e);
  }
  kept.push(text.slice(at));
  return kept.join('\u0000');
}

/** What the limit replays share with the replay of the default: everything but the configuration and reducers. */
export type LimitOptions = Omit<ReplayOptions, 'reducers' | 'onProjection' | 'onCall' | 'detail' | 'hindsight'>;

function counterOf(opts: LimitOptions, cfg: SpillwayConfig): TokenCounter {
  return typeof opts.tokenizer === 'object' ? opts.tokenizer : tokenCounter(opts.tokenizer ?? cfg.tokenizer);
}

/** Per price model, the cost a replay's totals give (with read-backs when `withReadBacks`). */
function costOf(t: ReplayTotals, withReadBacks: boolean): CostByModel {
  return Object.fromEntries(
    Object.entries(t.cost).map(([k, c]) => [k, withReadBacks ? (t.costWithReadBacks[k]?.projected ?? c.projected) : c.projected]),
  );
}

/** The floor's replay options: every result and file input a bare marker on arrival, when that is shorter in tokens. */
function floorOptions(opts: LimitOptions): ReplayOptions {
  const base = validateConfig(opts.config);
  const counter = counterOf(opts, base);
  const bare: CustomReducer = (input) => (markerTokens(input, '', counter) < counter.count(input.text) ? '' : null);
  return { ...opts, config: limitConfig(base), reducers: { '*': bare } };
}

/** The floor's replay (floorOptions). */
export function replayFloor(t: Transcript, opts: LimitOptions): ReplayResult {
  return replay(t, floorOptions(opts));
}

/**
 * One of the oracle's replays (see the module comment), with hindsight clears (`clears`) or with
 * reductions on arrival alone, and the handles it had to keep whole after a miss in an earlier pass
 * (none on the corpus; the loop is the proof, not a tuning).
 */
export function replayOracle(t: Transcript, opts: LimitOptions, clears = true): ReplayResult {
  const passes = oraclePasses(t, opts, clears);
  let result: ReplayResult;
  do result = replay(t, passes.next());
  while (!passes.done(result));
  return result;
}

/** `replayOracle` yielding to the event loop between calls (replayAsync), so a host stays responsive and `opts.signal` stops it. */
async function replayOracleAsync(t: Transcript, opts: LimitOptions, clears: boolean): Promise<ReplayResult> {
  const passes = oraclePasses(t, opts, clears);
  let result: ReplayResult;
  do result = await replayAsync(t, passes.next());
  while (!passes.done(result));
  return result;
}

/**
 * The oracle's passes over a session: `next` gives the options of the next pass's replay, `done`
 * says whether a pass's result is the last (no miss left, or none it could still keep whole, or
 * ORACLE_PASSES made).
 */
function oraclePasses(t: Transcript, opts: LimitOptions, clears: boolean): { next(): ReplayOptions; done(result: ReplayResult): boolean } {
  const base = validateConfig(opts.config);
  const counter = counterOf(opts, base);
  // identifiers of the replies from call k on, for every k (a set per call, shared suffixes built backwards)
  const replyIds = t.calls.map((c) => identifiersIn(c.reply ?? ''));
  // the calls whose reply writes each identifier, ascending: once the agent has written an identifier,
  // its own reply holds it in every later request, so a result is needed until the next use of each
  // identifier it keeps, not the last
  const usesOf = new Map<string, number[]>();
  replyIds.forEach((ids, k) => {
    for (const id of ids) {
      const calls = usesOf.get(id);
      if (!calls) usesOf.set(id, [k]);
      else if (calls[calls.length - 1] !== k) calls.push(k);
    }
  });
  /** The first call from `from` on whose reply writes `id` (-1 when none does). */
  const nextUse = (id: string, from: number): number => {
    const calls = usesOf.get(id) ?? [];
    const i = countUpTo(calls, from - 1);
    return i < calls.length ? calls[i]! : -1;
  };
  const later: Set<string>[] = new Array(t.calls.length + 1);
  later[t.calls.length] = new Set();
  for (let k = t.calls.length - 1; k >= 0; k--) {
    const s = new Set(later[k + 1]);
    for (const id of replyIds[k]!) s.add(id);
    later[k] = s;
  }
  const whole = new Set<string>();
  let pass = 0;
  const next = (): ReplayOptions => {
    pass++;
    let current = 0;
    // decided once per result, in the call it arrives in (the engine recalls it after)
    const decided = new Map<string, string | null>();
    // per result (as `decided`), the last call that uses an identifier of what it keeps: a clear takes it after
    const neededUntil = new Map<string, number>();
    // the call ids of the file inputs replaced so far, and the request of the current call without what may be reduced
    const replaced = new Set<string>();
    let held: { call: number; text: string } | undefined;
    const heldNow = () => {
      if (held?.call !== current) held = { call: current, text: heldOutsideResults(t, current, base, replaced) };
      return held.text;
    };
    // a file input is replaced unless it holds an identifier used from its call on (decided once, by handle)
    const inputs = new Map<string, boolean>();
    const inputFilter: InputFilter = ({ text, callId }) => {
      const handle = handleFor(text);
      let replace = inputs.get(handle);
      if (replace === undefined) {
        const ids = later[Math.min(current, t.calls.length)]!;
        const escaped = JSON.stringify(text);
        const mine = [...ids].filter((id) => text.includes(id) || escaped.includes(id));
        // an identifier the request also holds outside tool results and this input (the agent's own
        // words, another input kept) is not a reason to keep it: the request's text holds the input
        // itself once, so it is held elsewhere when it occurs there more often than in the input
        const elsewhere = mine.length ? heldNow() : '';
        replace = !whole.has(handle) && !mine.some((id) => occurrences(elsewhere, id) <= occurrences(escaped, id));
        inputs.set(handle, replace);
      }
      if (replace) {
        replaced.add(callId);
        held = undefined;
      }
      return replace;
    };
    const oracle: CustomReducer = (input) => {
      const handle = handleFor(input.text);
      const key = `${input.callId}\0${handle}`;
      const known = decided.get(key);
      if (known !== undefined) return known;
      let out: string | null = null;
      let until = Number.POSITIVE_INFINITY;
      if (!whole.has(handle)) {
        const ids = [...later[Math.min(current, t.calls.length)]!];
        // only the identifiers this result holds need the request's other text looked at
        const escaped = JSON.stringify(input.text);
        const mine = ids.filter((id) => escaped.includes(id));
        const elsewhere = mine.length ? heldNow() : '';
        const needed = mine.filter((id) => !elsewhere.includes(id));
        const kept = linesHolding(input.text, needed);
        if (kept.length <= LARGEST_PREVIEW && markerTokens(input, kept, counter) < counter.count(input.text)) out = kept;
        until = needed.reduce((a, id) => Math.max(a, nextUse(id, current)), -1);
      }
      decided.set(key, out);
      neededUntil.set(key, until);
      return out;
    };
    const hindsight: Hindsight = {
      // a result the reducer did not weigh (a marker the agent sent back, say) is never cleared
      neededUntil: ({ callId, text }) => neededUntil.get(`${callId}\0${handleFor(text)}`) ?? Number.POSITIVE_INFINITY,
      remainingCalls: (call) => Math.max(0, t.calls.length - 1 - call),
    };
    return {
      ...opts,
      config: clears ? oracleConfig(base) : limitConfig(base),
      reducers: { '*': oracle },
      inputFilter,
      ...(clears ? { hindsight } : {}),
      onCall: (k) => {
        current = k + 1;
      },
    };
  };
  const done = (result: ReplayResult): boolean => {
    const missedHandles = result.calls.flatMap((c) => c.missed.flatMap((m) => (m.handle ? [m.handle] : [])));
    if (pass >= ORACLE_PASSES || result.totals.missedIds === 0 || missedHandles.every((h) => whole.has(h))) return true;
    for (const h of missedHandles) whole.add(h);
    return false;
  };
  return { next, done };
}

/** The limits of one session: the oracle's and the floor's cost per price model. */
export function measureLimits(t: Transcript, opts: LimitOptions): Limits {
  return limitsOf([replayOracle(t, opts, true), replayOracle(t, opts, false)], replayFloor(t, opts));
}

/**
 * `measureLimits` for a host that must stay responsive (the inspector): each replay yields to the
 * event loop between calls, `opts.signal` stops it, and `onStage` hears which of the two is running.
 */
export async function measureLimitsAsync(
  t: Transcript,
  opts: LimitOptions,
  onStage?: (stage: 'oracle' | 'floor') => void,
): Promise<Limits> {
  onStage?.('oracle');
  const withClears = await replayOracleAsync(t, opts, true);
  const onArrival = await replayOracleAsync(t, opts, false);
  onStage?.('floor');
  const floor = await replayAsync(t, floorOptions(opts));
  return limitsOf([withClears, onArrival], floor);
}

/**
 * The limits from the oracle's replays and the floor's: per price model the cheaper of the oracle's
 * two placements (a hindsight clear is placed by the ledger's estimate of the cache, which the meter
 * may bill otherwise; with hindsight a reducer would not have made it).
 */
function limitsOf(oracles: readonly ReplayResult[], floor: ReplayResult): Limits {
  const costs = oracles.map((o) => costOf(o.totals, true));
  const oracle = Object.fromEntries(
    Object.keys(costs[0]!).map((k) => [k, Math.min(...costs.map((c) => c[k] ?? Number.POSITIVE_INFINITY))]),
  );
  return { oracle, floor: costOf(floor.totals, false), oracleMisses: Math.max(...oracles.map((o) => o.totals.missedIds)) };
}

/**
 * The share of the oracle's saving a reducer keeps: (raw − cost) / (raw − oracle), with `cost` the
 * reducer's cost with read-backs priced. Undefined when the oracle saves nothing.
 */
export function oracleShare(raw: number, cost: number, oracle: number): number | undefined {
  return raw - oracle > 0 ? (raw - cost) / (raw - oracle) : undefined;
}
