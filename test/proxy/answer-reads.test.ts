/**
 * `spillway proxy --answer-reads` (issue 20, item 4) with the official `openai` and `@anthropic-ai/sdk`
 * clients against the fake upstream: the model's read-backs are answered from the store within the
 * client's request, the client sees only the final answer with every round's usage summed, later
 * requests keep the cached prefix, and secrets never reach the log or the disk.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../src/proxy';
import { MAX_READ_ROUNDS, READ_TOOL } from '../../src/proxy/readLoop';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';
import { defaultReply, sseOf, startFakeUpstream, type FakeUpstream, type Received, type Reply } from './fake-upstream';
import { ANTHROPIC_KEY, OPENAI_KEY, SECRETS, anthropicRequest, bigLog, chatRequest, proxyInFrontOf, responsesRequest } from './support';
import { filesUnder } from '../support/files';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-answer-reads-'));
const LOG = bigLog(1500, 'answer-reads');
/** Lines 1479–1482 of LOG, terminators included: what the scripted model reads back. */
const READ_LINES = '1479:1482';
const EXPECTED_LINES = LOG.split('\n').slice(1478, 1482).join('\n') + '\n';

let upstream: FakeUpstream;
let proxy: RunningProxy;
const logLines: string[] = [];
let openai: OpenAI;
let anthropic: Anthropic;

/** Usage of a scripted read round, per API (the final round's comes from defaultReply). */
const CHAT_READ_USAGE = { prompt_tokens: 1000, completion_tokens: 20, total_tokens: 1020, prompt_tokens_details: { cached_tokens: 0 } };
const ANTHROPIC_READ_USAGE = { input_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 2000, output_tokens: 25 };
const RESPONSES_READ_USAGE = {
  input_tokens: 2000,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 30,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 2030,
};

const bodyOf = (r: Received) => JSON.parse(r.body!.toString('utf8')) as Record<string, unknown> & { stream?: boolean };
const handleIn = (r: Received) => new RegExp(HANDLE_IN_TEXT.source).exec(r.body!.toString('utf8'))?.[0] ?? 'sw_none';

interface Call {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

const readOf = (r: Received, id = 'call_read', extra: Record<string, unknown> = {}): Call => ({
  id,
  name: READ_TOOL,
  args: { handle: handleIn(r), lines: READ_LINES, ...extra },
});

/** A model answer holding `calls`, streamed or not as the request asked, in the request's API. */
function callsReply(r: Received, calls: Call[]): Reply {
  const stream = bodyOf(r).stream === true;
  const path = r.url.split('?')[0]!;
  if (path.endsWith('/chat/completions')) {
    const toolCalls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }));
    if (!stream)
      return {
        kind: 'json',
        body: {
          id: 'chatcmpl-r',
          object: 'chat.completion',
          created: 1,
          model: 'gpt-4.1',
          choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: toolCalls }, finish_reason: 'tool_calls' }],
          usage: CHAT_READ_USAGE,
        },
      };
    const chunk = (delta: unknown, finish: string | null, usage: unknown = null) => ({
      id: 'chatcmpl-r',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'gpt-4.1',
      choices: delta === null ? [] : [{ index: 0, delta, finish_reason: finish }],
      usage,
    });
    return {
      kind: 'sse',
      chunks: [
        ...sseOf([
          { data: chunk({ role: 'assistant', content: null }, null) },
          ...calls.flatMap((c, index) => {
            const args = JSON.stringify(c.args);
            return [
              { data: chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.name, arguments: '' } }] }, null) },
              { data: chunk({ tool_calls: [{ index, function: { arguments: args.slice(0, 10) } }] }, null) },
              { data: chunk({ tool_calls: [{ index, function: { arguments: args.slice(10) } }] }, null) },
            ];
          }),
          { data: chunk({}, 'tool_calls') },
          { data: chunk(null, null, CHAT_READ_USAGE) },
        ]),
        'data: [DONE]\n\n',
      ],
    };
  }
  if (path.endsWith('/responses')) {
    const items = calls.map((c, i) => ({
      id: `fc_${i}`,
      type: 'function_call',
      status: 'completed',
      call_id: c.id,
      name: c.name,
      arguments: JSON.stringify(c.args),
    }));
    const response = { id: 'resp_r', object: 'response', created_at: 1, status: 'completed', model: 'gpt-5-codex', output: items };
    if (!stream) return { kind: 'json', body: { ...response, usage: RESPONSES_READ_USAGE } };
    let n = 0;
    return {
      kind: 'sse',
      chunks: sseOf([
        { event: 'response.created', data: { type: 'response.created', sequence_number: n++, response: { ...response, output: [] } } },
        ...items.flatMap((item, i) => [
          {
            event: 'response.output_item.added',
            data: { type: 'response.output_item.added', sequence_number: n++, output_index: i, item: { ...item, arguments: '' } },
          },
          {
            event: 'response.function_call_arguments.delta',
            data: {
              type: 'response.function_call_arguments.delta',
              sequence_number: n++,
              output_index: i,
              item_id: item.id,
              delta: item.arguments,
            },
          },
          { event: 'response.output_item.done', data: { type: 'response.output_item.done', sequence_number: n++, output_index: i, item } },
        ]),
        {
          event: 'response.completed',
          data: { type: 'response.completed', sequence_number: n++, response: { ...response, usage: RESPONSES_READ_USAGE } },
        },
      ]),
    };
  }
  type Block = { type: string; text?: string; id?: string; name?: string; input?: unknown };
  const content: Block[] = [
    { type: 'text', text: 'Reading the log.' },
    ...calls.map((c) => ({ type: 'tool_use', id: c.id.replace('call_', 'toolu_'), name: c.name, input: c.args })),
  ];
  const message = {
    id: 'msg_r',
    type: 'message',
    role: 'assistant',
    model: 'claude-opus-4-5',
    content,
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: ANTHROPIC_READ_USAGE,
  };
  if (!stream) return { kind: 'json', body: message };
  return {
    kind: 'sse',
    chunks: sseOf([
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: { ...message, content: [], stop_reason: null, usage: { ...ANTHROPIC_READ_USAGE, output_tokens: 1 } },
        },
      },
      ...content.flatMap((b, index): { event: string; data: unknown }[] =>
        b.type === 'text'
          ? [
              { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } },
              { event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: b.text } } },
              { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
            ]
          : [
              { event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { ...b, input: {} } } },
              {
                event: 'content_block_delta',
                data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) } },
              },
              { event: 'content_block_stop', data: { type: 'content_block_stop', index } },
            ],
      ),
      {
        event: 'message_delta',
        data: { type: 'message_delta', delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 25 } },
      },
      { event: 'message_stop', data: { type: 'message_stop' } },
    ]),
  };
}

/** Answers the n-th upstream request of a test with the n-th step (the last step repeats). */
function script(...steps: ((r: Received) => Reply)[]): void {
  const start = upstream.received.length;
  upstream.respond = (r) => steps[Math.min(upstream.received.length - 1 - start, steps.length - 1)]!(r);
}

const askToRead = (r: Received) => callsReply(r, [readOf(r)]);
const since = (n: number) => upstream.received.slice(n);

/** The text of the tool result a later round sent upstream for the read call, in any API. */
function readResultSent(r: Received): { text: string; isError: boolean } {
  const b = bodyOf(r);
  if (Array.isArray(b.messages)) {
    const last = b.messages[b.messages.length - 1] as Record<string, unknown>;
    if (last.role === 'tool') return { text: String(last.content), isError: String(last.content).startsWith('Error:') };
    const block = (last.content as Record<string, unknown>[]).find((c) => c.type === 'tool_result')!;
    return { text: String(block.content), isError: block.is_error === true };
  }
  const out = (b.input as Record<string, unknown>[]).filter((i) => i.type === 'function_call_output').pop()!;
  return { text: String(out.output), isError: String(out.output).startsWith('Error:') };
}

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startProxy(proxyInFrontOf(upstream.url, root, logLines, { answerReads: true }));
  openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${proxy.url}/v1`, maxRetries: 0, timeout: 20_000 });
  anthropic = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: proxy.url, maxRetries: 0, timeout: 20_000 });
});

beforeEach(() => {
  upstream.respond = defaultReply;
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

type ChatParams = OpenAI.ChatCompletionCreateParamsNonStreaming;

describe('the proxy answering read-backs, OpenAI Chat Completions', () => {
  it('answers a read-back from the store and hands the client only the final answer', async () => {
    const n = upstream.received.length;
    script(askToRead, defaultReply);
    const res = await openai.chat.completions.create(chatRequest(LOG) as unknown as ChatParams);
    expect(res.choices[0]!.message.content).toBe('All tests pass.');
    expect(res.choices[0]!.message.tool_calls ?? []).toEqual([]);
    const [first, second] = since(n);
    expect(since(n)).toHaveLength(2);
    expect((bodyOf(first!).tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual(['bash', READ_TOOL]);
    const sent = readResultSent(second!);
    expect(sent.isError).toBe(false);
    expect(sent.text).toContain(EXPECTED_LINES);
  });

  it('sums the usage of every round into the answer the client gets', async () => {
    script(askToRead, defaultReply);
    const res = await openai.chat.completions.create(chatRequest(LOG) as unknown as ChatParams);
    expect(res.usage).toMatchObject({
      prompt_tokens: 2200,
      completion_tokens: 27,
      total_tokens: 2227,
      prompt_tokens_details: { cached_tokens: 1024 },
    });
  });

  it('streams only the final answer, its usage summed', async () => {
    script(askToRead, defaultReply);
    const stream = await openai.chat.completions.create({
      ...(chatRequest(LOG) as unknown as ChatParams),
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let calls = 0;
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      calls += chunk.choices[0]?.delta.tool_calls?.length ?? 0;
      usage = chunk.usage ?? usage;
    }
    expect([text, calls]).toEqual(['All tests pass.', 0]);
    expect(usage).toMatchObject({ prompt_tokens: 2200, completion_tokens: 27 });
  });

  it('answers an unreadable handle as a tool error the model sees, and the request still succeeds', async () => {
    const n = upstream.received.length;
    script((r) => callsReply(r, [{ id: 'call_read', name: READ_TOOL, args: { handle: 'sw_000000000000000000000000' } }]), defaultReply);
    const res = await openai.chat.completions.create(chatRequest(LOG) as unknown as ChatParams);
    expect(res.choices[0]!.message.content).toBe('All tests pass.');
    const sent = readResultSent(since(n)[1]!);
    expect(sent.isError).toBe(true);
    expect(sent.text).toMatch(/spillway_read_output could not read "sw_000000000000000000000000": .*sw_000000000000000000000000/);
  });

  it('stops after the bounded number of rounds and hands the client the last answer as it is', async () => {
    const n = upstream.received.length;
    script(askToRead);
    const res = await openai.chat.completions.create(chatRequest(LOG) as unknown as ChatParams);
    expect(since(n)).toHaveLength(MAX_READ_ROUNDS + 1);
    expect(res.choices[0]!.message.tool_calls?.map((c) => (c as { function: { name: string } }).function.name)).toEqual([READ_TOOL]);
  });

  it('hands the agent only its own calls when the model mixes them with a read-back, streaming', async () => {
    const n = upstream.received.length;
    script((r) => callsReply(r, [readOf(r), { id: 'call_ls', name: 'bash', args: { command: 'ls' } }]));
    const stream = await openai.chat.completions.create({ ...(chatRequest(LOG) as unknown as ChatParams), stream: true });
    const calls = new Map<number, { id?: string; name: string; args: string }>();
    for await (const chunk of stream)
      for (const c of chunk.choices[0]?.delta.tool_calls ?? []) {
        const got = calls.get(c.index) ?? { name: '', args: '' };
        if (c.id) got.id = c.id;
        got.name += c.function?.name ?? '';
        got.args += c.function?.arguments ?? '';
        calls.set(c.index, got);
      }
    expect([...calls.entries()]).toEqual([[0, { id: 'call_ls', name: 'bash', args: '{"command":"ls"}' }]]);
    expect(since(n)).toHaveLength(1);
  });

  it('forwards a request whose tools already hold the read tool as it is, and hands the calls to the client', async () => {
    const n = upstream.received.length;
    const own = { type: 'function', function: { name: READ_TOOL, description: 'mine', parameters: { type: 'object', properties: {} } } };
    const req = chatRequest(LOG) as { tools: unknown[] };
    script(askToRead, defaultReply);
    const res = await openai.chat.completions.create({ ...req, tools: [...req.tools, own] } as unknown as ChatParams);
    expect(since(n)).toHaveLength(1);
    expect((bodyOf(since(n)[0]!).tools as unknown[]).length).toBe(2);
    expect(res.choices[0]!.message.tool_calls).toHaveLength(1);
  });

  it('fails open: when a read round cannot reach the upstream, the original request goes as plain forwarding would', async () => {
    const n = upstream.received.length;
    const before = logLines.length;
    script(() => ({ kind: 'reset', chunks: [] }), defaultReply);
    const res = await openai.chat.completions.create(chatRequest(LOG) as unknown as ChatParams);
    expect(res.choices[0]!.message.content).toBe('All tests pass.');
    const retried = bodyOf(since(n)[1]!);
    expect(retried).toEqual(chatRequest(LOG));
    expect(logLines.slice(before).join('\n')).toMatch(/answer-reads failed .*forwarding the original request/);
  });

  it('reads an answer the upstream compressed although asked not to, and hands it on decoded', async () => {
    const n = upstream.received.length;
    const gzipped = (reply: Reply): Reply =>
      reply.kind === 'json' ? { kind: 'raw', body: gzipSync(JSON.stringify(reply.body)), headers: { 'content-encoding': 'gzip' } } : reply;
    script(
      (r) => gzipped(askToRead(r)),
      (r) => gzipped(defaultReply(r)),
    );
    const res = await openai.chat.completions.create(chatRequest(LOG) as unknown as ChatParams);
    expect(res.choices[0]!.message.content).toBe('All tests pass.');
    expect(since(n).map((r) => r.headers['accept-encoding'])).toEqual(['identity', 'identity']);
  });

  it('adds nothing in observe mode: the request goes byte for byte', async () => {
    const n = upstream.received.length;
    proxy.setMode('observe');
    try {
      await openai.chat.completions.create(chatRequest(LOG) as unknown as ChatParams);
    } finally {
      proxy.setMode('project');
    }
    expect(since(n)).toHaveLength(1);
    expect(bodyOf(since(n)[0]!)).toEqual(chatRequest(LOG));
  });

  it("hands the client the upstream's error from a later round unchanged", async () => {
    script(askToRead, () => ({ kind: 'json', status: 429, body: { error: { message: 'slow down', type: 'rate_limit_error' } } }));
    await expect(openai.chat.completions.create(chatRequest(LOG) as unknown as ChatParams)).rejects.toMatchObject({ status: 429 });
  });
});

describe('the proxy answering read-backs, OpenAI Responses', () => {
  it('answers a read-back in a streamed response and streams only the final answer, usage summed', async () => {
    const n = upstream.received.length;
    script(askToRead, defaultReply);
    const stream = await openai.responses.create({
      ...(responsesRequest(LOG) as unknown as OpenAI.Responses.ResponseCreateParamsStreaming),
      stream: true,
    });
    let text = '';
    let completed: OpenAI.Responses.Response | undefined;
    for await (const e of stream) {
      if (e.type === 'response.output_text.delta') text += e.delta;
      if (e.type === 'response.completed') completed = e.response;
    }
    expect(text).toBe('Fixed it.');
    expect(completed?.usage).toMatchObject({ input_tokens: 4300, output_tokens: 39, input_tokens_details: { cached_tokens: 2048 } });
    const sent = readResultSent(since(n)[1]!);
    expect(sent.text).toContain(EXPECTED_LINES);
    // the model's own function_call item goes back verbatim before its output
    const input = bodyOf(since(n)[1]!).input as Record<string, unknown>[];
    expect(input.at(-2)).toMatchObject({ type: 'function_call', id: 'fc_0', call_id: 'call_read', name: READ_TOOL });
  });
  it('answers a read-back in a JSON response, sending the function_call item back verbatim, usage summed', async () => {
    const n = upstream.received.length;
    script(askToRead, defaultReply);
    const res = await openai.responses.create(responsesRequest(LOG) as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming);
    expect(res.output_text).toBe('Fixed it.');
    expect(res.usage).toMatchObject({ input_tokens: 4300, output_tokens: 39 });
    const input = bodyOf(since(n)[1]!).input as Record<string, unknown>[];
    expect(input.at(-2)).toEqual({
      id: 'fc_0',
      type: 'function_call',
      status: 'completed',
      call_id: 'call_read',
      name: READ_TOOL,
      arguments: expect.any(String),
    });
    expect(readResultSent(since(n)[1]!).text).toContain(EXPECTED_LINES);
  });
});

describe('the proxy answering read-backs, Anthropic Messages', () => {
  it('answers a read-back and returns the final message with the usage of both rounds', async () => {
    const n = upstream.received.length;
    script(askToRead, defaultReply);
    const msg = await anthropic.messages.create(anthropicRequest(LOG) as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(msg.content).toEqual([{ type: 'text', text: 'Done.' }]);
    expect(msg.usage).toMatchObject({
      input_tokens: 70,
      cache_read_input_tokens: 5000,
      cache_creation_input_tokens: 200,
      output_tokens: 36,
    });
    const sent = readResultSent(since(n)[1]!);
    expect([sent.isError, sent.text.includes(EXPECTED_LINES)]).toEqual([false, true]);
  });

  it('streams only the final message, its usage summed', async () => {
    script(askToRead, defaultReply);
    const stream = anthropic.messages.stream(anthropicRequest(LOG) as unknown as Anthropic.MessageCreateParamsNonStreaming);
    const msg = await stream.finalMessage();
    expect(msg.content).toEqual([{ type: 'text', text: 'Done.' }]);
    expect(msg.usage).toMatchObject({ input_tokens: 70, cache_read_input_tokens: 5000, output_tokens: 36 });
  });

  it('marks an unreadable handle as is_error in the tool result it sends the model', async () => {
    const n = upstream.received.length;
    script((r) => callsReply(r, [readOf(r, 'call_read', { lines: 'ten' })]), defaultReply);
    await anthropic.messages.create(anthropicRequest(LOG) as unknown as Anthropic.MessageCreateParamsNonStreaming);
    const sent = readResultSent(since(n)[1]!);
    expect(sent.isError).toBe(true);
    expect(sent.text).toMatch(/lines "ten" is not a line range/);
  });

  it('hands the agent only its own tool_use blocks, renumbered, when the model mixes them with a read-back, streaming', async () => {
    script((r) => callsReply(r, [readOf(r), { id: 'call_ls', name: 'Bash', args: { command: 'ls' } }]));
    const msg = await anthropic.messages
      .stream(anthropicRequest(LOG) as unknown as Anthropic.MessageCreateParamsNonStreaming)
      .finalMessage();
    expect(msg.content).toEqual([
      { type: 'text', text: 'Reading the log.' },
      { type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls' } },
    ]);
  });
});

describe('markers with answer-reads', () => {
  it('name the read tool the proxy offers, so an agent with no shell is told its way back', async () => {
    const n = upstream.received.length;
    await openai.chat.completions.create(chatRequest(LOG, {}, 'Markers name the tool.') as unknown as ChatParams);
    const sent = (bodyOf(since(n)[0]!).messages as { tool_call_id?: string; content: string }[]).find(
      (m) => m.tool_call_id === 'call_tests',
    )!;
    expect(sent.content).toMatch(HANDLE_IN_TEXT);
    expect(sent.content).toContain(READ_TOOL);
  });
});

describe('counting tokens with answer-reads', () => {
  it('counts the request with the read tool in it, as the model call will be sent', async () => {
    const n = upstream.received.length;
    const count = await anthropic.messages.countTokens(anthropicRequest(LOG) as unknown as Anthropic.MessageCountTokensParams);
    expect(count.input_tokens).toBe(1234);
    const sent = bodyOf(since(n)[0]!) as { tools: { name: string }[] };
    expect(sent.tools.map((t) => t.name)).toEqual(['Bash', READ_TOOL]);
  });
});

describe('later requests after answered read-backs', () => {
  it('keep the cached prefix: the same tools, every earlier item byte for byte, and none of the read rounds', async () => {
    const n = upstream.received.length;
    script(askToRead, defaultReply);
    const first = chatRequest(LOG, {}, 'Keep the prefix stable.') as { messages: unknown[] };
    const res = await openai.chat.completions.create(first as unknown as ChatParams);
    const [round1, round2] = since(n);
    expect(bodyOf(round2!).messages).toHaveLength(first.messages.length + 2);

    // the agent's next request: its own history, the final answer, and a new message
    const next = { ...first, messages: [...first.messages, res.choices[0]!.message, { role: 'user', content: 'Now fix it.' }] };
    await openai.chat.completions.create(next as unknown as ChatParams);
    const later = bodyOf(upstream.received.at(-1)!);
    const earlier = bodyOf(round1!);
    expect(JSON.stringify(later.tools)).toBe(JSON.stringify(earlier.tools));
    const prefix = (earlier.messages as unknown[]).length;
    expect(JSON.stringify((later.messages as unknown[]).slice(0, prefix))).toBe(JSON.stringify(earlier.messages));
    expect(JSON.stringify(later.messages)).not.toContain('call_read');
  });
});

describe('secrets', () => {
  it('reach the upstream on every round and never the log or the disk', async () => {
    const n = upstream.received.length;
    script(askToRead, defaultReply);
    await anthropic.messages.create(anthropicRequest(LOG) as unknown as Anthropic.MessageCreateParamsNonStreaming);
    // this SDK version sends the key as a bearer token; older ones as x-api-key
    for (const r of since(n)) expect(r.headers['x-api-key'] ?? r.headers.authorization).toContain(ANTHROPIC_KEY);
    expect(since(n)).toHaveLength(2);
    await proxy.close();
    const written = [logLines.join('\n'), ...filesUnder(root).map((f) => fs.readFileSync(f, 'utf8'))];
    for (const secret of SECRETS) expect(written.filter((t) => t.includes(secret))).toEqual([]);
    expect(logLines.join('\n')).toMatch(/answered 1 spillway_read_output call\(s\) from the store/);
  });
});
