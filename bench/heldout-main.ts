/**
 * `npm run bench:heldout`: the leave-one-source-out table alone (bench/heldout.ts), written into
 * docs/benchmarks.md between its markers and printed.
 */
import { replayCandidate, replayCandidateRoutes, replayLimits, runHeldOut } from './heldout';
import { syncFigures } from './figures';
import { updateBenchmarksPage } from './readme';
import { toWorkerJson } from './workers';

async function main(): Promise<void> {
  if (process.argv.includes('--limits')) {
    // the oracle's and the floor's cost on every session, as JSON on stdout (heldout.ts, replayAll)
    process.stdout.write(toWorkerJson(await replayLimits(!process.argv.includes('--no-prelude'))));
    return;
  }
  const w = process.argv.indexOf('--worker');
  if (w >= 0 && process.argv.includes('--routes')) {
    // one candidate's columns of other providers, each replayed routed there, as JSON on stdout (heldout.ts, routeReported)
    process.stdout.write(toWorkerJson(await replayCandidateRoutes(Number(process.argv[w + 1]), !process.argv.includes('--no-prelude'))));
    return;
  }
  if (w >= 0) {
    // one candidate's replays, as JSON on stdout, for the parent run (heldout.ts, replayAll)
    process.stdout.write(toWorkerJson(await replayCandidate(Number(process.argv[w + 1]), !process.argv.includes('--no-prelude'))));
    return;
  }
  const started = Date.now();
  const r = await runHeldOut((line) => process.stderr.write(line + '\n'));
  const made = `Made by \`npm run bench:heldout\` (node ${process.version}) on ${new Date().toISOString().slice(0, 10)}, ${((Date.now() - started) / 60000).toFixed(0)} minutes.`;
  updateBenchmarksPage('heldout', `${made}\n\n${r.markdown}`);
  // the README and docs quote the headline: their figure spans follow the new block (figures.ts)
  syncFigures();
  process.stdout.write(`${r.markdown}\n\n${made}\n`);
}

void main().catch((e: unknown) => {
  process.stderr.write(`bench:heldout: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
