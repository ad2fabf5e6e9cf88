/**
 * Each price model's column replayed under its own route (src/replay/routes.ts): a Claude Code
 * session's GPT-5 column is what it would cost sent to OpenAI, held to never dearer there.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { otherRoutes, replayEachRoute, replayRouted, routeOf, withRouteColumns } from '../../src/replay/routes';
import { ANTHROPIC_PRICES, OPENAI_PRICES } from '../../src/replay/metrics';

const SESSION = join(__dirname, '../fixtures/sessions/dev/claude-code/M-Thisness__windows-admin-e5821007.jsonl');
const MINI_SWE = join(__dirname, '../fixtures/sessions/openai-chat/mini-swe-agent__deepseek_bench1__django__django-14752.traj.json');

describe('the routes a replay needs', () => {
  it('are the providers the ledger prices other than the session’s own', () => {
    expect(otherRoutes('anthropic', ['anthropic', 'openai', 'openai-4o', 'deepseek', 'gemini'])).toEqual(['openai', 'openai-4o']);
    expect(otherRoutes('openai', ['anthropic', 'openai'])).toEqual(['anthropic']);
    expect(otherRoutes('anthropic', ['anthropic'])).toEqual([]);
  });

  it('are none when the session’s route is unknown: the engine already holds every price model', () => {
    expect(otherRoutes(undefined, ['anthropic', 'openai', 'openai-4o'])).toEqual([]);
  });

  it('start from the model a transcript calls, or the provider given', async () => {
    const t = await readTranscript(SESSION);
    expect(routeOf(t)).toBe('anthropic');
    expect(routeOf(t, 'openai')).toBe('openai');
    expect(routeOf(await readTranscript(MINI_SWE))).toBeUndefined();
  });
});

describe('a Claude Code session replayed under each route', () => {
  // the clear settings under which this session's Anthropic projection was dearer at GPT-5's prices
  // (the default until 2026-12-01; the default since is cheaper there, and the case needs them)
  const config = { preset: 'spillway', 'clear.inUseCalls': 8, 'clear.triggerTokens': 30_000 };
  const prices = [ANTHROPIC_PRICES, OPENAI_PRICES];

  it('keeps its own column and misses, and takes the GPT-5 column from a replay routed to OpenAI', async () => {
    const t = await readTranscript(SESSION);
    const own = replay(t, { config, prices });
    const routed = replayRouted(t, { config, prices }, 'openai');
    const each = replayEachRoute(t, { config, prices });

    expect(each.totals.cost.anthropic).toEqual(own.totals.cost.anthropic);
    expect(each.totals.missedIds).toBe(own.totals.missedIds);
    expect(each.totals.cost.openai).toEqual(routed.totals.cost.openai);
    expect(each.totals.costWithReadBacks.openai).toEqual(routed.totals.costWithReadBacks.openai);
    expect(each.totals.routedAs).toEqual({
      openai: { provider: 'openai', missedIds: routed.totals.missedIds, referencedIds: routed.totals.referencedIds },
    });
    // raw history is the same session either way
    expect(routed.totals.cost.openai!.raw).toBe(own.totals.cost.openai!.raw);
    // every call's GPT-5 cost is the routed replay's, and they sum to its total
    expect(each.calls.map((c) => c.cost.openai)).toEqual(routed.calls.map((c) => c.cost.openai));
    expect(each.calls.map((c) => c.cost.anthropic)).toEqual(own.calls.map((c) => c.cost.anthropic));
  });

  it('is never dearer than raw under GPT-5 once routed there, where its own route’s projection was (2026-11-29: 102.6%)', async () => {
    const t = await readTranscript(SESSION);
    const own = replay(t, { config, prices });
    const each = replayEachRoute(t, { config, prices });
    expect(own.totals.cost.openai!.relative).toBeGreaterThan(1);
    expect(each.totals.cost.openai!.relative).toBeLessThanOrEqual(1);
    expect(each.totals.cost.anthropic!.relative).toBeLessThanOrEqual(1);
  });

  it('names a provider the engine does not price', async () => {
    const t = await readTranscript(SESSION);
    expect(() => replay(t, { config, prices, provider: 'bedrock' })).toThrow(
      /options\.provider must be one of anthropic, openai, openai-4o, got "bedrock"/,
    );
  });

  it('replays nothing more when the route is unknown', async () => {
    const t = await readTranscript(MINI_SWE);
    const own = replay(t, { config, prices });
    const each = replayEachRoute(t, { config, prices });
    expect(each.totals).toEqual(own.totals);
    expect(each.totals.routedAs).toBeUndefined();
  });
});

describe('route columns on totals', () => {
  it('replace only the routed price models’ columns, and leave the totals given unchanged', async () => {
    const t = await readTranscript(SESSION);
    const own = replay(t, { config: { preset: 'spillway' }, prices: [ANTHROPIC_PRICES, OPENAI_PRICES] });
    const before = JSON.stringify(own.totals);
    const fake = {
      ...own.totals,
      cost: { openai: { raw: 1, projected: 0.5, relative: 0.5, output: 0 } },
      costWithReadBacks: { openai: { projected: 0.5, relative: 0.5 } },
    };
    const out = withRouteColumns(own.totals, [{ provider: 'openai', totals: fake }]);
    expect(out.cost.openai).toEqual(fake.cost.openai);
    expect(out.cost.anthropic).toEqual(own.totals.cost.anthropic);
    expect(JSON.stringify(own.totals)).toBe(before);
    expect(withRouteColumns(own.totals, []).routedAs).toBeUndefined();
  });
});
