/**
 * The proxy end to end, used as agents use it: the official `openai` and `@anthropic-ai/sdk`
 * clients (and a raw HTTP client, to see exact bytes) pointed at the proxy, which forwards to a
 * fake upstream on 127.0.0.1 that records what it received.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listSessions, readBody, readSession, startProxy, type RunningProxy, type Turn } from '../../src/proxy';
import { defaultReply, sseOf, startFakeUpstream, type FakeUpstream, type Received } from './fake-upstream';
import {
  ANTHROPIC_KEY,
  COOKIE_SECRET,
  OPENAI_KEY,
  ORG_SECRET,
  SECRETS,
  anthropicRequest,
  bigLog,
  chatRequest,
  rawRequest,
  responsesRequest,
  until,
} from './support';
import { expectStart, expectEnd, expectSome, failing } from '../support/expect';
import { filesUnder } from '../support/files';
import { HANDLE_IN_TEXT as MARKER } from '../../src/engine/handle';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-proxy-'));
const storeDir = join(root, 'store');
const sessionsDir = join(root, 'sessions');
const logLines: string[] = [];
let upstream: FakeUpstream;
let proxy: RunningProxy;
const turns: Turn[] = [];
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startProxy({
    port: 0,
    storeDir,
    openaiUpstream: `${upstream.url}/v1`,
    anthropicUpstream: upstream.url,
    log: (l) => logLines.push(l),
  });
  proxy.on('turn', (t) => turns.push(t));
  openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${proxy.url}/v1`, maxRetries: 0, timeout: 20_000, organization: ORG_SECRET });
  anthropic = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: proxy.url, maxRetries: 0, timeout: 20_000 });
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const last = (): Received => upstream.received[upstream.received.length - 1]!;
const json = (r: Received) => JSON.parse(r.body!.toString('utf8')) as Record<string, any>;

/** Waits for the turn the proxy records for the last call (recording happens after the response). */
async function turnFor(predicate: (t: Turn) => boolean): Promise<Turn> {
  await until(() => turns.some(predicate), 5000, 'a recorded turn');
  return turns.filter(predicate).pop()!;
}

describe('OpenAI Chat Completions through the official client', () => {
  it('reaches the upstream with the big tool output reduced and everything else untouched', async () => {
    const output = bigLog(1500, 'chat-plain');
    const params = chatRequest(output);
    const answer = await openai.chat.completions.create(params as any);
    expect(answer.choices[0]!.message.content).toBe('All tests pass.');
    const got = last();
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/v1/chat/completions');
    expect(got.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(got.headers['openai-organization']).toBe(ORG_SECRET);
    const body = json(got);
    const reduced = body.messages[3].content as string;
    expect(reduced).toMatch(MARKER);
    expect(reduced.length).toBeLessThan(output.length / 5);
    expect(reduced).toContain('FAIL src/parser.test.ts:88');
    // the rest of the body is exactly what the client sent
    body.messages[3].content = output;
    expect(body).toEqual(params);
    expect(got.body!.length).toBe(Number(got.headers['content-length']));
    const turn = await turnFor(
      (t) => t.path === '/v1/chat/completions' && t.reductions.length > 0 && t.usage?.outputTokens === 7 && !t.stats?.unchanged,
    );
    expect(turn.usage).toEqual({ inputTokens: 1200, outputTokens: 7, cachedTokens: 1024 });
    expect(turn.format).toBe('openai-chat');
    expect(turn.model).toBe('gpt-4.1');
    expect(turn.status).toBe(200);
    expect(turn.projectedBytes).toBeLessThan(turn.originalBytes);
    expect(turn.projectedBytes).toBe(got.body!.length);
    // the full output is recoverable from the store, and both bodies from the recording
    const handle = reduced.match(MARKER)![0];
    const stored = fs.readFileSync(join(storeDir, 'objects', handle.slice(3, 5), `${handle}.txt`), 'utf8');
    expect(stored).toBe(output);
    expect(JSON.parse(readBody(sessionsDir, turn.requestRef!))).toEqual(params);
    expect(readBody(sessionsDir, turn.projectionRef!)).toBe(got.body!.toString('utf8'));
  });

  it('streams the answer back and records the usage from the final chunk', async () => {
    const before = turns.length;
    const params = chatRequest(bigLog(1500, 'chat-stream'), { stream: true, stream_options: { include_usage: true } });
    const stream = (await openai.chat.completions.create(params as any)) as unknown as AsyncIterable<OpenAI.Chat.ChatCompletionChunk>;
    let text = '';
    let usage: unknown;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('All tests pass.');
    expect(usage).toMatchObject({ prompt_tokens: 1200, completion_tokens: 7 });
    const body = json(last());
    expect(body.messages[3].content).toMatch(MARKER);
    body.messages[3].content = (params.messages as any)[3].content;
    expect(body).toEqual(params);
    await until(() => turns.length > before);
    const turn = turns[turns.length - 1]!;
    expect(turn.reductions).toHaveLength(1);
    expect(turn.usage).toEqual({ inputTokens: 1200, outputTokens: 7, cachedTokens: 1024 });
  });
});

describe('OpenAI Responses through the official client', () => {
  it('reduces function_call_output and relays the JSON answer', async () => {
    const output = bigLog(1500, 'responses-plain');
    const params = responsesRequest(output);
    const answer = await openai.responses.create(params as any);
    expect(answer.output_text).toBe('Fixed it.');
    const got = last();
    expect(got.url).toBe('/v1/responses');
    const body = json(got);
    expect(body.input[2].output).toMatch(MARKER);
    body.input[2].output = output;
    expect(body).toEqual(params);
    const turn = await turnFor((t) => t.path === '/v1/responses' && !t.stats?.unchanged);
    expect(turn.usage).toEqual({ inputTokens: 2300, outputTokens: 9, cachedTokens: 2048 });
  });

  it('streams events and records the usage of response.completed', async () => {
    const before = turns.length;
    const params = responsesRequest(bigLog(1500, 'responses-stream'), { stream: true });
    const stream = (await openai.responses.create(params as any)) as unknown as AsyncIterable<{ type: string; delta?: string }>;
    const types: string[] = [];
    let text = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.output_text.delta') text += e.delta;
    }
    expect(types).toEqual(['response.created', 'response.output_text.delta', 'response.output_text.delta', 'response.completed']);
    expect(text).toBe('Fixed it.');
    expect(json(last()).input[2].output).toMatch(MARKER);
    await until(() => turns.length > before);
    expect(turns[turns.length - 1]!.usage).toEqual({ inputTokens: 2300, outputTokens: 9, cachedTokens: 2048 });
  });
});

describe('Anthropic Messages through the official client', () => {
  it('reduces the tool_result and keeps cache_control and the rest as sent', async () => {
    const output = bigLog(1500, 'anthropic-plain');
    const params = anthropicRequest(output);
    const message = await anthropic.messages.create(params as any);
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'Done.' });
    const got = last();
    expect(got.url).toBe('/v1/messages');
    // this SDK version sends the key as a bearer token; older ones as x-api-key
    expect(got.headers['x-api-key'] ?? got.headers.authorization).toContain(ANTHROPIC_KEY);
    expect(got.headers['anthropic-version']).toBeDefined();
    const body = json(got);
    expect(body.messages[2].content[0].content).toMatch(MARKER);
    body.messages[2].content[0].content = output;
    expect(body).toEqual(params);
    const turn = await turnFor((t) => t.path === '/v1/messages' && t.usage?.cacheWriteTokens === 200 && !t.stats?.unchanged);
    expect(turn.usage).toEqual({ inputTokens: 30, outputTokens: 11, cachedTokens: 3000, cacheWriteTokens: 200 });
  });

  it('streams message events and merges message_start and message_delta usage', async () => {
    const before = turns.length;
    const params = anthropicRequest(bigLog(1500, 'anthropic-stream'));
    const stream = anthropic.messages.stream(params as any);
    const events: string[] = [];
    for await (const e of stream) events.push(e.type);
    const final = await stream.finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'Done.' });
    expect(events).toContain('message_delta');
    const body = json(last());
    expect(body.stream).toBe(true);
    expect(body.messages[2].content[0].content).toMatch(MARKER);
    await until(() => turns.length > before);
    expect(turns[turns.length - 1]!.usage).toEqual({ inputTokens: 30, outputTokens: 11, cachedTokens: 3000, cacheWriteTokens: 200 });
  });

  it('projects count_tokens too, without recording it as a turn', async () => {
    const before = turns.length;
    const params = anthropicRequest(bigLog(1500, 'count'));
    const { model, messages, system, tools } = params as any;
    const count = await anthropic.messages.countTokens({ model, messages, system, tools });
    expect(count.input_tokens).toBe(1234);
    expect(last().url).toBe('/v1/messages/count_tokens');
    expect(json(last()).messages[2].content[0].content).toMatch(MARKER);
    await new Promise((r) => setTimeout(r, 50));
    expect(turns.length).toBe(before);
  });
});

describe('byte-for-byte forwarding', () => {
  it('forwards a body with nothing to reduce as the exact bytes sent', async () => {
    const body =
      '{ "model":"gpt-4.1",\n  "messages": [{"role":"user","content":"h\\u00e9llo \u00e9 \ud83d\ude00"}],\n "x_unknown": [1.50, 1e3] }\n';
    const r = await rawRequest(`${proxy.url}/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', authorization: `Bearer ${OPENAI_KEY}` },
      body,
    });
    expect(r.status).toBe(200);
    expect(last().body!.equals(Buffer.from(body, 'utf8'))).toBe(true);
  });

  it('changes only the reduced string: every byte before and after it is as sent', async () => {
    const output = bigLog(1500, 'raw-splice');
    const text = JSON.stringify(chatRequest(output), null, 3);
    const at = text.indexOf(JSON.stringify(output));
    const r = await rawRequest(`${proxy.url}/v1/chat/completions`, { headers: { 'content-type': 'application/json' }, body: text });
    expect(r.status).toBe(200);
    const sent = last().body!.toString('utf8');
    const suffix = text.slice(at + JSON.stringify(output).length);
    expectStart(sent, text.slice(0, at));
    expectEnd(sent, suffix);
    expect(JSON.parse(sent.slice(at, sent.length - suffix.length))).toMatch(MARKER);
    // and the JSON answer comes back as the exact bytes the upstream wrote, with its headers
    expect(r.body.equals(Buffer.concat(last().sent))).toBe(true);
    expect(r.headers['content-length']).toBe(String(r.body.length));
    expect(r.headers['x-request-id']).toBe('req_fake');
  });

  it('maps client paths onto upstreams that carry a path prefix, for both SDKs', async () => {
    const prefixed = await startProxy({
      port: 0,
      openaiUpstream: `${upstream.url}/openai/v1`,
      anthropicUpstream: `${upstream.url}/anthropic/`,
      sessionsDir: false,
    });
    try {
      const o = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${prefixed.url}/v1`, maxRetries: 0 });
      await o.chat.completions.create(chatRequest('x') as any);
      expect(last().url).toBe('/openai/v1/chat/completions');
      await o.models.list();
      expect(last().url).toBe('/openai/v1/models');
      const a = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: prefixed.url, maxRetries: 0 });
      await a.messages.create(anthropicRequest('x') as any);
      expect(last().url).toBe('/anthropic/v1/messages');
      await rawRequest(`${prefixed.url}/v1/messages?beta=true`, { body: JSON.stringify(anthropicRequest('x')) });
      expect(last().url).toBe('/anthropic/v1/messages?beta=true');
    } finally {
      await prefixed.close();
    }
  });

  it('relays a stream byte for byte as the upstream wrote it, chunk by chunk as they arrive', async () => {
    const chunks = sseOf([
      { event: 'a', data: { n: 1, s: 'é' } },
      { data: ': not a comment' },
      { event: 'b', data: 'plain text\nsecond line' },
    ]);
    chunks.push(': a comment line\n\n', 'data: {"usage":{"prompt_tokens":5}}\r\n\r\n', 'data: [DONE]\n\n');
    upstream.respond = () => ({ kind: 'sse', chunks, delayMs: 150 });
    try {
      const started = performance.now();
      const r = await rawRequest(`${proxy.url}/v1/chat/completions`, { body: JSON.stringify(chatRequest('short', { stream: true })) });
      expect(r.ended).toBe('end');
      expect(r.body.equals(Buffer.concat(last().sent))).toBe(true);
      expect(r.body.toString('utf8')).toBe(chunks.join(''));
      // the first event reached the client long before the upstream wrote the last one
      expect(r.chunks.length).toBeGreaterThanOrEqual(3);
      expect(r.chunks[0]!.at - started).toBeLessThan(150 * (chunks.length - 1) - 100);
      expect(r.headers['content-type']).toBe('text/event-stream; charset=utf-8');
      expect(r.headers['x-request-id']).toBe('req_fake');
    } finally {
      upstream.respond = defaultReply;
    }
  });

  it('passes GET /v1/models through with its auth header and answer unchanged', async () => {
    const list = await openai.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['fake-model']);
    expect(last().method).toBe('GET');
    expect(last().url).toBe('/v1/models');
    expect(last().headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
  });

  it('passes any other method and path through to the right provider, query string included', async () => {
    upstream.respond = (rec) => ({
      kind: 'raw',
      status: 202,
      body: `got ${rec.method} ${rec.url} ${rec.body?.toString('utf8')}`,
      headers: { 'content-type': 'text/plain', 'x-custom': 'yes' },
    });
    try {
      const r = await rawRequest(`${proxy.url}/v1/files/file-1?purpose=a%20b&x=1`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${OPENAI_KEY}` },
      });
      expect(r.status).toBe(202);
      expect(r.body.toString()).toBe('got DELETE /v1/files/file-1?purpose=a%20b&x=1 ');
      expect(r.headers['x-custom']).toBe('yes');
      const p = await rawRequest(`${proxy.url}/v1/messages/batches?limit=2`, {
        method: 'PUT',
        headers: { 'x-api-key': ANTHROPIC_KEY },
        body: 'opaque',
      });
      expect(p.body.toString()).toBe('got PUT /v1/messages/batches?limit=2 opaque');
    } finally {
      upstream.respond = defaultReply;
    }
  });

  it('answers Expect: 100-continue itself and accepts absolute-form targets', async () => {
    const { request } = await import('node:http');
    const body = JSON.stringify(chatRequest(bigLog(1500, 'expect')));
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        `${proxy.url}/v1/chat/completions`,
        { method: 'POST', agent: false, headers: { expect: '100-continue', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('continue', () => req.end(body));
      req.on('error', reject);
    });
    expect(status).toBe(200);
    expect(last().headers.expect).toBeUndefined();
    expect(json(last()).messages[3].content).toMatch(MARKER);
    const r = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: proxy.port, method: 'GET', path: 'http://api.openai.com/v1/models?x=1', agent: false },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(r).toBe(200);
    expect(last().url).toBe('/v1/models?x=1');
  });

  it('drops hop-by-hop headers and the session header, and keeps the others with their values', async () => {
    await rawRequest(`${proxy.url}/v1/chat/completions?api-version=2`, {
      headers: {
        connection: 'keep-alive, x-hop',
        'x-hop': 'drop me',
        'keep-alive': 'timeout=5',
        'x-spillway-session': 'my-session',
        'x-custom': 'keep me',
        cookie: `sid=${COOKIE_SECRET}`,
        'api-key': OPENAI_KEY,
        'proxy-authorization': 'Basic eHg6eXk=',
      },
      body: JSON.stringify(chatRequest('small')),
    });
    const h = last().headers;
    expect(last().url).toBe('/v1/chat/completions?api-version=2');
    expect(h['x-hop']).toBeUndefined();
    expect(h['keep-alive']).toBeUndefined();
    expect(h['x-spillway-session']).toBeUndefined();
    expect(h['proxy-authorization']).toBeUndefined();
    expect(h['x-custom']).toBe('keep me');
    expect(h.cookie).toBe(`sid=${COOKIE_SECRET}`);
    expect(h['api-key']).toBe(OPENAI_KEY);
    expect(h.host).toBe(`127.0.0.1:${upstream.port}`);
    const turn = await turnFor((t) => t.session === 'my-session');
    expect(turn.turn).toBe(1);
  });
});

describe('errors reach the client as the upstream sent them', () => {
  it('relays a 400 with its body, and the SDK reports the same status and message', async () => {
    const error = {
      error: {
        message: 'context_length_exceeded: too long',
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    };
    upstream.respond = () => ({ kind: 'json', status: 400, body: error });
    try {
      const e = await openai.chat.completions.create(chatRequest('x') as any).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(OpenAI.APIError);
      expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
      expect((e as InstanceType<typeof OpenAI.APIError>).code).toBe('context_length_exceeded');
      const r = await rawRequest(`${proxy.url}/v1/chat/completions`, { body: JSON.stringify(chatRequest('x')) });
      expect(r.status).toBe(400);
      expect(r.body.equals(Buffer.concat(last().sent))).toBe(true);
    } finally {
      upstream.respond = defaultReply;
    }
  });

  it("records an error status's message as the upstream wrote it", async () => {
    const error = { error: { message: 'Overloaded', type: 'overloaded_error' } };
    upstream.respond = () => ({ kind: 'json', status: 529, body: error });
    try {
      await anthropic.messages.create(anthropicRequest('x') as any).catch(() => undefined);
      const t = await turnFor((x) => x.status === 529);
      expect(t.upstreamMessage).toBe('overloaded_error: Overloaded');
    } finally {
      upstream.respond = defaultReply;
    }
  });

  it('relays 429 and 5xx with their headers (retry-after) to both SDKs', async () => {
    upstream.respond = (rec) =>
      rec.url.startsWith('/v1/messages')
        ? { kind: 'json', status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }
        : {
            kind: 'json',
            status: 429,
            body: { error: { message: 'Rate limit reached', type: 'requests', code: 'rate_limit_exceeded' } },
            headers: { 'retry-after': '7' },
          };
    try {
      const a = await anthropic.messages.create(anthropicRequest('x') as any).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(a).toBeInstanceOf(Anthropic.APIError);
      expect((a as InstanceType<typeof Anthropic.APIError>).status).toBe(529);
      expect((a as InstanceType<typeof Anthropic.APIError>).message).toContain('Overloaded');
      const r = await rawRequest(`${proxy.url}/v1/responses`, { body: JSON.stringify(responsesRequest('x')) });
      expect(r.status).toBe(429);
      expect(r.headers['retry-after']).toBe('7');
      const t = await turnFor((x) => x.status === 429);
      expect(t.usage).toBeUndefined();
    } finally {
      upstream.respond = defaultReply;
    }
  });

  it('breaks off the client response when the upstream resets mid-stream', async () => {
    const chunks = sseOf([
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: { id: 'm', type: 'message', role: 'assistant', model: 'x', content: [], usage: { input_tokens: 3, output_tokens: 1 } },
        },
      },
      { event: 'ping', data: { type: 'ping' } },
    ]);
    upstream.respond = () => ({ kind: 'reset', chunks, delayMs: 20 });
    try {
      const r = await rawRequest(`${proxy.url}/v1/messages`, { body: JSON.stringify(anthropicRequest('x', { stream: true })) });
      expect(r.status).toBe(200);
      expect(r.ended).not.toBe('end');
      expect(r.body.toString('utf8')).toBe(chunks.join(''));
      const stream = anthropic.messages.stream(anthropicRequest('x') as any);
      const failure = await (async () => {
        for await (const _ of stream) {
          /* read */
        }
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(failure).toBeInstanceOf(Error);
      const t = await turnFor((x) => x.error !== undefined && x.error.includes('mid-response'));
      expect(t.status).toBe(200);
      expectSome(logLines, (l) => l.includes('mid-response'));
    } finally {
      upstream.respond = defaultReply;
    }
  });

  it('sends a call once more on a fresh connection when a kept-alive one turns out closed', async () => {
    const { createServer } = await import('node:http');
    const served: string[] = [];
    const flaky = createServer((req, res) => {
      const socket = req.socket as typeof req.socket & { calls?: number };
      socket.calls = (socket.calls ?? 0) + 1;
      // the second call on a connection finds it closed, as when an idle timeout races the reuse
      if (socket.calls > 1) {
        socket.destroy();
        return;
      }
      req.resume();
      req.on('end', () => {
        served.push(req.url ?? '');
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    const port = (flaky.address() as { port: number }).port;
    const p = await startProxy({ port: 0, openaiUpstream: `http://127.0.0.1:${port}/v1`, sessionsDir: false });
    try {
      for (let i = 0; i < 3; i++) {
        const r = await rawRequest(`${p.url}/v1/chat/completions`, { body: JSON.stringify(chatRequest(`call ${i}`)) });
        expect(r.status).toBe(200);
        expect(r.body.toString()).toBe('{"ok":true}');
      }
      expect(served).toHaveLength(3);
    } finally {
      await p.close();
      await new Promise<void>((r) => {
        flaky.close(() => r());
        flaky.closeAllConnections();
      });
    }
  });

  it("answers 502 in the provider's error shape when the upstream cannot be reached", async () => {
    const dead = await startFakeUpstream();
    const port = dead.port;
    await dead.close();
    const p = await startProxy({
      port: 0,
      openaiUpstream: `http://127.0.0.1:${port}/v1`,
      anthropicUpstream: `http://127.0.0.1:${port}`,
      sessionsDir: false,
    });
    try {
      const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${p.url}/v1`, maxRetries: 0 });
      const e = await client.chat.completions.create(chatRequest('x') as any).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((e as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
      expect((e as Error).message).toContain('ECONNREFUSED');
      const a = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: p.url, maxRetries: 0 });
      const ae = await a.messages.create(anthropicRequest('x') as any).then(
        () => undefined,
        (err: unknown) => err,
      );
      expect((ae as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    } finally {
      await p.close();
    }
  });
});

describe('client aborts', () => {
  it('cancels the upstream request when the SDK aborts a stream', async () => {
    upstream.respond = () => ({
      kind: 'hang',
      chunks: sseOf([
        {
          data: {
            id: 'c',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'x',
            choices: [{ index: 0, delta: { content: 'Hel' }, finish_reason: null }],
          },
        },
      ]),
    });
    try {
      const controller = new AbortController();
      const stream = await openai.chat.completions.create({ ...(chatRequest('x') as any), stream: true }, { signal: controller.signal });
      const it = (stream as unknown as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      await it.next();
      const rec = last();
      expect(rec.closedEarly).toBe(false);
      controller.abort();
      await until(() => rec.closedEarly, 5000, 'the upstream to see the close');
      const t = await turnFor((x) => x.error === 'the client closed the connection');
      expect(t.status).toBe(200);
    } finally {
      upstream.respond = defaultReply;
    }
  });

  it('cancels the upstream request when a raw client hangs up before any answer', async () => {
    let count = 0;
    upstream.respond = () => {
      count++;
      return { kind: 'hang', chunks: [] };
    };
    try {
      const { request } = await import('node:http');
      const req = request(`${proxy.url}/v1/messages`, { method: 'POST', agent: false });
      req.on('error', () => {});
      req.end(JSON.stringify(anthropicRequest('x', { stream: true })));
      await until(() => count === 1, 5000, 'the upstream to receive the call');
      const rec = last();
      req.destroy();
      await until(() => rec.closedEarly, 5000, 'the upstream to see the close');
    } finally {
      upstream.respond = defaultReply;
    }
  });
});

describe('fail open', () => {
  it('forwards a malformed body unchanged, logs why, and records the turn as failed open', async () => {
    const bad = '{"model":"gpt-4.1","messages":[{"role":"user","content":"unterminated';
    const r = await rawRequest(`${proxy.url}/v1/chat/completions`, { headers: { 'x-spillway-session': 'malformed-1' }, body: bad });
    expect(r.status).toBe(200);
    expect(last().body!.toString('utf8')).toBe(bad);
    expectSome(logLines, (l) => l.includes('fail open') && l.includes('/v1/chat/completions') && l.includes('malformed JSON'));
    const t = await turnFor((x) => x.session === 'malformed-1');
    expect(t.failOpen).toMatch(/malformed JSON/);
    expect(t.originalBytes).toBe(t.projectedBytes);
    expect(readBody(sessionsDir, t.requestRef!)).toBe(bad);
  });

  it('forwards bytes that are not UTF-8 unchanged', async () => {
    const bytes = Buffer.concat([
      Buffer.from('{"messages":[{"role":"user","content":"'),
      Buffer.from([0xff, 0xfe, 0xc3]),
      Buffer.from('"}]}'),
    ]);
    await rawRequest(`${proxy.url}/v1/messages`, { body: bytes });
    expect(last().body!.equals(bytes)).toBe(true);
    expectSome(logLines, (l) => l.includes('not valid UTF-8'));
  });

  it('inflates a gzip body for the engine and forwards the projection as plain UTF-8', async () => {
    const output = bigLog(1500, 'gzip');
    const params = chatRequest(output);
    const gz = gzipSync(JSON.stringify(params));
    await rawRequest(`${proxy.url}/v1/chat/completions`, {
      headers: { 'content-encoding': 'gzip', 'content-type': 'application/json' },
      body: gz,
    });
    const got = last();
    expect(got.headers['content-encoding']).toBeUndefined();
    const body = json(got);
    expect(body.messages[3].content).toMatch(MARKER);
    body.messages[3].content = output;
    expect(body).toEqual(params);
  });

  it('forwards a gzip body with nothing to reduce as the original compressed bytes', async () => {
    const gz = gzipSync(JSON.stringify(chatRequest('small')));
    await rawRequest(`${proxy.url}/v1/chat/completions`, { headers: { 'content-encoding': 'gzip' }, body: gz });
    expect(last().headers['content-encoding']).toBe('gzip');
    expect(last().body!.equals(gz)).toBe(true);
  });

  it('forwards an encoding it cannot read (compress) and a broken gzip body unchanged', async () => {
    const opaque = Buffer.from('(LZW stream)');
    await rawRequest(`${proxy.url}/v1/responses`, { headers: { 'content-encoding': 'compress' }, body: opaque });
    expect(last().body!.equals(opaque)).toBe(true);
    expect(last().headers['content-encoding']).toBe('compress');
    const broken = gzipSync('{"input":[]}').subarray(0, 12);
    await rawRequest(`${proxy.url}/v1/responses`, { headers: { 'content-encoding': 'gzip' }, body: broken });
    expect(last().body!.equals(broken)).toBe(true);
    expectSome(logLines, (l) => l.includes('"compress" is not one the proxy reads'));
  });

  it('streams a body over the size limit upstream unchanged without projecting it', async () => {
    const small = await startProxy({
      port: 0,
      openaiUpstream: `${upstream.url}/v1`,
      anthropicUpstream: upstream.url,
      maxBodyBytes: 20_000,
      sessionsDir: false,
      log: (l) => logLines.push(l),
    });
    try {
      const text = JSON.stringify(chatRequest(bigLog(1500, 'over-limit')));
      const r = await rawRequest(`${small.url}/v1/chat/completions`, { body: text });
      expect(r.status).toBe(200);
      expect(last().body!.toString('utf8')).toBe(text);
      // chunked (no content-length): the limit is found while reading
      const { request } = await import('node:http');
      await new Promise<void>((resolve, reject) => {
        const req = request(`${small.url}/v1/chat/completions`, { method: 'POST', agent: false }, (res) => {
          res.resume();
          res.on('end', resolve);
        });
        req.on('error', reject);
        for (let i = 0; i < text.length; i += 7000) req.write(text.slice(i, i + 7000));
        req.end();
      });
      expect(last().body!.toString('utf8')).toBe(text);
      expect(last().headers['transfer-encoding']).toBe('chunked');
      expectSome(logLines, (l) => l.includes('over 20000 bytes'));
    } finally {
      await small.close();
    }
  });
});

describe('sessions and recordings', () => {
  it('puts successive calls of one conversation in one session, with sticky decisions', async () => {
    const output = bigLog(1500, 'sticky');
    const first = anthropicRequest(output);
    const second = anthropicRequest(output);
    const msgs = second.messages as any[];
    // the agent moves its cache breakpoint and adds a round: still the same conversation
    delete msgs[2].content[0].cache_control;
    msgs.push({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'ls' } }] });
    msgs.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_2', content: 'a\nb', cache_control: { type: 'ephemeral' } }],
    });
    const before = turns.length;
    await anthropic.messages.create(first as any);
    const p1 = json(last());
    await anthropic.messages.create(second as any);
    const p2 = json(last());
    // this test's turns are the ones that reduced its output: a turn of an earlier test may still be
    // recorded after `before` was taken, so position alone does not say which turn is which
    const handle = JSON.stringify(p1.messages[2]).match(MARKER)![0];
    const mine = () => turns.slice(before).filter((t) => t.reductions.some((r) => r.handle === handle));
    await until(() => mine().length >= 2);
    const [t1, t2] = mine();
    expect(t1!.session).toBe(t2!.session);
    expect(t2!.turn).toBe(t1!.turn + 1);
    expect(p2.messages[2].content[0].content).toBe(p1.messages[2].content[0].content);
    // (the other conversation holds no output; its model names its turn, as a turn of an earlier test
    // may still be recorded after t2)
    const model = 'claude-opus-4-5-another-conversation';
    const other = await anthropic.messages.create(
      anthropicRequest(output, { model, messages: [{ role: 'user', content: 'another conversation' }] }) as any,
    );
    expect(other.id).toBe('msg_01');
    const theirs = () => turns.slice(turns.indexOf(t2!) + 1).filter((t) => t.model === model);
    await until(() => theirs().length >= 1);
    expect(theirs()[0]!.session).not.toBe(t1!.session);
    const file = listSessions(sessionsDir).find((s) => s.session === t1!.session)!;
    const recorded = readSession(file.file);
    expect(recorded.slice(-2).map((t) => t.turn)).toEqual([t1!.turn, t2!.turn]);
  });
});

describe('file inputs in a recorded turn', () => {
  it('records the Write input the projection replaced by a marker, with its handle, and reads it back from the file', async () => {
    // a second proxy whose engine replaces file inputs on arrival from 1,000 tokens, so a short
    // conversation qualifies (the default leaves them to clears once the agent is past them)
    const dir = join(root, 'inputs');
    const seen: Turn[] = [];
    const p = await startProxy({
      port: 0,
      storeDir: join(dir, 'store'),
      anthropicUpstream: upstream.url,
      config: { inputs: { when: 'arrival', minTokens: 1_000 } },
      log: () => undefined,
    });
    p.on('turn', (t) => seen.push(t));
    try {
      const content = Array.from({ length: 200 }, (_, i) => `export const value_${i} = compute(${i});`).join('\n');
      const request = anthropicRequest(bigLog(300, 'before'), {
        messages: [
          { role: 'user', content: [{ type: 'text', text: `Write the module.\n${'context '.repeat(2_000)}` }] },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: '/repo/src/values.ts', content } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_write', content: 'File created' }] },
        ],
      });
      const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: p.url, maxRetries: 0, timeout: 20_000 });
      await client.messages.create(request as any);
      await until(() => seen.length > 0, 5000, 'the recorded turn');
      const sent = json(last());
      expect(sent.messages[1].content[0].input.content).toBeUndefined();
      const [recorded] = seen;
      expect(recorded!.inputs).toHaveLength(1);
      expect(recorded!.inputs![0]).toMatchObject({ tool: 'Write', callId: 'toolu_write', fresh: true });
      expect(JSON.stringify(sent.messages[1].content[0].input)).toContain(recorded!.inputs![0]!.handle);
      expect(recorded!.inputs![0]!.projectedTokens).toBeLessThan(recorded!.inputs![0]!.originalTokens);
      const file = listSessions(join(dir, 'sessions')).find((s) => s.session === recorded!.session)!;
      expect(readSession(file.file)[0]!.inputs).toEqual(recorded!.inputs);
    } finally {
      await p.close();
    }
  });
});

describe('why results went whole, in a recorded turn', () => {
  it("records per turn the results sent whole grouped by the clear stage's reason, and reads them back, a damaged group dropped alone", async () => {
    const dir = join(root, 'held');
    const seen: Turn[] = [];
    const p = await startProxy({ port: 0, storeDir: join(dir, 'store'), anthropicUpstream: upstream.url, log: () => undefined });
    p.on('turn', (t) => seen.push(t));
    try {
      // two short outputs, under every cap: both sent whole; the test run is in use (the agent just
      // received it), the listing is gathered material the agent has not yet written from
      const output = (tag: string) => Array.from({ length: 30 }, (_, i) => `${tag} line ${i}: ok`).join('\n');
      const request = anthropicRequest(output('first'), {
        messages: [
          ...(anthropicRequest(output('first')).messages as unknown[]),
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls' } }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_ls', content: output('second') }] },
        ],
      });
      const client = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: p.url, maxRetries: 0, timeout: 20_000 });
      await client.messages.create(request as any);
      await until(() => seen.length > 0, 5000, 'the recorded turn');
      const [recorded] = seen;
      expect(recorded!.reductions).toEqual([]);
      const held = recorded!.held!;
      expect(held.map((g) => [g.reason, g.results]).sort()).toEqual([
        ['gathered', 1],
        ['in-use', 1],
      ]);
      // about 30 lines of a few tokens each, per output
      for (const g of held) expect(g.tokens).toBeGreaterThan(100);
      expect(held.reduce((a, g) => a + g.tokens, 0)).toBeLessThan(recorded!.projectedTokens!);
      const file = listSessions(join(dir, 'sessions')).find((s) => s.session === recorded!.session)!;
      expect(readSession(file.file)[0]!.held).toEqual(recorded!.held);
      // a recording damaged by hand: the unknown reason and the broken count go, the rest of the turn stays
      const line = {
        ...JSON.parse(fs.readFileSync(file.file, 'utf8').split('\n')[0]!),
        held: [...recorded!.held!, { reason: 'lost', results: 1, tokens: 3 }, { reason: 'in-use', results: -1, tokens: 3 }],
      };
      fs.writeFileSync(file.file, JSON.stringify(line) + '\n');
      const reread = readSession(file.file)[0]!;
      expect(reread.held).toEqual(recorded!.held);
      expect(reread.turn).toBe(recorded!.turn);
    } finally {
      await p.close();
    }
  });
});

describe('load', () => {
  it('answers 200 concurrent requests with ~1 MB bodies, each with its own answer', async () => {
    // The engine's real tokenizer costs ~30-100 ms per MB of fresh tool output; this test is about
    // the proxy under concurrency, so its engine counts tokens approximately (chars / 4).
    const loaded = await startProxy({
      port: 0,
      storeDir: join(root, 'load-store'),
      sessionsDir: join(root, 'load-sessions'),
      config: { tokenizer: 'approximate' },
      openaiUpstream: `${upstream.url}/v1`,
      anthropicUpstream: upstream.url,
      log: (l) => logLines.push(l),
    });
    upstream.keepBodies = false;
    upstream.respond = (rec) => ({ kind: 'json', body: { id: rec.headers['x-req'], bytes: rec.bodyBytes, sha: rec.bodySha256 } });
    const started = Date.now();
    try {
      const shared = bigLog(17_000, 'load');
      const bodies = Array.from({ length: 200 }, (_, i) =>
        JSON.stringify(chatRequest(shared + `\nrun ${i}`, { user: `u${i}` }, `task ${i}`)),
      );
      expect(bodies[0]!.length).toBeGreaterThan(500_000);
      // the other half of each megabyte is a field the engine leaves alone
      const big = bodies.map((b) => JSON.stringify({ ...JSON.parse(b), metadata: { note: 'p'.repeat(1_000_000 - b.length) } }));
      expect(big[0]!.length).toBeGreaterThan(999_000);
      const results = await Promise.all(
        big.map(async (b, i) => {
          const res = await fetch(`${loaded.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-req': String(i), authorization: `Bearer ${OPENAI_KEY}` },
            body: b,
          });
          return { status: res.status, json: (await res.json()) as { id: string; bytes: number } };
        }),
      );
      results.forEach((r, i) => {
        expect(r.status).toBe(200);
        expect(r.json.id).toBe(String(i));
        // reduced: the 600 KB log became a marker, the padding stayed
        expect(r.json.bytes).toBeGreaterThan(300_000);
        expect(r.json.bytes).toBeLessThan(big[i]!.length - 500_000);
      });
      expect(Date.now() - started).toBeLessThan(60_000);
      await until(() => listSessions(join(root, 'load-sessions')).length === 200, 10_000, '200 recorded sessions');
    } finally {
      upstream.keepBodies = true;
      upstream.respond = defaultReply;
      await loaded.close();
    }
  }, 90_000);
});

describe('large bodies', () => {
  it('projects a 100 MB request and forwards the small projection', async () => {
    const huge = await startProxy({
      port: 0,
      storeDir: join(root, 'huge-store'),
      sessionsDir: join(root, 'huge-sessions'),
      config: { tokenizer: 'approximate' },
      openaiUpstream: `${upstream.url}/v1`,
      anthropicUpstream: upstream.url,
      log: (l) => logLines.push(l),
    });
    const hugeTurns: Turn[] = [];
    huge.on('turn', (t) => hugeTurns.push(t));
    try {
      const line = 'PASS src/a/very/long/path/to/some/module.test.ts (12 ms) all assertions held as expected\n';
      const output = line.repeat(Math.ceil((100 * 1024 * 1024) / line.length));
      const body = Buffer.from(JSON.stringify(chatRequest(output)));
      expect(body.length).toBeGreaterThan(100 * 1024 * 1024);
      const r = await rawRequest(`${huge.url}/v1/chat/completions`, { body, timeoutMs: 60_000 });
      expect(r.status).toBe(200);
      const got = last();
      expect(got.body!.length).toBeLessThan(20_000);
      expect(json(got).messages[3].content).toMatch(MARKER);
      await until(() => hugeTurns.length === 1, 30_000, 'the recorded turn');
      expect(hugeTurns[0]!.originalBytes).toBe(body.length);
      expect(
        fs.statSync(join(root, 'huge-sessions', 'bodies', hugeTurns[0]!.requestRef!.slice(3, 5), `${hugeTurns[0]!.requestRef}.txt`)).size,
      ).toBe(body.length);
    } finally {
      await huge.close();
      fs.rmSync(join(root, 'huge-store'), { recursive: true, force: true });
      fs.rmSync(join(root, 'huge-sessions'), { recursive: true, force: true });
    }
  }, 90_000);
});

describe('secrets', () => {
  it('never writes a key, cookie or organization to the store, the recordings or the log', async () => {
    await until(() => turns.length > 0);
    const files = filesUnder(root);
    expectSome(files, (f) => f.endsWith('.jsonl'));
    expectSome(files, (f) => f.includes(join('store', 'objects')));
    for (const f of files) {
      const text = fs.readFileSync(f).toString('latin1');
      for (const s of SECRETS) expect(text, `${s} in ${f}`).not.toContain(s);
    }
    const log = logLines.join('\n');
    for (const s of SECRETS) expect(log).not.toContain(s);
    const recorded = listSessions(sessionsDir).flatMap((s) => readSession(s.file));
    expectSome(recorded, (t) => t.headers?.['user-agent']);
    expect(
      failing(recorded, (t) => !('authorization' in (t.headers ?? {})) && !('x-api-key' in (t.headers ?? {}))),
      'elements that break the rule',
    ).toEqual([]);
  });
});
