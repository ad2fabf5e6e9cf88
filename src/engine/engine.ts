/**
 * The engine: `createEngine(config, options)` validates the configuration once and returns an engine
 * whose `project(request, format, { session })` reads a request, runs one projection (run.ts), writes
 * the outputs its reductions need to the store, patches the request text and remembers the session.
 *
 * Why this module exists: it is the public face of the pipeline (DESIGN.md's Module API) and the
 * only part of it that talks to its host: the store (`OutputSink`), the log, the session memories.
 * The stages themselves live one per file in stages/ (offload, window, budget, clear; file inputs
 * and recognition beside them) and decide without touching any of these; run.ts calls them in
 * order and applies their decisions. Here the store is written after every stage has decided, then
 * the request is patched: a projection that fails part way has written nothing.
 *
 * Stickiness: with offload and clear (the default), decisions for an earlier call never depend on
 * later items (stages/clear.ts replays the session inside the request), so a projection's prefix
 * stays byte-stable from one call to the next even with no session state. Window and budget depend
 * on what came later by design (their boundary moves), and combined with clear a result may then end
 * up clipped rather than cleared, so the guarantee for every combination comes from a session
 * (session.ts): decisions made in one call are reused in every later call and not recomputed, also
 * across a configuration change when the new engine is given the same `sessions` store.
 */
import { validateConfig, type SpillwayConfig, type TokenizerName } from './config';
import { readRequest, type FormatOption, type ObservationMark, type ObservationOption } from './formats';
import { applyPatches } from './json';
import { MemorySink } from './memory-sink';
import { Run, type ProjectionDetail } from './run';
import type { StoreWrite } from './stages/results';
import { noteReadBack } from './backoff';
import { commonPrefixLength, createSessionStore, handleOrigin, type SessionMemory, type SessionStore } from './session';
import { guaranteed, readCallTokens } from './guarantee';
import { PROVIDERS, remainingCallsTable } from './clear-schedule';
import { tokenCounter, type TokenCounter } from './tokens';
import {
  SpillwayError,
  type CustomReducer,
  type HeldGroup,
  type Hindsight,
  type InputFilter,
  type InputReduction,
  type OutputSink,
  type ProjectionStats,
  type Reduction,
  type WireFormat,
} from './types';

export { commonPrefixLength, createSessionStore, MemorySink, type ProjectionDetail, type SessionStore };

export interface EngineOptions {
  /** where full outputs go; without one, an in-memory store is used */
  store?: OutputSink;
  /** overrides `config.tokenizer` */
  tokenizer?: TokenizerName | TokenCounter;
  /** custom per-tool reducers, keyed by tool name (exact, bare or `*` pattern) */
  reducers?: Record<string, CustomReducer>;
  /** decides, input by input, whether a file input the configuration would replace is replaced (default: every one) */
  inputFilter?: InputFilter;
  /** what the session holds ahead, for the limit's oracle (types.ts, Hindsight); never set by a product surface */
  hindsight?: Hindsight;
  /**
   * Model calls per session of the sessions the payback schedule learns how many calls remain from
   * (`clear.paybackHorizon: corpus`; clear-schedule.ts). Default: the corpus's (session-lengths.ts).
   * The held-out benchmark passes the lengths of the other sources' sessions, so that a session is
   * never judged with a schedule learned on it; never set by a product surface.
   */
  sessionLengths?: readonly number[];
  /** receives one line per projection that reduced something, and per problem */
  log?: (line: string) => void;
  /**
   * Where sessions are remembered. Pass the same store to the engine that replaces this one (after
   * a settings change, say) and every session keeps its decisions across the change.
   */
  sessions?: SessionStore;
}

export interface ProjectOptions {
  /** remembers decisions across calls of one conversation */
  session?: string;
  /** also return per-item token counts (for cache and cost accounting) */
  detail?: boolean;
  /** also return `held`: the results sent whole, grouped by why the clear stage left them so (and, with `detail`, `ProjectionDetail.held`) */
  held?: boolean;
  /**
   * The user messages that are observations (a command's output), as a transcript reader marked
   * them; they replace the `observations: auto` recognition for this call. Ignored when the
   * configuration says `observations: off`.
   */
  observations?: readonly ObservationMark[];
  /**
   * When the request is sent, in ms since the epoch (the proxy's clock, a log's time). A call sent
   * after the provider's cache has surely expired rewrites everything anyway, so the guarantee
   * charges it so and a clear there costs no rewrite. Absent: never cold.
   */
  at?: number;
  /**
   * The provider the request goes to, by its prices (`anthropic`, `openai` for the GPT-5 family,
   * `openai-4o`): the guarantee holds the session to that provider's bill. Absent: the provider of
   * the request's `model` (Claude, GPT), else every price model at once. A session keeps the first
   * it is told.
   */
  provider?: string;
}

/** What the read of a request is told about observations, from the configuration and the call's options. */
export function observationOption(config: SpillwayConfig, marks?: readonly ObservationMark[]): ObservationOption {
  if (config.observations === 'off') return 'off';
  return marks ?? config.observations;
}

export interface Projection<T = string | object> {
  request: T;
  format: WireFormat;
  reductions: Reduction[];
  /** tool-call inputs replaced by a marker (file-writing tools; `inputs.*`) */
  inputs: InputReduction[];
  stats: ProjectionStats;
  detail?: ProjectionDetail;
  /**
   * with the `held` option: every result this call sends whole, grouped by why the clear stage left it
   * so (`ClearHold`), with the tokens each group sends, the most first; absent when the clear stage is off
   */
  held?: HeldGroup[];
}

export interface Engine {
  readonly config: SpillwayConfig;
  readonly store: OutputSink;
  project<T extends string | object>(request: T, format?: FormatOption, options?: ProjectOptions): Projection<T>;
  /**
   * Tells the engine the agent read back `handle` in `session` (a host that sees read-backs the
   * engine cannot: the replay's miss check, a read through the store). When it was offloaded on
   * arrival, that tool backs off from the session's next call on (backoff.ts); the read-back is
   * charged to the session's ledger at that call (guarantee.ts). False when the session is unknown,
   * neither back-off nor the guarantee is on, the handle was not reduced in this session or was
   * already counted.
   */
  noteReadBack(session: string, handle: string): boolean;
  /** forgets what a session remembered */
  endSession(session: string): void;
}

/** Sessions remembered at once; the least recently used is forgotten first. */
const MAX_SESSIONS = 256;
/**
 * Handles an engine remembers having issued itself (for stores without `has`); the oldest are
 * forgotten first. 100k handles are about 6 MB.
 */
const MAX_ISSUED = 100_000;

export function createEngine(config: unknown = {}, options: EngineOptions = {}): Engine {
  const cfg = validateConfig(config);
  const store: OutputSink = options.store ?? new MemorySink();
  const counter = typeof options.tokenizer === 'object' ? options.tokenizer : tokenCounter(options.tokenizer ?? cfg.tokenizer);
  const sessions = (options.sessions ?? createSessionStore()).memories as Map<string, SessionMemory>;
  const log = options.log ?? (() => {});
  const reducers = options.reducers ?? {};
  // learned once per engine: the schedule reads it at every call
  const remaining = options.sessionLengths ? remainingCallsTable(options.sessionLengths) : undefined;
  // every handle this engine stores, so its own markers are recognised even in a store without `has`
  const issued = new Set<string>();
  const write = ({ handle, text, meta }: StoreWrite): void => {
    store.put(handle, text, meta);
    issued.delete(handle);
    issued.add(handle);
    if (issued.size > MAX_ISSUED) issued.delete(issued.values().next().value!);
  };
  const known = (handle: string): boolean => issued.has(handle) || (store.has?.(handle) ?? false);
  for (const [name, fn] of Object.entries(reducers)) {
    if (typeof fn !== 'function') throw new SpillwayError(`reducers.${name} must be a function`, 'bad-config');
  }

  function project<T extends string | object>(request: T, format: FormatOption = 'auto', opts: ProjectOptions = {}): Projection<T> {
    const isText = typeof request === 'string';
    if (!isText && (request === null || typeof request !== 'object')) {
      throw new SpillwayError('the request must be a JSON text or an object', 'bad-request');
    }
    if (opts.at !== undefined && !Number.isFinite(opts.at))
      throw new SpillwayError(`options.at must be a time in ms since the epoch, got ${String(opts.at)}`, 'bad-request');
    if (opts.provider !== undefined && !PROVIDERS.includes(opts.provider)) {
      throw new SpillwayError(
        `options.provider must be one of ${PROVIDERS.join(', ')}, got ${JSON.stringify(opts.provider)}`,
        'bad-request',
      );
    }
    const text = isText ? request : JSON.stringify(request);
    const memory = opts.session ? sessions.get(opts.session) : undefined;
    const samePrefix = memory
      ? commonPrefixLength(memory.text, text, memory.items.length ? memory.items[memory.items.length - 1]!.end : 0)
      : 0;
    const req = readRequest(
      text,
      format,
      memory ? { nodes: memory.nodes, upTo: samePrefix } : undefined,
      observationOption(cfg, opts.observations),
    );
    const run = new Run(
      req,
      {
        cfg,
        counter,
        reducers,
        known,
        ...(options.inputFilter ? { inputFilter: options.inputFilter } : {}),
        ...(options.hindsight ? { hindsight: options.hindsight } : {}),
        ...(remaining ? { remaining } : {}),
        ...(opts.at !== undefined ? { at: opts.at } : {}),
        ...(opts.provider !== undefined ? { provider: opts.provider } : {}),
      },
      memory,
      samePrefix,
    );
    run.stages();
    // every stage has decided: now the outputs go to the store, then the request is patched
    run.writes.forEach(write);
    const { patches, reductions, inputs } = run.finish();
    const out = applyPatches(text, patches);
    const stats = run.stats(out);
    if (opts.session) {
      sessions.delete(opts.session);
      sessions.set(opts.session, run.remember());
      if (sessions.size > MAX_SESSIONS) sessions.delete(sessions.keys().next().value!);
    }
    if (run.forged) log(`${run.forged} result(s) looked like markers but were not (too long, or an unknown handle): treated as text`);
    const fresh = [...reductions, ...inputs].filter((r) => r.fresh);
    if (fresh.length) {
      log(
        `projected ${describeCounts(stats)}: ${fresh.map((r) => `${r.tool} ${r.callId} ${'stage' in r ? r.stage : 'input'} (${r.reason}) -> ${r.handle}`).join('; ')}`,
      );
    }
    const projected = (isText ? out : out === text ? request : JSON.parse(out)) as T;
    const result: Projection<T> = { request: projected, format: req.format, reductions, inputs, stats };
    if (opts.detail) result.detail = run.detail(opts.held === true);
    if (opts.held) {
      const held = run.heldGroups();
      if (held) result.held = held;
    }
    return result;
  }

  return {
    config: cfg,
    store,
    project,
    noteReadBack: (session, handle) => {
      const memory = sessions.get(session);
      const guarded = guaranteed(cfg);
      if (!memory || !(cfg.offload.backoff || guarded) || memory.readBack.has(handle)) return false;
      const origin = handleOrigin(memory, handle);
      if (origin === undefined) return false;
      memory.readBack.add(handle);
      if (cfg.offload.backoff) noteReadBack(memory.backoff, origin.tool, memory.call + 1, origin.kind);
      if (guarded)
        memory.guarantee.readBacks.push({
          call: memory.call + 1,
          kind: origin.kind,
          ask: readCallTokens(counter),
          answer: origin.answer,
        });
      return true;
    },
    endSession: (s) => {
      sessions.delete(s);
    },
  };
}

function describeCounts(s: ProjectionStats): string {
  return `${s.format} request, ${s.reducedResults}/${s.toolResults} results reduced, ${s.originalTokens} -> ${s.projectedTokens} tokens`;
}
