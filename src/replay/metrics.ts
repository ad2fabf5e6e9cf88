/**
 * The figures that judge a reduction policy on a replayed session (DESIGN.md, "What better means"):
 * what the provider caches between calls, what that costs under each provider's cache pricing, and
 * which identifiers the agent used next that the projection had hidden from it. Pure functions, so
 * the replay, the benchmarks and the inspector compute them the same way.
 */

/** How a provider bills input tokens, relative to its uncached input price. */
export interface PriceModel {
  name: string;
  /** a prefix the provider saw in the previous call */
  cachedRead: number;
  /** the rest of the input: written to the cache (Anthropic) or simply read (OpenAI) */
  uncached: number;
}

/** Anthropic: cache reads at 0.1x, cache writes at 1.25x of the base input price. */
export const ANTHROPIC_PRICES: PriceModel = { name: 'anthropic', cachedRead: 0.1, uncached: 1.25 };
/** OpenAI: cached input at 0.5x (some models less), uncached at 1x. */
export const OPENAI_PRICES: PriceModel = { name: 'openai', cachedRead: 0.5, uncached: 1 };
export const PRICE_MODELS: readonly PriceModel[] = [ANTHROPIC_PRICES, OPENAI_PRICES];

/** The cost of one call's input, in units of one uncached-at-base-price token. */
export function callCost(inputTokens: number, cachedPrefixTokens: number, prices: PriceModel): number {
  const cached = Math.min(cachedPrefixTokens, inputTokens);
  return cached * prices.cachedRead + (inputTokens - cached) * prices.uncached;
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

/** A file path: segments joined by slashes, or a file name with a common source extension. */
const PATH = /(?:~|\.{1,2})?\/?(?:[\w.@-]+\/)+[\w.@-]+|\b[\w-]{2,}\.(?:py|ts|tsx|js|jsx|mjs|cjs|json|md|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|sh|yml|yaml|toml|ini|cfg|txt|log|html|css|scss|sql|lock|xml)\b/g;
/** An identifier of ten or more characters. */
const IDENT = /\b[A-Za-z_][A-Za-z0-9_]{9,}\b/g;
/** A number of three or more digits. */
const NUMBER = /(?<![\w.])\d{3,}(?![\w])/g;

/** The identifiers in a reply that a miss-rate check looks for (unique, in order of appearance). */
export function identifiersIn(text: string): string[] {
  const seen = new Set<string>();
  for (const re of [PATH, IDENT, NUMBER]) {
    for (const m of text.matchAll(re)) {
      const id = m[0].replace(/[.,:;]+$/, '');
      if (id.length >= 3 && !/^\.+\/?$/.test(id)) seen.add(id);
    }
  }
  return [...seen];
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
