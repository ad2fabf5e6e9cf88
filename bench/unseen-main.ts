/**
 * `npm run bench:unseen`: the default on the sessions unlike the corpus alone (bench/unseen.ts),
 * written into docs/benchmarks.md between its markers and printed. `--session I` is one worker's job.
 */
import { runUnseen, unseenJob } from './unseen';
import { updateBenchmarksPage } from './readme';
import { syncFigures } from './figures';
import { toWorkerJson } from './workers';

async function main(): Promise<void> {
  const s = process.argv.indexOf('--session');
  if (s >= 0) {
    // one session's replays, as JSON on stdout, for the parent run (unseen.ts, runUnseen)
    process.stdout.write(toWorkerJson(await unseenJob(Number(process.argv[s + 1]))));
    return;
  }
  const started = Date.now();
  const r = await runUnseen((line) => process.stderr.write(line + '\n'));
  const made = `Made by \`npm run bench:unseen\` (node ${process.version}) on ${new Date().toISOString().slice(0, 10)}, ${((Date.now() - started) / 60000).toFixed(0)} minutes.`;
  updateBenchmarksPage('unseen', `${made}\n\n${r.markdown}`);
  // the README quotes its pooled row: the figure spans follow the new block (figures.ts)
  syncFigures();
  process.stdout.write(`${r.markdown}\n\n${made}\n`);
}

void main().catch((e: unknown) => {
  process.stderr.write(`bench:unseen: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
