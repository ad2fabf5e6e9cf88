/**
 * `spillway mcp` registered where agents look, in a real VS Code (code-server 4.100.3, VS Code 1.100):
 * - this VS Code has only a preview of the MCP server definition API, which wants another contribution
 *   point and throws: Spillway still activates and the language model tool `spillway_read_output`
 *   stays the way back (the fallback);
 * - Add Spillway's MCP Server for Claude Code writes `.mcp.json` and the allow-once in
 *   `.claude/settings.local.json`, keeping every other byte, and its Remove twin gives the files back;
 * - Route Claude Code Through Spillway sets env.ANTHROPIC_BASE_URL and ENABLE_TOOL_SEARCH there, its
 *   Stop twin (and turning the proxy off) takes them out again.
 * The server the entry launches is the one shipped in the .vsix: it is started here as Claude Code
 * would (the entry's command, args and env) and answers an MCP initialize.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, launch, proxyOnAt, setSpillwaySetting, waitUntil, type Harness } from './harness';
import { expectSome } from '../support/expect';
import { addMcpJsonServer, allowMcpTools } from '../../src/proxy/claudeConfig';
import { mcpLaunch } from '../../src/extension/pure/mcpLaunch';

let vs: Harness;
let port = 0;
const MCP_JSON = '{\n    "mcpServers": {\n        "docs": { "command": "npx", "args": ["-y", "docs-mcp"] }\n    }\n}\n';
const SETTINGS = '{\n  "model": "opus",\n  "permissions": {\n    "allow": ["Bash(npm test:*)"]\n  }\n}\n';

const file = (name: string) => join(vs.workspace!, name);
const mcpJson = () => file('.mcp.json');
const settings = () => file('.claude/settings.local.json');

const setSetting = (key: string, value: unknown) => setSpillwaySetting(vs, key, value);

const proxyOn = () => proxyOnAt(vs, port);

const command = (id: string) => vs.run(({ vscode }, c) => vscode.commands.executeCommand(c as string), id);

beforeAll(async () => {
  port = await freePort();
  vs = await launch({ name: 'mcp', files: { '.mcp.json': MCP_JSON, '.claude/settings.local.json': SETTINGS } });
});

afterAll(async () => {
  if (vs) await vs.screenshot('mcp-last');
  await vs?.close();
});

describe('the way back in an older VS Code', () => {
  it('activates although its preview MCP API refuses the provider, and keeps spillway_read_output', async () => {
    const tools = (await vs.run(({ vscode }) => vscode.lm.tools.map((t: { name: string }) => t.name))) as string[];
    expect(tools).toContain('spillway_read_output');
    await waitUntil(
      'the log to say the provider was refused',
      () => (vs.extensionHostLog().includes('refused the MCP server definition provider') ? true : undefined),
      15_000,
    );
  });
});

describe("Add Spillway's MCP Server for Claude Code", () => {
  it('writes the server and the allow-once, every other byte kept, and the server it names answers', async () => {
    writeFileSync(mcpJson(), MCP_JSON);
    writeFileSync(settings(), SETTINGS);
    const r = (await command('spillway.addClaudeMcpServer')) as { changed: string[] };
    expect(r.changed.sort()).toEqual([mcpJson(), settings()].sort());
    const where = (await vs.run(({ context, host }) => ({ exec: process.execPath, ext: context.extensionPath, store: host.storeDir }))) as {
      exec: string;
      ext: string;
      store: string;
    };
    const launched = mcpLaunch(where.exec, where.ext, where.store);
    expect(readFileSync(mcpJson(), 'utf8')).toBe(addMcpJsonServer(MCP_JSON, launched).text);
    expect(readFileSync(settings(), 'utf8')).toBe(allowMcpTools(SETTINGS).text);
    expect(existsSync(launched.args[0]!)).toBe(true);
    // start the server exactly as the entry says (here with the test's Node: code-server's node runs the extension host)
    const child = spawn(process.execPath, launched.args, { env: { ...process.env, ...launched.env }, stdio: ['pipe', 'pipe', 'inherit'] });
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    };
    child.stdin.write(JSON.stringify(init) + '\n');
    const answer = await new Promise<string>((res) => child.stdout.once('data', (d: Buffer) => res(d.toString())));
    child.kill();
    expect(JSON.parse(answer).result.serverInfo.name).toBe('spillway');
  });

  it('Remove gives both files back byte for byte', async () => {
    writeFileSync(mcpJson(), MCP_JSON);
    writeFileSync(settings(), SETTINGS);
    await command('spillway.addClaudeMcpServer');
    const r = (await command('spillway.removeClaudeMcpServer')) as { changed: string[] };
    expect(r.changed.length).toBe(2);
    expect(readFileSync(mcpJson(), 'utf8')).toBe(MCP_JSON);
    expect(readFileSync(settings(), 'utf8')).toBe(SETTINGS);
  });

  it('a .mcp.json that is not JSON is reported and left alone', async () => {
    const broken = '{"mcpServers": {';
    writeFileSync(mcpJson(), broken);
    // no result (undefined, which comes back from the extension host as JSON null)
    expect(await command('spillway.addClaudeMcpServer')).toBeNull();
    expect(readFileSync(mcpJson(), 'utf8')).toBe(broken);
    const notices = (await vs.run(({ host }) => host.notices.map((n: { message: string }) => n.message))) as string[];
    expectSome(notices, (m: string) => m.includes(`${mcpJson()} is not valid JSON`));
    writeFileSync(mcpJson(), MCP_JSON);
  });
});

describe('Route Claude Code Through Spillway', () => {
  it('sets ANTHROPIC_BASE_URL to the proxy and ENABLE_TOOL_SEARCH in env; Stop gives the file back', async () => {
    await proxyOn();
    writeFileSync(settings(), SETTINGS);
    await command('spillway.routeClaudeCode');
    const env = JSON.parse(readFileSync(settings(), 'utf8')).env;
    expect(env).toEqual({ ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`, ENABLE_TOOL_SEARCH: 'true' });
    await command('spillway.unrouteClaudeCode');
    expect(readFileSync(settings(), 'utf8')).toBe(SETTINGS);
  });

  it('turning the proxy off takes the route out again', async () => {
    await proxyOn();
    writeFileSync(settings(), SETTINGS);
    await command('spillway.routeClaudeCode');
    expect(readFileSync(settings(), 'utf8')).toContain('ANTHROPIC_BASE_URL');
    await setSetting('proxy.enabled', false);
    await waitUntil('the route to be removed', () => (readFileSync(settings(), 'utf8') === SETTINGS ? true : undefined), 15_000);
  });
});
