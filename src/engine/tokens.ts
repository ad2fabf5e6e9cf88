/**
 * Token counting, cached by content.
 *
 * Real counts come from gpt-tokenizer (o200k_base by default, cl100k_base on request); Eino and
 * others estimate with characters / 4, offered as `approximate`. Tokenising is the most expensive
 * thing the engine does (about fifteen times a JSON parse of the same text), and a long session
 * re-sends the same outputs on every call, so counts are cached by the text itself and each
 * distinct text is tokenised once.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { TokenizerName } from './config';

export interface TokenCounter {
  readonly name: TokenizerName | string;
  count(text: string): number;
}

type Encoding = { countTokens(text: string): number };
type EncodingName = 'o200k_base' | 'cl100k_base';
/**
 * Set by the build (esbuild `define`, see esbuild.mjs and scripts/package-vsix.mjs) in bundles
 * that ship each encoding as its own file next to them, `dist/tokenizer-NAME.js`; undefined under
 * the test runner, which loads gpt-tokenizer from node_modules.
 */
declare const SPILLWAY_TOKENIZER_FILES: boolean | undefined;
const loaded = new Map<EncodingName, Encoding>();
/**
 * The encodings load on first use, each from its own file: a rank table takes about half a
 * second to parse and initialise, which activation, `spillway read` and the approximate counter
 * should not pay, and o200k_base must not drag cl100k_base in.
 */
function encoding(name: EncodingName): Encoding {
  let enc = loaded.get(name);
  if (!enc) {
    const bundled = typeof SPILLWAY_TOKENIZER_FILES !== 'undefined' && SPILLWAY_TOKENIZER_FILES;
    // createRequire keeps the bundler from inlining the table into the bundle that asks for it
    enc = bundled
      ? (createRequire(__filename)(join(__dirname, `tokenizer-${name}.js`)) as Encoding)
      : (createRequire(`${process.cwd()}/`)(`gpt-tokenizer/encoding/${name}`) as Encoding);
    loaded.set(name, enc);
  }
  return enc;
}

/** Characters per token for the approximate counter (the common rule of thumb). */
const CHARS_PER_TOKEN = 4;
/** Texts shorter than this are tokenised directly; caching them costs more than it saves. */
const CACHE_MIN_CHARS = 256;
/** Cached text kept, in characters, before the cache is dropped and refilled (bounds memory). */
const CACHE_MAX_CHARS = 64_000_000;
/**
 * Above this size a text is counted from evenly spaced samples and scaled. A 50 MB tool output
 * would otherwise take seconds to tokenise for a number that only labels a marker; samples this
 * large land within a few percent on real output.
 */
const EXACT_TOKEN_LIMIT = 2_000_000;
const SAMPLE_COUNT = 32;
const SAMPLE_CHARS = 16_384;

class CachedCounter implements TokenCounter {
  private cache = new Map<string, number>();
  private cachedChars = 0;
  constructor(
    readonly name: string,
    private readonly raw: (text: string) => number,
  ) {}

  count(text: string): number {
    if (text.length < CACHE_MIN_CHARS) return this.raw(text);
    const hit = this.cache.get(text);
    if (hit !== undefined) return hit;
    const n = text.length > EXACT_TOKEN_LIMIT ? sampled(text, this.raw) : this.raw(text);
    if (this.cachedChars + text.length > CACHE_MAX_CHARS) {
      this.cache.clear();
      this.cachedChars = 0;
    }
    // a copy: the text is often a slice of a request body, and a slice kept as a key keeps the whole
    // body alive (measured: the 19 Claude Code sessions of the corpus left 790 MB behind for 6 MB of keys)
    this.cache.set(JSON.parse(JSON.stringify(text)) as string, n);
    this.cachedChars += text.length;
    return n;
  }
}

/**
 * Longest piece handed to the tokenizer at once. Byte-pair encoding of one long run without
 * spaces (a base64 blob, a minified file, a line of 'x') is quadratic in the run's length; cutting
 * runs at this length bounds the cost. Pieces end just before whitespace when there is any, which
 * is a pre-token boundary for both encodings, so ordinary text counts exactly.
 */
const PIECE_CHARS = 4_096;

function chunked(text: string, raw: (t: string) => number): number {
  if (text.length <= PIECE_CHARS) return raw(text);
  let n = 0;
  for (let at = 0; at < text.length;) {
    let end = Math.min(text.length, at + PIECE_CHARS);
    if (end < text.length) {
      const ws = lastWhitespace(text, at + (PIECE_CHARS >> 1), end);
      if (ws > at) end = ws;
    }
    n += raw(text.slice(at, end));
    at = end;
  }
  return n;
}

function lastWhitespace(text: string, from: number, to: number): number {
  for (let i = to - 1; i >= from; i--) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13) return i;
  }
  return -1;
}

function sampled(text: string, raw: (t: string) => number): number {
  const stride = Math.floor((text.length - SAMPLE_CHARS) / (SAMPLE_COUNT - 1));
  let tokens = 0;
  for (let i = 0; i < SAMPLE_COUNT; i++) tokens += raw(text.slice(i * stride, i * stride + SAMPLE_CHARS));
  return Math.round((tokens / (SAMPLE_COUNT * SAMPLE_CHARS)) * text.length);
}

const approximate = (text: string) => Math.ceil(text.length / CHARS_PER_TOKEN);

const shared = new Map<string, TokenCounter>();

/** A counter with a cache of its own (benchmarks measure cold counts with one). */
export function newTokenCounter(name: TokenizerName): TokenCounter {
  if (name === 'approximate') return { name, count: approximate };
  // the table loads on the first count, not when an engine is made (activation makes one)
  let enc: Encoding | undefined;
  return new CachedCounter(name, (t) => chunked(t, (p) => (enc ??= encoding(name)).countTokens(p)));
}

/** The counter for a tokenizer name; counters (and their caches) are shared process-wide. */
export function tokenCounter(name: TokenizerName): TokenCounter {
  let c = shared.get(name);
  if (!c) {
    c = newTokenCounter(name);
    shared.set(name, c);
  }
  return c;
}

/** Whether a count for a text this long is a sampled estimate rather than exact. */
export function isEstimate(counter: TokenCounter, chars: number): boolean {
  return counter.name !== 'approximate' && chars > EXACT_TOKEN_LIMIT;
}

/**
 * Tokens of every string inside `v` (JSON keys and punctuation not counted): the figure replay
 * and the benchmarks bill structured content (thinking, image metadata, fixed fields) by.
 */
export function stringTokens(v: unknown, counter: TokenCounter): number {
  if (typeof v === 'string') return counter.count(v);
  if (Array.isArray(v)) {
    let n = 0;
    for (const x of v) n += stringTokens(x, counter);
    return n;
  }
  if (v !== null && typeof v === 'object') {
    let n = 0;
    for (const x of Object.values(v)) n += stringTokens(x, counter);
    return n;
  }
  return 0;
}
