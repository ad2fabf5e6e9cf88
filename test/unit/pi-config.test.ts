/**
 * The edit that routes the pi coding agent (test/agents): `providers.<name>.baseUrl` in its models.json,
 * the Anthropic provider without `/v1` (Anthropic's SDK adds it) and the OpenAI one with it, added and
 * removed with every other byte of the user's file kept and a user's own baseUrl left alone.
 */
import { describe, expect, test } from 'vitest';
import { piModelsPath, routePi, unroutePi } from '../../src/proxy/piConfig';

const URL_A = 'http://127.0.0.1:8417';
const URL_B = 'http://127.0.0.1:9000';

/** A models.json with a local Ollama provider of the user's, in four-space indentation. */
const USER =
  '{\n    "providers": {\n        "ollama": {\n            "baseUrl": "http://localhost:11434/v1",\n            "api": "openai-completions",\n            "apiKey": "ollama",\n            "models": [{ "id": "llama3.1:8b" }]\n        }\n    }\n}\n';

describe("pi's models.json", () => {
  test('lives in PI_CODING_AGENT_DIR (a leading ~ expanded), else ~/.pi/agent', () => {
    expect(piModelsPath({}, '/home/me')).toBe('/home/me/.pi/agent/models.json');
    expect(piModelsPath({ PI_CODING_AGENT_DIR: '/x/pi' }, '/home/me')).toBe('/x/pi/models.json');
    expect(piModelsPath({ PI_CODING_AGENT_DIR: '~/pi' }, '/home/me')).toBe('/home/me/pi/models.json');
  });

  test('gets the Anthropic provider at the proxy and the OpenAI one at the proxy with /v1, the rest byte-identical', () => {
    const r = routePi(USER, URL_A, []);
    const v = JSON.parse(r.text);
    expect([v.providers.anthropic, v.providers.openai]).toEqual([{ baseUrl: URL_A }, { baseUrl: `${URL_A}/v1` }]);
    expect(v.providers.ollama).toEqual(JSON.parse(USER).providers.ollama);
    const at = USER.indexOf('\n        }\n    }');
    expect(r.text.slice(0, at)).toBe(USER.slice(0, at));
    expect(r.warnings).toEqual([]);
  });

  test('follows the proxy to another port and gives the file back byte for byte when stopped', () => {
    const routed = routePi(USER, URL_A, []).text;
    const moved = routePi(routed, URL_B, [URL_A]).text;
    expect(JSON.parse(moved).providers.openai.baseUrl).toBe(`${URL_B}/v1`);
    expect(unroutePi(moved, [URL_A, URL_B])).toEqual({ text: USER, changed: true });
  });

  test("leaves a user's own baseUrl, with a warning naming it", () => {
    const mine = '{ "providers": { "anthropic": { "baseUrl": "https://gw.example" } } }';
    const r = routePi(mine, URL_A, []);
    expect(JSON.parse(r.text).providers.anthropic.baseUrl).toBe('https://gw.example');
    expect(r.warnings).toEqual([expect.stringMatching(/providers\.anthropic\.baseUrl = "https:\/\/gw\.example".*pi's anthropic provider/)]);
    expect(unroutePi(r.text, [URL_A]).text).toBe(mine);
  });
});
