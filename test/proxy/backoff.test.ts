/**
 * Back-off on read-backs through the proxy (src/engine/backoff.ts): the agent's read-back call in
 * the next request it sends makes that tool's outputs reach the model whole for the rest of the
 * session, while the marker already sent stays as it was. A fake upstream on 127.0.0.1 records
 * what the proxy forwarded.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';
import { startProxy, type RunningProxy } from '../../src/proxy';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { bigLog, chatRequest, rawRequest } from './support';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-backoff-'));
let upstream: FakeUpstream;
let proxy: RunningProxy;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startProxy({ port: 0, storeDir: join(root, 'store'), sessionsDir: false, openaiUpstream: `${upstream.url}/v1` });
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

type Msg = Record<string, unknown>;
const call = (id: string, name: string, args: Record<string, unknown>): Msg => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});

/** Sends a chat request in `session` and returns the messages the upstream received. */
async function send(session: string, body: Record<string, unknown>): Promise<Msg[]> {
  const r = await rawRequest(`${proxy.url}/v1/chat/completions`, {
    headers: { 'content-type': 'application/json', 'x-spillway-session': session },
    body: JSON.stringify(body),
  });
  expect(r.status).toBe(200);
  const got = upstream.received[upstream.received.length - 1]!;
  return (JSON.parse(got.body!.toString('utf8')) as { messages: Msg[] }).messages;
}

// about 18,000 chars: over the default cap of 8,000, under four times it
const first = bigLog(600, 'first');
const second = bigLog(600, 'second');

async function secondCall(session: string, readBack: boolean): Promise<{ sent: Msg[]; before: Msg[] }> {
  const body = chatRequest(first);
  const before = await send(session, body);
  const handle = JSON.stringify(before).match(HANDLE_IN_TEXT)![0];
  const messages = [...(body.messages as Msg[])];
  if (readBack)
    messages.push(call('call_read', 'read_output', { handle, grep: 'FAIL' }), {
      role: 'tool',
      tool_call_id: 'call_read',
      content: 'FAIL src/parser.test.ts:88',
    });
  messages.push(call('call_again', 'bash', { command: 'npm test -- --verbose' }), {
    role: 'tool',
    tool_call_id: 'call_again',
    content: second,
  });
  return { sent: await send(session, { ...body, messages }), before };
}

describe('back-off through the proxy', () => {
  it('lets the next output of a tool the agent read back reach the model whole, and keeps the marker already sent', async () => {
    const { sent, before } = await secondCall('backoff-read', true);
    expect(sent[sent.length - 1]!.content).toBe(second);
    expect(sent.slice(0, before.length)).toEqual(before);
  });

  it('offloads the same output in a session that read nothing back', async () => {
    const { sent } = await secondCall('backoff-none', false);
    expect(String(sent[sent.length - 1]!.content)).toMatch(HANDLE_IN_TEXT);
  });
});
