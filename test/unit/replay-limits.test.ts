/**
 * The limits of a session (src/replay/limits.ts): the hindsight oracle and the floor on real corpus
 * sessions, the lines the oracle keeps, the share of its saving the summary reports first, and the
 * held-out table's limit columns (bench/heldout.ts) on a few small sessions pooled.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { heldOutRow } from '../../bench/heldout';
import { sessionSummary, ReductionCollector } from '../../src/cli/replay-summary';
import { newTokenCounter } from '../../src/engine';
import { linesHolding, measureLimits, oracleShare, replayOracle } from '../../src/replay/limits';
import { readTranscript, type Transcript } from '../../src/replay/readers';
import { poolReplays, replay } from '../../src/replay/replay';
import { ANTHROPIC_PRICES, OPENAI_PRICES } from '../../src/replay/metrics';
import { CORPUS, SHORT_SESSIONS } from '../support/corpus';

const PRICES = [ANTHROPIC_PRICES, OPENAI_PRICES];
const counter = newTokenCounter('o200k_base');
/** Two short real sessions: a Claude Code one and a Codex one. */
const SESSIONS = ['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl', 'ai-sessions__codex-pomodor-timer.jsonl'];
const load = (name: string): Promise<Transcript> => readTranscript(SHORT_SESSIONS[name]!);
const opts = { config: { preset: 'spillway' }, tokenizer: counter, prices: PRICES };

describe('the oracle on real sessions', () => {
  it.each(SESSIONS)('misses no identifier the agent uses later, and so reads nothing back (%s)', async (name) => {
    const r = replayOracle(await load(name), opts);
    expect(r.totals.referencedIds).toBeGreaterThan(0);
    expect(r.totals.missedIds).toBe(0);
    expect(r.totals.readBacks).toBe(0);
  });

  it.each(SESSIONS)('costs between the floor and raw, and saves something (%s)', async (name) => {
    const t = await load(name);
    const l = measureLimits(t, opts);
    const raw = replay(t, opts).totals.cost;
    for (const p of ['anthropic', 'openai']) {
      expect(l.floor[p]).toBeLessThanOrEqual(l.oracle[p]!);
      expect(l.oracle[p]).toBeLessThan(raw[p]!.raw);
    }
    expect(l.oracleMisses).toBe(0);
  });

  it('clears with hindsight where a clear pays back, and is the cheaper of its two placements (M-Thisness__windows-admin)', async () => {
    const t = await readTranscript(join(CORPUS, 'dev/claude-code/M-Thisness__windows-admin-e5821007.jsonl'));
    const cost = (clears: boolean) => replayOracle(t, opts, clears).totals.costWithReadBacks;
    const withClears = cost(true);
    const onArrival = cost(false);
    const l = measureLimits(t, opts);
    for (const p of ['anthropic', 'openai']) {
      expect(withClears[p]!.projected).toBeLessThan(onArrival[p]!.projected);
      expect(l.oracle[p]).toBeCloseTo(Math.min(withClears[p]!.projected, onArrival[p]!.projected), 6);
    }
  });

  it('gives the same figures when measured twice', async () => {
    const t = await load(SESSIONS[0]!);
    expect(measureLimits(t, opts)).toEqual(measureLimits(t, opts));
  });
});

describe('the lines the oracle keeps', () => {
  it('keeps the line of the first occurrence of each identifier, in order, and nothing else', () => {
    const text = 'head\nuses alpha_one here\nfiller\nbeta_two\nalpha_one again\ntail';
    expect(linesHolding(text, ['beta_two', 'alpha_one', 'absent_name'])).toBe('uses alpha_one here\nbeta_two');
  });

  it('keeps nothing when the text holds none of the identifiers', () => {
    expect(linesHolding('a\nb\nc', ['gamma_three'])).toBe('');
  });

  it('keeps the lines on both sides of an escaped line break when the identifier starts on its n, as the miss check sees the JSON text', () => {
    // the request spells "x", a line break, "_private_thing" as x\\n_private_thing: the identifier n_private_thing is in it
    expect(linesHolding('head\nx\n_private_thing\ny', ['n_private_thing'])).toBe('x\n_private_thing');
  });

  it('keeps an identifier found only through a tab escape on its own line', () => {
    expect(linesHolding('a\n\tthing_one()\nb', ['tthing_one'])).toBe('\tthing_one()');
  });
});

describe('the share of the oracle saving', () => {
  it('is what the reducer saves over what the oracle saves, and undefined when the oracle saves nothing', () => {
    expect(oracleShare(100, 80, 60)).toBeCloseTo(0.5);
    expect(oracleShare(100, 100, 100)).toBeUndefined();
  });

  it('is reported first among the limit lines of the summary, per price model', async () => {
    const t = await load(SESSIONS[1]!);
    const r = replay(t, opts);
    r.totals.limits = measureLimits(t, opts);
    const text = sessionSummary('pomodoro.jsonl', r, new ReductionCollector());
    const lines = text.split('\n');
    const at = lines.findIndex((l) => l.startsWith('the limit:'));
    expect(at).toBeGreaterThan(0);
    expect(lines[at + 1]).toMatch(/^ {2}share of the oracle's saving kept, with read-backs: anthropic -?\d+\.\d% · openai -?\d+\.\d%$/);
    expect(lines[at + 2]).toMatch(/^ {2}oracle \(of raw\): anthropic \d+\.\d% · openai \d+\.\d%$/);
    expect(lines[at + 3]).toMatch(/^ {2}floor \(of raw\): anthropic \d+\.\d% · openai \d+\.\d%$/);
  });

  it('is left out of the summary when the limits were not measured', async () => {
    const r = replay(await load(SESSIONS[1]!), opts);
    expect(sessionSummary('pomodoro.jsonl', r, new ReductionCollector())).not.toMatch(/oracle/);
  });
});

describe("the held-out table's limit columns", () => {
  it('pool the oracle as a sum of costs and give the share of its saving kept from the pooled sums', async () => {
    const names = [...SESSIONS, 'mini-swe-agent__deepseek_bench1__django__django-14752.traj.json'];
    const rows = await Promise.all(
      names.map(async (n) => {
        const t = await load(n);
        return { totals: { ...replay(t, opts).totals, limits: measureLimits(t, opts) } };
      }),
    );
    const pooled = poolReplays(rows);
    const raw = pooled.cost.anthropic!.raw;
    expect(pooled.limits!.oracle.anthropic).toBeCloseTo(
      rows.reduce((a, r) => a + r.totals.limits.oracle.anthropic!, 0),
      6,
    );
    const share = oracleShare(raw, pooled.costWithReadBacks.anthropic!.projected, pooled.limits!.oracle.anthropic!)!;
    const oracleOfRaw = pooled.limits!.oracle.anthropic! / raw;
    const cells = heldOutRow('all', pooled).split(' | ');
    expect(cells.at(-2)).toMatch(new RegExp(`^${(oracleOfRaw * 100).toFixed(1)}% / \\d+\\.\\d%$`));
    expect(cells.at(-1)).toMatch(new RegExp(`^\\*\\*${(share * 100).toFixed(1).replace('.', '\\.')}% / -?\\d+\\.\\d%\\*\\* \\|$`));
  });

  it("shows a dash where a row's sessions carry no limits", async () => {
    const t = replay(await load(SESSIONS[1]!), opts).totals;
    expect(heldOutRow('no limits', t)).toMatch(/\| – \/ – \| \*\*– \/ –\*\* \|$/);
  });
});
