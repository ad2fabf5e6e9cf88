/**
 * Worker processes for the benchmarks whose jobs are independent (the held-out replays, the real
 * sessions and the sweep of bench/peers.ts): each job runs one bundled script of dist/ with its own
 * arguments and prints its result as JSON on stdout. As many run at once as the machine has cores
 * (`SPILLWAY_BENCH_WORKERS` sets another number); each replay is single-threaded, so a 2-core
 * machine runs the jobs in about half the time. A worker's progress lines (stderr) pass through.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { basename, join, resolve as resolvePath } from 'node:path';
import { writeAtomic } from '../src/extension/pure/writeAtomic';

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

/** Where `SPILLWAY_BENCH_REUSE` keeps a job's result: one file per script and arguments. */
function reusePath(dir: string, script: string, job: Job): string {
  const key = [basename(script, '.js'), ...job.args].join(' ');
  const slug = key.replace(/[^\w.-]+/g, '_').slice(0, 80);
  return join(dir, `${slug}-${createHash('sha256').update(key).digest('hex').slice(0, 12)}.json`);
}

/**
 * Runs every job with `dist/<script>` (beside the running bundle; an absolute path as given), `workersFor(jobs.length)` at a time, in the
 * order given (put the longest first), and returns the parsed results in that order.
 *
 * With `SPILLWAY_BENCH_REUSE=DIR`, each job's result is also written to DIR, and a job whose result
 * is there is not run again: for a rerun after a change that replays nothing differently (the
 * default moved to another candidate the run already replayed, a table's wording). The last of those
 * (the shortest, as jobs come longest first) is run again all the same and must print the same
 * result, or the run stops: DIR holds results of another engine or corpus.
 */
export async function runWorkers<T>(script: string, jobs: readonly Job[], log: (s: string) => void): Promise<T[]> {
  const path = resolvePath(__dirname, script);
  const dir = process.env.SPILLWAY_BENCH_REUSE;
  if (dir) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const files = jobs.map((job) => (dir ? reusePath(dir, path, job) : undefined));
  const kept = files.map((file) => (file && existsSync(file) ? readFileSync(file, 'utf8') : undefined));
  let check = kept.length - 1;
  while (check >= 0 && kept[check] === undefined) check--;
  const out = new Array<T>(jobs.length);
  const todo = jobs.map((_, j) => j).filter((j) => kept[j] === undefined || j === check);
  for (const [j, k] of kept.entries()) if (k !== undefined && j !== check) out[j] = fromWorkerJson<T>(k);
  if (check >= 0) log(`  ${jobs.length - todo.length + 1} of ${jobs.length} jobs reused from ${dir}`);
  let next = 0;
  const one = async (): Promise<void> => {
    for (let t = next++; t < todo.length; t = next++) {
      const j = todo[t]!;
      const job = jobs[j]!;
      const started = Date.now();
      try {
        const text = await runOne(path, job);
        if (j === check && text !== kept[j]) {
          throw new Error(
            `${job.label}: its result differs from the one kept in ${dir}: that directory holds another engine's or corpus's results`,
          );
        }
        // (the directory is its owner's only: mode 0o700 above)
        if (files[j] && j !== check) writeAtomic(files[j], text);
        out[j] = fromWorkerJson<T>(text);
      } catch (e) {
        next = todo.length; // no new job starts once one has failed
        throw e;
      }
      log(
        `  ${job.label}: ${((Date.now() - started) / 1000).toFixed(0)} s${j === check ? ' (run again: the same as the kept result)' : ''}`,
      );
    }
  };
  await Promise.all(Array.from({ length: workersFor(todo.length) }, one));
  return out;
}
