/**
 * File inputs (src/engine/file-inputs.ts): the inputs of file-writing calls become a marker with the
 * path and a handle once the conversation is big enough, in every wire format, recoverable exactly,
 * recognised on re-projection and sticky from one call to the next.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { readFileInput } from '../../src/engine/file-inputs';
import { READ_BACK_MAX_CHARS } from '../../src/engine/guarantee';
import { readTranscript, requestForCall } from '../../src/replay/readers';

const content = (tag: string) => Array.from({ length: 60 }, (_, i) => `line ${i} of ${tag}: const value_${i} = compute(${i});`).join('\n');
/** an earlier conversation of about `n` characters (one char = one token with the perChar counter) */
const filler = (n: number) => 'x'.repeat(n);
import { perChar } from '../support/run';
import { LONG_CLAUDE_CODE } from '../support/corpus';

function anthropic(opts: { history: number; calls: Array<{ id: string; name: string; input: Record<string, unknown> }>; after?: number }) {
  const messages: unknown[] = [{ role: 'user', content: filler(opts.history) }];
  for (const c of opts.calls) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: 'writing' },
        { type: 'tool_use', id: c.id, name: c.name, input: c.input },
      ],
    });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: c.id, content: `done ${c.id}` }] });
  }
  for (let i = 0; i < (opts.after ?? 0); i++) {
    messages.push({ role: 'assistant', content: [{ type: 'tool_use', id: `later${i}`, name: 'bash', input: { command: 'ls' } }] });
    messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: `later${i}`, content: 'a b c' }] });
  }
  return { model: 'claude', max_tokens: 100, messages };
}

const engine = (over: Record<string, unknown> = {}) => {
  const store = new MemorySink();
  return { store, e: createEngine({ inputs: { when: 'arrival', minTokens: 1_000, ...over } }, { store, tokenizer: perChar }) };
};

describe('file inputs: what is replaced', () => {
  it('replaces a Write input by a marker that keeps the path and reads back exactly', () => {
    const { e, store } = engine();
    const input = { file_path: '/repo/src/app.ts', content: content('app') };
    const p = e.project(anthropic({ history: 2_000, calls: [{ id: 'w1', name: 'Write', input }] }), 'anthropic-messages');
    const sent = (p.request as { messages: Array<{ content: Array<{ input?: Record<string, unknown> }> }> }).messages[1]!.content[1]!
      .input!;
    expect(sent.file_path).toBe('/repo/src/app.ts');
    expect(sent.content).toBeUndefined();
    expect(String(sent.spillway_cleared)).toContain(`spillway read ${p.inputs[0]!.handle}`);
    expect(JSON.parse(store.get(p.inputs[0]!.handle)!)).toEqual(input);
    expect(p.inputs[0]!.projectedChars).toBeLessThan(p.inputs[0]!.originalChars);
    expect(p.stats.projectedTokens).toBe(p.stats.originalTokens - p.inputs[0]!.originalTokens + p.inputs[0]!.projectedTokens);
  });

  it('keeps short fields such as replace_all next to the path', () => {
    const { e } = engine();
    const input = { file_path: '/repo/a.py', old_string: content('old'), new_string: content('new'), replace_all: true };
    const p = e.project(anthropic({ history: 2_000, calls: [{ id: 'e1', name: 'Edit', input }] }), 'anthropic-messages');
    const sent = (p.request as { messages: Array<{ content: Array<{ input?: Record<string, unknown> }> }> }).messages[1]!.content[1]!
      .input!;
    expect(sent).toMatchObject({ file_path: '/repo/a.py', replace_all: true });
    expect(sent.old_string).toBeUndefined();
  });

  it("replaces Gemini CLI's replace input like an Edit", () => {
    const { e, store } = engine();
    const input = { file_path: '/repo/b.ts', old_string: content('old'), new_string: content('new'), expected_replacements: 1 };
    const p = e.project(anthropic({ history: 2_000, calls: [{ id: 'g1', name: 'replace', input }] }), 'anthropic-messages');
    const sent = (p.request as { messages: Array<{ content: Array<{ input?: Record<string, unknown> }> }> }).messages[1]!.content[1]!
      .input!;
    expect(sent).toMatchObject({ file_path: '/repo/b.ts', expected_replacements: 1 });
    expect(sent.new_string).toBeUndefined();
    expect(JSON.parse(store.get(p.inputs[0]!.handle)!)).toEqual(input);
  });

  it('leaves an input whole when what it spares is less than its read-back would carry into every later call', () => {
    const { e } = engine();
    // 12 lines: the marker spares a few hundred tokens, a read-back would bring all of them back with its call
    const short = { file_path: '/repo/src/small.ts', content: content('small').split('\n').slice(0, 12).join('\n') };
    const req = anthropic({ history: 2_000, calls: [{ id: 'w1', name: 'Write', input: short }] });
    expect(e.project(JSON.stringify(req), 'anthropic-messages').inputs).toEqual([]);
  });

  it('leaves inputs alone while the conversation before the call is under inputs.minTokens', () => {
    const { e } = engine({ minTokens: 50_000 });
    const req = anthropic({ history: 2_000, calls: [{ id: 'w1', name: 'Write', input: { file_path: '/a', content: content('a') } }] });
    const p = e.project(JSON.stringify(req), 'anthropic-messages');
    expect(p.inputs).toEqual([]);
    expect(p.request).toBe(JSON.stringify(req));
  });

  it('leaves tools that are not file writers, inputs without a path, and disabled configs alone', () => {
    const calls = [
      { id: 'b1', name: 'Bash', input: { command: content('cmd') } },
      { id: 'w1', name: 'Write', input: { content: content('no path') } },
    ];
    expect(engine().e.project(anthropic({ history: 2_000, calls }), 'anthropic-messages').inputs).toEqual([]);
    const off = engine({ enabled: false }).e.project(
      anthropic({ history: 2_000, calls: [{ id: 'w', name: 'Write', input: { file_path: '/a', content: content('a') } }] }),
      'anthropic-messages',
    );
    expect(off.inputs).toEqual([]);
  });

  it('with keepRounds 2 waits until two model calls have followed the write', () => {
    const { e } = engine({ keepRounds: 2 });
    const calls = [{ id: 'w1', name: 'Write', input: { file_path: '/a', content: content('a') } }];
    expect(e.project(anthropic({ history: 2_000, calls, after: 1 }), 'anthropic-messages').inputs).toEqual([]);
    expect(e.project(anthropic({ history: 2_000, calls, after: 2 }), 'anthropic-messages').inputs).toHaveLength(1);
  });

  it('replaces a Chat Completions arguments string with a JSON string of the marker', () => {
    const { e, store } = engine();
    const args = JSON.stringify({ path: '/repo/b.js', file_text: content('b'), command: 'create' });
    const req = {
      model: 'gpt',
      messages: [
        { role: 'user', content: filler(2_000) },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'str_replace_based_edit_tool', arguments: args } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'ok' },
      ],
    };
    const p = e.project(req, 'openai-chat');
    const sentArgs = (p.request as typeof req).messages[1]!.tool_calls![0]!.function.arguments;
    expect(JSON.parse(sentArgs)).toMatchObject({ path: '/repo/b.js', command: 'create' });
    expect(store.get(p.inputs[0]!.handle)).toBe(args);
  });

  it('replaces a freeform apply_patch input (Responses custom_tool_call) by a header naming the files', () => {
    const { e, store } = engine();
    const patch = `*** Begin Patch\n*** Add File: web/app.js\n${content('patch')
      .split('\n')
      .map((l) => '+' + l)
      .join('\n')}\n*** End Patch`;
    const req = {
      model: 'gpt-5',
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: filler(2_000) }] },
        { type: 'custom_tool_call', call_id: 'p1', name: 'apply_patch', input: patch },
        { type: 'custom_tool_call_output', call_id: 'p1', output: 'Success' },
      ],
    };
    const p = e.project(req, 'openai-responses');
    const sent = (p.request as typeof req).input[1] as { input: string };
    expect(sent.input).toContain('*** File: web/app.js');
    expect(sent.input).toContain(`spillway read ${p.inputs[0]!.handle}`);
    expect(store.get(p.inputs[0]!.handle)).toBe(patch);
    expect(readFileInput(sent.input)).toBeUndefined();
  });
});

describe('file inputs: idempotence and stickiness', () => {
  it('projecting a projection changes nothing', () => {
    const { e } = engine();
    const req = anthropic({ history: 2_000, calls: [{ id: 'w1', name: 'Write', input: { file_path: '/a', content: content('a') } }] });
    const once = e.project(JSON.stringify(req), 'anthropic-messages').request;
    const twice = engine().e.project(once, 'anthropic-messages');
    expect(twice.request).toBe(once);
    expect(twice.inputs).toEqual([]);
  });

  it('keeps the projected prefix byte-stable from one call to the next, and marks only new decisions fresh', () => {
    const { e } = engine();
    const calls = [{ id: 'w1', name: 'Write', input: { file_path: '/a', content: content('a') } }];
    const first = e.project(JSON.stringify(anthropic({ history: 2_000, calls })), 'anthropic-messages', { session: 's' });
    const next = e.project(JSON.stringify(anthropic({ history: 2_000, calls, after: 1 })), 'anthropic-messages', { session: 's' });
    const a = first.request as string,
      b = next.request as string;
    expect(b.startsWith(a.slice(0, a.lastIndexOf(']}')))).toBe(true);
    expect(first.inputs[0]!.fresh).toBe(true);
    expect(next.inputs[0]!.fresh).toBe(false);
  });

  it('replaces every copy of a call that a resumed session carries twice under the same id', () => {
    const { e } = engine();
    const input = { file_path: '/a', content: content('a') };
    const p = e.project(
      anthropic({
        history: 2_000,
        calls: [
          { id: 'dup', name: 'Write', input },
          { id: 'dup', name: 'Write', input },
        ],
      }),
      'anthropic-messages',
    );
    expect(p.inputs).toHaveLength(2);
    expect(JSON.stringify(p.request)).not.toContain('line 5 of a');
  });
});

describe('file inputs on the long real Claude Code session', () => {
  it('replaces the file inputs late in the session that spare more than their read-back would carry, each reading back exactly', async () => {
    const file = LONG_CLAUDE_CODE;
    readFileSync(file); // the long session is part of the corpus: fail loudly when missing
    const t = await readTranscript(file);
    const store = new MemorySink();
    // this session's context peaks near 72k tokens and its edits come early: from 20k on, not the default 60k
    const e = createEngine({ inputs: { when: 'arrival', minTokens: 20_000 } }, { store });
    const k = t.calls.length - 1;
    const text = JSON.stringify(requestForCall(t, k));
    const p = e.project(text, t.wire);
    // an input is replaced when it spares more than a read-back of it would carry into every later
    // call (the read call and up to 2,000 characters of answer): here three large Edits
    expect(p.inputs.map((x) => x.tool)).toEqual(['Edit', 'Edit', 'Edit']);
    for (const x of p.inputs) expect(x.originalChars - x.projectedChars).toBeGreaterThan(READ_BACK_MAX_CHARS);
    const original = JSON.parse(text) as { messages: Array<{ content: unknown }> };
    for (const x of p.inputs) {
      const block = (original.messages[x.item]!.content as Array<{ id?: string; input?: unknown }>).find((b) => b.id === x.callId)!;
      expect(JSON.parse(store.get(x.handle)!)).toEqual(block.input);
    }
  });
});
