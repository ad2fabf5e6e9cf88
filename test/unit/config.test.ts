/** The configuration: presets, overrides, strict and lenient validation with named keys. */
import { describe, expect, it } from 'vitest';
import { capFor, CONFIG_KEYS, parseConfig, PRESETS, PRESET_NAMES, validateConfig } from '../../src/engine/config';

describe('configuration', () => {
  it('defaults to the spillway preset', () => {
    expect(validateConfig({})).toEqual(PRESETS.spillway);
  });
  it('lets set keys override the preset, nested or dotted alike', () => {
    const a = validateConfig({ preset: 'eino', clear: { keep: 4 } });
    const b = validateConfig({ preset: 'eino', 'clear.keep': 4 });
    expect(a).toEqual(b);
    expect(a.clear).toMatchObject({ enabled: true, keep: 4, triggerTokens: 30_000 });
  });
  it('every preset is itself a valid configuration', () => {
    for (const name of PRESET_NAMES) expect(validateConfig(PRESETS[name])).toEqual(PRESETS[name]);
  });
  it('strict validation names the key and the problem', () => {
    expect(() => validateConfig({ previewChars: -1 })).toThrow(/config: previewChars: .*>=0.*got -1/);
    expect(() => validateConfig({ toolCaps: { bash: 'lots' } })).toThrow(/toolCaps/);
    expect(() => validateConfig({ preset: 'nope' })).toThrow(/preset/);
  });
  it('lenient parsing falls back per key and reports each problem', () => {
    const { config, problems } = parseConfig({ previewChars: 'big', window: { recentTurns: 0, enabled: true }, mystery: 1 });
    expect(config.previewChars).toBe(PRESETS.spillway.previewChars);
    expect(config.window.recentTurns).toBe(PRESETS.spillway.window.recentTurns);
    expect(config.window.enabled).toBe(true);
    expect(problems.map((p) => p.key).sort()).toEqual(['mystery', 'previewChars', 'window.recentTurns']);
    expect(problems.find((p) => p.key === 'previewChars')!.message).toMatch(/using the default/);
  });
  it('documents every key with a description', () => {
    for (const k of CONFIG_KEYS) expect(k.description.length).toBeGreaterThan(20);
  });
});

describe('capFor', () => {
  const cfg = validateConfig({ defaultCap: 1000, toolCaps: { read_file: 'unlimited', 'mcp__github__*': 50, 'mcp__*': 70, grep: 10 } });
  it('uses an exact name first', () => {
    expect(capFor(cfg, ['grep'])).toBe(10);
  });
  it('uses the bare name of a namespaced tool', () => {
    expect(capFor(cfg, ['mcp__fs__read_file', 'read_file'])).toBe('unlimited');
  });
  it('uses the longest matching pattern', () => {
    expect(capFor(cfg, ['mcp__github__search'])).toBe(50);
    expect(capFor(cfg, ['mcp__jira__x'])).toBe(70);
  });
  it('falls back to the default for unknown tools', () => {
    expect(capFor(cfg, ['whatever'])).toBe(1000);
  });
});
