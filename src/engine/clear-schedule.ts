/**
 * When a clear pays for itself. Clearing old results shortens every later request, but it changes
 * the request in the middle, so everything after the first cleared result is written to the
 * provider's cache again instead of read from it. The clear stage (stages/clear.ts) asks this module, at
 * each model call where it could fire, whether the saving over the likely rest of the session covers
 * that rewrite, under each provider's prices. It only looks at the call and the calls before it, so
 * a decision never depends on what came later and projections stay sticky.
 *
 * The rest of the session is unknown; the estimate is that it lasts as long again as it has so far
 * (a session 40 calls in has, on that guess, 40 more), capped so one long session does not justify
 * clearing on any trifle.
 */

/** Cache prices relative to an uncached input token (as the replay's cost model prices them). */
export interface CachePrices {
  name: string;
  cachedRead: number;
  cacheWrite: number;
}

/**
 * The replay's price models' cache rates (src/replay/prices.ts has the sources; the engine imports
 * nothing of ours, so they are repeated here): Anthropic reads 0.1x and writes 1.25x; OpenAI's GPT-5
 * family, DeepSeek and Gemini read 0.1x with no write premium; the GPT-4o generation reads 0.5x.
 * Anthropic's is the strictest: a clear that pays back there pays back under the others.
 */
const CACHE_PRICES: readonly CachePrices[] = [
  { name: 'anthropic', cachedRead: 0.1, cacheWrite: 1.25 },
  { name: 'openai', cachedRead: 0.1, cacheWrite: 1 },
  { name: 'openai-4o', cachedRead: 0.5, cacheWrite: 1 },
];

/** The remaining-calls guess never exceeds this: past it the guess is more hope than evidence. */
export const MAX_REMAINING_CALLS = 50;

export interface ClearPlan {
  /** tokens of the request at this call before the clear */
  running: number;
  /** tokens before the first result the clear would change (stay cached) */
  before: number;
  /** tokens the clear frees */
  freed: number;
  /** model calls so far, this one included */
  calls: number;
}

/** What a clear saves and costs under one price model, in uncached-token units. */
export function clearBalance(p: ClearPlan, prices: CachePrices): { saving: number; rewrite: number } {
  const remaining = Math.min(p.calls, MAX_REMAINING_CALLS);
  const rewritten = Math.max(0, p.running - p.before - p.freed);
  return { saving: p.freed * prices.cachedRead * remaining, rewrite: rewritten * (prices.cacheWrite - prices.cachedRead) };
}

/** True when the clear pays back its cache rewrite under every price model. */
export function clearPaysBack(p: ClearPlan, prices: readonly CachePrices[] = CACHE_PRICES): boolean {
  return (
    p.freed > 0 &&
    prices.every((pm) => {
      const b = clearBalance(p, pm);
      return b.saving >= b.rewrite;
    })
  );
}
