/** Prices as billed today: the dollar table, the family of every model the corpus names, and the price models built from them. */
import { describe, expect, it } from 'vitest';
import {
  ANTHROPIC_PRICES,
  DEEPSEEK_PRICES,
  GEMINI_PRICES,
  OPENAI_4O_PRICES,
  OPENAI_PRICES,
  PRICE_MODELS,
  type PriceModel,
} from '../../src/replay/metrics';
import { CACHE_PRICES } from '../../src/engine/clear-schedule';
import { familyOf, modelPrice } from '../../src/replay/prices';
import type { Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';

/** The model of every session in test/fixtures/sessions, spelled as its transcript spells it. */
const CORPUS_MODELS: Record<string, string> = {
  'claude-sonnet-4-5-20250929': 'anthropic',
  'claude-opus-4-5-20251101': 'anthropic',
  'claude-haiku-4-5-20251001': 'anthropic',
  'claude-sonnet-4-20250514': 'anthropic',
  'gpt-5.1-codex': 'openai',
  'gpt-5-codex': 'openai',
  'gpt-5-2025-08-07': 'openai',
  'openai/gpt-5-ca': 'openai',
  'gpt-4o': 'openai-4o',
  'litellm_proxy/neulab/gpt-4o-2024-08-06': 'openai-4o',
  'deepseek-chat': 'deepseek',
  'deepseek/deepseek-reasoner': 'deepseek',
  'google/gemini-3-pro-preview': 'gemini',
};

describe('model prices', () => {
  it('names the family of every model the corpus sessions call, and every family is a price model the replay reports', () => {
    const names = PRICE_MODELS.map((p) => p.name);
    for (const [model, family] of Object.entries(CORPUS_MODELS)) {
      expect(familyOf(model), model).toBe(family);
      expect(names).toContain(family);
      expect(modelPrice(model)?.family, model).toBe(family);
    }
  });

  it('prices a dated model name as the listed model it extends, the longest one', () => {
    expect(modelPrice('claude-sonnet-4-5-20250929')).toMatchObject({ model: 'claude-sonnet-4-5', inputPerMTok: 3, outputPerMTok: 15 });
    expect(modelPrice('claude-sonnet-4-20250514')).toMatchObject({ model: 'claude-sonnet-4', inputPerMTok: 3 });
    expect(modelPrice('claude-opus-4-5-20251101')).toMatchObject({ model: 'claude-opus-4-5', inputPerMTok: 5, cachedInputPerMTok: 0.5 });
    expect(modelPrice('litellm_proxy/neulab/gpt-4o-2024-08-06')).toMatchObject({ model: 'gpt-4o', cachedInputPerMTok: 1.25 });
    expect(modelPrice('gpt-4o-mini')).toMatchObject({ model: 'gpt-4o-mini', inputPerMTok: 0.15 });
  });

  it('prices a newer version of a listed model by its family, never as the older version', () => {
    // claude-opus-4 is $15; an unlisted 4.6 must not inherit that by prefix
    expect(modelPrice('claude-opus-4-6')).toMatchObject({ model: 'claude-sonnet-4-5', family: 'anthropic' });
    expect(modelPrice('gpt-5.2')).toMatchObject({ model: 'gpt-5', family: 'openai' });
  });

  it('prices the Gemini 2.5 and 3 models Gemini CLI calls: cached reads at a tenth, no write premium, a preview tag or a flash-lite told apart', () => {
    expect(modelPrice('gemini-2.5-pro')).toMatchObject({
      inputPerMTok: 1.25,
      cachedInputPerMTok: 0.125,
      cacheWritePerMTok: 1.25,
      outputPerMTok: 10,
    });
    expect(modelPrice('models/gemini-2.5-flash-preview-09-2025')).toMatchObject({
      model: 'gemini-2.5-flash',
      inputPerMTok: 0.3,
      minCacheableTokens: 1024,
    });
    expect(modelPrice('gemini-2.5-flash-lite')).toMatchObject({ model: 'gemini-2.5-flash-lite', cachedInputPerMTok: 0.01 });
    expect(modelPrice('gemini-3-flash-preview')).toMatchObject({ inputPerMTok: 0.5, outputPerMTok: 3 });
    // an unlisted Gemini is priced as the family's reference
    expect(modelPrice('gemini-3.8-flash')).toMatchObject({ model: 'gemini-3-pro-preview', family: 'gemini' });
    for (const m of ['gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite', 'gemini-3-flash-preview']) {
      const p = modelPrice(m)!;
      expect(p.cachedInputPerMTok / p.inputPerMTok, m).toBeCloseTo(0.1);
      expect(p.source, m).toContain('https://ai.google.dev/gemini-api/docs/pricing');
    }
  });

  it("reads a Claude name with its version before its tier (a gateway's or Cline's spelling) in Anthropic's order", () => {
    expect(modelPrice('claude_4_5_opus')).toMatchObject({ model: 'claude-opus-4-5', inputPerMTok: 5 });
    expect(modelPrice('bedrock/claude-4.5-haiku')).toMatchObject({ model: 'claude-haiku-4-5', inputPerMTok: 1 });
    expect(modelPrice('claude-4-sonnet-20250514')).toMatchObject({ model: 'claude-sonnet-4' });
    // Claude 3 names are version first in Anthropic's own order too: still the family's reference
    expect(modelPrice('claude-3-5-sonnet-20241022')).toMatchObject({ family: 'anthropic' });
  });

  it('knows nothing of a model of no known family', () => {
    expect(familyOf('llama-3-70b')).toBeUndefined();
    expect(modelPrice('llama-3-70b')).toBeUndefined();
    expect(familyOf(undefined)).toBeUndefined();
    expect(modelPrice('')).toBeUndefined();
  });

  it('cites a source for every price', () => {
    for (const model of Object.keys(CORPUS_MODELS)) expect(modelPrice(model)!.source).toMatch(/^https:\/\//);
  });
});

describe('price models by family', () => {
  it('Anthropic reads at 0.1x and writes at 1.25x; output 5x', () => {
    expect(ANTHROPIC_PRICES).toMatchObject({
      cachedRead: 0.1,
      cacheWrite: 1.25,
      output: 5,
      minCacheableTokens: 1024,
      caching: 'breakpoints',
    });
  });

  it('OpenAI means the GPT-5 family: cached input 0.1x, no write premium, output 8x', () => {
    expect(OPENAI_PRICES).toMatchObject({ name: 'openai', cachedRead: 0.1, cacheWrite: 1, output: 8, cacheIncrement: 128 });
  });

  it('the GPT-4o generation is kept apart at 0.5x', () => {
    expect(OPENAI_4O_PRICES).toMatchObject({ name: 'openai-4o', cachedRead: 0.5, cacheWrite: 1, output: 4, cacheIncrement: 128 });
  });

  it("the engine's ledger prices as the meter bills: the three models the guarantee is stated for, from the first token and from the meter's minimum", () => {
    const meter = [ANTHROPIC_PRICES, OPENAI_PRICES, OPENAI_4O_PRICES];
    const rates = (pm: PriceModel) => ({ family: pm.name, cachedRead: pm.cachedRead, cacheWrite: pm.cacheWrite });
    expect(CACHE_PRICES).toEqual([
      ...meter.map((pm) => ({ name: pm.name, ...rates(pm), minCached: 0 })),
      ...meter.map((pm) => ({ name: `${pm.name}-min`, ...rates(pm), minCached: pm.minCacheableTokens })),
    ]);
  });

  it('DeepSeek and Gemini read at 0.1x with no write premium, from their own minimums', () => {
    expect(DEEPSEEK_PRICES).toMatchObject({ cachedRead: 0.1, cacheWrite: 1, output: 1.5, minCacheableTokens: 64, cacheIncrement: 64 });
    expect(GEMINI_PRICES).toMatchObject({ cachedRead: 0.1, cacheWrite: 1, output: 6, minCacheableTokens: 4096 });
  });
});

describe('the replay names the session model', () => {
  const transcript = (base: Record<string, unknown>): Transcript => ({
    source: 'anthropic-messages',
    wire: 'anthropic-messages',
    base,
    items: [{ role: 'user', content: 'hello' }],
    calls: [{ end: 1, reply: 'hi' }],
    skipped: { total: 0, byReason: {}, notes: [] },
  });

  it('says the model and the price model that bills it, and bills every price model', () => {
    const r = replay(transcript({ model: 'claude-opus-4-5-20251101' }), { config: { tokenizer: 'approximate' } });
    expect(r.model).toBe('claude-opus-4-5-20251101');
    expect(r.family).toBe('anthropic');
    expect(Object.keys(r.totals.cost)).toEqual(PRICE_MODELS.map((p) => p.name));
    expect(Object.keys(r.calls[0]!.cost)).toEqual(PRICE_MODELS.map((p) => p.name));
  });

  it('leaves both out when the transcript does not name its model', () => {
    const r = replay(transcript({}), { config: { tokenizer: 'approximate' } });
    expect(r).not.toHaveProperty('model');
    expect(r).not.toHaveProperty('family');
  });
});
