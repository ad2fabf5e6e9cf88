/**
 * The headline figures the prose quotes, kept in step with the last benchmark run.
 *
 * `npm run bench` and `npm run bench:heldout` write the held-out table between the `bench:heldout`
 * markers of docs/benchmarks.md (readme.ts). A page that quotes one of its figures in prose (the
 * README's table, Savings, Known limitations) wraps the quote in a figure span,
 *
 *     <!-- fig:heldout.all.with -->78.9% / 76.9%<!-- /fig -->
 *
 * invisible once rendered. `syncFigures` rewrites every span of the README and docs/*.md from the
 * block on the page, so a new run moves the quotes with it; test/unit/docs-figures.test.ts fails
 * while a span differs from the block. The dated records of docs/log/ are never rewritten: they keep
 * the figures of their day.
 *
 * Keys: `TABLE.FAMILY.FIELD`, where TABLE is `heldout`, `insample` or `noprelude` (the three tables of
 * the block), FAMILY is `all` or an agent family (`claude-code`, `codex`, …), and FIELD one of
 * `before` (cost before read-backs, "Anthropic / GPT-5"), `with` (with read-backs), `misses` (the
 * miss rate), `missed` and `references` (its count, as "262" and "21,635"), `sessions` and `calls`, and
 * in tables that have the limit's columns `oracle` (the oracle's cost) and `share` (the share of the
 * oracle's saving the default keeps with read-backs), each "Anthropic / GPT-5". The `bench:unseen`
 * block (sessions unlike the corpus) gives the same fields as `unseen.FAMILY.FIELD`.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { BENCHMARKS_PAGE } from './readme';

const FIELDS = ['sessions', 'calls', 'before', 'with', 'misses', 'missed', 'references'] as const;

/** The pages whose figure spans follow the block, relative to the repository root. */
export function quotingPages(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

const thousands = (digits: string) => Number(digits).toLocaleString('en-US');

/**
 * Every figure of the `bench:heldout` block of a benchmarks page, by key. Throws, naming the page,
 * when the block is missing or holds no row of a pooled table: a figure is never quietly undefined.
 */
export function headlineFigures(page: string): Map<string, string> {
  const open = page.indexOf('<!-- bench:heldout -->');
  const close = page.indexOf('<!-- /bench:heldout -->');
  if (open < 0 || close < open) throw new Error(`figures: ${BENCHMARKS_PAGE} has no bench:heldout block`);
  const block = page.slice(open, close);
  const figures = new Map<string, string>();
  // | all, held out | 45 | 4127 | 77.6% / 75.4% | **78.9% / 76.9%** | **1.2%** (262/21635) |
  // (the limit's columns, src/replay/limits.ts, in tables made since they were added)
  const row = new RegExp(
    String.raw`^\| ([\w-]+), (held out|in sample|no prelude)(?:, no prelude)?${ROW_COLUMNS}(?:${LIMIT_COLUMNS})?$`,
    'gm',
  );
  for (const m of block.matchAll(row)) {
    const [, family, table, ...cells] = m as unknown as string[];
    const name = table === 'held out' ? 'heldout' : table === 'in sample' && !m[0].includes('no prelude') ? 'insample' : 'noprelude';
    setRow(figures, `${name}.${family}`, cells);
  }
  for (const table of ['heldout', 'insample', 'noprelude'])
    if (!figures.has(`${table}.all.with`))
      throw new Error(`figures: the bench:heldout block of ${BENCHMARKS_PAGE} has no "all" row for ${table}`);
  unseenFigures(page, figures);
  return figures;
}

/** The columns after a row's label, as `heldOutRow` (bench/heldout.ts) writes them for both blocks: sessions to misses … */
const ROW_COLUMNS = String.raw` \| (\d+) \| (\d+) \| ([\d.]+% \/ [\d.]+%) \| \*\*([\d.]+% \/ [\d.]+%)\*\* \| \*\*([\d.]+%)\*\* \((\d+)\/(\d+)\) \|`;
/** … then the oracle's cost and the share of its saving kept. */
const LIMIT_COLUMNS = String.raw` ([^|*]+?) \| \*\*([^|*]+?)\*\* \|`;

/** Sets `PREFIX.FIELD` for the cells of one row, in the order of ROW_COLUMNS and LIMIT_COLUMNS. */
function setRow(figures: Map<string, string>, prefix: string, cells: readonly (string | undefined)[]): void {
  const [sessions, calls, before, withReadBacks, misses, missed, references, oracle, share] = cells;
  const values = [sessions!, thousands(calls!), before!, withReadBacks!, misses!, thousands(missed!), thousands(references!)];
  FIELDS.forEach((field, i) => figures.set(`${prefix}.${field}`, values[i]!));
  if (oracle !== undefined) figures.set(`${prefix}.oracle`, oracle);
  if (share !== undefined) figures.set(`${prefix}.share`, share);
}

/**
 * The pooled and per-agent rows of the `bench:unseen` block (bench/unseen.ts), when the page has one,
 * as `unseen.FAMILY.FIELD` (the per-source and per-session rows, whose labels hold a slash or a
 * backtick, are not quoted).
 */
function unseenFigures(page: string, figures: Map<string, string>): void {
  const open = page.indexOf('<!-- bench:unseen -->');
  const close = page.indexOf('<!-- /bench:unseen -->');
  if (open < 0 || close < open) return;
  // | all | 8 | 730 | 74.8% / 92.0% | **76.0% / 93.4%** | **0.4%** (21/4811) | 53.5% / 58.9% | **51.7% / 16.1%** |
  const row = new RegExp(String.raw`^\| ([\w-]+)${ROW_COLUMNS}${LIMIT_COLUMNS}$`, 'gm');
  for (const m of page.slice(open, close).matchAll(row)) {
    const [, family, ...cells] = m as unknown as string[];
    setRow(figures, `unseen.${family}`, cells);
  }
  if (!figures.has('unseen.all.with')) throw new Error(`figures: the bench:unseen block of ${BENCHMARKS_PAGE} has no "all" row`);
}

/** A figure span that does not say what the block says. */
export interface StaleFigure {
  page: string;
  key: string;
  quoted: string;
  /** undefined when the block has no such key */
  figure: string | undefined;
}

const SPAN = /<!-- fig:([\w.-]+) -->(.*?)<!-- \/fig -->/g;

/** The figure spans of one page's text, as key and quoted value. */
export function figureSpans(text: string): { key: string; quoted: string }[] {
  return [...text.matchAll(SPAN)].map((m) => ({ key: m[1]!, quoted: m[2]! }));
}

/** Every span of the quoting pages that differs from the block (or names a key it lacks). */
export function staleFigures(root: string): StaleFigure[] {
  const figures = headlineFigures(readFileSync(join(root, BENCHMARKS_PAGE), 'utf8'));
  return quotingPages(root).flatMap((page) =>
    figureSpans(readFileSync(join(root, page), 'utf8'))
      .filter(({ key, quoted }) => figures.get(key) !== quoted)
      .map(({ key, quoted }) => ({ page, key, quoted, figure: figures.get(key) })),
  );
}

/**
 * Rewrites every figure span of the README and docs/*.md from the block; returns the pages it
 * changed. Throws, naming the page and the key, for a span whose key the block lacks.
 */
export function syncFigures(root = process.cwd()): string[] {
  const figures = headlineFigures(readFileSync(join(root, BENCHMARKS_PAGE), 'utf8'));
  const changed: string[] = [];
  for (const page of quotingPages(root)) {
    const file = join(root, page);
    const text = readFileSync(file, 'utf8');
    const next = text.replace(SPAN, (_all, key: string) => {
      const value = figures.get(key);
      if (value === undefined) throw new Error(`figures: ${page} quotes fig:${key}, which the bench:heldout block does not give`);
      return `<!-- fig:${key} -->${value}<!-- /fig -->`;
    });
    if (next !== text) {
      writeFileSync(file, next);
      changed.push(page);
    }
  }
  return changed;
}
