/**
 * Conformance of each preset to the seed system it reproduces (../shared/seeds/), one suite per
 * preset. Each test cites the seed fact it pins; numbers are the seeds' documented defaults.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { tokenCounter } from '../../src/engine/tokens';
import type { WireFormat } from '../../src/engine/types';
import { build, contentsOf, contentText, transcript, type Extra, type Step, type ToolStep, type Transcript } from '../support/wire';
import { expectStart, expectEnd, failing } from '../support/expect';
import { HANDLE_IN_TEXT as HANDLE } from '../../src/engine/handle';
import { perChar } from '../support/run';

function run(
  config: Record<string, unknown>,
  t: Transcript,
  format: WireFormat = 'openai-chat',
  options: Parameters<typeof createEngine>[1] = {},
) {
  const store = new MemorySink();
  const engine = createEngine(config, { store, ...options });
  const text = JSON.stringify(build(t, format));
  const p = engine.project(text, format);
  const contents = contentsOf(p.request, format);
  return { p, store, engine, text, contents, texts: contents.map(contentText) };
}

/** `n` chars of log lines (so line-aware previews would have somewhere to stop early). */
function logText(n: number, seed = 'line'): string {
  let s = '';
  for (let i = 0; s.length < n; i++) s += `${seed} ${i}: the quick brown fox jumps over the lazy dog\n`;
  return s.slice(0, n);
}
const tool = (name: string, output: string, id?: string): ToolStep => ({ tool: name, output, ...(id ? { id } : {}) });

// ------------------------------------------------------------------------------------------------
describe('openai-trimmer preset (seed 000, OpenAI Agents ToolOutputTrimmer)', () => {
  const trimmer = { preset: 'openai-trimmer' };
  const big = logText(2_000);

  it('recent_turns 2: a result before the 2nd user message from the end is trimmed, results after it are not', () => {
    const t = transcript('u1', tool('bash', big), 'u2', tool('bash', big + 'b'), 'u3', tool('bash', big + 'c'));
    const { p, texts } = run(trimmer, t, 'openai-responses');
    expect(p.reductions.map((r) => [r.result, r.stage])).toEqual([[0, 'window']]);
    expect(texts[1]).toBe(big + 'b');
    expect(texts[2]).toBe(big + 'c');
  });

  it('the 2nd user message from the end is itself the boundary: a result right after it is recent', () => {
    const t = transcript('u1', 'u2', tool('bash', big), 'u3');
    const { p } = run(trimmer, t, 'openai-responses');
    expect(p.reductions).toEqual([]);
  });

  it('with fewer than recent_turns user messages nothing is old, however large', () => {
    const t = transcript('only user message', tool('bash', logText(50_000)), tool('bash', logText(50_000, 'x')));
    expect(run(trimmer, t, 'openai-responses').p.stats.unchanged).toBe(true);
  });

  it('max_output_chars 500: an old output of exactly 500 chars is kept, one of 501 is trimmed', () => {
    const t = transcript('u1', tool('bash', logText(500)), tool('bash', logText(501)), 'u2', 'u3');
    const { p, texts } = run(trimmer, t, 'openai-responses');
    expect(texts[0]).toBe(logText(500));
    expect(p.reductions.map((r) => r.result)).toEqual([1]);
  });

  it('preview_chars 200: the preview is exactly the first 200 chars of the output, followed by "..."', () => {
    // one long line: with line breaks the `head` preview stops at the last break near 200 chars,
    // unlike the seed's output_str[:200] (reported as a divergence, not pinned here)
    const oneLine = 'word '.repeat(400);
    const t = transcript('u1', tool('bash', oneLine), 'u2', 'u3');
    const { texts } = run(trimmer, t, 'openai-responses');
    expectEnd(texts[0]!, '\n' + oneLine.slice(0, 200) + '...');
  });

  it('the summary reads "[Trimmed: <tool> output — <N> chars → 200 char preview", naming the handle', () => {
    const out = logText(800);
    const t = transcript('u1', tool('search', out), 'u2', 'u3');
    const { texts, p } = run(trimmer, t, 'openai-responses');
    expectStart(texts[0]!, '[Trimmed: search output — 800 chars → 200 char preview');
    expect(texts[0]!.split('\n')[0]).toContain(`spillway read ${p.reductions[0]!.handle}`);
  });

  it('an output is left alone when its summary would not be shorter (seed: len(summary) >= output_len keeps it)', () => {
    // with a 480-char preview the summary of a 3-digit-sized output is 593 chars: a 593-char output
    // stays (equal is not shorter), a 594-char one is trimmed. Counted one token a character, so that
    // the seed's rule in characters decides: the engine also keeps a result whose marker is not fewer
    // tokens (engine-no-longer.test.ts), which a run of one letter under o200k never is
    const t = transcript('u1', tool('bash', 'x'.repeat(593)), tool('bash', 'y'.repeat(594)), 'u2', 'u3');
    const { p, texts } = run({ ...trimmer, previewChars: 480 }, t, 'openai-responses', { tokenizer: perChar });
    expect(texts[0]).toBe('x'.repeat(593));
    expect(p.reductions.map((r) => [r.result, r.projectedChars])).toEqual([[1, 593]]);
  });

  it('trimmable_tools: only listed tools are trimmed', () => {
    const t = transcript('u1', tool('search', big), tool('execute_code', big + 'e'), tool('bash', big + 'b'), 'u2', 'u3');
    const { p } = run({ ...trimmer, window: { tools: ['search', 'execute_code'] } }, t, 'openai-responses');
    expect(p.reductions.map((r) => r.tool)).toEqual(['search', 'execute_code']);
  });

  /** A Responses request whose function_call carries a namespace, as the Agents SDK sends it. */
  function namespacedRequest(): string {
    const fc = (id: string, ns: string | undefined, name: string) => ({
      type: 'function_call',
      call_id: id,
      ...(ns ? { namespace: ns } : {}),
      name,
      arguments: '{}',
    });
    const out = (id: string) => ({ type: 'function_call_output', call_id: id, output: big });
    const user = (text: string) => ({ type: 'message', role: 'user', content: text });
    return JSON.stringify({
      input: [
        user('u1'),
        fc('a', 'fs', 'read_file'),
        out('a'),
        fc('b', 'web', 'read_file'),
        out('b'),
        fc('c', undefined, 'read_file'),
        out('c'),
        user('u2'),
        user('u3'),
      ],
    });
  }

  it('trimmable_tools with a qualified namespace.name entry matches only that namespace', () => {
    const p = createEngine({ ...trimmer, window: { tools: ['fs.read_file'] } }).project(namespacedRequest());
    expect(p.reductions.map((r) => r.callId)).toEqual(['a']);
  });

  it('trimmable_tools with a bare name matches the tool in every namespace', () => {
    const p = createEngine({ ...trimmer, window: { tools: ['read_file'] } }).project(namespacedRequest());
    expect(p.reductions.map((r) => r.callId)).toEqual(['a', 'b', 'c']);
  });

  it('does not mutate the request it is given (seed: "Does NOT mutate the original items")', () => {
    const request = build(transcript('u1', tool('bash', big), 'u2', 'u3'), 'openai-responses');
    const copy = JSON.parse(JSON.stringify(request)) as Extra;
    const p = createEngine(trimmer).project(request);
    expect(p.reductions).toHaveLength(1);
    expect(request).toEqual(copy);
  });
});

// ------------------------------------------------------------------------------------------------
describe('clark-budget preset (seed 001, clark_agent ToolResultBudget)', () => {
  const clark = { preset: 'clark-budget' };
  const MARKER_PREFIX = '[tool_result_budget: clipped';

  it('DEFAULT_PER_TOOL_CHARS 32,000: an older result of 32,000 chars is kept verbatim', () => {
    const t = transcript('hi', tool('shell', 'x'.repeat(32_000)), 'again', tool('shell', 'y'));
    expect(run(clark, t).p.stats.unchanged).toBe(true);
  });

  it('an older result of 32,001 chars is clipped to a marker (clips_oversize_tool_results_above_default_cap)', () => {
    const t = transcript('hi', tool('shell', 'x'.repeat(32_001)), 'again', tool('shell', 'y'));
    const { texts, p } = run(clark, t, 'anthropic-messages');
    expectStart(texts[0]!, MARKER_PREFIX);
    expect(p.reductions[0]!.stage).toBe('budget');
  });

  it('the newest tool result stays verbatim however large ("the model needs full fidelity on the freshest result")', () => {
    const huge = 'x'.repeat(500_000);
    const t = transcript('hi', tool('shell', huge), 'again', tool('shell', huge + 'z'));
    const { texts } = run(clark, t);
    expect(texts[1]).toBe(huge + 'z');
    expectStart(texts[0]!, MARKER_PREFIX);
  });

  it('the marker says which tool, how many chars, the cap and the tool_call_id', () => {
    const t = transcript('hi', tool('shell', 'x'.repeat(40_000), 'call_a'), 'again', tool('shell', 'y'));
    const { texts } = run(clark, t);
    // plain integers, as the seed's format! prints them
    expectStart(texts[0]!, `${MARKER_PREFIX} shell result of 40000 chars to 32000 cap; tool_call_id=call_a;`);
    expect(texts[0]).toMatch(HANDLE);
  });

  it('MARKER_BUDGET_CHARS 256: the marker stays within 256 chars even with a pathological tool_call_id', () => {
    for (const idLength of [20, 120, 200, 400]) {
      const id = 'c'.repeat(idLength);
      const t = transcript(
        'hi',
        tool('mcp__a_rather_long_server_name__with_a_long_tool_name', 'x'.repeat(40_000), id),
        'again',
        tool('shell', 'y'),
      );
      const { texts } = run(clark, t);
      expect(texts[0]!.length).toBeLessThanOrEqual(256);
      expectStart(texts[0]!, MARKER_PREFIX);
      expect(texts[0]).toMatch(HANDLE);
    }
  });

  it('results within the cap are left exactly as they were (preserves_tool_results_within_cap)', () => {
    const t = transcript('hi', tool('shell', 'x'.repeat(50)), 'again', tool('shell', 'x'.repeat(50)));
    const { p, text } = run({ ...clark, defaultCap: 100 }, t);
    expect(p.request).toBe(text);
  });

  it('a tool without its own cap falls back to the default (unknown_tool_falls_back_to_default_cap)', () => {
    const t = transcript('hi', tool('synthetic', 'x'.repeat(500)), 'again', tool('synthetic', 'x'.repeat(500)));
    const { texts } = run({ ...clark, defaultCap: 100, toolCaps: { other: 'unlimited' } }, t);
    expectStart(texts[0]!, MARKER_PREFIX);
  });

  it('toolCaps "unlimited" keeps an old result verbatim (per_tool_override_unlimited_keeps_verbatim)', () => {
    const t = transcript('hi', tool('publish', 'x'.repeat(500)), 'more', tool('shell', 'y'), 'again');
    const { texts, p } = run({ ...clark, defaultCap: 100, toolCaps: { publish: 'unlimited' } }, t);
    expect(texts[0]).toBe('x'.repeat(500));
    expect(p.reductions).toEqual([]);
  });

  it('a per-tool cap smaller than the default clips (per_tool_override_smaller_clips_below_default)', () => {
    const t = transcript('hi', tool('verbose', logText(1_000)), 'more', tool('verbose', logText(1_000)));
    const { texts } = run({ ...clark, defaultCap: 1_000_000, toolCaps: { verbose: 50 } }, t);
    expectStart(texts[0]!, MARKER_PREFIX);
    expect(texts[1]).toBe(logText(1_000));
  });

  it('applying it to its own output changes nothing (idempotent_across_repeated_apply)', () => {
    const t = transcript('hi', tool('shell', 'x'.repeat(500)), 'again', tool('shell', 'x'.repeat(500)));
    const { p, store } = run({ ...clark, defaultCap: 100 }, t);
    // a fresh engine over the same store: the marker's handle is stored there
    const twice = createEngine({ ...clark, defaultCap: 100 }, { store }).project(p.request);
    expect(twice.request).toBe(p.request);
    expect(twice.stats.markersSeen).toBe(1);
  });

  it("an image block adds nothing to a result's size; only text blocks count (content_chars)", () => {
    const withImage = (n: number) =>
      transcript(
        'hi',
        { tool: 'shell', output: 'x'.repeat(n), result: { parts: ['x'.repeat(n)], image: true } },
        'again',
        tool('shell', 'y'),
      );
    expect(run({ ...clark, defaultCap: 1_000 }, withImage(1_000), 'anthropic-messages').p.reductions).toEqual([]);
    const { contents } = run({ ...clark, defaultCap: 1_000 }, withImage(1_001), 'anthropic-messages');
    const blocks = contents[0] as Extra[];
    expect(blocks.map((b) => b.type)).toEqual(['text', 'image']);
    expectStart(String(blocks[0]!.text), MARKER_PREFIX);
  });

  it("the clipped result is recoverable: the store holds the original under the marker's handle", () => {
    const original = logText(40_000);
    const t = transcript('hi', tool('shell', original), 'again', tool('shell', 'y'));
    const { texts, store } = run(clark, t);
    expect(store.get(HANDLE.exec(texts[0]!)![0])).toBe(original);
  });
});

// ------------------------------------------------------------------------------------------------
describe('ai-agent preset (seed 002, ai-agent toolResponseMaxBytes)', () => {
  const aiAgent = { preset: 'ai-agent' };

  it('toolResponseMaxBytes 12,288 counts bytes: 5,000 chars of 3-byte characters (15,000 bytes) are stored', () => {
    const t = transcript('q', tool('search', '中'.repeat(5_000)));
    const { p } = run(aiAgent, t);
    expect(p.reductions).toHaveLength(1);
  });

  it('12,000 ASCII chars (12,000 bytes) are under the limit and stay', () => {
    const t = transcript('q', tool('search', 'a'.repeat(12_000)));
    expect(run(aiAgent, t).p.stats.unchanged).toBe(true);
  });

  it('exactly 12,288 bytes stays; 12,289 bytes ("exceeds") is stored', () => {
    expect(run(aiAgent, transcript('q', tool('search', 'a'.repeat(12_288)))).p.reductions).toEqual([]);
    expect(run(aiAgent, transcript('q', tool('search', 'a'.repeat(12_289)))).p.reductions).toHaveLength(1);
  });

  it('the newest result is stored too: storage happens when the tool responds', () => {
    const t = transcript('q', tool('search', 'a'.repeat(20_000)));
    expect(run(aiAgent, t).p.reductions.map((r) => [r.result, r.stage])).toEqual([[0, 'offload']]);
  });

  it('the handle message reads "Tool output is too large (N bytes, L lines, T tokens)." and names the handle', () => {
    const output = logText(20_000).replace(/fox/g, 'fuchs ü');
    const { texts, p } = run(aiAgent, transcript('q', tool('search', output)));
    // plain integers, as the seed's handle message prints them
    const bytes = Buffer.byteLength(output);
    const lines = output.split('\n').filter((_, i, a) => i < a.length - 1 || a[i] !== '').length;
    const tokens = tokenCounter('o200k_base').count(output);
    expect(texts[0]!.split('\n')[0]).toBe(`Tool output is too large (${bytes} bytes, ${lines} lines, ${tokens} tokens).`);
    expect(texts[0]).toContain(p.reductions[0]!.handle);
  });

  it('the model sees the handle message only, no preview of the output', () => {
    const output = 'SECRET-PREVIEW-' + 'a'.repeat(20_000);
    const { texts } = run(aiAgent, transcript('q', tool('search', output)));
    expect(texts[0]).not.toContain('SECRET-PREVIEW');
    expect(texts[0]!.length).toBeLessThan(300);
  });

  it('the full response is stored and read back exactly by its handle', () => {
    const output = '中'.repeat(5_000);
    const { store, p } = run(aiAgent, transcript('q', tool('search', output)));
    expect(store.get(p.reductions[0]!.handle)).toBe(output);
  });
});

// ------------------------------------------------------------------------------------------------
describe('eino preset (seed 003, Eino ToolReduction)', () => {
  const eino = { preset: 'eino' };

  it('MaxLengthForTrunc 50,000: an output of 50,000 chars is returned as-is', () => {
    expect(run(eino, transcript('q', tool('bash', 'a'.repeat(50_000)))).p.stats.unchanged).toBe(true);
  });

  it('an output of 50,001 chars is truncated and its full content saved to the backend', () => {
    const output = logText(50_001);
    const { p, store } = run(eino, transcript('q', tool('bash', output)));
    expect(p.reductions.map((r) => r.stage)).toEqual(['offload']);
    expect(store.get(p.reductions[0]!.handle)).toBe(output);
  });

  it('the truncated content carries hint text telling the agent where the full content is', () => {
    const { texts, p } = run(eino, transcript('q', tool('bash', logText(60_000))));
    expectStart(texts[0]!, `<output of bash truncated; the full content is saved at ${p.reductions[0]!.handle}`);
    expect(texts[0]).toContain(`spillway read ${p.reductions[0]!.handle}`);
  });

  /** Four rounds of `chars` each, then a user message: about 4 * chars / 4 tokens by chars/4. */
  const fourRounds = (chars: number, text = (i: number) => String(i).repeat(chars)) =>
    transcript('start', tool('bash', text(1)), tool('bash', text(2)), tool('bash', text(3)), tool('bash', text(4)));

  it('MaxTokensForClear 30,000: a request of about 29,000 tokens (chars/4) is not cleared', () => {
    expect(run(eino, fourRounds(29_000)).p.reductions).toEqual([]);
  });

  it('a request of about 31,000 tokens (chars/4) clears every older result at once, keeping the most recent round', () => {
    const { p, texts } = run(eino, fourRounds(31_000));
    expect(p.reductions.map((r) => [r.result, r.stage])).toEqual([
      [0, 'clear'],
      [1, 'clear'],
      [2, 'clear'],
    ]);
    expect(texts[3]).toBe('4'.repeat(31_000));
  });

  it('tokens are counted as characters / 4, not by a real tokenizer (124,000 chars of one letter clear)', () => {
    // o200k counts a run of one letter at a small fraction of chars/4; chars/4 puts it over 30,000
    const same = () => 'a'.repeat(31_000);
    expect(tokenCounter('o200k_base').count('a'.repeat(124_000))).toBeLessThan(30_000);
    expect(run(eino, fourRounds(31_000, same)).p.stats.byStage.clear).toBe(3);
  });

  it('ClearRetentionSuffixLimit 1 keeps every result of the most recent round, not only the last result', () => {
    const t = transcript('start', tool('bash', 'a'.repeat(40_000)), tool('bash', 'b'.repeat(40_000)), [
      tool('grep', 'c'.repeat(40_000)),
      tool('grep', 'd'.repeat(40_000)),
    ]);
    const { p, texts } = run(eino, t, 'anthropic-messages');
    expect(p.reductions.map((r) => r.result)).toEqual([0, 1]);
    expect(texts[2]).toBe('c'.repeat(40_000));
    expect(texts[3]).toBe('d'.repeat(40_000));
  });

  it('a cleared result is replaced by hint text with where its content is saved', () => {
    const { texts, p, store } = run(eino, fourRounds(31_000));
    const h = p.reductions[0]!.handle;
    expect(texts[0]).toBe(`<result of bash cleared; the full content is saved at ${h} (handle ${h}); read it with spillway read ${h}>`);
    expect(store.get(h)).toBe('1'.repeat(31_000));
  });

  it('with language "zh" the truncation hint is in Chinese', () => {
    const { texts } = run({ ...eino, language: 'zh' }, transcript('q', tool('bash', logText(60_000))));
    expectStart(texts[0]!, '<工具 bash 的输出过长已截断，完整内容保存在 ');
  });

  it('with language "zh" the clear hint is in Chinese', () => {
    const { texts } = run({ ...eino, language: 'zh' }, fourRounds(31_000));
    expectStart(texts[0]!, '<工具 bash 的结果已清除，完整内容保存在 ');
  });

  it('already processed messages are not processed again (projecting the projection changes nothing)', () => {
    const { p, store } = run(eino, fourRounds(31_000));
    const again = createEngine(eino, { store }).project(p.request);
    expect(again.request).toBe(p.request);
    expect(again.reductions).toEqual([]);
  });
});

// ------------------------------------------------------------------------------------------------
describe('oracle-offload preset (seed 004, offload-and-fetch)', () => {
  const oracle = { preset: 'oracle-offload' };

  it('an output over 600 bytes keeps its first 600 bytes, then " ...[+N bytes. full output: spillway read sw_…]"', () => {
    // one line: with line breaks the `head` preview stops at the last break near 600 (reported)
    const output = 'row;'.repeat(250);
    const { texts, p } = run(oracle, transcript('q', tool('run_sql', output)));
    expect(texts[0]).toBe(`${output.slice(0, 600)} ...[+400 bytes. full output: spillway read ${p.reductions[0]!.handle}]`);
  });

  it('an output of exactly 600 bytes is left as it is ("if len(output) <= 600: preview = output")', () => {
    const t = transcript('q', tool('run_sql', 'a'.repeat(600)), tool('run_sql', 'é'.repeat(300)));
    expect(run(oracle, t).p.stats.unchanged).toBe(true);
  });

  it('an output just over 600 bytes stays when the marker would be longer than it (a reduction never grows a result)', () => {
    // the seed would append its marker to 603 bytes anyway; Spillway keeps the shorter original
    expect(run(oracle, transcript('q', tool('run_sql', '中'.repeat(201)))).p.stats.unchanged).toBe(true);
  });

  it('counts bytes, not chars: 300 three-byte characters (900 bytes) are offloaded', () => {
    const { p, texts } = run(oracle, transcript('q', tool('run_sql', '中'.repeat(300))));
    expect(p.reductions).toHaveLength(1);
    expectStart(texts[0]!, '中'.repeat(200) + ' ...[+300 bytes.');
  });

  it('the preview never splits a character and stays within 600 bytes', () => {
    const output = 'ab中😀'.repeat(400);
    const { texts } = run(oracle, transcript('q', tool('run_sql', output)));
    const pv = texts[0]!.slice(0, texts[0]!.indexOf(' ...[+'));
    expectStart(output, pv);
    expect(Buffer.byteLength(pv)).toBeLessThanOrEqual(600);
    expect(Buffer.byteLength(pv)).toBeGreaterThan(600 - 4);
  });

  it('the newest result is offloaded too (every dispatch is logged and truncated)', () => {
    const t = transcript('q', tool('run_sql', 'a'.repeat(100)), tool('run_sql', 'b'.repeat(12_000)));
    expect(run(oracle, t).p.reductions.map((r) => r.result)).toEqual([1]);
  });

  it('the full bytes are recoverable by the handle in the marker (fetch_tool_output)', () => {
    const output = logText(12_000);
    const { texts, store } = run(oracle, transcript('q', tool('run_sql', output)));
    expect(store.get(/spillway read (sw_[0-9a-f]{24})\]$/.exec(texts[0]!)![1]!)).toBe(output);
  });
});

// ------------------------------------------------------------------------------------------------
describe('spillway preset (the default)', () => {
  const spillway = {};
  /** counts one token per character, so sizes in tests read directly as tokens */
  const perChar = { tokenizer: { name: 'per-char', count: (s: string) => s.length } };

  it('offloads a result over the 8,000-char cap, the newest result included', () => {
    const { p } = run(spillway, transcript('q', tool('bash', logText(8_001))));
    expect(p.reductions.map((r) => [r.result, r.stage])).toEqual([[0, 'offload']]);
  });

  it('keeps a result of exactly 8,000 chars verbatim', () => {
    expect(run(spillway, transcript('q', tool('bash', logText(8_000)))).p.stats.unchanged).toBe(true);
  });

  it('the marker names tool, size, lines, tokens and handle, then a preview of at most 1,200 chars', () => {
    const output = logText(20_000);
    const { texts, p } = run(spillway, transcript('q', tool('bash', output)));
    const [line1] = texts[0]!.split('\n');
    expect(line1).toMatch(/^\[spillway: bash output offloaded · 20,000 chars · 3\d\d lines · [\d,]+ tokens · handle sw_[0-9a-f]{24}\]$/);
    expect(texts[0]).toContain(`spillway read ${p.reductions[0]!.handle}`);
    const header = texts[0]!.split('\n').slice(0, 2).join('\n');
    expect(texts[0]!.length - header.length - 1).toBeLessThanOrEqual(1_200);
  });

  it('leaves old results under the cap alone however many turns have passed (window and budget are off)', () => {
    const steps: Step[] = ['q', tool('bash', logText(7_000))];
    for (let i = 0; i < 12; i++) steps.push(`turn ${i}`, tool('bash', `small ${i}`));
    expect(run(spillway, transcript(...steps)).p.stats.unchanged).toBe(true);
  });

  it('once the request passes 20,000 tokens, clears the oldest results in one batch of at least 10,000 tokens, keeping the last 3', () => {
    // twenty distinct 1,500-token results: outside the last 3 there is enough to free 10,000 once 14 are in
    const steps: Step[] = ['q'];
    for (let i = 0; i < 20; i++) steps.push(tool('bash', String.fromCharCode(65 + i).repeat(1_500)));
    // the batch the trigger takes; the default's payback schedule waits until the session can pay for it (next test)
    const { p, texts } = run({ ...spillway, 'clear.schedule': 'trigger' }, transcript(...steps), 'openai-chat', perChar);
    const cleared = p.reductions.filter((r) => r.stage === 'clear').map((r) => r.result);
    expect(
      failing(p.reductions, (r) => r.stage === 'clear'),
      'elements that break the rule',
    ).toEqual([]);
    expect(cleared).toEqual(cleared.map((_, i) => i));
    expect(cleared.length).toBeGreaterThanOrEqual(7);
    expect(p.reductions.reduce((a, r) => a + r.originalTokens - r.projectedTokens, 0)).toBeGreaterThanOrEqual(10_000);
    expect(texts.slice(17)).toEqual(Array.from({ length: 3 }, (_, i) => String.fromCharCode(82 + i).repeat(1_500)));
  });

  it('does not clear below 20,000 tokens', () => {
    const steps: Step[] = ['q'];
    for (let i = 0; i < 12; i++) steps.push(tool('bash', String.fromCharCode(65 + i).repeat(1_500)));
    expect(run(spillway, transcript(...steps), 'openai-chat', perChar).p.reductions).toEqual([]);
  });

  it('does not clear when less than 10,000 tokens could be freed outside the last 3 (the clear would not pay for the cache it breaks)', () => {
    const steps: Step[] = ['q'];
    for (let i = 0; i < 6; i++) steps.push(tool('bash', String.fromCharCode(65 + i).repeat(1_500)));
    for (let i = 0; i < 3; i++) steps.push(tool('bash', String.fromCharCode(80 + i).repeat(4_000)));
    const { p } = run(spillway, transcript(...steps), 'openai-chat', perChar);
    expect(p.stats.originalTokens).toBeGreaterThan(20_000);
    expect(p.reductions).toEqual([]);
  });
});

describe('seed previews cut exactly (output[:N])', () => {
  const multiLine = Array.from({ length: 80 }, (_, i) => `row ${i} of a multi-line output`).join('\n');
  const chat = (content: string) =>
    JSON.stringify({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'search', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c', content },
        { role: 'user', content: 'two' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'three' },
      ],
    });
  it('the trimmer keeps exactly the first 200 chars of a multi-line output (seed: output_str[:preview_chars])', () => {
    const p = createEngine({ preset: 'openai-trimmer' }).project(chat(multiLine));
    const marker = JSON.parse(p.request).messages[2].content as string;
    const preview = marker.slice(marker.indexOf('\n') + 1, -3);
    expect(preview).toBe(multiLine.slice(0, 200));
    expectEnd(marker, '...');
  });
  it('the offload-and-fetch preset keeps exactly the first 600 bytes of a multi-line output', () => {
    const p = createEngine({ preset: 'oracle-offload' }).project(chat(multiLine));
    const marker = JSON.parse(p.request).messages[2].content as string;
    expectStart(marker, multiLine.slice(0, 600) + ' ...[+');
  });
});
