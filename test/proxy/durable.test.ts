/**
 * Durable before sent, through the proxy (issue 21): over HTTP and over the Responses WebSocket, a
 * projected call reaches the upstream only once every output its markers point at is on disk, and
 * when the store cannot write them the original bytes go instead (fail open) and the log says why.
 *
 * The store here is a slow disk (`SlowDisk`): `put` only remembers, and the files appear when
 * `written` has waited a while, the way the extension's background store behaves on a busy disk.
 * The upstreams check, at the moment a call arrives, that each handle in it is on disk.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { createEngine } from '../../src/engine/engine';
import type { OutputSink } from '../../src/engine/types';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';
import type { RunningProxy, Turn } from '../../src/proxy';
import { defaultReply, type FakeUpstream } from './fake-upstream';
import type { FakeResponsesWs } from './fake-responses-ws';
import { proxyBetweenFakes, type ProxyBetweenFakes } from './between-fakes';
import { OPENAI_KEY, SYSTEM, bigLog, openResponsesWebSocket, rawRequest, until } from './support';

/** How long the slow disk takes to make outputs durable: long enough that a call sent without waiting arrives first. */
const WRITE_DELAY_MS = 150;
const TIMEOUT = 10_000;
const HANDLES = new RegExp(HANDLE_IN_TEXT.source, 'g');

class SlowDisk implements OutputSink {
  readonly texts = new Map<string, string>();
  /** when set, `written` rejects with it (a full or read-only disk) */
  failure: string | undefined;
  constructor(readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }
  file(handle: string): string {
    return join(this.dir, `${handle}.txt`);
  }
  put(handle: string, text: string): void {
    this.texts.set(handle, text);
  }
  locate(handle: string): string | undefined {
    return this.texts.has(handle) ? this.file(handle) : undefined;
  }
  pathFor(handle: string): string {
    return this.file(handle);
  }
  has(handle: string): boolean {
    return this.texts.has(handle);
  }
  async written(handles: Iterable<string>): Promise<void> {
    await new Promise((r) => setTimeout(r, WRITE_DELAY_MS));
    if (this.failure) throw new Error(this.failure);
    for (const h of handles) fs.writeFileSync(this.file(h), this.texts.get(h)!);
  }
  /** handles named in `text` whose output is not on disk */
  missing(text: string): string[] {
    return [...text.matchAll(HANDLES)].map((m) => m[0]).filter((h) => !fs.existsSync(this.file(h)));
  }
}

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-proxy-durable-'));
const disk = new SlowDisk(join(root, 'store'));
/** handles that reached an upstream while their output was not on disk (must stay empty) */
const early: string[] = [];
const logLines: string[] = [];
let fakes: ProxyBetweenFakes;
let turns: Turn[];
let upstream: FakeUpstream;
let fakeWs: FakeResponsesWs;
let proxy: RunningProxy;

beforeAll(async () => {
  fakes = await proxyBetweenFakes({ engine: createEngine({}, { store: disk }), sessionsDir: false, log: (l) => logLines.push(l) }, (r) => {
    early.push(...disk.missing(r.body?.toString('utf8') ?? ''));
    return defaultReply(r);
  });
  ({ proxy, upstream, fakeWs, turns } = fakes);
});

afterAll(async () => {
  await fakes?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

/** An Anthropic Messages call with one big tool result (HTTP goes to the fake upstream). */
function anthropicCall(output: string): string {
  return JSON.stringify({
    model: 'claude-sonnet-4-5',
    max_tokens: 100,
    system: SYSTEM,
    messages: [
      { role: 'user', content: 'Run the tests.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'npm test' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: output }] },
    ],
  });
}

async function post(body: string) {
  const before = upstream.received.length;
  const res = await rawRequest(`${proxy.url}/v1/messages`, {
    headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    body,
  });
  expect(res.status).toBe(200);
  return upstream.received[before]!.body!.toString('utf8');
}

describe('durable before sent, over HTTP', () => {
  it('sends a projected call upstream only once the outputs its markers point at are on disk', async () => {
    const output = bigLog(1500, 'http-durable');
    const got = await post(anthropicCall(output));
    const handles = [...got.matchAll(HANDLES)].map((m) => m[0]);
    expect(handles.length).toBeGreaterThan(0);
    expect(early).toEqual([]);
    expect(fs.readFileSync(disk.file(handles[0]!), 'utf8')).toBe(output);
  });

  it('fails open when the store cannot write the outputs: the original bytes go upstream and the log says why', async () => {
    disk.failure = 'ENOSPC: no space left on device';
    try {
      const body = anthropicCall(bigLog(1500, 'http-fail-open'));
      const got = await post(body);
      expect(got).toBe(body);
      expect(logLines.some((l) => /fail open on POST \/v1\/messages .*store could not write .*ENOSPC/.test(l))).toBe(true);
      await until(() => turns.some((t) => t.failOpen?.includes('ENOSPC') === true), TIMEOUT, 'the fail-open turn');
      const turn = turns.find((t) => t.failOpen?.includes('ENOSPC'))!;
      expect(turn.reductions).toEqual([]);
      expect(turn.projectedBytes).toBe(turn.originalBytes);
    } finally {
      disk.failure = undefined;
    }
  });
});

describe('durable before sent, over the Responses WebSocket', () => {
  async function open(): Promise<{ ws: WebSocket; completions: () => number }> {
    const ws = await openResponsesWebSocket(proxy.url, OPENAI_KEY, TIMEOUT);
    let completed = 0;
    ws.on('message', (d: Buffer) => {
      if (d.includes('"response.completed"')) completed++;
    });
    // the upstream's side of each connection checks every message on arrival
    for (const s of fakeWs.sockets) {
      s.on('message', (d: Buffer) => early.push(...disk.missing(d.toString('utf8'))));
    }
    return { ws, completions: () => completed };
  }

  const create = (output: string, tag: string) =>
    JSON.stringify({
      type: 'response.create',
      model: 'gpt-5-codex',
      instructions: SYSTEM,
      store: false,
      stream: true,
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: `Build it (${tag}).` }] },
        { type: 'function_call', call_id: `call_${tag}`, name: 'shell', arguments: '{"command":["make"]}' },
        { type: 'function_call_output', call_id: `call_${tag}`, output },
      ],
    });

  it('sends a projected response.create upstream only once its outputs are on disk, and keeps later messages behind it', async () => {
    const { ws, completions } = await open();
    const before = fakeWs.received.length;
    const output = bigLog(1500, 'ws-durable');
    ws.send(create(output, 'durable'));
    // sent right after: must not overtake the message that waits for the disk
    ws.send(JSON.stringify({ type: 'response.processed', tag: 'after' }));
    await until(() => completions() >= 1 && fakeWs.received.length >= before + 2, TIMEOUT, 'both messages upstream');
    const [first, second] = fakeWs.received.slice(before).map((m) => m.data.toString('utf8'));
    expect(first).toContain('"response.create"');
    expect(second).toContain('"response.processed"');
    const handles = [...first!.matchAll(HANDLES)].map((m) => m[0]);
    expect(handles.length).toBeGreaterThan(0);
    expect(early).toEqual([]);
    expect(fs.readFileSync(disk.file(handles[0]!), 'utf8')).toBe(output);
    ws.close();
  });

  it('fails open when the store cannot write: the original message goes upstream and the turn says why', async () => {
    const { ws, completions } = await open();
    disk.failure = 'EROFS: read-only file system';
    try {
      const before = fakeWs.received.length;
      const message = create(bigLog(1500, 'ws-fail-open'), 'failopen');
      ws.send(message);
      await until(() => completions() >= 1, TIMEOUT, 'response.completed');
      expect(fakeWs.received[before]!.data.toString('utf8')).toBe(message);
      expect(logLines.some((l) => /fail open on WebSocket .*store could not write .*EROFS/.test(l))).toBe(true);
      await until(() => turns.some((t) => t.failOpen?.includes('EROFS') === true), TIMEOUT, 'the fail-open turn');
    } finally {
      disk.failure = undefined;
      ws.close();
    }
  });
});
