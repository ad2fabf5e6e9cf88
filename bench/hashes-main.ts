/**
 * `npm run bench:hashes`: a hash of every projected request of every corpus session, each session
 * projected call by call in one engine session as the proxy does. The check that a change meant only
 * to make the engine faster changed no decision: run it before and after under the same settings and
 * compare the last line (`-- --config '{"offload.afterUseCap":40000}'` for other settings, `-- --out
 * FILE` to keep each session's hash and its calls' hashes, to find the first call that differs).
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { relative } from 'node:path';
import { createEngine, MemorySink } from '../src/engine';
import { withAgentPrelude } from '../src/replay/prelude';
import { readTranscript, requestForCall } from '../src/replay/readers';
import { fixtureFiles, fixturesDir } from './peers';

function option(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

async function main(): Promise<void> {
  const configText = option('--config') ?? '{}';
  const config = JSON.parse(configText) as unknown;
  const dir = fixturesDir();
  const all = createHash('sha256');
  const lines: string[] = [];
  for (const { file } of fixtureFiles(dir)) {
    const t = withAgentPrelude(await readTranscript(file)).transcript;
    const engine = createEngine(config, { store: new MemorySink() });
    const session = createHash('sha256');
    const calls: string[] = [];
    for (let k = 0; k < t.calls.length; k++) {
      const p = engine.project(JSON.stringify(requestForCall(t, k)), t.wire, {
        session: 'hashes',
        ...(t.observations ? { observations: t.observations } : {}),
      });
      const h = createHash('sha256').update(p.request).digest('hex').slice(0, 16);
      calls.push(h);
      session.update(h);
    }
    const h = session.digest('hex').slice(0, 16);
    all.update(h);
    const name = relative(dir, file);
    lines.push(`${h} ${t.calls.length} ${name} ${calls.join(',')}`);
    process.stdout.write(`${h} ${String(t.calls.length).padStart(4)} calls  ${name}\n`);
  }
  const out = option('--out');
  if (out) writeFileSync(out, lines.join('\n') + '\n');
  process.stdout.write(`${all.digest('hex').slice(0, 16)} all ${lines.length} sessions, config ${configText}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:hashes failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
