/**
 * Replayed transcripts as inspector sessions: a Claude Code, Codex, SWE-agent or API-format file
 * read from disk and run through the engine call by call (src/replay), so a developer sees what
 * Spillway would have sent before routing a live call through it. Changing a cap re-runs the replay;
 * the calls whose next reply named something the projection had hidden carry the missed strings and
 * the handle of the stored output that holds each.
 */
import { existsSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { createEngine, PROVIDERS, readRequest, resultText, type SpillwayConfig } from '../../engine';
import { replay, type ReplayOptions, type ReplayResult } from '../../replay/replay';
import { preludeDescription } from '../../replay/prelude';
import { sessionName } from '../../replay/session-title';
import { readTranscript, requestForCall, type Transcript } from '../../replay/readers';
import { callSources, type CallSource } from '../../engine/names';
import { measureLimitsAsync, oracleShare } from '../../replay/limits';
import { otherRoutes, replayRoutedAsync, routeOf } from '../../replay/routes';
import { withInputStage } from '../pure/records';
import { modelFields } from './prices';
import type { LimitFigures, RoutedFigures, SessionInfo, SessionLimits, TurnSummary } from '../../protocol';
import type { SessionArchive, ArchivedSession } from './archive';
import {
  costOf,
  decisionKeyOf,
  freshFigures,
  infoTotals,
  keptMarkers,
  Listeners,
  markersOf,
  RecordSession,
  TurnMarkers,
  toolsOf,
  type InspectorContext,
  type InspectorSession,
  type KeptMarker,
  type OwnResultRecord,
  type SessionChange,
  type SessionSource,
  type TurnRecord,
} from './session';

/** What joins a transcript's path and the session inside it to replay (a Copilot CLI sub-agent's `task` call id). */
const INSTANCE_MARK = '#instance=';

/**
 * The key a replay is known by: the transcript's path, with the session inside it to replay when it
 * is not the file's own (`--instance`: a sub-agent Copilot's CLI wrote into the same log).
 */
export function replayKey(path: string, instance?: string): string {
  return instance === undefined ? path : `${path}${INSTANCE_MARK}${encodeURIComponent(instance)}`;
}

/** A replay key's path and instance (replayKey); a path that holds the mark itself stays a path. */
export function transcriptOf(key: string): { path: string; instance?: string } {
  const at = key.lastIndexOf(INSTANCE_MARK);
  if (at < 0 || existsSync(key)) return { path: key };
  return { path: key.slice(0, at), instance: decodeURIComponent(key.slice(at + INSTANCE_MARK.length)) };
}

/** Session names by file, size and time: the list is asked for often, the file is read once (src/replay/session-title.ts). */
const titles = new Map<string, string>();
/** Names kept at most; the oldest go first. */
const MAX_TITLES = 500;

/**
 * A replayed session's name: what it was, its project and its day, else its file name; a session
 * inside another's file (a sub-agent) is named by its instance within that session's name.
 */
function titleOf(replayed: string): string {
  const { path, instance } = transcriptOf(replayed);
  const name = fileTitle(path);
  return instance === undefined ? name : `sub-agent ${instance} of ${name}`;
}

function fileTitle(path: string): string {
  let key: string;
  try {
    const st = statSync(path);
    key = `${path}\0${st.size}\0${st.mtimeMs}`;
  } catch {
    return basename(path);
  }
  let title = titles.get(key);
  if (title === undefined) {
    title = sessionName(path);
    if (titles.size >= MAX_TITLES) titles.delete(titles.keys().next().value!);
    titles.set(key, title);
  }
  return title;
}

/** Per call (0-based), the markers its own decisions sent; a call that decided nothing has none. */
export type ReplayMarkers = readonly (readonly KeptMarker[] | undefined)[];

/**
 * Collects, per call, the markers its own decisions sent, read from the projection the replay made
 * for that call: under settings where a decision depends on the calls before it (a clear's payback, a
 * read kept whole while in use), projecting one call again alone can decide otherwise, so a turn's
 * markers are kept as the session sent them. `then` is called on each projection too.
 */
export function collectMarkers(then?: ReplayOptions['onProjection']): {
  onProjection: NonNullable<ReplayOptions['onProjection']>;
  markers: KeptMarker[][];
} {
  const markers: KeptMarker[][] = [];
  return {
    markers,
    onProjection: (i, p) => {
      then?.(i, p);
      const { reductions, inputs } = p.projection;
      if (reductions.some((r) => r.fresh) || inputs.some((r) => r.fresh))
        markers[i] = keptMarkers(JSON.parse(p.projection.request) as unknown, reductions, inputs);
    },
  };
}

export function replayRecords(result: ReplayResult, markers: ReplayMarkers = []): TurnRecord[] {
  return result.calls.map((c, i) => {
    const list = c.reductionList ?? [];
    const inputs = c.inputList ?? [];
    const summary: TurnSummary = {
      index: c.index,
      originalTokens: c.originalTokens,
      projectedTokens: c.projectedTokens,
      cacheStable: c.cacheStable,
      cachedPrefixTokens: c.cachedPrefixTokens,
      reductions: c.reductions,
      tools: toolsOf(list.filter((r) => r.fresh)),
      missed: c.missedIds,
      // replay's own per-call cost (with read-backs) is used as soon as it reports one
      cost: costOf(c.originalTokens, c.rawCachedPrefixTokens, c.projectedTokens, c.cachedPrefixTokens, (c as { cost?: unknown }).cost),
      ...freshFigures(list, inputs),
    };
    const kept = markers[i];
    return {
      summary,
      reductions: list,
      missed: c.missed,
      readBacks: c.readBacks.length,
      ...(inputs.length ? { inputs } : {}),
      ...(kept?.length ? { markers: kept } : {}),
      // the engine said why each of the call's new results over its cap went whole (absent: it was not asked)
      ...(c.reductionList
        ? { keptWhole: (c.keptWholeList ?? []).map(({ callId, tool, reason, why }) => ({ callId, tool, reason, why })) }
        : {}),
      ...(c.truncatedList?.length ? { truncatedByAgent: c.truncatedList } : {}),
      ...(c.savedList?.length ? { savedByAgent: c.savedList } : {}),
      ...(c.heldList ? { held: c.heldList } : {}),
    };
  });
}

/** Each call's own new results in a transcript: one parse of the whole item list, each result placed in the first call that carries it. */
function ownByCall(transcript: Transcript): OwnResultRecord[][] {
  const calls = transcript.calls;
  const out: OwnResultRecord[][] = calls.map(() => []);
  if (calls.length === 0) return out;
  const text = JSON.stringify(requestForCall(transcript, calls.length - 1));
  const req = readRequest(text, transcript.wire);
  let k = 0;
  for (const r of req.results) {
    while (k < calls.length && calls[k]!.end <= r.item) k++;
    if (k >= calls.length) break;
    out[k]!.push({ callId: r.callId, tool: r.tool, chars: resultText(req, r).length, text: resultText(req, r) });
  }
  return out;
}

/** The model the transcript's agent called, when the reader found one. */
function modelOf(transcript: Transcript): Pick<SessionInfo, 'model' | 'costModel'> {
  const m = transcript.base['model'];
  return modelFields(typeof m === 'string' ? m : undefined);
}

/**
 * The other providers a replayed session can be replayed as sent to (`routed`): those the engine holds
 * prices for. None when its own provider is not known: the engine then holds every one at once.
 */
function routesOf(transcript: Transcript): Pick<SessionInfo, 'routes'> {
  const routes = otherRoutes(routeOf(transcript), PROVIDERS);
  return routes.length ? { routes } : {};
}

export class ReplaySession extends RecordSession {
  info: SessionInfo;
  /** per turn projected again, its markers by (call, handle); a few turns */
  private readonly projectedTurns = new TurnMarkers();

  constructor(
    ctx: InspectorContext,
    readonly id: string,
    readonly path: string,
    readonly transcript: Transcript,
    result: ReplayResult | { records: TurnRecord[]; detail: string },
    readonly bytes: number,
    readonly modified: string,
    /** the markers each call sent (collectMarkers), with a fresh replay; without, a turn's are found by projecting it again */
    markers: ReplayMarkers = [],
  ) {
    super(ctx);
    if ('records' in result) {
      this.records = result.records;
      this.info = {
        id,
        origin: 'replay',
        title: titleOf(path),
        detail: result.detail,
        turns: result.records.length,
        modified,
        bytes,
        live: false,
        ...modelOf(transcript),
        ...routesOf(transcript),
        totals: infoTotals(this.records.map((r) => r.summary)),
      };
    } else {
      this.records = replayRecords(result, markers);
      this.info = this.makeInfo(result);
    }
  }

  private own: OwnResultRecord[][] | undefined;

  protected override ownResults(turn: number): readonly OwnResultRecord[] | undefined {
    this.own ??= ownByCall(this.transcript);
    return this.own[turn];
  }

  private makeInfo(result: ReplayResult): SessionInfo {
    return {
      id: this.id,
      origin: 'replay',
      title: titleOf(this.path),
      detail: replayDetail(result, this.path),
      turns: result.totals.calls,
      modified: this.modified,
      bytes: this.bytes,
      live: false,
      ...modelOf(this.transcript),
      ...routesOf(this.transcript),
      totals: infoTotals(replayRecords(result).map((r) => r.summary)),
    };
  }

  /** The summaries, each with the tools of its own new results (the tool filter: turns with that tool, reduced or not). */
  override turns(): TurnSummary[] {
    let own: OwnResultRecord[][] | undefined;
    try {
      own = this.own ??= ownByCall(this.transcript);
    } catch (e) {
      this.ctx.log?.(`the results of ${this.path} could not be listed by call: ${String(e)}`);
    }
    return this.records.map((r, i) => {
      const list = own?.[i];
      return list ? { ...r.summary, resultTools: [...new Set(list.map((o) => o.tool))].sort() } : r.summary;
    });
  }

  /** Replays again under `config` (a settings change) and keeps the new figures. */
  /** the last replay run in this window */
  lastResult: ReplayResult | undefined;

  /** the markers of the last replay run in this window */
  lastMarkers: ReplayMarkers = [];

  rerun(config: SpillwayConfig, signal?: AbortSignal): void {
    const marks = collectMarkers(recordFor(this.ctx));
    const result = replay(this.transcript, {
      config,
      store: this.ctx.store(),
      detail: true,
      onProjection: marks.onProjection,
      ...(signal ? { signal } : {}),
    });
    this.lastResult = result;
    this.lastMarkers = marks.markers;
    this.records = replayRecords(result, marks.markers);
    this.info = this.makeInfo(result);
    this.projectedTurns.clear();
  }

  /**
   * The markers call k was sent, for a kept replay made before each turn's markers were recorded:
   * call k projected again alone under the settings the figures were made with, kept for a few turns.
   * (It matches when each decision depends on its request alone; a clear's payback or a read kept
   * whole while in use depend on the calls before, which the recorded markers keep.)
   */
  private projectTurn(turn: number): Map<string, string> | undefined {
    const rec = this.records[turn];
    if (!rec || rec.reductions.length + (rec.inputs?.length ?? 0) === 0) return undefined;
    return this.projectedTurns.get(turn, () => {
      try {
        const store = this.ctx.store();
        const engine = createEngine(this.ctx.config(), { store: { put: () => undefined, locate: (h) => store.locate(h) } });
        const text = JSON.stringify(requestForCall(this.transcript, turn));
        const marks = this.transcript.observations;
        const out = engine.project(text, this.transcript.wire, marks ? { observations: marks } : {}).request;
        return markersOf(out, rec.reductions, rec.inputs ?? []);
      } catch (e) {
        this.ctx.log?.(`could not re-project call ${turn} of ${this.path}: ${String(e)}`);
        return new Map();
      }
    });
  }

  protected override markerAt(turn: number, handle: string, callId: string): string | undefined {
    // the marker the replay recorded for the turn, else the turn projected again (a kept replay from before markers were kept)
    return super.markerAt(turn, handle, callId) ?? this.projectTurn(turn)?.get(decisionKeyOf(callId, handle));
  }

  /** The newest marker of a handle (no turn named): the last turn that carries it. */
  protected projected(handle: string): string | undefined {
    for (let t = this.records.length - 1; t >= 0; t--) {
      const rec = this.records[t]!;
      const r = [...rec.reductions, ...(rec.inputs ?? [])].find((x) => x.handle === handle);
      if (r) return this.markerAt(t, handle, r.callId);
    }
    return undefined;
  }

  private sources: Map<string, CallSource> | undefined;

  /** What every call of the transcript named (the last call's request holds them all), read once. */
  protected override sourcesAt(): ReadonlyMap<string, CallSource> | undefined {
    const n = this.transcript.calls.length;
    if (n === 0) return undefined;
    this.sources ??= callSources(requestForCall(this.transcript, n - 1));
    return this.sources;
  }

  /**
   * The session's limit under the settings its figures were made with: the oracle and the floor
   * (src/replay/limits.ts) replayed off the event loop's way (replayAsync), each with a store of its
   * own, against the cost with read-backs the session's turns report, per price model they price.
   */
  async limits(signal: AbortSignal, report?: (message: string) => void): Promise<SessionLimits> {
    const n = this.transcript.calls.length;
    const l = await measureLimitsAsync(this.transcript, { config: this.ctx.config(), signal }, (stage) =>
      report?.(
        stage === 'oracle' ? `the oracle (only the lines used later) over ${n} calls` : `the floor (no tool output) over ${n} calls`,
      ),
    );
    const models: Record<string, LimitFigures> = {};
    for (const [model, c] of Object.entries(this.info.totals?.cost ?? {})) {
      const oracle = l.oracle[model];
      const floor = l.floor[model];
      if (oracle === undefined || floor === undefined) continue;
      const kept = c.projected + (c.readBack ?? 0);
      const share = oracleShare(c.raw, kept, oracle);
      models[model] = { raw: c.raw, kept, oracle, floor, ...(share !== undefined ? { share } : {}) };
    }
    return { models, oracleMisses: l.oracleMisses };
  }

  /**
   * The session replayed as if its requests went to `costModel`'s provider, under the settings its
   * figures were made with (src/replay/routes.ts): the engine holds its decisions to that provider's
   * prices, as the proxy would, and the figures are that replay's, in that price model's units.
   */
  async routed(costModel: string, signal: AbortSignal, report?: (message: string) => void): Promise<RoutedFigures> {
    if (!PROVIDERS.includes(costModel))
      throw new Error(
        `the engine holds no cache prices for ${costModel}: sent there, it would decide as it does for any provider it does not know`,
      );
    report?.(`the session as sent to ${costModel}, over ${this.transcript.calls.length} calls`);
    const r = await replayRoutedAsync(this.transcript, { config: this.ctx.config(), signal }, costModel);
    const cost = r.totals.cost[costModel];
    if (!cost) throw new Error(`the replay routed to ${costModel} priced nothing under it`);
    const kept = r.totals.costWithReadBacks[costModel]?.projected ?? cost.projected;
    return {
      costModel,
      raw: cost.raw,
      projected: cost.projected,
      readBack: Math.max(0, kept - cost.projected),
      missedIds: r.totals.missedIds,
      referencedIds: r.totals.referencedIds,
    };
  }

  async dryRun(config: SpillwayConfig, signal?: AbortSignal): Promise<TurnSummary[]> {
    const result = replay(this.transcript, { config, store: this.ctx.store(), detail: true, ...(signal ? { signal } : {}) });
    return replayRecords(result).map((r) => r.summary);
  }
}

/** The onProjection hook that hands each call's new reductions to the host's records (see InspectorContext). */
export function recordFor(ctx: InspectorContext): ReplayOptions['onProjection'] {
  const record = ctx.recordProjection;
  if (!record) return undefined;
  return (i, { request, projection }) => {
    // all of them, so calls that share a handle each get their own marker; only this call's decisions are recorded
    // (file inputs, whether replaced on arrival or by a clear with their call's result)
    const all = [...projection.reductions, ...withInputStage(projection.inputs)];
    if (all.some((r) => r.fresh))
      record(JSON.parse(request) as unknown, JSON.parse(projection.request) as unknown, all, { turn: i }, (r) => r.fresh === true);
  };
}

export function replayDetail(result: ReplayResult, path: string): string {
  const t = result.totals;
  const skipped = t.skippedRecords ? `, ${t.skippedRecords} records skipped` : '';
  const p = result.prelude;
  // the agent's system prompt and tools, which Claude Code and Codex logs leave out (src/replay/prelude.ts)
  const prelude = p
    ? ` · with ${preludeDescription(p)} (${Math.round(p.tokens / 100) / 10}k tokens a call)`
    : result.format === 'claude-code' || result.format === 'codex'
      ? " · without the agent's system prompt and tools"
      : '';
  return `${result.format} transcript, ${t.calls} calls, miss rate ${(t.missRate * 100).toFixed(1)}%${skipped}${prelude} · ${path}`;
}

/** Keeps a replay in the archive, so after a reload it opens with its figures without replaying again. */
/** What a kept replay's figures depend on: the configuration it ran under. */
function configKey(config: SpillwayConfig | Record<string, unknown>): string {
  return JSON.stringify(config);
}

export function archiveReplay(
  archive: SessionArchive,
  path: string,
  result: ReplayResult,
  bytes: number,
  config: SpillwayConfig | Record<string, unknown>,
  model?: string,
  markers: ReplayMarkers = [],
): void {
  const records = replayRecords(result, markers);
  archive.writeAll(
    {
      v: 1,
      origin: 'replay',
      name: path,
      title: titleOf(path),
      detail: replayDetail(result, path),
      created: new Date().toISOString(),
      path,
      bytes,
      config: configKey(config),
      ...(model ? { model } : {}),
    },
    records.map((r) => ({
      summary: r.summary,
      reductions: [...r.reductions],
      missed: [...r.missed],
      ...(r.readBacks !== undefined ? { readBacks: r.readBacks } : {}),
      ...(r.inputs ? { inputs: [...r.inputs] } : {}),
      ...(r.markers ? { markers: [...r.markers] } : {}),
      ...(r.keptWhole ? { keptWhole: [...r.keptWhole] } : {}),
      ...(r.truncatedByAgent ? { truncatedByAgent: [...r.truncatedByAgent] } : {}),
      ...(r.savedByAgent ? { savedByAgent: [...r.savedByAgent] } : {}),
      ...(r.held ? { held: [...r.held] } : {}),
    })),
  );
}

/** Where the paths of the transcripts opened in a workspace are remembered (VS Code's workspaceState). */
export interface PathMemory {
  get(): string[];
  set(paths: string[]): void;
}

/** Transcripts remembered per workspace; more are forgotten oldest first. */
const MAX_REMEMBERED = 20;

/**
 * The transcripts opened in this workspace. Their paths are remembered, so after a reload the list
 * still shows them and opening one (or the panel restoring it) replays the file again.
 */
export class ReplaySource implements SessionSource {
  readonly origin = 'replay' as const;
  private readonly sessions = new Map<string, ReplaySession>();
  private readonly listeners = new Listeners<SessionChange>();

  constructor(
    private readonly ctx: InspectorContext,
    private readonly memory?: PathMemory,
    private readonly archive?: SessionArchive,
  ) {}

  private archived(): Map<string, ArchivedSession> {
    const m = new Map<string, ArchivedSession>();
    for (const a of this.archive?.read('replay') ?? []) if (a.header.path) m.set(a.header.path, a);
    return m;
  }

  private remember(path: string): void {
    if (!this.memory) return;
    const paths = [path, ...this.memory.get().filter((p) => p !== path)].slice(0, MAX_REMEMBERED);
    this.memory.set(paths);
  }

  /** Adds (or replaces) the replay of `path`; its id is stable per path so re-opening updates it. */
  add(
    path: string,
    transcript: Transcript,
    result: ReplayResult,
    bytes: number,
    modified: string,
    announce = true,
    markers: ReplayMarkers = [],
  ): ReplaySession {
    const id = `replay:${path}`;
    const s = new ReplaySession(this.ctx, id, path, transcript, result, bytes, modified, markers);
    this.sessions.set(id, s);
    this.remember(path);
    if (this.archive) archiveReplay(this.archive, path, result, bytes, this.ctx.config(), modelOf(transcript).model, markers);
    if (announce) this.listeners.fire({ sessionId: id, reloaded: true });
    return s;
  }

  /** Re-runs every replay under the current settings (after a settings change). */
  rerunAll(): void {
    for (const s of this.sessions.values()) {
      try {
        s.rerun(this.ctx.config());
        if (this.archive && s.lastResult)
          archiveReplay(this.archive, s.path, s.lastResult, s.bytes, this.ctx.config(), modelOf(s.transcript).model, s.lastMarkers);
        this.listeners.fire({ sessionId: s.id, reloaded: true });
      } catch (e) {
        this.ctx.log?.(`re-running the replay of ${s.path} failed: ${String(e)}`);
      }
    }
  }

  list(): SessionInfo[] {
    const out = [...this.sessions.values()].map((s) => s.info);
    const archived = this.archived();
    const paths = [...new Set([...(this.memory?.get() ?? []), ...archived.keys()])];
    for (const path of paths) {
      if (this.sessions.has(`replay:${path}`)) continue;
      try {
        const st = statSync(transcriptOf(path).path);
        const a = archived.get(path);
        out.push(
          a
            ? {
                id: `replay:${path}`,
                origin: 'replay',
                title: titleOf(path),
                detail: a.header.detail,
                ...modelFields(a.header.model),
                turns: a.turns.length,
                modified: st.mtime.toISOString(),
                bytes: st.size,
                live: false,
                totals: infoTotals(a.turns.map((t) => t.summary)),
              }
            : {
                id: `replay:${path}`,
                origin: 'replay',
                title: titleOf(path),
                detail: `not replayed in this window yet; open it to replay · ${path}`,
                turns: 0,
                modified: st.mtime.toISOString(),
                bytes: st.size,
                live: false,
              },
        );
      } catch {
        /* the file is gone */
      }
    }
    return out;
  }

  async open(id: string): Promise<InspectorSession | undefined> {
    const loaded = this.sessions.get(id);
    if (loaded) return loaded;
    const path = id.slice('replay:'.length);
    const kept = this.archived().get(path);
    if (!this.memory?.get().includes(path) && !kept) return undefined;
    const source = transcriptOf(path);
    const transcript = await readTranscript(source.path, source.instance !== undefined ? { instance: source.instance } : {});
    const st = statSync(source.path);
    if (kept && kept.turns.length === transcript.calls.length && kept.header.config === configKey(this.ctx.config())) {
      // the kept figures, without replaying again (the transcript is read for the texts and dry runs)
      const s = new ReplaySession(
        this.ctx,
        id,
        path,
        transcript,
        {
          records: kept.turns.map((t) => ({
            summary: t.summary,
            reductions: t.reductions,
            missed: t.missed,
            ...(t.readBacks !== undefined ? { readBacks: t.readBacks } : {}),
            ...(t.inputs ? { inputs: t.inputs } : {}),
            ...(t.markers ? { markers: t.markers } : {}),
            ...(t.keptWhole ? { keptWhole: t.keptWhole } : {}),
            ...(t.truncatedByAgent ? { truncatedByAgent: t.truncatedByAgent } : {}),
            ...(t.savedByAgent ? { savedByAgent: t.savedByAgent } : {}),
            ...(t.held ? { held: t.held } : {}),
          })),
          detail: kept.header.detail,
        },
        st.size,
        st.mtime.toISOString(),
      );
      this.sessions.set(id, s);
      return s;
    }
    const marks = collectMarkers(recordFor(this.ctx));
    const result = replay(transcript, {
      config: this.ctx.config(),
      store: this.ctx.store(),
      detail: true,
      onProjection: marks.onProjection,
    });
    return this.add(path, transcript, result, st.size, st.mtime.toISOString(), false, marks.markers);
  }

  onDidChange(listener: (e: SessionChange) => void): () => void {
    return this.listeners.add(listener);
  }

  dispose(): void {
    this.listeners.clear();
    this.sessions.clear();
  }
}
