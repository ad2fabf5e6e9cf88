/**
 * Writes benchmark tables into docs/benchmarks.md between `<!-- bench:NAME -->` and
 * `<!-- /bench:NAME -->`, so no benchmark figure is typed by hand: a full `npm run bench` (and
 * `npm run bench:proxy`) rewrites them all. The README keeps one small table of what the default
 * saves and links here for the rest. The preview-kinds table goes into docs/previews.md, beside
 * what each kind keeps (one page per figure: this page links to it). (The module keeps its old name; it wrote into the README when the
 * README was the whole manual.)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The page the generated tables live on, relative to the repository root. */
export const BENCHMARKS_PAGE = 'docs/benchmarks.md';

/**
 * The page of one table per corpus session (`npm run bench`'s `sessions` block): most of the bytes
 * of the figures, kept off the benchmarks page, which links to it.
 */
export const SESSIONS_PAGE = 'docs/benchmarks-sessions.md';

/** The tables the benchmarks write, each between its own pair of markers on the page. */
export const BENCH_TABLES = ['heldout', 'whole', 'unseen', 'peer', 'engine', 'peers', 'frontier', 'agents', 'proxy'] as const;
export type BenchTable = (typeof BENCH_TABLES)[number];

/**
 * Replaces what stands between the markers of `name` on the benchmarks page with `markdown`. Throws,
 * naming the page and the marker, when the page lacks the pair: a run's figures are never dropped
 * without a word.
 */
export function updateBenchmarksPage(name: BenchTable, markdown: string, root = process.cwd()): void {
  updateSection(BENCHMARKS_PAGE, name, markdown, root);
}

/** The same on any page of the repository (`path` relative to `root`). */
export function updateSection(path: string, name: string, markdown: string, root = process.cwd()): void {
  const file = join(root, path);
  const text = readFileSync(file, 'utf8');
  const open = `<!-- bench:${name} -->`,
    close = `<!-- /bench:${name} -->`;
  const a = text.indexOf(open),
    b = text.indexOf(close);
  if (a < 0 || b < a) throw new Error(`bench: ${file} has no ${open} … ${close} pair; the ${name} table was not written`);
  writeFileSync(file, text.slice(0, a + open.length) + '\n' + markdown.trim() + '\n' + text.slice(b));
}
