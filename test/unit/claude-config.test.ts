/**
 * The edits behind Spillway's Claude Code commands (and test/agents): `.mcp.json`'s server entry,
 * `settings.local.json`'s allow-once and route, each added and removed with every other byte of the
 * user's file kept, a user's own values left alone, a broken file refused.
 */
import { describe, expect, test } from 'vitest';
import {
  addMcpJsonServer,
  allowMcpTools,
  CLAUDE_MCP_TOOLS,
  claudeMcpAddCommand,
  disallowMcpTools,
  removeMcpJsonServer,
  routeClaudeCode,
  unrouteClaudeCode,
  type McpLaunch,
} from '../../src/proxy/claudeConfig';
import { JsonFileError } from '../../src/proxy/jsonFile';

const LAUNCH: McpLaunch = { command: 'spillway', args: ['mcp', '--store', '/home/me/.spillway/store'] };
const URL_A = 'http://127.0.0.1:8417';
const URL_B = 'http://127.0.0.1:9000';

/** A `.mcp.json` as people keep them: four-space indent, another server, an escaped string. */
const MCP_JSON =
  '{\n    "mcpServers": {\n        "docs": {\n            "command": "npx",\n            "args": ["-y", "docs-mcp", "a\\u00e9"]\n        }\n    }\n}\n';
const SETTINGS =
  '{\r\n  "model": "opus",\r\n  "permissions": {\r\n    "allow": [\r\n      "Bash(npm test:*)"\r\n    ],\r\n    "deny": []\r\n  }\r\n}';

describe('.mcp.json', () => {
  test('gets Spillway after the other servers, in the file own indentation, the rest byte-identical', () => {
    const r = addMcpJsonServer(MCP_JSON, LAUNCH);
    expect(r.changed).toBe(true);
    expect(JSON.parse(r.text).mcpServers.spillway).toEqual({ type: 'stdio', ...LAUNCH });
    const at = MCP_JSON.indexOf('        }\n    }') + '        }'.length;
    expect(r.text.slice(0, at)).toBe(MCP_JSON.slice(0, at));
    expect(r.text).toContain(',\n        "spillway": {\n            "type": "stdio",');
    expect(r.text.endsWith('\n    }\n}\n')).toBe(true);
  });

  test('comes back byte for byte when the server is removed', () => {
    expect(removeMcpJsonServer(addMcpJsonServer(MCP_JSON, LAUNCH).text).text).toBe(MCP_JSON);
  });

  test('an empty or missing file gets just the server', () => {
    expect(JSON.parse(addMcpJsonServer('', LAUNCH).text)).toEqual({ mcpServers: { spillway: { type: 'stdio', ...LAUNCH } } });
    expect(JSON.parse(addMcpJsonServer('{}', LAUNCH).text)).toEqual({ mcpServers: { spillway: { type: 'stdio', ...LAUNCH } } });
  });

  test('a second add with a new store replaces Spillway own entry and changes nothing else', () => {
    const once = addMcpJsonServer(MCP_JSON, LAUNCH).text;
    const moved = addMcpJsonServer(once, { ...LAUNCH, args: ['mcp', '--store', '/elsewhere'] });
    expect(JSON.parse(moved.text).mcpServers.spillway.args).toEqual(['mcp', '--store', '/elsewhere']);
    expect(removeMcpJsonServer(moved.text).text).toBe(MCP_JSON);
  });

  test('adding the same entry again changes nothing', () => {
    const once = addMcpJsonServer(MCP_JSON, LAUNCH).text;
    expect(addMcpJsonServer(once, LAUNCH)).toEqual({ text: once, changed: false });
  });

  test('a server named spillway that is not Spillway is refused and never removed', () => {
    const theirs = '{"mcpServers": {"spillway": {"command": "python", "args": ["my_spillway.py"]}}}';
    expect(() => addMcpJsonServer(theirs, LAUNCH)).toThrow(JsonFileError);
    expect(removeMcpJsonServer(theirs)).toEqual({ text: theirs, changed: false });
  });

  test('a file that is not JSON is refused, naming it', () => {
    expect(() => addMcpJsonServer('{"mcpServers": {', LAUNCH, '/w/.mcp.json')).toThrow(/\/w\/.mcp.json is not valid JSON/);
  });
});

describe('settings.local.json: allowing the tools once', () => {
  test('adds the server to enabledMcpjsonServers and both tools to permissions.allow, keeping CRLF and the rest', () => {
    const r = allowMcpTools(SETTINGS);
    const v = JSON.parse(r.text);
    expect(v.permissions.allow).toEqual(['Bash(npm test:*)', ...CLAUDE_MCP_TOOLS]);
    expect(v.enabledMcpjsonServers).toEqual(['spillway']);
    expect(r.text).toContain('"Bash(npm test:*)",\r\n      "mcp__spillway__read_output",\r\n      "mcp__spillway__find_outputs"\r\n    ]');
    expect(r.text.includes('\n') && !/[^\r]\n/.test(r.text)).toBe(true);
  });

  test('comes back byte for byte when taken back', () => {
    expect(disallowMcpTools(allowMcpTools(SETTINGS).text).text).toBe(SETTINGS);
  });

  test('does not add a tool twice', () => {
    const once = allowMcpTools(SETTINGS).text;
    expect(allowMcpTools(once)).toEqual({ text: once, changed: false });
  });
});

describe('settings.local.json: routing Claude Code', () => {
  test('sets ANTHROPIC_BASE_URL and ENABLE_TOOL_SEARCH in env, and removes exactly them', () => {
    const r = routeClaudeCode(SETTINGS, URL_A, []);
    expect(JSON.parse(r.text).env).toEqual({ ANTHROPIC_BASE_URL: URL_A, ENABLE_TOOL_SEARCH: 'true' });
    expect(r.toolSearchAdded).toBe(true);
    expect(unrouteClaudeCode(r.text, [URL_A], true).text).toBe(SETTINGS);
  });

  test('follows the proxy to a new port, replacing only the URL Spillway wrote', () => {
    const moved = routeClaudeCode(routeClaudeCode(SETTINGS, URL_A, []).text, URL_B, [URL_A]);
    expect(JSON.parse(moved.text).env.ANTHROPIC_BASE_URL).toBe(URL_B);
    expect(unrouteClaudeCode(moved.text, [URL_A, URL_B], true).text).toBe(SETTINGS);
  });

  test('refuses to replace a base URL the user set themselves', () => {
    const theirs = '{"env": {"ANTHROPIC_BASE_URL": "https://gateway.example"}}';
    expect(() => routeClaudeCode(theirs, URL_A, [])).toThrow(/already sets env.ANTHROPIC_BASE_URL/);
    expect(unrouteClaudeCode(theirs, [URL_A], true).text).toBe(theirs);
  });

  test('keeps the user own ENABLE_TOOL_SEARCH and does not take it back', () => {
    const theirs = '{"env": {"ENABLE_TOOL_SEARCH": "false"}}';
    const r = routeClaudeCode(theirs, URL_A, []);
    expect(JSON.parse(r.text).env).toEqual({ ENABLE_TOOL_SEARCH: 'false', ANTHROPIC_BASE_URL: URL_A });
    expect(r.toolSearchAdded).toBe(false);
    expect(unrouteClaudeCode(r.text, [URL_A], false).text).toBe(theirs);
  });
});

describe('claude mcp add', () => {
  test('is the command that registers the same launch, quoted for a POSIX shell', () => {
    expect(
      claudeMcpAddCommand({
        command: '/opt/VS Code/code',
        args: ['/ext/dist/cli.js', 'mcp', '--store', "/it's"],
        env: { ELECTRON_RUN_AS_NODE: '1' },
      }),
    ).toBe(`claude mcp add spillway -e ELECTRON_RUN_AS_NODE=1 -- '/opt/VS Code/code' /ext/dist/cli.js mcp --store '/it'\\''s'`);
    expect(claudeMcpAddCommand(LAUNCH)).toBe('claude mcp add spillway -- spillway mcp --store /home/me/.spillway/store');
  });
});
