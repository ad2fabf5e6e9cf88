/**
 * The ChatGPT backend through the proxy, as Codex signed in with ChatGPT uses it: model calls on
 * `/backend-api/codex/responses` (zstd-compressed POSTs and the WebSocket) are projected, with the
 * marker of a Codex `exec` answer inside its JSON; every other path under `/backend-api/` (account
 * checks, plugins, analytics, remote compaction) goes to the ChatGPT upstream byte for byte. The
 * ChatGPT bearer token and account id reach the upstream and are written nowhere else.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { readSession, listSessions, startProxy, type RunningProxy, type Turn } from '../../src/proxy';
import { DEFAULT_CHATGPT_UPSTREAM, routeFor, upstreamUrl } from '../../src/proxy/routes';
import { FileStore } from '../../src/store';
import { recogniseMarker } from '../../src/engine/markers';
import { startFakeUpstream, type FakeUpstream, type Received } from './fake-upstream';
import { startFakeResponsesWs, type FakeResponsesWs } from './fake-responses-ws';
import { bigLog, rawRequest, until } from './support';
import { filesUnder } from '../support/files';
import { zstdStored } from '../support/zstd';

/** A ChatGPT access token as Codex sends it (a JWT; fake), and the account id header. */
const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJjaGF0Z3B0LXRlc3QtdG9rZW4tNzM1MSJ9.c2lnLWNoYXRncHQtNzM1MQ';
const ACCOUNT = 'acct-chatgpt-secret-7351';
const CHATGPT_HEADERS = {
  authorization: `Bearer ${TOKEN}`,
  'chatgpt-account-id': ACCOUNT,
  originator: 'codex_exec',
  'user-agent': 'codex_exec/0.171.0',
  'content-type': 'application/json',
};

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-chatgpt-'));
const log: string[] = [];
const turns: Turn[] = [];
let upstream: FakeUpstream;
let fakeWs: FakeResponsesWs;
let proxy: RunningProxy;
let wsProxy: RunningProxy;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  fakeWs = await startFakeResponsesWs();
  const common = {
    port: 0,
    openaiUpstream: 'http://127.0.0.1:9/v1',
    anthropicUpstream: 'http://127.0.0.1:9',
    log: (l: string) => log.push(l),
  };
  proxy = await startProxy({ ...common, storeDir: join(root, 'http', 'store'), chatgptUpstream: `${upstream.url}/backend-api` });
  wsProxy = await startProxy({ ...common, storeDir: join(root, 'ws', 'store'), chatgptUpstream: `${fakeWs.url}/backend-api` });
  proxy.on('turn', (t) => turns.push(t));
  wsProxy.on('turn', (t) => turns.push(t));
});

afterAll(async () => {
  await proxy?.close();
  await wsProxy?.close();
  await upstream?.close();
  await fakeWs?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const last = (): Received => upstream.received[upstream.received.length - 1]!;

/** Codex's `exec` answer: a header part, then the tool's JSON with the command's output. */
function execOutput(output: string, callId: string) {
  return {
    type: 'custom_tool_call_output',
    call_id: callId,
    output: [
      { type: 'input_text', text: 'Script completed\nWall time 0.2 seconds\nOutput:\n' },
      {
        type: 'input_text',
        text: JSON.stringify({ chunk_id: 'c1', wall_time_seconds: 0.01, exit_code: 0, original_token_count: 9000, output }),
      },
    ],
  };
}

function codexRequest(output: string, callId = 'call_exec_1') {
  return {
    model: 'gpt-6.2-sol',
    stream: true,
    store: false,
    input: [
      {
        type: 'additional_tools',
        role: 'developer',
        tools: [{ type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec' }] }],
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'run the tests' }] },
      { type: 'custom_tool_call', call_id: callId, name: 'exec', input: 'text(await tools.exec_command({cmd: "npm test"}))' },
      execOutput(output, callId),
    ],
  };
}

/** The `output` string inside the exec answer's JSON of a sent body. */
function innerOutput(body: string): string {
  const sent = JSON.parse(body) as { input: Array<{ output?: Array<{ text: string }> }> };
  return (JSON.parse(sent.input[3]!.output![1]!.text) as { output: string }).output;
}

describe('routes under /backend-api/', () => {
  it('sends /backend-api/X to the ChatGPT upstream as <base>/X, query kept, and projects only codex/responses', () => {
    const base = new URL('https://gw.example/chatgpt/backend-api');
    expect(upstreamUrl(base, 'chatgpt', '/backend-api/codex/responses?a=1').href).toBe(
      'https://gw.example/chatgpt/backend-api/codex/responses?a=1',
    );
    expect(routeFor('POST', '/backend-api/codex/responses', {})).toEqual({ provider: 'chatgpt', format: 'openai-responses', record: true });
    expect(routeFor('POST', '/backend-api/codex/responses/compact', {})).toEqual({ provider: 'chatgpt', record: false });
    expect(routeFor('GET', '/backend-api/wham/accounts/check', { 'x-api-key': 'k' })).toEqual({ provider: 'chatgpt', record: false });
  });

  it('defaults to https://chatgpt.com/backend-api', async () => {
    const p = await startProxy({ port: 0, sessionsDir: false });
    try {
      expect(p.chatgptUpstream).toBe(DEFAULT_CHATGPT_UPSTREAM);
      expect(DEFAULT_CHATGPT_UPSTREAM).toBe('https://chatgpt.com/backend-api');
    } finally {
      await p.close();
    }
  });
});

describe('Codex signed in with ChatGPT over HTTP', () => {
  it('projects a zstd model call: the marker goes inside the exec JSON, the rest byte for byte, the tokens forwarded', async () => {
    const output = bigLog(1500, 'chatgpt-http');
    const body = JSON.stringify(codexRequest(output));
    const r = await rawRequest(`${proxy.url}/backend-api/codex/responses`, {
      headers: { ...CHATGPT_HEADERS, 'content-encoding': 'zstd' },
      body: zstdStored(Buffer.from(body)),
    });
    expect(r.status).toBe(200);
    const got = last();
    expect(got.url).toBe('/backend-api/codex/responses');
    expect(got.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(got.headers['chatgpt-account-id']).toBe(ACCOUNT);
    expect(got.headers['content-encoding']).toBeUndefined();
    expect(got.headers['content-length']).toBe(String(got.body!.length));
    const sent = got.body!.toString('utf8');
    const marker = innerOutput(sent);
    const handle = recogniseMarker(marker)!;
    expect(handle).toBeTruthy();
    // the handle reads back the command's output exactly
    expect(new FileStore(join(root, 'http', 'store')).get(handle)).toBe(output);
    // everything but the output string is as Codex sent it
    const restored = JSON.parse(sent) as ReturnType<typeof codexRequest>;
    const part = restored.input[3] as ReturnType<typeof execOutput>;
    part.output[1]!.text = part.output[1]!.text.replace(JSON.stringify(marker), JSON.stringify(output));
    expect(restored).toEqual(JSON.parse(body));
    // the response came back as the upstream sent it, and the call is a turn
    expect(r.body.equals(Buffer.concat(got.sent))).toBe(true);
    await until(() => turns.some((t) => t.path === '/backend-api/codex/responses' && t.transport !== 'websocket'), 5000, 'the turn');
    const t = turns.find((x) => x.path === '/backend-api/codex/responses')!;
    expect(t.reductions).toHaveLength(1);
    expect(t.reductions[0]!.tool).toBe('exec');
  });

  it('passes every other /backend-api/ request through byte for byte, bodies, encodings and query included', async () => {
    const check = await rawRequest(`${proxy.url}/backend-api/wham/accounts/check?probe=1`, { method: 'GET', headers: CHATGPT_HEADERS });
    expect(last().url).toBe('/backend-api/wham/accounts/check?probe=1');
    expect(last().headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(check.body.equals(Buffer.concat(last().sent))).toBe(true);

    const events = zstdStored(Buffer.from(JSON.stringify({ events: [{ name: 'x', output: bigLog(1500, 'analytics') }] })));
    await rawRequest(`${proxy.url}/backend-api/codex/analytics-events/events`, {
      headers: { ...CHATGPT_HEADERS, 'content-encoding': 'zstd' },
      body: events,
    });
    expect(last().url).toBe('/backend-api/codex/analytics-events/events');
    expect(last().headers['content-encoding']).toBe('zstd');
    expect(last().body!.equals(events)).toBe(true);

    // remote compaction carries the whole history: it goes as Codex sent it, not projected
    const compact = Buffer.from(JSON.stringify(codexRequest(bigLog(1500, 'compact'))));
    await rawRequest(`${proxy.url}/backend-api/codex/responses/compact`, { headers: CHATGPT_HEADERS, body: compact });
    expect(last().url).toBe('/backend-api/codex/responses/compact');
    expect(last().body!.equals(compact)).toBe(true);
  });
});

describe('Codex signed in with ChatGPT but routed by openai_base_url (an older route, the shell alias)', () => {
  it('sends a ChatGPT-signed /v1/responses to the ChatGPT backend as <base>/codex/responses, projected', async () => {
    expect(routeFor('POST', '/v1/responses', { 'chatgpt-account-id': 'a' })).toEqual({
      provider: 'chatgpt',
      format: 'openai-responses',
      record: true,
    });
    expect(upstreamUrl(new URL('https://chatgpt.com/backend-api'), 'chatgpt', '/v1/models?client_version=1').href).toBe(
      'https://chatgpt.com/backend-api/codex/models?client_version=1',
    );
    // Anthropic's paths and API-key requests stay where they were
    expect(routeFor('POST', '/v1/messages', { 'chatgpt-account-id': 'a' }).provider).toBe('anthropic');
    expect(routeFor('POST', '/v1/responses', {}).provider).toBe('openai');
    const output = bigLog(1500, 'chatgpt-v1');
    await rawRequest(`${proxy.url}/v1/responses`, { headers: CHATGPT_HEADERS, body: JSON.stringify(codexRequest(output)) });
    expect(last().url).toBe('/backend-api/codex/responses');
    expect(last().headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(new FileStore(join(root, 'http', 'store')).get(recogniseMarker(innerOutput(last().body!.toString('utf8')))!)).toBe(output);
    await rawRequest(`${proxy.url}/v1/models?client_version=0.171.0`, { method: 'GET', headers: CHATGPT_HEADERS });
    expect(last().url).toBe('/backend-api/codex/models?client_version=0.171.0');
  });
});

describe('Codex signed in with ChatGPT over the WebSocket', () => {
  it('opens /backend-api/codex/responses upstream with the tokens and projects each response.create', async () => {
    const before = fakeWs.handshakes.length;
    const ws = new WebSocket(`${wsProxy.url.replace('http:', 'ws:')}/backend-api/codex/responses`, {
      headers: { ...CHATGPT_HEADERS, 'openai-beta': 'responses_websockets=2026-02-06' },
    });
    const messages: string[] = [];
    ws.on('message', (d) => messages.push((d as Buffer).toString('utf8')));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      const h = fakeWs.handshakes[before]!;
      expect(h.path).toBe('/backend-api/codex/responses');
      expect(h.headers.authorization).toBe(`Bearer ${TOKEN}`);
      expect(h.headers['chatgpt-account-id']).toBe(ACCOUNT);
      const output = bigLog(1500, 'chatgpt-ws');
      const sentBefore = fakeWs.received.length;
      ws.send(JSON.stringify({ type: 'response.create', ...codexRequest(output, 'call_ws_1') }));
      await until(() => messages.some((m) => m.includes('"response.completed"')), 10_000, 'response.completed');
      const got = JSON.parse(fakeWs.received[sentBefore]!.data.toString('utf8')) as { type: string };
      expect(got.type).toBe('response.create');
      const marker = innerOutput(JSON.stringify(got));
      expect(new FileStore(join(root, 'ws', 'store')).get(recogniseMarker(marker)!)).toBe(output);
    } finally {
      ws.close();
    }
  });
});

describe('secrets', () => {
  it('the ChatGPT token and account id are in no file Spillway wrote and not in its log', async () => {
    await until(() => turns.length >= 2, 5000, 'turns recorded');
    await proxy.close();
    await wsProxy.close();
    const files = filesUnder(root);
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const text = fs.readFileSync(f).toString('latin1');
      expect(text, f).not.toContain(TOKEN);
      expect(text, f).not.toContain(ACCOUNT);
    }
    expect(log.join('\n')).not.toContain(TOKEN);
    expect(log.join('\n')).not.toContain(ACCOUNT);
    const recorded = [join(root, 'http', 'sessions'), join(root, 'ws', 'sessions')].flatMap((d) =>
      listSessions(d).flatMap((s) => readSession(s.file)),
    );
    expect(recorded.length).toBeGreaterThanOrEqual(2);
    for (const t of recorded) expect(Object.keys(t.headers ?? {})).not.toContain('chatgpt-account-id');
  });
});
