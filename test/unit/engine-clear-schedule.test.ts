/**
 * The payback schedule (src/engine/clear-schedule.ts) and stale results of a command run again:
 * a clear fires only when the saving over the likely rest of the session pays back the cache
 * rewrite, and an output superseded by a later run of the same command is cleared first.
 */
import { describe, expect, it } from 'vitest';
import { clearBalance, clearPaysBack, expectedRemainingCalls, remainingCallsTable } from '../../src/engine/clear-schedule';
import { createEngine } from '../../src/engine/engine';
import { perChar } from '../support/run';

describe('clearPaysBack', () => {
  it('prices the saving as freed tokens read from cache on each call the session can still be expected to make, and the rewrite as what follows the first cleared result', () => {
    const b = clearBalance(
      { running: 50_000, before: 10_000, freed: 20_000, calls: 30 },
      { name: 'anthropic', family: 'anthropic', cachedRead: 0.1, cacheWrite: 1.25, minCached: 1_024 },
    );
    expect(b.saving).toBeCloseTo(20_000 * 0.1 * expectedRemainingCalls(30));
    expect(b.rewrite).toBeCloseTo(20_000 * 1.15);
  });

  it('fires when the saving over the expected rest of the session covers the rewrite, and waits when it does not', () => {
    const calls = 30;
    const remaining = expectedRemainingCalls(calls);
    // Anthropic is the dearest rewrite: freed * 0.1 * remaining against rewritten * 1.15
    const freed = 10_000;
    const fits = Math.floor((freed * 0.1 * remaining) / 1.15);
    expect(clearPaysBack({ running: freed + fits, before: 0, freed, calls })).toBe(true);
    expect(clearPaysBack({ running: freed + fits + 100, before: 0, freed, calls })).toBe(false);
  });

  it('must pay back under every price model: a rewrite Anthropic would not recover blocks the clear', () => {
    const plan = { running: 40_000, before: 0, freed: 10_000, calls: 5 };
    expect(clearPaysBack(plan, [{ name: 'openai-4o', family: 'openai-4o', cachedRead: 0.5, cacheWrite: 1, minCached: 1_024 }])).toBe(true);
    expect(clearPaysBack(plan)).toBe(false);
  });

  it('never fires when nothing is freed', () => {
    expect(clearPaysBack({ running: 10, before: 0, freed: 0, calls: 100 })).toBe(false);
  });
});

describe('remainingCallsTable', () => {
  it('learns, per call so far, a low quantile of the calls the sessions that got that far still made', () => {
    // four sessions of 10, 20, 30 and 40 calls: at call 10 they have 0, 10, 20 and 30 left; a quarter
    // of the way up that list is 7.5
    const table = remainingCallsTable([10, 20, 30, 40]);
    expect(table[10]).toBe(7.5);
    expect(table[1]).toBe(16.5);
  });

  it('stops where fewer than four sessions got that far, and the last estimate holds past it', () => {
    const table = remainingCallsTable([10, 20, 30, 40]);
    expect(table.length).toBe(11);
    expect(expectedRemainingCalls(500, 'corpus', table)).toBe(table[10]);
  });

  it('expects nothing when it has learned nothing', () => {
    expect(expectedRemainingCalls(5, 'corpus', remainingCallsTable([]))).toBe(0);
  });
});

describe('clear.paybackHorizon', () => {
  it('third and same need no corpus: a third of the calls made so far, and as many again, at any length', () => {
    expect(expectedRemainingCalls(30, 'third')).toBe(10);
    expect(expectedRemainingCalls(600, 'third')).toBe(200);
    expect(expectedRemainingCalls(30, 'same')).toBe(30);
    expect(expectedRemainingCalls(30, 'corpus')).toBe(expectedRemainingCalls(30));
  });

  it('a longer horizon lets a clear with a long rewrite pay back that a shorter one refuses', () => {
    // at call 90: 10,000 freed, 60,000 rewritten; Anthropic's rewrite is 60,000 x 1.15 = 69,000
    const plan = { running: 70_000, before: 0, freed: 10_000, calls: 90 };
    // a third: 30 calls x 10,000 x 0.1 = 30,000 saved, short; even odds: 90 x 1,000 = 90,000
    expect(clearPaysBack({ ...plan, horizon: 'third' })).toBe(false);
    expect(clearPaysBack({ ...plan, horizon: 'same' })).toBe(true);
  });
});

/** A Chat Completions request: a user prompt, then one bash call per output, each answered. */
function chat(outputs: Array<{ cmd: string; out: string }>): string {
  const messages: unknown[] = [{ role: 'user', content: 'go' }];
  outputs.forEach((o, i) => {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: o.cmd }) } }],
    });
    messages.push({ role: 'tool', tool_call_id: `c${i}`, content: o.out });
  });
  return JSON.stringify({ model: 'm', messages });
}

describe('clear stage with schedule payback', () => {
  const cfg = (schedule: string) => ({
    offload: { enabled: false },
    inputs: { enabled: false },
    // by age alone (in-use protection: engine-in-use.test.ts)
    clear: { enabled: true, triggerTokens: 5_000, keep: 1, clearAtLeastTokens: 0, schedule, inUseCalls: 0, keepGathered: false },
  });
  const outputs = Array.from({ length: 6 }, (_, i) => ({ cmd: `cat f${i}`, out: String.fromCharCode(65 + i).repeat(2_000) }));

  it('trigger clears as soon as the request is over the trigger; payback waits while the rewrite is too large a share of what the session has cost', () => {
    // three calls in: rewriting two of three outputs would put the session over raw by more than MAX_OVERRUN
    const young = outputs.slice(0, 3);
    const trig = createEngine(cfg('trigger'), { tokenizer: perChar }).project(chat(young), 'openai-chat');
    const pay = createEngine(cfg('payback'), { tokenizer: perChar }).project(chat(young), 'openai-chat');
    expect(trig.reductions.length).toBeGreaterThan(0);
    expect(pay.reductions).toEqual([]);
  });

  it('payback clears once enough calls have passed for the saving to cover the rewrite, when the session has banked what the rewrite costs', () => {
    // many small results after the big ones: the session is long and the rewrite after the first result is small
    const many = [...outputs.slice(0, 3), ...Array.from({ length: 60 }, (_, i) => ({ cmd: `echo ${i}`, out: `ok ${i}` }))];
    const config = { ...cfg('payback'), clear: { ...cfg('payback').clear, triggerTokens: 4_000 } };
    // nothing banked (nothing offloaded): no clear may take the session over raw, however long it goes on
    expect(createEngine(config, { tokenizer: perChar }).project(chat(many), 'openai-chat').reductions).toEqual([]);
    // three build logs offloaded on arrival bank their saving: the clear of the oldest results is paid for
    const big = Array.from({ length: 3 }, (_, i) => ({ cmd: `make build${i}`, out: `${i}`.repeat(30_000) }));
    const banked = [...outputs.slice(0, 3), ...big, ...many.slice(3)];
    const pay = createEngine({ ...config, offload: { enabled: true } }, { tokenizer: perChar }).project(chat(banked), 'openai-chat');
    expect(pay.reductions.filter((r) => r.stage === 'clear').map((r) => r.result)).toContain(0);
  });
});

describe('stale results: the same command run again', () => {
  it('clears the earlier output of a command run again later before older unrelated outputs', () => {
    const outputs = [
      { cmd: 'cat notes.txt', out: 'N'.repeat(2_000) },
      { cmd: 'npm test', out: 'first run ' + 'F'.repeat(2_000) },
      { cmd: 'ls', out: 'L'.repeat(2_000) },
      { cmd: 'npm test', out: 'second run ' + 'S'.repeat(2_000) },
    ];
    const p = createEngine(
      {
        offload: { enabled: false },
        inputs: { enabled: false },
        clear: {
          enabled: true,
          triggerTokens: 7_000,
          keep: 1,
          clearAtLeastTokens: 0,
          staleFirst: true,
          schedule: 'trigger',
          inUseCalls: 0,
          keepGathered: false,
        },
      },
      { tokenizer: perChar },
    ).project(chat(outputs), 'openai-chat');
    expect(p.reductions.map((r) => r.result)).toEqual([1]);
    expect(p.reductions[0]!.reason).toContain('stale');
  });
});
