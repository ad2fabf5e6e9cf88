/**
 * `npm run bench:kinds`: the preview-kinds table (bench/preview-kinds.ts) over every session of the
 * corpus, written to bench/results/preview-kinds.{md,json} and into docs/previews.md. Takes seconds,
 * so it needs no quick mode.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readTranscript } from '../src/replay/readers';
import { updateDoc } from './readme';
import { fixtureFiles, fixturesDir } from './peers';
import { kindRows, kindTable } from './preview-kinds';
import { DEFAULT_CONFIG } from '../src/engine/config';

/** The command that makes the table, quoted beside it. */
export const KINDS_COMMAND = 'npm run bench:kinds';

export async function runKinds(out: string, root = process.cwd()): Promise<string> {
  const files = fixtureFiles(fixturesDir(root));
  const sessions = [];
  for (const { file } of files) sessions.push(await readTranscript(file));
  const rows = kindRows(sessions);
  const table = kindTable(rows);
  const text = `Made by \`${KINDS_COMMAND}\` over the ${sessions.length} sessions of \`test/fixtures/sessions/\`, previews of ${formatBudget()} characters (the default \`previewChars\`).\n\n${table}`;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'preview-kinds.md'), text + '\n');
  writeFileSync(
    join(out, 'preview-kinds.json'),
    JSON.stringify({ sessions: sessions.length, budget: DEFAULT_CONFIG.previewChars, rows }, null, 2) + '\n',
  );
  updateDoc('docs/previews.md', 'preview-kinds', text, root);
  return text;
}

function formatBudget(): string {
  return DEFAULT_CONFIG.previewChars.toLocaleString('en-US');
}

if (require.main === module) {
  runKinds(join(process.cwd(), 'bench', 'results'))
    .then((t) => process.stdout.write(t + '\n'))
    .catch((err: unknown) => {
      process.stderr.write(`bench:kinds failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exitCode = 1;
    });
}
