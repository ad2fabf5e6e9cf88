/**
 * `npm run bench:kinds`: the preview-kinds table (bench/preview-kinds.ts) over every session of the
 * corpus, written to bench/results/preview-kinds.{md,json} and into docs/previews.md. Takes seconds,
 * so it needs no quick mode (`npm run bench` makes it too).
 */
import { join } from 'node:path';
import { runKinds } from './preview-kinds';

runKinds(join(process.cwd(), 'bench', 'results'))
  .then((t) => process.stdout.write(t + '\n'))
  .catch((err: unknown) => {
    process.stderr.write(`bench:kinds failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  });
