/**
 * Worker processes for the benchmarks whose jobs are independent (the held-out replays, the real
 * sessions and the sweep of bench/peers.ts): each job runs one bundled script of dist/ with its own
 * arguments and prints its result as JSON on stdout. As many run at once as the machine has cores
 * (`SPILLWAY_BENCH_WORKERS` sets another number); each replay is single-threaded, so a 2-core
 * machine runs the jobs in about half the time. A worker's progress lines (stderr) pass through.
 */
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { resolve as resolvePath } from 'node:path';

export interface Job {
  /** the worker's arguments after the script */
  args: string[];
  /** what the log names the job */
  label: string;
}

/** How many of `jobs` jobs run at once: one per core (or `SPILLWAY_BENCH_WORKERS`), at least one, at most one per job. */
export function workersFor(jobs: number): number {
  return Math.max(1, Math.min(Number(process.env.SPILLWAY_BENCH_WORKERS) || cpus().length, jobs));
}

/**
 * JSON keeps no NaN or infinity (a ratio over nothing), so they travel as strings and come back as
 * numbers: a worker's rows are the rows the parent would have computed.
 */
const NON_FINITE = new Map<string, number>([
  ['NaN', Number.NaN],
  ['Infinity', Number.POSITIVE_INFINITY],
  ['-Infinity', Number.NEGATIVE_INFINITY],
]);
const TAG = '\u0000number:';

/** A worker's result as JSON, non-finite numbers included. */
export function toWorkerJson(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? TAG + String(v) : v));
}

/** Reads what `toWorkerJson` wrote. */
export function fromWorkerJson<T>(text: string): T {
  return JSON.parse(text, (_k, v: unknown) => (typeof v === 'string' && v.startsWith(TAG) ? NON_FINITE.get(v.slice(TAG.length)) : v)) as T;
}

function runOne(script: string, job: Job): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...job.args], { stdio: ['ignore', 'pipe', 'inherit'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolve(Buffer.concat(chunks).toString('utf8'));
      else reject(new Error(`${job.label}: ${script} ${job.args.join(' ')} exited with ${signal ?? `code ${code}`}`));
    });
  });
}

/**
 * Runs every job with `dist/<script>` (beside the running bundle; an absolute path as given), `workersFor(jobs.length)` at a time, in the
 * order given (put the longest first), and returns the parsed results in that order.
 */
export async function runWorkers<T>(script: string, jobs: readonly Job[], log: (s: string) => void): Promise<T[]> {
  const path = resolvePath(__dirname, script);
  const out = new Array<T>(jobs.length);
  let next = 0;
  const one = async (): Promise<void> => {
    for (let j = next++; j < jobs.length; j = next++) {
      const started = Date.now();
      try {
        out[j] = fromWorkerJson<T>(await runOne(path, jobs[j]!));
      } catch (e) {
        next = jobs.length; // no new job starts once one has failed
        throw e;
      }
      log(`  ${jobs[j]!.label}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  };
  await Promise.all(Array.from({ length: workersFor(jobs.length) }, one));
  return out;
}
