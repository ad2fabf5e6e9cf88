/**
 * The edit behind Spillway: Route OpenCode Through Spillway (and test/agents): `provider.<id>.options.baseURL`
 * for OpenCode's anthropic and openai providers in its global opencode.json, added and removed with every
 * other byte of the user's file kept, a user's own baseURL left alone, a broken file refused.
 */
import { describe, expect, test } from 'vitest';
import { kiloConfigPath, opencodeConfigPath, routeKilo, routeOpenCode, unrouteKilo, unrouteOpenCode } from '../../src/proxy/opencodeConfig';
import { JsonFileError } from '../../src/proxy/jsonFile';

const URL_A = 'http://127.0.0.1:8417';
const URL_B = 'http://127.0.0.1:9000/';
/** what the route writes: the proxy with /v1, as the AI SDK providers OpenCode uses expect */
const BASE_A = 'http://127.0.0.1:8417/v1';
const BASE_B = 'http://127.0.0.1:9000/v1';

/** An opencode.json as people keep them: a schema, a model, an Ollama provider of their own, CRLF, tabs. */
const USER =
  '{\r\n\t"$schema": "https://opencode.ai/config.json",\r\n\t"model": "anthropic/claude-sonnet-4-5",\r\n\t"provider": {\r\n\t\t"ollama": {\r\n\t\t\t"npm": "@ai-sdk/openai-compatible",\r\n\t\t\t"options": { "baseURL": "http://localhost:11434/v1" }\r\n\t\t}\r\n\t}\r\n}\r\n';

describe('where and what', () => {
  test('the global file under XDG_CONFIG_HOME, else ~/.config', () => {
    expect(opencodeConfigPath({ XDG_CONFIG_HOME: '/x/cfg' }, '/home/me')).toBe('/x/cfg/opencode/opencode.json');
    expect(opencodeConfigPath({}, '/home/me')).toBe('/home/me/.config/opencode/opencode.json');
  });

  test("Kilo's: its own kilo.json beside it, the same two settings, warnings naming Kilo and its file", () => {
    expect(kiloConfigPath({ XDG_CONFIG_HOME: '/x/cfg' }, '/home/me')).toBe('/x/cfg/kilo/kilo.json');
    expect(kiloConfigPath({}, '/home/me')).toBe('/home/me/.config/kilo/kilo.json');
    const r = routeKilo(USER, URL_A, []);
    expect(r.text).toBe(routeOpenCode(USER, URL_A, []).text);
    expect(unrouteKilo(r.text, [URL_A])).toEqual({ text: USER, changed: true });
    const mine = routeKilo('{ "provider": { "anthropic": { "options": { "baseURL": "https://gw.example/v1" } } } }', URL_A, []);
    expect(mine.warnings.join('\n')).toMatch(/Kilo/);
    expect(() => routeKilo('{ // no\n}', URL_A, [])).toThrow(/kilo\.json/);
  });
});

describe('routing', () => {
  test('sets both providers to the proxy after the user own ones, in the file style, the rest byte-identical', () => {
    const r = routeOpenCode(USER, URL_A, []);
    expect([r.changed, r.warnings]).toEqual([true, []]);
    const v = JSON.parse(r.text);
    expect(v.provider.anthropic.options.baseURL).toBe(BASE_A);
    expect(v.provider.openai.options.baseURL).toBe(BASE_A);
    expect(v.provider.ollama).toEqual(JSON.parse(USER).provider.ollama);
    const at = USER.indexOf('\r\n\t\t}\r\n\t}') + '\r\n\t\t}'.length;
    expect(r.text.slice(0, at)).toBe(USER.slice(0, at));
    expect(r.text).toContain(',\r\n\t\t"anthropic": {\r\n\t\t\t"options": {\r\n\t\t\t\t"baseURL": "http://127.0.0.1:8417/v1"');
    expect(r.text.endsWith('\r\n\t}\r\n}\r\n')).toBe(true);
  });

  test('an empty or missing file becomes a normal one', () => {
    const r = routeOpenCode('', URL_A, []);
    expect(JSON.parse(r.text)).toEqual({
      provider: { anthropic: { options: { baseURL: BASE_A } }, openai: { options: { baseURL: BASE_A } } },
    });
    expect(r.text.endsWith('}\n')).toBe(true);
  });

  test('routing twice changes nothing; a move to another port replaces only what Spillway wrote', () => {
    const once = routeOpenCode(USER, URL_A, []).text;
    expect(routeOpenCode(once, URL_A, [URL_A])).toEqual({ text: once, changed: false, warnings: [] });
    const moved = routeOpenCode(once, URL_B, [URL_A]);
    expect(moved.text).toBe(once.split(BASE_A).join(BASE_B));
  });

  test('a baseURL the user set stays theirs: that provider is skipped with a warning, the other routed', () => {
    const mine = '{\n  "provider": {\n    "openai": { "options": { "baseURL": "https://gw.example/v1", "timeout": 5 } }\n  }\n}\n';
    const r = routeOpenCode(mine, URL_A, []);
    const v = JSON.parse(r.text);
    expect(v.provider.openai.options).toEqual({ baseURL: 'https://gw.example/v1', timeout: 5 });
    expect(v.provider.anthropic.options.baseURL).toBe(BASE_A);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(
      /provider\.openai\.options\.baseURL = "https:\/\/gw\.example\/v1".*openai provider does not go through Spillway/,
    );
  });

  test('a file that is not plain JSON (comments, as opencode.jsonc allows) is refused, naming the file', () => {
    const jsonc = '{\n  // mine\n  "model": "x"\n}\n';
    expect(() => routeOpenCode(jsonc, URL_A, [], '/home/me/.config/opencode/opencode.json')).toThrow(JsonFileError);
    expect(() => routeOpenCode(jsonc, URL_A, [], '/home/me/.config/opencode/opencode.json')).toThrow(
      /\/home\/me\/\.config\/opencode\/opencode\.json is not valid JSON.*left unchanged/,
    );
  });
});

describe('unrouting', () => {
  test('gives back the user file byte for byte', () => {
    const routed = routeOpenCode(USER, URL_A, []).text;
    expect(unrouteOpenCode(routed, [URL_A])).toEqual({ text: USER, changed: true });
    expect(unrouteOpenCode(routeOpenCode('', URL_A, []).text, [URL_A]).text).toBe('{}\n');
  });

  test('leaves a baseURL Spillway did not write, and a file with none', () => {
    const mine = '{ "provider": { "anthropic": { "options": { "baseURL": "http://127.0.0.1:8417/v1" } } } }';
    expect(unrouteOpenCode(mine, [URL_B])).toEqual({ text: mine, changed: false });
    expect(unrouteOpenCode(USER, [URL_A])).toEqual({ text: USER, changed: false });
  });

  test('keeps the other options of a provider when taking the baseURL back', () => {
    const withKey = '{\n  "provider": {\n    "anthropic": {\n      "options": {\n        "timeout": 600000\n      }\n    }\n  }\n}\n';
    const routed = routeOpenCode(withKey, URL_A, []).text;
    expect(JSON.parse(routed).provider.anthropic.options).toEqual({ timeout: 600000, baseURL: BASE_A });
    expect(unrouteOpenCode(routed, [URL_A]).text).toBe(withKey);
  });
});
