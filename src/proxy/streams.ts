/**
 * Streaming answers, per API, as neutral events in arrival order: text, thinking, a tool call (once
 * its arguments are complete), usage, and the provider's own error. Pure (no `vscode`): feed it the
 * response body's chunks, read the events out.
 *
 *   OpenAI Chat Completions  `data: {choices:[{delta:{content, tool_calls:[{index,id,function}]}}]}`, `[DONE]`
 *   OpenAI Responses         `response.output_text.delta`, `response.output_item.done` (function_call),
 *                            `response.reasoning_summary_text.delta`, `response.completed|failed`, `error`
 *   Anthropic Messages       `content_block_start|delta|stop` (text, tool_use + input_json_delta,
 *                            thinking), `message_start|delta` (usage), `error`
 */
import { mergeUsage, type TurnUsage } from './usage';
/** The three streaming APIs, named as the chat provider's models name them. */
export type StreamApi = 'openai-chat' | 'openai-responses' | 'anthropic';

export type StreamEvent =
  | { type: 'text'; text: string }
  | { type: 'thinking'; text: string }
  | { type: 'toolCall'; callId: string; name: string; input: unknown }
  | { type: 'error'; message: string };

/** Longest single server-sent event accepted; a longer one is a broken stream, not a reason to grow without bound. */
const MAX_EVENT_CHARS = 64 * 1024 * 1024;

/** Splits a server-sent-event stream into `{event, data}` records (data lines joined by newlines). */
export class SseParser {
  private buf = '';
  private event = '';
  private data: string[] = [];

  push(chunk: string): { event: string; data: string }[] {
    this.buf += chunk;
    const out: { event: string; data: string }[] = [];
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) >= 0) {
      let line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      if (line.endsWith('\r')) line = line.slice(0, -1);
      if (line === '') {
        if (this.data.length) out.push({ event: this.event, data: this.data.join('\n') });
        this.event = '';
        this.data = [];
      } else if (line.startsWith(':')) continue;
      else {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') this.data.push(value);
        else if (field === 'event') this.event = value;
      }
    }
    if (this.buf.length > MAX_EVENT_CHARS) throw new Error(`a server-sent event longer than ${MAX_EVENT_CHARS} characters`);
    return out;
  }

  /** The last event, when the stream ended without a blank line. */
  end(): { event: string; data: string }[] {
    const out = this.push('\n\n');
    this.buf = '';
    return out;
  }
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

function parseArgs(text: string): unknown {
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    // a model that wrote broken JSON: pass what it wrote, the tool reports the problem
    return { _unparsedArguments: text };
  }
}

export function errorMessageOf(v: unknown): string | undefined {
  if (!isObj(v)) return typeof v === 'string' ? v : undefined;
  if (isObj(v.error)) return str(v.error.message) || str(v.error.type) || JSON.stringify(v.error);
  if (typeof v.error === 'string') return v.error;
  if (typeof v.message === 'string') return v.message;
  return undefined;
}

/** Turns one API's stream into events; `usage` collects what the provider reported. */
export class StreamDecoder {
  readonly usage: TurnUsage = {};
  private readonly sse = new SseParser();
  private done = false;
  // openai-chat: tool calls by index, emitted at the end (their arguments arrive in pieces)
  private readonly chatCalls = new Map<number, { id: string; name: string; args: string }>();
  // anthropic: blocks by index
  private readonly blocks = new Map<number, { type: string; id?: string; name?: string; json: string }>();

  constructor(readonly api: StreamApi) {}

  push(chunk: string): StreamEvent[] {
    return this.handle(this.sse.push(chunk));
  }

  end(): StreamEvent[] {
    const out = this.handle(this.sse.end());
    out.push(...this.flushChatCalls());
    return out;
  }

  private flushChatCalls(): StreamEvent[] {
    const out: StreamEvent[] = [];
    for (const k of [...this.chatCalls.keys()].sort((a, b) => a - b)) {
      const c = this.chatCalls.get(k)!;
      out.push({ type: 'toolCall', callId: c.id || `call_${k}`, name: c.name, input: parseArgs(c.args) });
    }
    this.chatCalls.clear();
    return out;
  }

  private handle(records: { event: string; data: string }[]): StreamEvent[] {
    const out: StreamEvent[] = [];
    for (const r of records) {
      if (this.done) break;
      if (r.data === '[DONE]') {
        out.push(...this.flushChatCalls());
        this.done = true;
        continue;
      }
      let v: unknown;
      try {
        v = JSON.parse(r.data);
      } catch {
        continue; // keep-alives and the like
      }
      if (!isObj(v)) continue;
      for (const u of [v.usage, isObj(v.response) ? v.response.usage : undefined, isObj(v.message) ? v.message.usage : undefined])
        if (isObj(u)) mergeUsage(this.usage, u);
      const type = str(v.type) || r.event;
      if (this.api === 'openai-chat') this.chat(v, out);
      else if (this.api === 'openai-responses') this.responses(type, v, out);
      else this.anthropic(type, v, out);
    }
    return out;
  }

  private chat(v: Json, out: StreamEvent[]): void {
    if (v.error) {
      out.push({ type: 'error', message: errorMessageOf(v) ?? 'the provider reported an error' });
      return;
    }
    const choice = Array.isArray(v.choices) && isObj(v.choices[0]) ? v.choices[0] : undefined;
    const delta = choice && isObj(choice.delta) ? choice.delta : undefined;
    if (!delta) return;
    const thinking = str(delta.reasoning_content) || str(delta.reasoning);
    if (thinking) out.push({ type: 'thinking', text: thinking });
    if (str(delta.content)) out.push({ type: 'text', text: str(delta.content) });
    if (Array.isArray(delta.tool_calls)) {
      for (const tc of delta.tool_calls) {
        if (!isObj(tc)) continue;
        const index = typeof tc.index === 'number' ? tc.index : 0;
        const c = this.chatCalls.get(index) ?? { id: '', name: '', args: '' };
        if (str(tc.id)) c.id = str(tc.id);
        const fn = isObj(tc.function) ? tc.function : {};
        if (str(fn.name)) c.name += str(fn.name);
        c.args += str(fn.arguments);
        this.chatCalls.set(index, c);
      }
    }
    if (choice && choice.finish_reason) out.push(...this.flushChatCalls());
  }

  private responses(type: string, v: Json, out: StreamEvent[]): void {
    if (type === 'response.output_text.delta') out.push({ type: 'text', text: str(v.delta) });
    else if (type === 'response.reasoning_summary_text.delta' || type === 'response.reasoning_text.delta')
      out.push({ type: 'thinking', text: str(v.delta) });
    else if (type === 'response.output_item.done' && isObj(v.item) && v.item.type === 'function_call') {
      out.push({
        type: 'toolCall',
        callId: str(v.item.call_id) || str(v.item.id),
        name: str(v.item.name),
        input: parseArgs(str(v.item.arguments)),
      });
    } else if (type === 'response.failed' || type === 'response.incomplete') {
      const resp = isObj(v.response) ? v.response : {};
      const reason = isObj(resp.incomplete_details) ? str(resp.incomplete_details.reason) : '';
      if (type === 'response.failed' || reason !== 'max_output_tokens')
        out.push({ type: 'error', message: errorMessageOf(resp) ?? (reason ? `response incomplete: ${reason}` : 'the response failed') });
    } else if (type === 'error') out.push({ type: 'error', message: errorMessageOf(v) ?? str(v.code) ?? 'the provider reported an error' });
  }

  private anthropic(type: string, v: Json, out: StreamEvent[]): void {
    const index = typeof v.index === 'number' ? v.index : -1;
    if (type === 'content_block_start' && isObj(v.content_block)) {
      const b = v.content_block;
      this.blocks.set(index, { type: str(b.type), id: str(b.id), name: str(b.name), json: '' });
      if (b.type === 'text' && str(b.text)) out.push({ type: 'text', text: str(b.text) });
    } else if (type === 'content_block_delta' && isObj(v.delta)) {
      const d = v.delta;
      if (d.type === 'text_delta') out.push({ type: 'text', text: str(d.text) });
      else if (d.type === 'thinking_delta') out.push({ type: 'thinking', text: str(d.thinking) });
      else if (d.type === 'input_json_delta') {
        const b = this.blocks.get(index);
        if (b) b.json += str(d.partial_json);
      }
    } else if (type === 'content_block_stop') {
      const b = this.blocks.get(index);
      this.blocks.delete(index);
      if (b?.type === 'tool_use') out.push({ type: 'toolCall', callId: b.id ?? '', name: b.name ?? '', input: parseArgs(b.json) });
    } else if (type === 'error') out.push({ type: 'error', message: errorMessageOf(v) ?? 'the provider reported an error' });
  }
}
