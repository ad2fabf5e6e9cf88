/**
 * How long the extension host is blocked per projected call by the store (issue 14, point 4).
 *
 * A 1,000-call generated session (bench/generate.ts, as the incremental engine benchmark) is
 * projected call by call in one session, the way the extension projects an agent's calls, over a
 * FileStore on disk with fsync on (the extension's setting): once with synchronous writes (before)
 * and once with background writes (now). Per call it records the time `project` held the thread
 * and, within it, the time spent in `store.put`; between calls it yields 1 ms to the event loop (an
 * agent waits seconds for the model), and an event-loop delay monitor records the longest stall of
 * the whole run, which includes the background writes' own callbacks. The approximate tokenizer
 * keeps token counting (the same in both runs) from drowning the store's share.
 *
 * A third run (issue 21) is what the extension does now: background writes, and each call waits
 * (asynchronously) until its outputs are on disk before it is released to the model
 * (`whenStored`). It adds the time from the start of `project` to that release: what a call waits,
 * while the thread stays free for everything else.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createEngine } from '../src/engine/engine';
import { whenStored, type OutputSink } from '../src/engine/types';
import { FileStore } from '../src/store/store';
import { chatRequest, generateSession } from './generate';

const MODES = {
  sync: 'synchronous writes (before)',
  background: 'background writes (issue 14)',
  awaited: 'background writes, awaited before release (now)',
} as const;
type HostBlockMode = keyof typeof MODES;

export interface HostBlockRow {
  mode: (typeof MODES)[HostBlockMode];
  calls: number;
  puts: number;
  maxProjectMs: number;
  p99ProjectMs: number;
  maxPutMsPerCall: number;
  p99PutMsPerCall: number;
  maxEventLoopStallMs: number;
  flushMs: number;
  /** longest and p99 time from the start of `project` until its outputs are on disk (awaited mode only) */
  maxReleaseMs?: number;
  p99ReleaseMs?: number;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

export async function hostBlockBench(calls: number, mode: HostBlockMode): Promise<HostBlockRow> {
  const background = mode !== 'sync';
  const s = generateSession(calls, 30_000_000, 3, 60_000);
  const dir = mkdtempSync(join(tmpdir(), 'spillway-hostblock-'));
  try {
    const store = new FileStore(dir, { durable: true, background });
    let putMs = 0;
    let puts = 0;
    const timed: OutputSink = {
      put: (h, t, m) => {
        const t0 = performance.now();
        store.put(h, t, m);
        putMs += performance.now() - t0;
        puts++;
      },
      locate: (h) => store.locate(h),
      has: (h) => store.has(h),
    };
    const engine = createEngine({ tokenizer: 'approximate' }, { store: timed });
    const projectMs: number[] = [];
    const putPerCall: number[] = [];
    const releaseMs: number[] = [];
    const loop = monitorEventLoopDelay({ resolution: 1 });
    loop.enable();
    for (let k = 0; k < s.ends.length; k++) {
      const body = chatRequest(s.messages.slice(0, s.ends[k]));
      putMs = 0;
      const t0 = performance.now();
      const p = engine.project(body, 'openai-chat', { session: 'bench' });
      projectMs.push(performance.now() - t0);
      putPerCall.push(putMs);
      if (mode === 'awaited') {
        await whenStored(store, p);
        releaseMs.push(performance.now() - t0);
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    const f0 = performance.now();
    await store.flush();
    const flushMs = performance.now() - f0;
    loop.disable();
    return {
      mode: MODES[mode],
      calls,
      puts,
      maxProjectMs: Math.max(...projectMs),
      p99ProjectMs: pct(projectMs, 0.99),
      maxPutMsPerCall: Math.max(...putPerCall),
      p99PutMsPerCall: pct(putPerCall, 0.99),
      maxEventLoopStallMs: loop.max / 1e6,
      flushMs,
      ...(releaseMs.length ? { maxReleaseMs: Math.max(...releaseMs), p99ReleaseMs: pct(releaseMs, 0.99) } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function hostBlockTable(rows: HostBlockRow[]): string {
  const f = (n: number) => n.toFixed(2);
  return [
    '| store writes | calls | puts | longest `project` ms | p99 `project` ms | longest time in `put` per call, ms | p99 `put` per call, ms | longest event-loop stall, ms | flush at the end, ms | longest wait until released, ms | p99 wait until released, ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.mode} | ${r.calls} | ${r.puts} | ${f(r.maxProjectMs)} | ${f(r.p99ProjectMs)} | ${f(r.maxPutMsPerCall)} | ${f(r.p99PutMsPerCall)} | ${f(r.maxEventLoopStallMs)} | ${f(r.flushMs)} | ${r.maxReleaseMs === undefined ? '–' : f(r.maxReleaseMs)} | ${r.p99ReleaseMs === undefined ? '–' : f(r.p99ReleaseMs)} |`,
    ),
  ].join('\n');
}

// `node dist/bench-hostblock.js [CALLS]`: both runs, side by side
if (require.main === module) {
  void (async () => {
    const calls = Number(process.argv[2] ?? 1000);
    const rows = [await hostBlockBench(calls, 'sync'), await hostBlockBench(calls, 'background'), await hostBlockBench(calls, 'awaited')];
    process.stdout.write(hostBlockTable(rows) + '\n');
  })();
}
