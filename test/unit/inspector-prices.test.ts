import { describe, expect, it } from 'vitest';
import { priceChoices } from '../../src/extension/inspector/prices';
import { costModelFor, dollars } from '../../src/protocol';

describe('the models the inspector prices a session at', () => {
  it("offers the session's own model first, by its dated name", () => {
    const [own] = priceChoices('claude-opus-4-5-20251101');
    expect(own!.family).toBe('anthropic');
    expect('claude-opus-4-5-20251101'.startsWith(own!.model)).toBe(true);
  });

  it('offers a picker of every price family the replay bills when the model is unknown, each model once', () => {
    const list = priceChoices('some-local-model');
    expect([...new Set(list.map((p) => p.family))]).toEqual(expect.arrayContaining(['anthropic', 'openai']));
    expect(new Set(list.map((p) => p.model)).size).toBe(list.length);
  });

  it("prices cost units at the model's input price under its family's cost record", () => {
    const gpt = priceChoices('gpt-5').find((p) => p.family === 'openai')!;
    expect(costModelFor(gpt.family)).toBe('openai');
    expect(costModelFor(undefined)).toBe('anthropic');
    expect(dollars(2_000_000, gpt.inputPerMTok)).toBeCloseTo(2 * gpt.inputPerMTok);
  });
});
