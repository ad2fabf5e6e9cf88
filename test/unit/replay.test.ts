/** Replay and its metrics: known answers on a tiny session, and the real fixtures end to end. */
import { describe, expect, it } from 'vitest';
import { ANTHROPIC_PRICES, callCost, OPENAI_4O_PRICES, OPENAI_PRICES, sharedPrefix } from '../../src/replay/metrics';
import { identifiersIn, missedIdentifiers } from '../../src/replay/identifiers';
import { readTranscript, type Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { HANDLE_PATTERN } from '../../src/engine/handle';
import { SHORT_SESSIONS } from '../support/corpus';

describe('metrics', () => {
  it('bills a cached prefix at the read price and the rest at the cache-write price', () => {
    expect(callCost(3000, 2000, ANTHROPIC_PRICES)).toBeCloseTo(2000 * 0.1 + 1000 * 1.25);
    // OpenAI counts cached tokens from 1,024 in steps of 128: 2,000 shared tokens read as 1,920
    // (GPT-5 family 0.1x, GPT-4o generation 0.5x)
    expect(callCost(3000, 2000, OPENAI_PRICES)).toBeCloseTo(1920 * 0.1 + 1080);
    expect(callCost(1500, 5000, OPENAI_PRICES)).toBeCloseTo(1408 * 0.1 + 92);
    expect(callCost(3000, 2000, OPENAI_4O_PRICES)).toBeCloseTo(1920 * 0.5 + 1080);
  });

  it('caches nothing under the minimum prompt length: no read, no write premium', () => {
    expect(callCost(1000, 800, ANTHROPIC_PRICES)).toBe(1000);
    expect(callCost(1000, 800, OPENAI_PRICES)).toBe(1000);
    // a long prompt whose shared prefix is under the minimum writes it all
    expect(callCost(2000, 1000, ANTHROPIC_PRICES)).toBeCloseTo(2000 * 1.25);
    expect(callCost(2000, 1000, OPENAI_PRICES)).toBe(2000);
  });

  it('counts the shared prefix item by item and stops at the first changed item', () => {
    const a = { fixed: 'sys', fixedTokens: 10, items: ['a', 'b', 'c'], itemTokens: [1, 2, 3] };
    expect(sharedPrefix(undefined, a)).toEqual({ tokens: 0, stable: false });
    expect(sharedPrefix(a, { ...a, items: ['a', 'b', 'c', 'd'], itemTokens: [1, 2, 3, 4] })).toEqual({ tokens: 16, stable: true });
    expect(sharedPrefix(a, { ...a, items: ['a', 'X', 'c', 'd'], itemTokens: [1, 2, 3, 4] })).toEqual({ tokens: 11, stable: false });
    expect(sharedPrefix(a, { ...a, fixed: 'other' })).toEqual({ tokens: 0, stable: false });
  });

  it('finds paths, long identifiers and numbers of three or more digits', () => {
    const ids = identifiersIn('Fix django/contrib/admin/views/autocomplete.py: serialize_result at line 1234, see models.py (x=12).');
    expect(ids).toEqual(expect.arrayContaining(['django/contrib/admin/views/autocomplete.py', 'serialize_result', '1234', 'models.py']));
    expect(ids).not.toContain('12');
  });

  it('reports an identifier as missed only when the original had it and the projection does not', () => {
    const m = missedIdentifiers(
      'open src/app/main.ts and check handleRequest and 4040 and brandNewThing',
      'src/app/main.ts handleRequest 4040',
      'src/app/main.ts',
    );
    expect(m.referenced).toEqual(['src/app/main.ts', 'handleRequest', '4040']);
    expect(m.missed).toEqual(['handleRequest', '4040']);
  });
});

describe('replay of a tiny session with a known answer', () => {
  // three calls; the second tool output is 4,000 chars and gets offloaded with no preview
  const big = 'z'.repeat(4000);
  const t: Transcript = {
    source: 'openai-chat',
    wire: 'openai-chat',
    base: { model: 'm' },
    items: [
      { role: 'user', content: 'task' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'sh', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'a', content: 'ok' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'b', type: 'function', function: { name: 'sh', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'b', content: big },
      { role: 'assistant', content: 'done' },
    ],
    calls: [
      { end: 1, reply: '' },
      { end: 3, reply: '' },
      { end: 5, reply: 'done' },
    ],
    skipped: { total: 0, byReason: {}, notes: [] },
  };
  const config = { tokenizer: 'approximate', defaultCap: 1000, previewChars: 0, clear: { enabled: false } };
  const r = replay(t, { config });

  it('counts tokens per call as the engine does and totals them', () => {
    // approximate tokens: ceil(chars / 4) for every string value, plus 4 per item
    const user = 1 + 1 + 4; // "user", "task"
    const call = 3 + 1 + 2 + 1 + 1 + 4; // "assistant", "a", "function", "sh", "{}"
    const okResult = 1 + 1 + 1 + 4; // "tool", "a", "ok"
    expect(r.calls[0]!.originalTokens).toBe(user);
    expect(r.calls[1]!.originalTokens).toBe(user + call + okResult);
    expect(r.calls[2]!.originalTokens).toBe(user + 2 * call + okResult + (1 + 1 + 1000 + 4));
    expect(r.totals.originalTokens).toBe(r.calls.reduce((a, c) => a + c.originalTokens, 0));
  });

  it('offloads the big output in the last call only, and every call extends the one before', () => {
    expect(r.calls.map((c) => c.reductions)).toEqual([0, 0, 1]);
    expect(r.calls[2]!.projectedTokens).toBeLessThan(r.calls[2]!.originalTokens - 900);
    expect(r.calls.map((c) => c.cacheStable)).toEqual([false, true, true]);
    expect(r.calls[2]!.cachedPrefixTokens).toBe(r.calls[1]!.projectedTokens);
    expect(r.totals.cacheStableShare).toBe(1);
    expect(r.totals.recoverable).toBe(true);
  });

  it('prices raw history and projection with caching, call by call', () => {
    const raw = r.calls.reduce((a, c, i) => a + callCost(c.originalTokens, i ? r.calls[i - 1]!.originalTokens : 0, ANTHROPIC_PRICES), 0);
    const proj = r.calls.reduce((a, c) => a + callCost(c.projectedTokens, c.cachedPrefixTokens, ANTHROPIC_PRICES), 0);
    expect(r.totals.cost.anthropic!.raw).toBeCloseTo(raw);
    expect(r.totals.cost.anthropic!.projected).toBeCloseTo(proj);
    expect(r.totals.cost.anthropic!.relative).toBeCloseTo(proj / raw);
    expect(r.totals.cost.anthropic!.relative).toBeLessThan(1);
  });
});

describe('replay of the real fixtures', () => {
  const files = Object.keys(SHORT_SESSIONS);
  it.each(files)('%s replays deterministically, never sends more than the original, and loses nothing', async (f) => {
    const t = await readTranscript(SHORT_SESSIONS[f]!);
    // the clear on its trigger alone, with a 4-call in-use window: under the payback schedule a short
    // session whose reads stay whole while in use (the default) may never be reduced, nor under the
    // default's 8-call window, and this test is of what the reductions keep
    const config = {
      defaultCap: 400,
      previewChars: 300,
      clear: { triggerTokens: 4_000, clearAtLeastTokens: 1_000, schedule: 'trigger', inUseCalls: 4 },
    };
    const a = replay(t, { config });
    const b = replay(t, { config });
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a.totals.calls).toBe(t.calls.length);
    for (const c of a.calls) expect(c.projectedTokens).toBeLessThanOrEqual(c.originalTokens);
    expect(a.totals.projectedTokens).toBeLessThan(a.totals.originalTokens);
    expect(a.totals.recoverable).toBe(true);
    expect(a.totals.missRate).toBeGreaterThanOrEqual(0);
    expect(a.totals.missRate).toBeLessThanOrEqual(1);
    for (const c of a.calls) for (const m of c.missed) if (m.handle) expect(m.handle).toMatch(HANDLE_PATTERN);
  });
});

describe('replayAsync', () => {
  const file = SHORT_SESSIONS['mini-swe-agent__deepseek_bench1__django__django-14752.traj.json']!;
  it('gives the same result as replay', async () => {
    const { replayAsync } = await import('../../src/replay/replay');
    const t = await readTranscript(file);
    const config = { defaultCap: 1_000 };
    expect(JSON.stringify(await replayAsync(t, { config }))).toBe(JSON.stringify(replay(t, { config })));
  });
  it('stops between two calls when its signal is aborted', async () => {
    const { replayAsync } = await import('../../src/replay/replay');
    const t = await readTranscript(file);
    const abort = new AbortController();
    let calls = 0;
    const run = replayAsync(t, {
      config: {},
      signal: abort.signal,
      onCall: (k) => {
        calls = k + 1;
        if (k === 2) abort.abort(new Error('cancelled by the user'));
      },
    });
    await expect(run).rejects.toThrow('cancelled by the user');
    expect(calls).toBe(3);
  });
});
