/**
 * The benchmarks' worker processes (bench/workers.ts) and how the comparison with the peers splits
 * into jobs and puts their results back in order (bench/peers.ts, peerJobs).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromWorkerJson, runWorkers, toWorkerJson } from '../../bench/workers';
import { peerJobs, type SessionResult } from '../../bench/peers';
import type { SweepResult } from '../../bench/frontier';

describe('worker results as JSON', () => {
  it('keeps non-finite numbers, which JSON alone turns into null', () => {
    const value = { a: Number.NaN, b: [Number.POSITIVE_INFINITY, -Infinity, 0.5], c: { d: 'NaN', e: null, f: 'Infinity' } };
    const back = fromWorkerJson<typeof value>(toWorkerJson(value));
    expect(Number.isNaN(back.a)).toBe(true);
    expect(back.b).toEqual([Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 0.5]);
    // strings that read like numbers stay strings
    expect(back.c).toEqual({ d: 'NaN', e: null, f: 'Infinity' });
    expect(JSON.parse(JSON.stringify(value)).a).toBeNull();
  });
});

describe('runWorkers', () => {
  let dir: string;
  let script: string;
  let log: string;
  const saved = process.env.SPILLWAY_BENCH_WORKERS;
  const savedReuse = process.env.SPILLWAY_BENCH_REUSE;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spillway-workers-'));
    delete process.env.SPILLWAY_BENCH_REUSE;
    script = join(dir, 'worker.js');
    log = join(dir, 'log');
    writeFileSync(log, '');
    // a worker notes when it starts and ends, waits until a second worker has started or its
    // partner file says none will (bounded), fails when asked, and prints its argument back
    writeFileSync(
      script,
      `const fs = require('node:fs');
const [, , id, mode] = process.argv;
fs.appendFileSync(${JSON.stringify(log)}, 'start ' + id + '\\n');
if (mode === 'fail') process.exit(3);
const until = Date.now() + 20000;
while (Date.now() < until && fs.readFileSync(${JSON.stringify(log)}, 'utf8').split('\\n').filter((l) => l.startsWith('start')).length < Number(mode)) {}
fs.appendFileSync(${JSON.stringify(log)}, 'end ' + id + '\\n');
process.stdout.write(JSON.stringify({ id, ratio: id === 'b' ? 0 / 0 : 1 }).replace('null', '"\\\\u0000number:NaN"'));
`,
    );
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    if (saved === undefined) delete process.env.SPILLWAY_BENCH_WORKERS;
    else process.env.SPILLWAY_BENCH_WORKERS = saved;
    if (savedReuse === undefined) delete process.env.SPILLWAY_BENCH_REUSE;
    else process.env.SPILLWAY_BENCH_REUSE = savedReuse;
  });

  /** The most workers the log shows running at once. */
  function mostAtOnce(): number {
    let now = 0;
    let most = 0;
    for (const line of readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
      now += line.startsWith('start') ? 1 : -1;
      most = Math.max(most, now);
    }
    return most;
  }

  it('runs the jobs as many at once as asked and returns their results in the order given', async () => {
    process.env.SPILLWAY_BENCH_WORKERS = '2';
    const lines: string[] = [];
    const jobs = ['a', 'b', 'c', 'd'].map((id) => ({ args: [id, '2'], label: `job ${id}` }));
    const out = await runWorkers<{ id: string; ratio: number }>(script, jobs, (s) => lines.push(s));
    expect(out.map((r) => r.id)).toEqual(['a', 'b', 'c', 'd']);
    expect(Number.isNaN(out[1]!.ratio)).toBe(true);
    expect(out[0]!.ratio).toBe(1);
    // the first two waited for each other: two ran at once, never three
    expect(mostAtOnce()).toBe(2);
    expect(lines.map((l) => l.replace(/\d+ s$/, 'N s')).sort()).toEqual(['  job a: N s', '  job b: N s', '  job c: N s', '  job d: N s']);
  });

  it('runs one at a time when asked to', async () => {
    process.env.SPILLWAY_BENCH_WORKERS = '1';
    const out = await runWorkers<{ id: string }>(
      script,
      [
        { args: ['a', '1'], label: 'a' },
        { args: ['b', '1'], label: 'b' },
      ],
      () => {},
    );
    expect(out.map((r) => r.id)).toEqual(['a', 'b']);
    expect(mostAtOnce()).toBe(1);
  });

  it('fails naming the job, and starts no job after a failure', async () => {
    process.env.SPILLWAY_BENCH_WORKERS = '1';
    const jobs = [
      { args: ['a', '1'], label: 'first' },
      { args: ['b', 'fail'], label: 'the failing one' },
      { args: ['c', '1'], label: 'after' },
    ];
    await expect(runWorkers(script, jobs, () => {})).rejects.toThrow(/the failing one: .* b fail exited with code 3/);
    expect(readFileSync(log, 'utf8')).not.toContain('start c');
  });
});

describe('runWorkers with SPILLWAY_BENCH_REUSE', () => {
  let dir: string;
  const saved = { workers: process.env.SPILLWAY_BENCH_WORKERS, reuse: process.env.SPILLWAY_BENCH_REUSE };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'spillway-reuse-'));
    process.env.SPILLWAY_BENCH_WORKERS = '1';
    process.env.SPILLWAY_BENCH_REUSE = join(dir, 'kept');
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    for (const [k, v] of [
      ['SPILLWAY_BENCH_WORKERS', saved.workers],
      ['SPILLWAY_BENCH_REUSE', saved.reuse],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  /** A worker that notes each run and prints its argument with the value the file `value` holds. */
  const worker = (value: string) => {
    writeFileSync(join(dir, 'value'), value);
    const script = join(dir, 'worker.js');
    writeFileSync(
      script,
      `const fs = require('node:fs');
fs.appendFileSync(${JSON.stringify(join(dir, 'runs'))}, process.argv[2] + '\\n');
process.stdout.write(JSON.stringify({ id: process.argv[2], v: fs.readFileSync(${JSON.stringify(join(dir, 'value'))}, 'utf8') }));
`,
    );
    return script;
  };
  const runs = () => readFileSync(join(dir, 'runs'), 'utf8').split('\n').filter(Boolean);
  const jobs = ['long', 'middle', 'short'].map((id) => ({ args: [id], label: id }));

  it('keeps each result, runs again only the shortest kept job, and gives the same results', async () => {
    const script = worker('1');
    const first = await runWorkers<{ id: string; v: string }>(script, jobs, () => {});
    expect(runs()).toEqual(['long', 'middle', 'short']);
    const lines: string[] = [];
    const again = await runWorkers<{ id: string; v: string }>(script, jobs, (l) => lines.push(l));
    expect(again).toEqual(first);
    // the last (shortest) job ran again to check the kept results; the others were read back
    expect(runs()).toEqual(['long', 'middle', 'short', 'short']);
    expect(lines.join('\n')).toMatch(/3 of 3 jobs reused/);
    expect(lines.join('\n')).toMatch(/short: \d+ s \(run again: the same as the kept result\)/);
  });

  it('runs a job it has no result for, and stops when the check finds another engine', async () => {
    const script = worker('1');
    await runWorkers(script, jobs.slice(0, 2), () => {});
    const out = await runWorkers<{ id: string; v: string }>(script, jobs, () => {});
    expect(out.map((r) => r.id)).toEqual(['long', 'middle', 'short']);
    expect(runs()).toEqual(['long', 'middle', 'middle', 'short']);
    // the replays now print something else: the kept results are not this engine's
    worker('2');
    await expect(runWorkers(script, jobs, () => {})).rejects.toThrow(/short: its result differs from the one kept in .*kept/);
  });
});

describe('peerJobs', () => {
  const points = [
    { name: 'p0', over: { defaultCap: 2_000 } },
    { name: 'p1', over: { previewChars: 600 } },
  ];
  const sources = [
    { label: 'small', size: 10 },
    { label: 'large', size: 1_000 },
    { label: 'generated 100 calls', size: Number.POSITIVE_INFINITY },
    { label: 'middle', size: 100 },
  ];

  it('puts the longest jobs first: generated sessions, the sweep, then real sessions by size', () => {
    const { jobs } = peerJobs(sources, points, false);
    expect(jobs.map((j) => j.label)).toEqual(['generated 100 calls', 'sweep p0', 'sweep p1', 'large', 'middle', 'small']);
    expect(jobs.map((j) => j.args.join(' '))).toEqual([
      '--session 2',
      '--point 0',
      '--point 1',
      '--session 1',
      '--session 3',
      '--session 0',
    ]);
    expect(peerJobs(sources, points, true).jobs.every((j) => j.args.includes('--quick'))).toBe(true);
  });

  it('puts each result back where the run expects it', () => {
    const { jobs, unpack } = peerJobs(sources, points, false);
    // a worker's result names what it ran, so the test can see where it lands
    const done = jobs.map((j) =>
      j.args[0] === '--point' ? ({ point: points[Number(j.args[1])] } as unknown as SweepResult) : ({ session: j.label } as SessionResult),
    );
    const { results, sweep } = unpack(done);
    expect(results.map((r) => r.session)).toEqual(['small', 'large', 'generated 100 calls', 'middle']);
    expect(sweep.map((s) => s.point.name)).toEqual(['p0', 'p1']);
  });
});
