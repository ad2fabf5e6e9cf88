/**
 * `spillway proxy` as a user runs it: the bundled dist/cli.js in a child process, serving until
 * SIGTERM; bad flags exit 2 with one line.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { listSessions, readSession } from '../../src/proxy';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { bigLog, chatRequest, OPENAI_KEY, SECRETS } from './support';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';

const CLI = join(__dirname, '../../dist/cli.js');
const root = fs.mkdtempSync(join(tmpdir(), 'spillway-proxy-cli-'));
let upstream: FakeUpstream;
const children: ChildProcess[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await upstream?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

function runSync(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'proxy', ...args], {
    encoding: 'utf8',
    timeout: 10_000,
    env: { ...process.env, SPILLWAY_STORE: join(root, 'unused') },
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function expectOneLineError(r: ReturnType<typeof runSync>, pattern: RegExp) {
  expect(r.code).toBe(2);
  const lines = r.err.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^spillway: proxy: /);
  expect(lines[0]).toMatch(pattern);
}

/** Starts `spillway proxy ARGS` and resolves with its URL once it listens. */
async function startCli(args: string[]): Promise<{ child: ChildProcess; url: string; out: () => string; err: () => string }> {
  const child = spawn(process.execPath, [CLI, 'proxy', '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (b: Buffer) => {
    out += b.toString();
  });
  child.stderr!.on('data', (b: Buffer) => {
    err += b.toString();
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line within 10 s; stdout: ${out} stderr: ${err}`)), 10_000);
    const check = () => {
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited ${code}: ${err}`));
    });
  });
  return { child, url, out: () => out, err: () => err };
}

describe('spillway proxy --websockets refuse', () => {
  it('answers a Responses WebSocket upgrade with 426 and says so at start-up', async () => {
    const { child, url, out, err } = await startCli([
      '--store',
      join(root, 'store-ws'),
      '--openai-upstream',
      `${upstream.url}/v1`,
      '--websockets',
      'refuse',
    ]);
    expect(out()).toMatch(/WebSocket mode: +refused/);
    const status = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${url.replace('http:', 'ws:')}/v1/responses`, { headers: { Authorization: `Bearer ${OPENAI_KEY}` } });
      const timer = setTimeout(() => reject(new Error('no answer to the upgrade')), 10_000);
      ws.on('unexpected-response', (_req, res) => {
        clearTimeout(timer);
        res.resume();
        resolve(res.statusCode!);
      });
      ws.on('open', () => {
        clearTimeout(timer);
        reject(new Error('the upgrade was accepted'));
      });
      ws.on('error', () => {});
    });
    expect(status).toBe(426);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    expect(err()).toMatch(/refused a WebSocket upgrade on \/v1\/responses/);
    for (const s of SECRETS) expect(out() + err()).not.toContain(s);
  });
});

describe('spillway proxy', () => {
  it('serves until SIGTERM: projects a call, records it, and exits 0', async () => {
    const store = join(root, 'store');
    const { child, url, out, err } = await startCli([
      '--store',
      store,
      '--openai-upstream',
      `${upstream.url}/v1`,
      '--anthropic-upstream',
      upstream.url,
    ]);
    expect(out()).toContain(`export OPENAI_BASE_URL=${url}/v1`);
    expect(out()).toContain(`export ANTHROPIC_BASE_URL=${url}`);
    // Codex ignores OPENAI_BASE_URL: the start-up text gives its own route
    expect(out()).toContain(`  codex -c openai_base_url="${url}/v1"`);
    expect(out()).toContain(`  openai_base_url = "${url}/v1"`);
    // and how agents read back over MCP, on the same store
    expect(out()).toContain(`  Claude Code: claude mcp add spillway -- spillway mcp --store ${store}`);
    const client = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${url}/v1`, maxRetries: 0, timeout: 10_000 });
    const answer = await client.chat.completions.create(chatRequest(bigLog(1500, 'cli')) as any);
    expect(answer.choices[0]!.message.content).toBe('All tests pass.');
    const got = JSON.parse(upstream.received[upstream.received.length - 1]!.body!.toString()) as any;
    expect(got.messages[3].content).toMatch(HANDLE_IN_TEXT);
    const sessions = join(root, 'sessions');
    const deadline = Date.now() + 5000;
    while (listSessions(sessions).length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const turns = readSession(listSessions(sessions)[0]!.file);
    expect(turns).toHaveLength(1);
    expect(turns[0]!.usage?.inputTokens).toBe(1200);
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(-1);
      }, 5000);
      child.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
      child.kill('SIGTERM');
    });
    expect(code).toBe(0);
    expect(err()).toContain('turn s_');
    for (const s of SECRETS) expect(out() + err()).not.toContain(s);
  });

  it('--observe forwards the request byte for byte and says so at start-up', async () => {
    const { child, url, out } = await startCli([
      '--store',
      join(root, 'store-observe'),
      '--openai-upstream',
      `${upstream.url}/v1`,
      '--observe',
    ]);
    try {
      expect(out()).toMatch(/mode: +observe \(requests go upstream byte for byte/);
      const body = JSON.stringify(chatRequest(bigLog(1500, 'cli-observe')));
      const before = upstream.received.length;
      const res = await fetch(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${OPENAI_KEY}` },
        body,
      });
      await res.arrayBuffer();
      expect(upstream.received[before]!.body!.toString('utf8')).toBe(body);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('exits 2 with one line on bad flags', () => {
    expectOneLineError(runSync(['--port', 'abc']), /--port must be a whole number/);
    expectOneLineError(runSync(['--port', '70000']), /at most 65535/);
    expectOneLineError(runSync(['--bogus']), /unknown flag --bogus/);
    expectOneLineError(runSync(['--openai-upstream', 'ftp://example.com']), /OpenAI upstream must be an http or https URL/);
    expectOneLineError(runSync(['--anthropic-upstream', 'not a url']), /Anthropic upstream must be an absolute/);
    expectOneLineError(runSync(['--preset', 'nope']), /unknown --preset nope/);
    expectOneLineError(runSync(['extra']), /unexpected argument "extra"/);
    expectOneLineError(runSync(['--websockets', 'off']), /unknown --websockets off \(known: project, refuse\)/);
    expectOneLineError(runSync(['--observe=yes']), /--observe takes no value/);
  });

  it('exits 2 with one line when the port is taken', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      expectOneLineError(
        runSync(['--port', String(port), '--store', join(root, 'store2')]),
        new RegExp(`port ${port} on 127.0.0.1 is already in use`),
      );
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });
});
