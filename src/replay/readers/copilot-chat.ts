/**
 * GitHub Copilot's chat in VS Code (agent, ask and edit modes) replayed from the session files VS
 * Code keeps: `<user data>/User/workspaceStorage/<workspace>/chatSessions/<session>.jsonl` (1.106
 * on), or `<session>.json` before; a chat exported with **Chat: Export Chat…** is the latter
 * without its version and id.
 *
 * The `.jsonl` file is VS Code's mutation log of the session (`ObjectMutationLog`): its first
 * line `{kind: 0, v}` is the whole session when the log began, each later line a change to it —
 * `{kind: 1, k: path, v}` sets the value at a path, `{kind: 2, k: path, v?, i?}` cuts the array
 * there to `i` items (when given) and appends `v`, `{kind: 3, k: path}` deletes. The `.json` file is
 * the session itself. Either way the session is `{version, sessionId, creationDate, customTitle?,
 * requests}`, a request per prompt the user sent: `message.text`, `timestamp`, `modelId`, and its
 * `result.metadata`, where Copilot keeps what it needs to send the turn again in later requests:
 * - `renderedUserMessage`: the user message exactly as Copilot rendered it (the attached context,
 *   its reminders, the `<userRequest>`), as prompt-tsx content parts (`type: 1` is text);
 * - `renderedGlobalContext` (the first request's): the workspace and environment message Copilot
 *   puts before the first prompt;
 * - `toolCallRounds`: each model call of the turn, in order (`response`, `toolCalls` with `id`,
 *   `name`, `arguments`, `thinking`, `timestamp` when the call started, `modelId`, `hookContext`);
 * - `toolCallResults`: each call's result by id, `{content: [part]}`, a part being text (`value` a
 *   string), a prompt-tsx tree (`value.node`, which Copilot's own tools answer with), or data (an
 *   image);
 * - `summaries` (older: `summary`): where Copilot summarised the conversation, by round id.
 *
 * Each round is a call, whose request is what Copilot sends (src/extension/prompts/node/agent in
 * vscode-copilot-chat): the global context, then for each earlier turn its rendered user message
 * (else its text as `<userRequest>`) and its rounds, each an assistant message with its tool calls
 * followed by one tool message per call that has a result (a round none of whose calls has one is
 * not sent again, as Copilot leaves it out of history), a hook's context after its round; then the
 * turn's own user message and rounds. A result is rendered as Copilot renders it: its parts in
 * order, a tree's text chunks joined by prompt-tsx's line-break rule, a part not meant for the model
 * (`audience` without 0) left out, `(empty)` for nothing; a text part over 8 KiB (Copilot's default
 * `chat.agent.largeToolResultsToDisk`) is what Copilot sent in its place, `Large tool result (N KB)
 * written to file. Use the read_file tool to access the content at: <file>`, a file under the
 * workspace's `GitHub.copilot-chat/chat-session-resources/`, which the engine recognises as saved
 * by the agent. Written as Chat Completions (Copilot sends Claude models Messages and GPT-5 models
 * Responses through its own endpoint; the words are the same, a note says so). A call's time is its
 * round's `timestamp` (the turn's for a first round without one). A turn with no rounds (an answer
 * without tools, an error) is one call answered by its response's markdown.
 *
 * Not in the file, so left out (a note says so): Copilot's system prompt, its tool declarations and
 * the custom instructions it adds. Thinking is left out (Copilot does not send it again in later
 * turns) and counted. A summarised conversation is replayed whole, with the summary as a compaction.
 */
import { basename, dirname, join } from 'node:path';
import { readDocument } from './document';
import type { StreamOptions } from './lines';
import { forEachRecord } from './lines';
import { SkipLog, preview } from './skip-log';
import type { Transcript, TranscriptCall, TranscriptCompaction } from './types';
import { isRecord, mostAnsweringModel, parseTime, type Json } from './wire';

/**
 * Whether a Copilot chat's `<id>.json` is superseded by the log beside it: VS Code 1.106 converts a
 * session's older whole file to the `<id>.jsonl` log and may leave both, and the log is the session
 * (Browse Agent Sessions lists it, `spillway replay DIR` replays it, the `.json` is left out).
 * `isLog` says whether a path is such a log.
 */
export function supersededByChatLog(path: string, isLog: (path: string) => boolean): boolean {
  return /\.json$/i.test(path) && isLog(`${path}l`);
}

/** How a VS Code chat session log starts: its first record, the whole session; told from a head that stops inside it. */
export const COPILOT_CHAT_LOG_HEAD = /^\s*\{\s*"kind"\s*:\s*0\s*,\s*"v"\s*:\s*\{/;
/**
 * How a VS Code chat session document starts: the session file (`<session>.json`: its version, then
 * who took part or its id) or a chat exported with **Chat: Export Chat…** (no version: who answered
 * or where the chat was opened first).
 */
export const COPILOT_CHAT_SESSION_HEAD =
  /^\s*\{\s*"(?:version"\s*:\s*\d+\s*,\s*"(?:requesterUsername|responderUsername|sessionId|creationDate|initialLocation)|requesterUsername|responderUsername|initialLocation)"\s*:/;

/** The first record of a chat session log (`{kind: 0, v}`): the session when the log began. */
export function isCopilotChatLogStart(record: Json): boolean {
  return record.kind === 0 && isRecord(record.v) && Array.isArray(record.v.requests);
}

/** A chat session document, or an exported chat: its requests, with who took part, or its version and id. */
export function isCopilotChatSession(doc: unknown): boolean {
  return (
    isRecord(doc) &&
    Array.isArray(doc.requests) &&
    ('requesterUsername' in doc ||
      'responderUsername' in doc ||
      (typeof doc.version === 'number' && ('sessionId' in doc || 'creationDate' in doc)))
  );
}

/** Copilot writes a text result over this many characters to a file and sends a pointer (its default threshold, 8 KiB). */
const COPILOT_LARGE_RESULT_CHARS = 8 * 1024;
/** The tools whose results Copilot never writes to a file (their answers are often not read back). */
const NOT_WRITTEN_TO_DISK = new Set(['search_subagent', 'execution_subagent', 'memory']);

type Path = (string | number)[];

/** Keys a path may not name: walking or setting them would reach an object's prototype, not the session's data. */
const UNSAFE_KEYS = new Set(['__proto__', 'prototype', 'constructor']);

/** The container at `path` less its last key, or undefined when the path leads nowhere. */
function parentOf(state: unknown, path: Path): Record<string | number, unknown> | undefined {
  let at: unknown = state;
  for (const key of path.slice(0, -1)) {
    if (!isRecord(at) && !Array.isArray(at)) return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return isRecord(at) || Array.isArray(at) ? (at as Record<string | number, unknown>) : undefined;
}

/**
 * Applies one record of a session log to `state` as VS Code's `ObjectMutationLog.read` does; false
 * when the record is not a change, its path leads nowhere, or it names a prototype (a file is input,
 * not trusted: `["__proto__", …]` would otherwise change every object of the process).
 */
export function applyChatMutation(state: Json, record: Json): boolean {
  const k = record.k;
  if (!Array.isArray(k) || k.length === 0) return false;
  if (!k.every((x) => typeof x === 'number' || (typeof x === 'string' && !UNSAFE_KEYS.has(x)))) return false;
  const parent = parentOf(state, k as Path);
  if (!parent) return false;
  const key = k.at(-1) as string | number;
  if (record.kind === 1 || record.kind === 3) {
    parent[key] = record.kind === 1 ? record.v : undefined;
    return true;
  }
  if (record.kind !== 2) return false;
  const arr = Array.isArray(parent[key]) ? (parent[key] as unknown[]) : [];
  if (typeof record.i === 'number') arr.length = Math.min(arr.length, Math.max(0, record.i));
  if (Array.isArray(record.v)) arr.push(...(record.v as unknown[]));
  parent[key] = arr;
  return true;
}

/** The text of prompt-tsx content parts (`renderedUserMessage`): the text parts (`type: 1`) joined. */
function renderedText(parts: unknown): string | undefined {
  if (typeof parts === 'string') return parts;
  if (!Array.isArray(parts)) return undefined;
  const texts = parts.filter(isRecord).flatMap((p) => (p.type === 1 && typeof p.text === 'string' ? [p.text] : []));
  return texts.length ? texts.join('') : undefined;
}

/**
 * The text of a prompt-tsx tree as prompt-tsx materialises it: text chunks in order, a line break
 * before a chunk that asks for one, or that opens its element when the text before it came from
 * another element. Images and opaque parts send no text.
 */
export function tsxText(root: Json): string {
  let out = '';
  const walk = (node: Json, sibling: boolean): void => {
    let isTextSibling = sibling;
    const children = Array.isArray(node.children) ? node.children : [];
    children.forEach((child, i) => {
      if (!isRecord(child)) return;
      if (typeof child.text === 'string' && child.type !== 1) {
        const breakBefore = child.lineBreakBefore === true || (i === 0 && !isTextSibling);
        if (breakBefore && out !== '' && !out.endsWith('\n')) out += '\n';
        out += child.text;
        isTextSibling = true;
      } else if (child.type === 3 || child.ctor === 3 || child.ctor === 4) {
        // an opaque part, an image or a document: no text, and the chunk after it is no text sibling
      } else {
        walk(child, isTextSibling);
        isTextSibling = false;
      }
    });
  };
  walk(root, false);
  return out;
}

interface ResultRendering {
  text: string;
  /** image and other data parts, which send no text here */
  data: number;
  /** text parts sent as Copilot's pointer to the file it wrote them to */
  written: number;
}

/** Where Copilot writes a large result of call `id` of session `session`, under the workspace's storage. */
function largeResultFile(sessionFile: string | undefined, session: string, id: string, name: string): string {
  const workspace = sessionFile && /[\\/]chatSessions$/.test(dirname(sessionFile)) ? dirname(dirname(sessionFile)) : undefined;
  const rel = ['GitHub.copilot-chat', 'chat-session-resources', session, id, name];
  return workspace ? join(workspace, ...rel) : rel.join('/');
}

/** What Copilot sends for a text part it wrote to a file (toolCalling.tsx `ToolResult.onText`). */
function writtenToDisk(content: string, file: (name: string) => string): string {
  let text = content;
  let name = 'content.txt';
  let schema = false;
  try {
    text = JSON.stringify(JSON.parse(content), null, 2);
    name = 'content.json';
    schema = true;
  } catch {
    // not JSON: written as it is
  }
  const kb = Math.round(text.length / 1024);
  return (
    `Large tool result (${kb}KB) written to file. Use the read_file tool to access the content at: ${file(name)}` +
    (schema ? `\n\nData schema found at: ${file('schema.json')}` : '')
  );
}

/** A tool result as Copilot renders it for the model (see the module comment). */
function renderResult(result: Json, tool: string, file: (name: string) => string): ResultRendering {
  const node: Json = { children: [] };
  const children = node.children as Json[];
  let data = 0;
  let written = 0;
  const parts = Array.isArray(result.content) ? result.content.filter(isRecord) : [];
  for (const part of parts) {
    if (Array.isArray(part.audience) && !part.audience.includes(0)) continue;
    if (typeof part.value === 'string') {
      let text = part.value;
      if (text.length > COPILOT_LARGE_RESULT_CHARS && !NOT_WRITTEN_TO_DISK.has(tool)) {
        text = writtenToDisk(text, file);
        written += 1;
      }
      children.push({ text, lineBreakBefore: false });
    } else if (isRecord(part.value) && isRecord(part.value.node)) {
      children.push({ children: [part.value.node] });
    } else if (typeof part.mimeType === 'string') {
      data += 1;
    }
  }
  const text = tsxText(node);
  return { text: text === '' ? '(empty)' : text, data, written };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The markdown of a response's parts (an answer given without tool calls). */
function responseMarkdown(response: unknown): string {
  if (!Array.isArray(response)) return '';
  let out = '';
  for (const p of response.filter(isRecord)) {
    if (p.kind !== undefined && p.kind !== 'markdownContent') continue;
    // a Markdown string (`value`), or one inside the part (`value.value`, `content.value`), by VS Code's version
    const v = isRecord(p.value) ? p.value.value : isRecord(p.content) ? p.content.value : p.value;
    if (typeof v === 'string') out += v;
  }
  return out;
}

/** The model a round or request names: Copilot's `copilot/` vendor prefix dropped. */
function modelName(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v.replace(/^copilot\//, '') : undefined;
}

/** The round ids Copilot summarised the conversation at, with each summary's text. */
function summariesOf(metadata: Json): Map<string, string> {
  const list = Array.isArray(metadata.summaries) ? metadata.summaries : isRecord(metadata.summary) ? [metadata.summary] : [];
  const out = new Map<string, string>();
  for (const s of list.filter(isRecord))
    if (typeof s.toolCallRoundId === 'string') out.set(s.toolCallRoundId, typeof s.text === 'string' ? s.text : '');
  return out;
}

/** What Copilot kept of a request's turn (`result.metadata`); `{}` when it kept nothing. */
function metadataOf(req: Json): Json {
  return isRecord(req.result) && isRecord(req.result.metadata) ? req.result.metadata : {};
}

/** Builds the transcript of a chat session (see the module comment); `file` is where the session is, for the files Copilot wrote results to. */
export function copilotChatTranscript(state: Json, log: SkipLog, file?: string): Transcript {
  const requests = Array.isArray(state.requests) ? state.requests.filter(isRecord) : [];
  const session = str(state.sessionId) ?? (file ? basename(file).replace(/\.jsonl?$/, '') : 'session');
  // results by call id, of every turn: a turn stopped at its tool-call limit finds its last results in the next
  const results = new Map<string, Json>();
  for (const r of requests) {
    const m = metadataOf(r);
    if (isRecord(m.toolCallResults)) for (const [id, v] of Object.entries(m.toolCallResults)) if (isRecord(v)) results.set(id, v);
  }
  const items: Json[] = [];
  const calls: TranscriptCall[] = [];
  const models: string[] = [];
  const compactions: TranscriptCompaction[] = [];
  let thinking = 0;
  let unanswered = 0;
  let data = 0;
  let written = 0;
  requests.forEach((req, n) => {
    const metadata = metadataOf(req);
    const rounds = Array.isArray(metadata.toolCallRounds) ? metadata.toolCallRounds.filter(isRecord) : [];
    const answer = responseMarkdown(req.response);
    if (rounds.length === 0 && answer === '') {
      log.skip('no-answer', `request ${n + 1}: no model call recorded (cancelled, or an error before the model answered)`);
      return;
    }
    if (n === 0 || items.length === 0) {
      const global = renderedText(metadata.renderedGlobalContext);
      if (global) items.push({ role: 'user', content: global });
    }
    const message = isRecord(req.message) ? str(req.message.text) : undefined;
    const user = renderedText(metadata.renderedUserMessage) ?? `<userRequest>\n${message ?? ''}\n</userRequest>`;
    items.push({ role: 'user', content: user });
    const requestTime = parseTime(req.timestamp);
    const requestModel = modelName(metadata.resolvedModel) ?? modelName(req.modelId);
    const summaries = summariesOf(metadata);
    if (rounds.length === 0) {
      calls.push({ end: items.length, reply: answer, ...(requestTime !== undefined ? { at: requestTime } : {}) });
      items.push({ role: 'assistant', content: answer });
      if (requestModel) models.push(requestModel);
      return;
    }
    rounds.forEach((round, j) => {
      const asked = Array.isArray(round.toolCalls) ? round.toolCalls.filter(isRecord) : [];
      const sent = asked.filter((c) => typeof c.id === 'string' && results.has(c.id));
      if (asked.length > 0 && sent.length === 0) {
        unanswered += 1;
        return;
      }
      const response = str(round.response) ?? '';
      if (round.thinking !== undefined) thinking += 1;
      const at = parseTime(round.timestamp) ?? (j === 0 ? requestTime : undefined);
      const args = sent.map((c) => str(c.arguments) ?? '');
      calls.push({ end: items.length, reply: [response, ...args].filter((s) => s !== '').join('\n'), ...(at !== undefined ? { at } : {}) });
      const model = modelName(metadata.resolvedModel) ?? modelName(round.modelId) ?? requestModel;
      if (model) models.push(model);
      items.push({
        role: 'assistant',
        content: sent.length ? response || null : response,
        ...(sent.length
          ? {
              tool_calls: sent.map((c) => ({
                id: c.id as string,
                type: 'function',
                function: { name: str(c.name) ?? '', arguments: str(c.arguments) ?? '{}' },
              })),
            }
          : {}),
      });
      for (const c of sent) {
        const id = c.id as string;
        const name = str(c.name) ?? '';
        const r = renderResult(results.get(id)!, name, (f) => largeResultFile(file, session, id, f));
        data += r.data;
        written += r.written;
        items.push({ role: 'tool', tool_call_id: id, content: r.text });
      }
      if (typeof round.hookContext === 'string' && round.hookContext !== '') items.push({ role: 'user', content: round.hookContext });
      const summary = typeof round.id === 'string' ? summaries.get(round.id) : undefined;
      if (summary !== undefined)
        compactions.push({ calls: calls.length, line: n + 1, ...(model ? { model } : {}), summary: str(round.summary) ?? summary });
    });
  });
  const model = mostAnsweringModel(models, log);
  if (unanswered)
    log.note(`${unanswered} round(s) whose tool calls have no result are left out, as Copilot leaves them out of later requests`);
  if (thinking) log.note(`the thinking of ${thinking} round(s) is left out (Copilot does not send it again in later turns)`);
  if (data) log.note(`${data} image or data part(s) of tool results are left out`);
  if (written)
    log.note(
      `${written} result(s) over ${COPILOT_LARGE_RESULT_CHARS} characters are sent as Copilot's pointer to the file it writes them to (chat.agent.largeToolResultsToDisk, on by default)`,
    );
  if (compactions.length)
    log.note(
      `Copilot summarised the conversation ${compactions.length} time(s) (request ${[...new Set(compactions.map((c) => c.line))].join(', ')}): the replay keeps the whole history`,
    );
  log.note(
    'Copilot sends its system prompt, its tool declarations and custom instructions, which the session file does not hold, so calls replay without them; written as Chat Completions (Copilot sends Claude models Messages and GPT-5 models Responses, with the same words)',
  );
  return {
    source: 'copilot-chat',
    wire: 'openai-chat',
    base: model ? { model } : {},
    items,
    calls,
    ...(compactions.length ? { compactions } : {}),
    skipped: log.result(),
  };
}

/** Reads a VS Code chat session: a mutation log (`.jsonl`) or the session document (`.json`). */
export async function readCopilotChat(path: string, opts: StreamOptions = {}): Promise<Transcript> {
  const log = new SkipLog();
  if (!path.toLowerCase().endsWith('.jsonl')) {
    const doc = await readDocument(path, opts);
    return copilotChatTranscript(isRecord(doc) ? doc : {}, log, path);
  }
  let state: Json | undefined;
  await forEachRecord(path, opts, log, (r, line) => {
    if (isCopilotChatLogStart(r)) {
      state = r.v as Json;
      return;
    }
    if (!state) {
      log.skipNoteFirst('before-start', `line ${line}: a change before the session's first record (${preview(JSON.stringify(r))})`);
      return;
    }
    if (!applyChatMutation(state, r))
      log.skipNoteFirst(
        'bad-change',
        `line ${line}: not a change VS Code writes, or its path leads nowhere (${preview(JSON.stringify(r))})`,
      );
  });
  return copilotChatTranscript(state ?? {}, log, path);
}
