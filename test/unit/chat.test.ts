/**
 * The Copilot chat provider's pure modules: the setting's models, message conversion per wire
 * format (checked by reading the bodies back with the engine's own readers and projecting them with
 * a real fixture's tool output), and stream decoding per API.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { createEngine, MemorySink, parseConfig, readRequest, resultText } from '../../src/engine';
import { conversationKey, toWire, WIRE_FORMAT, type ChatMessage } from '../../src/extension/chat/convert';
import { endpointUrl, modelInformation, parseModels, CHAT_APIS } from '../../src/extension/chat/models';
import { SseParser, StreamDecoder } from '../../src/proxy/streams';
import { appendReadRound } from '../../src/proxy/readLoop';
import { authHeaders, redact } from '../../src/extension/chat/secrets';
import { biggestClaudeCodeToolResult } from '../support/fixtures';

const BIG = biggestClaudeCodeToolResult();

function conversation(big = BIG): ChatMessage[] {
  return [
    { role: 'system', parts: [{ kind: 'text', text: 'You are a coding agent.' }] },
    { role: 'user', parts: [{ kind: 'text', text: 'Look at the repository.' }] },
    {
      role: 'assistant',
      parts: [
        { kind: 'text', text: 'Listing it.' },
        { kind: 'toolCall', callId: 'call_1', name: 'run_in_terminal', input: { command: 'ls -R' } },
      ],
    },
    { role: 'user', parts: [{ kind: 'toolResult', callId: 'call_1', content: big }] },
    { role: 'assistant', parts: [{ kind: 'toolCall', callId: 'call_2', name: 'read_file', input: { path: 'a.ts' } }] },
    {
      role: 'user',
      parts: [
        { kind: 'toolResult', callId: 'call_2', content: 'short' },
        { kind: 'text', text: 'and now?' },
        { kind: 'data', mimeType: 'image/png', base64: 'iVBORw0KGgo=' },
      ],
    },
  ];
}

const OPTIONS = {
  model: 'm',
  maxOutputTokens: 1000,
  tools: [{ name: 'read_file', description: 'reads', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } }],
};

describe('spillway.languageModels', () => {
  it('keeps good entries and names each bad one without throwing', () => {
    const r = parseModels([
      { name: 'gpt-5', api: 'openai-responses', baseUrl: 'https://api.openai.com/v1', model: 'gpt-5', maxInputTokens: 400000 },
      { name: 'broken', api: 'grpc', baseUrl: 'https://x', model: 'y' },
      { name: 'no url', api: 'anthropic', baseUrl: 'not a url', model: 'claude' },
      { name: 'gpt-5', api: 'openai-responses', baseUrl: 'https://api.openai.com/v1', model: 'gpt-5', maxInputTokens: 400000 },
      { api: 'openai-chat', baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen' },
    ]);
    expect(r.models.map((m) => m.name)).toEqual(['gpt-5']);
    expect(r.problems).toHaveLength(4);
    expect(r.problems[0]).toMatch(/\[1\] \("broken"\): api/);
    expect(r.problems[1]).toMatch(/\[2\] \("no url"\): baseUrl/);
    expect(r.problems[2]).toMatch(/repeats/);
    expect(r.problems[3]).toMatch(/\[4\] \(#5\): name/);
    expect(parseModels({}).problems[0]).toMatch(/must be an array/);
    expect(parseModels(undefined)).toEqual({ models: [], problems: [] });
  });

  it('shows a model as "NAME · Spillway" with its context size and a tooltip about reduction', () => {
    const [m] = parseModels([
      { name: 'gpt-5', api: 'openai-responses', baseUrl: 'https://api.openai.com/v1', model: 'gpt-5', maxInputTokens: 400000 },
    ]).models;
    const info = modelInformation(m!);
    expect(info.name).toBe('gpt-5 · Spillway');
    expect(info.maxInputTokens).toBe(400000);
    expect(info.tooltip).toMatch(/reduced.*stored/);
    expect(info.capabilities.toolCalling).toBe(true);
    expect(info.id).toMatch(/^gpt-5-[0-9a-f]{8}$/);
  });

  it("builds each API's endpoint URL from a base URL", () => {
    expect(endpointUrl('openai-responses', 'https://api.openai.com/v1/')).toBe('https://api.openai.com/v1/responses');
    expect(endpointUrl('openai-chat', 'http://127.0.0.1:11434/v1')).toBe('http://127.0.0.1:11434/v1/chat/completions');
    expect(endpointUrl('anthropic', 'https://api.anthropic.com')).toBe('https://api.anthropic.com/v1/messages');
    expect(endpointUrl('anthropic', 'https://gw.example/v1')).toBe('https://gw.example/v1/messages');
    expect(endpointUrl('openai-chat', 'https://gw.example/v1/chat/completions')).toBe('https://gw.example/v1/chat/completions');
  });

  it('sends a key only when there is one, and redacts it from texts', () => {
    expect(authHeaders('openai-chat', undefined)).toEqual({});
    expect(authHeaders('openai-responses', 'sk-1')).toEqual({ authorization: 'Bearer sk-1' });
    expect(authHeaders('anthropic', 'sk-2')).toEqual({ 'anthropic-version': '2023-06-01', 'x-api-key': 'sk-2' });
    expect(redact('bad key sk-secret-123 given', 'sk-secret-123')).toBe('bad key [key] given');
  });
});

describe('message conversion', () => {
  it.each(CHAT_APIS)('%s: the engine reads every tool result back with its tool name and exact text', (api) => {
    const body = toWire(api, conversation(), OPTIONS);
    const req = readRequest(JSON.stringify(body), WIRE_FORMAT[api]);
    expect(req.results.map((r) => [r.callId, r.tool])).toEqual([
      ['call_1', 'run_in_terminal'],
      ['call_2', 'read_file'],
    ]);
    expect(resultText(req, req.results[0]!)).toBe(BIG);
    expect(body.stream).toBe(true);
  });

  it.each(CHAT_APIS)('%s: the engine projects the real big output to a marker whose handle reads back exact', (api) => {
    const store = new MemorySink();
    const engine = createEngine(parseConfig({ defaultCap: 2000 }).config, { store });
    const p = engine.project(JSON.stringify(toWire(api, conversation(), OPTIONS)), WIRE_FORMAT[api], { session: 's' });
    expect(p.reductions).toHaveLength(1);
    const handle = p.reductions[0]!.handle;
    expect(store.get(handle)).toBe(BIG);
    const text = typeof p.request === 'string' ? p.request : JSON.stringify(p.request);
    expect(text).toContain(handle);
    expect(text.length).toBeLessThan(JSON.stringify(toWire(api, conversation(), OPTIONS)).length - 5000);
  });

  it('openai-chat: tool messages, assistant tool_calls, images as image_url, tools as functions', () => {
    const b = toWire('openai-chat', conversation('x'), OPTIONS) as { messages: Record<string, unknown>[]; tools: unknown[] };
    expect(b.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'user']);
    expect(b.messages[2]).toEqual({
      role: 'assistant',
      content: 'Listing it.',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'run_in_terminal', arguments: '{"command":"ls -R"}' } }],
    });
    expect(b.messages[6]!.content).toEqual([
      { type: 'text', text: 'and now?' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
    ]);
    expect(b.tools).toEqual([
      { type: 'function', function: { name: 'read_file', description: 'reads', parameters: OPTIONS.tools[0]!.inputSchema } },
    ]);
  });

  it('openai-responses: instructions, function_call / function_call_output items, input_image', () => {
    const b = toWire('openai-responses', conversation('x'), OPTIONS) as { instructions: string; input: Record<string, unknown>[] };
    expect(b.instructions).toBe('You are a coding agent.');
    expect(b.input.map((i) => i.type ?? i.role)).toEqual([
      'user',
      'assistant',
      'function_call',
      'function_call_output',
      'function_call',
      'function_call_output',
      'user',
    ]);
    expect(b.input[6]).toEqual({
      role: 'user',
      content: [
        { type: 'input_text', text: 'and now?' },
        { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
      ],
    });
  });

  it('anthropic: alternating roles, tool_result first in its user message, system apart', () => {
    const b = toWire('anthropic', conversation('x'), OPTIONS) as {
      system: string;
      messages: { role: string; content: { type: string }[] }[];
    };
    expect(b.system).toBe('You are a coding agent.');
    expect(b.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(b.messages[4]!.content.map((c) => c.type)).toEqual(['tool_result', 'text', 'image']);
  });

  it.each(CHAT_APIS)('%s: a read-back round appended to a body reads back as a tool result', (api) => {
    const body = toWire(api, conversation('x'), OPTIONS);
    const next = appendReadRound(
      WIRE_FORMAT[api],
      body,
      { text: 'reading', calls: [{ callId: 'r1', name: 'spillway_read_output', input: { handle: 'sw_0123456789abcdef01234567' } }] },
      [{ callId: 'r1', content: 'the stored part', isError: false }],
    );
    const req = readRequest(JSON.stringify(next), WIRE_FORMAT[api]);
    const last = req.results[req.results.length - 1]!;
    expect([last.callId, last.tool, resultText(req, last)]).toEqual(['r1', 'spillway_read_output', 'the stored part']);
  });

  it('names a conversation by its first user message', () => {
    const h = (s: string) => `h(${s})`;
    expect(conversationKey(conversation(), h)).toBe('h(Look at the repository.)');
    expect(conversationKey([...conversation(), { role: 'user', parts: [{ kind: 'text', text: 'more' }] }], h)).toBe(
      'h(Look at the repository.)',
    );
  });
});

function decode(api: (typeof CHAT_APIS)[number], sse: string, chunk = 7) {
  const d = new StreamDecoder(api);
  const events = [];
  // split at odd places: events must not depend on chunk boundaries
  for (let i = 0; i < sse.length; i += chunk) events.push(...d.push(sse.slice(i, i + chunk)));
  events.push(...d.end());
  return { events, usage: d.usage };
}

const sse = (events: unknown[], named = false) =>
  events.map((e) => `${named ? `event: ${(e as { type: string }).type}\n` : ''}data: ${JSON.stringify(e)}\n\n`).join('');

describe('stream decoding', () => {
  it('splits server-sent events across chunks and CRLF lines', () => {
    const p = new SseParser();
    expect(p.push('event: a\r\ndata: {"x"')).toEqual([]);
    expect(p.push(':1}\r\n\r\n: comment\n\ndata: 2\n')).toEqual([{ event: 'a', data: '{"x":1}' }]);
    expect(p.end()).toEqual([{ event: '', data: '2' }]);
  });

  it('openai-chat: text, tool calls assembled from pieces, usage with cached tokens', () => {
    const s =
      sse([
        { choices: [{ delta: { role: 'assistant', content: 'Hel' } }] },
        { choices: [{ delta: { content: 'lo' } }] },
        { choices: [{ delta: { tool_calls: [{ index: 0, id: 'c1', function: { name: 'read_file', arguments: '{"pa' } }] } }] },
        {
          choices: [
            {
              delta: {
                tool_calls: [
                  { index: 0, function: { arguments: 'th":"a"}' } },
                  { index: 1, id: 'c2', function: { name: 'ls', arguments: '{}' } },
                ],
              },
            },
          ],
        },
        { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
        { choices: [], usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 64 } } },
      ]) + 'data: [DONE]\n\n';
    const { events, usage } = decode('openai-chat', s);
    expect(events).toEqual([
      { type: 'text', text: 'Hel' },
      { type: 'text', text: 'lo' },
      { type: 'toolCall', callId: 'c1', name: 'read_file', input: { path: 'a' } },
      { type: 'toolCall', callId: 'c2', name: 'ls', input: {} },
    ]);
    expect(usage).toEqual({ inputTokens: 100, outputTokens: 7, cachedTokens: 64 });
  });

  it('openai-responses: text deltas, reasoning, function calls when done, usage, failures', () => {
    const s = sse(
      [
        { type: 'response.created', response: { id: 'r' } },
        { type: 'response.reasoning_summary_text.delta', delta: 'thinking…' },
        { type: 'response.output_text.delta', delta: 'A' },
        { type: 'response.output_item.added', item: { type: 'function_call', id: 'fc', call_id: 'call_9', name: 'grep' } },
        { type: 'response.function_call_arguments.delta', item_id: 'fc', delta: '{"q":1' },
        {
          type: 'response.output_item.done',
          item: { type: 'function_call', id: 'fc', call_id: 'call_9', name: 'grep', arguments: '{"q":1}' },
        },
        {
          type: 'response.completed',
          response: { usage: { input_tokens: 50, output_tokens: 5, input_tokens_details: { cached_tokens: 10 } } },
        },
      ],
      true,
    );
    const { events, usage } = decode('openai-responses', s, 5);
    expect(events).toEqual([
      { type: 'thinking', text: 'thinking…' },
      { type: 'text', text: 'A' },
      { type: 'toolCall', callId: 'call_9', name: 'grep', input: { q: 1 } },
    ]);
    expect(usage).toEqual({ inputTokens: 50, outputTokens: 5, cachedTokens: 10 });
    const failed = decode('openai-responses', sse([{ type: 'response.failed', response: { error: { message: 'model overloaded' } } }]));
    expect(failed.events).toEqual([{ type: 'error', message: 'model overloaded' }]);
  });

  it('anthropic: text, thinking, tool_use with streamed JSON input, usage from start and delta, error events', () => {
    const s = sse(
      [
        { type: 'message_start', message: { usage: { input_tokens: 20, cache_read_input_tokens: 300, output_tokens: 1 } } },
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Sure.' } },
        { type: 'content_block_stop', index: 1 },
        { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'toolu_1', name: 'bash', input: {} } },
        { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"cmd":' } },
        { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"ls"}' } },
        { type: 'content_block_stop', index: 2 },
        { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 42 } },
        { type: 'message_stop' },
      ],
      true,
    );
    const { events, usage } = decode('anthropic', s, 11);
    expect(events).toEqual([
      { type: 'thinking', text: 'hmm' },
      { type: 'text', text: 'Sure.' },
      { type: 'toolCall', callId: 'toolu_1', name: 'bash', input: { cmd: 'ls' } },
    ]);
    expect(usage).toEqual({ inputTokens: 20, cachedTokens: 300, outputTokens: 42 });
    const err = decode('anthropic', sse([{ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }], true));
    expect(err.events).toEqual([{ type: 'error', message: 'Overloaded' }]);
  });
});

describe('Copilot recordings', () => {
  it('are proxy-format turns in their own folder, listed by the inspector as copilot sessions with usage, original readable', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { ChatRecorder, copilotSessionsDir } = await import('../../src/extension/chat/sessions');
    const { ProxySource } = await import('../../src/extension/inspector/proxySource');
    const root = mkdtempSync(join(tmpdir(), 'spillway-chat-'));
    try {
      const store = new MemorySink();
      const config = parseConfig({}).config;
      const engine = createEngine(config, { store });
      const dir = copilotSessionsDir(join(root, 'store'));
      expect(dir).toBe(join(root, 'copilot-sessions'));
      const recorder = new ChatRecorder(
        () => dir,
        (line) => {
          throw new Error(line);
        },
      );
      const original = JSON.stringify(toWire('anthropic', conversation(), OPTIONS));
      const projection = engine.project(original, 'anthropic-messages', { session: 'copilot-abc' });
      const projected = String(projection.request);
      const started = Date.now();
      await recorder.record({
        session: 'copilot-abc',
        path: '/v1/messages',
        format: 'anthropic-messages',
        model: 'claude',
        original,
        projected,
        projection,
        status: 200,
        usage: { inputTokens: 20, cachedTokens: 300, outputTokens: 4 },
        started,
      });
      await recorder.record({
        session: 'copilot-abc',
        path: '/v1/messages',
        format: 'anthropic-messages',
        model: 'claude',
        original,
        projected: original,
        failOpen: 'engine failed',
        status: 401,
        error: 'unauthorized',
        usage: {},
        started,
      });
      const source = new ProxySource(
        { store: () => ({ get: (h: string) => store.get(h) }) as never, config: () => config },
        () => dir,
        60_000,
        'copilot',
      );
      try {
        const [info] = source.list();
        // named by the agent and the start time (issue 22), the recording's own name kept in the detail line
        expect(info).toMatchObject({ id: 'copilot:copilot-abc', origin: 'copilot', turns: 2 });
        expect(info!.title).toMatch(/^Copilot · \w{3} \d{1,2}, \d\d:\d\d$/);
        expect(info!.detail).toMatch(/^Copilot chat copilot-abc · claude/);
        const s = (await source.open('copilot:copilot-abc'))!;
        const turns = s.turns();
        expect(turns[0]).toMatchObject({ cachedPrefixTokens: 300, reductions: 1, model: 'claude' });
        expect(turns[0]!.projectedTokens).toBeLessThan(turns[0]!.originalTokens);
        expect(turns[1]).toMatchObject({ reductions: 0, note: 'engine failed' });
        expect(s.text(projection.reductions[0]!.handle, 'original', 0, 100_000).text).toBe(BIG);
      } finally {
        source.dispose();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
