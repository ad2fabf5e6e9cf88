/**
 * What a transcript reader hands to the replay: one agent session turned into the sequence of
 * model calls it made, in one of the engine's wire formats.
 *
 * Readers exist because most users already have sessions on disk (Claude Code, Codex, SWE-agent,
 * saved API request bodies), and replaying them is how a policy is judged on real work before it is
 * trusted with a live agent. A session is stored once, as one growing list of items; call k is the
 * prefix `items.slice(0, calls[k].end)` plus the request fields in `base`. That mirrors how agents
 * really call models (each request resends the history so far) and keeps a 500 MB session in memory
 * once, not once per call.
 */
import type { ObservationMark } from '../../engine/formats/observations';
import type { WireFormat } from '../../engine/types';

/** What a transcript file was: an agent's log, or an API request body (the three wire formats). */
export type TranscriptFormat =
  | 'claude-code'
  | 'codex'
  | 'swe-agent'
  | 'openai-chat'
  | 'anthropic-messages'
  | 'openai-responses'
  | 'openhands'
  | 'pi'
  | 'gemini'
  | 'gemini-cli'
  | 'copilot-cli'
  | 'copilot-chat'
  | 'cline'
  | 'cline-task'
  | 'qwen-code'
  | 'opencode'
  | 'continue';

export const TRANSCRIPT_FORMATS: readonly TranscriptFormat[] = [
  'claude-code',
  'codex',
  'swe-agent',
  'openai-chat',
  'anthropic-messages',
  'openai-responses',
  'openhands',
  'pi',
  'gemini',
  'gemini-cli',
  'copilot-cli',
  'copilot-chat',
  'cline',
  'cline-task',
  'qwen-code',
  'opencode',
  'continue',
];

/** One model call: the request it sent is `items.slice(0, end)`; `reply` is what the model wrote back. */
export interface TranscriptCall {
  end: number;
  /** assistant text and tool call arguments/inputs of the answer, joined by newlines ('' if unknown) */
  reply: string;
  /**
   * When the agent sent this request, in ms since the epoch, as the log dates it; absent when the
   * format has no times or the record it is read from has none or an invalid one (never a guess).
   * Claude Code, Codex, OpenHands and Gemini CLI: the time of the last record of the request (the
   * tool result or user message the call answers; a merged item, its last record's). pi: the
   * answer's own `timestamp`, which pi sets when it starts the request. The replay's meter lets a
   * provider's cache expire across a gap longer than it keeps a prefix idle (docs/replay-and-cost.md).
   */
  at?: number;
}

/**
 * Where the agent compacted its history (replaced what came before by a summary), as its log
 * records it. The readers keep the full history across a compaction, so the replay's calls after it
 * are what the agent would have sent had it not compacted; src/replay/compactions.ts measures each.
 */
export interface TranscriptCompaction {
  /** the calls made before the compaction (it came after call `calls - 1`'s answer) */
  calls: number;
  /** the line (JSONL) of the compaction record */
  line: number;
  /** as the log says (Claude Code's `compactMetadata.trigger`), or as the agent's rule implies (pi); absent when unknown */
  trigger?: 'auto' | 'manual';
  /**
   * the agent's own count of its context when it compacted: Claude Code's `preTokens`, pi's
   * `tokensBefore`, Codex's last `token_count` (the usage the provider reported, plus the agent's
   * estimate of what came after); absent when the log has none
   */
  tokens?: number;
  /** Codex's `token_count`: the context window the agent was told the model has */
  contextWindow?: number;
  /** the model that answered the last call before it, as the log names it */
  model?: string;
  /** the agent's version when the log names it (Claude Code's `version`), which sets its rule */
  version?: string;
  /**
   * the summary the agent continued from, as it is in the log ('' when the log does not keep it).
   * No agent's log records the summarising call's usage (Claude Code's `compact_boundary`, pi's
   * `compaction` entry and Codex's `compacted` line carry none), so its cost is not priced.
   */
  summary: string;
}

/** Records the reader did not turn into items: always counted, never silently dropped. */
export interface SkippedRecords {
  total: number;
  /** e.g. `{ 'event_msg': 40, 'invalid-json': 1, 'unknown:foo': 2 }` */
  byReason: Record<string, number>;
  /** human-readable, each naming the line (JSONL) or entry it is about */
  notes: string[];
}

export interface Transcript {
  /** what the file was */
  source: TranscriptFormat;
  /** the request format of every call */
  wire: WireFormat;
  /** request fields other than the item list: model, system/instructions, tools... (may be {}) */
  base: Record<string, unknown>;
  /** wire-format messages (chat, anthropic) or input items (responses), in order */
  items: unknown[];
  calls: TranscriptCall[];
  /**
   * User messages that carry a command's output (text-mode agents), as the reader knows them from
   * the agent's own rules: item index into `items` and the tool the action implies. The replay hands
   * them to the engine, which reduces their output like tool results. Absent: none.
   */
  observations?: ObservationMark[];
  /** the compactions the log records, in order (absent: none) */
  compactions?: TranscriptCompaction[];
  /** the session is a sub-agent's (a Claude Code sidechain read as the session) */
  subAgent?: true;
  skipped: SkippedRecords;
}

export interface ReadTranscriptOptions {
  /** 'auto' (the default) detects the format from the file name and its first bytes */
  format?: TranscriptFormat | 'auto';
  signal?: AbortSignal;
  onProgress?: (bytesRead: number, totalBytes: number) => void;
  /**
   * OpenHands output.jsonl: the instance_id to replay (default: the first instance in the file).
   * Copilot CLI events.jsonl: the `task` call id of a sub-agent to replay (default: the main conversation).
   */
  instance?: string;
}

/** The request field that holds the item list in each wire format. */
export function itemsKey(wire: WireFormat): 'messages' | 'input' | 'contents' {
  return wire === 'openai-responses' ? 'input' : wire === 'gemini' ? 'contents' : 'messages';
}

/**
 * The request of call `k`: `base` plus the items sent so far. The item objects are shared with the
 * transcript, not copied, so the caller must not mutate them (the engine never does).
 */
export function requestForCall(t: Transcript, k: number): Record<string, unknown> {
  const call = t.calls[k];
  if (!Number.isInteger(k) || call === undefined) {
    throw new RangeError(`call ${k} does not exist: the transcript has ${t.calls.length} call(s)`);
  }
  return { ...t.base, [itemsKey(t.wire)]: t.items.slice(0, call.end) };
}
