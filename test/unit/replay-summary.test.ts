/** The replay summary for people: what the reductions collector counts, and how the summary lists tools and clears. */
import { describe, expect, it } from 'vitest';
import { change, ReductionCollector, sessionSummary } from '../../src/cli/replay-summary';
import type { Reduction } from '../../src/engine';
import type { Miss } from '../../src/replay/misses';
import { replay, type ReplayResult } from '../../src/replay/replay';
import type { Transcript } from '../../src/replay/readers';

const red = (tool: string, stage: Reduction['stage'], saved: number, fresh: boolean): Reduction => ({
  result: 0,
  callId: 'c',
  tool,
  stage,
  reason: '',
  originalChars: 0,
  projectedChars: 0,
  originalTokens: saved + 10,
  projectedTokens: 10,
  handle: 'sw_000000000000000000000000',
  fresh,
});

/** A one-call session replayed, for the summary's header and cost lines; the figures under test are given to it. */
const t: Transcript = {
  source: 'anthropic-messages',
  wire: 'anthropic-messages',
  base: { model: 'claude-haiku-4-5-20251001' },
  items: [{ role: 'user', content: 'hello' }],
  calls: [{ end: 1, reply: 'hi' }],
  skipped: { total: 0, byReason: {}, notes: [] },
};
const r = replay(t, { config: { tokenizer: 'approximate' } });

describe('changes against raw', () => {
  it('print one sign each, and 0.0% for whatever rounds to no change, a hair over raw as a hair under', () => {
    expect([0.697, 1.04, 1.0001, 0.9999, 1, 1.0004999].map(change)).toEqual(['−30.3%', '+4.0%', '0.0%', '0.0%', '0.0%', '0.0%']);
    expect([0.9994, 1.0006].map(change)).toEqual(['−0.1%', '+0.1%']);
  });
});

describe('reductions collector', () => {
  it('sums the tokens each tool saves over the calls, counts its results once, and records the calls that cleared', () => {
    const c = new ReductionCollector();
    c.add(0, { reductions: [red('Read', 'offload', 100, true)] });
    c.add(1, { reductions: [red('Read', 'offload', 100, false), red('Bash', 'clear', 40, true), red('Grep', 'clear', 60, true)] });
    expect(Object.fromEntries(c.tools)).toEqual({
      Read: { saved: 200, results: 1 },
      Bash: { saved: 40, results: 1 },
      Grep: { saved: 60, results: 1 },
    });
    expect(c.clears).toEqual([{ call: 1, results: 2, freed: 100 }]);
  });
});

describe('reductions collector: file inputs', () => {
  const input = (tool: string, saved: number, fresh: boolean) => ({
    callId: 'c',
    tool,
    item: 1,
    by: 'arrival' as const,
    reason: '',
    originalChars: 0,
    projectedChars: 0,
    originalTokens: saved + 10,
    projectedTokens: 10,
    handle: 'sw_000000000000000000000001',
    fresh,
  });

  it('sums what file inputs save per tool over the calls and counts each input once', () => {
    const c = new ReductionCollector();
    c.add(0, { reductions: [], inputs: [input('Write', 500, true)] });
    c.add(1, { reductions: [], inputs: [input('Write', 500, false), input('bash', 300, true)] });
    expect(Object.fromEntries(c.inputs)).toEqual({ Write: { saved: 1000, inputs: 1 }, bash: { saved: 300, inputs: 1 } });
    expect(c.tools.size).toBe(0);
  });

  it('lists them in the summary apart from results', () => {
    const c = new ReductionCollector();
    c.add(0, { reductions: [], inputs: [input('Write', 2_000, true), input('Edit', 500, true)] });
    c.add(1, { reductions: [], inputs: [input('Write', 2_000, false), input('Edit', 500, false), input('Write', 4_000, true)] });
    const out = sessionSummary('s.jsonl', r, c);
    expect(out).toContain('tokens saved by file inputs replaced by a marker');
    expect(out).toMatch(/^ {2}Write +8\.0k +2 inputs replaced$/m);
    expect(out).toMatch(/^ {2}Edit +1\.0k +1 input replaced$/m);
  });
});

describe('session summary', () => {
  it('lists the top five tools by tokens saved, sums the rest, and lists at most eight clears', () => {
    const c = new ReductionCollector();
    const tools = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    for (let k = 0; k < 10; k++) c.add(k, { reductions: tools.map((x, i) => red(x, 'clear', (i + 1) * 1000, true)) });
    const out = sessionSummary('s.jsonl', r, c);
    expect(out).toMatch(/^ {2}g +70k +10 results reduced$/m);
    expect(out).toMatch(/^ {2}2 more tools +30k$/m);
    expect(out).not.toMatch(/^ {2}a /m);
    expect(out).toContain('turns with clears (10)');
    // numbered from 1, as the inspector numbers its turns: the collector's call 7 is turn 8
    expect(out).toMatch(/^ {2}turn 8: 7 results cleared, 28k tokens freed$/m);
    expect(out).not.toMatch(/^ {2}turn 9:/m);
    expect(out).toMatch(/^ {2}and 2 more$/m);
  });

  it('says the session model and prices its input in dollars at that model', () => {
    const out = sessionSummary('s.jsonl', r, new ReductionCollector());
    expect(out.split('\n')[0]).toBe('s.jsonl (anthropic-messages, claude-haiku-4-5-20251001)');
    expect(out).toMatch(/^\* claude-haiku-4-5-20251001: input \$0\.000 raw → \$0\.000 sent/m);
    expect(out).toContain('nothing was reduced');
    expect(out).toContain('no clears');
  });
});

describe('cold caches in the summary', () => {
  // three calls of one growing session, 2 minutes and then 2 hours apart
  const t0 = Date.UTC(2026, 0, 1, 10);
  const long = 'word '.repeat(2000);
  const dated: Transcript = {
    ...t,
    items: [
      { role: 'user', content: long },
      { role: 'assistant', content: 'one' },
      { role: 'user', content: long },
      { role: 'assistant', content: 'two' },
      { role: 'user', content: long },
    ],
    calls: [
      { end: 1, reply: 'one', at: t0 },
      { end: 3, reply: 'two', at: t0 + 2 * 60_000 },
      { end: 5, reply: 'three', at: t0 + 2 * 60_000 + 2 * 3_600_000 },
    ],
  };

  it('says how many calls found which provider cache cold, grouped by how long each keeps it idle', () => {
    const rd = replay(dated, { config: { tokenizer: 'approximate' } });
    const out = sessionSummary('s.jsonl', rd, new ReductionCollector());
    expect(rd.totals.coldCalls).toEqual({ anthropic: 1, openai: 1, 'openai-4o': 1, deepseek: 0, gemini: 0 });
    expect(out).toMatch(/^cache cold after a pause: 1 call \(anthropic, over 5 min\), 1 \(openai, openai-4o, over 1 h\)$/m);
  });

  it('says when the log holds no call times, and when no pause was long enough', () => {
    expect(sessionSummary('s.jsonl', r, new ReductionCollector())).toContain(
      'call times: none between calls in this log, so the cache is taken never to go cold',
    );
    const close: Transcript = { ...dated, calls: dated.calls.map((c, k) => ({ ...c, at: t0 + k * 60_000 })) };
    const out = sessionSummary('s.jsonl', replay(close, { config: { tokenizer: 'approximate' } }), new ReductionCollector());
    expect(out).toContain('cache never cold: no pause longer than a provider keeps its cache idle');
  });
});

describe('misses in the summary', () => {
  const miss = (id: string, cause: Miss['cause'], tool: string, since: number): Miss => ({ id, handle: `sw_${tool}`, cause, tool, since });
  const call = (index: number, missed: Miss[], reads: number): ReplayResult['calls'][number] => ({
    ...r.calls[0]!,
    index,
    referencedIds: missed.length * 2,
    missedIds: missed.length,
    missed,
    readBacks: Array.from({ length: reads }, () => ({ cause: missed[0]!.cause, ids: [missed[0]!.id], tokens: 10 })),
  });
  const calls = [
    call(0, [], 0),
    call(1, [miss('alphaFunction', 'offload', 'Read', 1)], 1),
    call(
      2,
      [
        miss('a.py', 'clear', 'Bash', 2),
        miss('b.py', 'clear', 'Bash', 2),
        miss('c.py', 'clear', 'Bash', 2),
        miss('d.py', 'clear', 'Bash', 2),
        miss('gammaFunction', 'input', 'Write', 1),
      ],
      2,
    ),
    ...[3, 4, 5, 6, 7].map((k) => call(k, [miss(`id${k}`, 'offload', 'Read', k)], 1)),
  ];
  const withMisses: ReplayResult = {
    ...r,
    calls,
    totals: {
      ...r.totals,
      missCauses: { offload: { ids: 6, readBacks: 6 }, clear: { ids: 4, readBacks: 1 }, input: { ids: 1, readBacks: 1 } },
    },
  };
  const out = sessionSummary('s.jsonl', withMisses, new ReductionCollector());

  it('breaks the misses down by cause: identifiers, their share and the read-backs they imply', () => {
    expect(out).toContain('misses by cause: what hid each missed identifier');
    expect(out).toMatch(/^ {2}offloaded on arrival +6 +54\.5% +6$/m);
    expect(out).toMatch(/^ {2}cleared +4 +36\.4% +1$/m);
    expect(out).toMatch(/^ {2}file input replaced by a marker +1 +9\.1% +1$/m);
    expect(out).not.toContain('windowed');
  });

  it('lists the five worst turns, most missed first, each with what hid its identifiers and where', () => {
    const worst = out.slice(out.indexOf('worst turns for misses'));
    expect(worst.split('\n')[1]).toBe('  turn 3: 5 of 10 identifiers missed, 2 read-backs');
    expect(worst).toMatch(/^ {4}4 Bash, cleared in turn 3: a\.py, b\.py, c\.py, …$/m);
    expect(worst).toMatch(/^ {4}1 Write, file input replaced by a marker in turn 2: gammaFunction$/m);
    expect(worst.match(/^ {2}turn \d+:/gm)).toHaveLength(5);
    expect(worst).not.toMatch(/^ {2}turn 1:/m);
  });
});
