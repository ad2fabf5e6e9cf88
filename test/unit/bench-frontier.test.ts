/**
 * The benchmark's frontier and aims (bench/frontier.ts, bench/peers.ts): which sessions it runs,
 * which points are on the frontier, and how the aims table judges the default.
 */
import { describe, expect, it } from 'vitest';
import { frontierSvg, frontierTable, markFrontier, sweepPoints } from '../../bench/frontier';
import { rowTotals, type Row } from '../../bench/metrics';
import { poolReplays } from '../../src/replay/replay';
import { aimsFor, fixtureFiles, poolRows, sessionName } from '../../bench/peers';
import { CORPUS } from '../support/corpus';

function row(strategy: string, a: number, o: number, missed: number, referenced = 100, extra: Partial<Row> = {}): Row {
  return {
    strategy,
    kind: 'spillway',
    calls: 10,
    inputTokens: 1,
    rawTokens: 1,
    reduction: 0,
    largest: 1,
    rawLargest: 1,
    largestRel: 1,
    recoverableShare: null,
    cacheStableShare: 1,
    cost: { anthropic: a, openai: o },
    costUnits: { anthropic: { raw: 100, projected: 100 * a, readBack: 0 }, openai: { raw: 100, projected: 100 * o, readBack: 0 } },
    costWithReadBacks: { anthropic: a, openai: o },
    missRate: missed / referenced,
    referencedIds: referenced,
    missedIds: missed,
    referencedIdsBefore: referenced * 2,
    missedIdsBefore: missed * 2,
    missRateBefore: missed / referenced,
    msPerCall: 0,
    overParse: 0.1,
    sampledEngineMs: 1,
    sampledParseMs: 10,
    removedTokens: 0,
    recoverableTokens: 0,
    ...extra,
  };
}

describe('bench sessions', () => {
  it('runs every session of the corpus (55), the five long ones marked long', () => {
    const files = fixtureFiles(CORPUS);
    expect(files).toHaveLength(55);
    expect(files.filter((f) => f.long)).toHaveLength(5);
    expect(files.filter((f) => f.long).map((f) => sessionName(f.file, true))).toContain('long: mini-swe-agent psf__requests-1142');
  });

  it('gives every session its own name', () => {
    const names = fixtureFiles(CORPUS).map((f) => sessionName(f.file, f.long));
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('frontier', () => {
  it('a point is on the frontier unless another is at least as cheap with at most as many misses, and better in one', () => {
    const pts = markFrontier([
      { name: 'cheap, misses', kind: 'peer', row: row('a', 0.5, 0.5, 20) },
      { name: 'dominated', kind: 'preset', row: row('b', 0.9, 0.6, 5) },
      { name: 'default', kind: 'default', row: row('c', 0.7, 0.6, 2) },
      { name: 'raw', kind: 'raw', row: row('d', 1, 1, 0) },
    ]);
    expect(pts.map((p) => [p.name, p.frontier.anthropic, p.frontier.openai])).toEqual([
      ['cheap, misses', true, true],
      ['dominated', false, false],
      ['default', true, true],
      ['raw', true, true],
    ]);
  });

  it('the table lists points cheapest first and bolds the default; the chart draws every point in both panels', () => {
    const pts = markFrontier([
      { name: 'spillway', kind: 'default', row: row('s', 0.7, 0.6, 2) },
      { name: 'preset eino', kind: 'preset', row: row('e', 0.9, 0.8, 1) },
    ]);
    const table = frontierTable(pts);
    expect(table.split('\n')[2]).toBe('| **spillway** | default | 70.0% | 60.0% | 2.0% (2/100) | 70.0% | 60.0% | yes / yes |');
    const svg = frontierSvg('t', pts, { anthropic: 0.75, openai: 0.65 });
    expect(svg.match(/<circle [^>]*><title>/g)).toHaveLength(4);
    expect(svg).toContain('aim: ≤ 75%, miss ≤ 3%');
    expect(svg).toContain('aim: ≤ 65%, miss ≤ 3%');
  });

  it('the quick sweep is a subset of the full one', () => {
    const full = sweepPoints(false).map((p) => p.name);
    expect(sweepPoints(true).every((p) => full.includes(p.name))).toBe(true);
    expect(full.length).toBeGreaterThan(sweepPoints(true).length);
  });
});

describe('aims', () => {
  it('meets the cost aims only at a miss rate of at most 3%', () => {
    const ok = aimsFor(row('spillway', 0.7, 0.6, 2), []);
    expect(ok.find((a) => a.aim.startsWith('cost ≤ 75%') && a.aim.includes('Anthropic'))!.met).toBe(true);
    expect(ok.find((a) => a.aim.startsWith('cost ≤ 75%') && a.aim.includes('OpenAI'))!.met).toBe(true);
    expect(ok.find((a) => a.aim.startsWith('ambition'))!.met).toBe(false);
    const missing = aimsFor(row('spillway', 0.7, 0.6, 4), []);
    expect(missing.find((a) => a.aim.startsWith('cost ≤ 75%'))!.met).toBe(false);
  });

  it('ranks by cost with read-backs, and names every peer not above the default', () => {
    const rb = (a: number, o: number) => ({ costWithReadBacks: { anthropic: a, openai: o } });
    const aims = aimsFor(row('spillway', 0.7, 0.6, 2, 100, rb(0.72, 0.62)), [
      row('peer x', 0.5, 0.5, 30, 100, rb(0.9, 0.8)),
      row('peer y', 0.8, 0.6, 0, 100, rb(0.8, 0.61)),
    ]);
    const below = aims.find((a) => a.aim.startsWith('cost with read-backs'))!;
    expect(below.met).toBe(false);
    expect(below.value).toContain('not below peer y');
    expect(below.value).not.toContain('peer x');
    expect(
      aimsFor(row('spillway', 0.7, 0.6, 2, 100, rb(0.72, 0.62)), [row('p', 0.9, 0.9, 0, 100, rb(0.9, 0.9))]).find((a) =>
        a.aim.includes('read-backs'),
      )!.met,
    ).toBe(true);
  });

  it('pools rows by summing costs and misses, under both definitions of an identifier', () => {
    const p = poolRows('s', [row('s', 0.5, 0.5, 1, 10), row('s', 1, 1, 0, 90)]);
    expect(p.cost.anthropic).toBeCloseTo(0.75);
    expect(p.missRate).toBeCloseTo(0.01);
    expect(p).toMatchObject({ referencedIdsBefore: 200, missedIdsBefore: 2 });
    expect(p.missRateBefore).toBeCloseTo(0.01);
  });

  it('pools rows exactly as the replay pools sessions (poolReplays)', () => {
    const rows = [row('s', 0.5, 0.7, 1, 10), row('s', 0.9, 1.1, 3, 90)];
    const pooled = poolReplays(rows.map((r) => ({ totals: rowTotals(r) })));
    const p = poolRows('s', rows);
    expect(p.cost).toEqual(Object.fromEntries(Object.entries(pooled.cost).map(([k, v]) => [k, v.relative])));
    expect(p.costWithReadBacks).toEqual(Object.fromEntries(Object.entries(pooled.costWithReadBacks).map(([k, v]) => [k, v.relative])));
    expect([p.missedIds, p.referencedIds, p.missRate]).toEqual([pooled.missedIds, pooled.referencedIds, pooled.missRate]);
  });
});
