/**
 * The README is the manual: every setting, command, CLI command and flag the project ships must be
 * in it, so a new one cannot land undocumented.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { USAGE } from '../../src/cli/main';
import { CONFIG_KEYS } from '../../src/engine/config';

const root = join(__dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

describe('README', () => {
  it.each(CONFIG_KEYS.map((k) => k.key))('documents the configuration key %s', (key) => {
    expect(readme).toContain('`' + key + '`');
  });

  it.each([...new Set(USAGE.match(/--[a-z-]+/g) ?? [])])('documents the CLI flag %s', (flag) => {
    expect(readme).toContain(flag);
  });

  it.each([...USAGE.matchAll(/spillway ([a-z]+) /g)].map((m) => m[1]!))('documents the CLI command %s', (cmd) => {
    expect(readme).toContain(`spillway ${cmd}`);
  });

  const settings = Object.keys(pkg.contributes?.configuration?.properties ?? {});
  it.each(settings.length ? settings : ['(none)'])('documents the setting %s', (key) => {
    if (key === '(none)') return;
    const bare = key.replace(/^spillway\./, '');
    expect(readme.includes('`' + key + '`') || readme.includes('`' + bare + '`')).toBe(true);
  });

  const commands = (pkg.contributes?.commands ?? []) as { title: string; category?: string }[];
  it.each(commands.length ? commands.map((c) => c.title) : ['(none)'])('documents the command %s', (title) => {
    if (title === '(none)') return;
    expect(readme).toContain(title);
  });

  it('gives the two quick-start commands', () => {
    expect(readme).toMatch(/npm ci && npm start/);
    expect(readme).toMatch(/npm test/);
  });
});
