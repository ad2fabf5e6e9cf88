/**
 * The README is what a newcomer reads in their first ten minutes; docs/ is the manual. Together they
 * must document every setting, command, CLI command and flag the project ships, so a new one cannot
 * land undocumented; the README must stay short, every link in either must lead somewhere, and every
 * command the README tells people to type must exist.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMAND_USAGE, USAGE } from '../../src/cli/main';
import { CONFIG_KEYS } from '../../src/engine/config';

const root = join(__dirname, '../..');
const README = join(root, 'README.md');
const DOCS = join(root, 'docs');
const readme = readFileSync(README, 'utf8');
const docFiles = readdirSync(DOCS)
  .filter((f) => f.endsWith('.md'))
  .map((f) => join(DOCS, f));
/** The dated records of docs/log/ and their index: linked from the pages, checked for links like them. */
const LOG = join(DOCS, 'log');
const logFiles = readdirSync(LOG)
  .filter((f) => f.endsWith('.md'))
  .map((f) => join(LOG, f));
const logRecords = logFiles.filter((f) => /\/\d{4}-\d{2}-\d{2}-[\w-]+\.md$/.test(f));
/** README and every page of docs/: the manual the completeness checks search. */
const manual = [readme, ...docFiles.map((f) => readFileSync(f, 'utf8'))].join('\n');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

/**
 * A README for the first ten minutes: what Spillway is, the two commands, a tour, one section per
 * agent, one table of what it saves, where next. The reference lives in docs/.
 */
const README_MAX_BYTES = 20 * 1024;

/** The lists checked below; each must be non-empty, or its checks would pass by checking nothing. */
const configKeys = CONFIG_KEYS.map((k) => k.key);
const flags = [...new Set(USAGE.match(/--[a-z-]+/g) ?? [])];
const cliCommands = Object.keys(COMMAND_USAGE);
const settings = Object.keys((pkg.contributes?.configuration?.properties ?? {}) as Record<string, unknown>);
const commands = ((pkg.contributes?.commands ?? []) as { title: string }[]).map((c) => c.title);
const npmScripts = Object.keys(pkg.scripts as Record<string, string>);
/** npm's own commands a README may tell people to run (`npm ci`), beside the package's scripts. */
const NPM_BUILTINS = ['ci', 'install', 'test', 'start'];

/** Markdown without fenced code blocks and inline code, where links are not links. */
function prose(md: string): string {
  return md.replace(/^```[^\n]*\n[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lowercase, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

/** The anchors a Markdown file offers: its headings (repeats numbered as GitHub does) and explicit ids. */
function anchorsOf(file: string): Set<string> {
  const md = readFileSync(file, 'utf8').replace(/^```[^\n]*\n[\s\S]*?^```/gm, '');
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const m of md.matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of md.matchAll(/<a id="([^"]+)"/g)) anchors.add(m[1]!);
  return anchors;
}

/** Every relative link and image of a Markdown file that does not lead to a file or heading. */
function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  for (const m of prose(readFileSync(file, 'utf8')).matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) {
    const target = m[1]!;
    if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
    const [path, anchor] = target.split('#') as [string, string | undefined];
    const dest = path === '' ? file : resolve(dirname(file), path);
    if (!existsSync(dest)) broken.push(`${target} (no file ${relative(root, dest)})`);
    else if (anchor !== undefined && dest.endsWith('.md') && !anchorsOf(dest).has(anchor))
      broken.push(`${target} (no heading #${anchor} in ${relative(root, dest)})`);
  }
  return broken;
}

/** The commands of the README's shell blocks: each `npm …` and `spillway …` invocation. */
function readmeCommands(): string[] {
  const blocks = [...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
  return blocks.flatMap((b) =>
    b
      .split('\n')
      .map((line) => line.replace(/#.*$/, ''))
      .flatMap((line) => [...line.matchAll(/\b(npm(?: run)? [\w:-]+|spillway [\w-]+)/g)].map((m) => m[1]!)),
  );
}

describe('README and docs/', () => {
  it('have something to check in every list (configuration keys, CLI flags and commands, settings, commands, docs)', () => {
    expect({
      configKeys: configKeys.length > 0,
      flags: flags.length > 0,
      cliCommands: cliCommands.length > 0,
      settings: settings.length > 0,
      commands: commands.length > 0,
      docs: docFiles.length > 0,
      readmeCommands: readmeCommands().length > 0,
    }).toEqual({ configKeys: true, flags: true, cliCommands: true, settings: true, commands: true, docs: true, readmeCommands: true });
  });

  it.each(configKeys)('document the configuration key %s', (key) => {
    expect(manual).toContain('`' + key + '`');
  });

  it.each(flags)('document the CLI flag %s', (flag) => {
    expect(manual).toContain(flag);
  });

  it.each(cliCommands)('document the CLI command %s', (cmd) => {
    expect(manual).toContain(`spillway ${cmd}`);
  });

  it.each(settings)('document the setting %s', (key) => {
    const bare = key.replace(/^spillway\./, '');
    // either its full name or, in the configuration table, its bare key
    expect(
      [`\`${key}\``, `\`${bare}\``].filter((name) => manual.includes(name)),
      `mentions of ${key}`,
    ).not.toEqual([]);
  });

  it.each(commands)('document the command %s', (title) => {
    expect(manual).toContain(title);
  });

  it.each([README, ...docFiles, ...logFiles].map((f) => [relative(root, f), f]))(
    'every relative link of %s leads to a file and heading',
    (_name, file) => {
      expect(brokenLinks(file)).toEqual([]);
    },
  );
});

describe('docs/log/', () => {
  it('holds only dated records (YYYY-MM-DD-topic.md) and its index', () => {
    expect(logFiles.filter((f) => !logRecords.includes(f)).map((f) => relative(LOG, f))).toEqual(['README.md']);
  });

  it('its index lists every record', () => {
    const index = readFileSync(join(LOG, 'README.md'), 'utf8');
    const listed = [...prose(index).matchAll(/\]\(([^)#\s]+)\)/g)].map((m) => m[1]!);
    expect(logRecords.map((f) => relative(LOG, f)).filter((f) => !listed.includes(f))).toEqual([]);
  });
});

describe('README', () => {
  it(`is at most ${README_MAX_BYTES / 1024} KB`, () => {
    expect(Buffer.byteLength(readme, 'utf8')).toBeLessThanOrEqual(README_MAX_BYTES);
  });

  it('gives the two quick-start commands', () => {
    expect(readme).toMatch(/npm ci && npm start/);
    expect(readme).toMatch(/npm test/);
  });

  it('names only npm scripts and spillway subcommands that exist in its shell blocks', () => {
    const unknown = readmeCommands().filter((c) => {
      const [tool, ...rest] = c.split(' ');
      const name = rest.at(-1)!;
      if (tool === 'spillway') return !cliCommands.includes(name);
      return rest[0] === 'run' ? !npmScripts.includes(name) : !NPM_BUILTINS.includes(name);
    });
    expect(unknown).toEqual([]);
  });

  it('links every page of docs/', () => {
    const linked = [...prose(readme).matchAll(/\]\((docs\/[^)#\s]+)/g)].map((m) => m[1]!);
    expect(docFiles.map((f) => relative(root, f)).filter((f) => !linked.includes(f))).toEqual([]);
  });

  it('says the corpus of real sessions lives in test/fixtures/sessions/', () => {
    const layout = readme.slice(readme.indexOf('## Layout'));
    expect(layout).toContain('test/fixtures/sessions/');
  });
});
