/**
 * The held-out rule that picks the default (bench/heldout.ts): every corpus file has a source from
 * the fixtures' README tables, and the rule takes the candidate that misses the fewest aims (pooled
 * misses at most 1%, each agent family's at most 3%), met still with any one source left out, the
 * cheapest of those with read-backs.
 */
import { describe, expect, it } from 'vitest';
import { relative } from 'node:path';
import { pick, sourcesOf } from '../../bench/heldout';
import { fixtureFiles, fixturesDir } from '../../bench/peers';
import type { ReplayTotals } from '../../src/replay/replay';

/** Totals with what the rule reads: the miss rate and the cost with read-backs under both price models. */
const totals = (missRate: number, anthropic: number, openai = anthropic): ReplayTotals =>
  ({ missRate, costWithReadBacks: { anthropic: { relative: anthropic }, openai: { relative: openai } } }) as unknown as ReplayTotals;

describe('the held-out rule', () => {
  it('knows the source of every corpus file from the README tables', () => {
    const dir = fixturesDir();
    const sources = sourcesOf(dir);
    const files = fixtureFiles(dir).map(({ file }) => relative(dir, file));
    expect(files.filter((f) => !sources.has(f))).toEqual([]);
    for (const s of sources.values()) expect(s).toMatch(/^[\w.-]+\/[\w.-]+$/);
    expect(new Set(sources.values()).size).toBeGreaterThanOrEqual(21);
  });

  it('takes the cheapest of the candidates that miss the fewest aims', () => {
    const scored = [
      // cheapest, but over the pooled aim and one family's
      { pooled: totals(0.025, 0.7), families: [totals(0.04, 0.7), totals(0.01, 0.7)] },
      // meets every aim, dearer
      { pooled: totals(0.008, 0.85), families: [totals(0.029, 0.85), totals(0.001, 0.85)] },
      // meets every aim, cheaper by the mean of the two price models
      { pooled: totals(0.01, 0.8, 0.82), families: [totals(0.03, 0.8), totals(0.0, 0.8)] },
      // misses one family's aim only
      { pooled: totals(0.009, 0.75), families: [totals(0.031, 0.75), totals(0.0, 0.75)] },
    ];
    expect(pick(scored)).toBe(2);
    // with no candidate meeting every aim, the fewest missed wins over the cheapest
    expect(pick([scored[0]!, scored[3]!])).toBe(1);
  });

  it('counts an aim as met only if it is met with any one source left out', () => {
    const under = (missRate: number, cost: number) => ({ pooled: totals(missRate, cost), families: [totals(missRate, cost)] });
    // just under the pooled aim on the whole set, over it once one source is left out
    const fragile = { ...under(0.0095, 0.7), without: [under(0.009, 0.7), under(0.0115, 0.7)] };
    const steady = { ...under(0.006, 0.75), without: [under(0.005, 0.75), under(0.008, 0.75)] };
    expect(pick([fragile, steady])).toBe(1);
    // without the sets left out, the fragile one is the cheapest that meets every aim
    expect(pick([under(0.0095, 0.7), under(0.006, 0.75)])).toBe(0);
    // a family over its aim with one source left out counts too
    const family = { ...under(0.005, 0.7), without: [{ pooled: totals(0.005, 0.7), families: [totals(0.031, 0.7)] }] };
    expect(pick([family, steady])).toBe(1);
  });
});
