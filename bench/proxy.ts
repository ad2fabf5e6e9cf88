/**
 * What the proxy adds to a model call: latency over calling the upstream directly, measured side by
 * side in one run (direct and proxied calls interleaved, so drift in the machine's load hits both).
 *
 * Set-up, all on 127.0.0.1: a fake upstream in this process that reads the whole request and answers
 * at once (a small JSON answer, or a stream whose first event goes out as soon as the request is
 * read); the proxy as users run it, `spillway proxy` from dist/cli.js in its own process (default
 * configuration, recording on, a throwaway store); and a keep-alive HTTP client in this process.
 *
 * For each request size it measures three paths:
 *   - direct:      client -> upstream
 *   - passthrough: client -> proxy -> upstream on a path the proxy does not project (streamed through:
 *                  the cost of the extra hop alone)
 *   - projected:   client -> proxy -> upstream on /v1/chat/completions (body collected, read by the
 *                  engine, reduced, forwarded, recorded)
 * and, in this process, the engine's own `project` time on the same body, so the projected figure
 * can be split into transport and engine. Requests are agent-like Chat Completions bodies: a system
 * prompt, a user task and rounds of bash calls whose outputs alternate between small and big (over
 * the default cap, so the engine reduces them).
 *
 * Nothing here states a result: the runner prints what this run measured.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { createEngine, MemorySink } from '../src/engine';
import { startProxy } from '../src/proxy';

export interface ProxyBenchOptions {
  /** request body sizes in bytes (default 10 KB, 1 MB, 10 MB) */
  sizes?: number[];
  /** measured calls per size and path (default: 300 for ≤10 KB, 100 for ≤1 MB, 20 above) */
  iterations?: (size: number) => number;
  /** unmeasured calls per size and path first (default 5) */
  warmup?: number;
  /** sizes at which time to first streamed byte is measured (default 10 KB and 1 MB) */
  streamSizes?: number[];
  /** the bundled CLI (default: cli.js beside this file once bundled, else dist/cli.js) */
  cliPath?: string;
  /** extra `spillway proxy` flags, e.g. ['--preset', 'clark-budget'] */
  proxyArgs?: string[];
  /**
   * 'child' (default): `spillway proxy` in its own process, as users run it. 'in-process': the
   * proxy in this process (no cross-process scheduling, but it shares the event loop with the
   * client and the upstream); useful on a busy machine.
   */
  proxyIn?: 'child' | 'in-process';
  /** progress lines */
  log?: (line: string) => void;
}

interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

interface SizeResult {
  size: number;
  /** actual request body bytes */
  bytes: number;
  /** bytes the upstream received on the projected path */
  projectedBytes: number;
  direct: Stats;
  passthrough: Stats;
  projected: Stats;
  /** the engine's project() in this process, same body, same default configuration */
  engine: Stats;
}

interface StreamResult {
  size: number;
  direct: Stats;
  projected: Stats;
}

export interface ProxyBenchResult {
  node: string;
  proxyIn: 'child' | 'in-process';
  /** the machine's 1-minute load average when the run started and ended */
  load: [number, number];
  cpus: number;
  sizes: SizeResult[];
  firstByte: StreamResult[];
}

const KB = 1024;
const MB = 1024 * 1024;
const SMALL_OUTPUT_LINES = 40;
const BIG_OUTPUT_LINES = 900;

function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
  return { n: s.length, p50: at(0.5), p99: at(0.99), mean: s.reduce((a, b) => a + b, 0) / s.length, min: s[0]!, max: s[s.length - 1]! };
}

function outputLines(n: number, round: number): string {
  return Array.from({ length: n }, (_, i) =>
    i === n - 3
      ? `FAIL src/module${round}.test.ts:${i} expected 200 got 500`
      : `PASS src/module${round}/case${i}.test.ts (${(i * 7) % 90} ms) ok`,
  ).join('\n');
}

/** An agent-like Chat Completions request of about `size` bytes. */
function agentRequest(size: number, stream = false): string {
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent working in a TypeScript repository. Use the tools.' },
    { role: 'user', content: 'The build is red. Find out why and fix it.' },
  ];
  const base = {
    model: 'gpt-4.1',
    stream,
    messages,
    tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object', properties: { command: { type: 'string' } } } } }],
  };
  let text = JSON.stringify(base);
  for (let round = 0; text.length < size; round++) {
    const room = size - text.length - 200;
    const lines = Math.max(1, Math.min(round % 2 ? BIG_OUTPUT_LINES : SMALL_OUTPUT_LINES, Math.floor(room / 50)));
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: `call_${round}`,
          type: 'function',
          function: { name: 'bash', arguments: JSON.stringify({ command: `npm test -- ${round}` }) },
        },
      ],
    });
    messages.push({ role: 'tool', tool_call_id: `call_${round}`, content: outputLines(lines, round) });
    text = JSON.stringify(base);
    if (room <= 50) break;
  }
  return text;
}

interface Upstream {
  url: string;
  lastBytes: number;
  close(): Promise<void>;
}

async function startUpstream(): Promise<Upstream> {
  const answer = Buffer.from(
    JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 1, completion_tokens: 1 },
    }),
  );
  const events = [
    'data: {"choices":[{"delta":{"content":"o"}}]}\n\n',
    'data: {"choices":[{"delta":{"content":"k"}}]}\n\n',
    'data: [DONE]\n\n',
  ];
  const up: Upstream = { url: '', lastBytes: 0, close: async () => {} };
  const server = http.createServer((req, res) => {
    let bytes = 0;
    const stream = req.headers['x-bench-stream'] === '1';
    req.on('data', (c: Buffer) => {
      bytes += c.length;
    });
    req.on('end', () => {
      up.lastBytes = bytes;
      if (!stream) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
        res.end(answer);
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(events[0]);
      setTimeout(() => {
        res.write(events[1]);
        res.end(events[2]);
      }, 5);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  up.url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  up.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return up;
}

async function startProxyProcess(
  cli: string,
  upstream: string,
  dir: string,
  extra: string[],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    [
      cli,
      'proxy',
      '--port',
      '0',
      '--store',
      join(dir, 'store'),
      '--openai-upstream',
      `${upstream}/v1`,
      '--anthropic-upstream',
      upstream,
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (b: Buffer) => {
    err = (err + b.toString()).slice(-4000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`spillway proxy did not start within 15 s: ${err}`)), 15_000);
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = out.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`spillway proxy exited with ${code}: ${err}`));
    });
  });
  child.stdout!.resume();
  return { url, child };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) {
      resolve();
      return;
    }
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, 5000);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** One call; resolves with total ms and ms to the first body byte. */
function call(agent: http.Agent, url: string, body: Buffer, stream: boolean): Promise<{ total: number; first: number }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = -1;
    const req = http.request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          'content-type': 'application/json',
          'content-length': body.length,
          authorization: 'Bearer sk-bench-not-a-key',
          ...(stream ? { 'x-bench-stream': '1' } : {}),
        },
      },
      (res) => {
        res.on('data', () => {
          if (first < 0) first = performance.now() - t0;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode} from ${url}`));
          else resolve({ total: performance.now() - t0, first });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

export async function runProxyBench(options: ProxyBenchOptions = {}): Promise<ProxyBenchResult> {
  const log = options.log ?? (() => {});
  const sizes = options.sizes ?? [10 * KB, 1 * MB, 10 * MB];
  const iterations = options.iterations ?? ((s: number) => (s <= 10 * KB ? 300 : s <= MB ? 100 : 20));
  const warmup = options.warmup ?? 5;
  const streamSizes = options.streamSizes ?? [10 * KB, 1 * MB];
  const proxyIn = options.proxyIn ?? 'child';
  const loadBefore = loadavg()[0]!;
  const dir = fs.mkdtempSync(join(tmpdir(), 'spillway-bench-proxy-'));
  const upstream = await startUpstream();
  let proxy: { url: string; stop(): Promise<void> };
  if (proxyIn === 'child') {
    const cli = options.cliPath ?? [join(__dirname, 'cli.js'), join(__dirname, '..', 'dist', 'cli.js')].find((p) => fs.existsSync(p));
    if (!cli || !fs.existsSync(cli)) throw new Error('dist/cli.js not found: build first (node esbuild.mjs)');
    const { url, child } = await startProxyProcess(cli, upstream.url, dir, options.proxyArgs ?? []);
    proxy = { url, stop: () => stopChild(child) };
  } else {
    const p = await startProxy({
      port: 0,
      storeDir: join(dir, 'store'),
      openaiUpstream: `${upstream.url}/v1`,
      anthropicUpstream: upstream.url,
    });
    proxy = { url: p.url, stop: () => p.close() };
  }
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const urls = {
      direct: `${upstream.url}/v1/chat/completions`,
      passthrough: `${proxy.url}/v1/bench/passthrough`,
      projected: `${proxy.url}/v1/chat/completions`,
    };
    const results: SizeResult[] = [];
    for (const size of sizes) {
      const text = agentRequest(size);
      const body = Buffer.from(text);
      const n = iterations(size);
      log(`${fmtSize(size)}: ${n} calls per path (+${warmup} warm-up), body ${body.length} bytes`);
      const samples = { direct: [] as number[], passthrough: [] as number[], projected: [] as number[] };
      let projectedBytes = 0;
      for (let i = -warmup; i < n; i++) {
        // interleaved, in a rotating order, so neither path always runs first
        const order = (['direct', 'passthrough', 'projected'] as const).map((_, k, a) => a[(k + i + warmup) % 3]!);
        for (const path of order) {
          const r = await call(agent, urls[path], body, false);
          if (path === 'projected') projectedBytes = upstream.lastBytes;
          if (i >= 0) samples[path].push(r.total);
        }
      }
      const engine = createEngine({}, { store: new MemorySink() });
      const engineSamples: number[] = [];
      for (let i = -warmup; i < Math.min(n, 50); i++) {
        const t0 = performance.now();
        engine.project(text, 'openai-chat', { session: 'bench' });
        if (i >= 0) engineSamples.push(performance.now() - t0);
      }
      results.push({
        size,
        bytes: body.length,
        projectedBytes,
        direct: stats(samples.direct),
        passthrough: stats(samples.passthrough),
        projected: stats(samples.projected),
        engine: stats(engineSamples),
      });
    }
    const firstByte: StreamResult[] = [];
    for (const size of streamSizes) {
      const body = Buffer.from(agentRequest(size, true));
      const n = iterations(size);
      log(`${fmtSize(size)} streamed: ${n} calls per path`);
      const d: number[] = [],
        p: number[] = [];
      for (let i = -warmup; i < n; i++) {
        const a = await call(agent, urls.direct, body, true);
        const b = await call(agent, urls.projected, body, true);
        if (i >= 0) {
          d.push(a.first);
          p.push(b.first);
        }
      }
      firstByte.push({ size, direct: stats(d), projected: stats(p) });
    }
    return { node: process.version, cpus: cpus().length, proxyIn, load: [loadBefore, loadavg()[0]!], sizes: results, firstByte };
  } finally {
    agent.destroy();
    await proxy.stop();
    await upstream.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function fmtSize(bytes: number): string {
  return bytes >= MB ? `${+(bytes / MB).toFixed(1)} MB` : `${+(bytes / KB).toFixed(1)} KB`;
}

const ms = (v: number) => (v < 10 ? v.toFixed(2) : v.toFixed(1));

/** The results as a Markdown table, with added latency and ratios computed from this run only. */
export function formatProxyBench(r: ProxyBenchResult): string {
  const lines = [
    `node ${r.node}, ${r.cpus} CPUs, load average ${r.load[0].toFixed(1)} -> ${r.load[1].toFixed(1)}; proxy ${r.proxyIn === 'child' ? 'in its own process (spillway proxy)' : 'in the benchmark process'}`,
    'latency per call in ms, client -> (proxy ->) fake upstream on 127.0.0.1',
    '',
    '| request | direct p50 / p99 | pass-through p50 / p99 (added p50) | projected p50 / p99 (added p50, ratio) | engine.project p50 | sent upstream |',
    '| --- | --- | --- | --- | --- | --- |',
  ];
  for (const s of r.sizes) {
    const addPass = s.passthrough.p50 - s.direct.p50;
    const addProj = s.projected.p50 - s.direct.p50;
    lines.push(
      `| ${fmtSize(s.size)} (n=${s.direct.n}) | ${ms(s.direct.p50)} / ${ms(s.direct.p99)} | ${ms(s.passthrough.p50)} / ${ms(s.passthrough.p99)} (+${ms(addPass)}) | ` +
        `${ms(s.projected.p50)} / ${ms(s.projected.p99)} (+${ms(addProj)}, ${(s.projected.p50 / s.direct.p50).toFixed(1)}x) | ${ms(s.engine.p50)} | ${fmtSize(s.projectedBytes)} of ${fmtSize(s.bytes)} |`,
    );
  }
  if (r.firstByte.length) {
    lines.push(
      '',
      '| streamed request | first byte direct p50 / p99 | first byte through the proxy p50 / p99 (added p50) |',
      '| --- | --- | --- |',
    );
    for (const f of r.firstByte) {
      lines.push(
        `| ${fmtSize(f.size)} (n=${f.direct.n}) | ${ms(f.direct.p50)} / ${ms(f.direct.p99)} | ${ms(f.projected.p50)} / ${ms(f.projected.p99)} (+${ms(f.projected.p50 - f.direct.p50)}) |`,
      );
    }
  }
  return lines.join('\n');
}
