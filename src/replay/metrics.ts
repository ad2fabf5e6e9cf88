/**
 * The figures that judge a reduction policy on a replayed session (DESIGN.md, "What better means"):
 * what the provider caches between calls, what that costs under each provider's billing rules, and
 * which identifiers the agent used next that the projection had hidden from it. Pure functions, so
 * the replay, the benchmarks and the inspector compute them the same way.
 *
 * Billing follows the providers' documented rules (docs/replay-and-cost.md says what is counted and
 * what is left out, and cites every price): Anthropic caches up to cache breakpoints, reads at 0.1x,
 * writes the new part at 1.25x (5-minute cache), and caches nothing under 1,024 tokens; OpenAI,
 * DeepSeek and Gemini cache the longest prefix they have seen automatically (OpenAI from 1,024 tokens
 * in steps of 128) with no write premium. The rates come from src/replay/prices.ts. Thinking and
 * reasoning of earlier turns is not billed as input; images are billed by their pixels. A cache left
 * idle longer than the provider keeps it (`cacheIdleMs`) is gone but for the fixed part.
 */
import { IDLE_MS } from '../engine/clear-schedule';
import { escapeRe } from '../engine/config';
import { READ_BACK_ITEM_TOKENS, READ_BACK_MAX_CHARS } from '../engine/guarantee';
import { THINKING_TYPES, thinkingText } from '../engine/thinking';
import type { TokenCounter } from '../engine/tokens';
import type { WireFormat } from '../engine/types';
import { anthropicImageTokens, IMAGE_TYPES, imageOfBlock, imageTokens, openaiImageTokens, type ImageSize } from '../engine/images';
import { familyReference } from './prices';

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
  /**
   * How long the provider keeps a cached prefix unused, in ms: after a longer gap between two calls
   * the cache of the items is surely gone (the system prompt and tools, sent by every call of every
   * session of the agent, stay cached). The time after which the cache is surely cold, not the
   * shortest it may live, so a cold cache is never billed where a warm one was possible.
   */
  cacheIdleMs: number;
}

const HOUR_MS = 60 * 60_000;
/**
 * DeepSeek: an unused cache "will be automatically cleared, usually within a few hours to a few
 * days" (Context Caching guide), no firmer bound: surely cold only after a few days, read as three.
 */
const DEEPSEEK_IDLE_MS = 72 * HOUR_MS;
/**
 * Gemini: the Gemini API states no lifetime for implicit caching ("send requests with a similar
 * prefix in a short amount of time"); Google Cloud's context caching overview says implicitly
 * cached prefixes expire within 24 hours of their creation, most much sooner: surely cold after a day.
 */
const GEMINI_IDLE_MS = 24 * HOUR_MS;

/** Price ratios are kept to six decimals: enough for any published price, and exact for the round ones. */
const RATIO_DIGITS = 1e6;

/** A family's price model from its reference model's dollars (src/replay/prices.ts): every rate over the input price. */
function familyPrices(family: string, rules: Pick<PriceModel, 'caching' | 'cacheIncrement' | 'images' | 'cacheIdleMs'>): PriceModel {
  const ref = familyReference(family);
  if (!ref) throw new Error(`no reference model for the price family ${family}`);
  // dollars divide into binary fractions (0.3 / 3 is 0.09999…); the ratios are round by design
  const ratio = (dollars: number) => Math.round((dollars / ref.inputPerMTok) * RATIO_DIGITS) / RATIO_DIGITS;
  return {
    name: family,
    cachedRead: ratio(ref.cachedInputPerMTok),
    cacheWrite: ratio(ref.cacheWritePerMTok),
    uncached: 1,
    output: ratio(ref.outputPerMTok),
    minCacheableTokens: ref.minCacheableTokens,
    ...rules,
  };
}

/**
 * Anthropic (Claude Sonnet 4.5, the reference): cache reads 0.1x, 5-minute cache writes 1.25x, output
 * 5x; caches up to breakpoints, from 1,024 tokens (Opus 4.5 and Haiku 4.5: 4,096; see prices.ts).
 */
export const ANTHROPIC_PRICES: PriceModel = familyPrices('anthropic', {
  caching: 'breakpoints',
  cacheIncrement: 1,
  images: 'anthropic',
  cacheIdleMs: IDLE_MS.anthropic,
});
/** Anthropic with the 1-hour cache: writes at 2x, kept an hour idle. @public (module API, docs/replay-and-cost.md; nothing here bills with it) */
export const ANTHROPIC_1H_PRICES: PriceModel = {
  ...ANTHROPIC_PRICES,
  name: 'anthropic-1h',
  cacheWrite: 2,
  cacheIdleMs: IDLE_MS.anthropicHour,
};
/** OpenAI caches the longest prefix it has seen, from 1,024 tokens in steps of 128, and bills images in 512 px tiles. */
const OPENAI_RULES = { caching: 'automatic', cacheIncrement: 128, images: 'openai-tiles', cacheIdleMs: IDLE_MS.openai } as const;
/**
 * OpenAI, the GPT-5 family (GPT-5, GPT-5.1, their Codex models: what Codex and most agents use now):
 * cached input 0.1x, no write premium, output 8x ($1.25 / $0.125 / $10 per million).
 */
export const OPENAI_PRICES: PriceModel = familyPrices('openai', OPENAI_RULES);
/** OpenAI, the GPT-4o generation (kept for comparison): cached input 0.5x, output 4x ($2.50 / $1.25 / $10). */
export const OPENAI_4O_PRICES: PriceModel = familyPrices('openai-4o', OPENAI_RULES);
/** OpenAI gpt-4.1 family: cached input 0.25x, output 4x. @public (module API, docs/replay-and-cost.md) */
export const OPENAI_GPT41_PRICES: PriceModel = { ...OPENAI_4O_PRICES, name: 'openai-gpt-4.1', cachedRead: 0.25 };
/**
 * DeepSeek (deepseek-chat and deepseek-reasoner, V3.2): cache hits 0.1x, no write premium, output 1.5x;
 * the disk cache keeps prefixes in 64-token units. Images do not occur (the models take none).
 */
export const DEEPSEEK_PRICES: PriceModel = familyPrices('deepseek', {
  caching: 'automatic',
  cacheIncrement: 64,
  images: 'openai-tiles',
  cacheIdleMs: DEEPSEEK_IDLE_MS,
});
/**
 * Google Gemini 3 Pro (preview): implicit caching of a shared prefix from 4,096 tokens, cached input
 * 0.1x, no write premium (implicit caching stores nothing billable), output 6x. Images are billed as
 * OpenAI tiles, an approximation (Gemini bills them by media resolution).
 */
export const GEMINI_PRICES: PriceModel = familyPrices('gemini', {
  caching: 'automatic',
  cacheIncrement: 1,
  images: 'openai-tiles',
  cacheIdleMs: GEMINI_IDLE_MS,
});
/** The price models replay reports: the three the corpus is judged by first, then the other families it can name. */
export const PRICE_MODELS: readonly PriceModel[] = [ANTHROPIC_PRICES, OPENAI_PRICES, OPENAI_4O_PRICES, DEEPSEEK_PRICES, GEMINI_PRICES];

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

/** What billing needs of one item, found once per item text. */
export interface ItemBilling {
  /** a user message that is not only tool results: a new turn starts here */
  turnStart: boolean;
  /** tokens the engine counted for the strings of image blocks (their base64 data, mostly) */
  countedImageTokens: number;
  images: { size?: ImageSize; detail?: string }[];
  /** the item holds a thinking block or reasoning item (which the provider drops once its turn is over) */
  hasThinking: boolean;
  /** tokens the engine counted for thinking and reasoning blocks (their readable text: src/engine/thinking.ts) */
  countedThinkingTokens: number;
  /** tokens of their readable text: what is billed when the block is in the current turn */
  thinkingTextTokens: number;
}

const NO_BILLING: ItemBilling = {
  turnStart: false,
  countedImageTokens: 0,
  images: [],
  hasThinking: false,
  countedThinkingTokens: 0,
  thinkingTextTokens: 0,
};

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** What an item (a wire-format message or input item, parsed) bills beyond its counted strings. */
export function itemBilling(item: unknown, wire: WireFormat, counter: TokenCounter): ItemBilling {
  if (!isObj(item)) return NO_BILLING;
  const out: ItemBilling = { ...NO_BILLING, images: [] };
  const isUser = item.role === 'user' && (wire !== 'openai-responses' || item.type === undefined || item.type === 'message');
  if (isUser && wire === 'gemini') {
    // a Gemini user content that carries function responses answers a call; any other starts a turn
    const parts = Array.isArray(item.parts) ? item.parts : [];
    out.turnStart = !parts.some((p) => isObj(p) && isObj(p.functionResponse));
  } else if (isUser) {
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
      const img = imageOfBlock(v);
      out.countedImageTokens += imageTokens(img.size, img.detail);
      out.images.push(img);
      return;
    }
    if (typeof type === 'string' && THINKING_TYPES.has(type)) {
      const text = counter.count(thinkingText(v));
      out.hasThinking = true;
      out.countedThinkingTokens += text;
      out.thinkingTextTokens += text;
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
        if (n > 0) out.hasThinking = true;
        out.countedThinkingTokens += n;
        out.thinkingTextTokens += n;
      }
    }
  }
  return out;
}

/**
 * Tokens an item is billed under `prices`: the engine's count, with its estimate of each image
 * (../engine/images.ts) replaced by the provider's own price for the image's pixels, and thinking counted only as readable text and only within the current turn.
 */
export function billedItemTokens(engineTokens: number, b: ItemBilling, prices: PriceModel, inCurrentTurn: boolean): number {
  let n = engineTokens - b.countedImageTokens - b.countedThinkingTokens;
  for (const img of b.images) n += prices.images === 'anthropic' ? anthropicImageTokens(img.size) : openaiImageTokens(img.size, img.detail);
  if (inCurrentTurn) n += b.thinkingTextTokens;
  return Math.max(0, n);
}

// ---------------------------------------------------------------------------------------------
// Read-backs: what a missed identifier costs

/** Lines of the stored output each side of the identifier that a read-back returns. */
const READ_BACK_CONTEXT_LINES = 5;
// At most READ_BACK_MAX_CHARS of them (a slice centred on the identifier), and READ_BACK_ITEM_TOKENS
// for the read call and its answer as items: the engine charges read-backs to a session's ledger with
// the same figures (src/engine/guarantee.ts), so they are defined there once.
export { READ_BACK_MAX_CHARS };

/**
 * Where the part a read-back returns lies in `source`: from READ_BACK_CONTEXT_LINES lines before the
 * identifier's first occurrence to as many after, cut to READ_BACK_MAX_CHARS centred on it
 * (undefined when absent).
 */
function readBackRange(source: string, id: string): [number, number] | undefined {
  const at = source.indexOf(id);
  if (at < 0) return undefined;
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
  return [start, end];
}

/**
 * What one read of several identifiers from the same output returns: each one's part, overlapping
 * parts merged, in the order they occur, separated as grep separates its groups (`--`). An agent
 * that misses several things of one output asks for them in one read (a grep for all of them, with
 * context), and grep prints a line once even when several matches want it.
 */
export function readBackSlices(source: string, ids: readonly string[]): string {
  const ranges = ids.map((id) => readBackRange(source, id)).filter((r): r is [number, number] => r !== undefined);
  ranges.sort((a, b) => a[0] - b[0]);
  const merged: [number, number][] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r[0] <= last[1]) last[1] = Math.max(last[1], r[1]);
    else merged.push([r[0], r[1]]);
  }
  return merged.map(([a, b]) => source.slice(a, b).replace(/^\n/, '')).join('\n--\n');
}

/**
 * What a stored file input holds on disk: its string values, one after another (a Write's content,
 * a shell command's heredoc bodies), decoded. A stored input is the call's input as sent, often one
 * line of JSON; the agent that needs part of it back reads the file the marker names, so a read-back
 * returns lines of the file, not a slice of that line. Text that is not a JSON object is returned as is.
 */
export function fileText(stored: string): string {
  if (!stored.trimStart().startsWith('{')) return stored;
  let value: unknown;
  try {
    value = JSON.parse(stored);
  } catch {
    return stored;
  }
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === 'string') out.push(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  walk(value);
  return out.join('\n');
}

/**
 * The read tool call an agent writes to read `ids` back from `handle` (its arguments as JSON): one
 * grep for all of them, each escaped as a regular expression.
 */
export function readBackCall(ids: string | readonly string[], handle: string | undefined): string {
  const list = typeof ids === 'string' ? [ids] : ids;
  const grep = list.map(escapeRe).join('|');
  return JSON.stringify({ handle: handle ?? '(rerun the tool)', grep, context: READ_BACK_CONTEXT_LINES });
}

/**
 * The extra cost of the read-backs one call's misses need, under `prices`: one more model call (an
 * agent asks for them together, as parallel tool calls in one answer) whose input is this call's
 * projected input (`prefixTokens`, just sent, so read from the cache) followed by each read call and
 * its answer (new input, written to the cache), and whose output is the read calls the model writes.
 */
export function readBackCost(prefixTokens: number, reads: readonly { call: number; answer: number }[], prices: PriceModel): number {
  if (reads.length === 0) return 0;
  const newTokens = reads.reduce((a, r) => a + readBackTokens(r.call, r.answer), 0);
  const callTokens = reads.reduce((a, r) => a + r.call, 0);
  return billInput(prefixTokens + newTokens, prefixTokens, prices).cost + callTokens * prices.output;
}

/** The tokens one read-back adds to the agent's history: the call, its answer and their framing. */
export function readBackTokens(callTokens: number, answerTokens: number): number {
  return callTokens + answerTokens + READ_BACK_ITEM_TOKENS;
}
