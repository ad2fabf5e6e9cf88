/**
 * The Responses WebSocket mode through the proxy, as Codex uses it: a real WebSocket client (`ws`,
 * and the official `openai` SDK's `ResponsesWS`) opens `GET /v1/responses` on the proxy, which
 * opens the same WebSocket on a fake provider on 127.0.0.1 that records what it received.
 */
import * as fs from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { listSessions, readBody, readSession, startProxy, type RunningProxy, type Turn } from '../../src/proxy';
import { FileStore } from '../../src/store';
import { startFakeResponsesWs, wire, type FakeResponsesWs } from './fake-responses-ws';
import { OPENAI_KEY, ORG_SECRET, SECRETS, SYSTEM, bigLog, until } from './support';
import { filesUnder } from '../support/files';
import { HANDLE_IN_TEXT as MARKER } from '../../src/engine/handle';
import { expectSome } from '../support/expect';
import { SHORT_SESSIONS } from '../support/corpus';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-proxy-ws-'));
const storeDir = join(root, 'store');
const sessionsDir = join(root, 'sessions');
const logLines: string[] = [];
let fake: FakeResponsesWs;
let proxy: RunningProxy;
const turns: Turn[] = [];
const TIMEOUT = 10_000;

beforeAll(async () => {
  fake = await startFakeResponsesWs();
  proxy = await startProxy({
    port: 0,
    storeDir,
    openaiUpstream: `${fake.url}/v1`,
    anthropicUpstream: fake.url,
    log: (l) => logLines.push(l),
  });
  proxy.on('turn', (t) => turns.push(t));
});

afterAll(async () => {
  await proxy?.close();
  await fake?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const HEADERS = {
  Authorization: `Bearer ${OPENAI_KEY}`,
  'OpenAI-Organization': ORG_SECRET,
  'OpenAI-Beta': 'responses_websockets=2026-02-06',
  originator: 'codex_exec',
  session_id: 'thread-ws-1',
};

interface Client {
  ws: WebSocket;
  messages: { data: Buffer; binary: boolean }[];
  closed: Promise<{ code: number; reason: string }>;
  upgradeHeaders: http.IncomingHttpHeaders;
}

/** Opens a WebSocket to the proxy like Codex does, bounded in time. */
async function connect(path = '/v1/responses', headers: Record<string, string> = HEADERS): Promise<Client> {
  const ws = new WebSocket(`${proxy.url.replace('http:', 'ws:')}${path}`, { headers, perMessageDeflate: true });
  const messages: Client['messages'] = [];
  ws.on('message', (data, binary) => messages.push({ data: data as Buffer, binary }));
  const closed = new Promise<{ code: number; reason: string }>((r) =>
    ws.on('close', (code, reason) => r({ code, reason: reason.toString('utf8') })),
  );
  const upgradeHeaders = await new Promise<http.IncomingHttpHeaders>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no upgrade within the time limit')), TIMEOUT);
    ws.once('upgrade', (res) => {
      clearTimeout(timer);
      resolve(res.headers);
    });
    ws.once('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
  });
  await new Promise<void>((r) => (ws.readyState === WebSocket.OPEN ? r() : ws.once('open', () => r())));
  return { ws, messages, closed, upgradeHeaders };
}

const completions = (c: Client) => c.messages.filter((m) => !m.binary && m.data.includes('"response.completed"')).length;

/** Sends a message and waits for the turn's `response.completed` to come back. */
async function turn(c: Client, body: Record<string, unknown>): Promise<void> {
  const before = completions(c);
  c.ws.send(JSON.stringify({ type: 'response.create', ...body }));
  await until(() => completions(c) > before, TIMEOUT, 'response.completed');
}

const firstCreate = (output: string) => ({
  model: 'gpt-5-codex',
  instructions: SYSTEM,
  store: false,
  stream: true,
  tool_choice: 'auto',
  parallel_tool_calls: false,
  input: [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Build it and tell me what fails.' }] },
    { type: 'function_call', call_id: 'call_pre', name: 'shell', arguments: '{"command":["make"]}' },
    { type: 'function_call_output', call_id: 'call_pre', output },
  ],
  tools: [{ type: 'function', name: 'shell', description: 'Run a command', parameters: { type: 'object', properties: {} }, strict: false }],
});

const continuation = (prev: string, items: unknown[]) => ({
  model: 'gpt-5-codex',
  instructions: SYSTEM,
  store: false,
  stream: true,
  tool_choice: 'auto',
  parallel_tool_calls: false,
  previous_response_id: prev,
  input: items,
  tools: [{ type: 'function', name: 'shell', description: 'Run a command', parameters: { type: 'object', properties: {} }, strict: false }],
});

describe('the Responses WebSocket mode, projected', () => {
  let client: Client;
  const outputs = [bigLog(1200, 'ws-first'), bigLog(1500, 'ws-second'), 'x'.repeat(3000) + '\nsame output twice\n'];

  it("opens the same WebSocket upstream with the auth and beta headers, and passes the upstream's handshake headers back", async () => {
    const before = fake.handshakes.length;
    client = await connect();
    const h = fake.handshakes[before]!;
    expect(h.path).toBe('/v1/responses');
    expect(h.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    expect(h.headers['openai-organization']).toBe(ORG_SECRET);
    expect(h.headers['openai-beta']).toBe('responses_websockets=2026-02-06');
    expect(h.headers.originator).toBe('codex_exec');
    expect(h.headers.host).toBe(new URL(fake.url).host);
    expect(client.upgradeHeaders['x-codex-turn-state']).toBe('ts-abc');
    expect(client.upgradeHeaders['openai-model']).toBe('gpt-5-codex');
  });

  it('projects the first response.create: the big output reaches the upstream as a marker whose handle reads back exact', async () => {
    const sentBefore = fake.received.length;
    await turn(client, firstCreate(outputs[0]!));
    const got = JSON.parse(fake.received[sentBefore]!.data.toString('utf8')) as Record<string, any>;
    expect(got.type).toBe('response.create');
    const out = got.input[2].output as string;
    expect(out.length).toBeLessThan(outputs[0]!.length / 5);
    expect(out).toMatch(/shell output offloaded/);
    const handle = out.match(MARKER)![0];
    expect(new FileStore(storeDir).get(handle)).toBe(outputs[0]);
    // everything else as the client sent it
    expect({ ...got, input: [got.input[0], got.input[1]] }).toEqual({
      type: 'response.create',
      ...firstCreate(''),
      input: firstCreate('').input.slice(0, 2),
    });
  });

  it("projects a continuation: new items only, previous_response_id passed through, the tool named from the upstream's function_call", async () => {
    const sentBefore = fake.received.length;
    await turn(client, continuation('resp_1', [{ type: 'function_call_output', call_id: 'call_1', output: outputs[1] }]));
    const raw = fake.received[sentBefore]!.data.toString('utf8');
    const got = JSON.parse(raw) as Record<string, any>;
    expect(got.previous_response_id).toBe('resp_1');
    expect(got.input).toHaveLength(1);
    expect(got.input[0].call_id).toBe('call_1');
    const out = got.input[0].output as string;
    // the call came from the upstream's output_item.done event: `shell`, not an unknown tool
    expect(out).toMatch(/^\[spillway: shell output offloaded/);
    expect(new FileStore(storeDir).get(out.match(MARKER)![0])).toBe(outputs[1]);
    // the context the engine saw is cut off again: nothing but the client's own item went up
    expect(raw).not.toContain('call_pre');
  });

  it('dedupes an output identical to one sent verbatim in an earlier message of the session', async () => {
    const before = fake.received.length;
    await turn(client, continuation('resp_2', [{ type: 'function_call_output', call_id: 'call_2', output: outputs[2] }]));
    await turn(client, continuation('resp_3', [{ type: 'function_call_output', call_id: 'call_3', output: outputs[2] }]));
    const [first, second] = fake.received.slice(before).map((m) => JSON.parse(m.data.toString('utf8')) as Record<string, any>);
    expect(first!.input[0].output).toBe(outputs[2]);
    const ref = second!.input[0].output as string;
    expect(ref).toMatch(/identical to the shell output of call call_2/);
    expect(new FileStore(storeDir).get(ref.match(MARKER)![0])).toBe(outputs[2]);
  });

  it('passes every server event back byte for byte and in order', () => {
    const fromUpstream = fake.sent.filter((m) => !m.binary).map((m) => m.data.toString('utf8'));
    const atClient = client.messages.filter((m) => !m.binary).map((m) => m.data.toString('utf8'));
    expect(atClient.length).toBeGreaterThanOrEqual(20);
    expect(atClient).toEqual(fromUpstream.slice(fromUpstream.length - atClient.length));
    expect(atClient[0]).toBe(wire(JSON.parse(atClient[0]!)));
    expect(atClient.map((t) => (JSON.parse(t) as { sequence_number: number }).sequence_number)).toEqual(
      Array.from({ length: atClient.length }, (_, i) => i % 5),
    );
  });

  it('records each response.create as a turn of one session, with the usage from response.completed', async () => {
    await until(() => turns.filter((t) => t.transport === 'websocket').length >= 4, TIMEOUT, 'four WebSocket turns');
    const ws = turns.filter((t) => t.transport === 'websocket');
    expect(new Set(ws.map((t) => t.session)).size).toBe(1);
    expect(ws.map((t) => t.turn)).toEqual([1, 2, 3, 4]);
    expect(ws.map((t) => t.responseId)).toEqual(['resp_1', 'resp_2', 'resp_3', 'resp_4']);
    expect(ws.map((t) => t.previousResponseId)).toEqual([undefined, 'resp_1', 'resp_2', 'resp_3']);
    expect(ws[1]!.usage).toEqual({ inputTokens: 1002, outputTokens: 22, cachedTokens: 800 });
    expect(ws[1]!.reductions).toHaveLength(1);
    expect(ws[1]!.reductions[0]).toMatchObject({ callId: 'call_1', tool: 'shell', stage: 'offload', result: 0 });
    expect(ws[1]!.stats!.toolResults).toBe(1);
    expect(ws[1]!.projectedTokens!).toBeLessThan(ws[1]!.originalTokens! / 5);
    expect(ws[2]!.reductions).toHaveLength(0);
    expect(ws[1]!.headers!['openai-beta']).toBe('responses_websockets=2026-02-06');
    // on disk as the inspector reads it, with the bodies as sent and as forwarded
    const file = listSessions(sessionsDir).find((s) => s.session === ws[0]!.session)!.file;
    const onDisk = readSession(file);
    expect(onDisk.map((t) => t.turn)).toEqual([1, 2, 3, 4]);
    expect(onDisk[1]!.usage?.inputTokens).toBe(1002);
    const sent = JSON.parse(readBody(sessionsDir, onDisk[1]!.requestRef!)) as Record<string, any>;
    expect(sent.input[0].output).toBe(outputs[1]);
    expect(readBody(sessionsDir, onDisk[1]!.projectionRef!)).toBe(
      fake.received.find((m) => m.data.includes('"previous_response_id":"resp_1"'))!.data.toString('utf8'),
    );
  });

  it('gives a new conversation on the same connection its own session', async () => {
    const n = turns.length;
    await turn(client, { ...firstCreate('short'), instructions: `${SYSTEM} Another task.` });
    await until(() => turns.length > n, TIMEOUT, 'the turn');
    const t = turns[turns.length - 1]!;
    expect(t.session).not.toBe(turns.find((x) => x.transport === 'websocket')!.session);
    expect(t.turn).toBe(1);
    expect(t.stats!.unchanged).toBe(true);
  });

  it('forwards messages that are not JSON, binary messages and other message types unchanged', async () => {
    const before = fake.received.length;
    client.ws.send('not json {');
    client.ws.send(Buffer.from([0, 1, 2, 250]), { binary: true });
    const processed = '{"type":"response.processed",  "response_id":"resp_4"}';
    client.ws.send(processed);
    await until(() => fake.received.length >= before + 3, TIMEOUT, 'three messages upstream');
    const got = fake.received.slice(before);
    expect(got[0]).toEqual({ data: Buffer.from('not json {'), binary: false });
    expect(got[1]).toEqual({ data: Buffer.from([0, 1, 2, 250]), binary: true });
    expect(got[2]!.data.toString('utf8')).toBe(processed);
    await until(() => client.messages.some((m) => m.binary), TIMEOUT, 'the binary echo');
    expect(client.messages.some((m) => m.data.toString('utf8') === 'echo:not json {')).toBe(true);
    expect(logLines.some((l) => /not a JSON object; forwarded unchanged/.test(l))).toBe(true);
    expect(logLines.some((l) => /"response\.processed" messages are not projected; forwarded unchanged/.test(l))).toBe(true);
  });

  it("closes the upstream with the client's close code and reason", async () => {
    const n = fake.closes.length;
    client.ws.close(4000, 'client done');
    expect(await client.closed).toEqual({ code: 4000, reason: 'client done' });
    await until(() => fake.closes.length > n, TIMEOUT, 'the upstream close');
    expect(fake.closes[fake.closes.length - 1]).toEqual({ code: 4000, reason: 'client done' });
  });
});

describe('error frames and closes from the upstream', () => {
  it('passes an error event back byte for byte and records the turn with its error and status', async () => {
    const c = await connect();
    const n = turns.length;
    c.ws.send(
      JSON.stringify({ type: 'response.create', model: 'error-model', instructions: 'E', input: [], previous_response_id: 'resp_gone' }),
    );
    await until(() => turns.length > n, TIMEOUT, 'the turn');
    expect(c.messages.map((m) => m.data.toString('utf8'))).toEqual([
      wire({ type: 'error', status: 429, error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'Slow down.' } }),
    ]);
    const t = turns[turns.length - 1]!;
    expect(t.status).toBe(429);
    expect(t.error).toMatch(/Slow down\./);
    expect(t.previousResponseId).toBe('resp_gone');
    c.ws.close();
    await c.closed;
  });

  it("closes the client with the upstream's close code and reason, and finishes the open turn with it", async () => {
    const c = await connect();
    const n = turns.length;
    c.ws.send(JSON.stringify({ type: 'response.create', model: 'silent', instructions: 'close test', input: [] }));
    c.ws.send(JSON.stringify({ type: 'test.close', code: 4001, reason: 'upstream bye' }));
    expect(await c.closed).toEqual({ code: 4001, reason: 'upstream bye' });
    await until(() => turns.length > n, TIMEOUT, 'the turn');
    expect(turns[turns.length - 1]!.error).toMatch(/the upstream closed the WebSocket \(4001 upstream bye\)/);
  });
});

describe('an upstream that refuses the upgrade', () => {
  it('passes its status and body to the client, so the client falls back to HTTP as it would without Spillway', async () => {
    fake.refuseWith = 404;
    try {
      const ws = new WebSocket(`${proxy.url.replace('http:', 'ws:')}/v1/responses`, { headers: HEADERS });
      const res = await new Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no answer')), TIMEOUT);
        ws.on('unexpected-response', (_req, r) => {
          let body = '';
          r.on('data', (b: Buffer) => {
            body += b.toString();
          });
          r.on('end', () => {
            clearTimeout(timer);
            resolve({ status: r.statusCode!, body, headers: r.headers });
          });
        });
        ws.on('error', () => {});
      });
      expect(res.status).toBe(404);
      expect(res.headers['x-fake']).toBe('refused');
      expect(JSON.parse(res.body).error.message).toBe('no websockets here');
    } finally {
      fake.refuseWith = undefined;
    }
  });
});

describe('spillway.proxy.websockets = refuse', () => {
  it('answers the upgrade 426 with a JSON error, and the HTTP request that follows is projected', async () => {
    proxy.setWebsockets('refuse');
    try {
      const before = fake.handshakes.length;
      const ws = new WebSocket(`${proxy.url.replace('http:', 'ws:')}/v1/responses`, { headers: HEADERS });
      const res = await new Promise<{ status: number; body: string; type?: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no answer')), TIMEOUT);
        ws.on('unexpected-response', (_req, r) => {
          let body = '';
          r.on('data', (b: Buffer) => {
            body += b.toString();
          });
          r.on('end', () => {
            clearTimeout(timer);
            resolve({ status: r.statusCode!, body, type: r.headers['content-type'] });
          });
        });
        ws.on('error', () => {});
      });
      expect(res.status).toBe(426);
      expect(res.type).toBe('application/json');
      expect(JSON.parse(res.body).error.code).toBe('websockets_refused');
      expect(fake.handshakes.length).toBe(before);
      // the fallback: the same call over HTTP, every stage applies
      const output = bigLog(1500, 'http-fallback');
      const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${proxy.url}/v1`, maxRetries: 0, timeout: TIMEOUT });
      const body = firstCreate(output);
      const answer = await openai.responses.create({ ...(body as any), stream: false });
      expect(answer.id).toBe('resp_http');
      const posted = JSON.parse(fake.posts[fake.posts.length - 1]!.body) as Record<string, any>;
      const handle = (posted.input[2].output as string).match(MARKER)![0];
      expect(new FileStore(storeDir).get(handle)).toBe(output);
    } finally {
      proxy.setWebsockets('project');
    }
  });
});

describe("the official openai SDK's ResponsesWS client", () => {
  it('works through the proxy, and its big tool output is projected', async () => {
    const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${proxy.url}/v1`, maxRetries: 0 });
    const rws = new ResponsesWS(openai);
    const events: string[] = [];
    const done = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no response.completed')), TIMEOUT);
      rws.on('event', (e: { type: string }) => {
        events.push(e.type);
        if (e.type === 'response.completed') {
          clearTimeout(timer);
          resolve();
        }
      });
      rws.on('error', (e: Error) => {
        clearTimeout(timer);
        reject(e);
      });
    });
    const before = fake.received.length;
    const output = bigLog(1300, 'sdk');
    await new Promise<void>((r) => rws.socket.on('open', () => r()));
    rws.send({ type: 'response.create', ...(firstCreate(output) as any) });
    await done;
    rws.close();
    expect(events).toEqual([
      'response.created',
      'response.output_item.added',
      'response.output_item.done',
      'response.output_text.delta',
      'response.completed',
    ]);
    const got = JSON.parse(fake.received[before]!.data.toString('utf8')) as Record<string, any>;
    const handle = (got.input[2].output as string).match(MARKER)![0];
    expect(new FileStore(storeDir).get(handle)).toBe(output);
  });
});

/** The Codex rollout fixture's Responses items, cut into model calls as Codex sends them over the WebSocket. */
function codexCalls(): { input: Record<string, any>[]; output: Record<string, any>[] }[] {
  const file = SHORT_SESSIONS['ai-sessions__codex-pomodor-timer.jsonl']!;
  const items = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; payload: Record<string, any> })
    .filter((r) => r.type === 'response_item')
    .map((r) => r.payload);
  const fromModel = (it: Record<string, any>) =>
    it.type !== 'function_call_output' && it.type !== 'custom_tool_call_output' && !(it.type === 'message' && it.role !== 'assistant');
  const calls: { input: Record<string, any>[]; output: Record<string, any>[] }[] = [];
  for (const it of items) {
    const last = calls[calls.length - 1];
    if (fromModel(it)) {
      if (last) last.output.push(it);
      continue;
    }
    if (!last || last.output.length) calls.push({ input: [it], output: [] });
    else last.input.push(it);
  }
  return calls;
}

describe('a real Codex session replayed over the WebSocket', () => {
  it('sends every output over its cap as a marker that reads back exact, the rest byte for byte, as the HTTP path would', async () => {
    const dir = fs.mkdtempSync(join(root, 'codex-'));
    const config = { defaultCap: 2000 };
    const p2 = await startProxy({
      port: 0,
      storeDir: join(dir, 'store'),
      openaiUpstream: `${fake.url}/v1`,
      config,
      log: (l) => logLines.push(l),
    });
    const recorded: Turn[] = [];
    p2.on('turn', (t) => recorded.push(t));
    try {
      const calls = codexCalls();
      expect(calls.length).toBeGreaterThan(15);
      fake.script = calls.map((c) => c.output);
      const ws = new WebSocket(`${p2.url.replace('http:', 'ws:')}/v1/responses`, { headers: HEADERS });
      const seen: string[] = [];
      ws.on('message', (d) => seen.push((d as Buffer).toString('utf8')));
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      const before = fake.received.length;
      let prev: string | undefined;
      for (const [i, c] of calls.entries()) {
        const done = seen.filter((t) => t.includes('"response.completed"')).length;
        ws.send(
          JSON.stringify({
            type: 'response.create',
            model: 'gpt-5-codex',
            instructions: SYSTEM,
            ...(prev ? { previous_response_id: prev } : {}),
            input: c.input,
            store: false,
          }),
        );
        await until(() => seen.filter((t) => t.includes('"response.completed"')).length > done, TIMEOUT, `response ${i + 1}`);
        prev = (JSON.parse(seen.filter((t) => t.includes('"response.completed"')).pop()!) as { response: { id: string } }).response.id;
      }
      ws.close();
      const got = fake.received.slice(before).map((m) => JSON.parse(m.data.toString('utf8')) as Record<string, any>);
      expect(got).toHaveLength(calls.length);
      // what HTTP would have sent for the same items: the whole conversation, projected with the stages that act on arrival
      const full = calls.flatMap((c) => [...c.input, ...c.output]);
      const { createEngine } = await import('../../src/engine');
      const { arrivalEngine } = await import('../../src/proxy');
      const overHttp = arrivalEngine(createEngine(config, { store: new FileStore(join(dir, 'store')) })).project(
        { model: 'gpt-5-codex', instructions: SYSTEM, input: full },
        'openai-responses',
      ).request as { input: Record<string, any>[] };
      const viaHttp = new Map(
        overHttp.input.filter((it) => typeof it.output === 'string').map((it) => [it.call_id as string, it.output as string]),
      );
      const store = new FileStore(join(dir, 'store'));
      let reduced = 0,
        verbatim = 0;
      for (const [i, c] of calls.entries()) {
        expect(got[i]!.input).toHaveLength(c.input.length);
        c.input.forEach((item, j) => {
          const sent = got[i]!.input[j] as Record<string, any>;
          if (typeof item.output !== 'string') {
            expect(sent).toEqual(item);
            return;
          }
          expect(sent.output).toBe(viaHttp.get(item.call_id));
          if (item.output.length > 2000) {
            reduced++;
            expect(sent.output).toMatch(/^\[spillway: shell output offloaded/);
            expect(store.get((sent.output as string).match(MARKER)![0])).toBe(item.output);
          } else {
            verbatim++;
            expect(sent).toEqual(item);
          }
        });
      }
      expect(reduced).toBe(2);
      expect(verbatim).toBeGreaterThan(15);
      await until(() => recorded.length === calls.length, TIMEOUT, 'every turn recorded');
      expect(new Set(recorded.map((t) => t.session)).size).toBe(1);
      expect(recorded.reduce((n, t) => n + t.reductions.length, 0)).toBe(2);
      expect(recorded.every((t) => t.usage?.inputTokens !== undefined)).toBe(true);
    } finally {
      fake.script = undefined;
      await p2.close();
    }
  });
});

describe('when no stage can act, or the engine cannot read the message', () => {
  it('says so in the log and the recording when a result over its cap goes upstream verbatim (offload off)', async () => {
    const dir = fs.mkdtempSync(join(root, 'budget-'));
    const lines: string[] = [];
    const p2 = await startProxy({
      port: 0,
      storeDir: join(dir, 'store'),
      openaiUpstream: `${fake.url}/v1`,
      config: { preset: 'clark-budget' },
      log: (l) => lines.push(l),
    });
    const recorded: Turn[] = [];
    p2.on('turn', (t) => recorded.push(t));
    try {
      const ws = new WebSocket(`${p2.url.replace('http:', 'ws:')}/v1/responses`, { headers: HEADERS });
      await new Promise<void>((resolve, reject) => {
        ws.once('open', () => resolve());
        ws.once('error', reject);
      });
      const output = bigLog(2500, 'budget');
      const before = fake.received.length;
      ws.send(JSON.stringify({ type: 'response.create', ...firstCreate(output) }));
      await until(() => recorded.length === 1, TIMEOUT, 'the turn');
      ws.close();
      expect((JSON.parse(fake.received[before]!.data.toString('utf8')) as Record<string, any>).input[2].output).toBe(output);
      expect(recorded[0]!.unprojected).toMatch(/1 result over its cap went upstream verbatim: shell call_pre \(\d[\d,]+ chars\)/);
      expectSome(lines, (l) => /went upstream verbatim/.test(l) && /websockets to refuse/.test(l), 'log lines');
    } finally {
      await p2.close();
    }
  });

  it('forwards a response.create the engine cannot read unchanged, and records why', async () => {
    const c = await connect();
    const n = turns.length;
    const before = fake.received.length;
    const odd = '{"type":"response.create","model":"gpt-5-codex","instructions":"odd","input":{"not":"a list"}}';
    c.ws.send(odd);
    await until(() => turns.length > n, TIMEOUT, 'the turn');
    expect(fake.received[before]!.data.toString('utf8')).toBe(odd);
    const t = turns[turns.length - 1]!;
    expect(t.failOpen).toMatch(/the engine cannot read the message/);
    expect(logLines.some((l) => /fail open on WebSocket \/v1\/responses response\.create/.test(l))).toBe(true);
    c.ws.close();
    await c.closed;
  });
});

describe('other WebSocket paths and the front door', () => {
  it('relays a WebSocket on another path as it is, without projecting or recording', async () => {
    const c = await connect('/v1/realtime?model=gpt-realtime');
    expect(fake.handshakes[fake.handshakes.length - 1]!.path).toBe('/v1/realtime?model=gpt-realtime');
    const n = turns.length;
    const before = fake.received.length;
    const create = JSON.stringify({ type: 'response.create', ...firstCreate(bigLog(1500, 'realtime')) });
    c.ws.send(create);
    await until(() => c.messages.some((m) => m.data.includes('"response.completed"')), TIMEOUT, 'the answer');
    expect(fake.received[before]!.data.toString('utf8')).toBe(create);
    expect(turns.length).toBe(n);
    c.ws.close();
    await c.closed;
  });

  it('answers 403 when the front door check refuses the upgrade, before anything goes upstream', async () => {
    const { createUpgradeHandler } = await import('../../src/proxy');
    const { createEngine } = await import('../../src/engine');
    const lines: string[] = [];
    const handler = createUpgradeHandler({
      mode: () => 'project',
      engine: () => createEngine(),
      bases: {
        openai: new URL(`${fake.url}/v1`),
        anthropic: new URL(fake.url),
        chatgpt: new URL(`${fake.url}/backend-api`),
        gemini: new URL(fake.url),
      },
      maxBody: 1 << 20,
      log: (l) => lines.push(l),
      nextTurn: () => 1,
      record: async () => {},
      refuse: (req) => (req.headers.origin ? `refused origin ${req.headers.origin}` : undefined),
    });
    const server = http.createServer();
    server.on('upgrade', (req, socket, head) => handler.handle(req, socket, head));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const before = fake.handshakes.length;
      const port = (server.address() as { port: number }).port;
      const ws = new WebSocket(`ws://127.0.0.1:${port}/v1/responses`, { headers: HEADERS, origin: 'https://evil.example' });
      const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('no answer')), TIMEOUT);
        ws.on('unexpected-response', (_q, r) => {
          let body = '';
          r.on('data', (b: Buffer) => {
            body += b.toString();
          });
          r.on('end', () => {
            clearTimeout(timer);
            resolve({ status: r.statusCode!, body });
          });
        });
        ws.on('error', () => {});
      });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).error.message).toBe('refused origin https://evil.example');
      expect(fake.handshakes.length).toBe(before);
      expect(lines.some((l) => l.startsWith('proxy: 403 on a WebSocket upgrade of /v1/responses'))).toBe(true);
    } finally {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('the proxy itself refuses an upgrade from a web page or for a foreign Host with 403, before anything goes upstream', async () => {
    const before = fake.handshakes.length;
    const answer = (url: string, options: WebSocket.ClientOptions) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(url, options);
        const timer = setTimeout(() => reject(new Error('no answer')), TIMEOUT);
        ws.on('unexpected-response', (_q, r) => {
          clearTimeout(timer);
          r.resume();
          resolve(r.statusCode!);
        });
        ws.on('open', () => {
          clearTimeout(timer);
          ws.close();
          resolve(101);
        });
        ws.on('error', () => {});
      });
    const wsUrl = `${proxy.url.replace('http:', 'ws:')}/v1/responses`;
    expect(await answer(wsUrl, { headers: HEADERS, origin: 'https://evil.example' })).toBe(403);
    expect(await answer(wsUrl, { headers: { ...HEADERS, host: 'evil.example' } })).toBe(403);
    expect(fake.handshakes.length).toBe(before);
  });
});

describe('secrets', () => {
  it('never writes the key or the organization to the store, the recordings or the log', async () => {
    await until(() => turns.length > 0, TIMEOUT, 'turns');
    const files = filesUnder(root);
    expect(files.length).toBeGreaterThan(5);
    for (const f of files) {
      const text = fs.readFileSync(f, 'utf8');
      for (const s of SECRETS) expect(text.includes(s), `${s} in ${f}`).toBe(false);
    }
    const log = logLines.join('\n');
    expect(log).toMatch(/WebSocket/);
    for (const s of SECRETS) expect(log.includes(s)).toBe(false);
    for (const t of turns) for (const s of SECRETS) expect(JSON.stringify(t).includes(s)).toBe(false);
  });
});
