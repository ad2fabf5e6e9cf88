/**
 * Gemini CLI's saved chats (`~/.gemini/tmp/<project>/chats/session-<time>-<id>.jsonl`) as Gemini API
 * `contents`.
 *
 * The file (ChatRecordingService, Gemini CLI 0.4x–0.61) is a log of updates, not a list of turns:
 * - the first line is the metadata (`sessionId`, `projectHash`, `startTime`, `kind`);
 * - a message record (`id`, `type` `user` | `gemini` | `info` | `error` | `warning`, `content`) is
 *   written when it starts and written again, with the same id, as it grows (a `gemini` record gets
 *   its `toolCalls`, each with the `result` parts sent back): the last version of an id wins and
 *   keeps the place of the first;
 * - `{"$set": {…}}` updates the metadata; a `$set` holding `messages` replaces the whole list (a
 *   checkpoint: the session context Gemini CLI sends first is written this way);
 * - `{"$rewindTo": id}` drops that message and everything after it (a rewound conversation).
 * Older versions saved the whole record as one `.json` document (`{sessionId, …, messages}`): read
 * the same way.
 *
 * The contents: a `user` message's parts as they are (its text, or the function responses Gemini
 * CLI 0.61 writes as a user message of their own); a `gemini` message as a `model` content with its
 * text and one `functionCall` per tool call, followed by the `functionResponse` parts of the calls'
 * results as a `user` content, unless a user message of the log already carries those responses
 * (0.61 writes both; older versions only the results). `info`, `error` and `warning` messages are
 * the CLI's own and never sent to the model: counted and skipped. The system prompt and tool
 * declarations are not saved, so calls replay without them (base holds the model only). A call's
 * time (`at`) is that of the last record of its request: the user message, or the tool calls whose
 * results it sends (see `contentsOf`).
 */
import { forEachRecord, type StreamOptions } from './lines';
import { SkipLog, preview } from './skip-log';
import type { Transcript } from './types';
import { computeCalls, isRecord, parseTime, type Json } from './wire';

/** Messages Gemini CLI shows but does not send. */
const LOCAL_TYPES: ReadonlySet<string> = new Set(['info', 'error', 'warning']);

/** True for the metadata line (or a whole legacy record): what tells this format apart. */
export function isGeminiCliRecord(record: Json): boolean {
  return typeof record.sessionId === 'string' && typeof record.projectHash === 'string' && !('type' in record);
}

/** The log replayed into the final message list, as Gemini CLI itself loads it. */
class Conversation {
  readonly messages = new Map<string, Json>();
  model: string | undefined;

  constructor(private readonly log: SkipLog) {}

  record(record: Json, line: number | string): void {
    if (typeof record.$rewindTo === 'string') {
      const id = record.$rewindTo;
      let found = false;
      let dropped = 0;
      for (const key of [...this.messages.keys()]) {
        if (key === id) found = true;
        if (found) {
          this.messages.delete(key);
          dropped++;
        }
      }
      if (!found) {
        dropped = this.messages.size;
        this.messages.clear();
      }
      this.log.note(`${line}: rewound to ${preview(id)} (${dropped} message(s) dropped, as Gemini CLI drops them)`);
      return;
    }
    if (isRecord(record.$set)) {
      if (Array.isArray(record.$set.messages)) {
        this.messages.clear();
        record.$set.messages.forEach((m, i) => (isRecord(m) ? this.message(m, `${line}, $set.messages[${i}]`) : undefined));
      }
      return;
    }
    if (typeof record.id === 'string') {
      this.message(record, line);
      return;
    }
    if (isGeminiCliRecord(record)) {
      // the metadata line, or a whole legacy record
      if (Array.isArray(record.messages))
        record.messages.forEach((m, i) => (isRecord(m) ? this.message(m, `${line}, messages[${i}]`) : undefined));
      return;
    }
    this.log.skipNoteFirst(
      'unknown-record',
      `${line}: a record with neither an id, $set nor $rewindTo (skipped; further ones counted only)`,
    );
  }

  private message(m: Json, where: number | string): void {
    if (typeof m.id !== 'string') {
      this.log.skip('no-id', `${where}: a message without an id`);
      return;
    }
    // a record written again replaces the earlier one in its place
    this.messages.set(m.id, m);
    if (m.type === 'gemini' && typeof m.model === 'string') this.model = m.model;
  }
}

/** Parts of a message's `content`: a string is one text part; a part list as it is; a single part in a list. */
function partsOf(content: unknown): Json[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  if (Array.isArray(content))
    return content.flatMap((p) => (typeof p === 'string' ? (p === '' ? [] : [{ text: p }]) : isRecord(p) ? [p] : []));
  return isRecord(content) ? [content] : [];
}

function responseId(part: Json): string | undefined {
  return isRecord(part.functionResponse) && typeof part.functionResponse.id === 'string' ? part.functionResponse.id : undefined;
}

/**
 * The latest of some records' times, or undefined when any of them has no valid time (a time is
 * never guessed from the others).
 */
function latest(values: unknown[]): number | undefined {
  let out: number | undefined;
  for (const v of values) {
    const t = parseTime(v);
    if (t === undefined) return undefined;
    out = out === undefined ? t : Math.max(out, t);
  }
  return out;
}

/**
 * The contents of the final message list (see the module comment), and per content the time of the
 * last record in it: a message's `timestamp`; for the function responses of a gemini message, the
 * latest of its tool calls' `timestamp`s (when each finished), or that of the user record that wrote
 * the same responses again (0.61), which comes last.
 */
function contentsOf(messages: Iterable<Json>, log: SkipLog): { contents: unknown[]; times: (number | undefined)[] } {
  const contents: unknown[] = [];
  const times: (number | undefined)[] = [];
  // function responses already sent from a gemini message's tool call results
  const answered = new Set<string>();
  /** the last content is the function responses of a gemini message */
  let resultsLast = false;
  for (const m of messages) {
    const type = typeof m.type === 'string' ? m.type : '(no type)';
    if (type === 'user') {
      const parts = partsOf(m.content);
      const responses = parts.filter((p) => isRecord(p.functionResponse));
      if (responses.length > 0 && responses.length === parts.length && responses.every((p) => answered.has(responseId(p) ?? ''))) {
        log.skip('function-responses-again');
        if (resultsLast) times[times.length - 1] = parseTime(m.timestamp);
        continue;
      }
      resultsLast = false;
      if (parts.length) {
        contents.push({ role: 'user', parts });
        times.push(parseTime(m.timestamp));
      } else log.skip('empty-user-message');
      continue;
    }
    if (type === 'gemini') {
      const parts = partsOf(m.content).filter((p) => p.thought !== true);
      const calls = Array.isArray(m.toolCalls) ? m.toolCalls.filter(isRecord) : [];
      const results: Json[] = [];
      const finished: unknown[] = [];
      for (const c of calls) {
        if (typeof c.name !== 'string') continue;
        parts.push({
          functionCall: { ...(typeof c.id === 'string' ? { id: c.id } : {}), name: c.name, args: isRecord(c.args) ? c.args : {} },
        });
        for (const r of partsOf(c.result)) {
          if (!isRecord(r.functionResponse)) continue;
          results.push(r);
          finished.push(c.timestamp);
          const id = responseId(r);
          if (id !== undefined) answered.add(id);
        }
      }
      resultsLast = false;
      if (parts.length) {
        contents.push({ role: 'model', parts });
        times.push(parseTime(m.timestamp));
      } else log.skip('empty-gemini-message');
      if (results.length) {
        contents.push({ role: 'user', parts: results });
        times.push(latest(finished));
        resultsLast = true;
      }
      continue;
    }
    if (LOCAL_TYPES.has(type)) log.skip(type);
    else log.skipNoteFirst(`unknown:${type}`, `message ${preview(String(m.id))}: unknown message type ${preview(type)} (skipped)`);
  }
  return { contents, times };
}

function transcript(conversation: Conversation, log: SkipLog): Transcript {
  const { contents: items, times } = contentsOf(conversation.messages.values(), log);
  return {
    source: 'gemini-cli',
    wire: 'gemini',
    base: conversation.model !== undefined ? { model: conversation.model } : {},
    items,
    calls: computeCalls('gemini', items, false, times),
    skipped: log.result(),
  };
}

/** Reads a saved chat (`session-*.jsonl`), line by line. */
export async function readGeminiCli(path: string, opts: StreamOptions = {}): Promise<Transcript> {
  const log = new SkipLog();
  const conversation = new Conversation(log);
  await forEachRecord(path, opts, log, (record, line) => conversation.record(record, `line ${line}`));
  return transcript(conversation, log);
}

/** Reads a saved chat of an older Gemini CLI: the whole record as one JSON document. */
export function geminiCliDocument(doc: unknown): Transcript {
  const log = new SkipLog();
  const conversation = new Conversation(log);
  if (isRecord(doc)) conversation.record(doc, 'the document');
  return transcript(conversation, log);
}
