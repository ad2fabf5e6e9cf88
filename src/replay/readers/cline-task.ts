/**
 * Task histories of the Cline family of VS Code extensions: `tasks/<id>/api_conversation_history.json`
 * in the extension's global storage, kept by Cline's extension before it ran on Cline's SDK
 * (`saoudrizwan.claude-dev`), by Roo Code (`rooveterinaryinc.roo-cline`) and by Kilo Code
 * (`kilocode.kilo-code`). The file is one JSON array of Anthropic Messages messages as the extension
 * keeps them, each with fields of its own that it removes before sending: `ts` (when the message was
 * added, ms), Cline's `modelInfo` (`modelId`, `providerId`) and `metrics`, Roo Code's `isSummary`,
 * `condenseId` / `condenseParent` (a condensed history), `truncationId` / `truncationParent`, `id`,
 * `reasoning_details`, and reasoning of other providers kept beside the messages (Roo Code: a
 * standalone `{type: "reasoning"}` entry, or a `reasoning` block first in an answer's content).
 *
 * Read as the requests the extension sent: each message as `{role, content}`, reasoning entries and
 * blocks left out (Roo Code sends a plain-text one to no provider, an encrypted one only to OpenAI's
 * Responses API, which the replay's Anthropic wire cannot carry: counted), a thinking block without
 * a signature left out (Cline drops it), the blocks' own extra fields (`call_id`,
 * `reasoning_details`, a text block's `signature`) removed, and two messages of one role in a row
 * merged into one, as Roo Code does before sending. A result Cline's extension kept as text after
 * its call (`[read_file for 'a.ts'] Result:` and the output, which it writes when it has lost the
 * call's id) is sent as that call's tool_result, the same text: a Messages request needs one for
 * each call, and the engine then reduces it as the tool output it is. Calls: each run of assistant messages is the
 * answer of one call, dated by the `ts` of the message before it (the cache's expiry between calls
 * is billed from those times); a history that ends with the user's or a tool's message had one more
 * call, sent and not answered. The model is the one most answers name (Cline's `modelInfo`);
 * Roo Code and Kilo Code do not name it in this file.
 *
 * Not reproduced, and said so in a note: the system prompt and tool definitions (not in the file);
 * the provider's own wire format when it was not Anthropic's; a history the extension cut or
 * condensed before sending (Cline's deleted range lives in its task list, not here; Roo Code's
 * condensed messages are kept in the replay, as compactions are: its calls after one are what the
 * agent would have sent without it); and tool calls written as XML in the answer's text (the
 * extensions' older protocol), whose results are user text the engine does not know as tool results.
 */
import { SpillwayError } from '../../engine/types';
import { SkipLog } from './skip-log';
import type { Transcript } from './types';
import { computeCalls, isRecord, mostAnsweringModel, parseTime, type Json } from './wire';

/** Fields of a content block that are the extension's own, never sent to Anthropic. */
const BLOCK_OWN_FIELDS = ['call_id', 'reasoning_details'];
/** Roo Code's and Cline's own fields on a message: any of them tells this format from a saved request. */
const OWN_MESSAGE_FIELDS = ['ts', 'modelInfo', 'metrics', 'isSummary', 'condenseId', 'condenseParent', 'truncationId', 'truncationParent'];
/** An XML tool call of the extensions' older protocol, as the model wrote it in its text. */
const XML_TOOL_CALL =
  /<(read_file|write_to_file|replace_in_file|apply_diff|execute_command|search_files|list_files|list_code_definition_names|attempt_completion)>/;

/**
 * True for a Cline-family task history: a JSON array of user and assistant messages (and Roo Code's
 * reasoning entries), at least one of them carrying the extension's own fields (`ts` above all).
 */
export function isClineTaskHistory(doc: unknown): doc is unknown[] {
  if (!Array.isArray(doc) || doc.length === 0) return false;
  let own = false;
  for (const m of doc) {
    if (!isRecord(m)) return false;
    if (m.type === 'reasoning' && !('role' in m)) continue;
    if (m.role !== 'user' && m.role !== 'assistant') return false;
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) return false;
    if ('tool_calls' in m) return false;
    if (OWN_MESSAGE_FIELDS.some((k) => k in m)) own = true;
  }
  return own;
}

/** The note on the first reasoning the reader leaves out (an entry of its own, or a block of an answer). */
const reasoningNote = (where: string): string =>
  `${where}: reasoning kept beside the answer (sent to no provider as text, and encrypted only to OpenAI's Responses API): left out, as are the others`;

/** A content block as sent, or undefined when the extension leaves it out of the request. */
function sentBlock(block: unknown, log: SkipLog, where: string): unknown {
  if (!isRecord(block)) return block;
  if (block.type === 'reasoning') {
    log.skipNoteFirst('reasoning', reasoningNote(where));
    return undefined;
  }
  if (block.type === 'thinking' && typeof block.signature !== 'string') {
    log.skipNoteFirst('unsigned-thinking', `${where}: a thinking block without a signature, which the extension does not send: left out`);
    return undefined;
  }
  const out: Json = { ...block };
  for (const k of BLOCK_OWN_FIELDS) delete out[k];
  if (block.type !== 'thinking' && 'signature' in out) delete out.signature;
  return out;
}

/** A Cline-family task history as the requests the extension sent (see the module comment). */
export function clineTaskTranscript(doc: unknown, path: string): Transcript {
  if (!isClineTaskHistory(doc)) {
    throw new SpillwayError(
      `${path}: not a Cline, Roo Code or Kilo Code task history (a JSON array of user and assistant messages with their "ts")`,
      'invalid-input',
    );
  }
  const log = new SkipLog();
  const items: Json[] = [];
  const times: (number | undefined)[] = [];
  const models: string[] = [];
  let condensed = 0;
  let toolUses = 0;
  let xmlCalls = 0;
  let textResults = 0;
  doc.forEach((raw, i) => {
    const m = raw as Json;
    if (m.type === 'reasoning' && !('role' in m)) {
      log.skipNoteFirst('reasoning', reasoningNote(`message ${i}`));
      return;
    }
    if (typeof m.condenseParent === 'string' || typeof m.truncationParent === 'string') condensed += 1;
    let content: unknown = m.content;
    if (Array.isArray(content)) {
      content = content.map((b) => sentBlock(b, log, `message ${i}`)).filter((b) => b !== undefined);
      for (const b of content as unknown[]) if (isRecord(b) && b.type === 'tool_use') toolUses += 1;
      if ((content as unknown[]).length === 0) {
        log.skip('empty', `message ${i}: nothing of it is sent once its reasoning is left out`);
        return;
      }
    }
    if (m.role === 'assistant') {
      const text = typeof content === 'string' ? content : JSON.stringify(content);
      if (XML_TOOL_CALL.test(text)) xmlCalls += 1;
      const info = isRecord(m.modelInfo) ? m.modelInfo : undefined;
      if (typeof info?.modelId === 'string') models.push(info.modelId);
    }
    const last = items.at(-1);
    if (m.role === 'user' && last?.role === 'assistant' && Array.isArray(content)) {
      const paired = pairResults(last.content, content);
      if (paired) {
        content = paired.content;
        textResults += paired.count;
      }
    }
    // two messages of one role in a row (a condensed message beside its summary) are one turn to the
    // API: Roo Code merges them before sending (mergeConsecutiveApiMessages), and so does the replay
    if (last && last.role === m.role) {
      last.content = [...asBlocks(last.content), ...asBlocks(content)] as Json[keyof Json];
      times[items.length - 1] = parseTime(m.ts) ?? times[items.length - 1];
      return;
    }
    // sent as the role and content alone: every other field is the extension's own
    items.push({ role: m.role, content: content as Json[keyof Json] });
    times.push(parseTime(m.ts));
  });
  if (items.length === 0) throw new SpillwayError(`${path}: the task history holds no message the extension would send`, 'invalid-input');
  const endsAnswered = items.at(-1)!.role === 'assistant';
  const calls = computeCalls('anthropic-messages', items, !endsAnswered, times);
  const model = mostAnsweringModel(models, log);
  log.note(
    'a Cline, Roo Code or Kilo Code task history: replayed in Anthropic Messages as the extension keeps it, without its system prompt and tool definitions (not in the file)',
  );
  if (condensed > 0)
    log.note(
      `${condensed} message(s) were condensed or cut by the extension before later requests: the replay keeps them, as it keeps a compacted history`,
    );
  if (textResults > 0)
    log.note(
      `${textResults} tool result(s) were kept as text after their calls ("[read_file for '…'] Result:", as the extension writes a result whose call id it lost): each is sent as its call's tool_result, the same text`,
    );
  if (toolUses === 0 && xmlCalls > 0)
    log.note(
      `${xmlCalls} answer(s) call tools in XML text (the extensions' older protocol): their results are user text, not tool results, so nothing is reduced`,
    );
  return {
    source: 'cline-task',
    wire: 'anthropic-messages',
    base: model !== undefined ? { model } : {},
    items,
    calls,
    skipped: log.result(),
  };
}

/** A message's content as a list of blocks (a string is one text block). */
function asBlocks(content: unknown): unknown[] {
  if (Array.isArray(content)) return content;
  return typeof content === 'string' && content !== '' ? [{ type: 'text', text: content }] : [];
}

/** A result the extension wrote as text: `[read_file for 'a.txt'] Result:` and the output (its tool's name first). */
const TEXT_RESULT = /^\[([A-Za-z_]+)(?: for [\s\S]*?)?\] Result:/;

/**
 * A user message that answers an answer's tool calls with results written as text (the extensions
 * do so when they lose a call's id: ToolResultUtils of Cline's extension), as the tool_result blocks
 * of those calls, first in the message as the Messages API asks, the rest after; undefined when it
 * already holds tool results, or none of its text is a result. Each text result goes to the first
 * unanswered call of its tool, then (a tool the text names otherwise: `[subagents]` for
 * `use_subagents`) to the first unanswered call.
 */
function pairResults(answer: unknown, content: unknown[]): { content: unknown[]; count: number } | undefined {
  if (!Array.isArray(answer) || content.some((b) => isRecord(b) && b.type === 'tool_result')) return undefined;
  const calls = answer.filter((b): b is Json => isRecord(b) && b.type === 'tool_use' && typeof b.id === 'string');
  if (calls.length === 0) return undefined;
  const open = new Set(calls);
  const results = new Map<Json, Json>();
  const rest: unknown[] = [];
  for (const b of content) {
    const m = isRecord(b) && b.type === 'text' && typeof b.text === 'string' ? TEXT_RESULT.exec(b.text) : null;
    const call = m ? ([...open].find((c) => c.name === m[1]) ?? [...open][0]) : undefined;
    if (!call) {
      rest.push(b);
      continue;
    }
    open.delete(call);
    results.set(call, { type: 'tool_result', tool_use_id: call.id, content: (b as Json).text });
  }
  if (results.size === 0) return undefined;
  const ordered = calls.filter((c) => results.has(c)).map((c) => results.get(c)!);
  return { content: [...ordered, ...rest], count: results.size };
}
