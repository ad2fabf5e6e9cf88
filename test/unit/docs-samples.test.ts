/**
 * The `spillway replay` summary docs/replay-and-cost.md shows is the one the CLI prints today for the
 * same session: the built dist/cli.js, run from the repository's root as a reader would run it. A
 * change to the engine's default or to the summary's wording fails here until the page is
 * regenerated (the command is in the failure). The markers read-back.md, observations.md and
 * architecture.md show are rendered here by the engine with the same figures: a change to a marker's
 * wording fails until the pages show what the model is now sent.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LONG_CLAUDE_CODE } from '../support/corpus';
import { renderMarker, type MarkerInfo } from '../../src/engine/markers';

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

/** The marker lines of the first fenced block after `lead`: those that start `[spillway:`, `[preview below` or `[read all or part`. */
function markerLinesAfter(page: string, lead: string): string[] {
  return sampleAfter(page, lead)
    .split('\n')
    .filter((l) => /^\[(spillway:|preview below|read all or part)/.test(l));
}

describe('the markers the docs show are the ones the engine writes', () => {
  const base: MarkerInfo = {
    style: 'spillway',
    language: 'en',
    stage: 'offload',
    tool: 'Bash',
    callId: 'toolu_01',
    handle: 'sw_…',
    chars: 0,
    bytes: 0,
    lines: 0,
    tokens: 0,
    tokensEstimated: false,
    preview: 'PREVIEW',
    omitted: 0,
    unit: 'chars',
  };
  const header = (m: MarkerInfo) => renderMarker(m).split('\n').slice(0, -1);

  it('docs/read-back.md: an output offloaded with a preview, the agent offered the MCP read tool', () => {
    const m = { ...base, chars: 48_210, bytes: 48_210, lines: 1_204, tokens: 12_050, tokensEstimated: true, omitted: 47_010 };
    expect(markerLinesAfter('read-back.md', 'A marker then reads:')).toEqual(header({ ...m, readTool: 'mcp__spillway__read_output' }));
  });

  it('docs/observations.md: the first line of an observation offloaded in a text message', () => {
    const m = { ...base, tool: 'bash', chars: 41_623, bytes: 41_623, lines: 612, tokens: 9_880 };
    expect(markerLinesAfter('observations.md', 'text that was replaced:')[0]).toBe(header(m)[0]);
  });

  it('docs/architecture.md: a repeat with changes and an identical output, as references to the earlier output', () => {
    const repeat = {
      ...base,
      tool: 'read',
      chars: 9_812,
      bytes: 9_812,
      tokens: 2_406,
      sameAs: { tool: 'read', callId: 'toolu_01…', changes: true },
    };
    expect(markerLinesAfter('architecture.md', 'since an edit shifts them:')[0]).toBe(header(repeat)[0]);
    // the identical output is quoted inline, with its call and sizes elided
    const identical = renderMarker({ ...base, tool: 'Read', sameAs: { tool: 'Read', callId: 'CALL' } });
    const text = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8').replace(/\s+/g, ' ');
    const [before, after] = identical.split('CALL');
    expect(text).toContain(`(\`${before}… above · … read it back: spillway read sw_…]\`)`);
    expect(after).toMatch(/^ above · 0 chars · 0 tokens · read it back: spillway read sw_…\]$/);
  });
});
