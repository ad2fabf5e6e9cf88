/**
 * Gemini CLI's settings.json as Spillway edits it (src/proxy/geminiConfig.ts): the API key sign-in
 * and `mcpServers.spillway`, added and taken back with every other byte of the file kept.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  addGeminiMcpServer,
  geminiSettingsPath,
  removeGeminiMcpServer,
  routeGeminiCli,
  unrouteGeminiCli,
} from '../../src/proxy/geminiConfig';
import { JsonFileError } from '../../src/proxy/jsonFile';

const launch = { command: '/usr/bin/node', args: ['/ext/dist/cli.js', 'mcp', '--store', '/s'] };
const USER = '{\r\n    "ui": { "theme": "GitHub" },\r\n    "general": {\r\n        "vimMode": true\r\n    }\r\n}\r\n';

describe('Gemini CLI settings: the sign-in', () => {
  it('chooses the API key sign-in in a file without one, keeping every other byte, and takes it back exactly', () => {
    const routed = routeGeminiCli(USER);
    expect(routed.added).toBe(true);
    expect(JSON.parse(routed.text)).toEqual({
      ui: { theme: 'GitHub' },
      general: { vimMode: true },
      security: { auth: { selectedType: 'gemini-api-key' } },
    });
    expect(routed.text.startsWith('{\r\n    "ui": { "theme": "GitHub" },\r\n    "general": {\r\n        "vimMode": true\r\n    },')).toBe(
      true,
    );
    expect(unrouteGeminiCli(routed.text, true).text).toBe(USER);
  });

  it('writes a new file from nothing', () => {
    expect(JSON.parse(routeGeminiCli('').text)).toEqual({ security: { auth: { selectedType: 'gemini-api-key' } } });
  });

  it('leaves a file that already chooses the API key alone, and does not take back what it did not add', () => {
    const text = '{"security":{"auth":{"selectedType":"gemini-api-key"}}}';
    expect(routeGeminiCli(text)).toEqual({ text, changed: false, added: false });
    expect(unrouteGeminiCli(text, false)).toEqual({ text, changed: false });
  });

  it('refuses to switch a user who signs in with Google, naming why, and leaves the file', () => {
    const text = '{"security":{"auth":{"selectedType":"oauth-personal"}}}';
    let err: unknown;
    try {
      routeGeminiCli(text, '/h/.gemini/settings.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(JsonFileError);
    expect((err as Error).message).toMatch(/^\/h\/\.gemini\/settings\.json signs Gemini CLI in otherwise .*"gemini-api-key"/);
  });

  it('reports a settings file with comments instead of rewriting it', () => {
    expect(() => routeGeminiCli('{\n  // mine\n  "ui": {}\n}\n')).toThrow(/is not valid JSON.*left unchanged/);
  });

  it('keeps a sign-in the user changed after routing', () => {
    const text = '{"security":{"auth":{"selectedType":"vertex-ai"}}}';
    expect(unrouteGeminiCli(text, true).changed).toBe(false);
  });
});

describe('Gemini CLI settings: spillway mcp', () => {
  it('adds mcpServers.spillway, trusted, next to the user servers, and removes only it', () => {
    const text = '{\n  "mcpServers": {\n    "github": { "command": "gh-mcp" }\n  }\n}\n';
    const added = addGeminiMcpServer(text, launch);
    expect(JSON.parse(added.text).mcpServers).toEqual({
      github: { command: 'gh-mcp' },
      spillway: { command: '/usr/bin/node', args: ['/ext/dist/cli.js', 'mcp', '--store', '/s'], trust: true },
    });
    expect(removeGeminiMcpServer(added.text).text).toBe(text);
  });

  it("replaces its own earlier entry, but never a user's own server named spillway", () => {
    const old = addGeminiMcpServer('', { command: 'spillway', args: ['mcp', '--store', '/old'] }).text;
    expect(JSON.parse(addGeminiMcpServer(old, launch).text).mcpServers.spillway.args).toEqual(launch.args);
    const mine = '{"mcpServers":{"spillway":{"command":"my-tool"}}}';
    expect(() => addGeminiMcpServer(mine, launch)).toThrow(/already sets mcpServers\.spillway/);
    expect(removeGeminiMcpServer(mine).changed).toBe(false);
  });
});

describe('where the settings are', () => {
  it('is ~/.gemini/settings.json, or under GEMINI_CLI_HOME when set', () => {
    expect(geminiSettingsPath({ GEMINI_CLI_HOME: '/g' })).toBe(join('/g', '.gemini', 'settings.json'));
    expect(geminiSettingsPath({})).toMatch(/[\\/]\.gemini[\\/]settings\.json$/);
  });
});
