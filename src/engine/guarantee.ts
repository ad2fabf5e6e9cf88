/**
 * The guarantee's ledger: what a session has cost so far under each price model, as the agent's
 * own requests (raw history) and as projected, both with caching. The clear stage (stages/clear.ts)
 * keeps one while it walks the session's calls and takes a cache-breaking decision only when the
 * ledger can pay for it: after the call that carries it, the projection has cost no more than raw
 * history under any price model, even if the session ended right there. Savings banked by earlier
 * reductions (offloads on arrival, earlier clears) are what a rewrite spends.
 *
 * The arithmetic is the providers' caching reduced to what the engine knows: a call reads from the
 * cache the prefix it shares with the previous call and writes the rest (clear-schedule.ts names
 * the prices). Minimum cacheable sizes and cache steps are left out: they bill raw and projection
 * alike to within one step.
 */
import { CACHE_PRICES, type CachePrices } from './clear-schedule';

/** One call as the cache sees it: tokens read from the previous call's prefix, and all tokens sent. */
export interface CallTokens {
  read: number;
  total: number;
}

/** The input cost of one call under `pm`, in uncached-token units. */
function callCost(c: CallTokens, pm: CachePrices): number {
  const read = Math.min(Math.max(0, c.read), c.total);
  return read * pm.cachedRead + (c.total - read) * pm.cacheWrite;
}

/**
 * How far over raw a session may be, at any call, on the strength of a saving still expected. Without
 * such room the first clear of a session that has banked nothing (small outputs, none offloaded)
 * could never be taken, however surely it would pay back: a clear early in a session rewrites a
 * large share of what the session has cost so far (on the long Claude Code session of the corpus,
 * its first clear is about a fifth of it). A quarter lets that clear through and bounds what a
 * session that ends right after a clear can lose; on the corpus no session ends over raw.
 */
export const MAX_OVERRUN = 0.25;

export class CostLedger {
  private readonly raw: number[];
  private readonly projected: number[];

  constructor(private readonly prices: readonly CachePrices[] = CACHE_PRICES) {
    this.raw = prices.map(() => 0);
    this.projected = prices.map(() => 0);
  }

  /**
   * True when, with this call charged, the projection has cost no more than raw under every price
   * model; `rewriteNext` tokens the next call will write again instead of reading are paid for now.
   */
  affords(raw: CallTokens, projected: CallTokens, rewriteNext = 0): boolean {
    return this.prices.every(
      (pm, i) =>
        this.projected[i]! + callCost(projected, pm) + rewriteNext * (pm.cacheWrite - pm.cachedRead) <= this.raw[i]! + callCost(raw, pm),
    );
  }

  /**
   * True when a decision that costs this call `projected` (against raw's `raw`) and saves
   * `expectedSaving(pm)` over the calls the session can be expected to still make leaves the
   * projection no dearer than raw by then, and no more than MAX_OVERRUN dearer even if the session
   * ended right after this call, under every price model.
   */
  paysBack(raw: CallTokens, projected: CallTokens, expectedSaving: (pm: CachePrices) => number): boolean {
    return this.prices.every((pm, i) => {
      const rawAfter = this.raw[i]! + callCost(raw, pm);
      const projectedAfter = this.projected[i]! + callCost(projected, pm);
      return projectedAfter - expectedSaving(pm) <= rawAfter && projectedAfter <= rawAfter * (1 + MAX_OVERRUN);
    });
  }

  charge(raw: CallTokens, projected: CallTokens): void {
    this.prices.forEach((pm, i) => {
      this.raw[i]! += callCost(raw, pm);
      this.projected[i]! += callCost(projected, pm);
    });
  }

  /** What the projection has saved so far under each price model (raw minus projected; negative when dearer). */
  banked(): Record<string, number> {
    return Object.fromEntries(this.prices.map((pm, i) => [pm.name, this.raw[i]! - this.projected[i]!]));
  }
}
