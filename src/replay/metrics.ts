/**
 * The figures that judge a reduction policy on a replayed session (DESIGN.md, "What better means"):
 * what the provider caches between calls, what that costs under each provider's billing rules, and
 * which identifiers the agent used next that the projection had hidden from it. Pure functions, so
 * the replay, the benchmarks and the inspector compute them the same way.
 *
 * Billing follows the providers' documented rules (docs/replay-and-cost.md says what is counted and what
 * is left out): Anthropic caches up to cache breakpoints, reads at 0.1x, writes the new part at
 * 1.25x (5-minute cache), and caches nothing under 1,024 tokens; OpenAI caches the longest prefix it
 * has seen automatically, from 1,024 tokens in steps of 128, with no write premium. Thinking and
 * reasoning of earlier turns is not billed as input; images are billed by their pixels.
 */
import { stringTokens, type TokenCounter } from '../engine/tokens';
import type { WireFormat } from '../engine/types';
import { dataUrlBase64, imageSize, type ImageSize } from './images';

/** How a provider bills a call, in units of one uncached input token at its base price. */
export interface PriceModel {
  name: string;
  /** a cached prefix read back */
  cachedRead: number;
  /** input the call writes to the cache (Anthropic 1.25x for the 5-minute cache, 2x for 1 hour) */
  cacheWrite: number;
  /** input neither read from nor written to the cache (a prompt too short to cache) */
  uncached: number;
  /** an output token */
  output: number;
  /** prompts (Anthropic: prefixes up to a breakpoint) shorter than this are not cached */
  minCacheableTokens: number;
  /**
   * `breakpoints`: the agent marks the end of every request and its system prompt (as Claude Code
   * does); a call reads the longest earlier breakpoint that is still a prefix. `automatic`: the
   * shared prefix with the previous request, counted in steps of `cacheIncrement` above the minimum.
   */
  caching: 'breakpoints' | 'automatic';
  cacheIncrement: number;
  /** how images are billed: `anthropic` (width × height / 750) or `openai-tiles` (85 + 170 per 512 px tile) */
  images: 'anthropic' | 'openai-tiles';
}

/**
 * Anthropic (Claude Sonnet and Opus 4.x): cache reads 0.1x, 5-minute cache writes 1.25x, output 5x
 * ($3 / $3.75 / $0.30 / $15 per million for Sonnet), minimum cacheable prompt 1,024 tokens.
 */
export const ANTHROPIC_PRICES: PriceModel = {
  name: 'anthropic',
  cachedRead: 0.1,
  cacheWrite: 1.25,
  uncached: 1,
  output: 5,
  minCacheableTokens: 1024,
  caching: 'breakpoints',
  cacheIncrement: 1,
  images: 'anthropic',
};
/** Anthropic with the 1-hour cache: writes at 2x. @public (module API, docs/replay-and-cost.md "Cost model"; nothing here bills with it) */
export const ANTHROPIC_1H_PRICES: PriceModel = { ...ANTHROPIC_PRICES, name: 'anthropic-1h', cacheWrite: 2 };
/**
 * OpenAI, the gpt-4o family (the default): cached input 0.5x, no write premium, output 4x ($2.50 /
 * $1.25 / $10 per million), caching from 1,024 tokens in 128-token steps, images in 512 px tiles.
 */
export const OPENAI_PRICES: PriceModel = {
  name: 'openai',
  cachedRead: 0.5,
  cacheWrite: 1,
  uncached: 1,
  output: 4,
  minCacheableTokens: 1024,
  caching: 'automatic',
  cacheIncrement: 128,
  images: 'openai-tiles',
};
/** OpenAI gpt-4.1 family: cached input 0.25x, output 4x. @public (module API, docs/replay-and-cost.md "Cost model") */
export const OPENAI_GPT41_PRICES: PriceModel = { ...OPENAI_PRICES, name: 'openai-gpt-4.1', cachedRead: 0.25 };
/** OpenAI gpt-5 family: cached input 0.1x, output 8x. @public (module API, docs/replay-and-cost.md "Cost model") */
export const OPENAI_GPT5_PRICES: PriceModel = { ...OPENAI_PRICES, name: 'openai-gpt-5', cachedRead: 0.1, output: 8 };
/** The price models replay reports by default. */
export const PRICE_MODELS: readonly PriceModel[] = [ANTHROPIC_PRICES, OPENAI_PRICES];

/** What a call's input costs: tokens read from the cache, written to it, and neither. */
export interface InputBill {
  input: number;
  read: number;
  written: number;
  uncached: number;
  cost: number;
}

/**
 * The bill of one call's input of `inputTokens`, of which the first `sharedTokens` are a prefix the
 * provider holds from an earlier call (for `breakpoints` the caller passes the longest earlier
 * breakpoint; for `automatic` the shared prefix, rounded here to the provider's steps). A prompt
 * under the minimum is not cached at all and costs the plain input price.
 */
export function billInput(inputTokens: number, sharedTokens: number, prices: PriceModel): InputBill {
  const input = Math.max(0, inputTokens);
  if (input < prices.minCacheableTokens) return { input, read: 0, written: 0, uncached: input, cost: input * prices.uncached };
  let read = Math.min(Math.max(0, sharedTokens), input);
  if (read < prices.minCacheableTokens) read = 0;
  else if (prices.caching === 'automatic' && prices.cacheIncrement > 1) {
    read = prices.minCacheableTokens + Math.floor((read - prices.minCacheableTokens) / prices.cacheIncrement) * prices.cacheIncrement;
  }
  const written = input - read;
  return { input, read, written, uncached: 0, cost: read * prices.cachedRead + written * prices.cacheWrite };
}

/** The cost of one call's input, in units of one uncached-at-base-price token (see `billInput`). */
export function callCost(inputTokens: number, cachedPrefixTokens: number, prices: PriceModel): number {
  return billInput(inputTokens, cachedPrefixTokens, prices).cost;
}

/** One request as the cache sees it: the parts before the items, then each item's text and tokens. */
export interface PromptShape {
  fixed: string;
  fixedTokens: number;
  items: readonly string[];
  itemTokens: readonly number[];
}

/**
 * Tokens of the longest prefix `cur` shares with `prev`, at item granularity (a provider caches a
 * prefix of the serialised prompt; an item that changed ends it), and whether all of `prev` is a
 * prefix of `cur` (the call is cache-stable).
 */
export function sharedPrefix(prev: PromptShape | undefined, cur: PromptShape): { tokens: number; stable: boolean } {
  if (!prev || prev.fixed !== cur.fixed) return { tokens: 0, stable: false };
  let tokens = cur.fixedTokens;
  let i = 0;
  const n = Math.min(prev.items.length, cur.items.length);
  while (i < n && prev.items[i] === cur.items[i]) tokens += cur.itemTokens[i++]!;
  return { tokens, stable: i === prev.items.length };
}

// ---------------------------------------------------------------------------------------------
// What an item bills, beyond the engine's count of its strings

/** Image tokens when the size is unknown (a URL, an undecodable header): Anthropic's cap before resizing. */
const ANTHROPIC_UNKNOWN_IMAGE_TOKENS = 1600;
/** OpenAI, size unknown: a 1024 × 1024 image at high detail (4 tiles). */
const OPENAI_UNKNOWN_IMAGE_TOKENS = 85 + 170 * 4;

/**
 * Anthropic: an image whose long edge is over 1,568 px, or that would cost over about 1,600 tokens,
 * is scaled down first; then tokens = width × height / 750.
 */
export function anthropicImageTokens(size: ImageSize | undefined): number {
  if (!size) return ANTHROPIC_UNKNOWN_IMAGE_TOKENS;
  const s = Math.min(1, 1568 / Math.max(size.width, size.height));
  const w = Math.round(size.width * s),
    h = Math.round(size.height * s);
  return Math.min(ANTHROPIC_UNKNOWN_IMAGE_TOKENS, Math.ceil((w * h) / 750));
}

/**
 * OpenAI gpt-4o class, detail high or auto: fit in 2048 × 2048, scale the short side down to 768,
 * then 170 tokens per 512 px tile plus 85; detail low is 85.
 */
export function openaiImageTokens(size: ImageSize | undefined, detail?: string): number {
  if (detail === 'low') return 85;
  if (!size) return OPENAI_UNKNOWN_IMAGE_TOKENS;
  let w = size.width,
    h = size.height;
  const fit = Math.min(1, 2048 / Math.max(w, h));
  w *= fit;
  h *= fit;
  const short = Math.min(1, 768 / Math.min(w, h));
  w = Math.round(w * short);
  h = Math.round(h * short);
  return 85 + 170 * Math.ceil(w / 512) * Math.ceil(h / 512);
}

/** What billing needs of one item, found once per item text. */
export interface ItemBilling {
  /** a user message that is not only tool results: a new turn starts here */
  turnStart: boolean;
  /** tokens the engine counted for the strings of image blocks (their base64 data, mostly) */
  countedImageTokens: number;
  images: { size?: ImageSize; detail?: string }[];
  /** tokens the engine counted for thinking and reasoning blocks (text, signature, encrypted content) */
  countedThinkingTokens: number;
  /** tokens of their readable text: what is billed when the block is in the current turn */
  thinkingTextTokens: number;
}

const NO_BILLING: ItemBilling = { turnStart: false, countedImageTokens: 0, images: [], countedThinkingTokens: 0, thinkingTextTokens: 0 };

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const IMAGE_TYPES = new Set(['image', 'image_url', 'input_image']);
const THINKING_TYPES = new Set(['thinking', 'redacted_thinking', 'reasoning']);

/** The readable text of a thinking block or reasoning item (signatures and encrypted content excluded). */
function thinkingText(b: Record<string, unknown>): string {
  if (typeof b.thinking === 'string') return b.thinking;
  const parts: string[] = [];
  for (const key of ['summary', 'content']) {
    const v = b[key];
    if (Array.isArray(v)) for (const p of v) if (isObj(p) && typeof p.text === 'string') parts.push(p.text);
  }
  return parts.join('\n');
}

function imageOf(b: Record<string, unknown>): { size?: ImageSize; detail?: string } {
  let b64: string | undefined;
  let detail: string | undefined;
  if (isObj(b.source) && typeof b.source.data === 'string') b64 = b.source.data;
  const url = isObj(b.image_url) ? b.image_url.url : b.image_url;
  if (typeof url === 'string') b64 = dataUrlBase64(url);
  if (isObj(b.image_url) && typeof b.image_url.detail === 'string') detail = b.image_url.detail;
  if (typeof b.detail === 'string') detail = b.detail;
  const size = b64 ? imageSize(b64) : undefined;
  return { ...(size ? { size } : {}), ...(detail ? { detail } : {}) };
}

/** What an item (a wire-format message or input item, parsed) bills beyond its counted strings. */
export function itemBilling(item: unknown, wire: WireFormat, counter: TokenCounter): ItemBilling {
  if (!isObj(item)) return NO_BILLING;
  const out: ItemBilling = { turnStart: false, countedImageTokens: 0, images: [], countedThinkingTokens: 0, thinkingTextTokens: 0 };
  const isUser = item.role === 'user' && (wire !== 'openai-responses' || item.type === undefined || item.type === 'message');
  if (isUser) {
    const c = item.content;
    out.turnStart = typeof c === 'string' || !Array.isArray(c) || c.length === 0 || c.some((b) => !isObj(b) || b.type !== 'tool_result');
  }
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) {
      for (const x of v) visit(x);
      return;
    }
    if (!isObj(v)) return;
    const type = v.type;
    if (typeof type === 'string' && IMAGE_TYPES.has(type)) {
      out.countedImageTokens += stringTokens(v, counter);
      out.images.push(imageOf(v));
      return;
    }
    if (typeof type === 'string' && THINKING_TYPES.has(type)) {
      out.countedThinkingTokens += stringTokens(v, counter);
      out.thinkingTextTokens += counter.count(thinkingText(v));
      return;
    }
    for (const x of Object.values(v)) visit(x);
  };
  visit(item);
  // Chat-format reasoning (DeepSeek and others): a string field on the assistant message
  if (wire === 'openai-chat' && item.role === 'assistant') {
    for (const key of ['reasoning_content', 'reasoning']) {
      const r = item[key];
      if (typeof r === 'string') {
        const n = counter.count(r);
        out.countedThinkingTokens += n;
        out.thinkingTextTokens += n;
      }
    }
  }
  return out;
}

/**
 * Tokens an item is billed under `prices`: the engine's count, with image strings replaced by the
 * image's pixel price and thinking counted only as readable text and only within the current turn.
 */
export function billedItemTokens(engineTokens: number, b: ItemBilling, prices: PriceModel, inCurrentTurn: boolean): number {
  let n = engineTokens - b.countedImageTokens - b.countedThinkingTokens;
  for (const img of b.images) n += prices.images === 'anthropic' ? anthropicImageTokens(img.size) : openaiImageTokens(img.size, img.detail);
  if (inCurrentTurn) n += b.thinkingTextTokens;
  return Math.max(0, n);
}

// ---------------------------------------------------------------------------------------------
// Identifiers: what an agent would have to read back

/** A path: segments joined by slashes (see `isPath`), or a file name with a common source extension. */
const PATH =
  /(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)+[\w.@-]+|\b[\w-]{2,}\.(?:py|ts|tsx|js|jsx|mjs|cjs|json|jsonl|md|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sh|yml|yaml|toml|ini|cfg|txt|log|html|css|scss|sql|lock|xml|traj)\b/g;
/** `file:line` or `file:line:column`, the file a path or a name with an extension. */
const FILE_LINE = /(?:(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)*[\w@-][\w.@-]*\.[A-Za-z][\w]{0,5}):\d+(?::\d+)?\b/g;
/** Error codes: compiler and linter codes (E0425, TS2345, SC2086), errno names, HTTP statuses. */
const ERROR_CODE =
  /\b(?:[A-Z]{1,4}\d{3,5})\b|\bE(?:NOENT|ACCES|EXIST|ISDIR|NOTDIR|NOTEMPTY|PERM|PIPE|AGAIN|BUSY|INVAL|MFILE|NFILE|NOSPC|NOMEM|NOTSUP|ROFS|XDEV|ADDRINUSE|ADDRNOTAVAIL|CONNREFUSED|CONNRESET|CONNABORTED|TIMEDOUT|HOSTUNREACH|NETUNREACH|CANCELED|PROTO|NOTCONN|BADF|SRCH|CHILD|DEADLK|LOOP|NAMETOOLONG|OVERFLOW)\b|\bHTTP[ /]\d{3}\b/g;
/** Dotted names: os.path.join, self.config, package.json. */
const DOTTED = /(?<![\w.$])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+/g;
/** Words of letters, digits and underscores: kept if camelCase, PascalCase with an inner capital, snake_case or letters with digits. */
const WORD = /(?<![\w$])[A-Za-z_$][\w$]{2,}/g;
/** A number of three or more digits. */
const NUMBER = /(?<![\w.])\d{3,}(?![\w])/g;
/** A quoted string on one line: '…', "…" or `…`. */
const QUOTED = /(["'`])([^"'`\n\\]{3,120})\1/g;

/** Abbreviations that look like dotted names. */
const NOT_DOTTED = /^(?:e\.g|i\.e|etc|vs|a\.k\.a|cf|n\.b|p\.s)$/i;

/** A slash path is an identifier unless it is two plain words (and/or, input/output, I/O). */
function isPath(p: string): boolean {
  if (p.includes('/') && !/^[~./]/.test(p)) {
    const segs = p.split('/');
    if (segs.length === 2 && segs.every((s) => /^[A-Za-z]+$/.test(s))) return false;
  }
  return true;
}

/** Is this word an identifier (not a plain word): an inner capital, an underscore, or letters mixed with digits? */
export function isIdentifierWord(w: string): boolean {
  if (w.includes('_') || w.includes('$')) return /[A-Za-z0-9]/.test(w) && w.replace(/_/g, '').length >= 2;
  if (/[a-z][A-Z]/.test(w) || /[A-Z]{2}[a-z]{2}/.test(w)) return true; // camelCase, PascalCase, JSONDecoder
  if (/\d/.test(w) && /[A-Za-z]/.test(w)) return !/^\d+(?:st|nd|rd|th)$/i.test(w) && w.length >= 3;
  return false;
}

type Category = 'file-line' | 'path' | 'error-code' | 'dotted' | 'name' | 'number' | 'quoted';

/**
 * The identifiers in a reply that a miss-rate check looks for (unique, in order of category then
 * appearance): things an agent would have to read back if it could no longer see them. A path, a
 * `file:line`, an error code (E0425, TS2345, ENOENT, HTTP 404), a dotted name, a camelCase,
 * PascalCase-with-inner-capital or snake_case name, a word mixing letters and digits, a number of
 * three or more digits, and a quoted string that is not a single plain word. Plain words (lowercase
 * or Capitalised, no digits, underscores, dots or inner capitals) and all-capital words (API, JSON)
 * are not identifiers however long. A match inside a path, `file:line` or dotted name already taken
 * is part of it, not a second identifier.
 */
export function identifiersIn(text: string): string[] {
  return identifiersWithCategory(text).map((x) => x.id);
}

/** `identifiersIn` with the category each identifier was found as (tests and reports use it). */
export function identifiersWithCategory(text: string): { id: string; category: Category }[] {
  const out: { id: string; category: Category }[] = [];
  const seen = new Set<string>();
  const spans: [number, number][] = [];
  const inside = (s: number, e: number) => spans.some(([a, b]) => s >= a && e <= b);
  const add = (id: string, category: Category, s: number, e: number, claims: boolean) => {
    if (inside(s, e)) return;
    if (claims) spans.push([s, e]);
    if (!seen.has(id)) {
      seen.add(id);
      out.push({ id, category });
    }
  };
  for (const m of text.matchAll(FILE_LINE)) add(m[0], 'file-line', m.index, m.index + m[0].length, true);
  for (const m of text.matchAll(PATH)) {
    const id = m[0].replace(/[.,:;]+$/, '');
    if (id.length < 3 || /^[./]+$/.test(id) || !isPath(id)) continue;
    add(id, 'path', m.index, m.index + id.length, true);
  }
  for (const m of text.matchAll(ERROR_CODE)) add(m[0], 'error-code', m.index, m.index + m[0].length, true);
  for (const m of text.matchAll(DOTTED)) {
    const id = m[0].replace(/\.+$/, '');
    if (id.length < 4 || NOT_DOTTED.test(id) || !id.includes('.')) continue;
    add(id, 'dotted', m.index, m.index + id.length, true);
  }
  for (const m of text.matchAll(WORD)) if (isIdentifierWord(m[0])) add(m[0], 'name', m.index, m.index + m[0].length, false);
  for (const m of text.matchAll(NUMBER)) add(m[0], 'number', m.index, m.index + m[0].length, false);
  for (const m of text.matchAll(QUOTED)) {
    const inner = m[2]!.trim();
    // a single plain word in quotes is still a plain word; a JSON key is not a string the agent read
    if (inner.length < 3 || /^[A-Za-z]+$/.test(inner) || text[m.index + m[0].length] === ':') continue;
    if (!seen.has(inner)) {
      seen.add(inner);
      out.push({ id: inner, category: 'quoted' });
    }
  }
  return out;
}

export interface MissCheck {
  referenced: string[];
  missed: string[];
}

/**
 * Of the identifiers the agent wrote in its reply, those it could have taken from its context
 * (they occur in the original request) and, of those, the ones the projection no longer shows.
 */
export function missedIdentifiers(reply: string, original: string, projected: string): MissCheck {
  const referenced: string[] = [];
  const missed: string[] = [];
  for (const id of identifiersIn(reply)) {
    if (!original.includes(id)) continue;
    referenced.push(id);
    if (!projected.includes(id)) missed.push(id);
  }
  return { referenced, missed };
}

// ---------------------------------------------------------------------------------------------
// Read-backs: what a missed identifier costs

/** Lines of the stored output each side of the identifier that a read-back returns. */
const READ_BACK_CONTEXT_LINES = 5;
/** At most this many characters of them (a slice centred on the identifier). */
export const READ_BACK_MAX_CHARS = 2_000;
/** Tokens a tool call and its result cost as items beyond their text (the engine's 4 per item, twice). */
const READ_BACK_ITEM_TOKENS = 8;

/**
 * The part a read-back returns: the lines from READ_BACK_CONTEXT_LINES before the identifier's first
 * occurrence to as many after, cut to READ_BACK_MAX_CHARS centred on it ('' when absent).
 */
export function readBackSlice(source: string, id: string): string {
  const at = source.indexOf(id);
  if (at < 0) return '';
  let start = at,
    end = at + id.length;
  for (let n = 0; n <= READ_BACK_CONTEXT_LINES && start > 0; n++) {
    const p = source.lastIndexOf('\n', start - 1);
    start = p < 0 ? 0 : p;
    if (p < 0) break;
  }
  for (let n = 0; n <= READ_BACK_CONTEXT_LINES && end < source.length; n++) {
    const p = source.indexOf('\n', end + 1);
    end = p < 0 ? source.length : p;
    if (p < 0) break;
  }
  if (end - start > READ_BACK_MAX_CHARS) {
    const half = Math.floor((READ_BACK_MAX_CHARS - id.length) / 2);
    start = Math.max(start, at - half);
    end = Math.min(end, start + READ_BACK_MAX_CHARS);
  }
  return source.slice(start, end).replace(/^\n/, '');
}

/** The read tool call an agent writes to read `id` back from `handle` (its arguments as JSON). */
export function readBackCall(id: string, handle: string | undefined): string {
  return JSON.stringify({ handle: handle ?? '(rerun the tool)', grep: id, context: READ_BACK_CONTEXT_LINES });
}

/**
 * The extra cost of one read-back under `prices`: one more model call whose input is this call's
 * projected input (`prefixTokens`, just sent, so read from the cache) followed by the read call and
 * its answer (new input, written to the cache), and whose output is the read call the model writes.
 */
export function readBackCost(prefixTokens: number, callTokens: number, answerTokens: number, prices: PriceModel): number {
  const newTokens = callTokens + answerTokens + READ_BACK_ITEM_TOKENS;
  return billInput(prefixTokens + newTokens, prefixTokens, prices).cost + callTokens * prices.output;
}
