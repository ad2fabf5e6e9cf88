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

/** The lists checked below; each must be non-empty, or its checks would pass by checking nothing. */
const configKeys = CONFIG_KEYS.map((k) => k.key);
const flags = [...new Set(USAGE.match(/--[a-z-]+/g) ?? [])];
const cliCommands = [...USAGE.matchAll(/spillway ([a-z]+) /g)].map((m) => m[1]!);
const settings = Object.keys((pkg.contributes?.configuration?.properties ?? {}) as Record<string, unknown>);
const commands = ((pkg.contributes?.commands ?? []) as { title: string }[]).map((c) => c.title);

describe('README', () => {
  it('has something to check in every list (configuration keys, CLI flags and commands, settings, commands)', () => {
    expect({
      configKeys: configKeys.length > 0,
      flags: flags.length > 0,
      cliCommands: cliCommands.length > 0,
      settings: settings.length > 0,
      commands: commands.length > 0,
    }).toEqual({ configKeys: true, flags: true, cliCommands: true, settings: true, commands: true });
  });

  it.each(configKeys)('documents the configuration key %s', (key) => {
    expect(readme).toContain('`' + key + '`');
  });

  it.each(flags)('documents the CLI flag %s', (flag) => {
    expect(readme).toContain(flag);
  });

  it.each(cliCommands)('documents the CLI command %s', (cmd) => {
    expect(readme).toContain(`spillway ${cmd}`);
  });

  it.each(settings)('documents the setting %s', (key) => {
    const bare = key.replace(/^spillway\./, '');
    // either its full name or, in the configuration table, its bare key
    expect(
      [`\`${key}\``, `\`${bare}\``].filter((name) => readme.includes(name)),
      `README mentions of ${key}`,
    ).not.toEqual([]);
  });

  it.each(commands)('documents the command %s', (title) => {
    expect(readme).toContain(title);
  });

  it('gives the two quick-start commands', () => {
    expect(readme).toMatch(/npm ci && npm start/);
    expect(readme).toMatch(/npm test/);
  });
});
