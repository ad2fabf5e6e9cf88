/**
 * What models cost in dollars, per million tokens, as their providers bill them today, and which
 * price model (the caching rules of src/replay/metrics.ts) each model belongs to.
 *
 * The replay measures cost in units of one uncached input token, so a figure relative to raw history
 * is the same whatever a model's base price; but a user pays in dollars, and the inspector and the
 * CLI show dollars for the session's own model. The family price models take their ratios (cached
 * read, cache write, output over input) from the reference model of each family here, so a price is
 * written once. Every row names the page it comes from; docs/prices.md cites them all.
 */

import { MODEL_PROVIDERS } from '../engine/clear-schedule';

/** One model's list price in US dollars per million tokens (standard tier, prompts under any long-context tier). */
export interface ModelPrice {
  model: string;
  /** the price model (metrics.ts `PriceModel.name`) whose caching rules bill this model */
  family: string;
  inputPerMTok: number;
  /** an input token read from the provider's prompt cache */
  cachedInputPerMTok: number;
  /** an input token written to the cache (Anthropic's 5-minute cache; the input price where writing costs nothing extra) */
  cacheWritePerMTok: number;
  outputPerMTok: number;
  /** prompts (Anthropic: prefixes up to a breakpoint) shorter than this are not cached */
  minCacheableTokens: number;
  /** where the figures come from */
  source: string;
}

const ANTHROPIC_SOURCE = 'https://platform.claude.com/docs/en/about-claude/pricing';
const ANTHROPIC_MIN_SOURCE = 'https://platform.claude.com/docs/en/build-with-claude/prompt-caching';
const OPENAI_SOURCE = 'https://platform.openai.com/docs/pricing';
const DEEPSEEK_SOURCE = 'https://api-docs.deepseek.com/quick_start/pricing';
const GEMINI_SOURCE = 'https://ai.google.dev/gemini-api/docs/pricing';

/**
 * Anthropic's minimum cacheable prompt: 1,024 tokens for Sonnet 4.x and Opus 4/4.1, 4,096 for Opus 4.5
 * and Haiku 4.5 (the prompt-caching page's table).
 */
const ANTHROPIC_MIN_SMALL = 1024;
const ANTHROPIC_MIN_LARGE = 4096;
/** OpenAI caches prompts from 1,024 tokens (in 128-token steps above it). */
const OPENAI_MIN = 1024;
/** DeepSeek's disk cache stores prefixes in 64-token units; shorter content is not cached. */
const DEEPSEEK_MIN = 64;
/**
 * Where implicit caching starts (the caching page's table): 4,096 tokens for the Pro models (3 Pro,
 * 2.5 Pro), 1,024 for the Flash models.
 */
const GEMINI_PRO_MIN = 4096;
const GEMINI_FLASH_MIN = 1024;
const GEMINI_CACHING_SOURCE = 'https://ai.google.dev/gemini-api/docs/caching';

function anthropic(model: string, input: number, output: number, minCacheableTokens: number): ModelPrice {
  // cache reads 0.1x, 5-minute cache writes 1.25x of the input price, for every Claude model of the table
  return {
    model,
    family: 'anthropic',
    inputPerMTok: input,
    cachedInputPerMTok: input / 10,
    cacheWritePerMTok: input * 1.25,
    outputPerMTok: output,
    minCacheableTokens,
    source: `${ANTHROPIC_SOURCE}; minimum: ${ANTHROPIC_MIN_SOURCE}`,
  };
}

function noWritePremium(
  model: string,
  family: string,
  input: number,
  cached: number,
  output: number,
  min: number,
  source: string,
): ModelPrice {
  return {
    model,
    family,
    inputPerMTok: input,
    cachedInputPerMTok: cached,
    cacheWritePerMTok: input,
    outputPerMTok: output,
    minCacheableTokens: min,
    source,
  };
}

/** Every model the replay can price by name; the first of each family is its reference. */
const MODEL_PRICES: readonly ModelPrice[] = [
  anthropic('claude-sonnet-4-5', 3, 15, ANTHROPIC_MIN_SMALL),
  anthropic('claude-opus-4-5', 5, 25, ANTHROPIC_MIN_LARGE),
  anthropic('claude-haiku-4-5', 1, 5, ANTHROPIC_MIN_LARGE),
  anthropic('claude-sonnet-4', 3, 15, ANTHROPIC_MIN_SMALL),
  anthropic('claude-opus-4-1', 15, 75, ANTHROPIC_MIN_SMALL),
  anthropic('claude-opus-4', 15, 75, ANTHROPIC_MIN_SMALL),
  // the GPT-5 family: cached input at a tenth of input, no write premium
  noWritePremium('gpt-5', 'openai', 1.25, 0.125, 10, OPENAI_MIN, OPENAI_SOURCE),
  noWritePremium('gpt-5.1', 'openai', 1.25, 0.125, 10, OPENAI_MIN, OPENAI_SOURCE),
  noWritePremium('gpt-5-codex', 'openai', 1.25, 0.125, 10, OPENAI_MIN, OPENAI_SOURCE),
  noWritePremium('gpt-5.1-codex', 'openai', 1.25, 0.125, 10, OPENAI_MIN, OPENAI_SOURCE),
  noWritePremium('gpt-5-mini', 'openai', 0.25, 0.025, 2, OPENAI_MIN, OPENAI_SOURCE),
  // the GPT-4o generation: cached input at half of input
  noWritePremium('gpt-4o', 'openai-4o', 2.5, 1.25, 10, OPENAI_MIN, OPENAI_SOURCE),
  noWritePremium('gpt-4o-mini', 'openai-4o', 0.15, 0.075, 0.6, OPENAI_MIN, OPENAI_SOURCE),
  // deepseek-chat and deepseek-reasoner are one model (V3.2) at one price, thinking or not
  noWritePremium('deepseek-chat', 'deepseek', 0.28, 0.028, 0.42, DEEPSEEK_MIN, DEEPSEEK_SOURCE),
  noWritePremium('deepseek-reasoner', 'deepseek', 0.28, 0.028, 0.42, DEEPSEEK_MIN, DEEPSEEK_SOURCE),
  // Gemini: implicit caching reads a cached prefix at a tenth of input, nothing is charged for writing
  // (explicit caches' storage is not modelled); prompts up to 200k tokens, over it Gemini 3 Pro bills
  // $4 / $0.40 / $18 and 2.5 Pro $2.50 / $0.25 / $15. Output prices include thinking tokens.
  noWritePremium('gemini-3-pro-preview', 'gemini', 2, 0.2, 12, GEMINI_PRO_MIN, `${GEMINI_SOURCE}; minimum: ${GEMINI_CACHING_SOURCE}`),
  noWritePremium('gemini-3-flash-preview', 'gemini', 0.5, 0.05, 3, GEMINI_FLASH_MIN, `${GEMINI_SOURCE}; minimum: ${GEMINI_CACHING_SOURCE}`),
  noWritePremium('gemini-2.5-pro', 'gemini', 1.25, 0.125, 10, GEMINI_PRO_MIN, `${GEMINI_SOURCE}; minimum: ${GEMINI_CACHING_SOURCE}`),
  // text input (audio input is billed higher)
  noWritePremium('gemini-2.5-flash', 'gemini', 0.3, 0.03, 2.5, GEMINI_FLASH_MIN, `${GEMINI_SOURCE}; minimum: ${GEMINI_CACHING_SOURCE}`),
  noWritePremium(
    'gemini-2.5-flash-lite',
    'gemini',
    0.1,
    0.01,
    0.4,
    GEMINI_FLASH_MIN,
    `${GEMINI_SOURCE}; minimum: ${GEMINI_CACHING_SOURCE}`,
  ),
];

/** Model names as transcripts spell them: a provider or router prefix (`openai/`, `litellm_proxy/neulab/`) dropped. */
function bareName(model: string): string {
  const name = model.trim().toLowerCase();
  return name.slice(name.lastIndexOf('/') + 1);
}

/**
 * A version after a known name makes another model (`claude-opus-4` + `-6`, `gpt-5` + `.2`): one or
 * two digits after a dash or a dot. A date (`-20250929`, `-2024-08-06`) or a tag (`-preview`) does not.
 */
const ANOTHER_VERSION = /^[-.]\d{1,2}(?!\d)/;

/** The family a model belongs to by its name alone, when the table does not list it. */
const FAMILY_PATTERNS: readonly (readonly [RegExp, string])[] = [...MODEL_PROVIDERS, [/deepseek/, 'deepseek'], [/gemini/, 'gemini']];

/**
 * A Claude name spelled with its version before its tier and `_` or `.` between (`claude_4_5_opus`,
 * `claude-4.5-sonnet`, as some gateways and Cline's providers name them), in Anthropic's order
 * (`claude-opus-4-5`); any other name as it is.
 */
function anthropicOrder(name: string): string {
  const m = /^claude[-_](\d)(?:[-_.](\d))?[-_](opus|sonnet|haiku)(.*)$/.exec(name);
  return m ? `claude-${m[3]}-${m[1]}${m[2] !== undefined ? `-${m[2]}` : ''}${m[4]!.replace(/_/g, '-')}` : name;
}

function listed(model: string): ModelPrice | undefined {
  const name = anthropicOrder(bareName(model));
  const exact = MODEL_PRICES.find((p) => p.model === name);
  if (exact) return exact;
  let best: ModelPrice | undefined;
  for (const p of MODEL_PRICES) {
    if (!name.startsWith(p.model) || ANOTHER_VERSION.test(name.slice(p.model.length))) continue;
    if (!best || p.model.length > best.model.length) best = p;
  }
  return best;
}

/** The price model (metrics.ts `PriceModel.name`) that bills `model`, or undefined when it is not known. */
export function familyOf(model: string | undefined): string | undefined {
  if (!model) return undefined;
  const p = listed(model);
  if (p) return p.family;
  const name = bareName(model);
  return FAMILY_PATTERNS.find(([re]) => re.test(name))?.[1];
}

/**
 * The dollar price of `model`: by its exact name, then the longest listed name it extends with a date
 * or a tag (`claude-sonnet-4-5-20250929`), then its family's reference model (whose name the result
 * carries, so a caller can say what it priced with); undefined for a model of no known family.
 */
export function modelPrice(model: string | undefined): ModelPrice | undefined {
  if (!model) return undefined;
  const p = listed(model);
  if (p) return p;
  const family = familyOf(model);
  return family ? familyReference(family) : undefined;
}

/** The reference model of a family (the first of the table in it): its ratios make the family's price model. */
export function familyReference(family: string): ModelPrice | undefined {
  return MODEL_PRICES.find((p) => p.family === family);
}
