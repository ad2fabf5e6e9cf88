/**
 * The clear stage (seed 003 clear, Anthropic context editing): once the request passes
 * triggerTokens, the oldest results outside the last `keep` are cleared. Tokens are counted one per
 * character here, so sizes read as tokens: each round below is a 10,000-char result plus about 40
 * tokens of call and overhead.
 */
import { describe, expect, it } from 'vitest';
import { perChar, project, triggerClear } from '../support/run';
import { build, transcript, type Step, type ToolStep } from '../support/wire';
import type { WireFormat } from '../../src/engine/types';
import { createEngine } from '../../src/engine/engine';
import { expectStart } from '../support/expect';

const out = (i: number) => String(i % 10).repeat(10_000);
const tool = (name: string, output: string, extra: Partial<ToolStep> = {}): ToolStep => ({ tool: name, output, ...extra });
/** five rounds of 10,000 tokens: about 50,200 tokens in all, 40,160 before the last round */
const five = (names: string[] = ['bash', 'bash', 'bash', 'bash', 'bash']) => transcript('q', ...names.map((n, i) => tool(n, out(i))));
const clear = (over: Record<string, unknown> = {}) => ({
  offload: { enabled: false },
  // file inputs replaced on arrival, as before the default left them to the clear stage
  inputs: { when: 'arrival' },
  // the trigger's mechanics, by age alone
  clear: triggerClear(over),
});
const run = (config: Record<string, unknown>, t = five(), format: WireFormat = 'openai-chat') =>
  project(config, t, format, { tokenizer: perChar });
const cleared = (r: ReturnType<typeof run>) => r.p.reductions.filter((x) => x.stage === 'clear').map((x) => x.result);

describe('clear stage: when it fires', () => {
  it('clears nothing while the request is at or under triggerTokens', () => {
    expect(run(clear({ triggerTokens: 60_000 })).p.reductions).toEqual([]);
  });

  it('clears the oldest result first once the request is over the trigger', () => {
    expect(cleared(run(clear()))).toEqual([0]);
  });

  it('with clearAtLeastTokens 0 stops as soon as the request is back under the trigger', () => {
    const r = run(clear());
    expect(r.p.stats.projectedTokens).toBeLessThanOrEqual(45_000);
    expect(cleared(r)).toHaveLength(1);
  });

  it('with clearAtLeastTokens goes on clearing until at least that many tokens are freed', () => {
    expect(cleared(run(clear({ clearAtLeastTokens: 15_000 })))).toEqual([0, 1]);
  });

  it('with clearAtLeastTokens "all" clears every result outside keep', () => {
    expect(cleared(run(clear({ clearAtLeastTokens: 'all', keep: 1 })))).toEqual([0, 1, 2, 3]);
  });

  it('does not run when disabled', () => {
    expect(run({ ...clear(), clear: { enabled: false, triggerTokens: 1 } }).p.reductions).toEqual([]);
  });
});

describe('clear stage: what it keeps', () => {
  it('never clears the last `keep` results', () => {
    expect(cleared(run(clear({ triggerTokens: 5_000, keep: 2, clearAtLeastTokens: 'all' })))).toEqual([0, 1, 2]);
  });

  it('with keepUnit "rounds" keeps every result of the last `keep` assistant rounds', () => {
    const t = transcript(
      'q',
      tool('bash', out(0)),
      [tool('grep', out(1)), tool('grep', out(2))],
      [tool('grep', out(3)), tool('grep', out(4))],
    );
    expect(cleared(run(clear({ triggerTokens: 5_000, keep: 1, keepUnit: 'rounds', clearAtLeastTokens: 'all' }), t))).toEqual([0, 1, 2]);
  });

  it('with keepUnit "results" the same keep counts single results, across rounds', () => {
    const t = transcript(
      'q',
      tool('bash', out(0)),
      [tool('grep', out(1)), tool('grep', out(2))],
      [tool('grep', out(3)), tool('grep', out(4))],
    );
    expect(cleared(run(clear({ triggerTokens: 5_000, keep: 1, keepUnit: 'results', clearAtLeastTokens: 'all' }), t))).toEqual([0, 1, 2, 3]);
  });

  it('never clears a tool in excludeTools, * patterns included, and clears the next oldest instead', () => {
    const r = run(clear({ excludeTools: ['read_*'] }), five(['read_file', 'bash', 'bash', 'bash', 'bash']));
    expect(cleared(r)).toEqual([1]);
    expect(r.texts[0]).toBe(out(0));
  });

  it('never clears a result that would free fewer tokens than clear.minFreedTokens, and says why it stayed', () => {
    const t = transcript('q', tool('bash', 'short output line\n'.repeat(40)), ...[1, 2, 3, 4].map((i) => tool('bash', out(i))));
    const every = clear({ triggerTokens: 5_000, clearAtLeastTokens: 'all', keep: 1 });
    expect(cleared(run(every, t))).toEqual([0, 1, 2, 3]);
    const floor = clear({ triggerTokens: 5_000, clearAtLeastTokens: 'all', keep: 1, minFreedTokens: 1_000 });
    const r = run(floor, t);
    expect(cleared(r)).toEqual([1, 2, 3]);
    expect(r.texts[0]).toBe('short output line\n'.repeat(40));
    const h = project(floor, t, 'openai-chat', { tokenizer: perChar }, { detail: true, held: true }).p.detail!.held;
    expect(h![0]).toBe('small');
  });

  it("clears a report tool's result (a sub-agent's report) like any other; excludeTools keeps it for good", () => {
    const t = five(['Task', 'bash', 'bash', 'bash', 'bash']);
    // whole on arrival (its cap is unlimited), taken by a clear as the oldest result
    expect(cleared(run({ ...clear(), reportTools: ['Task'] }, t))).toEqual([0]);
    const kept = run({ ...clear({ excludeTools: ['Task'] }), reportTools: ['Task'] }, t);
    expect(cleared(kept)).toEqual([1]);
    expect(kept.texts[0]).toBe(out(0));
  });
});

describe('clear stage: what a cleared result looks like', () => {
  it('a cleared result becomes one short line, without preview, that names the handle', () => {
    const { texts, p } = run(clear());
    expectStart(texts[0]!, '[spillway: bash output cleared · 10,000 chars');
    expect(texts[0]!.split('\n')).toHaveLength(1);
    expect(texts[0]!.length).toBeLessThan(140);
    expect(texts[0]).toContain(`spillway read ${p.reductions[0]!.handle}`);
  });

  it('the store holds the cleared result in full', () => {
    const { store, p } = run(clear());
    expect(store.get(p.reductions[0]!.handle)).toBe(out(0));
  });

  it('clears an offloaded result too, storing the original rather than the offload marker', () => {
    const r = project(
      { ...clear({ triggerTokens: 10_000 }), offload: { enabled: true }, defaultCap: 5_000, previewChars: 2_000 },
      five(),
      'openai-chat',
      { tokenizer: perChar },
    );
    const first = r.p.reductions.find((x) => x.result === 0)!;
    expect(first).toMatchObject({ stage: 'clear', originalChars: 10_000 });
    expect(r.store.get(first.handle)).toBe(out(0));
    expect(r.p.reductions.filter((x) => x.result > 0).map((x) => x.stage)).toEqual(['offload', 'offload', 'offload', 'offload']);
  });

  it('leaves a result whose marker would be shorter in characters but not in tokens', () => {
    // a counter under which prose is dense (ten characters a token) and a marker is not (its handle's
    // hex digits a token each), as a real tokenizer treats "The file has been updated" and `sw_3f9a…`
    const dense = { name: 'dense-prose', count: (s: string) => (s.includes('sw_') ? s.length : Math.ceil(s.length / 10)) };
    const note = 'The file has been updated successfully. '.repeat(8); // 320 characters: 32 tokens
    const t = transcript('q', tool('Edit', note), ...[1, 2, 3, 4].map((i) => tool('bash', out(i))));
    const r = project(clear({ triggerTokens: 3_000, clearAtLeastTokens: 'all' }), t, 'openai-chat', { tokenizer: dense });
    // every bash output but the newest is cleared; the note, shorter than any marker in tokens, is sent as it was
    expect(cleared(r)).toEqual([1, 2, 3]);
    expect(r.texts[0]).toBe(note);
  });
});

describe('clear stage: clearToolInputs', () => {
  const inputs = clear({ triggerTokens: 1_000, keep: 1, clearAtLeastTokens: 'all', clearToolInputs: true });
  const args = { path: 'src/big.ts', content: 'const x = 1;\n'.repeat(60) };
  const steps = (extra: Partial<ToolStep> = {}): Step[] => ['q', tool('write_file', out(0), { args, ...extra }), tool('bash', 'ok')];
  const note = /^input cleared by spillway; spillway read (sw_[0-9a-f]{24}) \(result: (sw_[0-9a-f]{24})\)$/;

  it('chat: the arguments string becomes {"spillway_cleared": …} and the original arguments are stored', () => {
    const r = run(inputs, transcript(...steps()));
    const fn = (r.parsed.messages as any[])[1].tool_calls[0].function as { arguments: string };
    const m = note.exec((JSON.parse(fn.arguments) as { spillway_cleared: string }).spillway_cleared)!;
    expect(m[2]).toBe(r.p.reductions[0]!.handle);
    expect(r.store.get(m[1]!)).toBe(JSON.stringify(args));
    expect(r.p.reductions[0]!.inputCleared).toBe(true);
  });

  it("responses: a function_call's arguments string is replaced the same way", () => {
    const r = run(inputs, transcript(...steps()), 'openai-responses');
    const call = (r.parsed.input as any[]).find((i) => i.type === 'function_call') as { arguments: string };
    const m = note.exec((JSON.parse(call.arguments) as { spillway_cleared: string }).spillway_cleared)!;
    expect(r.store.get(m[1]!)).toBe(JSON.stringify(args));
  });

  it("responses: a custom_tool_call's free-form input becomes the plain note", () => {
    const input = 'apply this patch\n'.repeat(30);
    const r = run(
      inputs,
      transcript('q', tool('apply_patch', out(0), { custom: true, args: { input } }), tool('bash', 'ok')),
      'openai-responses',
    );
    const call = (r.parsed.input as any[]).find((i) => i.type === 'custom_tool_call') as { input: string };
    const m = note.exec(call.input)!;
    expect(r.store.get(m[1]!)).toBe(input);
  });

  it('anthropic: the tool_use input object becomes {"spillway_cleared": …} and its JSON is stored', () => {
    const r = run(inputs, transcript(...steps()), 'anthropic-messages');
    const use = ((r.parsed.messages as any[])[1].content as any[]).find((b) => b.type === 'tool_use') as {
      input: { spillway_cleared: string };
    };
    expect(Object.keys(use.input)).toEqual(['spillway_cleared']);
    const m = note.exec(use.input.spillway_cleared)!;
    expect(JSON.parse(r.store.get(m[1]!)!)).toEqual(args);
  });

  it('keeps an input that the note would not make shorter', () => {
    const r = run(inputs, transcript('q', tool('write_file', out(0), { args: { n: 1 } }), tool('bash', 'ok')));
    expect(r.p.reductions[0]!.inputCleared).toBeUndefined();
    expect((r.parsed.messages as any[])[1].tool_calls[0].function.arguments).toBe('{"n":1}');
  });

  it('clears the input of the call the cleared result answers when a call id is reused later', () => {
    // some agents number calls per turn (call_0 in every turn): the cleared result's own call is the
    // earlier one, and the later call, whose result is kept, keeps its input
    const first = { path: 'first.ts', content: 'a'.repeat(400) };
    const second = { path: 'second.ts', content: 'b'.repeat(400) };
    const r = run(
      inputs,
      transcript('q', tool('write_file', out(0), { id: 'call_0', args: first }), tool('bash', out(1), { id: 'call_0', args: second })),
    );
    const messages = r.parsed.messages as any[];
    expect(r.p.reductions.map((x) => [x.result, x.inputCleared])).toEqual([[0, true]]);
    expect(JSON.parse(messages[1].tool_calls[0].function.arguments)).toHaveProperty('spillway_cleared');
    expect(messages[3].tool_calls[0].function.arguments).toBe(JSON.stringify(second));
  });

  it('leaves inputs alone when clearToolInputs is off', () => {
    const r = run({ ...inputs, clear: { ...inputs.clear, clearToolInputs: false } }, transcript(...steps()));
    expect((r.parsed.messages as any[])[1].tool_calls[0].function.arguments).toBe(JSON.stringify(args));
  });
});

describe('clear stage: rounds in OpenAI Responses', () => {
  it("counts a model call's parallel function_call items as one round", () => {
    // turn 1 calls a; turn 2 calls b1 and b2 in parallel (two function_call items in a row)
    const t = transcript('q', tool('bash', out(0)), [tool('grep', out(1)), tool('grep', out(2))]);
    const r = run(clear({ triggerTokens: 5_000, keep: 2, keepUnit: 'rounds', clearAtLeastTokens: 'all' }), t, 'openai-responses');
    expect(cleared(r)).toEqual([]);
  });

  it('counts an assistant message and the function_call item after it as one round', () => {
    const turn = (id: string, i: number) => [
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `reading ${id}` }] },
      { type: 'function_call', call_id: id, name: 'bash', arguments: '{}' },
      { type: 'function_call_output', call_id: id, output: out(i) },
    ];
    const input = [{ type: 'message', role: 'user', content: 'q' }, ...turn('z', 0), ...turn('a', 1), ...turn('b', 2)];
    const e = createEngine(clear({ triggerTokens: 5_000, keep: 2, keepUnit: 'rounds', clearAtLeastTokens: 'all' }), { tokenizer: perChar });
    expect(e.project(JSON.stringify({ input })).reductions.map((x) => [x.callId, x.stage])).toEqual([['z', 'clear']]);
  });
});

describe('clear stage: what it asks the counter', () => {
  it('counts the marker a result would be cleared to once, not again on every call of the session', () => {
    const asked: string[] = [];
    const counter = { name: 'per-char-spy', count: (s: string) => (asked.push(s), s.length) };
    const engine = createEngine(clear({ schedule: 'payback' }), { tokenizer: counter });
    const text = JSON.stringify(build(five(), 'openai-chat'));
    // the estimate renders a marker with a placeholder handle (clear-result.ts, clearedMarkerTokens)
    const estimates = () => asked.filter((s) => s.includes('sw_000000000000000000000000')).length;
    engine.project(text, 'openai-chat', { session: 's' });
    const first = estimates();
    expect(first).toBeGreaterThan(0);
    engine.project(text, 'openai-chat', { session: 's' });
    engine.project(text, 'openai-chat', { session: 'another' });
    expect(estimates()).toBe(first);
  });
});

describe('clear stage: why it left a result as it was (ProjectionDetail.held)', () => {
  const held = (config: Record<string, unknown>, t = five(), options: Parameters<typeof project>[3] = {}) =>
    project(config, t, 'openai-chat', { tokenizer: perChar, ...options }, { detail: true, held: true }).p.detail!.held;

  it('says the request is under the trigger', () => {
    expect(held(clear({ triggerTokens: 60_000 }))).toEqual(new Array(5).fill('under-trigger'));
  });

  it('is worked out only when the held option asks: detail alone leaves it out', () => {
    const { p } = project(clear({ triggerTokens: 60_000 }), five(), 'openai-chat', { tokenizer: perChar }, { detail: true });
    expect(p.detail!.projectedItemTokens.length).toBeGreaterThan(0);
    expect(p.detail!.held).toBeUndefined();
  });

  it('says what the clear of this call took, what it kept by clear.keep and what it did not need to reach', () => {
    // one result frees enough; the last one is kept by clear.keep
    expect(held(clear({ keep: 1 }))).toEqual([undefined, 'enough', 'enough', 'enough', 'recent']);
  });

  it('says a tool is excluded, and that too little is clearable when only it would free enough', () => {
    const h = held(clear({ excludeTools: ['read_*'], clearAtLeastTokens: 45_000 }), five(['read_file', 'bash', 'bash', 'bash', 'bash']));
    expect(h![0]).toBe('excluded');
    expect(h!.slice(1)).toEqual(new Array(4).fill('too-little'));
  });

  it('says a result is in use, and that a clear would not pay back in the calls the session can be expected to make', () => {
    const h = held(clear({ inUseCalls: 2, schedule: 'payback' }), five(), { sessionLengths: [5, 5, 5, 5] });
    // received in the last two calls
    expect(h!.slice(3)).toEqual(['in-use', 'in-use']);
    expect(h!.slice(0, 3)).toEqual(new Array(3).fill('no-payback'));
  });

  it('is absent when the clear stage is off', () => {
    expect(held({ ...clear(), clear: { enabled: false } })).toBeUndefined();
  });
});
