/**
 * Nothing lost when the proxy dies (issue 21): sessions run through a proxy that is SIGKILLed at
 * random moments, and at the very moment the upstream receives a call; after each kill, every
 * handle that any upstream received reads back, exactly, from the store on disk.
 *
 * Two proxies: `spillway proxy` (dist/cli.js, which writes its store synchronously) and the proxy
 * as the VS Code extension runs it (crash-child.ts: the extension's background store, awaited
 * before a call is sent), in a process of its own so it can be killed like a crashed extension host.
 * Bounded: ROUNDS kills per proxy, each round a few hundred milliseconds of traffic.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HANDLE_IN_TEXT, handleFor } from '../../src/engine/handle';
import { FileStore } from '../../src/store/store';
import { defaultReply, startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { bigLog, chatRequest } from './support';

/** Kills per proxy: half at a random moment, half when the upstream receives a call. */
const ROUNDS = 8;
/** Sessions sending calls at once through the proxy, each a new big output per call. */
const SESSIONS = 3;
/** The random kills land within this long after traffic starts (a call takes a few ms here). */
const MAX_KILL_DELAY_MS = 120;
const START_TIMEOUT_MS = 15_000;
const HANDLES = new RegExp(HANDLE_IN_TEXT.source, 'g');

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-proxy-crash-'));
const CLI = join(__dirname, '../../dist/cli.js');
const CHILD = join(root, 'extension-proxy.js');
let upstream: FakeUpstream;
/** bodies the upstream received, and what to do on each (the receipt kill) */
let received: string[] = [];
let onReceive: (() => void) | undefined;
const children: ChildProcess[] = [];

beforeAll(async () => {
  buildSync({
    entryPoints: [join(__dirname, 'crash-child.ts')],
    outfile: CHILD,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    logLevel: 'warning',
  });
  upstream = await startFakeUpstream({
    respond: (r) => {
      received.push(r.body?.toString('utf8') ?? '');
      onReceive?.();
      return defaultReply(r);
    },
  });
});

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await upstream?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

type Kind = 'cli' | 'extension';

async function start(kind: Kind, store: string): Promise<{ child: ChildProcess; url: string }> {
  const args =
    kind === 'cli'
      ? [CLI, 'proxy', '--port', '0', '--store', store, '--openai-upstream', `${upstream.url}/v1`, '--anthropic-upstream', upstream.url]
      : [CHILD, store, `${upstream.url}/v1`, upstream.url];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: join(__dirname, '../..') });
  children.push(child);
  child.stderr!.resume();
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the ${kind} proxy did not start within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the ${kind} proxy exited with ${code} before listening`));
    });
  });
  return { child, url };
}

/** One session: calls with a new big output each, until the proxy is gone. */
async function session(url: string, tag: string): Promise<void> {
  for (let call = 0; call < 1000; call++) {
    try {
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
        body: JSON.stringify(chatRequest(bigLog(1200, `${tag}-call-${call}`), {}, `Session ${tag}.`)),
      });
      await res.arrayBuffer();
    } catch {
      return; // the proxy was killed
    }
  }
}

async function round(kind: Kind, store: string, r: number): Promise<number> {
  received = [];
  const { child, url } = await start(kind, store);
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  if (r % 2 === 0) {
    // at the moment the upstream receives the n-th call of this round
    const n = 1 + Math.floor(Math.random() * 4);
    let seen = 0;
    onReceive = () => {
      if (++seen === n) kill();
    };
  } else {
    onReceive = undefined;
    setTimeout(kill, Math.random() * MAX_KILL_DELAY_MS);
  }
  const sessions = Array.from({ length: SESSIONS }, (_, s) => session(url, `${kind}-r${r}-s${s}`));
  await exited;
  onReceive = undefined;
  await Promise.all(sessions);
  // after the kill: every handle any upstream received reads back, exactly, from the disk
  const disk = new FileStore(store);
  let checked = 0;
  for (const body of received) {
    for (const m of new Set([...body.matchAll(HANDLES)].map((x) => x[0]))) {
      // get throws when the output is missing; the handle is its content hash, so equal means exact
      expect(handleFor(disk.get(m)), `handle ${m} after the kill of round ${r}`).toBe(m);
      checked++;
    }
  }
  return checked;
}

describe.each<Kind>(['cli', 'extension'])('the %s proxy killed while sessions run through it', (kind) => {
  it('loses no handle that any upstream received', async () => {
    const store = join(root, `store-${kind}`);
    let checked = 0;
    for (let r = 0; r < ROUNDS; r++) checked += await round(kind, store, r);
    // each kill on receipt comes after at least one projected call reached the upstream
    expect(checked).toBeGreaterThanOrEqual(ROUNDS / 2);
  });
});
