/**
 * The benchmarks write their tables into docs/benchmarks.md (bench/readme.ts), between one pair of
 * markers per table: the page holds every pair, a write replaces only its own table, and a page
 * without the pair is an error rather than a run whose figures vanish.
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BENCH_TABLES, BENCHMARKS_PAGE, SESSIONS_PAGE, updateBenchmarksPage } from '../../bench/readme';

const ROOT = join(__dirname, '../..');

function pageIn(text: string): string {
  const root = mkdtempSync(join(tmpdir(), 'sw-bench-docs-'));
  mkdirSync(join(root, 'docs'));
  writeFileSync(join(root, BENCHMARKS_PAGE), text);
  return root;
}

describe('the benchmarks page', () => {
  it.each(BENCH_TABLES)('docs/benchmarks.md has the markers of the %s table', (name) => {
    const page = readFileSync(join(ROOT, BENCHMARKS_PAGE), 'utf8');
    const open = page.indexOf(`<!-- bench:${name} -->`);
    expect(open).toBeGreaterThanOrEqual(0);
    expect(page.indexOf(`<!-- /bench:${name} -->`)).toBeGreaterThan(open);
  });

  it('docs/benchmarks-sessions.md has the markers of the per-session tables', () => {
    const page = readFileSync(join(ROOT, SESSIONS_PAGE), 'utf8');
    const open = page.indexOf('<!-- bench:sessions -->');
    expect(open).toBeGreaterThanOrEqual(0);
    expect(page.indexOf('<!-- /bench:sessions -->')).toBeGreaterThan(open);
  });

  it('a write replaces the table between its markers and nothing else', () => {
    const root = pageIn('# B\n\n<!-- bench:engine -->\nold\n<!-- /bench:engine -->\n\n<!-- bench:proxy -->\nkept\n<!-- /bench:proxy -->\n');
    updateBenchmarksPage('engine', '| newer |', root);
    expect(readFileSync(join(root, BENCHMARKS_PAGE), 'utf8')).toBe(
      '# B\n\n<!-- bench:engine -->\n| newer |\n<!-- /bench:engine -->\n\n<!-- bench:proxy -->\nkept\n<!-- /bench:proxy -->\n',
    );
  });

  it('a page without the pair of markers is an error naming the page and the marker', () => {
    const root = pageIn('# B\n\n<!-- bench:engine -->\n');
    expect(() => updateBenchmarksPage('engine', 'x', root)).toThrow(
      /docs\/benchmarks\.md has no <!-- bench:engine --> … <!-- \/bench:engine --> pair/,
    );
  });
});
