/**
 * The read-back loop shared by the proxy (--answer-reads) and the Copilot chat provider
 * (src/proxy/readLoop.ts), with a scripted model and an in-memory store.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { readRequest, resultText } from '../../src/engine';
import { MemoryStore } from '../../src/store';
import {
  answerRead,
  appendReadRound,
  MAX_READ_ROUNDS,
  onlyReads,
  READ_TOOL,
  runReadLoop,
  withReadTool,
  type RoundOutput,
} from '../../src/proxy/readLoop';
import { handleFor } from '../../src/engine/handle';

const TEXT = Array.from({ length: 50 }, (_, i) => `line ${i + 1}`).join('\n');
const store = new MemoryStore();
const HANDLE = handleFor(TEXT);
store.put(HANDLE, TEXT, { tool: 'bash', callId: 'c1', stage: 'offload', chars: TEXT.length, bytes: TEXT.length, lines: 50, tokens: 100 });
const read = store.read.bind(store);
const readCall = (input: unknown, callId = 'r1') => ({ callId, name: READ_TOOL, input });

describe('withReadTool', () => {
  it('appends the read tool last, in each format, leaving the other tools as they were', () => {
    const chat = withReadTool('openai-chat', { tools: [{ type: 'function', function: { name: 'bash' } }] })!;
    expect((chat.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(['bash', READ_TOOL]);
    expect((withReadTool('openai-responses', { input: [] })!.tools as { name: string }[]).map((t) => t.name)).toEqual([READ_TOOL]);
    const anthropic = withReadTool('anthropic-messages', { tools: [{ name: 'Bash' }] })!;
    expect((anthropic.tools as { name: string; input_schema: unknown }[])[1]).toMatchObject({
      name: READ_TOOL,
      input_schema: { type: 'object' },
    });
  });

  it('adds nothing when the body already offers a tool of that name', () => {
    expect(withReadTool('anthropic-messages', { tools: [{ name: READ_TOOL }] })).toBeUndefined();
  });

  it('adds nothing to a Chat body that declares legacy functions, which may not be mixed with tools', () => {
    expect(withReadTool('openai-chat', { functions: [{ name: 'f' }] })).toBeUndefined();
  });

  it('adds the same bytes every time, so the tool list stays cache-stable across requests', () => {
    const body = { tools: [{ name: 'Bash' }] };
    expect(JSON.stringify(withReadTool('anthropic-messages', body))).toBe(JSON.stringify(withReadTool('anthropic-messages', body)));
  });
});

describe('onlyReads', () => {
  it('holds for a round of read calls only, not for none or a mix', () => {
    expect(onlyReads([readCall({})])).toBe(true);
    expect(onlyReads([])).toBe(false);
    expect(onlyReads([readCall({}), { callId: 'b', name: 'bash', input: {} }])).toBe(false);
  });
});

describe('answerRead', () => {
  it('answers with the part asked for, byte for byte, under a header naming the handle and the part', () => {
    const a = answerRead(readCall({ handle: HANDLE, lines: '3:4' }), read);
    expect(a).toMatchObject({ callId: 'r1', isError: false });
    expect(a.content).toBe(`[spillway ${HANDLE}: lines 3–4 of 50 of 50 lines, ${TEXT.length} chars]\nline 3\nline 4\n`);
  });

  it('takes ignore_case as well as ignoreCase for grep', () => {
    expect(answerRead(readCall({ handle: HANDLE, grep: 'LINE 7$', ignore_case: true }), read).content).toContain('7:line 7');
  });

  it('answers an unknown handle, a bad option or broken arguments as a tool error saying why', () => {
    expect(answerRead(readCall({ handle: 'sw_000000000000000000000000' }), read)).toMatchObject({ isError: true });
    expect(answerRead(readCall({ handle: HANDLE, grep: '(' }), read).content).toMatch(/not a valid JavaScript regular expression/);
    expect(answerRead(readCall({ lines: '1:2' }), read).content).toMatch(/handle is missing/);
    expect(answerRead(readCall({ _unparsedArguments: '{"handle":' }), read).content).toMatch(/not valid JSON/);
  });

  it('refuses a handle that tries to leave the store, as a tool error', () => {
    const a = answerRead(readCall({ handle: '../../etc/passwd' }), read);
    expect(a.isError).toBe(true);
    expect(a.content).toMatch(/^spillway_read_output could not read "..\/..\/etc\/passwd": /);
  });
});

describe('appendReadRound', () => {
  it.each(['openai-chat', 'openai-responses', 'anthropic-messages'] as const)(
    '%s: the round reads back as the model call and its tool result, after the last item',
    (format) => {
      const body = format === 'openai-responses' ? { input: 'hi' } : { messages: [{ role: 'user', content: 'hi' }] };
      const next = appendReadRound(format, body, { text: '', calls: [readCall({ handle: HANDLE })] }, [
        { callId: 'r1', content: 'the part', isError: false },
      ]);
      const req = readRequest(JSON.stringify(next), format);
      const last = req.results.at(-1)!;
      expect([last.callId, last.tool, resultText(req, last)]).toEqual(['r1', READ_TOOL, 'the part']);
    },
  );

  it('leaves every item before the round as it was, byte for byte, whatever the body holds (the cached prefix)', () => {
    const item = fc.jsonValue();
    fc.assert(
      fc.property(fc.constantFrom('openai-chat', 'openai-responses', 'anthropic-messages' as const), fc.array(item), (format, items) => {
        const key = format === 'openai-responses' ? 'input' : 'messages';
        const next = appendReadRound(format, { [key]: items, tools: [] }, { text: 't', calls: [readCall({ handle: HANDLE })] }, [
          { callId: 'r1', content: 'x', isError: false },
        ]);
        const after = next[key] as unknown[];
        expect(JSON.stringify(after.slice(0, items.length))).toBe(JSON.stringify(items));
        expect(after.length).toBeGreaterThan(items.length);
      }),
    );
  });

  it('sends the model output items back verbatim when it has them', () => {
    const thinking = { type: 'thinking', thinking: 'hm', signature: 'sig' };
    const next = appendReadRound('anthropic-messages', { messages: [] }, { text: '', calls: [], items: [thinking] }, []);
    expect((next.messages as { content: unknown[] }[])[0]!.content).toEqual([thinking]);
  });
});

describe('runReadLoop', () => {
  const final: RoundOutput = { text: 'done', calls: [] };

  it('answers rounds of read-backs and returns when the model answers otherwise', async () => {
    const sent: unknown[] = [];
    const rounds = await runReadLoop({
      format: 'openai-chat',
      body: { messages: [] },
      read,
      send: async (body, round) => {
        sent.push(body);
        return round < 2 ? { text: '', calls: [readCall({ handle: HANDLE, lines: String(round + 1) }, `r${round}`)] } : final;
      },
    });
    expect(rounds.map((r) => r.text)).toEqual(['', '', 'done']);
    expect((sent[2] as { messages: unknown[] }).messages).toHaveLength(4);
  });

  it('stops after maxRounds answered rounds, telling the last send it will not be answered', async () => {
    const may: boolean[] = [];
    const rounds = await runReadLoop({
      format: 'anthropic-messages',
      body: { messages: [] },
      read,
      send: async (_b, _r, mayAnswer) => {
        may.push(mayAnswer);
        return { text: '', calls: [readCall({ handle: HANDLE })] };
      },
    });
    expect(rounds).toHaveLength(MAX_READ_ROUNDS + 1);
    expect(may.filter((m) => !m)).toHaveLength(1);
    expect(may.at(-1)).toBe(false);
  });

  it('never answers with maxRounds 0 (a caller that answers the tool itself)', async () => {
    const rounds = await runReadLoop({
      format: 'openai-responses',
      body: { input: [] },
      read,
      maxRounds: 0,
      send: async () => ({ text: '', calls: [readCall({ handle: HANDLE })] }),
    });
    expect(rounds).toHaveLength(1);
  });
});
