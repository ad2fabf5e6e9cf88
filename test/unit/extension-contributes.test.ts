import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { CONFIG_KEYS, DEFAULT_CONFIG, configValue, parseConfig } from '../../src/engine/index';
import { contributes, COMMAND_TITLES, INSPECTOR_SETTINGS } from '../../src/extension/pure/contributes';
import { STORAGE_KEYS, configurationContribution, readStorageSettings } from '../../src/extension/pure/settings';
import { PROXY_KEYS, readProxySettings } from '../../src/extension/proxyConfig';
import { ModelEntry } from '../../src/extension/chat/models';

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
    expect(w!.steps.map((s) => s.id)).toEqual(['observe', 'inspect', 'route', 'cap', 'read']);
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

  it('declares the extract tool, which needs a handle and a question', () => {
    const tool = pkg.contributes.languageModelTools[1];
    expect(tool.name).toBe('spillway_extract');
    expect(tool.inputSchema.required).toEqual(['handle', 'question']);
  });
});

describe('settings bounds in package.json come from the zod schemas', () => {
  type Prop = { type: unknown; minimum?: number; maximum?: number; enum?: unknown[]; pattern?: string; default?: unknown };
  const props = pkg.contributes.configuration.properties as Record<string, Prop>;
  const keys = [...CONFIG_KEYS, ...STORAGE_KEYS, ...PROXY_KEYS];
  const bounded = keys.filter((k) => props[`spillway.${k.key}`]?.minimum !== undefined);
  const enums = keys.filter((k) => props[`spillway.${k.key}`]?.enum !== undefined);

  it('gives every bounded setting exactly the range its schema accepts: the bounds pass, one past them fails', () => {
    expect(bounded.map((k) => k.key)).toEqual(expect.arrayContaining(['defaultCap', 'clear.keep', 'storage.retentionDays', 'proxy.port']));
    for (const k of bounded) {
      const { minimum, maximum } = props[`spillway.${k.key}`]!;
      expect(maximum, k.key).toBeTypeOf('number');
      expect(k.schema.safeParse(minimum).success, `${k.key} accepts its minimum ${minimum}`).toBe(true);
      expect(k.schema.safeParse(maximum).success, `${k.key} accepts its maximum ${maximum}`).toBe(true);
      expect(k.schema.safeParse(minimum! - 1).success, `${k.key} refuses ${minimum! - 1}`).toBe(false);
      expect(k.schema.safeParse(maximum! + 1).success, `${k.key} refuses ${maximum! + 1}`).toBe(false);
    }
  });

  it('gives every enum setting exactly the values its schema accepts', () => {
    expect(enums.map((k) => k.key)).toEqual(expect.arrayContaining(['preset', 'preview', 'clear.schedule', 'proxy.websockets']));
    for (const k of enums) {
      const listed = props[`spillway.${k.key}`]!.enum!;
      expect(listed, k.key).toEqual((k.schema as z.ZodEnum).options);
      for (const v of listed) expect(k.schema.safeParse(v).success, `${k.key}: ${String(v)}`).toBe(true);
      expect(k.schema.safeParse('not-a-choice').success, k.key).toBe(false);
    }
  });

  it('gives the number-or-word settings the word their schema accepts, and every default passes its schema', () => {
    expect(props['spillway.defaultCap']!.pattern).toBe('^unlimited$');
    expect(props['spillway.clear.clearAtLeastTokens']!.pattern).toBe('^all$');
    const caps = pkg.contributes.configuration.properties['spillway.toolCaps'].additionalProperties as Prop;
    expect(caps).toMatchObject({ minimum: 1, maximum: 1_000_000_000, pattern: '^unlimited$' });
    for (const k of keys) {
      const d = props[`spillway.${k.key}`]!.default;
      expect(k.schema.safeParse(d).success, `${k.key} default ${JSON.stringify(d)}`).toBe(true);
    }
  });

  it('follows a bound changed in zod: a test copy of the schemas yields the new bounds and enum', () => {
    const changed = CONFIG_KEYS.map((k) =>
      k.key === 'clear.keep'
        ? { ...k, schema: z.number().int().min(2).max(7) }
        : k.key === 'capUnit'
          ? { ...k, schema: z.enum(['chars']) }
          : k.key === 'defaultCap'
            ? { ...k, schema: z.union([z.number().int().min(5).max(50), z.literal('unlimited')]) }
            : k,
    );
    const out = configurationContribution(changed, (key) => configValue(DEFAULT_CONFIG, key)) as { properties: Record<string, Prop> };
    expect(out.properties['spillway.clear.keep']).toMatchObject({ type: 'integer', minimum: 2, maximum: 7 });
    expect(out.properties['spillway.capUnit']!.enum).toEqual(['chars']);
    expect(out.properties['spillway.defaultCap']).toMatchObject({
      type: ['integer', 'string'],
      minimum: 5,
      maximum: 50,
      pattern: '^unlimited$',
    });
    // and so package.json, generated from the real schemas, would be stale: the check catches it
    expect(out.properties['spillway.clear.keep']).not.toEqual(props['spillway.clear.keep']);
    expect(out.properties['spillway.previewChars']).toEqual(props['spillway.previewChars']);
  });

  it('derives the language model entries from ModelEntry', () => {
    const items = pkg.contributes.configuration.properties['spillway.languageModels'].items;
    expect(items.required).toEqual(['name', 'api', 'baseUrl', 'model']);
    expect(items.additionalProperties).toBe(false);
    expect(items.properties.name).toMatchObject({ minLength: 1, maxLength: 80 });
    expect(items.properties.api.enum).toEqual(ModelEntry.shape.api.options);
    expect(items.properties.maxInputTokens).toMatchObject({ type: 'integer', minimum: 1 });
  });

  it('still falls back to the default and says so when a value is one past a bound', () => {
    for (const k of CONFIG_KEYS.filter((c) => bounded.includes(c))) {
      const over = props[`spillway.${k.key}`]!.maximum! + 1;
      const { config, problems } = parseConfig({ [k.key]: over });
      expect(
        problems.map((p) => p.key),
        k.key,
      ).toEqual([k.key]);
      expect(problems[0]!.message, k.key).toMatch(/using the default$/);
      expect(configValue(config, k.key), k.key).toEqual(configValue(DEFAULT_CONFIG, k.key));
    }
    const storage = readStorageSettings((key) => (key === 'storage.retentionDays' ? { globalValue: 3651 } : undefined));
    expect(storage.settings.retentionDays).toBe(14);
    expect(storage.problems[0]!.message).toBe('expected an integer from 1 to 3650, got 3651');
    const proxy = readProxySettings((key) => (key === 'proxy.port' ? { globalValue: 65536 } : undefined));
    expect(proxy.settings.port).toBe(8417);
    expect(proxy.problems[0]!.message).toBe('expected a port from 0 to 65535, got 65536');
  });
});
