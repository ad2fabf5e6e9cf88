/**
 * The line an observed proxy session shows (issue 21): what Spillway would have saved, from the cost
 * under caching with read-backs when the turns carry it, else from the tokens.
 */
import { describe, expect, it } from 'vitest';
import { wouldHaveSaved } from '../../webview/format';

describe('wouldHaveSaved', () => {
  it('says the share of the cost under caching saved, read-backs included, under the first price model', () => {
    expect(
      wouldHaveSaved({
        originalTokens: 1000,
        projectedTokens: 400,
        cost: { anthropic: { raw: 200, projected: 120, readBack: 10 }, openai: { raw: 100, projected: 90 } },
      }),
    ).toBe('would have saved 35.0% of the cost under caching (Anthropic prices, read-backs included)');
  });

  it('says how much more it would have cost when the projection and its read-backs cost more than raw', () => {
    expect(
      wouldHaveSaved({ originalTokens: 1000, projectedTokens: 900, cost: { openai: { raw: 100, projected: 95, readBack: 15 } } }),
    ).toBe('would have cost 10.0% more of the cost under caching (OpenAI prices, read-backs included)');
  });

  it('falls back to the tokens when no turn carries a cost', () => {
    expect(wouldHaveSaved({ originalTokens: 1000, projectedTokens: 250 })).toBe('would have saved 75.0% of the tokens sent');
  });
});
