import { describe, expect, it } from 'vitest';
import { CONFIG_KEYS, parseConfig } from '../../src/engine/index';
import {
  configInputFromSettings,
  parseCapInput,
  problemWarning,
  readStorageSettings,
  resolveStoreFolder,
  settingProblems,
  updateToolCaps,
  userValue,
  type InspectedValue,
} from '../../src/extension/pure/settings';

const inspector = (values: Record<string, InspectedValue>) => (key: string) => values[key];

describe('settings → engine config', () => {
  it('passes only the keys the user set, so the preset keeps meaning', () => {
    const input = configInputFromSettings(CONFIG_KEYS, inspector({ preset: { globalValue: 'openai-trimmer' } }));
    expect(input).toEqual({ preset: 'openai-trimmer' });
    expect(parseConfig(input).config.window.recentTurns).toBe(2);
  });

  it('nests dotted keys the way --config JSON does', () => {
    const input = configInputFromSettings(
      CONFIG_KEYS,
      inspector({
        'window.recentTurns': { globalValue: 4 },
        'window.enabled': { workspaceValue: true },
        toolCaps: { workspaceValue: { bash: 'unlimited' } },
      }),
    );
    expect(input).toEqual({ window: { recentTurns: 4, enabled: true }, toolCaps: { bash: 'unlimited' } });
    const { config, problems } = parseConfig(input);
    expect(problems).toEqual([]);
    expect(config.window.recentTurns).toBe(4);
    expect(config.toolCaps).toEqual({ bash: 'unlimited' });
  });

  it('lets a folder value beat a workspace value and a workspace value beat a user value', () => {
    expect(userValue({ globalValue: 1, workspaceValue: 2, workspaceFolderValue: 3 })).toEqual({ set: true, value: 3 });
    expect(userValue({ globalValue: 1, workspaceValue: 2 })).toEqual({ set: true, value: 2 });
    expect(userValue({ globalValue: 1 })).toEqual({ set: true, value: 1 });
    expect(userValue({})).toEqual({ set: false });
    expect(userValue(undefined)).toEqual({ set: false });
  });

  it('names the bad setting and says it falls back to its default', () => {
    const { problems } = parseConfig(configInputFromSettings(CONFIG_KEYS, inspector({ 'window.recentTurns': { globalValue: 0 } })));
    const [p] = settingProblems(problems);
    expect(p?.setting).toBe('spillway.window.recentTurns');
    const text = problemWarning(p!);
    expect(text).toContain('spillway.window.recentTurns');
    expect(text).toContain('falls back to its default');
    expect(text).not.toMatch(/using the default/);
  });

  it('says a bad preset falls back to the spillway preset', () => {
    const { problems } = parseConfig({ preset: 'nope' });
    expect(problemWarning(settingProblems(problems)[0]!)).toMatch(/spillway\.preset is invalid .* falls back to the "spillway" preset/);
  });
});

describe('storage settings', () => {
  it('uses the defaults when nothing is set', () => {
    expect(readStorageSettings(() => undefined)).toEqual({ settings: { retentionDays: 14, maxMegabytes: 256, folder: '' }, problems: [] });
  });

  it('falls back per key and reports a bad value', () => {
    const r = readStorageSettings(inspector({ 'storage.retentionDays': { globalValue: -3 }, 'storage.maxMegabytes': { globalValue: 10 } }));
    expect(r.settings).toEqual({ retentionDays: 14, maxMegabytes: 10, folder: '' });
    expect(r.problems.map((p) => p.setting)).toEqual(['spillway.storage.retentionDays']);
  });
});

describe('tool caps', () => {
  it('sets, replaces and removes one tool, keeping the others', () => {
    expect(updateToolCaps({ grep: 4000 }, 'bash', 'unlimited')).toEqual({ grep: 4000, bash: 'unlimited' });
    expect(updateToolCaps({ grep: 4000, bash: 1 }, 'bash', 16000)).toEqual({ grep: 4000, bash: 16000 });
    expect(updateToolCaps({ grep: 4000, bash: 1 }, 'bash', 'default')).toEqual({ grep: 4000 });
    expect(updateToolCaps(undefined, 'bash', 10)).toEqual({ bash: 10 });
    expect(updateToolCaps({ bad: 'x', ok: 5 }, 't', 1)).toEqual({ ok: 5, t: 1 });
  });

  it('parses typed caps', () => {
    expect(parseCapInput('12000')).toBe(12000);
    expect(parseCapInput('12,000')).toBe(12000);
    expect(parseCapInput('12k')).toBe(12000);
    expect(parseCapInput(' Unlimited ')).toBe('unlimited');
    expect(parseCapInput('0')).toBeUndefined();
    expect(parseCapInput('-5')).toBeUndefined();
    expect(parseCapInput('lots')).toBeUndefined();
  });
});

describe('store folder', () => {
  const posix = { isAbsolute: (p: string) => p.startsWith('/'), join: (...p: string[]) => p.join('/') };
  it('is the default (workspace storage) when empty', () => {
    expect(resolveStoreFolder('', '/ws', posix.isAbsolute, posix.join)).toEqual({});
  });
  it('expands ${workspaceFolder} and resolves relative paths against the first folder', () => {
    expect(resolveStoreFolder('${workspaceFolder}/.spillway/store', '/ws', posix.isAbsolute, posix.join)).toEqual({
      path: '/ws/.spillway/store',
    });
    expect(resolveStoreFolder('.spillway', '/ws', posix.isAbsolute, posix.join)).toEqual({ path: '/ws/.spillway' });
    expect(resolveStoreFolder('/abs/store', undefined, posix.isAbsolute, posix.join)).toEqual({ path: '/abs/store' });
  });
  it('reports a relative folder when no folder is open', () => {
    expect(resolveStoreFolder('rel', undefined, posix.isAbsolute, posix.join).problem).toMatch(/needs an open workspace folder/);
  });
  it('reports a folder that is not a string', () => {
    const r = readStorageSettings(inspector({ 'storage.folder': { globalValue: 42 } }));
    expect(r.settings.folder).toBe('');
    expect(r.problems[0]?.setting).toBe('spillway.storage.folder');
  });
});
