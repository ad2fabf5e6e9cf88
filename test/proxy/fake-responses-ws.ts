/**
 * A fake OpenAI Responses provider on 127.0.0.1 that speaks the WebSocket mode (`GET /v1/responses`
 * upgraded, `response.create` in, the stream's events out, one per message) and, for the fallback,
 * plain `POST /v1/responses`. It records every handshake and message exactly as it arrived.
 *
 * Each `response.create` is answered like a model that calls a tool: `response.created`, a
 * `function_call` item (added, then done), a text delta, and `response.completed` with usage. The
 * events are written with unusual spacing so a relay that re-serialises them is caught.
 * Test-only messages steer it: `{"type":"test.close","code":N,"reason":"…"}` closes from the server
 * side, `{"type":"test.error"}` answers with an `error` event; a `response.create` for the model
 * `error-model` is answered with an `error` event, one for `silent` not at all.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

interface Handshake {
  path: string;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
}
interface WsMessage {
  data: Buffer;
  binary: boolean;
}

export interface FakeResponsesWs {
  url: string;
  handshakes: Handshake[];
  /** every message the fake received, per connection, in order */
  received: WsMessage[];
  /** every message the fake sent, in order */
  sent: WsMessage[];
  /** HTTP requests (the fallback), with their bodies */
  posts: { path: string; headers: http.IncomingHttpHeaders; body: string }[];
  closes: { code: number; reason: string }[];
  /** answer upgrades with this HTTP status instead of accepting them */
  refuseWith?: number;
  /** output items of the next responses, in order (a replayed session); without it each response calls `shell` */
  script?: unknown[][];
  /** open server-side sockets */
  sockets: Set<WebSocket>;
  close(): Promise<void>;
}

/** How the fake writes an event: valid JSON with spaces after commas, never what JSON.stringify makes. */
export const wire = (e: unknown): string => JSON.stringify(e).replace(/,"/g, ', "');

function responseEvents(n: number, model: string): unknown[] {
  const id = `resp_${n}`;
  return [
    { type: 'response.created', sequence_number: 0, response: { id, object: 'response', status: 'in_progress', model, output: [] } },
    {
      type: 'response.output_item.added',
      sequence_number: 1,
      output_index: 0,
      item: { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'shell', arguments: '', status: 'in_progress' },
    },
    {
      type: 'response.output_item.done',
      sequence_number: 2,
      output_index: 0,
      item: {
        type: 'function_call',
        id: `fc_${n}`,
        call_id: `call_${n}`,
        name: 'shell',
        arguments: '{"command":["cat","build.log"]}',
        status: 'completed',
      },
    },
    {
      type: 'response.output_text.delta',
      sequence_number: 3,
      item_id: `msg_${n}`,
      output_index: 1,
      content_index: 0,
      delta: `Reading the log (${n}).`,
    },
    {
      type: 'response.completed',
      sequence_number: 4,
      response: {
        id,
        object: 'response',
        status: 'completed',
        model,
        output: [{ type: 'function_call', call_id: `call_${n}`, name: 'shell', arguments: '{"command":["cat","build.log"]}' }],
        usage: {
          input_tokens: 1000 + n,
          input_tokens_details: { cached_tokens: 800 },
          output_tokens: 20 + n,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 1020 + 2 * n,
        },
      },
    },
  ];
}

/** A response whose output items are given (each sent as `response.output_item.done`). */
function scriptedEvents(n: number, model: string, output: unknown[]): unknown[] {
  const id = `resp_${n}`;
  return [
    { type: 'response.created', sequence_number: 0, response: { id, object: 'response', status: 'in_progress', model, output: [] } },
    ...output.map((item, i) => ({ type: 'response.output_item.done', sequence_number: i + 1, output_index: i, item })),
    {
      type: 'response.completed',
      sequence_number: output.length + 1,
      response: {
        id,
        object: 'response',
        status: 'completed',
        model,
        output,
        usage: { input_tokens: 500 + n, output_tokens: 10, total_tokens: 510 + n },
      },
    },
  ];
}

export async function startFakeResponsesWs(): Promise<FakeResponsesWs> {
  const fake: FakeResponsesWs = {
    url: '',
    handshakes: [],
    received: [],
    sent: [],
    posts: [],
    closes: [],
    sockets: new Set(),
    close: async () => {},
  };
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (b: Buffer) => chunks.push(b));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      fake.posts.push({ path: req.url ?? '/', headers: req.headers, body });
      const answer = JSON.stringify({
        id: 'resp_http',
        object: 'response',
        status: 'completed',
        output: [],
        usage: { input_tokens: 7, output_tokens: 3, total_tokens: 10 },
      });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(answer);
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    fake.handshakes.push({ path: req.url ?? '/', headers: req.headers, rawHeaders: req.rawHeaders });
    if (fake.refuseWith) {
      const body = JSON.stringify({ error: { message: 'no websockets here', type: 'invalid_request_error', code: null } });
      socket.end(
        `HTTP/1.1 ${fake.refuseWith} Nope\r\nContent-Type: application/json\r\nX-Fake: refused\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      fake.sockets.add(ws);
      const send = (data: Buffer, binary: boolean) => {
        fake.sent.push({ data, binary });
        ws.send(data, { binary });
      };
      // the error event OpenAI sends for a rate limit: asked for by a test.error message or the "error-model" model
      const sendRateLimited = () =>
        send(
          Buffer.from(
            wire({
              type: 'error',
              status: 429,
              error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'Slow down.' },
            }),
          ),
          false,
        );
      ws.on('message', (raw, binary) => {
        const data = raw as Buffer;
        fake.received.push({ data, binary });
        if (binary) {
          send(Buffer.from(data), true);
          return;
        }
        let msg: Record<string, unknown> | undefined;
        try {
          msg = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
        } catch {
          msg = undefined;
        }
        if (!msg) {
          send(Buffer.from(`echo:${data.toString('utf8')}`), false);
          return;
        }
        if (msg.type === 'test.close') {
          ws.close(msg.code as number, msg.reason as string);
          return;
        }
        if (msg.type === 'test.error') {
          sendRateLimited();
          return;
        }
        if (msg.type !== 'response.create') return;
        // model "error-model" is answered with an error event, "silent" not at all
        if (msg.model === 'error-model') {
          sendRateLimited();
          return;
        }
        if (msg.model === 'silent') return;
        count++;
        const scripted = fake.script?.shift();
        const events = scripted ? scriptedEvents(count, String(msg.model), scripted) : responseEvents(count, String(msg.model));
        for (const e of events) send(Buffer.from(wire(e)), false);
      });
      ws.on('close', (code, reason) => {
        fake.closes.push({ code, reason: reason.toString('utf8') });
        fake.sockets.delete(ws);
      });
    });
  });
  wss.on('headers', (headers) => {
    headers.push('x-codex-turn-state: ts-abc', 'openai-model: gpt-5-codex');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = async () => {
    for (const s of fake.sockets) s.terminate();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    wss.close();
  };
  return fake;
}
