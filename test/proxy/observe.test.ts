/**
 * Observe mode (issue 21): the proxy forwards every request byte for byte, over HTTP and over the
 * Responses WebSocket, and records what Spillway would have sent; switching to project mode while
 * it runs projects the next call.
 */
import * as fs from 'node:fs';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';
import { readBody, type RunningProxy, type Turn } from '../../src/proxy';
import { FileStore } from '../../src/store/store';
import { ProxySource } from '../../src/extension/inspector/proxySource';
import { parseConfig } from '../../src/engine/config';
import type { FakeUpstream } from './fake-upstream';
import type { FakeResponsesWs } from './fake-responses-ws';
import { proxyBetweenFakes, type ProxyBetweenFakes } from './between-fakes';
import { OPENAI_KEY, SYSTEM, anthropicRequest, bigLog, openResponsesWebSocket, rawRequest, until } from './support';

const TIMEOUT = 10_000;
const root = fs.mkdtempSync(join(tmpdir(), 'spillway-proxy-observe-'));
const storeDir = join(root, 'store');
const sessionsDir = join(root, 'sessions');
let fakes: ProxyBetweenFakes;
let turns: Turn[];
let upstream: FakeUpstream;
let fakeWs: FakeResponsesWs;
let proxy: RunningProxy;

beforeAll(async () => {
  fakes = await proxyBetweenFakes({ storeDir, mode: 'observe' });
  ({ proxy, upstream, fakeWs, turns } = fakes);
});

afterAll(async () => {
  await fakes?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

async function send(body: Buffer, headers: Record<string, string> = {}) {
  const before = upstream.received.length;
  const turnsBefore = turns.length;
  const res = await rawRequest(`${proxy.url}/v1/messages`, {
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01', ...headers },
    body,
  });
  expect(res.status).toBe(200);
  await until(() => turns.length > turnsBefore, TIMEOUT, 'the turn');
  return { got: upstream.received[before]!, turn: turns[turns.length - 1]! };
}

describe('observe mode over HTTP', () => {
  it('forwards a request byte for byte, compressed bodies and headers included', async () => {
    const body = gzipSync(Buffer.from(JSON.stringify(anthropicRequest(bigLog(1500, 'observe-gzip')))));
    const { got } = await send(body, { 'content-encoding': 'gzip', 'x-custom': 'kept' });
    expect(got.bodySha256).toBe(sha(body));
    expect(got.headers['content-encoding']).toBe('gzip');
    expect(got.headers['content-length']).toBe(String(body.length));
    expect(got.headers['x-custom']).toBe('kept');
  });

  it('records what Spillway would have sent: an observed turn whose projection holds the marker', async () => {
    const output = bigLog(1500, 'observe-record');
    const body = Buffer.from(JSON.stringify(anthropicRequest(output)));
    const { got, turn } = await send(body);
    expect(got.body!.equals(body)).toBe(true);
    expect(turn.observed).toBe(true);
    expect(turn.reductions.map((r) => r.tool)).toEqual(['Bash']);
    expect(turn.projectedBytes).toBeLessThan(turn.originalBytes / 5);
    expect(turn.stats!.projectedTokens).toBeLessThan(turn.stats!.originalTokens);
    expect(readBody(sessionsDir, turn.requestRef!)).toBe(body.toString('utf8'));
    const wouldSend = readBody(sessionsDir, turn.projectionRef!);
    expect(wouldSend).toMatch(HANDLE_IN_TEXT);
    expect(wouldSend).not.toContain(output);
  });

  it('writes no output to the store: nothing it observed was sent as a handle', async () => {
    await send(Buffer.from(JSON.stringify(anthropicRequest(bigLog(1500, 'observe-store')))));
    expect(new FileStore(storeDir).list()).toEqual([]);
  });

  it('projects the next call once switched to project mode, and observes again once switched back', async () => {
    const body = Buffer.from(JSON.stringify(anthropicRequest(bigLog(1500, 'observe-switch'))));
    proxy.setMode('project');
    try {
      const projected = await send(body);
      expect(projected.turn.observed).toBeUndefined();
      expect(projected.got.body!.length).toBeLessThan(body.length / 5);
      expect(projected.got.body!.toString('utf8')).toMatch(HANDLE_IN_TEXT);
    } finally {
      proxy.setMode('observe');
    }
    const observed = await send(body);
    expect(observed.got.body!.equals(body)).toBe(true);
    expect(observed.turn.observed).toBe(true);
  });
});

describe('observe mode over the Responses WebSocket', () => {
  it('forwards a response.create byte for byte and records the projection it would have sent', async () => {
    const ws = await openResponsesWebSocket(proxy.url, OPENAI_KEY, TIMEOUT);
    const message = JSON.stringify({
      type: 'response.create',
      model: 'gpt-5-codex',
      instructions: SYSTEM,
      store: false,
      stream: true,
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Build it.' }] },
        { type: 'function_call', call_id: 'call_obs', name: 'shell', arguments: '{"command":["make"]}' },
        { type: 'function_call_output', call_id: 'call_obs', output: bigLog(1500, 'observe-ws') },
      ],
    });
    const before = fakeWs.received.length;
    const turnsBefore = turns.length;
    ws.send(message);
    await until(() => turns.length > turnsBefore, TIMEOUT, 'the WebSocket turn');
    ws.close();
    expect(fakeWs.received[before]!.data.toString('utf8')).toBe(message);
    const turn = turns[turns.length - 1]!;
    expect(turn.transport).toBe('websocket');
    expect(turn.observed).toBe(true);
    expect(turn.reductions).toHaveLength(1);
    expect(readBody(sessionsDir, turn.projectionRef!)).toMatch(HANDLE_IN_TEXT);
  });
});

describe('an observed session in the inspector', () => {
  it('is marked observed, each turn noted as sent unchanged, with the tokens Spillway would have sent', async () => {
    const config = parseConfig({}).config;
    const source = new ProxySource({ store: () => new FileStore(storeDir), config: () => config }, () => sessionsDir, 60_000);
    try {
      const observed = source.list().filter((s) => s.observed);
      expect(observed.length).toBeGreaterThan(0);
      const s = (await source.open(observed[0]!.id))!;
      for (const t of s.turns()) expect(t.note).toMatch(/^observed: sent upstream unchanged/);
      expect(observed[0]!.totals!.projectedTokens).toBeLessThan(observed[0]!.totals!.originalTokens);
    } finally {
      source.dispose();
    }
  });
});

describe('an observed conversation in the inspector', () => {
  it('is measured like a replay, with what reading back its misses would cost, per turn', async () => {
    const opened = anthropicRequest(bigLog(1500, 'observe-conversation')) as { messages: unknown[] } & Record<string, unknown>;
    // a conversation of its own: the proxy tells sessions apart by their opening
    const first = { ...opened, messages: [{ role: 'user', content: 'Measure this conversation.' }, ...opened.messages.slice(1)] };
    // the agent's next call: its reply to the first, then the next tool result
    const second = {
      ...first,
      messages: [
        ...first.messages,
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_next', name: 'Bash', input: { command: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_next', content: 'package.json\nsrc' }] },
      ],
    };
    const a = await send(Buffer.from(JSON.stringify(first)));
    const b = await send(Buffer.from(JSON.stringify(second)));
    expect(b.turn.session).toBe(a.turn.session);
    const config = parseConfig({}).config;
    const source = new ProxySource({ store: () => new FileStore(storeDir), config: () => config }, () => sessionsDir, 60_000);
    try {
      const s = (await source.open(`proxy:${a.turn.session}`))!;
      expect(s.info.observed).toBe(true);
      const turns = s.turns();
      expect(turns).toHaveLength(2);
      // replay's figures carry what reading back a miss would cost; the recording's estimates do not
      for (const t of turns) for (const c of Object.values(t.cost!)) expect(c.readBack).toBeDefined();
      const total = s.info.totals!.cost!.anthropic!;
      expect(total.projected).toBeLessThan(total.raw);
    } finally {
      source.dispose();
    }
  });
});
