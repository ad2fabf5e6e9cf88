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
  readRequest,
  resultText,
  type InputReduction,
  type Reduction,
  type SavedByAgent,
  type SpillwayConfig,
  type WireFormat,
} from '../../engine';
import type { RecordedReduction } from '../pure/records';
import type { OutputStore } from '../../store/entry';
import type { Cost, InputInfo, Origin, ResultInfo, SessionInfo, Side, TextPage, TurnDetail, TurnSummary } from '../../protocol';
import { callCost, PRICE_MODELS } from '../../replay/metrics';
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
  since?: number;
}

export interface TurnRecord {
  summary: TurnSummary;
  reductions: readonly Reduction[];
  /** what hid each (cause, tool, the turn of the reduction) when the replay knows it */
  missed: readonly MissedRecord[];
  /** read-backs the misses would have cost the agent (replays) */
  readBacks?: number;
  /** results the agent had reduced itself (Claude Code's `<persisted-output>`) */
  savedByAgent?: readonly SavedByAgent[];
  /** the turn's own new results, when known */
  own?: readonly OwnResultRecord[];
  /** tool call inputs replaced by a marker in the turn's projection (absent in records made before they were kept) */
  inputs?: readonly InputReduction[];
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
 * What a turn decided: results cleared, outputs turned into a preview with a handle, file inputs
 * replaced by a marker, and the tokens all of these save (`freshSaved`: what this turn's own
 * decisions removed, whichever kind they are). Carried-over decisions count in the turn that made them.
 */
export function freshFigures(
  reductions: readonly Reduction[],
  inputs: readonly InputReduction[] = [],
): { clears: number; previews: number; inputs: number; freshSaved: number } {
  let clears = 0;
  let previews = 0;
  let fresh = 0;
  let freshSaved = 0;
  for (const r of reductions) {
    if (!r.fresh) continue;
    if (r.stage === 'clear') clears++;
    else previews++;
    freshSaved += Math.max(0, r.originalTokens - r.projectedTokens);
  }
  for (const i of inputs) {
    if (!i.fresh) continue;
    fresh++;
    freshSaved += Math.max(0, i.originalTokens - i.projectedTokens);
  }
  return { clears, previews, inputs: fresh, freshSaved };
}

export interface InspectorSession {
  readonly info: SessionInfo;
  turns(): TurnSummary[];
  detail(turn: number): TurnDetail;
  /** one page of the original output or of the text the model was sent in its place */
  text(handle: string, side: Side, offset: number, limit: number): TextPage;
  /** the session's turns re-projected under `config`, without saving anything */
  dryRun(config: SpillwayConfig, signal?: AbortSignal): Promise<TurnSummary[]>;
  /** turn indexes whose own results contain `query` (in tool, call id, original or projected text) */
  search(query: string, limit: number): { turns: number[]; truncated: boolean };
  /** one page of a result of `turn` that was sent whole */
  resultPage(turn: number, callId: string, offset: number, limit: number): TextPage;
  /** tool → turns in which a result of that tool was reduced */
  tools(): Map<string, number>;
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
  /** the marker text the model was sent for a handle, when the host recorded it */
  projectedText?(handle: string): string | undefined;
  /** keeps what a replayed call's reductions sent, so their stored outputs open titled by their source */
  recordProjection?(request: unknown, projected: unknown, reductions: readonly RecordedReduction[]): void;
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

/** What the webview is told of a file input (and, with its stage, of a reduced result): the fields it shows, no positions. */
function inputInfo(r: InputReduction | Reduction): InputInfo {
  return {
    tool: r.tool,
    callId: r.callId,
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
  return { ...inputInfo(r), stage: r.stage };
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

/**
 * Common behaviour of sessions that hold their turns as records: detail, search, tools and the
 * original side of texts (from the store). Subclasses supply the projected side and the dry run.
 */
export abstract class RecordSession implements InspectorSession {
  protected records: TurnRecord[] = [];
  protected readonly texts = new TextCache();
  abstract readonly info: SessionInfo;

  constructor(protected readonly ctx: InspectorContext) {}

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
    const d: TurnDetail = {
      index: turn,
      results: r.reductions.map(resultInfo),
      missed: r.missed.map((m) => ({
        id: m.id,
        ...(m.handle ? { handle: m.handle } : {}),
        ...(m.cause ? { cause: m.cause } : {}),
        ...(m.tool ? { tool: m.tool } : {}),
        ...(m.since !== undefined ? { since: m.since } : {}),
      })),
      ...(r.readBacks !== undefined ? { readBacks: r.readBacks } : {}),
      ...(saved.length ? { savedByAgent: saved } : {}),
      ...(r.inputs?.length ? { inputs: r.inputs.map(inputInfo) } : {}),
    };
    let own: readonly OwnResultRecord[] | undefined;
    try {
      own = this.ownResults(turn);
    } catch (e) {
      this.ctx.log?.(`inspector: the results of turn ${turn} of ${this.info.id} could not be read: ${String(e)}`);
    }
    if (!own) return { ...d, wholeUnavailable: 'the request of this turn was not kept, so the results sent whole cannot be listed' };
    const reduced = new Set(r.reductions.map((x) => x.callId));
    return {
      ...d,
      whole: own
        .filter((o) => !reduced.has(o.callId))
        .map((o) => ({ tool: o.tool, callId: o.callId, chars: o.chars, ...(o.tokens !== undefined ? { tokens: o.tokens } : {}) })),
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

  text(handle: string, side: Side, offset: number, limit: number): TextPage {
    try {
      if (side === 'original')
        return page(
          this.texts.get(`o:${handle}`, () => this.original(handle)),
          offset,
          limit,
        );
      const marker = this.ctx.projectedText?.(handle) ?? this.projected(handle);
      if (marker === undefined) return unavailable(`the projected text of ${handle} was not recorded`);
      return page(marker, offset, limit);
    } catch (e) {
      return unavailable(e instanceof Error ? e.message : String(e));
    }
  }

  search(query: string, limit: number): { turns: number[]; truncated: boolean } {
    const q = query.toLowerCase();
    const hitByHandle = new Map<string, boolean>();
    const inOriginal = (handle: string): boolean => {
      let h = hitByHandle.get(handle);
      if (h === undefined) {
        try {
          h = this.original(handle).toLowerCase().includes(q);
        } catch {
          h = false;
        }
        if (!h) {
          // what the model was sent: the marker (header and preview) that replaced the result
          const marker = this.ctx.projectedText?.(handle);
          h = marker !== undefined && marker.toLowerCase().includes(q);
        }
        hitByHandle.set(handle, h);
      }
      return h;
    };
    // a reduction or file input this turn decided, matched by its tool, call id, handle or text
    const decidedHere = (r: { fresh: boolean; tool: string; callId: string; handle: string }): boolean =>
      r.fresh && (r.tool.toLowerCase().includes(q) || r.callId.toLowerCase().includes(q) || r.handle.includes(q) || inOriginal(r.handle));
    const turns: number[] = [];
    for (let i = 0; i < this.records.length; i++) {
      const rec = this.records[i]!;
      let own: readonly OwnResultRecord[] | undefined;
      try {
        own = this.ownResults(i);
      } catch {
        own = undefined;
      }
      let hit: boolean;
      if (own) {
        // the turn's own results only: a result carried from an earlier turn matches there, not here
        hit = own.some((o) => {
          if (o.tool.toLowerCase().includes(q) || o.callId.toLowerCase().includes(q)) return true;
          const r = rec.reductions.find((x) => x.callId === o.callId);
          if (r) return r.handle.includes(q) || inOriginal(r.handle);
          const text = this.ownText(i, o);
          return text !== undefined && text.toLowerCase().includes(q);
        });
        // a clear decided in this turn is this turn's doing too
        hit ||= rec.reductions.some(
          (r) => r.fresh && r.stage === 'clear' && (r.tool.toLowerCase().includes(q) || r.callId.toLowerCase().includes(q)),
        );
      } else {
        hit = rec.reductions.some(decidedHere);
      }
      // a file input this turn replaced: the call is the turn's (its tool, call id, what the agent wrote)
      hit ||= (rec.inputs ?? []).some(decidedHere);
      if (hit) {
        if (turns.length >= limit) return { turns, truncated: true };
        turns.push(i);
      }
    }
    return { turns, truncated: false };
  }

  tools(): Map<string, number> {
    const m = new Map<string, number>();
    for (const r of this.records) for (const t of r.summary.tools) m.set(t, (m.get(t) ?? 0) + 1);
    return m;
  }

  abstract dryRun(config: SpillwayConfig, signal?: AbortSignal): Promise<TurnSummary[]>;
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
