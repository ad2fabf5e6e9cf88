/**
 * The benchmark's metrics on a tiny session whose answer is worked out by hand, through the same
 * functions `npm run bench` uses (runDriver / runSpillway / strategyRow), and the check that
 * Spillway's rows and the peers' rows count tokens the same way.
 */
import { describe, expect, it } from 'vitest';
import { newTokenCounter } from '../../src/engine';
import { readTranscript, type Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { maskingDriver, MASK_PLACEHOLDER, rawDriver } from '../../bench/drivers';
import { runDriver, runSpillway, Shaper, strategyRow } from '../../bench/metrics';
import { PRICE_MODELS } from '../../src/replay/metrics';
import { expectSome } from '../support/expect';
import { HANDLE_PATTERN } from '../../src/engine/handle';
import { SHORT_SESSIONS } from '../support/corpus';
import { withAgentPrelude } from '../../src/replay/prelude';

// Approximate tokens: ceil(chars / 4) per string value, plus 4 per item.
//   item 0 user "task"                         1 + 1 + 4            =   6
//   item 1 assistant calling sh (id a)          3 + 1 + 2 + 1 + 1 + 4 = 12  ("assistant", "a", "function", "sh", "{}")
//   item 2 tool result a, 400 chars             1 + 1 + 100 + 4      = 106
//   item 3 assistant calling sh (id b)                                  12
//   item 4 tool result b, "ok"                  1 + 1 + 1 + 4        =   7
// Calls send items [0,1), [0,3), [0,5): raw 6, 124, 143 tokens.
const big = 'x'.repeat(383) + ' handleRequestFoo';
const t: Transcript = {
  source: 'openai-chat',
  wire: 'openai-chat',
  base: { model: 'm' },
  items: [
    { role: 'user', content: 'task' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'a', type: 'function', function: { name: 'sh', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'a', content: big },
    { role: 'assistant', content: null, tool_calls: [{ id: 'b', type: 'function', function: { name: 'sh', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'b', content: 'ok' },
  ],
  calls: [
    { end: 1, reply: '' },
    { end: 3, reply: '' },
    { end: 5, reply: 'Found handleRequestFoo in the output' },
  ],
  skipped: { total: 0, byReason: {}, notes: [] },
};
const approx = () => newTokenCounter('approximate');
const allCalls = new Map([
  [0, 1],
  [1, 1],
  [2, 1],
]); // JSON.parse "took" 1 ms per call
// The providers cache nothing under 1,024 tokens (and OpenAI counts in 128-token steps); this session
// is far smaller, so the cache arithmetic is checked with both rules switched off.
const TINY_PRICES = PRICE_MODELS.map((p) => ({ ...p, minCacheableTokens: 0, cacheIncrement: 1 }));

describe('bench metrics on a tiny session with a known answer', () => {
  it('raw: tokens per call, largest context, and cost with caching', async () => {
    const run = await runDriver(t, rawDriver(t), approx(), TINY_PRICES);
    expect(run.calls.map((c) => c.originalTokens)).toEqual([6, 124, 143]);
    expect(run.calls.map((c) => c.projectedTokens)).toEqual([6, 124, 143]);
    // each call's prefix is the whole previous call: 0, 6, 124 cached tokens
    expect(run.calls.map((c) => c.cachedPrefixTokens)).toEqual([0, 6, 124]);
    const row = strategyRow('raw', 'raw', run, allCalls);
    expect(row.inputTokens).toBe(273);
    expect(row.reduction).toBe(0);
    expect(row.largest).toBe(143);
    expect(row.cacheStableShare).toBe(1);
    expect(row.recoverableShare).toBeNull();
    // Anthropic: 6*1.25 + (6*0.1 + 118*1.25) + (124*0.1 + 19*1.25) = 7.5 + 148.1 + 36.15
    expect(row.costUnits.anthropic!.raw).toBeCloseTo(191.75, 9);
    // OpenAI GPT-5 (cached 0.1x): 6 + (6*0.1 + 118) + (124*0.1 + 19); GPT-4o (0.5x): 6 + (6*0.5 + 118) + (124*0.5 + 19)
    expect(row.costUnits.openai!.raw).toBeCloseTo(156, 9);
    expect(row.costUnits['openai-4o']!.raw).toBeCloseTo(208, 9);
    expect(row.cost.anthropic).toBeCloseTo(1, 12);
    expect(row.costWithReadBacks.anthropic).toBeCloseTo(1, 12); // nothing missed, nothing read back
    expect(row.missRate).toBe(0);
    expect(row.referencedIds).toBe(1);
  });

  it('masking the last turn: fewer tokens, a broken cache, a miss, nothing readable back', async () => {
    // turns = 1: in call 2 the result of item 2 is older than the last call and is masked
    const run = await runDriver(t, maskingDriver(1)(t), approx(), TINY_PRICES);
    const masked = 1 + 1 + Math.ceil(MASK_PLACEHOLDER.length / 4) + 4; // "tool", "a", placeholder
    expect(masked).toBe(16);
    expect(run.calls.map((c) => c.projectedTokens)).toEqual([6, 124, 6 + 12 + masked + 12 + 7]);
    expect(run.calls[2]!.cachedPrefixTokens).toBe(18); // items 0 and 1, then item 2 changed
    const row = strategyRow('mask', 'reference', run, allCalls);
    expect(row.inputTokens).toBe(183);
    expect(row.reduction).toBeCloseTo(1 - 183 / 273, 12);
    expect(row.largest).toBe(124);
    expect(row.largestRel).toBeCloseTo(124 / 143, 12);
    expect(row.cacheStableShare).toBe(0.5);
    // Anthropic reads only up to a breakpoint: call 0's end (item 0, 6 tokens) is still a prefix,
    // call 1's end (after the masked item 2) is not: 7.5 + 148.1 + (6*0.1 + 47*1.25).
    // OpenAI reads the shared prefix (items 0 and 1): GPT-5 6 + 118.6 + (18*0.1 + 35), dearer than
    // raw's 156 (the masked call loses 106 cached tokens); GPT-4o 6 + 121 + (18*0.5 + 35)
    expect(row.costUnits.anthropic!.projected).toBeCloseTo(214.95, 9);
    expect(row.cost.anthropic).toBeCloseTo(214.95 / 191.75, 12);
    expect(row.cost.openai).toBeCloseTo(161.4 / 156, 12);
    expect(row.cost['openai-4o']).toBeCloseTo(171 / 208, 12);
    // the miss is read back: one more call on top of the projection's cost
    expect(row.costUnits.anthropic!.readBack).toBeGreaterThan(0);
    expect(row.costWithReadBacks.anthropic).toBeCloseTo((214.95 + row.costUnits.anthropic!.readBack) / 191.75, 12);
    // the reply names handleRequestFoo, which only the masked result held
    expect(row.referencedIds).toBe(1);
    expect(row.missedIds).toBe(1);
    expect(row.missRate).toBe(1);
    expect(row.removedTokens).toBe(90);
    expect(row.recoverableShare).toBe(0);
    expect(row.msPerCall).toBeGreaterThanOrEqual(0);
    expect(row.overParse).toBeCloseTo(row.sampledEngineMs / 3, 12);
  });

  it('spillway offloading the big result: all of it readable back, every call cache-stable, no miss', () => {
    const config = { tokenizer: 'approximate', defaultCap: 200, previewChars: 0, clear: { enabled: false } };
    const run = runSpillway(t, config, 'approximate');
    const row = strategyRow('spillway', 'spillway', run, allCalls);
    expect(run.calls.map((c) => c.originalTokens)).toEqual([6, 124, 143]);
    expect(run.calls.map((c) => c.reductions)).toEqual([0, 1, 1]);
    const saved = 143 - run.calls[2]!.projectedTokens;
    expect(saved).toBeGreaterThan(50);
    expect(run.calls[1]!.originalTokens - run.calls[1]!.projectedTokens).toBe(saved);
    expect(row.removedTokens).toBe(2 * saved);
    expect(row.recoverableShare).toBe(1);
    expect(row.cacheStableShare).toBe(1);
    // the marker names the handle, not the identifier: a miss, attributed to the stored output
    expect(row.missRate).toBe(1);
    expect(run.calls[2]!.missed[0]!.handle).toMatch(HANDLE_PATTERN);
    expect(run.engineMs).toHaveLength(3);
  });
});

describe('one way of counting for every strategy', () => {
  const files = Object.keys(SHORT_SESSIONS);
  it.each(files)('%s: the bench shaper counts raw and projected requests exactly as the engine does', async (f) => {
    const tr = await readTranscript(SHORT_SESSIONS[f]!);
    const counter = newTokenCounter('o200k_base');
    // the requests replay() sends: the agent's prelude (system prompt and tools) in every call
    const shaper = new Shaper(tr.wire, withAgentPrelude(tr).transcript.base, counter);
    const key = tr.wire === 'openai-responses' ? 'input' : 'messages';
    const projected: string[] = [];
    // small caps so the engine reduces results in every fixture; the clear on its trigger alone (under the
    // payback rule a short session whose reads stay whole while in use may never be reduced), with a
    // 4-call in-use window (the default's 8 keeps every result of a 21-call session in use)
    const r = replay(tr, {
      config: {
        defaultCap: 400,
        previewChars: 300,
        clear: { triggerTokens: 4_000, clearAtLeastTokens: 1_000, schedule: 'trigger', inUseCalls: 4 },
      },
      tokenizer: counter,
      onProjection: (_k, c) => projected.push(c.projection.request),
    });
    expectSome(r.calls, (c) => c.reductions > 0);
    r.calls.forEach((c, k) => {
      expect(shaper.shape(tr.items.slice(0, tr.calls[k]!.end) as never).tokens).toBe(c.originalTokens);
      expect(shaper.shape((JSON.parse(projected[k]!) as Record<string, never[]>)[key]!).tokens).toBe(c.projectedTokens);
    });
  });

  it('counts an image as its pixels are billed, as the engine does, not as the characters of its base64', () => {
    // a PNG header of 1,000 × 750 pixels: the engine counts the dearer provider's 1,000 tokens
    const b = Buffer.alloc(33);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
    b.writeUInt32BE(13, 8);
    b.write('IHDR', 12, 'latin1');
    b.writeUInt32BE(1000, 16);
    b.writeUInt32BE(750, 20);
    const png = b.toString('base64') + 'A'.repeat(40_000);
    const tr: Transcript = {
      source: 'anthropic-messages',
      wire: 'anthropic-messages',
      base: { model: 'm' },
      items: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'look' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Read', input: { file_path: '/a/b.png' } }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't1',
              content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } }],
            },
          ],
        },
      ],
      calls: [
        { end: 1, reply: '' },
        { end: 3, reply: 'Done.' },
      ],
      skipped: { total: 0, byReason: {}, notes: [] },
    };
    const counter = newTokenCounter('approximate');
    const shaper = new Shaper(tr.wire, tr.base, counter);
    const r = replay(tr, { config: { tokenizer: 'approximate' }, tokenizer: counter });
    r.calls.forEach((c, k) => expect(shaper.shape(tr.items.slice(0, tr.calls[k]!.end) as never).tokens).toBe(c.originalTokens));
    // the 40,000 characters of base64 would count 10,000 tokens as text: each image is 1,000
    expect(r.calls[1]!.originalTokens).toBeLessThan(2_200);
  });
});
