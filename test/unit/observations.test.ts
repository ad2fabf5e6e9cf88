/**
 * Observations: a text-mode agent's command output carried in a user message. The templates the
 * `auto` setting recognises (positive and negative cases), the position rule, the body span on the
 * raw JSON text, the in-place patch (byte identity outside the body), explicit marks, the three wire
 * formats, idempotence and stickiness, and the presets' `off`.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { readRequest, resultText, type ObservationOption } from '../../src/engine/formats';
import { actionOf, decodeRaw, observationSpan, rawAdvance, safeCut } from '../../src/engine/formats/observations';
import { parseLazy, type JString } from '../../src/engine/json';
import type { WireFormat } from '../../src/engine/types';

const lines = (n: number, what = 'line') => Array.from({ length: n }, (_, i) => `${what} ${i}: some output text "q" \\ é 😀`).join('\n');
const BIG = lines(400); // ~17k chars
const miniObs = (body: string, rc = 0) => `<returncode>${rc}</returncode>\n<output>\n${body}</output>`;
const miniLong = (body: string) =>
  `<returncode>1</returncode>\n<warning>\nThe output of your last command was too long.\nPlease try a different command that produces less output.\n</warning><output_head>\n${body.slice(0, 5000)}\n</output_head>\n<elided_chars>\n${body.length - 10000} characters elided\n</elided_chars>\n<output_tail>\n${body.slice(-5000)}\n</output_tail>`;
const miniTimeout = (cmd: string, body: string) =>
  `The last command <command>${cmd}</command> timed out and has been killed.\nThe output of the command was:\n <output>\n${body}\n</output>\nPlease try another command and make sure to avoid those requiring interactive input.`;
const sweObs = (body: string) => `OBSERVATION:\n${body}`;
const swePrompt = (body: string) => `${body}\n(Open file: /repo/src/app.py)\n(Current directory: /repo)\nbash-$`;
const action = (cmd: string, lang = 'bash') => `THOUGHT: let me look.\n\n\`\`\`${lang}\n${cmd}\n\`\`\``;

// observations over the cap are offloaded on arrival, reads (`cat`) included: what keepReads leaves
// whole is engine-spillway-default.test.ts's
const cfg = { defaultCap: 2_000, previewChars: 300, offload: { keepReads: 0 }, clear: { enabled: false } };

/** A text-mode conversation: system, task, then (action, observation) pairs; in the given format. */
function conversation(format: WireFormat, observations: string[], actions?: string[], task = 'Fix the bug in count().'): string {
  const turns: { role: 'user' | 'assistant'; text: string }[] = [{ role: 'user', text: task }];
  observations.forEach((o, i) => {
    turns.push({ role: 'assistant', text: action(actions?.[i] ?? `cat src/file${i}.py`) });
    turns.push({ role: 'user', text: o });
  });
  if (format === 'openai-chat')
    return JSON.stringify({
      model: 'm',
      messages: [{ role: 'system', content: 'You are a helpful assistant.' }, ...turns.map((t) => ({ role: t.role, content: t.text }))],
    });
  if (format === 'anthropic-messages')
    return JSON.stringify({
      model: 'm',
      system: 'You are a helpful assistant.',
      messages: turns.map((t) => ({ role: t.role, content: [{ type: 'text', text: t.text }] })),
    });
  return JSON.stringify({
    model: 'm',
    instructions: 'You are a helpful assistant.',
    input: turns.map((t) => ({
      type: 'message',
      role: t.role,
      content: [{ type: t.role === 'user' ? 'input_text' : 'output_text', text: t.text }],
    })),
  });
}

function stringNode(value: string): { text: string; node: JString } {
  const text = JSON.stringify(value);
  return { text, node: parseLazy(text) as JString };
}

function bodyOf(value: string, whole = false): string | undefined {
  const { text, node } = stringNode(value);
  const span = observationSpan(text, node, whole);
  return span && decodeRaw(text, span.start, span.end, node.escaped);
}

describe('templates: where the command output is', () => {
  it('mini-swe-agent: the text inside <output>, returncode outside', () => {
    expect(bodyOf(miniObs('a\nb\n'))).toBe('a\nb\n');
    expect(bodyOf(miniObs(BIG, 2))).toBe(BIG);
    expect(bodyOf(miniObs(''))).toBe('');
  });

  it('mini-swe-agent with an <exception> before the returncode (2.x)', () => {
    expect(bodyOf(`<exception>TimeoutError</exception>\n${miniObs('partial')}`)).toBe('partial');
  });

  it('mini-swe-agent long output: returncode and warning stay; from inside <output_head> to inside <output_tail> is the body', () => {
    const text = miniLong(BIG);
    const body = bodyOf(text)!;
    expect(body.startsWith(BIG.slice(0, 100))).toBe(true);
    expect(body.endsWith(BIG.slice(-100))).toBe(true);
    expect(body).toContain('</output_head>\n<elided_chars>');
    expect(text.replace(body, 'X')).toMatch(/^<returncode>1<\/returncode>\n<warning>[\s\S]*<\/warning><output_head>\nX\n<\/output_tail>$/);
  });

  it('mini-swe-agent timeout: the output inside <output>, the command and the advice outside', () => {
    expect(bodyOf(miniTimeout('python3 run.py', BIG))).toBe(`${BIG}\n`);
    expect(bodyOf(miniTimeout('sleep 100', ''))).toBe('\n');
  });

  it('SWE-agent: after OBSERVATION: / Observation:, and before the (Open file) prompt', () => {
    expect(bodyOf(sweObs(BIG))).toBe(BIG);
    expect(bodyOf(`Observation: ${BIG}`)).toBe(BIG);
    expect(bodyOf(swePrompt(BIG))).toBe(BIG);
    expect(bodyOf(sweObs(swePrompt('x')))).toBe('x');
  });

  it('a text that matches no template is not an observation, or all body when a reader says it is', () => {
    for (const prompt of [
      'Please fix the bug. The <output> tag in the log says: <output>\nboom\n</output>',
      'I saw OBSERVATION: nothing works',
      'The last command failed, can you retry?',
      '<returncode>0</returncode> is what I got, no output tag',
      '<returncode>0</returncode>\n<output>\nnever closed',
      '[spillway: bash output offloaded · 9 chars · handle sw_0123456789abcdef01234567]',
      '(Open file: a.py)\n(Current directory: /r)',
    ]) {
      expect(bodyOf(prompt), prompt).toBeUndefined();
      expect(bodyOf(prompt, true)).toBe(prompt);
    }
  });
});

describe('raw spans on escape boundaries', () => {
  it('safeCut never splits an escape, rawAdvance counts decoded units', () => {
    const raw = JSON.stringify('a\n\u0001é😀\\"b').slice(1, -1); // a\n\u0001é😀\\\"b
    for (let p = 0; p <= raw.length; p++) {
      const cut = safeCut(raw, p, 0);
      expect(cut).toBeLessThanOrEqual(p);
      expect(() => JSON.parse(`"${raw.slice(0, cut)}"`)).not.toThrow();
    }
    expect(rawAdvance(raw, 0, 2)).toBe(3); // "a" and "\n"
    expect(rawAdvance(raw, 0, 3)).toBe(9); // and "\u0001"
  });

  it('a body in a string longer than the decoded edges is found from its head and tail', () => {
    const body = `${'\\u0001"\t😀 '.repeat(3_000)}end`;
    expect(bodyOf(miniObs(body))).toBe(body);
    expect(bodyOf(swePrompt(body))).toBe(body);
    expect(bodyOf(miniLong(body.repeat(2)))!.startsWith(body.slice(0, 50))).toBe(true);
  });
});

describe('actionOf: the action of a text-mode reply', () => {
  it('is the last fenced block, with its language', () => {
    expect(actionOf(action('ls -la'))).toEqual({ lang: 'bash', command: 'ls -la' });
    expect(actionOf('DISCUSSION\nfirst\n```\nopen src/a.py 10\n```')).toEqual({ lang: '', command: 'open src/a.py 10' });
    expect(actionOf('```mswea_bash_command\nls\n```')).toEqual({ lang: 'mswea_bash_command', command: 'ls' });
  });

  it('is none for a reply without a fenced block', () => {
    expect(actionOf('I am done. `ls` was enough.')).toBeUndefined();
  });
});

const reads = (text: string, option: ObservationOption = 'auto') => readRequest(text, 'auto', undefined, option);

describe('auto: position and template together', () => {
  it.each(['openai-chat', 'anthropic-messages', 'openai-responses'] as const)(
    '%s: observations after actions are tool results named bash with message-index call ids',
    (format) => {
      const text = conversation(format, [miniObs('small\n'), miniObs(BIG)]);
      const req = reads(text);
      expect(req.format).toBe(format);
      const first = format === 'openai-chat' ? 3 : 2;
      expect(req.results.map((r) => [r.tool, r.callId, r.item])).toEqual([
        ['bash', `obs-${first}`, first],
        ['bash', `obs-${first + 2}`, first + 2],
      ]);
      expect(resultText(req, req.results[1]!)).toBe(BIG);
    },
  );

  it('SWE-agent observations are named by the first word of the action, bash when it has none', () => {
    const text = conversation(
      'openai-chat',
      [swePrompt('file contents'), sweObs('ok'), sweObs('done')],
      ['open src/a.py', '   ', 'python3 x.py'],
    );
    expect(reads(text).results.map((r) => r.tool)).toEqual(['open', 'bash', 'python3']);
  });

  it('a template in the first user message (no action before it) is not an observation', () => {
    const text = JSON.stringify({ messages: [{ role: 'user', content: miniObs(BIG) }] });
    expect(reads(text).results).toEqual([]);
  });

  it('a template after an assistant reply without an action, or with tool calls, is not an observation', () => {
    const noAction = JSON.stringify({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Paste the log please.' },
        { role: 'user', content: miniObs(BIG) },
      ],
    });
    expect(reads(noAction).results).toEqual([]);
    const withCalls = JSON.stringify({
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: action('ls'),
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: 'x' },
        { role: 'user', content: miniObs(BIG) },
      ],
    });
    expect(reads(withCalls).results.map((r) => r.callId)).toEqual(['c1']);
  });

  it('a user prompt after an action that matches no template is left alone', () => {
    const text = conversation('openai-chat', [`Stop. Please read <output>\n${BIG}</output> and think.`]);
    const p = createEngine(cfg, { store: new MemorySink() }).project(text, 'auto');
    expect(p.request).toBe(text);
  });

  it('off never marks anything', () => {
    expect(reads(conversation('openai-chat', [miniObs(BIG)]), 'off').results).toEqual([]);
  });
});

describe('explicit marks (transcript readers)', () => {
  it('mark the messages they name, the template deciding the body, else the whole text', () => {
    const text = conversation('openai-chat', ['plain output without template\n' + BIG, miniObs(BIG)]);
    const req = reads(text, [
      { item: 3, tool: 'git' },
      { item: 5, tool: 'bash' },
      { item: 0, tool: 'x' },
      { item: 99, tool: 'y' },
    ]);
    expect(req.results.map((r) => [r.item, r.tool, r.observation!.template])).toEqual([
      [3, 'git', 'whole'],
      [5, 'bash', 'mini-swe-agent'],
    ]);
    expect(resultText(req, req.results[0]!)).toBe('plain output without template\n' + BIG);
  });
});

describe('the engine reduces observations in place', () => {
  it.each(['openai-chat', 'anthropic-messages', 'openai-responses'] as const)(
    '%s: only the body changes; the template and everything else stay byte for byte',
    (format) => {
      const text = conversation(format, [miniObs(BIG), swePrompt(BIG), miniTimeout('make', BIG)], ['make test', 'open a.py', 'make']);
      const store = new MemorySink();
      const p = createEngine(cfg, { store }).project(text, format);
      expect(p.reductions.map((r) => [r.tool, r.stage])).toEqual([
        ['bash', 'offload'],
        ['open', 'offload'],
        ['bash', 'offload'],
      ]);
      const req = reads(text);
      // outside the bodies the projection is the request, byte for byte
      let at = 0,
        rest = '',
        projRest = p.request;
      for (const r of req.results) {
        const o = r.observation!;
        rest += text.slice(at, o.start);
        at = o.end;
      }
      rest += text.slice(at);
      const preq = reads(projRest);
      at = 0;
      let prest = '';
      for (const r of preq.results) {
        prest += projRest.slice(at, r.observation!.start);
        at = r.observation!.end;
      }
      projRest = prest + projRest.slice(at);
      expect(projRest).toBe(rest);
      // the wrappers are still there, the bodies are markers, the handles read back the exact bodies
      const msgs = JSON.stringify(JSON.parse(p.request));
      expect(msgs).toContain('<returncode>0</returncode>\\n<output>\\n[spillway: bash output offloaded');
      expect(msgs).toContain('(Open file: /repo/src/app.py)');
      for (const r of p.reductions) expect(store.get(r.handle)).toBe(BIG.length === r.originalChars ? BIG : `${BIG}\n`);
    },
  );

  it('projecting a projection changes nothing: markers in user messages are recognised', () => {
    const text = conversation('openai-chat', [
      miniObs(BIG),
      miniLong(lines(300, 'other')),
      miniTimeout('make', BIG),
      sweObs(BIG),
      swePrompt(BIG),
    ]);
    // a marker counts only when its handle is in the store (a forged one is ordinary text): same store
    const store = new MemorySink();
    const first = createEngine(cfg, { store }).project(text, 'auto');
    expect(first.reductions).toHaveLength(5);
    const again = createEngine(cfg, { store }).project(first.request, 'auto');
    expect(again.request).toBe(first.request);
    expect(again.reductions).toEqual([]);
    expect(again.stats.markersSeen).toBe(5);
  });

  it('in a session, an observation reduced in one call stays reduced the same way in the next (the prefix is stable)', () => {
    const engine = createEngine(
      { ...cfg, clear: { enabled: true, triggerTokens: 3_000, keep: 1, clearAtLeastTokens: 500, inUseCalls: 0 } },
      { store: new MemorySink() },
    );
    const obs = [miniObs(BIG), miniObs(lines(100, 'a')), miniObs(lines(100, 'b')), miniObs(lines(100, 'c'))];
    let prev: string | undefined;
    for (let k = 1; k <= obs.length; k++) {
      const p = engine.project(conversation('openai-chat', obs.slice(0, k)), 'openai-chat', { session: 's' });
      const out = p.request;
      if (prev !== undefined) {
        const prevMessages = JSON.parse(prev).messages as unknown[];
        const messages = JSON.parse(out).messages as unknown[];
        // stable up to where a clear rewrote it: at least the first observation's marker is the same
        expect(messages[3]).toEqual(prevMessages[3]);
      }
      prev = out;
    }
  });

  it('dedupe and clear apply to observations too', () => {
    const repeated = lines(40, 'same'); // ~1.7k: under the cap, over the dedupe minimum
    const text = conversation('openai-chat', [miniObs(repeated), miniObs(repeated)]);
    const p = createEngine(cfg, { store: new MemorySink() }).project(text, 'auto');
    expect(p.reductions.map((r) => [r.callId, r.reason])).toEqual([['obs-5', 'identical to the output of call obs-3']]);
    const cleared = createEngine(
      {
        ...cfg,
        defaultCap: 'unlimited',
        clear: { enabled: true, triggerTokens: 1_000, keep: 1, clearAtLeastTokens: 0, inUseCalls: 0, keepGathered: false },
      },
      { store: new MemorySink() },
    ).project(conversation('openai-chat', [miniObs(BIG), miniObs('tail\n')]), 'auto');
    expect(cleared.reductions.map((r) => [r.callId, r.stage])).toEqual([['obs-3', 'clear']]);
  });

  it('per-tool caps apply under the tool the action implies', () => {
    const text = conversation('openai-chat', [swePrompt(BIG), swePrompt(BIG + 'x')], ['open a.py', 'grep -r x']);
    const p = createEngine({ ...cfg, toolCaps: { open: 'unlimited' } }, { store: new MemorySink() }).project(text, 'auto');
    expect(p.reductions.map((r) => r.tool)).toEqual(['grep']);
  });

  it('the seed presets leave observations alone; setting observations: auto on them turns it on', () => {
    const text = conversation('openai-chat', [miniObs(BIG)]);
    expect(createEngine({ preset: 'oracle-offload' }).project(text, 'auto').request).toBe(text);
    expect(createEngine({ preset: 'oracle-offload', observations: 'auto' }).project(text, 'auto').reductions).toHaveLength(1);
    expect(createEngine({ ...cfg, observations: 'off' }).project(text, 'auto').request).toBe(text);
  });

  it("observations: off wins over a reader's marks", () => {
    const text = conversation('openai-chat', [miniObs(BIG)]);
    expect(createEngine({ ...cfg, observations: 'off' }).project(text, 'auto', { observations: [{ item: 3, tool: 'bash' }] }).request).toBe(
      text,
    );
    expect(
      createEngine(cfg)
        .project(text, 'auto', { observations: [{ item: 3, tool: 'sh' }] })
        .reductions.map((r) => r.tool),
    ).toEqual(['sh']);
  });

  it('an invalid observations setting is an error naming the key', () => {
    expect(() => createEngine({ observations: 'sometimes' })).toThrow(/observations/);
  });
});
