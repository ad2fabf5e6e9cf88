/**
 * The inspector's host-side session model, without `vscode`: what a session is, whichever way it
 * was made, and the `SessionSource` each origin implements.
 *
 * Three origins feed the inspector: turns the proxy recorded (src/proxy/recording.ts files),
 * transcripts replayed from disk (Open Transcript, Browse Agent Sessions), and projections made
 * through the extension API with a `session` option. Each becomes an `InspectorSession` that answers
 * the protocol's questions (summaries first, one turn's details on demand, text a page at a time,
 * a dry-run re-projection under other caps), so the panel never needs to know where a session came from.
 */
import {
  isReference,
  readRequest,
  resultText,
  type HeldGroup,
  type InputReduction,
  type Reduction,
  type SavedByAgent,
  type TruncatedByAgent,
  type SpillwayConfig,
  type WireFormat,
} from '../../engine';
import type { RecordedAt, RecordedReduction } from '../pure/records';
import { inputDocument, markerTextsFor } from '../pure/documents';
import { sourceLabel, withCallsNamed, type CallSource } from '../../engine/names';
import { CLEAR_HOLD_LABELS } from '../../replay/held';
import type { OutputStore } from '../../store/entry';
import type {
  Cost,
  InputInfo,
  Origin,
  ResultInfo,
  RoutedFigures,
  SearchMatch,
  SessionInfo,
  SessionLimits,
  Side,
  TextPage,
  TurnDetail,
  TurnSummary,
  WholeResult,
} from '../../protocol';
import { callCost, PRICE_MODELS } from '../../replay/metrics';
import { causeLabel } from '../../replay/misses';
export { totalsOf } from '../../protocol';
import { totalsOf as totalsOfTurns } from '../../protocol';

/** A tool result that is new in a turn (the turn's own), reduced or sent whole. */
export interface OwnResultRecord {
  callId: string;
  tool: string;
  chars: number;
  tokens?: number;
  /** the text, kept for results sent whole when the request itself is not kept */
  text?: string;
}

/** A missed identifier as a turn keeps it. */
export interface MissedRecord {
  id: string;
  handle?: string;
  cause?: string;
  tool?: string;
  /** the call whose result (or input) holds it, its file or command (src/replay/misses.ts Miss) */
  callId?: string;
  source?: string;
  /** what the agent wrote around it */
  wrote?: string;
  since?: number;
}

export interface TurnRecord {
  summary: TurnSummary;
  reductions: readonly Reduction[];
  /** what hid each (cause, tool, the turn of the reduction) when the replay knows it */
  missed: readonly MissedRecord[];
  /** read-backs the misses would have cost the agent (replays) */
  readBacks?: number;
  /** results the agent had saved itself and sent as its own preview (Claude Code's and Qwen Code's `<persisted-output>`, Gemini CLI's masking) */
  savedByAgent?: readonly SavedByAgent[];
  /** the turn's new results the agent had truncated itself (Gemini CLI, Codex, pi, mini-swe-agent) */
  truncatedByAgent?: readonly TruncatedByAgent[];
  /** the turn's own new results, when known */
  own?: readonly OwnResultRecord[];
  /** tool call inputs replaced by a marker in the turn's projection (absent in records made before they were kept) */
  inputs?: readonly InputReduction[];
  /**
   * the marker texts of the decisions this turn made (fresh reductions and inputs), for sources that
   * cannot project the turn again (API sessions keep no request): one entry per decision, so a
   * marker carried through later turns is kept once
   */
  markers?: readonly KeptMarker[];
  /**
   * the turn's new results over their tool's cap that the engine sent whole, with its reason (a read
   * kept whole while in use); absent when the source does not know, empty when there were none
   */
  keptWhole?: readonly KeptWholeRecord[];
  /** every result the turn's request sent whole, grouped by the clear stage's reason (absent when the source does not know) */
  held?: readonly HeldGroup[];
}

/** A result over its cap that the engine sent whole, and the engine's reason (src/engine/stages/offload.ts whyWhole). */
export interface KeptWholeRecord {
  callId: string;
  tool: string;
  /** with its size and cap */
  reason: string;
  /** the clause alone ("kept whole while in use: …") */
  why: string;
}

/** The marker one decision sent: the call, its handle, the text. */
export interface KeptMarker {
  callId: string;
  handle: string;
  text: string;
}

/** Where a text was sent: the turn (0-based) and the call (identical outputs of several calls share one handle). */
export interface TextAt {
  turn: number;
  callId?: string;
}

/**
 * A turn's input cost under caching for every price model (src/replay/metrics.ts): raw history with
 * its cached prefix, and the projection with its own. `provided` (a replay call's own cost, once
 * replay reports it with read-backs) wins when present.
 */
export function costOf(originalTokens: number, rawCached: number, projectedTokens: number, cached: number, provided?: unknown): Cost {
  if (provided && typeof provided === 'object') {
    const out: Cost = {};
    for (const [name, v] of Object.entries(provided as Record<string, { raw?: unknown; projected?: unknown; readBack?: unknown }>)) {
      if (typeof v?.raw === 'number' && typeof v.projected === 'number') {
        out[name] = { raw: v.raw, projected: v.projected, ...(typeof v.readBack === 'number' ? { readBack: v.readBack } : {}) };
      }
    }
    if (Object.keys(out).length) return out;
  }
  const out: Cost = {};
  for (const pm of PRICE_MODELS)
    out[pm.name] = { raw: callCost(originalTokens, rawCached, pm), projected: callCost(projectedTokens, cached, pm) };
  return out;
}

/**
 * What a turn decided: results cleared, outputs turned into a preview with a handle (or into a
 * reference to an earlier output it repeats: `references`, not counted as previews), file inputs
 * replaced by a marker (on arrival, or by a clear with their call's result), and the tokens all of
 * these save (`freshSaved`: what this turn's own decisions removed, whichever kind they are).
 * Carried-over decisions count in the turn that made them. A clear that sent its result as it was
 * and replaced only the call's file input (`inputOnly`) counts as that input, not as a clear too.
 */
export function freshFigures(
  reductions: readonly Reduction[],
  inputs: readonly InputReduction[] = [],
): { clears: number; previews: number; references?: number; inputs: number; freshSaved: number } {
  let clears = 0;
  let previews = 0;
  let references = 0;
  let fresh = 0;
  let freshSaved = 0;
  for (const r of reductions) {
    if (!r.fresh || r.inputOnly) continue;
    const kind = reductionKind(r);
    if (kind === 'clear') clears++;
    else if (kind === 'reference') references++;
    else previews++;
    freshSaved += Math.max(0, r.originalTokens - r.projectedTokens);
  }
  for (const i of inputs) {
    if (!i.fresh) continue;
    fresh++;
    freshSaved += Math.max(0, i.originalTokens - i.projectedTokens);
  }
  return { clears, previews, ...(references ? { references } : {}), inputs: fresh, freshSaved };
}

export interface InspectorSession {
  readonly info: SessionInfo;
  turns(): TurnSummary[];
  detail(turn: number): TurnDetail;
  /** one page of the original output or of the text the model was sent in its place (in turn `at`; else the newest known) */
  text(handle: string, side: Side, offset: number, limit: number, at?: TextAt): TextPage;
  /** what a call of `turn` named: the file it read or wrote, the command it ran */
  callSource?(turn: number, callId: string): CallSource | undefined;
  /** the session's turns re-projected under `config`, without saving anything */
  dryRun(config: SpillwayConfig, signal?: AbortSignal): Promise<TurnSummary[]>;
  /** turn indexes whose own results contain `query` (in tool, call id, original or projected text) */
  search(query: string, limit: number): { turns: number[]; truncated: boolean; matches?: SearchMatch[] };
  /** one page of a result of `turn` that was sent whole */
  resultPage(turn: number, callId: string, offset: number, limit: number): TextPage;
  /** tool → turns in which a result of that tool was reduced */
  tools(): Map<string, number>;
  /**
   * The session's limit (replayed transcripts only: the oracle and the floor replayed again, which
   * takes about twice the replay's time), stopped by `signal`; `report` hears what is running.
   */
  limits?(signal: AbortSignal, report?: (message: string) => void): Promise<SessionLimits>;
  /**
   * The session replayed as if its requests went to `costModel`'s provider (replayed transcripts only;
   * one replay more), stopped by `signal`; `report` hears what is running.
   */
  routed?(costModel: string, signal: AbortSignal, report?: (message: string) => void): Promise<RoutedFigures>;
  /** tool → its results over the cap that the engine sent whole, and the reason most of them share (when the source knows) */
  keptWhole?(): Map<string, { results: number; why: string }>;
}

export interface SessionChange {
  sessionId?: string;
  /** turns added at the end of a session that is open */
  appended?: TurnSummary[];
  /** the session's figures were recomputed */
  reloaded?: boolean;
}

/** One origin of sessions. */
export interface SessionSource {
  readonly origin: Origin;
  list(): SessionInfo[];
  open(id: string): Promise<InspectorSession | undefined>;
  onDidChange(listener: (e: SessionChange) => void): () => void;
  dispose(): void;
}

/** What sessions need from their host: the store, the settings' config, projected texts already known. */
export interface InspectorContext {
  store(): OutputStore;
  config(): SpillwayConfig;
  /** the marker text the model was sent for a handle, when the host recorded it (the newest, of `stage` when it has one) */
  projectedText?(handle: string, stage?: string): string | undefined;
  /** keeps what a replayed call's reductions sent, so their stored outputs open titled by their source */
  recordProjection?(
    request: unknown,
    projected: unknown,
    reductions: readonly RecordedReduction[],
    at?: RecordedAt,
    keep?: (r: RecordedReduction) => boolean,
  ): void;
  log?(line: string): void;
}

export class Listeners<E> {
  private readonly set = new Set<(e: E) => void>();
  add(l: (e: E) => void): () => void {
    this.set.add(l);
    return () => this.set.delete(l);
  }
  fire(e: E): void {
    for (const l of [...this.set]) {
      try {
        l(e);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }
  clear(): void {
    this.set.clear();
  }
}

/** Marker texts a session caches (one per decision); past this it starts again. */
const MAX_CACHED_MARKERS = 2_000;

function decisionKey(callId: string, handle: string): string {
  return `${callId}\n${handle}`;
}

/**
 * The marker each reduction and file input of one projection was sent as, by (call, handle). Calls
 * that share a handle (identical outputs) take its markers in the request's order.
 */
export function markersOf(
  projected: unknown,
  reductions: readonly Reduction[],
  inputs: readonly InputReduction[] = [],
): Map<string, string> {
  const out = new Map<string, string>();
  const byHandle = new Map<string, { callId: string }[]>();
  const add = (handle: string, x: { callId: string }) => {
    const list = byHandle.get(handle);
    if (list) list.push(x);
    else byHandle.set(handle, [x]);
  };
  for (const i of inputs) add(i.handle, i);
  for (const r of [...reductions].sort((a, b) => a.result - b.result)) add(r.handle, r);
  for (const [handle, list] of byHandle) {
    const texts = markerTextsFor(projected, handle);
    list.forEach((x, n) => {
      const text = texts[Math.min(n, texts.length - 1)];
      if (text !== undefined) out.set(decisionKey(x.callId, handle), text);
    });
  }
  return out;
}

/** The markers of a projection's own decisions (fresh reductions and inputs), as a turn record keeps them. */
export function keptMarkers(projected: unknown, reductions: readonly Reduction[], inputs: readonly InputReduction[] = []): KeptMarker[] {
  const fresh = new Set([...reductions, ...inputs].filter((x) => x.fresh).map((x) => decisionKey(x.callId, x.handle)));
  if (fresh.size === 0) return [];
  const out: KeptMarker[] = [];
  for (const [key, text] of markersOf(projected, reductions, inputs)) {
    if (!fresh.has(key)) continue;
    const [callId, handle] = key.split('\n') as [string, string];
    out.push({ callId, handle, text });
  }
  return out;
}

export function decisionKeyOf(callId: string, handle: string): string {
  return decisionKey(callId, handle);
}

/** Turns whose markers a session keeps read at once; the least recently asked go first. */
const MAX_MARKED_TURNS = 16;

/** The markers of a few turns (by (call, handle), markersOf), read from a projection on demand. */
export class TurnMarkers {
  private readonly turns = new Map<number, Map<string, string>>();
  get(turn: number, load: () => Map<string, string>): Map<string, string> {
    const hit = this.turns.get(turn);
    if (hit) {
      this.turns.delete(turn);
      this.turns.set(turn, hit);
      return hit;
    }
    const markers = load();
    this.turns.set(turn, markers);
    while (this.turns.size > MAX_MARKED_TURNS) this.turns.delete(this.turns.keys().next().value as number);
    return markers;
  }
  clear(): void {
    this.turns.clear();
  }
}

/** What the webview is told of a file input (and, with its stage, of a reduced result): the fields it shows, no positions. */
function inputInfo(r: InputReduction | Reduction): InputInfo {
  return {
    tool: r.tool,
    callId: r.callId,
    ...('by' in r ? { by: r.by } : {}),
    reason: r.reason,
    originalChars: r.originalChars,
    projectedChars: r.projectedChars,
    originalTokens: r.originalTokens,
    projectedTokens: r.projectedTokens,
    handle: r.handle,
    fresh: r.fresh,
  };
}

function resultInfo(r: Reduction): ResultInfo {
  const { by: _by, ...info } = inputInfo(r);
  return { ...info, stage: r.stage, kind: reductionKind(r) };
}

/** What the model was sent in a result's place, as the engine made it: a preview, a reference to an earlier output it repeats, a clear. */
function reductionKind(r: Reduction): NonNullable<ResultInfo['kind']> {
  return r.stage === 'clear' ? 'clear' : isReference(r) ? 'reference' : 'preview';
}

export function toolsOf(reductions: readonly Reduction[]): string[] {
  return [...new Set(reductions.map((r) => r.tool))].sort();
}

/** A small cache of whole texts by key, so paging through one output reads it from disk once. */
class TextCache {
  private readonly map = new Map<string, string>();
  constructor(private readonly size = 4) {}
  get(key: string, load: () => string): string {
    const hit = this.map.get(key);
    if (hit !== undefined) {
      this.map.delete(key);
      this.map.set(key, hit);
      return hit;
    }
    const text = load();
    this.map.set(key, text);
    while (this.map.size > this.size) this.map.delete(this.map.keys().next().value as string);
    return text;
  }
}

function page(text: string, offset: number, limit: number): TextPage {
  const start = Math.min(offset, text.length);
  return { text: text.slice(start, start + limit), offset: start, total: text.length };
}

function unavailable(reason: string): TextPage {
  return { text: '', offset: 0, total: 0, unavailable: reason };
}

/** Matches a search lists per turn (the first few results that hold the text). */
const MAX_MATCHES_PER_TURN = 3;
/** Characters of context a search snippet shows on each side of the match. */
const SNIPPET_SIDE_CHARS = 60;

type Found = Pick<SearchMatch, 'where' | 'snippet' | 'at' | 'length'>;

/**
 * Where `text` holds `q` (already lower case), as a one-line snippet with the match's place in it;
 * null when it does not.
 */
function found(text: string, q: string, where: SearchMatch['where']): Found | null {
  const i = text.toLowerCase().indexOf(q);
  if (i < 0) return null;
  const from = Math.max(0, i - SNIPPET_SIDE_CHARS);
  const to = Math.min(text.length, i + q.length + SNIPPET_SIDE_CHARS);
  const lead = from > 0 ? '…' : '';
  // newlines and tabs become spaces one for one, so the match keeps its place
  const snippet = `${lead}${text.slice(from, to).replace(/[\r\n\t]/g, ' ')}${to < text.length ? '…' : ''}`;
  return { where, snippet, at: i - from + lead.length, length: Math.min(q.length, to - i) };
}

/**
 * Common behaviour of sessions that hold their turns as records: detail, search, tools and the
 * original side of texts (from the store). Subclasses supply the projected side and the dry run.
 */
export abstract class RecordSession implements InspectorSession {
  protected records: TurnRecord[] = [];
  protected readonly texts = new TextCache();
  abstract readonly info: SessionInfo;
  /** per (call, handle), the turns that decided it (fresh), ascending; rebuilt when the records change */
  private decisionIndex: { records: TurnRecord[]; length: number; turns: Map<string, number[]> } | undefined;
  /** marker texts by the turn that decided them: one entry per decision, whichever later turn asks */
  private readonly markerCache = new Map<string, string | null>();

  constructor(protected readonly ctx: InspectorContext) {}

  private decisions(): Map<string, number[]> {
    const ix = this.decisionIndex;
    if (ix && ix.records === this.records && ix.length === this.records.length) return ix.turns;
    const turns = new Map<string, number[]>();
    this.records.forEach((rec, t) => {
      for (const r of [...rec.reductions, ...(rec.inputs ?? [])]) {
        if (!r.fresh) continue;
        const k = decisionKey(r.callId, r.handle);
        const list = turns.get(k);
        if (!list) turns.set(k, [t]);
        else if (list[list.length - 1] !== t) list.push(t);
      }
    });
    if (ix?.records !== this.records) this.markerCache.clear();
    this.decisionIndex = { records: this.records, length: this.records.length, turns };
    return turns;
  }

  /** The turn that decided what `turn` sent for (call, handle): the last decision at or before it. */
  private decidedIn(turn: number, callId: string, handle: string): number | undefined {
    const list = this.decisions().get(decisionKey(callId, handle)) ?? [];
    let found: number | undefined;
    for (const d of list) {
      if (d > turn) break;
      found = d;
    }
    return found;
  }

  /** The first turn after `turn` that decided (call, handle) again, and how (a preview later cleared). */
  private laterOf(turn: number, callId: string, handle: string): { turn: number; stage: string } | undefined {
    const d = (this.decisions().get(decisionKey(callId, handle)) ?? []).find((x) => x > turn);
    if (d === undefined) return undefined;
    const rec = this.records[d]!;
    const r = rec.reductions.find((x) => x.callId === callId && x.handle === handle);
    return { turn: d, stage: r ? r.stage : 'input' };
  }

  /**
   * The marker the model was sent in `turn` for (call, handle), read from the source (the turn
   * projected again, its recorded projection, or the kept marker): undefined when it cannot say.
   */
  protected markerAt(turn: number, handle: string, callId: string): string | undefined {
    return this.records[turn]?.markers?.find((m) => m.callId === callId && m.handle === handle)?.text;
  }

  /** What each call of `turn`'s request named (file, command, heredoc writes), when the source keeps the request. */
  protected sourcesAt(_turn: number): ReadonlyMap<string, CallSource> | undefined {
    return undefined;
  }

  callSource(turn: number, callId: string): CallSource | undefined {
    try {
      return this.sourcesAt(turn)?.get(callId);
    } catch {
      return undefined;
    }
  }

  /**
   * The marker `turn` sent for the handle (the call's, when several calls share the handle): the one
   * its deciding turn sent, since a decision carried over stays byte for byte the same (stickiness).
   */
  private markerIn(turn: number, handle: string, callId: string | undefined): string | undefined {
    const rec = this.records[turn];
    if (!rec) return undefined;
    const r =
      [...rec.reductions, ...(rec.inputs ?? [])].find((x) => x.handle === handle && (callId === undefined || x.callId === callId)) ??
      undefined;
    if (!r) return undefined;
    // a clear that replaced only the call's file input sent the result as it was (its marker would have
    // been no shorter): its projected text is the original
    if ('inputOnly' in r && r.inputOnly) return this.original(handle);
    const decided = this.decidedIn(turn, r.callId, handle) ?? turn;
    const key = `${decided}\n${decisionKey(r.callId, handle)}`;
    const hit = this.markerCache.get(key);
    if (hit !== undefined) return hit ?? undefined;
    const stage = 'stage' in r ? r.stage : 'input';
    const text =
      this.markerAt(decided, handle, r.callId) ??
      (decided !== turn ? this.markerAt(turn, handle, r.callId) : undefined) ??
      this.ctx.projectedText?.(handle, stage);
    if (this.markerCache.size >= MAX_CACHED_MARKERS) this.markerCache.clear();
    this.markerCache.set(key, text ?? null);
    return text;
  }

  /** True when `handle` is a file input (in `turn`, or in any turn when none is given). */
  private isInput(handle: string, turn?: number): boolean {
    const has = (rec: TurnRecord | undefined) => !!rec?.inputs?.some((i) => i.handle === handle);
    if (turn !== undefined && has(this.records[turn])) return true;
    if (turn !== undefined && this.records[turn]?.reductions.some((r) => r.handle === handle)) return false;
    return this.records.some(has);
  }

  turns(): TurnSummary[] {
    return this.records.map((r) => r.summary);
  }

  /** The turn's own results (new in it), or undefined when the source cannot tell. */
  protected ownResults(turn: number): readonly OwnResultRecord[] | undefined {
    return this.records[turn]?.own;
  }

  /** The text of one of the turn's own results (whole ones: what the model was sent too). */
  protected ownText(turn: number, o: OwnResultRecord): string | undefined {
    if (o.text !== undefined) return o.text;
    const r = this.records[turn]?.reductions.find((x) => x.callId === o.callId);
    if (r) return this.original(r.handle);
    return undefined;
  }

  detail(turn: number): TurnDetail {
    const r = this.records[turn];
    if (!r) throw new Error(`turn ${turn} does not exist: the session has ${this.records.length}`);
    const saved = (r.savedByAgent ?? []).map((s) => ({ tool: s.tool, callId: s.callId, agent: s.agent, file: s.file, chars: s.chars }));
    const truncated = (r.truncatedByAgent ?? []).map((t) => ({
      tool: t.tool,
      callId: t.callId,
      agent: t.agent,
      ...(t.omitted === undefined ? {} : { omitted: t.omitted }),
      unit: t.unit,
      file: t.file,
    }));
    let sources: ReadonlyMap<string, CallSource> | undefined;
    try {
      sources = this.sourcesAt(turn);
    } catch (e) {
      this.ctx.log?.(`inspector: the tool calls of turn ${turn} of ${this.info.id} could not be read: ${String(e)}`);
    }
    // named by the file or command, its reason citing calls by theirs, and told when a later turn reduced it again
    const extra = (x: Reduction | InputReduction, kind: 'result' | 'input') => {
      const source = sourceLabel(sources?.get(x.callId), kind);
      const later = this.laterOf(turn, x.callId, x.handle);
      return { reason: withCallsNamed(x.reason, sources), ...(source ? { source } : {}), ...(later ? { later } : {}) };
    };
    // what held a miss: named by the replay, else by the call of the reduction that holds its handle
    const heldBy = (m: MissedRecord): string | undefined => {
      if (m.source) return m.source;
      const call = m.callId
        ? { callId: m.callId, input: m.cause === 'input' }
        : [...r.reductions, ...(r.inputs ?? [])]
            .filter((x) => x.handle === m.handle)
            .map((x) => ({ callId: x.callId, input: !('stage' in x) }))[0];
      return call ? sourceLabel(sources?.get(call.callId), call.input ? 'input' : 'result') : undefined;
    };
    const d: TurnDetail = {
      index: turn,
      // a result sent as it was, only its call's file input replaced by a clear, is listed as that input
      results: r.reductions.filter((x) => !x.inputOnly).map((x) => ({ ...resultInfo(x), ...extra(x, 'result') })),
      missed: r.missed.map((m) => {
        const source = m.handle ? heldBy(m) : undefined;
        return {
          id: m.id,
          ...(m.handle ? { handle: m.handle } : {}),
          ...(m.cause ? { cause: m.cause, causeLabel: causeLabel(m.cause) } : {}),
          ...(m.tool ? { tool: m.tool } : {}),
          ...(source ? { source } : {}),
          ...(m.wrote ? { wrote: m.wrote } : {}),
          ...(m.since !== undefined ? { since: m.since } : {}),
        };
      }),
      ...(r.readBacks !== undefined ? { readBacks: r.readBacks } : {}),
      ...(r.held?.length ? { held: r.held.map((g) => ({ ...g, label: CLEAR_HOLD_LABELS[g.reason] })) } : {}),
      ...(saved.length ? { savedByAgent: saved } : {}),
      ...(truncated.length ? { truncatedByAgent: truncated } : {}),
      ...(r.inputs?.length ? { inputs: r.inputs.map((x) => ({ ...inputInfo(x), ...extra(x, 'input') })) } : {}),
    };
    let own: readonly OwnResultRecord[] | undefined;
    try {
      own = this.ownResults(turn);
    } catch (e) {
      this.ctx.log?.(`inspector: the results of turn ${turn} of ${this.info.id} could not be read: ${String(e)}`);
    }
    if (!own) return { ...d, wholeUnavailable: 'the request of this turn was not kept, so the results sent whole cannot be listed' };
    const reduced = new Set(r.reductions.filter((x) => !x.inputOnly).map((x) => x.callId));
    return {
      ...d,
      whole: own
        .filter((o) => !reduced.has(o.callId))
        .map((o) => {
          const source = sourceLabel(sources?.get(o.callId), 'result');
          const why = wholeWhy(r.keptWhole, o.callId);
          return {
            tool: o.tool,
            callId: o.callId,
            chars: o.chars,
            ...(o.tokens !== undefined ? { tokens: o.tokens } : {}),
            ...(source ? { source } : {}),
            ...(why ? { why } : {}),
          };
        }),
      own: own.filter((o) => reduced.has(o.callId)).map((o) => o.callId),
    };
  }

  resultPage(turn: number, callId: string, offset: number, limit: number): TextPage {
    try {
      const o = this.ownResults(turn)?.find((x) => x.callId === callId);
      if (!o) return unavailable(`turn ${turn + 1} has no result ${callId} of its own`);
      const text = this.texts.get(`w:${turn}:${callId}`, () => this.ownText(turn, o) ?? '\u0000');
      if (text === '\u0000') return unavailable(`the text of ${callId} was not kept`);
      return page(text, offset, limit);
    } catch (e) {
      return unavailable(e instanceof Error ? e.message : String(e));
    }
  }

  protected original(handle: string): string {
    return this.ctx.store().get(handle);
  }

  protected abstract projected(handle: string): string | undefined;

  text(handle: string, side: Side, offset: number, limit: number, at?: TextAt): TextPage {
    try {
      if (side === 'original') {
        // a file input reads as what it wrote (a heredoc's command, a Write's content), not as escaped JSON
        const input = this.isInput(handle, at?.turn);
        const text = this.texts.get(`${input ? 'i' : 'o'}:${handle}`, () => {
          const original = this.original(handle);
          return (input && inputDocument(original)?.text) || original;
        });
        return page(text, offset, limit);
      }
      // the marker of that turn: a preview offloaded in turn 11 and cleared in turn 22 reads as the preview in 11
      const marker = at ? this.markerIn(at.turn, handle, at.callId) : (this.ctx.projectedText?.(handle) ?? this.projected(handle));
      if (marker === undefined)
        return unavailable(`the projected text of ${handle}${at ? ` in turn ${at.turn + 1}` : ''} was not recorded`);
      return page(marker, offset, limit);
    } catch (e) {
      return unavailable(e instanceof Error ? e.message : String(e));
    }
  }

  search(query: string, limit: number): { turns: number[]; truncated: boolean; matches: SearchMatch[] } {
    const q = query.toLowerCase();
    /** where a stored output's texts hold the query: the original, else the marker the model was sent */
    const textHits = new Map<string, Found | null>();
    const inTexts = (handle: string): Found | null => {
      let h = textHits.get(handle);
      if (h === undefined) {
        try {
          h = found(this.original(handle), q, 'original');
        } catch {
          h = null;
        }
        // what the model was sent: the marker (header and preview) that replaced the result
        if (!h) {
          const marker = this.ctx.projectedText?.(handle);
          h = marker === undefined ? null : found(marker, q, 'projected');
        }
        textHits.set(handle, h);
      }
      return h;
    };
    /**
     * what each call ran or read: the newest turn's request holds every call of a conversation that
     * grew; a call it lacks (a conversation compacted or restarted) is looked up in its own turn's
     */
    let newest: ReadonlyMap<string, CallSource> | undefined;
    const perTurn = new Map<number, ReadonlyMap<string, CallSource> | undefined>();
    const sourcesOf = (turn: number): ReadonlyMap<string, CallSource> | undefined => {
      if (!perTurn.has(turn)) {
        try {
          perTurn.set(turn, this.sourcesAt(turn));
        } catch {
          perTurn.set(turn, undefined);
        }
      }
      return perTurn.get(turn);
    };
    const sourceOf = (turn: number, callId: string): CallSource | undefined => {
      newest ??= sourcesOf(this.records.length - 1) ?? new Map();
      return newest.get(callId) ?? sourcesOf(turn)?.get(callId);
    };
    /** a match in the names of a result: its tool, the command it ran or the file it named (as written), call id or handle */
    const inNames = (turn: number, r: { tool: string; callId: string; handle?: string | undefined }): Found | null => {
      const source = sourceOf(turn, r.callId);
      return (
        found(r.tool, q, 'tool') ??
        (source?.command !== undefined ? found(source.command.split('\n')[0]!, q, 'command') : null) ??
        (source?.path !== undefined ? found(source.path, q, 'file') : null) ??
        (source?.writes?.length ? found(source.writes.join(' '), q, 'file') : null) ??
        found(r.callId, q, 'call id') ??
        (r.handle ? found(r.handle, q, 'handle') : null)
      );
    };
    const turns: number[] = [];
    const matches: SearchMatch[] = [];
    for (let i = 0; i < this.records.length; i++) {
      const rec = this.records[i]!;
      const here: SearchMatch[] = [];
      const add = (r: { tool: string; callId: string; handle?: string | undefined }, f: Found | null): void => {
        if (!f || here.length >= MAX_MATCHES_PER_TURN || here.some((m) => m.callId === r.callId)) return;
        here.push({ turn: i, tool: r.tool, callId: r.callId, ...(r.handle ? { handle: r.handle } : {}), ...f });
      };
      // a reduction or file input this turn decided, matched by its tool, call id, handle or text
      const decidedHere = (r: { fresh: boolean; tool: string; callId: string; handle: string }): void => {
        if (r.fresh) add(r, inNames(i, r) ?? inTexts(r.handle));
      };
      let own: readonly OwnResultRecord[] | undefined;
      try {
        own = this.ownResults(i);
      } catch {
        own = undefined;
      }
      if (own) {
        // the turn's own results only: a result carried from an earlier turn matches there, not here
        for (const o of own) {
          if (here.length >= MAX_MATCHES_PER_TURN) break;
          const r = rec.reductions.find((x) => x.callId === o.callId);
          if (r) add(r, inNames(i, r) ?? inTexts(r.handle));
          else {
            const text = this.ownText(i, o);
            add(o, inNames(i, o) ?? (text === undefined ? null : found(text, q, 'original')));
          }
        }
        // a clear decided in this turn is this turn's doing too
        for (const r of rec.reductions)
          if (r.fresh && r.stage === 'clear') add(r, found(r.tool, q, 'tool') ?? found(r.callId, q, 'call id'));
      } else {
        for (const r of rec.reductions) decidedHere(r);
      }
      // a file input this turn replaced: the call is the turn's (its tool, call id, what the agent wrote)
      for (const r of rec.inputs ?? []) decidedHere(r);
      if (here.length > 0) {
        if (turns.length >= limit) return { turns, truncated: true, matches };
        turns.push(i);
        matches.push(...here);
      }
    }
    return { turns, truncated: false, matches };
  }

  tools(): Map<string, number> {
    const m = new Map<string, number>();
    for (const r of this.records) for (const t of r.summary.tools) m.set(t, (m.get(t) ?? 0) + 1);
    return m;
  }

  keptWhole(): Map<string, { results: number; why: string }> {
    const m = new Map<string, { results: number; why: string; whys: Map<string, number> }>();
    for (const r of this.records)
      for (const k of r.keptWhole ?? []) {
        const e = m.get(k.tool) ?? { results: 0, why: k.why, whys: new Map<string, number>() };
        e.results++;
        e.whys.set(k.why, (e.whys.get(k.why) ?? 0) + 1);
        m.set(k.tool, e);
      }
    // the reason most of them share
    return new Map([...m].map(([tool, e]) => [tool, { results: e.results, why: [...e.whys].sort((a, b) => b[1] - a[1])[0]![0] }]));
  }

  abstract dryRun(config: SpillwayConfig, signal?: AbortSignal): Promise<TurnSummary[]>;
}

/**
 * Why a result went whole, as the engine decided it: its reason when the engine kept it whole though
 * over its cap, `under its cap` when the engine listed the turn's results over their cap and this is
 * not one of them, undefined when the source does not know.
 */
function wholeWhy(kept: readonly KeptWholeRecord[] | undefined, callId: string): WholeResult['why'] {
  if (!kept) return undefined;
  const k = kept.find((x) => x.callId === callId);
  return k ? { over: true, reason: k.reason } : { over: false, reason: 'under its cap' };
}

/** Results kept with their text when sent whole and no request is kept to read them from. */
const MAX_KEPT_WHOLE_CHARS = 64 * 1024;

/**
 * The results of a request that are new (their call id not in `seen`, which this adds them to),
 * each with its size; the text of a result sent whole is kept when `keepText` and it is short.
 */
export function newResults(
  text: string,
  format: WireFormat,
  seen: Set<string>,
  reduced: ReadonlySet<string>,
  keepText: boolean,
): OwnResultRecord[] {
  const req = readRequest(text, format);
  const out: OwnResultRecord[] = [];
  for (const r of req.results) {
    if (seen.has(r.callId)) continue;
    seen.add(r.callId);
    const t = resultText(req, r);
    out.push({
      callId: r.callId,
      tool: r.tool,
      chars: t.length,
      ...(keepText && !reduced.has(r.callId) && t.length <= MAX_KEPT_WHOLE_CHARS ? { text: t } : {}),
    });
  }
  return out;
}

/** A session's totals for its SessionInfo (the session list and the status bar). */
export function infoTotals(turns: readonly TurnSummary[]): NonNullable<SessionInfo['totals']> {
  const t = totalsOfTurns(turns);
  return {
    originalTokens: t.originalTokens,
    projectedTokens: t.projectedTokens,
    ...(t.cost
      ? {
          cost: Object.fromEntries(
            Object.entries(t.cost).map(([k, v]) => [
              k,
              { raw: v.raw, projected: v.projected, ...(v.readBack !== undefined ? { readBack: v.readBack } : {}) },
            ]),
          ),
        }
      : {}),
  };
}
