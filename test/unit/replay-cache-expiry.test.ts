/**
 * Cache expiry in the replay's meter: a gap between two calls longer than a price model keeps its
 * cache idle (PriceModel.cacheIdleMs) bills the call cold, raw history and projection alike, with the
 * fixed part (system prompt and tools) still read. Checked on hand-made calls with known bills, and
 * against a real Claude Code log's own usage figures.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ANTHROPIC_1H_PRICES,
  ANTHROPIC_PRICES,
  DEEPSEEK_PRICES,
  GEMINI_PRICES,
  OPENAI_4O_PRICES,
  OPENAI_PRICES,
  PRICE_MODELS,
  type PromptShape,
} from '../../src/replay/metrics';
import { readTranscript } from '../../src/replay/readers';
import { poolReplays, replay, ReplayMeter, type MeterCall } from '../../src/replay/replay';

const MIN = 60_000;
const FIXED = 2000;

/** A request of `n` items of 1,000 tokens after a fixed part of 2,000 (`tag` makes the projection's items differ). */
function shape(n: number, tag = 'raw', itemTokens = 1000): PromptShape {
  return {
    fixed: 'system+tools',
    fixedTokens: FIXED,
    items: Array.from({ length: n }, (_, i) => `${tag}-${i}`),
    itemTokens: Array.from({ length: n }, () => itemTokens),
  };
}

/** Call k: k + 1 items; the projection holds the same number of items of 600 tokens. */
function call(k: number, at?: number): MeterCall {
  return {
    originalTokens: FIXED + 1000 * (k + 1),
    projectedTokens: FIXED + 600 * (k + 1),
    originalShape: shape(k + 1),
    projectedShape: shape(k + 1, 'proj', 600),
    reply: '',
    original: () => '',
    projected: () => '',
    reductions: [],
    ...(at !== undefined ? { at } : {}),
  };
}

/** Anthropic's bill of `total` tokens of which `read` come from the cache (the rest written at 1.25x). */
const anthropic = (total: number, read: number) => read * 0.1 + (total - read) * 1.25;

describe('cache expiry in the meter', () => {
  it('has the time after which each provider cache is surely cold (docs/replay-and-cost.md, Cache expiry)', () => {
    expect(ANTHROPIC_PRICES.cacheIdleMs).toBe(5 * MIN);
    expect(ANTHROPIC_1H_PRICES.cacheIdleMs).toBe(60 * MIN);
    expect(OPENAI_PRICES.cacheIdleMs).toBe(60 * MIN);
    expect(OPENAI_4O_PRICES.cacheIdleMs).toBe(60 * MIN);
    expect(GEMINI_PRICES.cacheIdleMs).toBe(24 * 60 * MIN);
    expect(DEEPSEEK_PRICES.cacheIdleMs).toBe(72 * 60 * MIN);
    for (const pm of PRICE_MODELS) expect(pm.cacheIdleMs, pm.name).toBeGreaterThanOrEqual(5 * MIN);
  });

  it('keeps the cache warm a gap just under the idle time and bills it cold just over, raw and projection alike', () => {
    const meter = new ReplayMeter([ANTHROPIC_PRICES, OPENAI_PRICES]);
    const t0 = Date.UTC(2026, 0, 1, 10);
    meter.add(call(0, t0));
    const warm = meter.add(call(1, t0 + 5 * MIN - 1000));
    const cold = meter.add(call(2, t0 + 5 * MIN - 1000 + 5 * MIN + 1000));

    // warm: read up to the end of the previous request, write the new item
    expect(warm.gapMs).toBe(5 * MIN - 1000);
    expect(warm.coldFor).toBeUndefined();
    expect(warm.cost.anthropic!.raw).toBeCloseTo(anthropic(4000, 3000));
    expect(warm.cost.anthropic!.projected).toBeCloseTo(anthropic(3200, 2600));

    // cold at Anthropic: only the fixed part is read, every item is written again, on both sides
    expect(cold.gapMs).toBe(5 * MIN + 1000);
    expect(cold.coldFor).toEqual(['anthropic']);
    expect(cold.cost.anthropic!.raw).toBeCloseTo(anthropic(5000, FIXED));
    expect(cold.cost.anthropic!.projected).toBeCloseTo(anthropic(3800, FIXED));
    // OpenAI keeps its cache an hour: the same gap reads the shared prefix (4,000 tokens, 3,968 in steps of 128)
    expect(cold.cost.openai!.raw).toBeCloseTo(3968 * 0.1 + (5000 - 3968));

    const totals = meter.totals(0, []);
    expect(totals.coldCalls).toEqual({ anthropic: 1, openai: 0 });
  });

  it('bills OpenAI cold after an hour idle, with the fixed part still read', () => {
    const meter = new ReplayMeter([ANTHROPIC_PRICES, OPENAI_PRICES]);
    const t0 = Date.UTC(2026, 0, 1, 10);
    meter.add(call(0, t0));
    meter.add(call(1, t0 + MIN));
    const c = meter.add(call(2, t0 + MIN + 60 * MIN + 1));
    expect(c.coldFor).toEqual(['anthropic', 'openai']);
    // the fixed part's 2,000 tokens read as 1,920 (from 1,024 in steps of 128), the rest at the input price
    expect(c.cost.openai!.raw).toBeCloseTo(1920 * 0.1 + (5000 - 1920));
    expect(c.cost.openai!.projected).toBeCloseTo(1920 * 0.1 + (3800 - 1920));
    expect(c.cost.anthropic!.raw).toBeCloseTo(anthropic(5000, FIXED));
  });

  it('reads earlier breakpoints again once the cache is warm after a cold call', () => {
    const meter = new ReplayMeter([ANTHROPIC_PRICES]);
    const t0 = Date.UTC(2026, 0, 1, 10);
    meter.add(call(0, t0));
    meter.add(call(1, t0 + 30 * MIN));
    const next = meter.add(call(2, t0 + 31 * MIN));
    expect(next.coldFor).toBeUndefined();
    expect(next.cost.anthropic!.raw).toBeCloseTo(anthropic(5000, 4000));
  });

  it('never bills a cold cache without both times: calls with no time, or after one with none, are as before', () => {
    const dated = new ReplayMeter([ANTHROPIC_PRICES]);
    const undated = new ReplayMeter([ANTHROPIC_PRICES]);
    const t0 = Date.UTC(2026, 0, 1, 10);
    const a = [call(0, t0), call(1), call(2, t0 + 60 * MIN), call(3, t0 + 120 * MIN)];
    const b = [call(0), call(1), call(2), call(3)];
    const ra = a.map((c) => dated.add(c));
    const rb = b.map((c) => undated.add(c));
    // call 2 follows an undated call: its gap is unknown, so it is warm; call 3 follows call 2 by an hour
    expect(ra.map((c) => c.coldFor)).toEqual([undefined, undefined, undefined, ['anthropic']]);
    expect(ra.map((c) => c.gapMs)).toEqual([undefined, undefined, undefined, 60 * MIN]);
    expect(ra.slice(0, 3).map((c) => c.cost)).toEqual(rb.slice(0, 3).map((c) => c.cost));
    expect(rb.every((c) => c.coldFor === undefined)).toBe(true);
    expect(undated.totals(0, []).coldCalls).toEqual({ anthropic: 0 });
  });

  it('reads nothing from a cold cache when the fixed part is under the minimum to cache', () => {
    const meter = new ReplayMeter([ANTHROPIC_PRICES]);
    const small = (k: number, at: number): MeterCall => {
      const c = call(k, at);
      return { ...c, originalShape: { ...c.originalShape, fixedTokens: 500 }, projectedShape: { ...c.projectedShape, fixedTokens: 500 } };
    };
    const t0 = Date.UTC(2026, 0, 1, 10);
    meter.add(small(0, t0));
    const c = meter.add(small(1, t0 + 6 * MIN));
    expect(c.coldFor).toEqual(['anthropic']);
    expect(c.cost.anthropic!.raw).toBeCloseTo(anthropic(2500, 0));
  });

  it('pools the cold calls of several sessions', () => {
    const one = new ReplayMeter([ANTHROPIC_PRICES, OPENAI_PRICES]);
    const t0 = Date.UTC(2026, 0, 1, 10);
    [call(0, t0), call(1, t0 + 10 * MIN), call(2, t0 + 90 * MIN)].forEach((c) => one.add(c));
    const totals = one.totals(0, []);
    expect(totals.coldCalls).toEqual({ anthropic: 2, openai: 1 });
    expect(poolReplays([{ totals }, { totals }]).coldCalls).toEqual({ anthropic: 4, openai: 2 });
  });
});

describe('against a real Claude Code log', () => {
  // M-Thisness cosmic-applet: every assistant record carries the provider's own `usage`; the session
  // pauses over 5 minutes 18 times. Claude Code used the 5-minute cache (`ephemeral_1h_input_tokens` 0).
  const file = join(__dirname, '..', 'fixtures', 'sessions', 'dev', 'claude-code', 'M-Thisness__cosmic-applet-c7d2069e.jsonl');

  /** The log's usage per assistant message, and which message each content block belongs to. */
  function logUsage() {
    const byBlock = new Map<string, string>();
    const usage = new Map<string, { read: number; written: number; total: number }>();
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      let r: { type?: string; message?: { id?: string; content?: unknown[]; usage?: Record<string, number> } };
      try {
        r = JSON.parse(line) as typeof r;
      } catch {
        continue;
      }
      const m = r.message;
      if (r.type !== 'assistant' || !m?.id || !m.usage) continue;
      const u = m.usage;
      const read = u.cache_read_input_tokens ?? 0;
      const written = u.cache_creation_input_tokens ?? 0;
      if (!usage.has(m.id)) usage.set(m.id, { read, written, total: read + written + (u.input_tokens ?? 0) });
      for (const b of m.content ?? []) if (!byBlock.has(JSON.stringify(b))) byBlock.set(JSON.stringify(b), m.id);
    }
    return { byBlock, usage };
  }

  it('finds the cache cold where the log re-created the prompt after a pause, and warm where the log read it', async () => {
    const t = await readTranscript(file);
    const r = replay(t, { config: {}, prices: [ANTHROPIC_PRICES] });
    const { byBlock, usage } = logUsage();
    // the system prompt and tools: what every call reads even after a pause (the log's smallest read)
    const fixed = Math.min(...[...usage.values()].map((u) => u.read).filter((n) => n > 0));
    expect(fixed).toBe(12834);

    // line up each replayed call with the API response that answered it: Claude Code logs one
    // record per content block, so several records share one message id (and one usage); the call's
    // reply is the assistant item after its request, whose first block names the message
    const rows = r.calls.map((c, k) => {
      const reply = t.items[t.calls[k]!.end] as { content?: unknown[] };
      const id = byBlock.get(JSON.stringify(reply.content?.[0]));
      const u = id === undefined ? undefined : usage.get(id);
      // the log's cache was cold when most of what lies past the fixed part was written again
      const logCold = u === undefined ? undefined : u.written > (u.total - fixed) / 2;
      return { gap: c.gapMs, meterCold: (c.coldFor ?? []).includes('anthropic'), logCold };
    });
    expect(rows.every((x) => x.logCold !== undefined)).toBe(true);

    // A log's times are its records', not the moment the provider wrote the cache: the request leaves
    // a moment after its last record and the cache is written after the prompt is read (seconds for
    // 150k tokens). Within 10 s of the 5 minutes either side can be right; outside, they must agree.
    const TOLERANCE = 10_000;
    const near = (g: number | undefined) => g !== undefined && Math.abs(g - 5 * MIN) <= TOLERANCE;

    const afterPause = rows.filter((x) => x.gap !== undefined && x.gap > 5 * MIN);
    const coldInBoth = afterPause.filter((x) => x.meterCold && x.logCold);
    // of 18 calls after a gap over 5 minutes, 17 are cold in the meter and the log; the 18th came
    // 5 min 4 s after the call before and the log still read it (inside the tolerance)
    expect(afterPause.length).toBe(18);
    expect(coldInBoth.length).toBe(17);
    expect(afterPause.filter((x) => !(x.meterCold && x.logCold)).every((x) => near(x.gap))).toBe(true);

    const logWarm = rows.filter((x) => x.logCold === false);
    const warmInBoth = logWarm.filter((x) => !x.meterCold);
    // of the 250 calls the log read mostly from its cache, 249 are warm in the meter (the one above is not)
    expect(logWarm.length).toBe(250);
    expect(warmInBoth.length).toBe(249);
    expect(logWarm.filter((x) => x.meterCold).every((x) => near(x.gap))).toBe(true);
    expect(r.totals.coldCalls).toEqual({ anthropic: 18 });
  }, 60_000);
});
