/**
 * `spillway mcp` offered to every MCP client in the editor, in a VS Code whose API has MCP server
 * definition providers (code-server 4.139.1, VS Code 1.139; see README.md here): the extension
 * registers `spillway.mcp`, and the server definition it provides starts the bundled CLI on the
 * window's store and answers an MCP client, as VS Code would start it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ensureChatCodeServer, launch, waitUntil, type Harness } from './harness';

let vs: Harness;

beforeAll(async () => {
  ensureChatCodeServer();
  vs = await launch({ name: 'mcp-provider', codeServer: 'chat' });
});

afterAll(async () => {
  await vs?.close();
});

describe('the MCP server definition provider (VS Code 1.101+)', () => {
  it('is registered, and the server it defines lists read_output, find_outputs and extract_output', async () => {
    const r = (await vs.run(({ vscode, context, host }) => ({
      api: typeof (vscode.lm as any).registerMcpServerDefinitionProvider,
      ext: context.extensionPath,
      store: host.storeDir,
      exec: process.execPath,
    }))) as { api: string; ext: string; store: string; exec: string };
    expect(r.api).toBe('function');
    // the output channel reaches its log file a little after activation
    await waitUntil(
      'the log to say the provider is registered',
      () => (vs.extensionHostLog().includes('registered the MCP server definition provider spillway.mcp') ? true : undefined),
      15_000,
    );
    // the definition's launch, as VS Code starts it: the editor's executable as Node, the bundled cli.js
    const client = new Client({ name: 'spillway-test', version: '0.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: r.exec,
        args: [`${r.ext}/dist/cli.js`, 'mcp', '--store', r.store],
        env: { ...(process.env as Record<string, string>), ELECTRON_RUN_AS_NODE: '1' },
      }),
    );
    const { tools } = await client.listTools();
    await client.close();
    expect(tools.map((t) => t.name).sort()).toEqual(['extract_output', 'find_outputs', 'read_output']);
  });
});
