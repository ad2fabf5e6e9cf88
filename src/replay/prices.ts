/**
 * Dollar prices per million input and output tokens for the models the corpus and the agents use,
 * so the inspector can say what a session cost in money rather than in "uncached-token units"
 * (src/replay/metrics.ts bills in units of one uncached input token at the base price; a dollar
 * figure is that times the model's input price). Rates are the providers' list prices for the
 * standard (not batch, not priority) tier, from their pricing pages named in `source`.
 */

export interface ModelPrice {
  model: string;
  family: string;
  inputPerMTok: number;
  outputPerMTok: number;
  source: string;
}

const ANTHROPIC_SOURCE = 'https://www.anthropic.com/pricing#api';
const OPENAI_SOURCE = 'https://openai.com/api/pricing/';

/** Longest prefix first: `claude-opus-4-5-20251101` must match `claude-opus-4-5`, not `claude-opus-4`. */
const PRICES: readonly ModelPrice[] = [
  { model: 'claude-opus-4-5', family: 'anthropic', inputPerMTok: 5, outputPerMTok: 25, source: ANTHROPIC_SOURCE },
  { model: 'claude-opus-4-1', family: 'anthropic', inputPerMTok: 15, outputPerMTok: 75, source: ANTHROPIC_SOURCE },
  { model: 'claude-opus-4', family: 'anthropic', inputPerMTok: 15, outputPerMTok: 75, source: ANTHROPIC_SOURCE },
  { model: 'claude-sonnet-4-5', family: 'anthropic', inputPerMTok: 3, outputPerMTok: 15, source: ANTHROPIC_SOURCE },
  { model: 'claude-sonnet-4', family: 'anthropic', inputPerMTok: 3, outputPerMTok: 15, source: ANTHROPIC_SOURCE },
  { model: 'claude-haiku-4-5', family: 'anthropic', inputPerMTok: 1, outputPerMTok: 5, source: ANTHROPIC_SOURCE },
  { model: 'claude-3-7-sonnet', family: 'anthropic', inputPerMTok: 3, outputPerMTok: 15, source: ANTHROPIC_SOURCE },
  { model: 'claude-3-5-haiku', family: 'anthropic', inputPerMTok: 0.8, outputPerMTok: 4, source: ANTHROPIC_SOURCE },
  { model: 'gpt-5-mini', family: 'openai', inputPerMTok: 0.25, outputPerMTok: 2, source: OPENAI_SOURCE },
  { model: 'gpt-5-nano', family: 'openai', inputPerMTok: 0.05, outputPerMTok: 0.4, source: OPENAI_SOURCE },
  { model: 'gpt-5', family: 'openai', inputPerMTok: 1.25, outputPerMTok: 10, source: OPENAI_SOURCE },
  { model: 'gpt-4.1-mini', family: 'openai', inputPerMTok: 0.4, outputPerMTok: 1.6, source: OPENAI_SOURCE },
  { model: 'gpt-4.1', family: 'openai', inputPerMTok: 2, outputPerMTok: 8, source: OPENAI_SOURCE },
  { model: 'gpt-4o-mini', family: 'openai', inputPerMTok: 0.15, outputPerMTok: 0.6, source: OPENAI_SOURCE },
  { model: 'gpt-4o', family: 'openai', inputPerMTok: 2.5, outputPerMTok: 10, source: OPENAI_SOURCE },
];

/** `anthropic/claude-opus-4-5`, `openai/gpt-5` → the bare model name, lower case. */
function bare(model: string): string {
  const m = model.trim().toLowerCase();
  const slash = m.lastIndexOf('/');
  return slash >= 0 ? m.slice(slash + 1) : m;
}

/** The list price of `model` (a dated or provider-prefixed name matches its base model), or undefined when unknown. */
export function modelPrice(model: string | undefined): ModelPrice | undefined {
  if (!model) return undefined;
  const m = bare(model);
  return PRICES.find((p) => m === p.model || m.startsWith(`${p.model}-`) || m.startsWith(`${p.model}.`));
}

/** The provider family of a model name (`anthropic`, `openai`), also for models without a listed price. */
export function familyOf(model: string | undefined): string | undefined {
  if (!model) return undefined;
  const known = modelPrice(model);
  if (known) return known.family;
  const m = bare(model);
  if (m.startsWith('claude')) return 'anthropic';
  if (/^(gpt-|o\d|codex)/.test(m)) return 'openai';
  return undefined;
}
