/**
 * The benchmark's preview-kinds table (bench/preview-kinds.ts), its per-agent pools (bench/peers.ts)
 * and the generated sections of docs (bench/readme.ts).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentOf, AGENTS, fixtureFiles } from '../../bench/peers';
import { kindRows, kindTable } from '../../bench/preview-kinds';
import { updateSection } from '../../bench/readme';
import type { Transcript } from '../../src/replay/readers';
import { CORPUS } from '../support/corpus';

/**
 * A pytest run of 300 passing tests with one failure's section header in the middle, far from the
 * head and the tail: a line the generic preview has no reason to keep (no error word in it).
 */
const PYTEST_LOG = [
  '============================= test session starts ==============================',
  'collected 301 items',
  ...Array.from({ length: 150 }, (_, i) => `tests/test_views.py::test_view_${i} PASSED`),
  '_______________________________ test_save_slug _______________________________',
  ...Array.from({ length: 150 }, (_, i) => `tests/test_forms.py::test_form_${i} PASSED`),
  '================== 1 failed, 300 passed in 12.30s ==================',
].join('\n');

function session(reply: string): Transcript {
  return {
    source: 'openai-chat',
    wire: 'openai-chat',
    base: {},
    items: [
      { role: 'user', content: 'fix the failing test' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'bash', arguments: JSON.stringify({ command: 'python -m pytest -q' }) } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: PYTEST_LOG },
    ],
    calls: [
      { end: 1, reply: 'running the tests' },
      { end: 3, reply },
    ],
    skipped: { total: 0, byReason: {}, notes: [] },
  };
}

describe('preview kinds table', () => {
  it('counts an identifier the agent used later as kept by the test preview and not by the generic one', () => {
    const rows = kindRows([session('The failure is in test_save_slug.')]);
    const test = rows.find((r) => r.kind === 'test')!;
    expect(test).toMatchObject({ results: 1, referenced: 1, referencedIds: 1, keptGeneric: 0, keptKind: 1, chars: PYTEST_LOG.length });
    // the oracle keeps the one line that holds the identifier
    expect(test.oracleChars).toBe('_______________________________ test_save_slug _______________________________'.length);
    expect(test.kindChars).toBeGreaterThan(test.oracleChars);
  });

  it('counts a result no later reply refers to, with no referenced identifiers', () => {
    const test = kindRows([session('All done.')]).find((r) => r.kind === 'test')!;
    expect(test).toMatchObject({ results: 1, referenced: 0, referencedIds: 0, oracleChars: 0 });
  });

  it('tabulates every kind and the total, with shares of the referenced identifiers and of the characters kept', () => {
    const rows = kindRows([session('The failure is in test_save_slug.')]);
    const test = rows.find((r) => r.kind === 'test')!;
    const pct = (n: number) => `${((n / PYTEST_LOG.length) * 100).toFixed(1)}%`;
    const table = kindTable(rows);
    expect(table.split('\n')).toContain(`| test | 1 | 1 | 1 | 0 (0.0%) | 1 (100.0%) | ${pct(test.kindChars)} | ${pct(test.oracleChars)} |`);
    expect(table.split('\n').at(-1)).toBe(
      `| **all** | 1 | 1 | 1 | 0 (0.0%) | 1 (100.0%) | ${pct(test.kindChars)} | ${pct(test.oracleChars)} |`,
    );
    expect(table.split('\n')).toContain('| git | 0 | 0 | 0 | 0 (—) | 0 (—) | — | — |');
  });
});

describe('agents', () => {
  it('names the agent of every session of the corpus, and every agent has sessions', () => {
    const agents = fixtureFiles(CORPUS).map((f) => agentOf(relative(CORPUS, f.file)));
    expect(agents.filter((a) => a === undefined)).toEqual([]);
    for (const a of AGENTS) expect(agents).toContain(a);
  });

  it('tells mini-swe-agent from SWE-agent by the folder or the file name', () => {
    expect(agentOf('dev/mini-swe-agent/SWE-agent__deepseek-chat-django-11910.traj.json')).toBe('mini-swe-agent');
    expect(agentOf('swe-agent/SWE-agent__ctf_crypto_katy.traj')).toBe('swe-agent');
    expect(agentOf('responses/ai-sessions__codex-pomodor-timer.jsonl')).toBe('codex');
  });

  it('names pi by its folder, not by a path that merely contains the letters', () => {
    expect(agentOf('dev3/pi/badlogic__pi-compact.jsonl')).toBe('pi');
    expect(agentOf('dev/api/session.jsonl')).toBeUndefined();
  });
});

describe('generated doc sections', () => {
  it('docs/previews.md has the markers of the preview-kinds table', () => {
    const text = readFileSync(join(__dirname, '../../docs/previews.md'), 'utf8');
    expect(text.indexOf('<!-- bench:preview-kinds -->')).toBeGreaterThan(0);
    expect(text.indexOf('<!-- /bench:preview-kinds -->')).toBeGreaterThan(text.indexOf('<!-- bench:preview-kinds -->'));
  });

  it('writes a table between the markers of any page and leaves the prose around them', () => {
    const root = mkdtempSync(join(tmpdir(), 'spillway-doc-'));
    writeFileSync(join(root, 'a.md'), '# A\n\nprose\n\n<!-- bench:t -->\nold\n<!-- /bench:t -->\n\nmore prose\n');
    updateSection('a.md', 't', 'new table', root);
    expect(readFileSync(join(root, 'a.md'), 'utf8')).toBe('# A\n\nprose\n\n<!-- bench:t -->\nnew table\n<!-- /bench:t -->\n\nmore prose\n');
  });
});
