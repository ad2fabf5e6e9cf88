/**
 * Proxy recordings as inspector sessions. The proxy appends one JSON line per model call to
 * `<dir>/<session>.jsonl` and keeps the request bodies (as sent and as forwarded) by handle in
 * `<dir>/bodies/` (see src/proxy/recording.ts). This adapter only reads those files: it lists them,
 * turns their lines into turn summaries, and watches the folder so new turns appear as they are
 * recorded.
 */
import * as fs from 'node:fs';
import { createEngine, handleFor, readRequest, resultText, type SpillwayConfig } from '../../engine';
import { listSessions, readBody, readSession, type Turn } from '../../proxy/recording';
import { replayAsync } from '../../replay/replay';
import { apiTranscript } from '../../replay/readers/api';
import { callSources, type CallSource } from '../../engine/names';
import { sessionTitle } from '../pure/sessionTitle';
import { modelFields } from './prices';
import type { SessionInfo, TurnSummary } from '../../protocol';
import {
  costOf,
  decisionKeyOf,
  freshFigures,
  infoTotals,
  Listeners,
  markersOf,
  newResults,
  RecordSession,
  toolsOf,
  TurnMarkers,
  type InspectorContext,
  type InspectorSession,
  type OwnResultRecord,
  type SessionChange,
  type SessionSource,
  type TurnRecord,
} from './session';

/** File events are coalesced over this long: an agent call writes its body files and its line together. */
const WATCH_DEBOUNCE_MS = 150;

/** Why a recorded call failed, in the upstream's words: unreachable, broken off, or an error status with its message. */
function failure(t: Turn): string | undefined {
  if (t.error) return t.status ? `HTTP ${t.status}: ${t.error}` : t.error;
  if (t.status >= 400) return `HTTP ${t.status}${t.upstreamMessage ? `: ${t.upstreamMessage}` : ''}`;
  return undefined;
}

export function proxyRecord(t: Turn, index: number): TurnRecord {
  const original = t.originalTokens ?? 0;
  const summary: TurnSummary = {
    index,
    originalTokens: original,
    projectedTokens: t.projectedTokens ?? original,
    // recordings do not keep the previous projection's shape; the provider says whether its cache hit
    cacheStable: (t.usage?.cachedTokens ?? 0) > 0,
    ...(t.usage?.cachedTokens !== undefined ? { cachedPrefixTokens: t.usage.cachedTokens } : {}),
    ...(t.stats ? { toolResults: t.stats.toolResults } : {}),
    reductions: t.reductions.length,
    tools: toolsOf(t.reductions.filter((r) => r.fresh)),
    missed: 0,
    time: t.time,
    ...(t.model ? { model: t.model } : {}),
    ...(t.failOpen
      ? { note: t.failOpen }
      : t.observed
        ? { note: 'observed: sent upstream unchanged; the projection is what Spillway would have sent' }
        : {}),
    ...(failure(t) ? { error: failure(t) } : {}),
    // the provider's own cached tokens price both sides: the raw history would have shared that prefix too
    cost: costOf(original, t.usage?.cachedTokens ?? 0, t.projectedTokens ?? original, t.usage?.cachedTokens ?? 0),
    ...(t.usage?.cachedTokens !== undefined ? { providerCachedTokens: t.usage.cachedTokens } : {}),
    ...freshFigures(t.reductions, t.inputs),
  };
  return {
    summary,
    reductions: t.reductions,
    missed: [],
    ...(t.stats?.savedByAgent ? { savedByAgent: t.stats.savedByAgent } : {}),
    ...(t.stats?.truncatedByAgent ? { truncatedByAgent: t.stats.truncatedByAgent } : {}),
    ...(t.inputs?.length ? { inputs: t.inputs } : {}),
    ...(t.held?.length ? { held: t.held } : {}),
  };
}

export class ProxySession extends RecordSession {
  info: SessionInfo;
  private raw: Turn[] = [];
  /** the session's title, and the first turn's time it was made from (a rewritten file is titled again) */
  private title: string | undefined;
  private titled: string | undefined;
  /** turns measured by `measureObserved` (its figures stand until a turn is added) */
  private measured = 0;

  constructor(
    ctx: InspectorContext,
    readonly dir: string,
    readonly file: string,
    readonly name: string,
    readonly origin: 'proxy' | 'copilot' = 'proxy',
  ) {
    super(ctx);
    this.info = { id: `${origin}:${name}`, origin, title: name, detail: file, turns: 0, modified: new Date(0).toISOString(), live: true };
    this.reload();
  }

  /** Re-reads the file; returns the turns added since the last read. */
  reload(): TurnSummary[] {
    let turns: Turn[];
    try {
      turns = readSession(this.file);
    } catch {
      return [];
    }
    const before = this.raw.length;
    this.raw = turns;
    this.measured = 0;
    this.ownCache.clear();
    this.records = turns.map(proxyRecord);
    const last = turns[turns.length - 1];
    const models = [...new Set(turns.map((t) => t.model).filter(Boolean))].join(', ');
    const first = turns[0];
    if (first && this.titled !== first.time) {
      this.titled = first.time;
      let body: string | undefined;
      try {
        body = first.requestRef ? readBody(this.dir, first.requestRef) : undefined;
      } catch {
        /* pruned: the title goes without the folder */
      }
      this.title = sessionTitle({ origin: this.origin, userAgent: first.headers?.['user-agent'], firstBody: body, start: first.time });
    }
    let bytes = 0;
    try {
      bytes = fs.statSync(this.file).size;
    } catch {
      /* removed */
    }
    this.info = {
      ...this.info,
      turns: turns.length,
      modified: last?.time ?? this.info.modified,
      bytes,
      title: this.title ?? this.name,
      ...modelFields(turns.find((t) => t.model)?.model),
      totals: infoTotals(this.records.map((r) => r.summary)),
      // observe mode: what went upstream was the original; the figures are what would have been sent
      ...(turns.length && turns.every((t) => t.observed) ? { observed: true } : {}),
      detail: `${this.origin === 'copilot' ? 'Copilot chat' : 'proxy recording'} ${this.name}${models ? ` · ${models}` : ''} · ${this.file}`,
    };
    return turns.length > before ? this.records.slice(before).map((r) => r.summary) : [];
  }

  /**
   * An observed session's cost under caching, read-backs and misses, measured the way `spillway
   * replay` measures a transcript: the newest recorded request holds the whole conversation, so it
   * is replayed call by call with the current settings (asynchronously, yielding to the editor).
   * The recorded turns are the replay's last calls (the proxy may have started mid-conversation),
   * and their figures replace the recording's estimates; when the replay has fewer calls than turns
   * (the agent sent calls of another shape) the estimates stay and the log says why.
   */
  async measureObserved(): Promise<void> {
    if (!this.info.observed || this.measured === this.raw.length) return;
    const last = [...this.raw].reverse().find((t) => t.requestRef);
    if (!last?.requestRef) return;
    const turns = this.raw.length;
    try {
      const doc = JSON.parse(readBody(this.dir, last.requestRef)) as unknown;
      const r = await replayAsync(apiTranscript(doc, this.file, last.format), { config: this.ctx.config() });
      const offset = r.calls.length - turns;
      if (offset < 0 || this.raw.length !== turns) {
        this.ctx.log?.(
          `inspector: observed session ${this.name}: the replay has ${r.calls.length} calls for ${turns} recorded turns; showing the recording's estimates`,
        );
        return;
      }
      this.records = this.records.map((rec, i) => {
        const c = r.calls[offset + i]!;
        return {
          ...rec,
          summary: {
            ...rec.summary,
            cost: c.cost,
            missed: c.missedIds,
            cachedPrefixTokens: c.cachedPrefixTokens,
            cacheStable: c.cacheStable,
          },
          // a miss's `since` counts the replay's calls: the recording's turns start `offset` calls later
          missed: c.missed.map(({ since, ...m }) => (since !== undefined && since >= offset ? { ...m, since: since - offset } : m)),
        };
      });
      this.info = { ...this.info, totals: infoTotals(this.records.map((x) => x.summary)) };
      this.measured = turns;
    } catch (e) {
      this.ctx.log?.(`inspector: could not measure observed session ${this.name}: ${(e as Error).message}`);
    }
  }

  private readonly ownCache = new Map<number, OwnResultRecord[]>();

  /** The turn's own results: those of its recorded request whose call ids the previous request did not have. */
  protected override ownResults(turn: number): readonly OwnResultRecord[] | undefined {
    const hit = this.ownCache.get(turn);
    if (hit) return hit;
    const t = this.raw[turn];
    if (!t?.requestRef) return undefined;
    const seen = new Set<string>();
    const prev = this.raw[turn - 1];
    if (prev?.requestRef) {
      try {
        for (const r of readRequest(readBody(this.dir, prev.requestRef), prev.format).results) seen.add(r.callId);
      } catch {
        /* the previous body was pruned: every result counts as this turn's */
      }
    }
    const own = newResults(readBody(this.dir, t.requestRef), t.format, seen, new Set(t.reductions.map((r) => r.callId)), true);
    if (this.ownCache.size > 200) this.ownCache.clear();
    this.ownCache.set(turn, own);
    return own;
  }

  private turnOf(handle: string): Turn | undefined {
    return this.raw.find((t) => t.reductions.some((r) => r.handle === handle) || t.inputs?.some((r) => r.handle === handle));
  }

  protected override original(handle: string): string {
    try {
      return super.original(handle);
    } catch (e) {
      // the proxy may write to another store: take the result from the recorded request instead
      const t = this.turnOf(handle);
      const r = t?.reductions.find((x) => x.handle === handle);
      if (!t?.requestRef || !r) throw e;
      // result positions count observations when the engine recognised them (observations: auto)
      const body = readBody(this.dir, t.requestRef);
      for (const observations of ['auto', 'off'] as const) {
        const req = readRequest(body, t.format, undefined, observations);
        const result = req.results[r.result];
        const text = result && resultText(req, result);
        if (text !== undefined && handleFor(text) === handle) return text;
      }
      throw e;
    }
  }

  private readonly turnMarkers = new TurnMarkers();

  /** The marker turn k sent, from the request the proxy forwarded in that turn. */
  protected override markerAt(turn: number, handle: string, callId: string): string | undefined {
    const t = this.raw[turn];
    if (!t?.projectionRef) return undefined;
    const ref = t.projectionRef;
    return this.turnMarkers
      .get(turn, () => {
        try {
          return markersOf(readBody(this.dir, ref), t.reductions, t.inputs ?? []);
        } catch {
          return new Map(); // the body was pruned
        }
      })
      .get(decisionKeyOf(callId, handle));
  }

  /** The newest marker of a handle (no turn named): the last recorded turn that carries it. */
  protected projected(handle: string): string | undefined {
    for (let i = this.raw.length - 1; i >= 0; i--) {
      const r = [...this.raw[i]!.reductions, ...(this.raw[i]!.inputs ?? [])].find((x) => x.handle === handle);
      if (r) return this.markerAt(i, handle, r.callId);
    }
    return undefined;
  }

  private sources: { turn: number; map: ReadonlyMap<string, CallSource> } | undefined;

  /** What the calls of a recorded request named (the turn's request, when the proxy kept it). */
  protected override sourcesAt(turn: number): ReadonlyMap<string, CallSource> | undefined {
    if (this.sources?.turn === turn) return this.sources.map;
    const ref = this.raw[turn]?.requestRef;
    if (!ref) return undefined;
    this.sources = { turn, map: callSources(readBody(this.dir, ref)) };
    return this.sources.map;
  }

  async dryRun(config: SpillwayConfig, signal?: AbortSignal): Promise<TurnSummary[]> {
    const engine = createEngine(config, { store: { put: () => undefined, locate: () => undefined } });
    const out: TurnSummary[] = [];
    for (let i = 0; i < this.raw.length; i++) {
      if (signal?.aborted) throw new Error('dry run cancelled');
      const t = this.raw[i]!;
      const rec = this.records[i]!;
      if (!t.requestRef) {
        out.push(rec.summary);
        continue;
      }
      try {
        const p = engine.project(readBody(this.dir, t.requestRef), t.format, { session: 'dry-run' });
        out.push({
          ...rec.summary,
          originalTokens: p.stats.originalTokens,
          projectedTokens: p.stats.projectedTokens,
          reductions: p.reductions.length,
          tools: toolsOf(p.reductions.filter((r) => r.fresh)),
        });
      } catch {
        out.push(rec.summary);
      }
      if (i % 50 === 49) await new Promise((r) => setImmediate(r));
    }
    return out;
  }
}

export class ProxySource implements SessionSource {
  private readonly sessions = new Map<string, ProxySession>();
  private readonly listeners = new Listeners<SessionChange>();
  private watcher: fs.FSWatcher | undefined;
  private watchedDir = '';
  private timer: ReturnType<typeof setTimeout> | undefined;
  private poll: ReturnType<typeof setInterval> | undefined;

  /** `dir()` is read on every listing, so a changed setting moves the source to the new folder. */
  /** `origin` 'copilot': the same recordings, made by the chat provider (src/extension/chat/sessions.ts). */
  constructor(
    private readonly ctx: InspectorContext,
    private readonly dir: () => string,
    pollMs = 2_000,
    readonly origin: 'proxy' | 'copilot' = 'proxy',
  ) {
    // fs.watch misses events on some file systems (network drives, containers): a slow poll backs it up
    this.poll = setInterval(() => this.refresh(), pollMs);
    this.poll.unref?.();
  }

  private ensureWatch(): void {
    const dir = this.dir();
    if (dir === this.watchedDir && this.watcher) return;
    this.watcher?.close();
    this.watcher = undefined;
    this.watchedDir = dir;
    try {
      this.watcher = fs.watch(dir, () => {
        if (this.timer) clearTimeout(this.timer);
        this.timer = setTimeout(() => this.refresh(), WATCH_DEBOUNCE_MS);
      });
      this.watcher.on('error', () => {
        this.watcher?.close();
        this.watcher = undefined;
      });
    } catch {
      /* no folder yet: the poll notices when it appears */
    }
  }

  /** Reads what changed: new sessions, and new turns of the sessions already open. */
  refresh(): void {
    this.ensureWatch();
    const files = listSessions(this.dir());
    let listChanged = false;
    for (const f of files) {
      const id = `${this.origin}:${f.session}`;
      const s = this.sessions.get(id);
      if (!s) {
        this.sessions.set(id, new ProxySession(this.ctx, this.dir(), f.file, f.session, this.origin));
        listChanged = true;
        continue;
      }
      if (s.info.bytes === f.bytes) continue;
      const appended = s.reload();
      listChanged = true;
      if (appended.length) this.listeners.fire({ sessionId: id, appended });
    }
    for (const id of [...this.sessions.keys()]) {
      if (!files.some((f) => `${this.origin}:${f.session}` === id)) {
        this.sessions.delete(id);
        listChanged = true;
      }
    }
    if (listChanged) this.listeners.fire({});
  }

  list(): SessionInfo[] {
    if (this.sessions.size === 0 || this.watchedDir !== this.dir()) {
      if (this.watchedDir !== this.dir()) this.sessions.clear();
      this.refresh();
    }
    return [...this.sessions.values()].map((s) => s.info);
  }

  async open(id: string): Promise<InspectorSession | undefined> {
    if (!this.sessions.has(id)) this.refresh();
    const s = this.sessions.get(id);
    await s?.measureObserved();
    return s;
  }

  onDidChange(listener: (e: SessionChange) => void): () => void {
    return this.listeners.add(listener);
  }

  dispose(): void {
    this.watcher?.close();
    if (this.timer) clearTimeout(this.timer);
    if (this.poll) clearInterval(this.poll);
    this.listeners.clear();
  }
}
