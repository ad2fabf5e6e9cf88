/**
 * The engine: reads a request, runs the stages in order, and patches the request text.
 *
 * Stages run cheapest and least disruptive first (offload, window, budget, clear); a later stage only
 * sees results earlier ones left verbatim, except that clear may also clear an offloaded result's
 * marker. Each decision stores the full text first, so every reduction is recoverable by its handle.
 *
 * Stickiness: the clear stage replays the session inside the request. Every assistant turn in the
 * transcript marks a model call the agent made with the items before it; the stage walks those
 * calls in order and clears at the call where the projected size first crossed the trigger, exactly
 * as it would have if it had seen each call live. With offload and clear (the default), decisions for
 * an earlier call never depend on later items, so a projection's prefix stays byte-stable from one
 * call to the next even with no session state. Window and budget depend on what came later by
 * design (their boundary moves), and combined with clear a result may then end up clipped rather
 * than cleared, so the guarantee for every combination comes from a session: decisions made in one
 * call are reused in every later call and not recomputed, also across a configuration change when
 * the new engine is given the same `sessions` store.
 */
import { capFor, toolListed, validateConfig, type Cap, type SpillwayConfig, type TokenizerName } from './config';
import {
  CallMap,
  candidateNames,
  contentPatch,
  readRequest,
  resultRawLength,
  resultText,
  type FormatOption,
  type ObservationMark,
  type ObservationOption,
  type ParsedRequest,
  type ToolResult,
} from './formats';
import { handleFor } from './handle';
import { decodeString, forEachString, applyPatches, reusableNodes, toValue, type JValue, type Patch } from './json';
import { markerBound, PERSISTED_OUTPUT_TAG, recognisePersistedOutput, recogniseRawMarker, renderMarker } from './markers';
import { cutBytes, preview } from './preview';
import { isEstimate, tokenCounter, type TokenCounter } from './tokens';
import {
  STAGE_ORDER,
  SpillwayError,
  type CustomReducer,
  type InputReduction,
  type OutputSink,
  type ProjectionStats,
  type Reduction,
  type SavedByAgent,
  type StageName,
  type WireFormat,
} from './types';
import { formatInt as fmt } from './format-number';
import { clearPaysBack } from './clear-schedule';
import { fileInputMarker, isInputMarker, MIN_INPUT_CHARS, readFileInput } from './file-inputs';

export interface EngineOptions {
  /** where full outputs go; without one, an in-memory store is used */
  store?: OutputSink;
  /** overrides `config.tokenizer` */
  tokenizer?: TokenizerName | TokenCounter;
  /** custom per-tool reducers, keyed by tool name (exact, bare or `*` pattern) */
  reducers?: Record<string, CustomReducer>;
  /** receives one line per projection that reduced something, and per problem */
  log?: (line: string) => void;
  /**
   * Where sessions are remembered. Pass the same store to the engine that replaces this one (after
   * a settings change, say) and every session keeps its decisions across the change.
   */
  sessions?: SessionStore;
}

/** Session memories by session id; opaque to callers. */
export interface SessionStore {
  readonly memories: Map<string, unknown>;
}

export function createSessionStore(): SessionStore {
  return { memories: new Map() };
}

export interface ProjectOptions {
  /** remembers decisions across calls of one conversation */
  session?: string;
  /** also return per-item token counts (for cache and cost accounting) */
  detail?: boolean;
  /**
   * The user messages that are observations (a command's output), as a transcript reader marked
   * them; they replace the `observations: auto` recognition for this call. Ignored when the
   * configuration says `observations: off`.
   */
  observations?: readonly ObservationMark[];
}

/** What the read of a request is told about observations, from the configuration and the call's options. */
export function observationOption(config: SpillwayConfig, marks?: readonly ObservationMark[]): ObservationOption {
  if (config.observations === 'off') return 'off';
  return marks ?? config.observations;
}

/** Token counts per item, original and projected, and of the parts sent before the items. */
export interface ProjectionDetail {
  fixedTokens: number;
  originalItemTokens: number[];
  projectedItemTokens: number[];
}

export interface Projection<T = string | object> {
  request: T;
  format: WireFormat;
  reductions: Reduction[];
  /** tool-call inputs replaced by a marker (file-writing tools; `inputs.*`) */
  inputs: InputReduction[];
  stats: ProjectionStats;
  detail?: ProjectionDetail;
}

export interface Engine {
  readonly config: SpillwayConfig;
  readonly store: OutputSink;
  project<T extends string | object>(request: T, format?: FormatOption, options?: ProjectOptions): Projection<T>;
  /** forgets what a session remembered */
  endSession(session: string): void;
}

/** Sessions remembered at once; the least recently used is forgotten first. */
const MAX_SESSIONS = 256;
/** A UTF-16 surrogate without its pair (JSON can carry one as a \ud800 escape). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/**
 * A copy of a short string that shares no memory with the request text. Slices of a string are
 * views of it in V8, so a tool name kept in a session would otherwise pin a whole request body.
 */
function owned(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/** Results shorter than this are never replaced by a reference: the marker would not save much. */
const DEDUPE_MIN_CHARS = 600;
/** Input fields that name the file a tool call works on (read, edit, write tools of common agents). */
const PATH_KEYS = ['path', 'file_path', 'filePath', 'filename', 'file', 'target_file', 'notebook_path', 'absolute_path'];
/** Input fields that hold the command a shell tool ran (Bash, shell, exec_command, run_terminal_cmd). */
const COMMAND_KEYS = ['command', 'cmd'];
/**
 * Handles an engine remembers having issued itself (for stores without `has`); the oldest are
 * forgotten first. 100k handles are about 6 MB.
 */
const MAX_ISSUED = 100_000;
/** A JSON string escape is at most 6 characters (\uXXXX) for one decoded character. */
const MAX_ESCAPE = 6;
/** Tokens a message costs beyond its text (role, separators), as providers count them. */
const ITEM_OVERHEAD_TOKENS = 4;

interface Decision {
  stage: StageName;
  replacement: string;
  handle: string;
  reason: string;
  originalChars: number;
  originalTokens: number;
  projectedTokens: number;
  /** the replacement for the tool call's input, when clear also cleared it */
  inputReplacement?: string;
  /** tokens of the original text parts, as counted into their item */
  partsTokens?: number;
  tool: string;
  callId: string;
}

interface InputDecision {
  callId: string;
  tool: string;
  item: number;
  start: number;
  end: number;
  replacement: string;
  handle: string;
  reason: string;
  originalChars: number;
  originalTokens: number;
  projectedTokens: number;
}

interface Work {
  r: ToolResult;
  rawLen: number;
  text?: string;
  /** handle, when the result already is a marker (a projection being projected again) */
  marker?: string;
  /** the file the agent saved the full output to, when the agent reduced this result itself (Claude Code's `<persisted-output>`) */
  agentSaved?: string;
  decision?: Decision;
  fresh: boolean;
  /** tokens of the result's text as it stands now (original, or the replacement) */
  tokens?: number;
  /** a marker would not have been shorter: no stage tries again in this projection */
  noGain?: boolean;
  partsTokens?: number;
  /** estimated tokens a clear of this result would free */
  gain?: number;
}

interface SessionMemory {
  text: string;
  /** decisions by result key, with where the decided content sat in `text` */
  decisions: Map<string, { decision: Decision; start: number; end: number }>;
  /** token counts of items and fixed parts, with their spans in `text` */
  items: Span[];
  fixed: Span[];
  /** the previous parse, for reuse where the text did not change */
  nodes: Map<number, JValue>;
}

interface Span {
  start: number;
  end: number;
  tokens: number;
}

/**
 * Length of the common prefix of two texts, compared in doubling chunks (native comparisons, no
 * copies), so finding that a 5 MB request starts with the previous 4.9 MB one takes well under a
 * millisecond.
 */
export function commonPrefixLength(a: string, b: string, hint = 0): number {
  const n = Math.min(a.length, b.length);
  let at = 0;
  // one comparison up to the hint (where the previous request's items ended) settles most calls
  if (hint > 0 && hint <= n && a.slice(0, hint) === b.slice(0, hint)) at = hint;
  let step = 4096;
  while (at < n) {
    const len = Math.min(step, n - at);
    if (a.slice(at, at + len) === b.slice(at, at + len)) {
      at += len;
      step *= 2;
      continue;
    }
    if (len <= 64) {
      while (at < n && a.charCodeAt(at) === b.charCodeAt(at)) at++;
      return at;
    }
    step = len >> 1;
  }
  return at;
}

/** A store that keeps outputs in memory: for tests and for hosts that keep their own. */
export class MemorySink implements OutputSink {
  readonly outputs = new Map<string, string>();
  /** keeps a copy: the text may be a view of a whole request body */
  put(handle: string, text: string): void {
    if (!this.outputs.has(handle)) this.outputs.set(handle, Buffer.from(text, 'utf16le').toString('utf16le'));
  }
  locate(): string | undefined {
    return undefined;
  }
  has(handle: string): boolean {
    return this.outputs.has(handle);
  }
  get(handle: string): string | undefined {
    return this.outputs.get(handle);
  }
}

export function createEngine(config: unknown = {}, options: EngineOptions = {}): Engine {
  const cfg = validateConfig(config);
  const store = options.store ?? new MemorySink();
  const counter = typeof options.tokenizer === 'object' ? options.tokenizer : tokenCounter(options.tokenizer ?? cfg.tokenizer);
  const sessions = (options.sessions ?? createSessionStore()).memories as Map<string, SessionMemory>;
  const log = options.log ?? (() => {});
  const reducers = options.reducers ?? {};
  // every handle this engine stores, so its own markers are recognised even in a store without `has`
  const issued = new Set<string>();
  const sink: OutputSink = {
    put(handle, text, meta) {
      store.put(handle, text, meta);
      issued.delete(handle);
      issued.add(handle);
      if (issued.size > MAX_ISSUED) issued.delete(issued.values().next().value!);
    },
    locate: (handle) => store.locate(handle),
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
    const run = new Run(req, cfg, sink, counter, reducers, known);
    if (memory) run.recall(memory, samePrefix);
    run.stages();
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
    if (opts.detail) result.detail = run.detail();
    return result;
  }

  return {
    config: cfg,
    store,
    project,
    endSession: (s) => {
      sessions.delete(s);
    },
  };
}

function describeCounts(s: ProjectionStats): string {
  return `${s.format} request, ${s.reducedResults}/${s.toolResults} results reduced, ${s.originalTokens} -> ${s.projectedTokens} tokens`;
}

/** Tokens of the string values of a JSON value, as the engine counts an item (keys not counted). */
function stringValuesTokens(v: unknown, counter: TokenCounter): number {
  if (typeof v === 'string') return counter.count(v);
  if (Array.isArray(v)) return v.reduce((a: number, x) => a + stringValuesTokens(x, counter), 0);
  if (v && typeof v === 'object') return Object.values(v).reduce((a: number, x) => a + stringValuesTokens(x, counter), 0);
  return 0;
}

function countLines(text: string): number {
  if (text.length === 0) return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) if (i < text.length - 1) n++;
  return n;
}

function resultKey(r: ToolResult, seen: Map<string, number>): string {
  const k = seen.get(r.callId) ?? 0;
  seen.set(r.callId, k + 1);
  return k === 0 ? r.callId : `${r.callId}#${k}`;
}

/** One projection: the state of every tool result as the stages decide on it. */
class Run {
  private readonly work: Work[];
  private readonly keys: string[];
  private markersSeen = 0;
  /** results that looked like markers and were treated as text */
  forged = 0;
  private itemTokens?: number[];
  private fixedTokens?: number;
  private fixedSpans: Span[] = [];
  private memory?: SessionMemory;
  private samePrefix = 0;
  /** file-writing calls whose input is replaced, by call id */
  private readonly inputDecisions = new Map<number, InputDecision>();

  constructor(
    private readonly req: ParsedRequest,
    private readonly cfg: SpillwayConfig,
    private readonly store: OutputSink,
    private readonly counter: TokenCounter,
    private readonly reducers: Record<string, CustomReducer>,
    private readonly known: (handle: string) => boolean,
  ) {
    const seen = new Map<string, number>();
    this.keys = req.results.map((r) => resultKey(r, seen));
    this.work = req.results.map((r) => {
      const w: Work = { r, rawLen: resultRawLength(r), fresh: false };
      const first = r.textParts[0];
      // an observation's body is a span inside its string: the marker, if any, is that span
      const o = r.observation;
      const handle = o
        ? recogniseRawMarker(req.text, o.start - 1, o.end + 1)
        : first && recogniseRawMarker(req.text, first.start, first.end);
      if (handle && this.genuine(w, handle)) {
        w.marker = handle;
        this.markersSeen++;
      } else if (handle) this.forged++;
      else if (first && req.text.startsWith(PERSISTED_OUTPUT_TAG, first.start + 1)) {
        w.agentSaved = recognisePersistedOutput(resultText(req, r));
      }
      return w;
    });
  }

  /**
   * A result that looks like a marker is one only when it is no longer than a marker can be (all
   * its text parts together) and its handle is stored or was issued by this engine. Anything else
   * (a log or saved projection the agent read, a real marker with an output pasted after it) is
   * ordinary text and goes through the stages.
   */
  private genuine(w: Work, handle: string): boolean {
    const bound = markerBound(this.cfg.previewChars);
    if (w.rawLen > bound * MAX_ESCAPE) return false;
    if (w.rawLen > bound && this.text(w).length > bound) return false;
    return this.known(handle);
  }

  private text(w: Work): string {
    if (w.text === undefined) w.text = resultText(this.req, w.r);
    return w.text;
  }

  /** Reuses decisions an earlier call of the session made on the same results. */
  recall(memory: SessionMemory, samePrefix: number): void {
    this.memory = memory;
    this.samePrefix = samePrefix;
    this.work.forEach((w, i) => {
      const m = memory.decisions.get(this.keys[i]!);
      const c = w.r.content;
      if (!m || !c || w.marker) return;
      if (c.end - c.start !== m.end - m.start) return;
      // inside the unchanged prefix at the same place it is the same content; elsewhere compare
      const same = (c.start === m.start && c.end < samePrefix) || this.req.text.slice(c.start, c.end) === memory.text.slice(m.start, m.end);
      if (!same) return;
      w.decision = m.decision;
    });
  }

  remember(): SessionMemory {
    const decisions = new Map<string, { decision: Decision; start: number; end: number }>();
    this.work.forEach((w, i) => {
      if (w.decision && w.r.content) decisions.set(this.keys[i]!, { decision: w.decision, start: w.r.content.start, end: w.r.content.end });
    });
    const tokens = this.originalItemTokens();
    const items = this.req.items.map((it, i) => ({ start: it.start, end: it.end, tokens: tokens[i]! }));
    return { text: this.req.text, decisions, items, fixed: this.fixedSpans, nodes: reusableNodes(this.req.root, 2) };
  }

  stages(): void {
    const c = this.cfg;
    for (const stage of STAGE_ORDER) {
      if (stage === 'offload' && c.inputs.enabled) this.fileInputs();
      if (stage === 'offload' && (c.offload.enabled || Object.keys(this.reducers).length)) this.offload();
      if (stage === 'window' && c.window.enabled) this.window();
      if (stage === 'budget' && c.budget.enabled) this.budget();
      if (stage === 'clear' && c.clear.enabled) this.clear();
    }
  }

  /** Results the stages may still decide on. */
  private open(w: Work): boolean {
    return !w.decision && !w.marker && w.agentSaved === undefined && !w.noGain && !!w.r.content && w.r.textParts.length > 0;
  }

  private reducerFor(names: readonly string[]): CustomReducer | undefined {
    for (const n of names) if (this.reducers[n]) return this.reducers[n];
    const pattern = Object.keys(this.reducers).find((p) => p.includes('*') && toolListed([p], names));
    return pattern ? this.reducers[pattern] : undefined;
  }

  /** Size of a result in the cap's unit; decodes only when the raw length could exceed the cap. */
  private overCap(w: Work, cap: Cap): number | undefined {
    if (cap === 'unlimited') return undefined;
    if (this.cfg.capUnit === 'chars') {
      if (w.rawLen <= cap) return undefined;
      const n = this.text(w).length;
      return n > cap ? n : undefined;
    }
    // UTF-8 is at most 3 bytes per UTF-16 unit
    if (w.rawLen * 3 <= cap) return undefined;
    const n = Buffer.byteLength(this.text(w), 'utf8');
    return n > cap ? n : undefined;
  }

  private offload(): void {
    const unit = this.cfg.capUnit;
    const dedupe = this.cfg.offload.enabled && this.cfg.offload.dedupe ? new Map<string, Work>() : undefined;
    const latestCap = this.cfg.offload.latestCap;
    const lastAssistant = this.req.kinds.lastIndexOf('assistant');
    for (const w of this.work) {
      if (!this.open(w)) continue;
      const cap = capFor(this.cfg, w.r.names);
      const custom = this.reducerFor(w.r.names);
      if (custom) {
        const numericCap = cap === 'unlimited' ? Number.POSITIVE_INFINITY : cap;
        const text = this.text(w);
        const pv = custom({
          tool: w.r.tool,
          callId: w.r.callId,
          text,
          cap: numericCap,
          previewChars: this.cfg.previewChars,
          stage: 'offload',
          isError: w.r.isError,
        });
        if (pv !== null && pv !== undefined) this.decide(w, 'offload', `custom reducer for ${w.r.tool}`, pv, numericCap);
        continue;
      }
      if (!this.cfg.offload.enabled) continue;
      // the latest round is what the model reads next: it may stay verbatim up to latestCap
      const latest = w.r.item > lastAssistant && latestCap > 0 && cap !== 'unlimited' ? Math.max(cap, latestCap) : cap;
      const size = this.overCap(w, latest);
      if (size !== undefined) {
        this.decide(
          w,
          'offload',
          `${fmt(size)} ${unit} over ${w.r.tool}'s cap of ${fmt(latest as number)}${latest !== cap ? ' for the latest round' : ''}`,
          undefined,
          cap as number,
        );
      } else if (
        dedupe &&
        cap !== 'unlimited' &&
        w.rawLen >= DEDUPE_MIN_CHARS &&
        this.text(w).length >= DEDUPE_MIN_CHARS &&
        (latest === cap || this.overCap(w, cap) === undefined)
      ) {
        // (a latest-round result over the normal cap is offloaded next call; a reference now would
        // change into an offload marker then)
        // (rawLen only bounds the length from above: escapes such as \u00e9 make it longer)
        this.dedupe(w, dedupe);
      }
    }
  }

  /**
   * File inputs (file-inputs.ts): the input of a file-writing call that `inputs.keepRounds` or more
   * model calls have followed becomes a marker with the path and a handle. Decided from the input
   * and the calls after it only, so the decision is the same in every later call.
   */
  private fileInputs(): void {
    const { keepRounds, minTokens, tools } = this.cfg.inputs;
    const kinds = this.req.kinds;
    // tokens of the conversation before each item, as the agent sent it (never what we project, so
    // the decision for a call cannot change when other reductions do)
    const before: number[] = [];
    if (minTokens > 0) {
      const tok = this.originalItemTokens();
      let run = this.fixedTokens ?? 0;
      for (let i = 0; i < tok.length; i++) {
        before.push(run);
        run += tok[i]!;
      }
    }
    // assistant runs (model calls) that start after each item
    const runsAfter = new Array<number>(kinds.length + 1).fill(0);
    for (let i = kinds.length - 1; i >= 0; i--) {
      const starts = kinds[i] === 'assistant' && (i === 0 || kinds[i - 1] !== 'assistant');
      runsAfter[i] = runsAfter[i + 1]! + (starts && i > 0 ? 1 : 0);
    }
    const text = this.req.text;
    const calls = this.req.calls instanceof CallMap ? this.req.calls.all : [...this.req.calls.values()];
    for (const call of calls) {
      const input = call.input;
      if (!input || input.end - input.start < MIN_INPUT_CHARS) continue;
      if (!toolListed(tools, candidateNames(call.name))) continue;
      // the runs that began after the call's own assistant run
      if (runsAfter[call.item + 1]! < keepRounds) continue;
      if (minTokens > 0 && before[call.item]! <= minTokens) continue;
      const original = input.kind === 'string' ? decodeString(text, input) : text.slice(input.start, input.end);
      let value: unknown;
      try {
        value = input.kind === 'string' && !original.trimStart().startsWith('{') ? original : JSON.parse(original);
      } catch {
        continue;
      }
      if (isInputMarker(value)) continue;
      const f = readFileInput(value);
      if (!f || LONE_SURROGATE.test(original)) continue;
      const handle = handleFor(original);
      const marker = fileInputMarker(call.name, f, original.length, handle);
      const markerText = typeof marker === 'string' ? marker : JSON.stringify(marker);
      const replacement = input.kind === 'string' ? JSON.stringify(markerText) : markerText;
      if (replacement.length >= input.end - input.start) continue;
      const originalTokens = this.countNode(input);
      const projectedTokens =
        typeof marker === 'string' || input.kind === 'string' ? this.counter.count(markerText) : stringValuesTokens(marker, this.counter);
      if (projectedTokens >= originalTokens) continue;
      this.store.put(handle, original, {
        tool: owned(call.name),
        callId: owned(call.id),
        stage: 'input',
        chars: original.length,
        bytes: Buffer.byteLength(original, 'utf8'),
        lines: countLines(original),
        tokens: this.counter.count(original),
      });
      this.inputDecisions.set(input.start, {
        callId: owned(call.id),
        tool: owned(call.name),
        item: call.item,
        start: input.start,
        end: input.end,
        replacement,
        handle,
        reason: `${fmt(original.length)} chars of ${owned(call.name)} input; the file on disk holds the content`,
        originalChars: input.end - input.start,
        originalTokens,
        projectedTokens,
      });
    }
  }

  /**
   * A result identical to an earlier verbatim one becomes a reference to it: agents re-run the same
   * command or re-read the same file, and the second copy tells the model nothing new. Decided on
   * arrival, so it never changes a prefix already sent.
   */
  private dedupe(w: Work, seen: Map<string, Work>): void {
    const text = this.text(w);
    const key = `${text.length}:${text.slice(0, 64)}:${text.slice(-64)}`;
    const first = seen.get(key);
    if (!first || first.decision || this.text(first) !== text) {
      if (!first || first.decision) seen.set(key, w);
      return;
    }
    const note = `(identical to the ${first.r.tool} output of call ${first.r.callId} above; nothing new in it)`;
    // the note is part of the preview budget, so markers stay bounded by previewChars + header
    this.decide(
      w,
      'offload',
      `identical to the output of call ${first.r.callId}`,
      note.length <= this.cfg.previewChars ? note : '',
      undefined,
    );
  }

  private window(): void {
    const { recentTurns, maxOutputChars, tools } = this.cfg.window;
    // the boundary is the Nth user message from the end; fewer than N means nothing is old
    let boundary = 0,
      seen = 0;
    for (let i = this.req.kinds.length - 1; i >= 0; i--) {
      if (this.req.kinds[i] === 'user' && ++seen >= recentTurns) {
        boundary = i;
        break;
      }
    }
    if (boundary === 0) return;
    for (const w of this.work) {
      if (w.r.item >= boundary || !this.open(w)) continue;
      if (tools.length && !toolListed(tools, w.r.names)) continue;
      if (w.rawLen <= maxOutputChars) continue;
      const n = this.text(w).length;
      if (n > maxOutputChars)
        this.decide(w, 'window', `${fmt(n)} chars in a turn older than the last ${recentTurns} user messages`, undefined, maxOutputChars);
    }
  }

  private budget(): void {
    const unit = this.cfg.capUnit;
    const newest = this.work.length - 1;
    this.work.forEach((w, i) => {
      if (i === newest || !this.open(w)) return;
      const cap = capFor(this.cfg, w.r.names);
      const size = this.overCap(w, cap);
      if (size !== undefined)
        this.decide(
          w,
          'budget',
          `${fmt(size)} ${unit} over ${w.r.tool}'s cap of ${fmt(cap as number)} (not the newest result)`,
          undefined,
          cap as number,
        );
    });
  }

  // ---- token accounting ---------------------------------------------------------------------

  private countNode(node: JValue): number {
    let n = 0;
    forEachString(node, (s) => {
      n += this.counter.count(decodeString(this.req.text, s));
    });
    return n;
  }

  private resultTokens(w: Work): number {
    if (w.tokens === undefined) w.tokens = w.decision ? w.decision.projectedTokens : this.partsTokens(w);
    return w.tokens;
  }

  /** Tokens of the result's text parts as sent (what its item's count includes). */
  private partsTokens(w: Work): number {
    if (w.partsTokens === undefined) {
      if (w.decision?.partsTokens !== undefined) w.partsTokens = w.decision.partsTokens;
      else if (w.r.observation) w.partsTokens = this.counter.count(this.text(w));
      else {
        let n = 0;
        for (const p of w.r.textParts) n += this.counter.count(decodeString(this.req.text, p));
        w.partsTokens = n;
      }
    }
    return w.partsTokens;
  }

  /**
   * Tokens of each item and of the fixed parts, as originally sent. In a session, items that lie
   * in the part of the request unchanged since the previous call keep their counts.
   */
  private originalItemTokens(): number[] {
    if (!this.itemTokens) {
      const m = this.memory;
      this.itemTokens = this.req.items.map((it, i) => {
        const old = m?.items[i];
        if (old && old.start === it.start && old.end === it.end && it.end <= this.samePrefix) return old.tokens;
        return this.countNode(it) + ITEM_OVERHEAD_TOKENS;
      });
      this.fixedSpans = this.req.fixed.map((n, i) => {
        const old = m?.fixed[i];
        const same =
          old && old.end - old.start === n.end - n.start && m!.text.slice(old.start, old.end) === this.req.text.slice(n.start, n.end);
        return { start: n.start, end: n.end, tokens: same ? old.tokens : this.countNode(n) };
      });
      this.fixedTokens = this.fixedSpans.reduce((a, f) => a + f.tokens, 0);
    }
    return this.itemTokens;
  }

  /** Tokens of each item as projected now. */
  private projectedItemTokens(): number[] {
    const tokens = [...this.originalItemTokens()];
    for (const w of this.work) {
      if (!w.decision) continue;
      tokens[w.r.item]! += this.resultTokens(w) - this.partsTokens(w);
    }
    for (const d of this.inputDecisions.values()) tokens[d.item]! += d.projectedTokens - d.originalTokens;
    return tokens;
  }

  private clear(): void {
    const c = this.cfg.clear;
    const kinds = this.req.kinds;
    const work = this.work;
    const itemTok = this.projectedItemTokens();
    // every model call the transcript shows: before each run of assistant items, and this one
    const checkpoints: number[] = [];
    kinds.forEach((k, i) => {
      if (k === 'assistant' && (i === 0 || kinds[i - 1] !== 'assistant')) checkpoints.push(i);
    });
    checkpoints.push(kinds.length);
    // a round is one model call (a run of assistant items: a Responses turn is a message plus one
    // function_call item per parallel call), not each assistant item
    const rounds = checkpoints.slice(0, -1);
    let running = this.fixedTokens ?? 0;
    let upTo = 0; // items counted into `running`
    let before = 0; // results in items before the checkpoint (work is in item order)
    let roundsBefore = 0;
    let cursor = 0; // every result before it is cleared, ineligible or already tried
    let staleAt: number[] | undefined;
    // what clearing every eligible result before protectedFrom would free, kept as the window moves
    let freeSum = 0,
      freeTo = 0;
    const counted = new Uint8Array(work.length);
    let callNo = -1;
    for (const cp of checkpoints) {
      callNo++;
      while (upTo < cp) running += itemTok[upTo++]!;
      while (before < work.length && work[before]!.r.item < cp) before++;
      while (roundsBefore < rounds.length && rounds[roundsBefore]! < cp) roundsBefore++;
      if (running <= c.triggerTokens) continue;
      const protectedFrom = c.keepUnit === 'results' ? before - c.keep : this.firstInLastRounds(before, rounds, roundsBefore);
      let freed = 0;
      const enough = () => c.clearAtLeastTokens !== 'all' && freed >= c.clearAtLeastTokens && running - freed <= c.triggerTokens;
      const clearOne = (i: number, why: string) => {
        const w = work[i]!;
        const was = this.resultTokens(w);
        if (counted[i]) {
          freeSum -= this.gain(w);
          counted[i] = 0;
        }
        if (this.decide(w, 'clear', why, '', undefined)) {
          const saved = was - this.resultTokens(w);
          freed += saved;
          itemTok[w.r.item]! -= saved;
        }
      };
      // as Anthropic's context editing does: a clear that cannot free clearAtLeastTokens is not
      // worth the cache it breaks, so it waits until enough is clearable
      if (c.clearAtLeastTokens !== 'all' && c.clearAtLeastTokens > 0) {
        for (; freeTo < protectedFrom; freeTo++) {
          const w = work[freeTo]!;
          if (this.clearable(w)) {
            freeSum += this.gain(w);
            counted[freeTo] = 1;
          }
        }
        if (freeSum < c.clearAtLeastTokens) continue;
      }
      // payback schedule: plan the clear first, fire only when it pays back its cache rewrite
      if (c.schedule === 'payback') {
        staleAt ??= c.staleFirst ? this.staleAt() : undefined;
        const plan = this.planClear(cursor, protectedFrom, cp, running, staleAt);
        if (
          !plan ||
          !clearPaysBack({
            running,
            before: itemTok.slice(0, work[plan.first]!.r.item).reduce((a, b) => a + b, 0),
            freed: plan.freed,
            calls: callNo + 1,
          })
        )
          continue;
      }
      const over = `context at ${fmt(running)} tokens over the trigger of ${fmt(c.triggerTokens)}`;
      // stale results first: the file was read or written again later, so this copy is outdated
      if (c.staleFirst) {
        staleAt ??= this.staleAt();
        for (let i = cursor; i < protectedFrom && !enough(); i++) {
          const w = work[i]!;
          if (staleAt[i]! < cp && this.clearable(w)) clearOne(i, `${over}; stale: the same file or command was used again later`);
        }
      }
      for (let i = cursor; i < protectedFrom; i++) {
        if (enough()) break;
        const w = work[i]!;
        if (this.clearable(w)) clearOne(i, over);
        if (i === cursor) cursor++;
      }
      running -= freed;
    }
  }

  /**
   * What a clear at checkpoint `cp` would clear, in the order the clear stage clears (stale first,
   * then oldest), without deciding anything: the first result it touches and the tokens it frees.
   */
  private planClear(
    cursor: number,
    protectedFrom: number,
    cp: number,
    running: number,
    staleAt: number[] | undefined,
  ): { first: number; freed: number } | undefined {
    const c = this.cfg.clear;
    let freed = 0,
      first = Number.POSITIVE_INFINITY;
    const enough = () => c.clearAtLeastTokens !== 'all' && freed >= c.clearAtLeastTokens && running - freed <= c.triggerTokens;
    const planned = new Set<number>();
    const take = (i: number) => {
      planned.add(i);
      freed += this.gain(this.work[i]!);
      first = Math.min(first, i);
    };
    if (staleAt) for (let i = cursor; i < protectedFrom && !enough(); i++) if (staleAt[i]! < cp && this.clearable(this.work[i]!)) take(i);
    for (let i = cursor; i < protectedFrom && !enough(); i++) if (!planned.has(i) && this.clearable(this.work[i]!)) take(i);
    return planned.size ? { first, freed } : undefined;
  }

  /**
   * For each result, the item index of the next call that names the same file (so from there on
   * the result shows an outdated copy), or Infinity.
   */
  private staleAt(): number[] {
    const lastUse = new Map<string, number>();
    const out = new Array<number>(this.work.length).fill(Number.POSITIVE_INFINITY);
    const calls = [...this.req.calls.values()].sort((a, b) => a.item - b.item);
    const pathOf = new Map<string, string>();
    for (const call of calls) {
      const p = this.pathArgument(call.input);
      if (p) pathOf.set(call.id, p);
    }
    // walk results from the newest back, remembering the latest call per path seen so far
    const byItemDesc = calls.slice().reverse();
    let ci = 0;
    for (let i = this.work.length - 1; i >= 0; i--) {
      const w = this.work[i]!;
      const own = w.r.call ?? this.req.calls.get(w.r.callId);
      const ownItem = own?.item ?? w.r.item;
      while (ci < byItemDesc.length && byItemDesc[ci]!.item > ownItem) {
        const p = pathOf.get(byItemDesc[ci]!.id);
        if (p) lastUse.set(p, byItemDesc[ci]!.item);
        ci++;
      }
      const p = own ? pathOf.get(own.id) : undefined;
      if (p && lastUse.has(p)) out[i] = lastUse.get(p)!;
    }
    return out;
  }

  private pathArgument(input: JValue | undefined): string | undefined {
    if (!input) return undefined;
    let obj: unknown;
    try {
      obj =
        input.kind === 'string'
          ? JSON.parse(decodeString(this.req.text, input))
          : input.kind === 'object'
            ? toValue(this.req.text, input)
            : undefined;
    } catch {
      return undefined;
    }
    if (!obj || typeof obj !== 'object') return undefined;
    for (const k of PATH_KEYS) {
      const v = (obj as Record<string, unknown>)[k];
      if (typeof v === 'string' && v.length > 0) return v;
    }
    // the same command run again (a test run, a build, a status check): its earlier output is
    // superseded; the key cannot collide with a path
    for (const k of COMMAND_KEYS) {
      const v = (obj as Record<string, unknown>)[k];
      const cmd = typeof v === 'string' ? v : Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join(' ') : undefined;
      if (cmd && cmd.trim().length > 0) return `\0cmd:${cmd.trim()}`;
    }
    return undefined;
  }

  /** What a cleared marker for this result costs, from a marker rendered with sizes of its order. */
  private clearedMarkerTokens(w: Work): number {
    const text = `${w.rawLen}`;
    return this.counter.count(
      renderMarker({
        style: this.cfg.markerStyle,
        language: this.cfg.language,
        stage: 'clear',
        tool: w.r.tool,
        callId: w.r.callId,
        handle: 'sw_000000000000000000000000',
        chars: w.rawLen,
        bytes: w.rawLen,
        lines: text.length * 100,
        tokens: w.rawLen,
        tokensEstimated: false,
        preview: '',
        omitted: w.rawLen,
        unit: this.cfg.capUnit,
      }),
    );
  }

  /** Tokens clearing this result would free, estimated before deciding (cached per result). */
  private gain(w: Work): number {
    if (w.gain === undefined) w.gain = Math.max(0, this.resultTokens(w) - this.clearedMarkerTokens(w));
    return w.gain;
  }

  private clearable(w: Work): boolean {
    return (
      !w.marker &&
      w.agentSaved === undefined &&
      !w.noGain &&
      !!w.r.content &&
      w.r.textParts.length > 0 &&
      w.decision?.stage !== 'clear' &&
      !toolListed(this.cfg.clear.excludeTools, w.r.names)
    );
  }

  /** Index of the first result inside the last `keep` assistant rounds, among the first `before` results. */
  private firstInLastRounds(before: number, rounds: number[], roundsBefore: number): number {
    const keep = this.cfg.clear.keep;
    if (keep === 0) return before;
    if (roundsBefore < keep) return 0;
    const from = rounds[roundsBefore - keep]!;
    for (let i = 0; i < before; i++) if (this.work[i]!.r.item > from) return i;
    return before;
  }

  /**
   * Stores the result's full text and replaces it by a marker. Returns false (and changes nothing)
   * when the marker would not be shorter than the original.
   */
  private decide(w: Work, stage: StageName, reasonText: string, customPreview: string | undefined, cap: number | undefined): boolean {
    const text = this.text(w);
    // names and reasons outlive this call (sessions, stores, callers' reduction lists): copies, so
    // they do not keep this request's whole body alive through V8's sliced strings
    const tool = owned(w.r.tool),
      callId = owned(w.r.callId),
      reason = owned(reasonText);
    // a lone surrogate cannot be stored as UTF-8 and read back the same: keep such a result verbatim
    if (LONE_SURROGATE.test(text)) return false;
    const cfg = this.cfg;
    const unit = cfg.capUnit;
    const bytes = Buffer.byteLength(text, 'utf8');
    let pv: string;
    if (stage === 'clear') pv = '';
    else if (customPreview !== undefined)
      pv = customPreview.length > cfg.previewChars ? customPreview.slice(0, cfg.previewChars) : customPreview;
    else
      pv =
        unit === 'bytes'
          ? cutBytes(preview(cfg.preview, text, cfg.previewChars), cfg.previewChars)
          : preview(cfg.preview, text, cfg.previewChars);
    if (stage !== 'clear' && customPreview === undefined && pv.length > cfg.previewChars) pv = pv.slice(0, cfg.previewChars);
    const handle = handleFor(text);
    const tokens = this.counter.count(text);
    const omitted = unit === 'bytes' ? bytes - Buffer.byteLength(pv, 'utf8') : text.length - pv.length;
    const info = {
      style: cfg.markerStyle,
      language: cfg.language,
      stage,
      tool,
      callId,
      handle,
      chars: text.length,
      bytes,
      lines: countLines(text),
      tokens,
      tokensEstimated: isEstimate(this.counter, text.length),
      preview: pv,
      omitted,
      unit,
      cap,
    } as const;
    // the path is only a hint: render once without it to know the marker is worth storing
    const bare = renderMarker(info);
    if (bare.length >= text.length) {
      w.noGain = true;
      return false;
    }
    this.store.put(handle, text, { tool, callId, stage, chars: text.length, bytes, lines: info.lines, tokens });
    const path = this.store.locate(handle);
    let replacement = path ? renderMarker({ ...info, path }) : bare;
    if (replacement.length >= text.length) replacement = bare;
    const decision: Decision = {
      stage,
      replacement,
      handle,
      reason,
      tool,
      callId,
      originalChars: text.length,
      originalTokens: tokens,
      projectedTokens: this.counter.count(replacement),
    };
    if (stage === 'clear' && this.cfg.clear.clearToolInputs) decision.inputReplacement = this.clearInput(w, handle);
    decision.partsTokens = this.partsTokens(w);
    w.decision = decision;
    w.fresh = true;
    w.tokens = decision.projectedTokens;
    return true;
  }

  /** Stores a cleared call's input and returns what replaces it, or undefined to keep it. */
  private clearInput(w: Work, resultHandle: string): string | undefined {
    const call = w.r.call ?? this.req.calls.get(w.r.callId);
    const input = call?.input;
    if (!input || this.inputDecisions.has(input.start)) return undefined;
    const raw = this.req.text.slice(input.start, input.end);
    const original = input.kind === 'string' ? decodeString(this.req.text, input) : raw;
    const handle = handleFor(original);
    const note = `input cleared by spillway; spillway read ${handle} (result: ${resultHandle})`;
    const replacement =
      input.kind === 'object'
        ? JSON.stringify({ spillway_cleared: note })
        : JSON.stringify(
            input.kind === 'string' && original.trimStart().startsWith('{') ? JSON.stringify({ spillway_cleared: note }) : note,
          );
    if (replacement.length >= raw.length) return undefined;
    this.store.put(handle, original, {
      tool: owned(w.r.tool),
      callId: owned(w.r.callId),
      stage: 'input',
      chars: original.length,
      bytes: Buffer.byteLength(original, 'utf8'),
      lines: countLines(original),
      tokens: this.counter.count(original),
    });
    return replacement;
  }

  finish(): { patches: Patch[]; reductions: Reduction[]; inputs: InputReduction[] } {
    const patches: Patch[] = [];
    const reductions: Reduction[] = [];
    const inputs: InputReduction[] = [];
    const inputsDone = new Set<number>();
    for (const d of this.inputDecisions.values()) {
      inputsDone.add(d.start);
      patches.push({ start: d.start, end: d.end, text: d.replacement });
      inputs.push({
        callId: d.callId,
        tool: d.tool,
        item: d.item,
        reason: d.reason,
        originalChars: d.originalChars,
        projectedChars: d.replacement.length,
        originalTokens: d.originalTokens,
        projectedTokens: d.projectedTokens,
        handle: d.handle,
        // decided in an earlier call when the previous request already carried this call
        fresh: !(this.memory && d.end <= this.samePrefix),
      });
    }
    for (const w of this.work) {
      const d = w.decision;
      if (!d) continue;
      patches.push(contentPatch(this.req, w.r, d.replacement));
      const call = w.r.call ?? this.req.calls.get(w.r.callId);
      if (d.inputReplacement && call?.input && !inputsDone.has(call.input.start)) {
        inputsDone.add(call.input.start);
        patches.push({ start: call.input.start, end: call.input.end, text: d.inputReplacement });
      }
      reductions.push({
        result: w.r.n,
        callId: d.callId,
        tool: d.tool,
        stage: d.stage,
        reason: d.reason,
        originalChars: d.originalChars,
        projectedChars: d.replacement.length,
        originalTokens: d.originalTokens,
        projectedTokens: d.projectedTokens,
        handle: d.handle,
        fresh: w.fresh,
        ...(d.inputReplacement ? { inputCleared: true } : {}),
      });
    }
    return { patches, reductions, inputs };
  }

  detail(): ProjectionDetail {
    return {
      fixedTokens: this.fixedTokens ?? 0,
      originalItemTokens: [...this.originalItemTokens()],
      projectedItemTokens: this.projectedItemTokens(),
    };
  }

  private savedByAgent(): SavedByAgent[] {
    const out: SavedByAgent[] = [];
    this.work.forEach((w, i) => {
      if (w.agentSaved === undefined) return;
      out.push({ result: i, callId: w.r.callId, tool: w.r.tool, agent: 'claude-code', file: w.agentSaved, chars: this.text(w).length });
    });
    return out;
  }

  stats(out: string): ProjectionStats {
    const original = this.originalItemTokens().reduce((a, b) => a + b, 0) + (this.fixedTokens ?? 0);
    const projected = this.projectedItemTokens().reduce((a, b) => a + b, 0) + (this.fixedTokens ?? 0);
    const byStage: Record<StageName, number> = { offload: 0, window: 0, budget: 0, clear: 0 };
    let reduced = 0;
    for (const w of this.work)
      if (w.decision) {
        byStage[w.decision.stage]++;
        reduced++;
      }
    return {
      format: this.req.format,
      toolResults: this.work.length,
      reducedResults: reduced,
      originalTokens: original,
      projectedTokens: projected,
      savedTokens: original - projected,
      originalChars: this.req.text.length,
      projectedChars: out.length,
      byStage,
      markersSeen: this.markersSeen,
      ...(this.savedByAgent().length ? { savedByAgent: this.savedByAgent() } : {}),
      unchanged: out === this.req.text,
    };
  }
}
