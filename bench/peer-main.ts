/**
 * `npm run bench:peer`: Spillway's default against context-guru, measured the peer's way
 * (bench/peer.ts), written into docs/benchmarks.md between its markers and printed.
 * `npm run bench:peer -- --config '<json>'` measures those settings over the default instead and
 * only prints, with the published Spillway column beside (`--config previous` names the default
 * the published figures were measured with).
 */
import { PREVIOUS_DEFAULT, runPeer } from './peer';
import { updateBenchmarksPage } from './readme';

async function main(): Promise<void> {
  const at = process.argv.indexOf('--config');
  const given = at >= 0 ? process.argv[at + 1] : undefined;
  if (at >= 0 && !given) throw new Error('--config needs a JSON object of settings, or `previous`');
  const config = given === undefined ? {} : given === 'previous' ? PREVIOUS_DEFAULT : (JSON.parse(given) as Record<string, unknown>);
  const started = Date.now();
  const r = await runPeer(config, (line) => process.stderr.write(line + '\n'));
  const took = `${((Date.now() - started) / 1000).toFixed(0)} s`;
  if (given !== undefined) {
    process.stdout.write(`Settings ${JSON.stringify(config)} over the default (${took}):\n\n${r.markdown}\n\n${r.check}\n`);
    return;
  }
  const made = `Made by \`npm run bench:peer\` (node ${process.version}) on ${new Date().toISOString().slice(0, 10)}, ${took}.`;
  updateBenchmarksPage('peer', `${made}\n\n${r.markdown}`);
  process.stdout.write(`${r.markdown}\n\n${made}\n`);
}

void main().catch((e: unknown) => {
  process.stderr.write(`bench:peer: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
