/**
 * The `spillway replay` summary docs/replay-and-cost.md shows is the one the CLI prints today for the
 * same session: the built dist/cli.js, run from the repository's root as a reader would run it. A
 * change to the engine's default or to the summary's wording fails here until the page is
 * regenerated (the command is in the failure).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LONG_CLAUDE_CODE } from '../support/corpus';

const ROOT = resolve(__dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'spillway-docs-samples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The first fenced block after `lead` in a docs page. */
function sampleAfter(page: string, lead: string): string {
  const text = readFileSync(join(ROOT, 'docs', page), 'utf8');
  const at = text.indexOf(lead);
  expect(at, `docs/${page} no longer has "${lead}"`).toBeGreaterThanOrEqual(0);
  const open = text.indexOf('```\n', at) + 4;
  return text.slice(open, text.indexOf('```\n', open));
}

describe('docs/replay-and-cost.md', () => {
  it("shows the summary `spillway replay` prints for the corpus's long Claude Code session", () => {
    const session = relative(ROOT, LONG_CLAUDE_CODE);
    const r = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'replay', session, '--store', join(dir, 'store')], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    const shown = sampleAfter('replay-and-cost.md', 'A summary, for the long Claude Code session');
    expect(shown, `regenerate the sample with: node dist/cli.js replay ${session} --store "$(mktemp -d)"`).toBe(r.stdout);
  }, 120_000);
});
