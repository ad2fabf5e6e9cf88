/**
 * `--format auto`: tells a transcript's format from its file name and first bytes. JSONL logs are
 * recognised by their first record (Claude Code records have `uuid`/`sessionId`, Codex lines are
 * `{timestamp, type, payload}`); JSON documents by their top-level shape. When nothing fits, the
 * error names the file, says what was seen and lists the formats that are supported.
 */
import { SpillwayError } from '../../engine/types';
import { classifyApiDocument, isMiniSweAgent } from './api';
import { isClineSession } from './cline';
import { isClineTaskHistory } from './cline-task';
import { CONTINUE_SESSION_HEAD, isContinueSession } from './continue';
import { isOpenCodeExport, OPENCODE_EXPORT_HEAD } from './opencode';
import { isCopilotCliRecord } from './copilot-cli';
import { COPILOT_CHAT_LOG_HEAD, COPILOT_CHAT_SESSION_HEAD, isCopilotChatLogStart, isCopilotChatSession } from './copilot-chat';
import { isQwenCodeRecord } from './qwen-code';
import { isGeminiCliRecord } from './gemini-cli';
import { preview } from './skip-log';
import type { TranscriptFormat } from './types';
import { isRecord, type Json } from './wire';

/** How much of a file detection looks at. Enough for several records of any agent log. */
export const DETECT_HEAD_BYTES = 64 * 1024;

const SUPPORTED_FORMATS_TEXT =
  'claude-code (Claude Code session .jsonl), codex (Codex rollout-*.jsonl), swe-agent (SWE-agent .traj), ' +
  'openai-chat (mini-swe-agent .traj.json, or a Chat Completions request body or message list), ' +
  'anthropic-messages (a Messages request body), openai-responses (a Responses request body or input list), ' +
  'openhands (OpenHands evaluation or resolver output.jsonl, one instance per line), ' +
  'pi (pi coding agent session .jsonl), ' +
  'gemini-cli (Gemini CLI chats/session-*.jsonl, or an older session-*.json), gemini (a Gemini API request body), ' +
  "copilot-cli (GitHub Copilot's CLI session-state/<id>/events.jsonl), " +
  "copilot-chat (GitHub Copilot's chat in VS Code: workspaceStorage/<workspace>/chatSessions/<session>.jsonl or .json), " +
  'cline (Cline sessions/<id>/<id>.messages.json), cline-task (a Cline, Roo Code or Kilo Code tasks/<id>/api_conversation_history.json), qwen-code (Qwen Code projects/<project>/chats/<session>.jsonl), opencode (the JSON `opencode export <session>` prints), continue (Continue sessions/<id>.json)';

const CODEX_TYPES: ReadonlySet<string> = new Set(['session_meta', 'response_item', 'turn_context', 'event_msg', 'compacted']);
const CLAUDE_TYPES: ReadonlySet<string> = new Set([
  'user',
  'assistant',
  'system',
  'summary',
  'file-history-snapshot',
  'queue-operation',
  'progress',
]);

export function unknownFormatError(path: string, seen: string): SpillwayError {
  return new SpillwayError(
    `Cannot tell the transcript format of ${path}: ${seen}. Supported formats: ${SUPPORTED_FORMATS_TEXT}. ` +
      'Pass --format to choose one.',
    'unknown-format',
  );
}

/**
 * An OpenHands output record: an evaluation instance (`instance_id`) or a resolver run (`issue`
 * and `issue_type`), each with its event `history`.
 */
function isOpenHandsRecord(record: Json): boolean {
  if (!Array.isArray(record.history)) return false;
  return 'instance_id' in record || (isRecord(record.issue) && typeof record.issue_type === 'string');
}

/** pi's session header, or one of its message entries (`message.role` in pi's own roles). */
function isPiRecord(record: Json): boolean {
  if (record.type === 'session') return typeof record.cwd === 'string' && typeof record.id === 'string';
  const m = record.message;
  return (
    record.type === 'message' &&
    isRecord(m) &&
    !('uuid' in record) &&
    (m.role === 'toolResult' || m.role === 'bashExecution' || (m.role === 'assistant' && typeof m.api === 'string'))
  );
}

/** The JSONL formats, told apart by their records. */
type JsonlFormat = 'claude-code' | 'codex' | 'openhands' | 'pi' | 'gemini-cli' | 'copilot-cli' | 'copilot-chat' | 'qwen-code';

/** The agent log a single JSONL record comes from, if it looks like one. */
function formatOfRecord(record: Json): JsonlFormat | undefined {
  if (isOpenHandsRecord(record)) return 'openhands';
  if (isPiRecord(record)) return 'pi';
  if (isGeminiCliRecord(record)) return 'gemini-cli';
  if (isCopilotCliRecord(record)) return 'copilot-cli';
  if (isCopilotChatLogStart(record)) return 'copilot-chat';
  if (isQwenCodeRecord(record)) return 'qwen-code';
  const type = record.type;
  if (typeof type !== 'string') return record.record_type === 'state' ? 'codex' : undefined;
  if (CODEX_TYPES.has(type) && 'payload' in record) return 'codex';
  if (CLAUDE_TYPES.has(type) && !('payload' in record)) return 'claude-code';
  // older Codex rollouts: bare Responses items, one per line
  if (type === 'function_call' || type === 'function_call_output' || type === 'reasoning' || (type === 'message' && 'role' in record))
    return 'codex';
  return undefined;
}

/** The format of a whole parsed JSON document, or undefined. */
export function classifyDocument(doc: unknown): TranscriptFormat | undefined {
  if (isRecord(doc)) {
    if (isOpenHandsRecord(doc)) return 'openhands';
    // (a Continue session has a `history` too, of items that each hold a `message`)
    if (isContinueSession(doc)) return 'continue';
    if (Array.isArray(doc.history)) return 'swe-agent';
    // (an OpenCode export has `info` and `messages` too, as mini-swe-agent's trajectory does)
    if (isOpenCodeExport(doc)) return 'opencode';
    if (isMiniSweAgent(doc)) return 'openai-chat';
    if (isClineSession(doc)) return 'cline';
    // (a chat session has a `sessionId` too)
    if (isCopilotChatSession(doc)) return 'copilot-chat';
    // a JSONL log of a single record
    const record = 'payload' in doc || 'uuid' in doc || 'sessionId' in doc ? formatOfRecord(doc) : undefined;
    if (record !== undefined) return record;
  }
  if (isClineTaskHistory(doc)) return 'cline-task';
  return classifyApiDocument(doc);
}

export function describeDocument(doc: unknown): string {
  if (Array.isArray(doc)) return `it is a JSON array of ${doc.length} element(s) that are neither messages nor Responses items`;
  if (isRecord(doc)) return `it is a JSON object with top-level keys [${Object.keys(doc).slice(0, 12).join(', ')}]`;
  return `it is a JSON ${doc === null ? 'null' : typeof doc}`;
}

function tryParse(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
}

/** Regexes for a head that stops inside a JSON value (a first line or document over 64 KB). */
function guessJsonlFromText(text: string): JsonlFormat | undefined {
  // a chat session log's first record is the whole session: often longer than the head
  if (COPILOT_CHAT_LOG_HEAD.test(text)) return 'copilot-chat';
  // an OpenHands instance line is often longer than the head: its instance_id (or the resolver's
  // issue_type) and event history tell
  if (/^\s*\{[^\n]*"(instance_id|issue_type)"\s*:/.test(text) && /"history"\s*:\s*\[/.test(text)) return 'openhands';
  if (/"type"\s*:\s*"(session_meta|response_item|turn_context|event_msg|compacted)"\s*,\s*"payload"\s*:/.test(text)) return 'codex';
  if (/^\s*\{[^\n]*"projectHash"\s*:/.test(text) && /"sessionId"\s*:/.test(text)) return 'gemini-cli';
  if (/"parentUuid"\s*:/.test(text) && /"message"\s*:\s*\{\s*"role"\s*:\s*"(user|model)"\s*,\s*"parts"\s*:/.test(text)) return 'qwen-code';
  if (/"(parentUuid|sessionId|leafUuid)"\s*:|"type"\s*:\s*"(file-history-snapshot|summary)"/.test(text)) return 'claude-code';
  if (/^\s*\{"type"\s*:\s*"session"\s*,[^\n]*"cwd"\s*:/.test(text)) return 'pi';
  if (/^\s*\{"type"\s*:\s*"session\.start"\s*,\s*"data"\s*:\s*\{[^\n]*"producer"\s*:\s*"copilot-agent"/.test(text)) return 'copilot-cli';
  return undefined;
}

function guessDocumentFromText(text: string): TranscriptFormat | undefined {
  if (/"history"\s*:\s*\[/.test(text)) return 'swe-agent';
  if (/"trajectory_format"\s*:/.test(text)) return 'openai-chat';
  if (
    /"type"\s*:\s*"(function_call|function_call_output|custom_tool_call|custom_tool_call_output|reasoning|input_text|output_text)"/.test(
      text,
    )
  ) {
    return 'openai-responses';
  }
  if (/"input"\s*:\s*[[{"]/.test(text) && !/"messages"\s*:/.test(text)) return 'openai-responses';
  if (/"type"\s*:\s*"(tool_use|tool_result|thinking|redacted_thinking)"/.test(text)) return 'anthropic-messages';
  if (/"messages"\s*:\s*\[|"tool_calls"\s*:|"role"\s*:\s*"(system|user|assistant|tool|developer)"/.test(text)) return 'openai-chat';
  return undefined;
}

export type Sniff =
  | { kind: 'jsonl'; format: JsonlFormat }
  /** format undefined: a JSON document whose head decides nothing; parse it whole to tell */
  | { kind: 'document'; format: TranscriptFormat | undefined; seen: string };

function sniffJsonl(path: string, text: string): JsonlFormat {
  const lines = text.split('\n');
  const complete = text.endsWith('\n') ? lines : lines.slice(0, -1);
  let seen: string | undefined;
  for (const line of complete.slice(0, 50)) {
    if (line.trim() === '') continue;
    const parsed = tryParse(line);
    if (!parsed.ok) continue; // a broken line: the next one may tell
    if (!isRecord(parsed.value)) {
      seen ??= `its first record is a JSON ${Array.isArray(parsed.value) ? 'array' : typeof parsed.value}, not an object`;
      continue;
    }
    const format = formatOfRecord(parsed.value);
    if (format !== undefined) return format;
    const type = parsed.value.type;
    seen ??=
      `its first record has ${typeof type === 'string' ? `type ${preview(type)}` : 'no "type"'} ` +
      `and keys [${Object.keys(parsed.value).slice(0, 12).join(', ')}]`;
  }
  const guess = guessJsonlFromText(text);
  if (guess !== undefined) return guess;
  throw unknownFormatError(
    path,
    seen ?? `no record in its first ${DETECT_HEAD_BYTES} bytes is JSON (it starts with ${preview(text.trimStart())})`,
  );
}

function looksLikeJsonl(text: string): boolean {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const [first, second] = lines;
  if (first === undefined || second === undefined) return false;
  const parsed = tryParse(first);
  return parsed.ok && isRecord(parsed.value) && second.trimStart().startsWith('{');
}

function decodeHead(firstBytes: string | Uint8Array): string {
  const text = typeof firstBytes === 'string' ? firstBytes : Buffer.from(firstBytes).toString('utf8');
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** Detection with its reasoning, for readers that will parse a document whole anyway. */
export function sniffTranscript(path: string, firstBytes: string | Uint8Array): Sniff {
  const text = decodeHead(firstBytes);
  if (text.trim() === '') throw new SpillwayError(`${path}: the file is empty; there is no transcript to read`, 'empty');
  const name = path.toLowerCase();
  if (name.endsWith('.jsonl') || name.endsWith('.ndjson') || looksLikeJsonl(text)) return { kind: 'jsonl', format: sniffJsonl(path, text) };
  if (name.endsWith('.traj')) return { kind: 'document', format: 'swe-agent', seen: 'a .traj file' };
  const start = text.trimStart()[0];
  if (start !== '{' && start !== '[') {
    throw unknownFormatError(path, `it is neither JSON nor JSONL (it starts with ${preview(text.trimStart())})`);
  }
  const parsed = tryParse(text);
  if (parsed.ok) return { kind: 'document', format: classifyDocument(parsed.value), seen: describeDocument(parsed.value) };
  // An OpenCode export longer than the head: its session info (an id `ses_…`) comes first
  if (OPENCODE_EXPORT_HEAD.test(text)) return { kind: 'document', format: 'opencode', seen: 'the start of an OpenCode export' };
  // A Copilot chat session longer than the head: its version, then who took part or its id
  if (COPILOT_CHAT_SESSION_HEAD.test(text))
    return { kind: 'document', format: 'copilot-chat', seen: 'the start of a Copilot chat session' };
  // A Continue session longer than the head: its id, title and workspace come before its history
  if (CONTINUE_SESSION_HEAD.test(text) && /"history"\s*:\s*\[/.test(text))
    return { kind: 'document', format: 'continue', seen: 'the start of a Continue session' };
  // A Cline session longer than the head: its session id and messages come first (a Claude Code record has a `message`)
  if (/^\s*\{[^\n]*"sessionId"\s*:/.test(text.replace(/\n\s*/g, ' ')) && /"messages"\s*:\s*\[/.test(text) && !/"parentUuid"\s*:/.test(text))
    return { kind: 'document', format: 'cline', seen: 'the start of a Cline session' };
  // Either a document longer than the head, or a single JSONL record cut off.
  const record = guessJsonlFromText(text);
  if (record !== undefined && !text.includes('\n')) return { kind: 'jsonl', format: record };
  return {
    kind: 'document',
    format: guessDocumentFromText(text),
    seen: `its first ${DETECT_HEAD_BYTES} bytes are the start of a JSON ${start === '[' ? 'array' : 'object'} (${preview(text.trimStart())})`,
  };
}

/**
 * The format of the transcript at `path`, from its name and first bytes (64 KB is plenty). Throws
 * a SpillwayError (code `unknown-format`) naming the file and what was seen when it cannot tell,
 * and (code `empty`) for an empty file.
 */
export function detectTranscriptFormat(path: string, firstBytes: string | Uint8Array): TranscriptFormat {
  const sniff = sniffTranscript(path, firstBytes);
  if (sniff.format === undefined) throw unknownFormatError(path, sniff.seen);
  return sniff.format;
}
