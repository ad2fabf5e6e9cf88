/**
 * Types shared by the engine and the layers above it (store, replay, proxy, CLI, extension).
 *
 * The engine is pure: it never touches the file system itself. Whoever hosts it hands in an
 * `OutputSink` that keeps the full text of every reduced tool result, so each reduction stays
 * recoverable by its handle. Nothing here may import from the rest of Spillway or from `vscode`.
 */

/** The request formats the engine reads and patches (`gemini`: the Gemini API's generateContent body). */
export type WireFormat = 'openai-chat' | 'openai-responses' | 'anthropic-messages' | 'gemini';
export const WIRE_FORMATS: readonly WireFormat[] = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'];

/** The four stages, in the order they run. */
export type StageName = 'offload' | 'window' | 'budget' | 'clear';
export const STAGE_ORDER: readonly StageName[] = ['offload', 'window', 'budget', 'clear'];

/** What the store keeps next to each output, for listings, titles and the index. */
export interface StoredMeta {
  tool: string;
  callId: string;
  stage: StageName | 'input';
  /** size of the text in UTF-16 code units (what JavaScript and the caps count) */
  chars: number;
  bytes: number;
  lines: number;
  tokens: number;
  session?: string;
}

/**
 * Where full outputs go. `put` must be atomic (a crash never leaves a half-written entry) and
 * idempotent (the same handle always carries the same text: handles are content hashes).
 */
export interface OutputSink {
  put(handle: string, text: string, meta: StoredMeta): void;
  /**
   * The file that holds `handle`, if the sink has one (`spillway read --json` reports it). Markers
   * never name it: where a store lives must not change what a projection sends.
   */
  locate(handle: string): string | undefined;
  /**
   * Whether `handle` is stored. The engine accepts a marker in a request as already reduced only
   * when its handle is stored here or was issued by the engine itself; without `has`, only the latter.
   */
  has?(handle: string): boolean;
  /**
   * Resolves once the outputs of `handles` are durably stored; rejects when one cannot be. A sink
   * that writes in the background offers this so a host can hold a projection back until its
   * handles are safe (see `whenStored`); a sink that writes inside `put` needs none.
   */
  written?(handles: Iterable<string>): Promise<void>;
}

/**
 * Resolves once every output a projection's markers point at is stored, so the projection may be
 * sent: a handle must never reach a model while a crash could still lose its output. Carried-over
 * reductions are included (their write may still be pending or have failed). Rejects, with the
 * store's reason, when an output cannot be written: the caller then sends the original request.
 */
export function whenStored(
  store: OutputSink,
  projection: { reductions: readonly { handle: string }[]; inputs?: readonly { handle: string }[] },
): Promise<void> {
  if (!store.written) return Promise.resolve();
  const handles = [...projection.reductions, ...(projection.inputs ?? [])].map((r) => r.handle);
  return handles.length ? store.written(handles) : Promise.resolve();
}

/** One decision of one stage on one tool result. */
export interface Reduction {
  /** position of the tool result among the request's tool results (0-based) */
  result: number;
  callId: string;
  tool: string;
  stage: StageName;
  /** a short sentence saying why, e.g. "42,118 chars over bash's cap of 16,000" */
  reason: string;
  originalChars: number;
  projectedChars: number;
  originalTokens: number;
  projectedTokens: number;
  handle: string;
  /** true when this call made the decision, false when it was carried over from an earlier call */
  fresh: boolean;
  /**
   * true when the stage also replaced the tool call's input: a file input (`inputs.when: clear`, then
   * also listed in the projection's `inputs`, with its figures) or any input (`clear.clearToolInputs`)
   */
  inputCleared?: boolean;
  /**
   * the handle of the call's input, when the clear stage replaced a file input with it (`inputs.when:
   * clear`); the input itself, with its sizes, is in the projection's `inputs` (`by: 'clear'`)
   */
  inputHandle?: string;
  /**
   * true when the result was sent as it was and the clear replaced only its call's file input (a
   * file-writing call's short result, "File created"): this reduction saves nothing, the input in
   * `inputs` is what was replaced
   */
  inputOnly?: boolean;
}

/**
 * Why the clear stage left a result as it was at the current call (ProjectionDetail.held), for the
 * results no stage reduced: the result's own state, or else why no clear took it at this call.
 * - `in-use`: the agent received it or referred to it in its last `clear.inUseCalls` calls
 * - `gathered`: material it gathered and has not yet written from (`clear.keepGathered`)
 * - `excluded`: its tool is in `clear.excludeTools`
 * - `as-is`: a marker, a read-back or an output the agent saved itself, never reduced again
 * - `no-gain`: a marker would not be shorter
 * - `small`: its clear would free fewer tokens than `clear.minFreedTokens`
 * - `under-trigger`: the request is under `clear.triggerTokens`
 * - `earlier-clear`: an earlier projection of the session cleared at this call or later, so this one makes no new clear here
 * - `too-little`: less than `clear.clearAtLeastTokens` is clearable
 * - `no-payback`: no clear pays back its cache rewrite within the calls the session can be expected to make
 * - `unaffordable`: the session's bank cannot pay for the clear (the guarantee), or clears are stopped
 * - `recent`: a clear was made at this call, and this result is among the last `clear.keep`
 * - `enough`: a clear was made at this call and had freed enough before it reached this result
 */
export const CLEAR_HOLDS = [
  'in-use',
  'gathered',
  'excluded',
  'as-is',
  'no-gain',
  'small',
  'under-trigger',
  'earlier-clear',
  'too-little',
  'no-payback',
  'unaffordable',
  'recent',
  'enough',
] as const;
export type ClearHold = (typeof CLEAR_HOLDS)[number];

/** The results a call sent whole for one reason (Projection.held), and the tokens they sent. */
export interface HeldGroup {
  reason: ClearHold;
  results: number;
  tokens: number;
}

/**
 * A tool result over its tool's cap that the projection sent whole, and why (a read the agent asked
 * for, kept whole while in use: `offload.keepReads`; its cap raised by back-off; ...). Results under
 * their cap are not listed: they are whole because they fit.
 */
export interface KeptWhole {
  /** position of the tool result among the request's tool results (0-based) */
  result: number;
  callId: string;
  tool: string;
  /** "13,947 chars, over Read's cap of 8,000; kept whole while in use: …" */
  reason: string;
  /** the clause after the size: why it went whole */
  why: string;
}

export interface SavedByAgent {
  /** position of the tool result among the request's tool results (0-based) */
  result: number;
  callId: string;
  tool: string;
  /** Claude Code (`<persisted-output>`), Qwen Code (the same tag, with its `Full output sha256:` line), Gemini CLI (`<tool_output_masked>`), GitHub Copilot's CLI (`Output too large to read at once`) or Copilot's chat in VS Code (`Large tool result (… KB) written to file`) */
  agent: 'claude-code' | 'qwen-code' | 'gemini-cli' | 'copilot-cli' | 'copilot-chat';
  /** where the agent says the full output is ('' when it names no file) */
  file: string;
  /** characters of the preview the model sees */
  chars: number;
}

/** What an agent says it cut from one output (agent-truncation.ts). */
export interface AgentTruncation {
  agent: 'gemini-cli' | 'codex' | 'mini-swe-agent' | 'pi' | 'qwen-code' | 'opencode' | 'cline' | 'continue';
  /** how much it left out, in `unit`s, as it says; absent when it does not say (Qwen Code, OpenCode) */
  omitted?: number;
  /** what the agent cuts by */
  unit: 'chars' | 'lines' | 'tokens';
  /** where it says the whole output is ('' when it keeps none) */
  file: string;
}

/** A tool result the agent cut to a head and a tail itself (agent-truncation.ts). The stages treat it like any other. */
export interface TruncatedByAgent extends AgentTruncation {
  /** position of the tool result among the request's tool results (0-based) */
  result: number;
  callId: string;
  tool: string;
}

/**
 * One tool call's input replaced by a marker (file-writing tools: the content is on disk). Kept apart
 * from `Reduction`, which is always about a tool result. A projection lists every file input it
 * replaces once, whatever replaced it: see `by`.
 */
export interface InputReduction {
  callId: string;
  tool: string;
  /** index of the item (assistant message / input item) that holds the call */
  item: number;
  /**
   * what replaced it: `arrival`, the file inputs stage (`inputs.when: arrival`, or once `inputs.keepRounds`
   * model calls followed it); `clear`, the clear stage together with its call's result (`inputs.when:
   * clear`, the default; that result's reduction carries the same handle as `inputHandle`)
   */
  by: InputReplacedBy;
  /** why, e.g. "12,408 chars of Write input; the file on disk holds the content" (a clear's adds its own reason) */
  reason: string;
  originalChars: number;
  projectedChars: number;
  originalTokens: number;
  projectedTokens: number;
  /** reads back the input exactly as it was sent (the decoded string, or the object's JSON text) */
  handle: string;
  /** true in the call that replaced it (for `by: 'clear'`, the call that made the clear), false when carried over */
  fresh: boolean;
}

/** What replaced a file input: the file inputs stage on arrival, or the clear stage with its call's result. */
export type InputReplacedBy = 'arrival' | 'clear';

export interface ProjectionStats {
  format: WireFormat;
  /** tool results in the request, and how many of them the projection reduces */
  toolResults: number;
  reducedResults: number;
  originalTokens: number;
  projectedTokens: number;
  savedTokens: number;
  originalChars: number;
  projectedChars: number;
  /** reductions per stage in this projection */
  byStage: Record<StageName, number>;
  /** markers found in the input and left alone (projecting a projection) */
  markersSeen: number;
  /**
   * tool results the agent had already reduced itself and Spillway left alone: Claude Code's and Qwen
   * Code's `<persisted-output>` previews, Gemini CLI's masked outputs, with the file the agent saved
   * the full output to (absent when none)
   */
  savedByAgent?: SavedByAgent[];
  /**
   * the tool results new in this request that the agent had truncated itself before sending
   * (agent-truncation.ts): what it says it left out, and where it says the whole output is
   */
  truncatedByAgent?: TruncatedByAgent[];
  /** true when the projection is byte-for-byte the request */
  unchanged: boolean;
}

/** Context a custom reducer gets for one tool result. */
export interface ReducerInput {
  tool: string;
  callId: string;
  text: string;
  /** the cap in force for this tool, in the configured unit */
  cap: number;
  previewChars: number;
  stage: StageName;
  isError: boolean;
}

/**
 * A per-tool reducer (Eino's per-tool handlers): return the preview the model should see in place
 * of the full text, or null to leave the result verbatim. The engine still stores the original and
 * wraps the preview in a marker, so the result stays recoverable and is recognised next time.
 */
export type CustomReducer = (input: ReducerInput) => string | null;

/**
 * Whether a file input the configuration would replace by a marker is replaced (its tool, call id
 * and the input as sent); false keeps it whole. The replay's hindsight oracle (src/replay/limits.ts)
 * keeps the inputs whose identifiers the agent uses later.
 */
export type InputFilter = (input: { tool: string; callId: string; text: string }) => boolean;

/**
 * Hindsight, for the limit's oracle only (src/replay/limits.ts): what a reducer that knows the whole
 * session would know. With it the clear stage takes a result only once it is no longer needed, and
 * weighs a clear against the calls the session really has left instead of an expectation. No
 * product surface sets it.
 */
export interface Hindsight {
  /** the last call (0-based) in which the result, as it stands, is still needed; a clear may take it from the next */
  neededUntil(result: { tool: string; callId: string; text: string }): number;
  /** how many calls the session makes after call `call` (0-based) */
  remainingCalls(call: number): number;
}

export class SpillwayError extends Error {
  constructor(
    message: string,
    readonly code: string = 'invalid-input',
  ) {
    super(message);
    this.name = 'SpillwayError';
  }
}
