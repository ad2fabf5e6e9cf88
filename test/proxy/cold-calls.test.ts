/**
 * Calls after a pause through the proxy (docs/savings.md, "The guarantee"): the proxy tells the
 * engine when each call arrives, so a call sent after the provider's cache has expired is charged
 * cold and a clear there needs no bank. The clock is faked (Date only: the servers' timers run as
 * they do); a fake upstream on 127.0.0.1 records what the proxy forwarded.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { startProxy, type RunningProxy } from '../../src/proxy';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { rawRequest } from './support';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-cold-'));
let upstream: FakeUpstream;
let proxy: RunningProxy;

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startProxy({
    port: 0,
    storeDir: join(root, 'store'),
    sessionsDir: false,
    openaiUpstream: `${upstream.url}/v1`,
    // nothing is offloaded on arrival, so the session banks nothing a warm clear could spend; and a
    // clear must pay back within as many calls again as made, which no warm clear of these short
    // sessions does (the corpus table expects an early call to be followed by dozens)
    config: {
      offload: { enabled: false },
      clear: { triggerTokens: 4_000, keep: 1, clearAtLeastTokens: 0, inUseCalls: 0, keepGathered: false, paybackHorizon: 'same' },
    },
  });
});

afterEach(() => {
  vi.useRealTimers();
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

type Msg = Record<string, unknown>;
const outputs = [
  ...Array.from({ length: 3 }, (_, i) => ({ cmd: `cat f${i}`, out: String.fromCharCode(65 + i).repeat(8_000) })),
  ...Array.from({ length: 20 }, (_, i) => ({ cmd: `echo ${i}`, out: `ok ${i}` })),
];
const PAUSE_AT = 15;

/** The messages of call k (k - 1 outputs answered) of a session of `model`. */
function messages(k: number): Msg[] {
  const m: Msg[] = [{ role: 'user', content: 'go' }];
  outputs.slice(0, k - 1).forEach((o, i) => {
    m.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${i}`, type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: o.cmd }) } }],
    });
    m.push({ role: 'tool', tool_call_id: `c${i}`, content: o.out });
  });
  return m;
}

/** Sends the session call by call, the clock moving 10 s a call and `pause` before PAUSE_AT; the calls whose forwarded request cleared a result. */
async function run(session: string, model: string, pause: number): Promise<number[]> {
  vi.useFakeTimers({ toFake: ['Date'] });
  let now = Date.UTC(2026, 10, 29, 12);
  const cleared: number[] = [];
  for (let k = 1; k <= outputs.length + 1; k++) {
    now += 10_000 + (k === PAUSE_AT ? pause : 0);
    vi.setSystemTime(now);
    const r = await rawRequest(`${proxy.url}/v1/chat/completions`, {
      headers: { 'content-type': 'application/json', 'x-spillway-session': session },
      body: JSON.stringify({ model, messages: messages(k) }),
    });
    expect(r.status).toBe(200);
    const sent = JSON.parse(upstream.received[upstream.received.length - 1]!.body!.toString('utf8')) as { messages: Msg[] };
    if (sent.messages.some((m) => m.role === 'tool' && typeof m.content === 'string' && m.content.startsWith('[spillway'))) cleared.push(k);
  }
  vi.useRealTimers();
  return cleared.slice(0, 1);
}

describe('a call after a pause, through the proxy', () => {
  it("clears where a Claude session's cache went cold, with nothing banked", async () => {
    expect(await run('cold-claude', 'claude-sonnet-4-5', 10 * 60_000)).toEqual([PAUSE_AT]);
  });

  it('does not after a pause the cache outlives', async () => {
    expect(await run('warm-claude', 'claude-sonnet-4-5', 3 * 60_000)).toEqual([]);
  });
});
