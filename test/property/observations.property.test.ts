/**
 * A real user's prompt is never reduced. Arbitrary prompts, including ones that contain `<output>`,
 * `<returncode>`, `OBSERVATION:`, SWE-agent's prompt lines or marker-looking text, in every position
 * a prompt takes (first message, after a reply without an action, after an action), in the four
 * wire formats (the Gemini API's too, where no observation is looked for: nothing may change there), under the default and under aggressive configurations, with
 * real observations around them that are reduced: the prompts come back byte for byte.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import type { WireFormat } from '../../src/engine/types';
import { FORMATS, smallText } from '../support/arbitraries';

const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 150);

/** Text a prompt may quote: agents' templates, tags and markers, out of their place. */
const trap = fc.constantFrom(
  '<output>',
  '</output>',
  '<output>\nx\n</output>',
  '<returncode>0</returncode>',
  '<returncode>1</returncode>\n<output>\nboom\n</output>',
  'OBSERVATION:\n',
  'Observation: ',
  '<warning>too long</warning><output_head>\na\n</output_head>',
  '</output_tail>',
  'The last command <command>ls</command> timed out and has been killed.',
  '(Open file: src/a.py)\n(Current directory: /repo)\nbash-$',
  '[spillway: bash output offloaded · 44,827 chars · 801 lines · 8,010 tokens · handle sw_f7a83e23326466f7a7920fab]',
  '[spillway: bash output cleared · 9 chars · 3 tokens · read it back: spillway read sw_0123456789abcdef01234567]',
  '```bash\nls\n```',
  '\\u0000 "quoted" \\\\',
);
const filler = fc.oneof(
  smallText,
  fc.integer({ min: 1_000, max: 30_000 }).map((n) => 'log line of a pasted build output\n'.repeat(Math.ceil(n / 34))),
);

/** A prompt: starts as a person writes (not with an agent's template) and ends with their words. */
const prompt = fc
  .tuple(
    fc.constantFrom('Please ', 'Why does ', 'Here is what I got: ', 'fix: ', '中文 '),
    fc.array(fc.oneof(trap, filler), { minLength: 1, maxLength: 6 }),
    fc.constantFrom('\nthanks', '?', '.'),
  )
  .map(([a, parts, z]) => a + parts.join('\n') + z);
/** A text that starts like an agent's observation, for positions where it is still not one. */
const templated = fc
  .tuple(fc.constantFrom('<returncode>0</returncode>\n<output>\n', 'OBSERVATION:\n', 'Observation: '), filler)
  .map(([head, body]) => (head.startsWith('<returncode>') ? `${head}${body}</output>` : head + body));

const actionReply = (cmd: string) => `THOUGHT: look.\n\n\`\`\`bash\n${cmd}\n\`\`\``;
const observation = (n: number) => `<returncode>0</returncode>\n<output>\n${'real command output line\n'.repeat(n)}</output>`;

type Turn = { role: 'user' | 'assistant'; text: string; prompt?: boolean };

/** A conversation where every prompt is in a place where it is not an observation. */
const conversationArb = fc
  .array(
    fc.record({
      kind: fc.constantFrom('after-action', 'after-chat', 'observation'),
      prompt,
      templated,
      big: fc.integer({ min: 10, max: 2_000 }),
    }),
    { minLength: 1, maxLength: 5 },
  )
  .chain((turns) => fc.tuple(fc.oneof(prompt, templated), fc.constant(turns)))
  .map(([first, turns]) => {
    const out: Turn[] = [{ role: 'user', text: first, prompt: true }];
    for (const t of turns) {
      if (t.kind === 'observation') {
        out.push({ role: 'assistant', text: actionReply('cat big.log') }, { role: 'user', text: observation(t.big) });
      } else if (t.kind === 'after-action') {
        // after an action, only a prompt that does not start (or end) like a template
        out.push({ role: 'assistant', text: actionReply('ls') }, { role: 'user', text: t.prompt, prompt: true });
      } else {
        // after a reply without an action anything goes, templates included
        out.push(
          { role: 'assistant', text: 'What should I do next? I need more details.' },
          { role: 'user', text: t.templated, prompt: true },
        );
      }
    }
    return out;
  });

function build(turns: Turn[], format: WireFormat, parts: boolean): string {
  const content = (t: Turn) => {
    if (!parts) return t.text;
    const type = format === 'openai-responses' ? (t.role === 'user' ? 'input_text' : 'output_text') : 'text';
    return [{ type, text: t.text }];
  };
  if (format === 'openai-chat')
    return JSON.stringify({
      model: 'm',
      messages: [{ role: 'system', content: 'sys' }, ...turns.map((t) => ({ role: t.role, content: content(t) }))],
    });
  if (format === 'anthropic-messages')
    return JSON.stringify({ model: 'm', system: 'sys', messages: turns.map((t) => ({ role: t.role, content: content(t) })) });
  if (format === 'gemini')
    return JSON.stringify({
      systemInstruction: { parts: [{ text: 'sys' }] },
      contents: turns.map((t) => ({ role: t.role === 'assistant' ? 'model' : 'user', parts: [{ text: t.text }] })),
    });
  return JSON.stringify({ model: 'm', input: turns.map((t) => ({ type: 'message', role: t.role, content: content(t) })) });
}

function messagesOf(text: string, format: WireFormat): unknown[] {
  const body = JSON.parse(text) as { messages?: unknown[]; input?: unknown[]; contents?: unknown[] };
  const list = (format === 'openai-responses' ? body.input : format === 'gemini' ? body.contents : body.messages)!;
  return format === 'openai-chat' ? list.slice(1) : list;
}

const configArb = fc.constantFrom<Record<string, unknown>>(
  {},
  { defaultCap: 50, previewChars: 10 },
  { defaultCap: 200, clear: { triggerTokens: 100, keep: 0, clearAtLeastTokens: 0 } },
  { defaultCap: 'unlimited', window: { enabled: true, recentTurns: 1, maxOutputChars: 20 }, budget: { enabled: true } },
);

describe("a real user's prompt is never reduced", () => {
  it('in every position and format, under every configuration, prompts come back byte for byte', () => {
    fc.assert(
      fc.property(conversationArb, fc.constantFrom(...FORMATS), fc.boolean(), configArb, (turns, format, parts, config) => {
        const text = build(turns, format, parts);
        const p = createEngine(config, { store: new MemorySink() }).project(text, format);
        const before = messagesOf(text, format),
          after = messagesOf(p.request, format);
        turns.forEach((t, i) => {
          if (t.prompt) expect(after[i]).toEqual(before[i]);
        });
        // every reduction is of an observation, never of a prompt
        for (const r of p.reductions) expect(turns[Number(r.callId.slice(4)) - (format === 'openai-chat' ? 1 : 0)]!.prompt).toBeUndefined();
        // with no observation in the conversation, the request is the request
        if (!turns.some((t) => t.text.startsWith('<returncode>') && !t.prompt)) expect(p.request).toBe(text);
      }),
      { numRuns: RUNS },
    );
  });

  it('a prompt marked by nobody stays whole even when a reader marks the observations around it', () => {
    fc.assert(
      fc.property(conversationArb, (turns) => {
        const text = build(turns, 'openai-chat', false);
        const marks = turns.flatMap((t, i) => (t.role === 'user' && !t.prompt ? [{ item: i + 1, tool: 'bash' }] : []));
        const p = createEngine({ defaultCap: 50 }, { store: new MemorySink() }).project(text, 'openai-chat', { observations: marks });
        const before = messagesOf(text, 'openai-chat'),
          after = messagesOf(p.request, 'openai-chat');
        turns.forEach((t, i) => {
          if (t.prompt) expect(after[i]).toEqual(before[i]);
        });
      }),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});
