/**
 * What the docs quote stays what the code does and what the last benchmark run measured.
 *
 * Defaults: the configuration reference's table gives every key's default under the `spillway` preset,
 * and prose anywhere in the README or docs/ may cite one as `` `KEY`, default VALUE ``,
 * `` `KEY` (default VALUE ``, or `` `KEY`, on/off by default `` (KEY a configuration key or a
 * `spillway.*` setting of package.json); each must equal the code's, and a `spillway.*` name must exist. Figures: a page quoting the
 * held-out headline wraps it in a figure span (bench/figures.ts), which the bench rewrites and which
 * must equal the `bench:heldout` block of docs/benchmarks.md; an unwrapped copy of the headline would
 * not follow a new run, so none may stand in the README or the reference pages (docs/log/ keeps the
 * figures of its day).
 */
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { figureSpans, headlineFigures, quotingPages, staleFigures, syncFigures } from '../../bench/figures';
import { BENCHMARKS_PAGE } from '../../bench/readme';
import { CONFIG_KEYS, configValue, DEFAULT_CONFIG } from '../../src/engine/config';

const root = join(__dirname, '../..');
const read = (page: string) => readFileSync(join(root, page), 'utf8');
const pkg = JSON.parse(read('package.json'));
const settings = (pkg.contributes?.configuration?.properties ?? {}) as Record<string, { default?: unknown }>;
const configKeys = new Set(CONFIG_KEYS.map((k) => k.key));

/** The code's default of a configuration key or a `spillway.*` setting; undefined for neither. */
function codeDefault(key: string): { known: boolean; value: unknown } {
  if (configKeys.has(key)) return { known: true, value: configValue(DEFAULT_CONFIG, key) };
  const bare = key.replace(/^spillway\./, '');
  if (configKeys.has(bare)) return { known: true, value: configValue(DEFAULT_CONFIG, bare) };
  if (key in settings) return { known: true, value: settings[key]!.default };
  return { known: false, value: undefined };
}

/** Whether a default as written in prose ("24,000 characters", "`same`", "off") is the code's value. */
function saysValue(written: string, value: unknown): boolean {
  const w = written.replace(/`/g, '').trim();
  if (typeof value === 'boolean') return (value ? ['true', 'on'] : ['false', 'off']).includes(w);
  if (typeof value === 'number') return Number(w.replace(/,/g, '').split(/\s/)[0]) === value;
  if (Array.isArray(value)) {
    const names = [...written.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    if (names.length === 1 && names[0]!.startsWith('[')) return JSON.stringify(JSON.parse(names[0]!)) === JSON.stringify(value);
    return JSON.stringify(names) === JSON.stringify(value);
  }
  if (value !== null && typeof value === 'object') return JSON.stringify(JSON.parse(w)) === JSON.stringify(value);
  return w.split(/\s/)[0] === String(value);
}

/** The configuration reference's table: key and default cell, one per row. */
function configTable(): { key: string; cell: string }[] {
  const page = read('docs/configuration.md');
  // the first table of the page, the reference of every key (the presets' table follows)
  const table = page.slice(page.indexOf('| key |'), page.indexOf('\n\n', page.indexOf('| key |')));
  return [...table.matchAll(/^\| `([\w.]+)` \| (.+?) \| .* \|$/gm)].map((m) => ({ key: m[1]!, cell: m[2]! }));
}

/** Every default cited in prose in the README and docs/*.md, with where. */
function citedDefaults(): { page: string; key: string; written: string }[] {
  const cite =
    /`((?:spillway\.)?[a-zA-Z][\w]*(?:\.[\w]+)*)`(?:, | \()(?:default ((?:`[^`]+`(?:(?:, |,? and )`[^`]+`)*|[\d,]+|\w+))|(on|off) by default)/g;
  return quotingPages(root).flatMap((page) =>
    [...read(page).matchAll(cite)]
      .map((m) => ({ page, key: m[1]!, written: m[2] ?? m[3]! }))
      // a configuration key, or a setting: options of other APIs (the store's `durable`) are not ours to check here
      .filter(({ key }) => configKeys.has(key) || key.startsWith('spillway.')),
  );
}

describe('defaults the docs state', () => {
  it('the configuration table lists every configuration key once', () => {
    const keys = configTable().map((r) => r.key);
    expect([...keys].sort()).toEqual([...configKeys].sort());
  });

  it.each(configTable().map((r) => [r.key, r.cell] as const))('the configuration table gives %s the default it has (%s)', (key, cell) => {
    expect(saysValue(cell, codeDefault(key).value), `${key}: table says ${cell}, code ${JSON.stringify(codeDefault(key).value)}`).toBe(
      true,
    );
  });

  it('prose cites some defaults in the checked form (so the check below checks something)', () => {
    expect(citedDefaults().length).toBeGreaterThan(5);
  });

  it('every default cited in prose is the code default of a key that exists', () => {
    const wrong = citedDefaults()
      .filter(({ key, written }) => {
        const d = codeDefault(key);
        return !d.known || !saysValue(written, d.value);
      })
      .map(({ page, key, written }) => `${page}: ${key} default ${written}, code ${JSON.stringify(codeDefault(key).value)}`);
    expect(wrong).toEqual([]);
  });
});

describe('headline figures the docs quote', () => {
  const figures = headlineFigures(read(BENCHMARKS_PAGE));

  it('the bench:heldout block gives the pooled figures held out, in sample and without the prelude', () => {
    expect([...figures.keys()]).toEqual(expect.arrayContaining(['heldout.all.with', 'insample.all.before', 'noprelude.all.misses']));
  });

  it.each(['README.md', 'docs/savings.md', 'docs/limitations.md'])('%s quotes the headline through figure spans', (page) => {
    expect(figureSpans(read(page)).map((s) => s.key)).toEqual(expect.arrayContaining(['heldout.all.with']));
  });

  it('every figure span equals the last run of the bench:heldout block', () => {
    expect(staleFigures(root)).toEqual([]);
  });

  it('no page quotes the pooled headline outside a figure span', () => {
    const headline = ['heldout.all.before', 'heldout.all.with', 'insample.all.before', 'insample.all.with'].map((k) => figures.get(k)!);
    const loose = quotingPages(root)
      .filter((page) => page !== BENCHMARKS_PAGE)
      .flatMap((page) => {
        const outside = read(page).replace(/<!-- fig:[\w.-]+ -->.*?<!-- \/fig -->/g, '');
        return headline.filter((h) => outside.includes(h)).map((h) => `${page}: ${h}`);
      });
    expect(loose).toEqual([]);
  });
});

describe('figure spans (bench/figures.ts)', () => {
  it("reads the limit's columns, the oracle's cost and the share of its saving kept, where the table has them", () => {
    const page = [
      '<!-- bench:heldout -->',
      '| all, held out | 55 | 6312 | 70.0% / 71.0% | **72.0% / 73.0%** | **1.5%** (300/20000) | 51.2% / 52.3% | **43.3% / 48.3%** |',
      '| all, in sample | 55 | 6312 | 70.0% / 71.0% | **72.0% / 73.0%** | **1.5%** (300/20000) | 51.2% / 52.3% | **43.3% / 48.3%** |',
      '| all, in sample, no prelude | 55 | 6312 | 69.0% / 70.0% | **71.0% / 72.0%** | **1.4%** (290/19990) | – / – | **– / –** |',
      '<!-- /bench:heldout -->',
    ].join('\n');
    const f = headlineFigures(page);
    expect([f.get('heldout.all.with'), f.get('heldout.all.oracle'), f.get('heldout.all.share')]).toEqual([
      '72.0% / 73.0%',
      '51.2% / 52.3%',
      '43.3% / 48.3%',
    ]);
    expect(f.get('noprelude.all.share')).toBe('– / –');
  });

  it('reads the pooled and per-agent rows of the bench:unseen block, not its sources or sessions', () => {
    const heldout = [
      '<!-- bench:heldout -->',
      '| all, held out | 45 | 4127 | 70.0% / 71.0% | **72.0% / 73.0%** | **1.5%** (300/20000) |',
      '| all, in sample | 45 | 4127 | 70.0% / 71.0% | **72.0% / 73.0%** | **1.5%** (300/20000) |',
      '| all, in sample, no prelude | 45 | 4127 | 69.0% / 70.0% | **71.0% / 72.0%** | **1.4%** (290/19990) |',
      '<!-- /bench:heldout -->',
    ];
    const unseen = [
      '<!-- bench:unseen -->',
      '| all | 8 | 730 | 74.8% / 92.0% | **76.0% / 93.4%** | **0.4%** (21/4811) | 53.5% / 58.9% | **51.7% / 16.1%** |',
      '| codex | 5 | 363 | 95.6% / 95.8% | **97.0% / 97.3%** | **0.4%** (12/3151) | 92.7% / 93.3% | **41.4% / 40.0%** |',
      '| JaydenXsoe/ocodex | 3 | 312 | 96.4% / 96.3% | **97.6% / 97.6%** | **0.2%** (5/3002) | 94.0% / 94.2% | **39.6% / 40.9%** |',
      '| `codex/a.jsonl` | 1 | 89 | 97.4% / 97.3% | **98.3% / 98.3%** | **0.1%** (1/1075) | 97.2% / 97.4% | **60.0% / 64.4%** |',
      '<!-- /bench:unseen -->',
    ];
    const f = headlineFigures([...heldout, ...unseen].join('\n'));
    expect([f.get('unseen.all.with'), f.get('unseen.all.references'), f.get('unseen.codex.share')]).toEqual([
      '76.0% / 93.4%',
      '4,811',
      '41.4% / 40.0%',
    ]);
    expect([...f.keys()].filter((k) => k.startsWith('unseen.') && !/^unseen\.(all|codex)\./.test(k))).toEqual([]);
    // a page without the block gives no unseen figure; a block without its pooled row is an error
    expect([...headlineFigures(heldout.join('\n')).keys()].some((k) => k.startsWith('unseen.'))).toBe(false);
    expect(() => headlineFigures([...heldout, unseen[0], unseen[2], unseen[5]].join('\n'))).toThrow(
      /bench:unseen block .* has no "all" row/,
    );
  });

  const BLOCK = [
    '<!-- bench:heldout -->',
    '| all, held out | 45 | 4127 | 70.0% / 71.0% | **72.0% / 73.0%** | **1.5%** (300/20000) |',
    '| all, in sample | 45 | 4127 | 70.0% / 71.0% | **72.0% / 73.0%** | **1.5%** (300/20000) |',
    '| all, in sample, no prelude | 45 | 4127 | 69.0% / 70.0% | **71.0% / 72.0%** | **1.4%** (290/19990) |',
    '<!-- /bench:heldout -->',
  ].join('\n');

  function repo(readme: string): string {
    const dir = mkdtempSync(join(tmpdir(), 'sw-figures-'));
    mkdirSync(join(dir, 'docs'));
    writeFileSync(join(dir, 'docs/benchmarks.md'), `# B\n\n${BLOCK}\n`);
    writeFileSync(join(dir, 'README.md'), readme);
    return dir;
  }

  it('a new run rewrites every span from the block and nothing else', () => {
    const dir = repo(
      'cost <!-- fig:heldout.all.with -->78.9% / 76.9%<!-- /fig --> at <!-- fig:heldout.all.missed -->262<!-- /fig --> of <!-- fig:heldout.all.references -->21,635<!-- /fig -->, 78.9% elsewhere\n',
    );
    expect(syncFigures(dir)).toEqual(['README.md']);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe(
      'cost <!-- fig:heldout.all.with -->72.0% / 73.0%<!-- /fig --> at <!-- fig:heldout.all.missed -->300<!-- /fig --> of <!-- fig:heldout.all.references -->20,000<!-- /fig -->, 78.9% elsewhere\n',
    );
    expect(staleFigures(dir)).toEqual([]);
  });

  it('a span that differs from the block is reported with the figure it should say', () => {
    const dir = repo('<!-- fig:noprelude.all.misses -->1.2%<!-- /fig -->\n');
    expect(staleFigures(dir)).toEqual([{ page: 'README.md', key: 'noprelude.all.misses', quoted: '1.2%', figure: '1.4%' }]);
  });

  it('a span naming a figure the block does not give is an error naming the page and the key', () => {
    const dir = repo('<!-- fig:heldout.all.cheap -->1%<!-- /fig -->\n');
    expect(() => syncFigures(dir)).toThrow(/README\.md quotes fig:heldout\.all\.cheap/);
  });
});
