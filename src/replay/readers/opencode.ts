/**
 * OpenCode sessions, as `opencode export <session>` writes them, replayed as the requests OpenCode
 * sent.
 *
 * OpenCode (1.18) keeps its sessions in a SQLite database (`~/.local/share/opencode/opencode.db`);
 * `opencode export` prints one as a JSON document: `info` (the session: `id`, `directory`, `title`,
 * `version`, `model`) and `messages`, each `{info, parts}`:
 * - a user message's parts: its `text` (a `synthetic` one is what OpenCode added, an `ignored` one it
 *   does not send), `file` attachments, and the `compaction` part that asked for a summary;
 * - an assistant message is one model call (one step): `step-start`, its `reasoning`, `text` and
 *   `tool` parts (`tool`, `callID`, `state.status`, `state.input`, `state.output` as the tool
 *   returned it, cut by OpenCode's own limits before it was stored), `step-finish` with the usage.
 *
 * Before each request OpenCode turns these into the AI SDK's messages (`MessageV2.toModelMessages`,
 * read in the 1.18.33 binary): a user message's text and files; an assistant message's text,
 * reasoning and tool calls, each tool's result after it (a completed tool's output, an errored
 * one's error, `[Tool execution was interrupted]` for one left running, and `[Old tool result content
 * cleared]` for an output its pruning cleared); an assistant message that ended in an error is left
 * out. The provider then writes them in its wire format; this reader writes that format for the
 * session's provider: `anthropic` as Anthropic Messages (tool results in the user message after the
 * call, as `tool_result` blocks), `openai` as Responses input (`function_call` and
 * `function_call_output` items), any other as Chat Completions. The agents suite checks the first
 * two against what the real CLI sent, but for what OpenCode adds that the export does not hold: its
 * system prompt and its tool declarations (a note says so).
 *
 * Calls: each assistant message that got an answer is a call; its request is everything before it,
 * its time the message's `time.created`.
 *
 * Kilo's CLI (7.7), OpenCode's fork, whose server the Kilo Code extension (7 on) runs, exports the
 * same document (its `version` is Kilo's) and sends one more text part after each prompt's, which its
 * export does not hold: `<environment_details>` with the prompt's time to the second, the folder and
 * the workspace root. This reader writes it back, from the prompt's time and the next answer's
 * `path`; the agents suite checks it against what the real `kilo` sent.
 *
 * Not reproduced, and said so in a note:
 * - the pruning of old outputs: an output OpenCode cleared later (`state.time.compacted`) was sent
 *   whole before that and cleared after; the replay sends it whole throughout, as calls extend each
 *   other here;
 * - a compaction: OpenCode then sends the summary and what followed it, not the whole history; the
 *   replay keeps the whole history and lists the compaction (`compactions`), as for Claude Code;
 * - the reasoning items of the Responses wire and Anthropic's thinking blocks are written from what
 *   the export holds (their signatures and encrypted content); no recording here had them.
 */
import { SpillwayError } from '../../engine/types';
import type { WireFormat } from '../../engine/types';
import { SkipLog, preview } from './skip-log';
import type { Transcript, TranscriptCall, TranscriptCompaction } from './types';
import { isRecord, mostAnsweringModel, type Json } from './wire';

/** What OpenCode sends for a tool output its pruning cleared. */
export const OPENCODE_CLEARED = '[Old tool result content cleared]';
/** What OpenCode sends for a tool call that never finished. */
export const OPENCODE_INTERRUPTED = '[Tool execution was interrupted]';
/** What OpenCode asks the model at a compaction, in place of the compaction part. */
const COMPACTION_PROMPT = 'What did we do so far?';
const SUBTASK_PROMPT = 'The following tool was executed by the user';

/** How `opencode export` starts: the session's info, its id first (`ses_…`); told from a head that stops inside the document. */
export const OPENCODE_EXPORT_HEAD = /^\s*\{\s*"info"\s*:\s*\{\s*"id"\s*:\s*"ses_/;

/** An `opencode export` document: the session's `info` (an id) and its messages as `{info, parts}`. */
export function isOpenCodeExport(doc: unknown): doc is Json {
  if (!isRecord(doc) || !isRecord(doc.info) || !Array.isArray(doc.messages)) return false;
  if (typeof doc.info.id !== 'string' || !('directory' in doc.info || 'projectID' in doc.info)) return false;
  const first: unknown = doc.messages[0];
  return first === undefined || (isRecord(first) && isRecord(first.info) && Array.isArray(first.parts));
}

/** One tool result as OpenCode sends it: its text, and whether it is an error. */
interface Result {
  id: string;
  text: string;
  error: boolean;
}

/** An assistant message's content, in the order of its parts. */
type Piece =
  | { kind: 'text'; text: string; meta?: Json }
  | { kind: 'reasoning'; text: string; meta?: Json }
  | { kind: 'call'; id: string; name: string; input: unknown; meta?: Json };

/** The wire a provider's requests are in: Anthropic's for `anthropic`, Responses for `openai`, else Chat Completions. */
function wireOf(provider: string | undefined): WireFormat {
  if (provider === 'anthropic') return 'anthropic-messages';
  if (provider === 'openai') return 'openai-responses';
  return 'openai-chat';
}

/** A tool result's text as the AI SDK writes a string or JSON output. */
function outputText(output: unknown): string {
  return typeof output === 'string' ? output : JSON.stringify(output ?? null);
}

/** The provider's metadata under `key` (`anthropic`, `openai`), when the part has it. */
function metaOf(meta: Json | undefined, key: string): Json | undefined {
  const m = meta?.[key];
  return isRecord(m) ? m : undefined;
}

/** Writes the requests in one wire format, message by message. */
class Writer {
  readonly items: Json[] = [];
  /** index of the item each call's request ends before, with its reply and time */
  readonly calls: TranscriptCall[] = [];

  constructor(readonly wire: WireFormat) {}

  /** A user message: its text parts (and files, as a note said). */
  user(texts: string[]): void {
    if (texts.length === 0) return;
    if (this.wire === 'anthropic-messages') {
      const blocks = texts.map((text) => ({ type: 'text', text }));
      const last = this.items.at(-1);
      // the AI SDK writes a user message after tool results into the same user turn
      if (last?.role === 'user' && Array.isArray(last.content) && !this.endsCall()) (last.content as Json[]).push(...blocks);
      else this.items.push({ role: 'user', content: blocks });
    } else if (this.wire === 'openai-responses') {
      this.items.push({ role: 'user', content: texts.map((text) => ({ type: 'input_text', text })) });
    } else {
      this.items.push({ role: 'user', content: texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: 'text', text })) });
    }
  }

  /** Whether the last item is the last of a call's request (nothing may be merged into it). */
  private endsCall(): boolean {
    return this.calls.at(-1)?.end === this.items.length;
  }

  /** A call: its request is every item so far; then its answer's items and its tools' results. */
  call(pieces: Piece[], results: Result[], at: number | undefined, differentModel: boolean): void {
    const reply = pieces
      .filter((p) => p.kind === 'text')
      .map((p) => p.text)
      .join('\n');
    this.calls.push({ end: this.items.length, reply, ...(at !== undefined ? { at } : {}) });
    if (this.wire === 'anthropic-messages') this.anthropic(pieces, results, differentModel);
    else if (this.wire === 'openai-responses') this.responses(pieces, results, differentModel);
    else this.chat(pieces, results);
  }

  private anthropic(pieces: Piece[], results: Result[], differentModel: boolean): void {
    const content: Json[] = [];
    for (const p of pieces) {
      if (p.kind === 'text') {
        if (p.text !== '') content.push({ type: 'text', text: p.text });
      } else if (p.kind === 'reasoning') {
        const meta = differentModel ? undefined : metaOf(p.meta, 'anthropic');
        if (typeof meta?.signature === 'string') content.push({ type: 'thinking', thinking: p.text, signature: meta.signature });
        else if (typeof meta?.redactedData === 'string') content.push({ type: 'redacted_thinking', data: meta.redactedData });
      } else {
        content.push({ type: 'tool_use', id: p.id, name: p.name, input: p.input ?? {} });
      }
    }
    if (content.length > 0) this.items.push({ role: 'assistant', content });
    if (results.length > 0)
      this.items.push({
        role: 'user',
        content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.text, ...(r.error ? { is_error: true } : {}) })),
      });
  }

  /** (OpenCode asks the API not to store responses: the AI SDK then sends an answer's text and calls without their item ids, a reasoning item with its id and encrypted content) */
  private responses(pieces: Piece[], results: Result[], differentModel: boolean): void {
    for (const p of pieces) {
      const meta = differentModel ? undefined : metaOf(p.meta, 'openai');
      const id = typeof meta?.itemId === 'string' ? meta.itemId : undefined;
      if (p.kind === 'text') {
        if (p.text !== '') this.items.push({ role: 'assistant', content: [{ type: 'output_text', text: p.text }] });
      } else if (p.kind === 'reasoning') {
        const encrypted = meta?.reasoningEncryptedContent;
        if (id && typeof encrypted === 'string')
          this.items.push({
            type: 'reasoning',
            id,
            encrypted_content: encrypted,
            summary: p.text ? [{ type: 'summary_text', text: p.text }] : [],
          });
      } else {
        this.items.push({ type: 'function_call', call_id: p.id, name: p.name, arguments: JSON.stringify(p.input ?? {}) });
      }
    }
    for (const r of results) this.items.push({ type: 'function_call_output', call_id: r.id, output: r.text });
  }

  private chat(pieces: Piece[], results: Result[]): void {
    const text = pieces
      .filter((p) => p.kind === 'text')
      .map((p) => p.text)
      .join('');
    const reasoning = pieces
      .filter((p) => p.kind === 'reasoning')
      .map((p) => p.text)
      .join('');
    const toolCalls = pieces.flatMap((p) =>
      p.kind === 'call' ? [{ id: p.id, type: 'function', function: { name: p.name, arguments: JSON.stringify(p.input ?? {}) } }] : [],
    );
    this.items.push({
      role: 'assistant',
      content: toolCalls.length > 0 ? text || null : text,
      ...(reasoning ? { reasoning_content: reasoning } : {}),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    });
    for (const r of results) this.items.push({ role: 'tool', tool_call_id: r.id, content: r.text });
  }
}

/**
 * An export of Kilo's CLI (OpenCode's fork, whose server Kilo Code 7 runs): its `version` is Kilo's
 * (7 on), where OpenCode's is 1.x.
 */
function isKiloExport(doc: Json): boolean {
  const v = isRecord(doc.info) ? doc.info.version : undefined;
  return typeof v === 'string' && /^([7-9]|\d{2,})\./.test(v);
}

/**
 * The part Kilo (7.7) sends after each prompt's text, not in its export: the prompt's time to the
 * second, the folder it ran in and the workspace root, as the answer after it records them (`path`),
 * else the session's folder.
 */
function kiloEnvironment(user: Json, answer: Json | undefined, session: Json): string | undefined {
  const at = createdAt(user);
  const path = answer && isRecord(answer.path) ? answer.path : {};
  const cwd = typeof path.cwd === 'string' ? path.cwd : typeof session.directory === 'string' ? session.directory : undefined;
  const root = typeof path.root === 'string' ? path.root : cwd;
  if (at === undefined || cwd === undefined) return undefined;
  const time = new Date(at).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `\n\n<environment_details>\nMessage time: ${time}\nWorking directory: ${cwd}\nWorkspace root folder: ${root}\n</environment_details>`;
}

/** A time in ms from OpenCode's `time.created`. */
function createdAt(info: Json): number | undefined {
  const t = isRecord(info.time) ? info.time.created : undefined;
  return typeof t === 'number' && Number.isFinite(t) ? t : undefined;
}

/** An `opencode export` document as the requests OpenCode sent (see the module comment). */
export function openCodeTranscript(doc: unknown, path: string): Transcript {
  if (!isOpenCodeExport(doc)) throw new SpillwayError(`${path}: not an OpenCode export (no session info and messages)`, 'invalid-input');
  const log = new SkipLog();
  const messages: { info: Json; parts: Json[] }[] = [];
  (doc.messages as unknown[]).forEach((m, i) => {
    if (!isRecord(m) || !isRecord(m.info) || !Array.isArray(m.parts) || (m.info.role !== 'user' && m.info.role !== 'assistant')) {
      log.skip('not-a-message', `message ${i}: not a user or assistant message with parts (${preview(JSON.stringify(m) ?? '')})`);
      return;
    }
    messages.push({ info: m.info, parts: m.parts.filter(isRecord) });
  });

  // the session's provider decides the wire: the one most answers came from
  const providers: string[] = [];
  const models: string[] = [];
  for (const m of messages)
    if (m.info.role === 'assistant' && !m.info.error) {
      if (typeof m.info.providerID === 'string') providers.push(m.info.providerID);
      if (typeof m.info.modelID === 'string') models.push(m.info.modelID);
    }
  const provider = mostAnsweringModel(providers, new SkipLog());
  const model = mostAnsweringModel(models, log);
  const w = new Writer(wireOf(provider));
  if (new Set(providers).size > 1)
    log.note(`the session called several providers (${[...new Set(providers)].join(', ')}): replayed in ${provider}'s wire format`);

  let cleared = 0;
  let interrupted = 0;
  let files = 0;
  const compactions: TranscriptCompaction[] = [];
  const kilo = isKiloExport(doc);
  messages.forEach(({ info, parts }, i) => {
    if (info.role === 'user') {
      const texts: string[] = [];
      // Kilo adds each prompt's time and folders after it, from the answer that follows (its own `path`)
      const env = kilo
        ? kiloEnvironment(info, messages.find((m, j) => j > i && m.info.role === 'assistant')?.info, doc.info as Json)
        : undefined;
      for (const p of parts) {
        if (p.type === 'text' && typeof p.text === 'string' && p.text !== '' && p.ignored !== true) texts.push(p.text);
        else if (p.type === 'file' && p.mime !== 'text/plain' && p.mime !== 'application/x-directory') files += 1;
        else if (p.type === 'compaction') {
          texts.push(COMPACTION_PROMPT);
          compactions.push({
            calls: w.calls.length,
            line: i + 1,
            trigger: p.auto === true ? 'auto' : 'manual',
            ...(model ? { model } : {}),
            summary: '',
          });
        } else if (p.type === 'subtask') texts.push(SUBTASK_PROMPT);
      }
      if (env !== undefined && texts.length) texts.push(env);
      w.user(texts);
      return;
    }
    // an assistant message that ended in an error was not sent back (unless it was aborted after it produced something)
    const error = isRecord(info.error) ? info.error : undefined;
    const produced = parts.some((p) => p.type !== 'step-start' && p.type !== 'reasoning' && p.type !== 'step-finish');
    if (error && !(error.name === 'MessageAbortedError' && produced)) {
      log.skip(
        'error',
        `message ${i}: the call ended in an error (${preview(String(error.name ?? 'unknown'))}); OpenCode does not send it back`,
      );
      return;
    }
    const differentModel = model !== undefined && typeof info.modelID === 'string' && info.modelID !== model;
    const pieces: Piece[] = [];
    const results: Result[] = [];
    const signed = parts.some(
      (p) => p.type === 'reasoning' && metaOf(isRecord(p.metadata) ? p.metadata : undefined, 'anthropic')?.signature != null,
    );
    for (const p of parts) {
      const meta = isRecord(p.metadata) ? p.metadata : undefined;
      if (p.type === 'text' && typeof p.text === 'string')
        pieces.push({ kind: 'text', text: p.text === '' && signed ? ' ' : p.text, meta });
      else if (p.type === 'reasoning' && typeof p.text === 'string') {
        if (differentModel) {
          if (p.text.trim() !== '') pieces.push({ kind: 'text', text: p.text });
        } else pieces.push({ kind: 'reasoning', text: p.text, meta });
      } else if (p.type === 'tool' && isRecord(p.state)) {
        const id = typeof p.callID === 'string' ? p.callID : '';
        const name = typeof p.tool === 'string' ? p.tool : '';
        const s = p.state;
        pieces.push({ kind: 'call', id, name, input: s.input, meta });
        if (s.status === 'completed') {
          const compacted = isRecord(s.time) && s.time.compacted !== undefined && s.time.compacted !== null;
          if (compacted) cleared += 1;
          results.push({ id, text: outputText(s.output), error: false });
        } else if (s.status === 'error') {
          const meta2 = isRecord(s.metadata) ? s.metadata : undefined;
          if (meta2?.interrupted === true && typeof meta2.output === 'string') results.push({ id, text: meta2.output, error: false });
          else results.push({ id, text: typeof s.error === 'string' ? s.error : outputText(s.error), error: true });
        } else {
          interrupted += 1;
          results.push({ id, text: OPENCODE_INTERRUPTED, error: true });
        }
      }
    }
    if (info.summary === true) {
      // the compaction's own call: its answer is the summary, sent from then on in place of the history
      const c = compactions.at(-1);
      if (c) c.summary = pieces.flatMap((p) => (p.kind === 'text' ? [p.text] : [])).join('\n');
    }
    w.call(pieces, results, createdAt(info), differentModel);
  });

  if (w.calls.length === 0 && messages.length > 0) log.note('the session holds no answered call');
  if (cleared > 0)
    log.note(
      `OpenCode's pruning cleared ${cleared} old tool output(s) later in the session (it then sends "${OPENCODE_CLEARED}"); the replay sends each as first sent`,
    );
  if (interrupted > 0) log.note(`${interrupted} tool call(s) never finished: replayed with OpenCode's "${OPENCODE_INTERRUPTED}"`);
  if (files > 0) log.note(`${files} file(s) attached to prompts are left out (images and documents are not in the replay)`);
  if (compactions.length > 0)
    log.note(
      `OpenCode compacted the session ${compactions.length} time(s): from then on it sends the summary and what followed; the replay keeps the whole history`,
    );
  if (w.wire === 'openai-chat')
    log.note(
      `the session's provider ${preview(provider ?? 'unknown')} is replayed as Chat Completions (the AI SDK's OpenAI-compatible form); only Anthropic and OpenAI are checked against what OpenCode sent`,
    );
  log.note(
    'OpenCode sends its system prompt and tool declarations with every call; they are not in the export, so calls replay without them',
  );
  return {
    source: 'opencode',
    wire: w.wire,
    base: model ? { model } : {},
    items: w.items,
    calls: w.calls,
    ...(compactions.length > 0 ? { compactions } : {}),
    skipped: log.result(),
  };
}
