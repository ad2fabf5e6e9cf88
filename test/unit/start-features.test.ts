/**
 * `npm start` runs the newest VS Code the project installs (issue 28, point 2), and a VS Code
 * without an API Spillway uses does not offer what needs it: the choice of code-server
 * (test/vscode/code-servers.ts, bundled by scripts/start.mjs), the `when` clauses in package.json,
 * and the one log line that says what is not offered and why (src/extension/pure/features.ts).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { codeServers, compareVersions, pickCodeServer } from '../vscode/code-servers';
import { FEATURE_CONTEXT, GATED_COMMANDS, featuresLogLine } from '../../src/extension/pure/features';

const ROOT = join(__dirname, '../..');
const CACHE = '/cache';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  contributes: { menus: { commandPalette?: { command: string; when: string }[] }; commands: { command: string }[] };
};

describe("npm start's code-server", () => {
  const list = codeServers(ROOT, CACHE, '/usr/bin/node');

  it('reads both install scripts: 4.100.3 on this Node, 4.139.1 on the Node 24 its script installs', () => {
    expect(list.map((c) => c.version)).toEqual(['4.100.3', '4.139.1']);
    const [base, newest] = list;
    expect(base).toMatchObject({
      dir: '/cache/code-server-4.100.3',
      node: '/usr/bin/node',
      entry: '/cache/code-server-4.100.3/node_modules/code-server/out/node/entry.js',
      install: { script: join(ROOT, 'scripts/install-code-server.sh'), args: ['/cache/code-server-4.100.3'] },
    });
    expect(newest).toMatchObject({
      dir: '/cache/code-server-4.139.1',
      node: '/cache/node-24.21.0/bin/node',
      install: { script: join(ROOT, 'scripts/install-code-server-chat.sh'), args: [] },
    });
  });

  it('picks the newest (VS Code 1.139), whatever order the list is in', () => {
    expect(pickCodeServer(list).version).toBe('4.139.1');
    expect(pickCodeServer([...list].reverse()).version).toBe('4.139.1');
  });

  it('compares versions by number, not text', () => {
    expect(compareVersions('4.99.0', '4.100.3')).toBeLessThan(0);
    expect(compareVersions('4.139.1', '4.100.3')).toBeGreaterThan(0);
    expect(compareVersions('4.100', '4.100.0')).toBe(0);
    const v99 = { ...list[0]!, version: '4.99.9' };
    expect(pickCodeServer([v99, list[0]!]).version).toBe('4.100.3');
  });

  it('runs the older one when SPILLWAY_CODE_SERVER names it, and names the choices when it names neither', () => {
    expect(pickCodeServer(list, '4.100.3').version).toBe('4.100.3');
    expect(() => pickCodeServer(list, '4.1.0')).toThrow('SPILLWAY_CODE_SERVER=4.1.0: the project installs code-server 4.100.3 or 4.139.1');
  });

  it('is what `npm start` runs: scripts/start.mjs --which names 4.139.1 in the cache, on its Node 24', () => {
    const which = (env: Record<string, string>) => {
      const r = spawnSync(process.execPath, [join(ROOT, 'scripts/start.mjs'), '--which'], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, SPILLWAY_USE_CODE_SERVER: '1', SPILLWAY_CACHE: '/nowhere/cache', ...env },
      });
      expect(r.status, r.stderr).toBe(0);
      return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
    };
    expect(which({})).toEqual({
      codeServer: '4.139.1',
      entry: '/nowhere/cache/code-server-4.139.1/node_modules/code-server/out/node/entry.js',
      node: '/nowhere/cache/node-24.21.0/bin/node',
      installed: false,
    });
    expect(which({ SPILLWAY_CODE_SERVER: '4.100.3' })).toMatchObject({ codeServer: '4.100.3', node: process.execPath });
  });
});

describe('features a VS Code lacks are not offered', () => {
  it('hides Add and Manage Language Model from the palette unless the provider API was found', () => {
    expect(pkg.contributes.menus.commandPalette).toEqual([
      { command: 'spillway.addLanguageModel', when: 'spillway.lmProviderAvailable' },
      { command: 'spillway.manageLanguageModels', when: 'spillway.lmProviderAvailable' },
    ]);
    const declared = new Set(pkg.contributes.commands.map((c) => c.command));
    for (const command of Object.keys(GATED_COMMANDS)) expect(declared.has(command), command).toBe(true);
    expect(FEATURE_CONTEXT).toEqual({ lmProvider: 'spillway.lmProviderAvailable', mcpProvider: 'spillway.mcpProviderAvailable' });
  });

  it('says in one line what is not offered and why', () => {
    const line = featuresLogLine('1.100.3', [
      { id: 'lmProvider', available: false, why: 'needs the language model chat provider API of VS Code 1.104 or later' },
      { id: 'mcpProvider', available: false, why: 'this VS Code refused the MCP server definition provider (x)' },
    ]);
    expect(line).toBe(
      'VS Code 1.100.3: not offered here: Copilot models through Spillway (Add Language Model…, Manage Language Models…): ' +
        'needs the language model chat provider API of VS Code 1.104 or later; ' +
        "Spillway's MCP server for the editor's agents: this VS Code refused the MCP server definition provider (x)",
    );
    expect(
      featuresLogLine('1.139.1', [
        { id: 'lmProvider', available: true },
        { id: 'mcpProvider', available: true },
      ]),
    ).toBe(
      "VS Code 1.139.1 offers every Spillway feature: Copilot models through Spillway (Add Language Model…, Manage Language Models…); Spillway's MCP server for the editor's agents",
    );
    expect(featuresLogLine('1.101.0', [{ id: 'mcpProvider', available: false }])).toBe(
      "VS Code 1.101.0: not offered here: Spillway's MCP server for the editor's agents: its API is missing",
    );
  });
});
