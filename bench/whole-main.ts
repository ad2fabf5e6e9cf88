/**
 * `npm run bench:whole`: where the default leaves the oracle's saving (bench/whole.ts), over every
 * session of the corpus, written to bench/results/whole.md and into docs/benchmarks.md (`npm run
 * bench` makes it too). About two minutes: one replay of each session.
 */
import { join } from 'node:path';
import { runWhole } from './whole';

runWhole(join(process.cwd(), 'bench', 'results'))
  .then((t) => process.stdout.write(t + '\n'))
  .catch((err: unknown) => {
    process.stderr.write(`bench:whole failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
