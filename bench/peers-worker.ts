/**
 * One job of `npm run bench`'s comparison with the peers, run in a worker process (bench/workers.ts):
 * `--session I` runs every strategy on session I of the run, `--point K` sweep point K over every real
 * session; `--quick` as the parent run. Prints the result as JSON on stdout (bench/peers.ts, runPeers).
 */
import { pointJob, sessionJob } from './peers';
import { toWorkerJson } from './workers';

async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const s = process.argv.indexOf('--session');
  const p = process.argv.indexOf('--point');
  if (s >= 0) process.stdout.write(toWorkerJson(await sessionJob(Number(process.argv[s + 1]), quick)));
  else if (p >= 0) process.stdout.write(toWorkerJson(await pointJob(Number(process.argv[p + 1]), quick)));
  else throw new Error('bench-peers-worker: expected --session I or --point K');
}

void main().catch((e: unknown) => {
  process.stderr.write(`bench-peers-worker: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
