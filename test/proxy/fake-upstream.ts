/**
 * A fake provider for the proxy tests and the proxy benchmark: an HTTP server on 127.0.0.1 that
 * records what it received (method, path, headers, body bytes) and answers the way OpenAI and
 * Anthropic do (JSON, or server-sent event streams with optional delays), or with an error status,
 * or by resetting the connection mid-stream, or by hanging until the client goes away.
 *
 * Every answer's exact bytes are kept too (`sent`), so a test can compare them with what reached
 * the client.
 */
import { createHash } from 'node:crypto';
import * as http from 'node:http';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  /** the body as received (absent when the upstream was told not to keep bodies) */
  body?: Buffer;
  bodyBytes: number;
  bodySha256: string;
  /** set when the client closed the connection before the answer was complete */
  closedEarly: boolean;
  /** the exact bytes of the answer body written so far */
  sent: Buffer[];
}

export type Reply =
  | { kind: 'json'; status?: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status?: number; body: string | Buffer; headers?: Record<string, string> }
  /** server-sent events: each chunk written as it is, `delayMs` apart */
  | { kind: 'sse'; chunks: string[]; delayMs?: number; headers?: Record<string, string> }
  /** headers and the first `chunks`, then the socket is reset */
  | { kind: 'reset'; chunks: string[]; delayMs?: number }
  /** headers and the first chunks, then nothing until the client goes away */
  | { kind: 'hang'; chunks: string[] };

export type Responder = (r: Received) => Reply;

export interface FakeUpstream {
  url: string;
  port: number;
  received: Received[];
  /** resolves when a request has come in whose client then closed early */
  respond: Responder;
  keepBodies: boolean;
  closed: Promise<Received>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function sseOf(events: Array<{ event?: string; data: unknown }>): string[] {
  return events.map(
    (e) => `${e.event ? `event: ${e.event}\n` : ''}data: ${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)}\n\n`,
  );
}

/** Realistic answers per API, streaming or not, with usage figures. */
export function defaultReply(r: Received): Reply {
  let stream = false;
  let model = 'fake-model';
  try {
    const body = r.body ? (JSON.parse(r.body.toString('utf8')) as { stream?: boolean; model?: string }) : {};
    stream = body.stream === true;
    model = body.model ?? model;
  } catch {
    /* not JSON */
  }
  const path = r.url.split('?')[0]!;
  if (r.method === 'GET' && path.endsWith('/models')) {
    return { kind: 'json', body: { object: 'list', data: [{ id: 'fake-model', object: 'model', created: 1, owned_by: 'fake' }] } };
  }
  if (path.endsWith('/chat/completions')) {
    const usage = { prompt_tokens: 1200, completion_tokens: 7, total_tokens: 1207, prompt_tokens_details: { cached_tokens: 1024 } };
    if (!stream) {
      return {
        kind: 'json',
        body: {
          id: 'chatcmpl-1',
          object: 'chat.completion',
          created: 1,
          model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'All tests pass.' }, finish_reason: 'stop' }],
          usage,
        },
      };
    }
    const chunk = (delta: unknown, finish: string | null, u: unknown = null) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model,
      choices: delta === null ? [] : [{ index: 0, delta, finish_reason: finish }],
      usage: u,
    });
    return {
      kind: 'sse',
      delayMs: 5,
      chunks: [
        ...sseOf([
          { data: chunk({ role: 'assistant', content: '' }, null) },
          { data: chunk({ content: 'All tests ' }, null) },
          { data: chunk({ content: 'pass.' }, null) },
          { data: chunk({}, 'stop') },
          { data: chunk(null, null, usage) },
        ]),
        'data: [DONE]\n\n',
      ],
    };
  }
  if (path.endsWith('/responses')) {
    const usage = {
      input_tokens: 2300,
      input_tokens_details: { cached_tokens: 2048 },
      output_tokens: 9,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 2309,
    };
    const message = {
      id: 'msg_1',
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Fixed it.', annotations: [] }],
    };
    const response = {
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      status: 'completed',
      model,
      output: [message],
      usage,
      parallel_tool_calls: true,
      tool_choice: 'auto',
      tools: [],
    };
    if (!stream) return { kind: 'json', body: response };
    return {
      kind: 'sse',
      delayMs: 5,
      chunks: sseOf([
        {
          event: 'response.created',
          data: { type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress', output: [], usage: null } },
        },
        {
          event: 'response.output_text.delta',
          data: {
            type: 'response.output_text.delta',
            sequence_number: 1,
            item_id: 'msg_1',
            output_index: 0,
            content_index: 0,
            delta: 'Fixed ',
          },
        },
        {
          event: 'response.output_text.delta',
          data: {
            type: 'response.output_text.delta',
            sequence_number: 2,
            item_id: 'msg_1',
            output_index: 0,
            content_index: 0,
            delta: 'it.',
          },
        },
        { event: 'response.completed', data: { type: 'response.completed', sequence_number: 3, response } },
      ]),
    };
  }
  if (path.endsWith('/messages/count_tokens')) return { kind: 'json', body: { input_tokens: 1234 } };
  if (path.endsWith('/messages')) {
    const usage = { input_tokens: 30, cache_creation_input_tokens: 200, cache_read_input_tokens: 3000, output_tokens: 11 };
    const message = {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model,
      content: [{ type: 'text', text: 'Done.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage,
    };
    if (!stream) return { kind: 'json', body: message };
    return {
      kind: 'sse',
      delayMs: 5,
      chunks: sseOf([
        {
          event: 'message_start',
          data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
        },
        { event: 'content_block_start', data: { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } } },
        { event: 'ping', data: { type: 'ping' } },
        { event: 'content_block_delta', data: { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Done.' } } },
        { event: 'content_block_stop', data: { type: 'content_block_stop', index: 0 } },
        {
          event: 'message_delta',
          data: { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 11 } },
        },
        { event: 'message_stop', data: { type: 'message_stop' } },
      ]),
    };
  }
  return { kind: 'json', status: 404, body: { error: { message: `no route ${r.method} ${path}`, type: 'invalid_request_error' } } };
}

export async function startFakeUpstream(options: { keepBodies?: boolean; respond?: Responder } = {}): Promise<FakeUpstream> {
  let resolveClosed!: (r: Received) => void;
  const fake: FakeUpstream = {
    url: '',
    port: 0,
    received: [],
    respond: options.respond ?? defaultReply,
    keepBodies: options.keepBodies ?? true,
    closed: new Promise((r) => {
      resolveClosed = r;
    }),
    close: async () => {},
  };
  const server = http.createServer((req, res) => {
    const hash = createHash('sha256');
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (c: Buffer) => {
      hash.update(c);
      bytes += c.length;
      if (fake.keepBodies) chunks.push(c);
    });
    req.on('end', () => {
      const rec: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        ...(fake.keepBodies ? { body: Buffer.concat(chunks) } : {}),
        bodyBytes: bytes,
        bodySha256: hash.digest('hex'),
        closedEarly: false,
        sent: [],
      };
      fake.received.push(rec);
      res.on('close', () => {
        if (!res.writableFinished) {
          rec.closedEarly = true;
          resolveClosed(rec);
        }
      });
      void answer(rec, res, fake.respond(rec));
    });
  });
  const write = (rec: Received, res: http.ServerResponse, chunk: string | Buffer) => {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, 'utf8');
    rec.sent.push(b);
    res.write(b);
  };
  async function answer(rec: Received, res: http.ServerResponse, reply: Reply): Promise<void> {
    switch (reply.kind) {
      case 'json':
      case 'raw': {
        const body =
          reply.kind === 'json'
            ? Buffer.from(JSON.stringify(reply.body))
            : Buffer.isBuffer(reply.body)
              ? reply.body
              : Buffer.from(reply.body);
        res.writeHead(reply.status ?? 200, {
          'content-type': 'application/json',
          'x-request-id': 'req_fake',
          'content-length': String(body.length),
          ...(reply.headers ?? {}),
        });
        rec.sent.push(body);
        res.end(body);
        return;
      }
      case 'sse':
      case 'reset':
      case 'hang': {
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          'x-request-id': 'req_fake',
          ...(reply.kind === 'sse' ? (reply.headers ?? {}) : {}),
        });
        res.flushHeaders();
        for (const c of reply.chunks) {
          if (res.destroyed) return;
          write(rec, res, c);
          const delay = reply.kind === 'hang' ? 0 : (reply.delayMs ?? 0);
          if (delay) await sleep(delay);
        }
        if (reply.kind === 'sse') res.end();
        else if (reply.kind === 'reset') res.socket?.resetAndDestroy();
        // hang: wait for the client to go away (the 'close' handler records it)
        return;
      }
    }
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.port = (server.address() as { port: number }).port;
  fake.url = `http://127.0.0.1:${fake.port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return fake;
}
