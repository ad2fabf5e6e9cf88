/**
 * Token usage as the provider reports it, read from a response while it is relayed.
 *
 * The proxy tees each response body into a `UsageTap`; the client's copy is never delayed or
 * changed. Streams are parsed incrementally (server-sent events, one event at a time), so a long
 * stream costs memory for one event, not for the stream; other bodies keep only their last
 * `TAIL_BYTES`, which is where every provider puts `usage` in a JSON answer. A compressed body
 * (gzip, br, deflate, and zstd, which Codex signed in with ChatGPT accepts) is inflated on the tap's
 * side only.
 *
 * Figures are kept as each provider defines them: OpenAI's `prompt_tokens`/`input_tokens` include
 * the cached tokens (`cached_tokens`); Anthropic's `input_tokens` exclude the prompt-cache reads
 * (`cache_read_input_tokens`) and writes (`cache_creation_input_tokens`); the Gemini API's
 * `usageMetadata.promptTokenCount` includes the cached tokens (`cachedContentTokenCount`, its implicit
 * and explicit cache alike), and its output is `candidatesTokenCount` plus `thoughtsTokenCount` (both
 * billed as output).
 */
import { StringDecoder } from 'node:string_decoder';
import * as zlib from 'node:zlib';
import { EventEmitter } from 'node:events';
import { Decompress as ZstdDecompress } from 'fzstd';

export interface TurnUsage {
  inputTokens?: number;
  outputTokens?: number;
  /** prompt tokens served from the provider's cache (OpenAI cached_tokens, Anthropic cache_read_input_tokens) */
  cachedTokens?: number;
  /** prompt tokens written to the cache (Anthropic cache_creation_input_tokens) */
  cacheWriteTokens?: number;
}

/** Bytes of a non-stream body kept for usage: usage sits at the end of every provider's JSON answer. */
const TAIL_BYTES = 64 * 1024;
/** Longest server-sent event read for usage; longer events are skipped (Responses' final event carries the whole answer). */
const MAX_EVENT_CHARS = 32 * 1024 * 1024;
/** `"usage"` (OpenAI, Anthropic) and `"usageMetadata"` (Gemini) both start so. */
const USAGE_KEY = '"usage';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** Folds one provider usage object into `into`; later reports override earlier ones field by field. */
export function mergeUsage(into: TurnUsage, u: unknown): void {
  if (!isObj(u)) return;
  const set = (k: keyof TurnUsage, v: unknown) => {
    const n = num(v);
    if (n !== undefined) into[k] = n;
  };
  set('inputTokens', u.prompt_tokens);
  set('outputTokens', u.completion_tokens);
  if (isObj(u.prompt_tokens_details)) set('cachedTokens', u.prompt_tokens_details.cached_tokens);
  set('inputTokens', u.input_tokens);
  set('outputTokens', u.output_tokens);
  if (isObj(u.input_tokens_details)) set('cachedTokens', u.input_tokens_details.cached_tokens);
  set('cachedTokens', u.cache_read_input_tokens);
  set('cacheWriteTokens', u.cache_creation_input_tokens);
  set('inputTokens', u.promptTokenCount);
  const candidates = num(u.candidatesTokenCount);
  const thoughts = num(u.thoughtsTokenCount);
  if (candidates !== undefined || thoughts !== undefined) into.outputTokens = (candidates ?? 0) + (thoughts ?? 0);
  set('cachedTokens', u.cachedContentTokenCount);
}

/** The usage object an event or body carries: top level (Gemini's `usageMetadata` too), or inside `response` (Responses) or `message` (Anthropic). */
function usageOf(o: unknown): unknown {
  if (!isObj(o)) return undefined;
  if (isObj(o.usage)) return o.usage;
  if (isObj(o.usageMetadata)) return o.usageMetadata;
  if (isObj(o.response) && isObj(o.response.usage)) return o.response.usage;
  if (isObj(o.message) && isObj(o.message.usage)) return o.message.usage;
  return undefined;
}

/** What the tap needs of a decompressing stream. */
interface Inflater {
  write(chunk: Buffer): unknown;
  end(): unknown;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'error', listener: () => void): unknown;
}

/**
 * fzstd's streaming decoder behind the few stream methods the tap uses (`write`, `end`, `data`,
 * `end` and `error` events): Node 20's zlib has no zstd (see body.ts).
 */
class ZstdInflate extends EventEmitter {
  private readonly stream = new ZstdDecompress((chunk) => this.emit('data', Buffer.from(chunk)));
  write(chunk: Buffer): void {
    this.push(chunk, false);
  }
  end(): void {
    if (this.push(new Uint8Array(0), true)) this.emit('end');
  }
  private push(chunk: Uint8Array, final: boolean): boolean {
    try {
      this.stream.push(chunk, final);
      return true;
    } catch (e) {
      this.emit('error', e);
      return false;
    }
  }
}

export class UsageTap {
  private readonly usage: TurnUsage = {};
  private found = false;
  private readonly sse: boolean;
  private readonly inflate?: Inflater;
  private inflateDone?: Promise<void>;
  // server-sent events
  private readonly decoder = new StringDecoder('utf8');
  private pendingParts: string[] = [];
  private pendingChars = 0;
  private data: string[] = [];
  private dataChars = 0;
  // other bodies
  private tail: Buffer = Buffer.alloc(0);
  private total = 0;
  private broken = false;

  constructor(contentType: string | undefined, contentEncoding: string | undefined) {
    this.sse = /^\s*text\/event-stream/i.test(contentType ?? '');
    const enc = (contentEncoding ?? '').trim().toLowerCase();
    if (enc && enc !== 'identity') {
      const make =
        enc === 'gzip' || enc === 'x-gzip'
          ? zlib.createGunzip
          : enc === 'deflate'
            ? zlib.createInflate
            : enc === 'br'
              ? zlib.createBrotliDecompress
              : enc === 'zstd'
                ? () => new ZstdInflate()
                : undefined;
      if (!make) {
        this.broken = true;
        return;
      }
      const z: Inflater = make();
      this.inflate = z;
      z.on('data', (b: Buffer) => this.consume(b));
      this.inflateDone = new Promise<void>((resolve) => {
        z.on('end', resolve);
        z.on('error', () => {
          this.broken = true;
          resolve();
        });
      });
    }
  }

  write(chunk: Buffer): void {
    if (this.broken) return;
    if (this.inflate) this.inflate.write(chunk);
    else this.consume(chunk);
  }

  /** The usage the body reported, once it has ended; undefined when it reported none. */
  async finish(): Promise<TurnUsage | undefined> {
    if (this.inflate && !this.broken) {
      this.inflate.end();
      await this.inflateDone;
    }
    if (this.sse) {
      this.lines(this.decoder.end() + '\n\n');
    } else if (!this.broken) {
      this.readBodyTail();
    }
    return this.found ? { ...this.usage } : undefined;
  }

  private consume(chunk: Buffer): void {
    if (this.sse) {
      this.lines(this.decoder.write(chunk));
      return;
    }
    this.total += chunk.length;
    if (chunk.length >= TAIL_BYTES) this.tail = Buffer.from(chunk.subarray(chunk.length - TAIL_BYTES));
    else {
      const keep = Math.min(this.tail.length, TAIL_BYTES - chunk.length);
      this.tail = Buffer.concat([this.tail.subarray(this.tail.length - keep), chunk]);
    }
  }

  /**
   * Splits decoded text into lines. A line still open at the end of a chunk is kept as parts and
   * joined once it closes, so an event of any length costs linear time; a line longer than
   * MAX_EVENT_CHARS is dropped with the event it belongs to.
   */
  private lines(text: string): void {
    let nl = text.indexOf('\n');
    if (nl < 0) {
      this.hold(text);
      return;
    }
    let start = 0;
    if (this.pendingParts.length) {
      const tooLong = this.pendingChars + nl > MAX_EVENT_CHARS;
      const first = tooLong ? undefined : this.pendingParts.join('') + text.slice(0, nl);
      this.pendingParts = [];
      this.pendingChars = 0;
      if (first === undefined) this.dropEvent();
      else this.line(first);
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    for (; nl >= 0; nl = text.indexOf('\n', start)) {
      this.line(text.slice(start, nl));
      start = nl + 1;
    }
    if (start < text.length) this.hold(text.slice(start));
  }

  private hold(part: string): void {
    if (this.pendingChars > MAX_EVENT_CHARS) return;
    this.pendingParts.push(part);
    this.pendingChars += part.length;
  }

  private dropEvent(): void {
    this.data = [];
    this.dataChars = MAX_EVENT_CHARS + 1;
  }

  private line(raw: string): void {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line === '') {
      if (this.data.length && this.dataChars <= MAX_EVENT_CHARS) this.event(this.data.join('\n'));
      this.data = [];
      this.dataChars = 0;
      return;
    }
    if (!line.startsWith('data:')) return;
    const value = line.charCodeAt(5) === 32 ? line.slice(6) : line.slice(5);
    this.dataChars += value.length;
    if (this.dataChars <= MAX_EVENT_CHARS) this.data.push(value);
  }

  private event(data: string): void {
    if (!data.includes(USAGE_KEY)) return;
    try {
      this.take(JSON.parse(data));
    } catch {
      /* not JSON: no usage in it */
    }
  }

  private take(o: unknown): void {
    const u = usageOf(o);
    if (u === undefined) return;
    mergeUsage(this.usage, u);
    this.found = true;
  }

  private readBodyTail(): void {
    const text = this.tail.toString('utf8');
    if (this.total <= TAIL_BYTES) {
      try {
        const v: unknown = JSON.parse(text);
        // streamGenerateContent without alt=sse answers a JSON array of chunks; usage is on the last
        this.take(Array.isArray(v) ? v.at(-1) : v);
        return;
      } catch {
        /* fall back to a scan */
      }
    }
    let brace = -1;
    for (const m of text.matchAll(/"usage(?:Metadata)?"\s*:\s*\{/g)) brace = m.index + m[0].length - 1;
    const obj = balancedObject(text, brace);
    if (!obj) return;
    try {
      this.take({ usage: JSON.parse(obj) });
    } catch {
      /* cut or not JSON */
    }
  }
}

/** The JSON object starting at `start` (strings respected), or undefined when it does not close. */
function balancedObject(text: string, start: number): string | undefined {
  if (start < 0 || text[start] !== '{') return undefined;
  let depth = 0,
    inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
      continue;
    }
    if (c === 34) inString = true;
    else if (c === 123) depth++;
    else if (c === 125 && --depth === 0) return text.slice(start, i + 1);
  }
  return undefined;
}
