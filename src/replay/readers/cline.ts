/**
 * Cline sessions (`~/.cline/data/sessions/<id>/<id>.messages.json`, written by Cline's CLI and by
 * the VS Code extension since it runs on Cline's SDK) as the requests Cline sent.
 *
 * The file is one JSON document: `sessionId`, `origin` (`{source, version}`), `agent` (`lead` for the
 * session's own agent), `system_prompt` (as sent) and `messages` in Cline's own form, which is not
 * what it sends:
 * - a prompt is stored inside `<user_input mode="act">…</user_input>`; the model gets it without
 *   the wrapper (`normalizeUserInput`);
 * - a tool result is stored whole (its `content` a string, text blocks, or the tools' JSON list
 *   `[{query, result, success}]`); before each request Cline's message builder cuts every string in
 *   it to 8,000 characters, keeping a head and a tail around `...[truncated N chars]...`, and an
 *   answer's text to 200,000 (12,000 when it repeats tool-call markup), a file attached to a prompt to
 *   50,000;
 * - a tool call left without a result gets Cline's `Tool execution was interrupted…` error result.
 *
 * This reader applies those steps, as `MessageBuilder.buildForApi` of Cline's SDK (3.0.65) does, and
 * writes each request as Cline's OpenAI-compatible providers send it (the AI SDK's Chat Completions
 * conversion): the system prompt first, a prompt's text as a string, an answer's text (`null` beside
 * tool calls) with its tool calls and its reasoning as `reasoning_content`, each tool result a
 * `tool` message (a string as it is, anything else as its JSON). The agents suite checks the result
 * against what the real CLI sent. Calls: each answer (`role: "assistant"`) is one call; its time is
 * the `ts` of the last message its request holds.
 *
 * Not reproduced, and said so in a note: the rewrite of a read a later read of the same file made
 * outdated (`[outdated - see the latest file content]`, once 64 KiB can be reclaimed: it changes the
 * history, and a replay's calls each extend the one before, as for compactions); the 6 MB budget of
 * a whole request; images (sent as JSON text here); the tool declarations (not in the file); an
 * Anthropic provider's own wire format (the replay is in Chat Completions; the model still names its
 * price model).
 */
import { SpillwayError } from '../../engine/types';
import { SkipLog, preview } from './skip-log';
import type { Transcript } from './types';
import { computeCalls, isRecord, mostAnsweringModel, parseTime, type Json } from './wire';

/** Cline's per-string cut of a tool result (DEFAULT_MAX_TOOL_RESULT_CHARS). */
const CLINE_TOOL_RESULT_CHARS = 8_000;
/** Cline's cut of a file the user attached to a prompt (DEFAULT_MAX_FILE_CONTENT_CHARS). */
const ATTACHED_FILE_CHARS = 50_000;
/** Cline's cut of an answer's text, and of one that repeats tool-call markup. */
const ASSISTANT_TEXT_CHARS = 200_000;
const ASSISTANT_TOOL_MARKUP_CHARS = 12_000;
const REPEATED_TOOL_CALL_MARKUP = 8;
/** Cline's budget for a whole request's text, and the reclaimable bytes before it rewrites outdated reads. */
const TOTAL_TEXT_BYTES = 6_000_000;
const OUTDATED_REWRITE_BYTES = 65_536;
const READ_TOOLS: ReadonlySet<string> = new Set(['read', 'read_files']);
const MISSING_TOOL_RESULT = 'Tool execution was interrupted before a result was produced.';
const EMPTY_CONTENT = 'ERROR: EMPTY CONTENT';

const truncatedMarker = (n: number): string => `\n\n...[truncated ${n} chars]...\n\n`;
const assistantMarker = (n: number): string => `\n\n...[assistant text truncated: omitted ${n} chars]...\n\n`;
const toolMarkupMarker = (n: number): string =>
  `\n\n...[assistant text truncated: omitted ${n} chars due to repeated tool-call markup]...\n\n`;
const DSML_BAR = String.raw`[\|\uFF5C]`;
const TOOL_CALL_MARKUP = new RegExp(
  String.raw`<\s*(?:${DSML_BAR}\s*)?DSML\s*(?:${DSML_BAR}\s*)?(?:tool_calls|invoke)\b[^>]*>|<\s*/?\s*(?:tool_calls?|tool_call|function_calls?|function_call|invoke)\b[^>]*>`,
  'gi',
);

/** A Cline session document: its messages, its session id and where it came from. */
export function isClineSession(doc: unknown): doc is Json {
  return (
    isRecord(doc) &&
    Array.isArray(doc.messages) &&
    typeof doc.sessionId === 'string' &&
    (isRecord(doc.origin) || typeof doc.system_prompt === 'string') &&
    !('model' in doc)
  );
}

/** Cline's `truncateMiddleByChars`: a head and a tail of `max` characters in all, the marker between. */
export function clineTruncateMiddle(text: string, max: number, marker: (removed: number) => string = truncatedMarker): string {
  if (text.length <= max) return text;
  const tentativeKeep = Math.max(0, Math.floor((max - marker(text.length - max).length) / 2));
  const removed = Math.max(0, text.length - tentativeKeep * 2);
  const m = marker(removed);
  const keep = Math.max(0, Math.floor((max - m.length) / 2));
  return `${text.slice(0, keep)}${m}${keep > 0 ? text.slice(-keep) : ''}`;
}

/** Every string inside a tool result cut as Cline cuts it (`truncateNestedStrings`). */
function truncateNested(value: unknown): unknown {
  if (typeof value === 'string') return clineTruncateMiddle(value, CLINE_TOOL_RESULT_CHARS);
  if (Array.isArray(value)) return value.map(truncateNested);
  if (isRecord(value)) {
    if (value.type === 'image' && typeof value.data === 'string' && typeof value.mediaType === 'string') return value;
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, truncateNested(v)]));
  }
  return value;
}

/** A tool result's content after Cline's cut: a string, a text block's text and a file's content each cut; other entries every string in them. */
function truncateResult(content: unknown): unknown {
  if (typeof content === 'string') return clineTruncateMiddle(content, CLINE_TOOL_RESULT_CHARS);
  if (!Array.isArray(content)) return content;
  return content.map((entry) => {
    if (isRecord(entry) && entry.type === 'text' && typeof entry.text === 'string')
      return { ...entry, text: clineTruncateMiddle(entry.text, CLINE_TOOL_RESULT_CHARS) };
    if (isRecord(entry) && entry.type === 'file' && typeof entry.content === 'string')
      return { ...entry, content: clineTruncateMiddle(entry.content, CLINE_TOOL_RESULT_CHARS) };
    if (isRecord(entry) && (entry.type === 'text' || entry.type === 'image' || entry.type === 'file')) return entry;
    return truncateNested(entry);
  });
}

/** Cline's cut of an answer's text. */
function truncateAnswer(text: string): string {
  if (text.length > ASSISTANT_TOOL_MARKUP_CHARS) {
    let n = 0;
    for (const _ of text.matchAll(TOOL_CALL_MARKUP)) if (++n >= REPEATED_TOOL_CALL_MARKUP) break;
    if (n >= REPEATED_TOOL_CALL_MARKUP) return clineTruncateMiddle(text, ASSISTANT_TOOL_MARKUP_CHARS, toolMarkupMarker);
  }
  return clineTruncateMiddle(text, ASSISTANT_TEXT_CHARS, assistantMarker);
}

/** Cline's `normalizeUserInput`: the prompt without its `<user_input>` / `<user_command>` wrapper, trimmed. */
export function normalizeClineInput(input: string): string {
  if (!input.trim()) return '';
  let next = input.trim();
  for (const tag of ['user_input', 'user_command']) {
    const extracted = next.replace(new RegExp(`<${tag}\\b[^>]*>([\\s\\S]*?)</${tag}>`, 'g'), '$1');
    next = (extracted !== next ? extracted : next.replace(new RegExp(`<${tag}[^>]*>`, 'g'), '')).trim();
  }
  return next;
}

/** The AI SDK's `sanitizeSurrogates`: a lone surrogate becomes U+FFFD. */
function sanitize(text: string): string {
  return text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

function sanitizeDeep(value: unknown): unknown {
  if (typeof value === 'string') return sanitize(value);
  if (Array.isArray(value)) return value.map(sanitizeDeep);
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, sanitizeDeep(v)]));
  return value;
}

/** A tool result as a `tool` message's content: a string as it is, anything else as its JSON. */
function toolContent(content: unknown): string {
  return typeof content === 'string' ? sanitize(content) : JSON.stringify(sanitizeDeep(content) ?? null);
}

/** UTF-8 bytes of every string a value holds (Cline's count for its request budget). */
function stringBytes(value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (Array.isArray(value)) return value.reduce((a: number, v) => a + stringBytes(v), 0);
  if (isRecord(value)) return Object.values(value).reduce((a: number, v) => a + stringBytes(v), 0);
  return 0;
}

/** The paths a read tool's input names (`files[].path`, `file_paths`, `path`), for the note on outdated reads. */
function readPaths(input: unknown): string[] {
  if (!isRecord(input)) return [];
  const out: string[] = [];
  const pathOf = (r: unknown): string | undefined => {
    if (!isRecord(r)) return undefined;
    for (const k of ['path', 'file_path', 'filePath']) if (typeof r[k] === 'string' && r[k]) return r[k] as string;
    return undefined;
  };
  const direct = pathOf(input);
  if (direct) out.push(direct);
  if (Array.isArray(input.files)) for (const f of input.files) if (pathOf(f)) out.push(pathOf(f)!);
  if (Array.isArray(input.file_paths)) for (const p of input.file_paths) if (typeof p === 'string' && p) out.push(p);
  return out;
}

/** The message's blocks (a string content is one text block), or undefined for content of no known shape. */
function blocksOf(message: Json): Json[] | undefined {
  if (typeof message.content === 'string') return [{ type: 'text', text: message.content }];
  if (!Array.isArray(message.content)) return undefined;
  return message.content.filter(isRecord);
}

/** Builds the Chat Completions items Cline sent, with the time of the message each came from. */
class Builder {
  readonly items: Json[] = [];
  readonly times: (number | undefined)[] = [];
  /** tool results Cline never got (an interrupted call), by call id, with the tool's name */
  private readonly pending = new Map<string, string>();
  private readonly toolNames = new Map<string, string>();
  private readonly resultIds: ReadonlySet<string>;
  readonly readsByPath = new Map<string, number>();
  readonly cut = { results: 0, chars: 0 };

  constructor(
    messages: readonly Json[],
    private readonly log: SkipLog,
  ) {
    const ids = new Set<string>();
    for (const m of messages)
      for (const b of blocksOf(m) ?? []) if (b.type === 'tool_result' && typeof b.tool_use_id === 'string') ids.add(b.tool_use_id);
    this.resultIds = ids;
  }

  /** The system prompt, as Cline sends it: the first message. */
  system(text: string): void {
    this.push({ role: 'system', content: text }, undefined);
  }

  private push(item: Json, time: number | undefined): void {
    this.items.push(item);
    this.times.push(time);
  }

  /** The error results of calls that got none, as Cline writes them before the next message. */
  private flushMissing(time: number | undefined): void {
    for (const [id, name] of this.pending)
      this.push(
        { role: 'tool', tool_call_id: id, content: toolContent([{ type: 'text', text: `${MISSING_TOOL_RESULT} Tool: ${name}.` }]) },
        time,
      );
    this.pending.clear();
  }

  user(blocks: Json[], index: number, time: number | undefined): void {
    const results = blocks.filter((b) => b.type === 'tool_result');
    const others = blocks.filter((b) => b.type !== 'tool_result');
    if (results.length === 0) this.flushMissing(time);
    for (const r of results) {
      const id = typeof r.tool_use_id === 'string' ? r.tool_use_id : '';
      this.pending.delete(id);
      const content = truncateResult(r.content);
      const before = stringBytes(r.content);
      const after = stringBytes(content);
      if (after < before) {
        this.cut.results += 1;
        this.cut.chars += before - after;
      }
      this.push({ role: 'tool', tool_call_id: id, content: toolContent(content) }, time);
    }
    this.flushMissing(time);
    if (results.length > 0 && others.length === 0) return;
    const parts: string[] = [];
    for (const b of others) {
      if (b.type === 'text' && typeof b.text === 'string') parts.push(sanitize(normalizeClineInput(b.text)));
      else if (b.type === 'file' && typeof b.content === 'string')
        parts.push(sanitize(clineTruncateMiddle(b.content, ATTACHED_FILE_CHARS)));
      else
        this.log.skipNoteFirst(`block:${String(b.type)}`, `message ${index}: a ${preview(String(b.type))} block of a prompt is left out`);
    }
    const texts = parts.every((p) => p.trim() === '') ? [EMPTY_CONTENT] : parts;
    this.push({ role: 'user', content: texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: 'text', text })) }, time);
  }

  assistant(blocks: Json[], time: number | undefined): void {
    this.flushMissing(time);
    let text = '';
    let reasoning = '';
    const toolCalls: Json[] = [];
    for (const b of blocks) {
      if (b.type === 'text' && typeof b.text === 'string') text += sanitize(truncateAnswer(b.text));
      else if (b.type === 'thinking' && typeof b.thinking === 'string') reasoning += sanitize(b.thinking);
      else if (b.type === 'tool_use') {
        const id = typeof b.call_id === 'string' ? b.call_id : typeof b.id === 'string' ? b.id : '';
        const name = typeof b.name === 'string' ? b.name : '';
        this.toolNames.set(id, name);
        if (!this.resultIds.has(typeof b.id === 'string' ? b.id : id)) this.pending.set(id, name);
        if (READ_TOOLS.has(name.toLowerCase()))
          for (const p of readPaths(b.input)) this.readsByPath.set(p, (this.readsByPath.get(p) ?? 0) + 1);
        const args = typeof b.input === 'string' ? b.input : JSON.stringify(b.input ?? {});
        toolCalls.push({ id, type: 'function', function: { name, arguments: args } });
      }
    }
    if (text === '' && reasoning === '' && toolCalls.length === 0) text = EMPTY_CONTENT;
    this.push(
      {
        role: 'assistant',
        content: toolCalls.length > 0 ? text || null : text,
        ...(reasoning ? { reasoning_content: reasoning } : {}),
        ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
      },
      time,
    );
  }
}

/** A Cline session document as the requests it sent (see the module comment). */
export function clineTranscript(doc: unknown, path: string): Transcript {
  if (!isClineSession(doc)) throw new SpillwayError(`${path}: not a Cline session (no messages and sessionId)`, 'invalid-input');
  const log = new SkipLog();
  const messages: Json[] = [];
  (doc.messages as unknown[]).forEach((m, i) => {
    if (!isRecord(m) || (m.role !== 'user' && m.role !== 'assistant')) {
      log.skip('not-a-message', `message ${i}: neither a user nor an assistant message (${preview(JSON.stringify(m) ?? '')})`);
      return;
    }
    if (blocksOf(m) === undefined) {
      log.skip('no-content', `message ${i}: its content is neither text nor blocks`);
      return;
    }
    messages.push(m);
  });
  const builder = new Builder(messages, log);
  const system = typeof doc.system_prompt === 'string' && doc.system_prompt.trim() !== '' ? sanitize(doc.system_prompt) : undefined;
  if (system !== undefined) builder.system(system);
  else log.note('the session holds no system prompt: calls replay without one');
  const models: string[] = [];
  const providers = new Set<string>();
  messages.forEach((m, i) => {
    const time = parseTime(m.ts);
    if (m.role === 'user') builder.user(blocksOf(m)!, i, time);
    else {
      builder.assistant(blocksOf(m)!, time);
      const info = isRecord(m.modelInfo) ? m.modelInfo : undefined;
      if (typeof info?.id === 'string') models.push(info.id);
      if (typeof info?.provider === 'string') providers.add(info.provider);
    }
  });
  const calls = computeCalls('openai-chat', builder.items, false, builder.times);
  const model = mostAnsweringModel(models, log);
  const foreign = [...providers].filter((p) => /anthropic|claude|bedrock|vertex/i.test(p));
  if (foreign.length)
    log.note(
      `Cline called ${foreign.join(', ')}, whose requests are not Chat Completions: replayed as Chat Completions, priced by the model`,
    );
  if (builder.cut.results > 0)
    log.note(
      `Cline cut ${builder.cut.results} tool result(s) to ${CLINE_TOOL_RESULT_CHARS.toLocaleString('en-US')} characters a string before sending them (${builder.cut.chars.toLocaleString('en-US')} bytes left out); the replay sends them cut, as Cline did`,
    );
  const reread = [...builder.readsByPath].filter(([, n]) => n > 1);
  if (reread.length)
    log.note(
      `${reread.length} file(s) read more than once (${reread
        .slice(0, 3)
        .map(([p, n]) => `${preview(p, 40)} ${n}×`)
        .join(
          ', ',
        )}${reread.length > 3 ? ', …' : ''}): Cline replaces an outdated read by "[outdated - see the latest file content]" once ${OUTDATED_REWRITE_BYTES.toLocaleString('en-US')} bytes can be reclaimed; the replay keeps each read as first sent`,
    );
  const total = builder.items.reduce((a: number, it) => a + stringBytes(it.content), 0);
  if (total > TOTAL_TEXT_BYTES)
    log.note(
      `the last request holds ${total.toLocaleString('en-US')} bytes of text, over Cline's ${TOTAL_TEXT_BYTES.toLocaleString('en-US')}: Cline cut its largest strings to fit, which the replay does not`,
    );
  log.note('Cline sends its tool declarations with every call; they are not in the session file, so calls replay without them');
  return { source: 'cline', wire: 'openai-chat', base: model ? { model } : {}, items: builder.items, calls, skipped: log.result() };
}
