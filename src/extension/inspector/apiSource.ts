/**
 * Sessions made through the extension API: every `api.project(request, format, { session })` call
 * becomes a turn of that session, live, as the call is made. The host tells this source about each
 * projection (SpillwayHost.onDidProject); calls without a session are grouped under "api".
 *
 * Any origin that projects live (the API, the chat model provider) can use this source with its own
 * `origin`; with an archive, its sessions are kept on disk turn by turn and come back after a reload.
 */
import { createEngine, type Projection, type SpillwayConfig, type WireFormat } from '../../engine';
import type { Origin, SessionInfo, TurnSummary } from '../../protocol';
import type { SessionArchive } from './archive';
import { callSources, type CallSource } from '../../engine/names';
import {
  costOf,
  freshFigures,
  infoTotals,
  keptMarkers,
  Listeners,
  newResults,
  RecordSession,
  toolsOf,
  type InspectorContext,
  type InspectorSession,
  type SessionChange,
  type SessionSource,
  type TurnRecord,
} from './session';

/** Requests kept per session for dry runs; older turns keep their figures but are not re-projected. */
const MAX_KEPT_REQUESTS = 2_000;
/** Sessions kept in memory; the least recently used beyond this are forgotten. */
const MAX_SESSIONS = 50;

interface Call {
  text?: string;
  format: WireFormat;
  items?: string[];
}

/** Tokens of the prefix two item lists share, estimated from the characters of the shared items. */
function sharedTokens(prev: string[] | undefined, cur: string[] | undefined, tokens: number): number {
  if (!prev || !cur) return 0;
  let i = 0;
  let shared = 0;
  let all = 0;
  for (const x of cur) all += x.length;
  while (i < prev.length && i < cur.length && prev[i] === cur[i]) shared += cur[i++]!.length;
  return all > 0 ? Math.round((shared / all) * tokens) : 0;
}

function itemsOf(projected: string): string[] | undefined {
  try {
    const v = JSON.parse(projected) as { messages?: unknown[]; input?: unknown[]; contents?: unknown[] };
    const list = Array.isArray(v.messages)
      ? v.messages
      : Array.isArray(v.input)
        ? v.input
        : Array.isArray(v.contents)
          ? v.contents
          : undefined;
    return list?.map((x) => JSON.stringify(x));
  } catch {
    return undefined;
  }
}

const ORIGIN_LABEL: Record<string, string> = { api: 'extension API session' };

export class ApiSession extends RecordSession {
  info: SessionInfo;
  private readonly calls: Call[] = [];
  private readonly seen = new Set<string>();
  private prevOriginalItems: string[] | undefined;

  constructor(
    ctx: InspectorContext,
    readonly name: string,
    readonly origin: Origin = 'api',
    kept?: { turns: TurnRecord[]; modified: string; detail: string },
  ) {
    super(ctx);
    const label = ORIGIN_LABEL[origin] ?? `${origin} session`;
    this.info = {
      id: `${origin}:${name}`,
      origin,
      title: name,
      detail: kept?.detail ?? label,
      turns: 0,
      modified: kept?.modified ?? new Date().toISOString(),
      live: true,
    };
    if (kept) {
      this.records = kept.turns;
      for (const t of kept.turns) for (const o of t.own ?? []) this.seen.add(o.callId);
      this.info = { ...this.info, turns: kept.turns.length, totals: infoTotals(this.turns()) };
    }
  }

  add(request: string | object, result: Projection): TurnRecord {
    const text = typeof request === 'string' ? request : JSON.stringify(request);
    const projectedText = typeof result.request === 'string' ? result.request : JSON.stringify(result.request);
    const items = itemsOf(projectedText);
    const originalItems = itemsOf(text);
    const prev = this.calls[this.calls.length - 1];
    // cache-stable: the previous projection's items are a prefix of this one's
    const stable = !!prev?.items && !!items && prev.items.length <= items.length && prev.items.every((x, i) => items[i] === x);
    const cached = sharedTokens(prev?.items, items, result.stats.projectedTokens);
    const rawCached = sharedTokens(this.prevOriginalItems, originalItems, result.stats.originalTokens);
    this.prevOriginalItems = originalItems;
    let own: TurnRecord['own'];
    try {
      own = newResults(text, result.stats.format, this.seen, new Set(result.reductions.map((r) => r.callId)), true);
    } catch {
      own = undefined;
    }
    this.calls.push({ text, format: result.stats.format, ...(items ? { items } : {}) });
    const drop = this.calls.length - MAX_KEPT_REQUESTS - 1;
    if (drop >= 0) {
      delete this.calls[drop]!.text;
      delete this.calls[drop]!.items;
    }
    const summary: TurnSummary = {
      index: this.records.length,
      originalTokens: result.stats.originalTokens,
      projectedTokens: result.stats.projectedTokens,
      cacheStable: stable,
      toolResults: result.stats.toolResults,
      reductions: result.reductions.length,
      tools: toolsOf(result.reductions.filter((r) => r.fresh)),
      missed: 0,
      time: new Date().toISOString(),
      ...(this.records.length > 0 ? { cachedPrefixTokens: cached } : {}),
      cost: costOf(result.stats.originalTokens, rawCached, result.stats.projectedTokens, cached),
      ...freshFigures(result.reductions, result.inputs),
    };
    // the markers this turn's decisions sent, each once (no request is kept for them)
    const markers = keptMarkers(projectedText, result.reductions, result.inputs);
    const record: TurnRecord = {
      summary,
      reductions: result.reductions,
      missed: [],
      ...(markers.length ? { markers } : {}),
      ...(own ? { own } : {}),
      ...(result.inputs.length ? { inputs: result.inputs } : {}),
      ...(result.stats.savedByAgent ? { savedByAgent: result.stats.savedByAgent } : {}),
      ...(result.stats.truncatedByAgent ? { truncatedByAgent: result.stats.truncatedByAgent } : {}),
      ...(result.held?.length ? { held: result.held } : {}),
    };
    this.records.push(record);
    this.info = {
      ...this.info,
      turns: this.records.length,
      totals: infoTotals(this.turns()),
      modified: summary.time!,
      detail: `${ORIGIN_LABEL[this.origin] ?? `${this.origin} session`} · ${result.stats.format}`,
    };
    return record;
  }

  protected projected(): string | undefined {
    return undefined; // the host's projected records answer first (InspectorContext.projectedText)
  }

  private sources: { turn: number; map: ReadonlyMap<string, CallSource> } | undefined;

  /** What the calls of a kept request named (older turns' requests are dropped: undefined). */
  protected override sourcesAt(turn: number): ReadonlyMap<string, CallSource> | undefined {
    if (this.sources?.turn === turn) return this.sources.map;
    const text = this.calls[turn]?.text;
    if (text === undefined) return undefined;
    this.sources = { turn, map: callSources(text) };
    return this.sources.map;
  }

  async dryRun(config: SpillwayConfig, signal?: AbortSignal): Promise<TurnSummary[]> {
    const engine = createEngine(config, { store: { put: () => undefined, locate: () => undefined } });
    const out: TurnSummary[] = [];
    for (let i = 0; i < this.records.length; i++) {
      if (signal?.aborted) throw new Error('dry run cancelled');
      const c = this.calls[i];
      const rec = this.records[i]!;
      if (!c?.text) {
        out.push(rec.summary);
        continue;
      }
      const p = engine.project(c.text, c.format, { session: 'dry-run' });
      out.push({
        ...rec.summary,
        originalTokens: p.stats.originalTokens,
        projectedTokens: p.stats.projectedTokens,
        reductions: p.reductions.length,
        tools: toolsOf(p.reductions.filter((r) => r.fresh)),
      });
      if (i % 50 === 49) await new Promise((r) => setImmediate(r));
    }
    return out;
  }
}

export class ApiSource implements SessionSource {
  private readonly sessions = new Map<string, ApiSession>();
  private readonly listeners = new Listeners<SessionChange>();
  private loaded = false;

  constructor(
    private readonly ctx: InspectorContext,
    private readonly archive?: SessionArchive,
    readonly origin: Origin = 'api',
  ) {}

  /** The sessions kept on disk by an earlier window, read once on first use. */
  private load(): void {
    if (this.loaded || !this.archive) return;
    this.loaded = true;
    for (const a of this.archive.read(this.origin)) {
      const id = `${this.origin}:${a.header.name}`;
      if (this.sessions.has(id)) continue;
      this.sessions.set(
        id,
        new ApiSession(this.ctx, a.header.name, this.origin, {
          turns: a.turns.map((t) => ({
            summary: t.summary,
            reductions: t.reductions,
            missed: t.missed,
            ...(t.own ? { own: t.own } : {}),
            ...(t.inputs ? { inputs: t.inputs } : {}),
            ...(t.markers ? { markers: t.markers } : {}),
            ...(t.held ? { held: t.held } : {}),
          })),
          modified: a.modified,
          detail: a.header.detail,
        }),
      );
    }
  }

  /** Called by the host after each projection of this origin. */
  record(session: string | undefined, request: string | object, result: Projection): void {
    this.load();
    const name = session ?? this.origin;
    const id = `${this.origin}:${name}`;
    let s = this.sessions.get(id);
    const isNew = !s;
    if (!s) {
      s = new ApiSession(this.ctx, name, this.origin);
      this.sessions.set(id, s);
      if (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
      this.archive?.begin({ v: 1, origin: this.origin, name, title: name, detail: s.info.detail, created: new Date().toISOString() });
    }
    const rec = s.add(request, result);
    this.archive?.append(this.origin, name, {
      summary: rec.summary,
      reductions: [...rec.reductions],
      missed: [],
      ...(rec.own ? { own: [...rec.own] } : {}),
      ...(rec.inputs ? { inputs: [...rec.inputs] } : {}),
      ...(rec.markers ? { markers: [...rec.markers] } : {}),
      ...(rec.held ? { held: [...rec.held] } : {}),
    });
    this.listeners.fire({ sessionId: id, appended: [rec.summary] });
    if (isNew) this.listeners.fire({});
  }

  list(): SessionInfo[] {
    this.load();
    return [...this.sessions.values()].map((s) => s.info);
  }

  async open(id: string): Promise<InspectorSession | undefined> {
    this.load();
    return this.sessions.get(id);
  }

  onDidChange(listener: (e: SessionChange) => void): () => void {
    return this.listeners.add(listener);
  }

  dispose(): void {
    this.listeners.clear();
  }
}
