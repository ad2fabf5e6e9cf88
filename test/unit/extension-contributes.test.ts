import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CONFIG_KEYS } from '../../src/engine/index';
import { contributes, COMMAND_TITLES, INSPECTOR_SETTINGS } from '../../src/extension/pure/contributes';
import { STORAGE_KEYS } from '../../src/extension/pure/settings';
import { PROXY_KEYS } from '../../src/extension/proxyConfig';

const pkg = JSON.parse(readFileSync(join(__dirname, '../../package.json'), 'utf8'));

describe('package.json contributes', () => {
  it('matches what the engine declares (run `node scripts/gen-contributes.mjs` to update)', () => {
    expect(pkg.contributes).toEqual(contributes());
  });

  it('declares every engine key, the storage keys, the proxy keys and the chat models under spillway.*, each with a description', () => {
    const props = pkg.contributes.configuration.properties as Record<string, Record<string, unknown>>;
    const keys = [
      ...[...CONFIG_KEYS, ...STORAGE_KEYS, ...PROXY_KEYS].map((k) => `spillway.${k.key}`),
      'spillway.languageModels',
      ...Object.keys(INSPECTOR_SETTINGS),
    ];
    expect(Object.keys(props).sort()).toEqual(keys.sort());
    for (const k of keys) {
      expect(props[k]?.markdownDescription, k).toBeTruthy();
      expect(props[k], k).toHaveProperty('default');
    }
  });

  it('declares the first-run walkthrough, each step with a Markdown page that exists and commands that exist', () => {
    const [w] = pkg.contributes.walkthroughs as { id: string; steps: { id: string; description: string; media: { markdown: string } }[] }[];
    expect(w!.steps.map((s) => s.id)).toEqual(['inspect', 'route', 'cap', 'read']);
    const commands = new Set(Object.keys(COMMAND_TITLES));
    for (const step of w!.steps) {
      expect(existsSync(join(__dirname, '../..', step.media.markdown)), step.media.markdown).toBe(true);
      for (const m of step.description.matchAll(/\(command:([\w.]+)\)/g)) expect(commands.has(m[1]!), m[1]).toBe(true);
    }
    expect(pkg.contributes.configuration.properties['spillway.inspector.openOnStartup'].default).toBe(false);
  });

  it('puts every command in the Spillway category', () => {
    const cmds = pkg.contributes.commands as { command: string; title: string; category: string }[];
    expect(cmds.map((c) => c.command).sort()).toEqual(Object.keys(COMMAND_TITLES).sort());
    for (const c of cmds) expect(c.category).toBe('Spillway');
  });

  it('declares the spillway chat model vendor, managed by its command, activated on demand (VS Code 1.104+)', () => {
    expect(pkg.contributes.languageModelChatProviders).toEqual([
      { vendor: 'spillway', displayName: 'Spillway', managementCommand: 'spillway.manageLanguageModels' },
    ]);
    expect(Object.keys(COMMAND_TITLES)).toContain('spillway.manageLanguageModels');
    expect(pkg.activationEvents).toContain('onLanguageModelChatProvider:spillway');
    expect(pkg.engines.vscode).toBe('^1.95.0');
  });

  it('declares the read tool with its input schema', () => {
    const [tool] = pkg.contributes.languageModelTools;
    expect(tool.name).toBe('spillway_read_output');
    expect(Object.keys(tool.inputSchema.properties).sort()).toEqual(['context', 'grep', 'handle', 'limit', 'lines', 'offset']);
  });
});
