/**
 * When a cache-breaking reduction pays for itself. Clearing old results shortens every later
 * request, but it changes the request in the middle, so everything after the first cleared result
 * is written to the provider's cache again instead of read from it. The clear stage
 * (stages/clear.ts) asks this module, at each model call where it could fire, whether the saving
 * over the calls the session can still be expected to make covers that rewrite, under every price
 * model. It only looks at the call and the calls before it, so a decision never depends on what
 * came later and projections stay sticky.
 *
 * The rest of the session is unknown. How many calls remain is learned from the corpus
 * (session-lengths.ts): of the corpus sessions that got as far as this one, the number of calls
 * they still made, at a low quantile, so a clear pays back in most sessions that reach it rather
 * than on average (a few very long sessions would otherwise justify clearing in every short one).
 */
import type { PaybackHorizon } from './config';
import { CORPUS_SESSION_LENGTHS } from './session-lengths';

/** Cache prices relative to an uncached input token, and the provider's rule of what it caches. */
export interface CachePrices {
  /** unique among the models the ledger keeps */
  name: string;
  /** the provider the prices are of: `anthropic`, `openai` or `openai-4o` */
  family: string;
  cachedRead: number;
  cacheWrite: number;
  /** a request shorter than this is not cached (billed at the plain input price), and a shorter prefix is not read */
  minCached: number;
}

/** Each price model as the ledger keeps it twice: cached from the first token, and from the provider's minimum. */
const withMinimums = (models: readonly Omit<CachePrices, 'family' | 'minCached'>[], minimum: number): CachePrices[] => [
  ...models.map((pm) => ({ ...pm, family: pm.name, minCached: 0 })),
  ...models.map((pm) => ({ ...pm, name: `${pm.name}-min`, family: pm.name, minCached: minimum })),
];

/**
 * The price models a decision must pay back under, each as the provider bills cached input today
 * (src/replay/prices.ts has the sources; the engine imports nothing of ours, so they are repeated
 * here): Anthropic reads 0.1x and writes the 5-minute cache at 1.25x; OpenAI's GPT-5 family,
 * DeepSeek and Gemini read 0.1x with no write premium; the GPT-4o generation reads 0.5x. A rewrite
 * is dearest under Anthropic and a saving smallest under the 0.1x readers, so every model has its say.
 *
 * Each is kept twice: caching from the first token, and, as the providers do, caching nothing under
 * 1,024 tokens (a shorter request is billed at the plain price, a shorter prefix is not read). Near
 * that size either rule can be the dearer for the projection, so a decision must hold under both.
 * OpenAI's 128-token cache steps are left out: they move raw and projection alike by less than one
 * step's price a call, and counting them would stop reductions on that noise.
 */
export const CACHE_PRICES: readonly CachePrices[] = withMinimums(
  [
    { name: 'anthropic', cachedRead: 0.1, cacheWrite: 1.25 },
    { name: 'openai', cachedRead: 0.1, cacheWrite: 1 },
    { name: 'openai-4o', cachedRead: 0.5, cacheWrite: 1 },
  ],
  1_024,
);

/**
 * How long each provider keeps a cached prefix unused. A call sent longer than that after the previous
 * one of its session, and a minute more for the clocks, finds the cache gone: it writes the whole
 * request again, raw history as much as the projection, so a clear made there rewrites nothing it
 * would not have. The replay bills with the same times (src/replay/metrics.ts).
 */
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
export const IDLE_MS = {
  /** Anthropic's default cache: 5 minutes, refreshed each time it is read. */
  anthropic: 5 * MINUTE_MS,
  /** Anthropic's extended cache (`ttl: "1h"`): one hour, refreshed each time it is read. */
  anthropicHour: HOUR_MS,
  /**
   * OpenAI: cached prefixes stay "5 to 10 minutes of inactivity, up to an hour" (prompt caching guide;
   * the opt-in 24-hour retention is not billed here): surely cold after an hour.
   */
  openai: HOUR_MS,
} as const;
const FAMILY_IDLE_MS: Readonly<Record<string, number>> = {
  anthropic: IDLE_MS.anthropic,
  openai: IDLE_MS.openai,
  'openai-4o': IDLE_MS.openai,
};
const IDLE_MARGIN_MS = MINUTE_MS;

/** True when a call sent `gapMs` after the previous one finds `pm`'s cache surely cold (`hourCache`: the request asked Anthropic for the 1-hour cache). */
export function coldAfter(gapMs: number | undefined, pm: CachePrices, hourCache = false): boolean {
  if (gapMs === undefined) return false;
  const idle = pm.family === 'anthropic' && hourCache ? IDLE_MS.anthropicHour : (FAMILY_IDLE_MS[pm.family] ?? Number.POSITIVE_INFINITY);
  return gapMs > idle + IDLE_MARGIN_MS;
}

/** The providers the ledger knows the prices of (CachePrices families): what ProjectOptions.provider may say. */
export const PROVIDERS: readonly string[] = [...new Set(CACHE_PRICES.map((pm) => pm.family))];

/**
 * The provider a model is billed by, from its name (`claude-sonnet-4-5`, `anthropic/claude-…`,
 * `gpt-5-codex`, `gpt-4o-mini`): Claude models cache by Anthropic's rules wherever they are served
 * (Anthropic, Bedrock, Vertex, a router), GPT models by OpenAI's. Undefined for any other model.
 */
export function providerOfModel(model: string | undefined): string | undefined {
  if (!model) return undefined;
  const name = model.slice(model.lastIndexOf('/') + 1).toLowerCase();
  return MODEL_PROVIDERS.find(([re]) => re.test(name))?.[1];
}

/** Model names to the provider that bills them, first match wins (the replay adds the families the ledger does not price). */
export const MODEL_PROVIDERS: readonly (readonly [RegExp, string])[] = [
  [/claude/, 'anthropic'],
  [/gpt-4o|chatgpt-4o/, 'openai-4o'],
  [/gpt-5|codex/, 'openai'],
];

/**
 * The price models a session's decisions must hold under: those of the provider its requests go to
 * (`route`: a CachePrices family, as the proxy or the replay knows it), every model when it is not known.
 */
export function routePrices(route: string | undefined): readonly CachePrices[] {
  const mine = route ? CACHE_PRICES.filter((pm) => pm.family === route) : [];
  return mine.length ? mine : CACHE_PRICES;
}

/**
 * The quantile of the remaining calls that the schedule counts on: a quarter of the corpus sessions
 * that reached this call ended sooner, three quarters went on at least this long.
 */
const REMAINING_QUANTILE = 0.25;
/** Fewer sessions than this that reached a call say too little: past it the last estimate holds. */
const MIN_SESSIONS = 4;

/**
 * For each number of calls made so far (index k, 1-based; index 0 unused), the calls a session can
 * still be expected to make, learned from `lengths` as described above.
 */
export function remainingCallsTable(lengths: readonly number[]): number[] {
  const sorted = [...lengths].sort((a, b) => a - b);
  const max = sorted.length ? sorted[sorted.length - 1]! : 0;
  const table = [0];
  for (let k = 1; k <= max; k++) {
    const left = sorted.filter((n) => n >= k).map((n) => n - k);
    if (left.length < MIN_SESSIONS) break;
    const at = REMAINING_QUANTILE * (left.length - 1);
    const lo = Math.floor(at);
    const v = left[lo]! + (left[Math.min(lo + 1, left.length - 1)]! - left[lo]!) * (at - lo);
    table.push(Math.round(v * 10) / 10);
  }
  return table;
}

const REMAINING = remainingCallsTable(CORPUS_SESSION_LENGTHS);

/**
 * The calls a session that has made `calls` calls (this one included) can still be expected to make,
 * by `clear.paybackHorizon`: `corpus` reads the table learned from the corpus (above); the others
 * assume only that a session which has lasted n calls is as likely as not to last n more (Lindy's
 * law: P(length > n + r | length > n) = n / (n + r)), which needs no corpus and holds its shape at
 * any length, where the table, learned from a few dozen sessions, jumps about past 50 calls and
 * ends where its sessions do. `third`: the calls three in four sessions still make (n / 3), the
 * table's own quantile; `same`: even odds (n).
 */
export function expectedRemainingCalls(calls: number, horizon: PaybackHorizon = 'corpus', table: readonly number[] = REMAINING): number {
  if (horizon === 'third') return calls / 3;
  if (horizon === 'same') return calls;
  if (table.length < 2) return 0;
  return table[Math.max(1, Math.min(calls, table.length - 1))]!;
}

export interface ClearPlan {
  /** tokens of the request at this call before the clear */
  running: number;
  /** tokens before the first result the clear would change (stay cached) */
  before: number;
  /** tokens the clear frees */
  freed: number;
  /** model calls so far, this one included */
  calls: number;
  /** how far ahead the clear must pay back (`clear.paybackHorizon`; `corpus` when omitted) */
  horizon?: PaybackHorizon;
  /** the calls the session really has left, when known (the limit's oracle: ../types.ts, Hindsight); overrides `horizon` */
  remaining?: number;
}

/** What a clear saves and costs under one price model, in uncached-token units. */
export function clearBalance(p: ClearPlan, prices: CachePrices): { saving: number; rewrite: number } {
  const remaining = p.remaining ?? expectedRemainingCalls(p.calls, p.horizon);
  const rewritten = Math.max(0, p.running - p.before - p.freed);
  return { saving: p.freed * prices.cachedRead * remaining, rewrite: rewritten * (prices.cacheWrite - prices.cachedRead) };
}

/** True when the clear pays back its cache rewrite under every price model given (the clear stage gives the route's that find the cache warm: none, at a cold call). */
export function clearPaysBack(p: ClearPlan, prices: readonly CachePrices[] = CACHE_PRICES): boolean {
  return (
    p.freed > 0 &&
    prices.every((pm) => {
      const b = clearBalance(p, pm);
      return b.saving >= b.rewrite;
    })
  );
}
