/**
 * Spillway: Route Codex Through Spillway in a real VS Code (code-server + Chromium), on a temporary
 * CODEX_HOME: the modal shows the exact line; after a click on its button the line is in config.toml,
 * with Spillway's [mcp_servers.spillway] table at the end, and every other byte of the file is as it was; Stop Routing removes it again, and so does turning
 * the proxy off. A config.toml that is not TOML is reported and left alone. With an auth.json that
 * says Codex is signed in with ChatGPT, the command writes Spillway's model provider instead, and
 * neither the dialog nor any message shows the tokens.
 *
 * Each test writes the config.toml it starts from and turns the proxy on (it needs it running), so
 * any one runs alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, launch, proxyOnAt, setSpillwaySetting, waitUntil, type Harness } from './harness';
import { expectSome } from '../support/expect';
import { addCodexChatgptRoute, addCodexMcpServer, codexLine, codexProviderLine } from '../../src/proxy/codexConfig';
import { mcpLaunch } from '../../src/extension/pure/mcpLaunch';

let vs: Harness;
let port = 0;
const codexHome = mkdtempSync(join(tmpdir(), 'sw-codex-home-'));
const config = join(codexHome, 'config.toml');
const ORIGINAL = '# my Codex settings\r\nmodel = "gpt-5.2-codex"\r\n\r\n[mcp_servers.docs]\r\ncommand = "npx"\r\n';

const setSetting = (key: string, value: unknown) => setSpillwaySetting(vs, key, value);

/** Starts the command without waiting (its modal blocks), so the test can answer the dialog in the page. */
function startRoute() {
  return vs.run(async ({ vscode }) => {
    (globalThis as any).__swRoute = vscode.commands.executeCommand('spillway.routeCodex');
  });
}
const routeResult = () => vs.run(async () => await (globalThis as any).__swRoute);

beforeAll(async () => {
  writeFileSync(config, ORIGINAL);
  port = await freePort();
  vs = await launch({ name: 'codex' });
  await vs.run(async (_t, home) => {
    process.env.CODEX_HOME = home as string;
  }, codexHome);
});

const proxyOn = () => proxyOnAt(vs, port);

afterAll(async () => {
  if (vs) await vs.screenshot('codex-last');
  await vs?.close();
});

describe('Route Codex Through Spillway', () => {
  const line = () => codexLine(`http://127.0.0.1:${port}/v1`);

  /**
   * config.toml with the routed line and Spillway's MCP server table added as the command adds them
   * (the table launches the extension's cli.js mcp on the window's store, as src/extension/mcp.ts does).
   */
  const routed = async () => {
    const where = (await vs.run(({ context, host }) => ({ exec: process.execPath, ext: context.extensionPath, store: host.storeDir }))) as {
      exec: string;
      ext: string;
      store: string;
    };
    const withLine = '# my Codex settings\r\nmodel = "gpt-5.2-codex"\r\n' + line() + '\r\n\r\n[mcp_servers.docs]\r\ncommand = "npx"\r\n';
    return addCodexMcpServer(withLine, mcpLaunch(where.exec, where.ext, where.store)).text;
  };

  it('shows the exact line in a modal, adds it after the click, keeps the rest byte for byte', async () => {
    await proxyOn();
    writeFileSync(config, ORIGINAL);
    await startRoute();
    const dialog = vs.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    const shown = await dialog.innerText();
    expect(shown).toContain(line());
    expect(shown).toContain(config);
    expect(readFileSync(config, 'utf8')).toBe(ORIGINAL); // nothing written before the answer
    await dialog.getByRole('button', { name: 'Add Line' }).click();
    const r = (await routeResult()) as { file: string; changed: boolean; line: string };
    // no auth.json in this CODEX_HOME: the API-key route
    expect(r).toEqual({ file: config, changed: true, line: line(), signIn: 'none' });
    expect(readFileSync(config, 'utf8')).toBe(await routed());
  });

  it('Stop Routing Codex Through Spillway removes only that line and the table', async () => {
    await proxyOn();
    writeFileSync(config, await routed());
    const r = await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.unrouteCodex'));
    expect(r).toEqual({ file: config, changed: true });
    expect(readFileSync(config, 'utf8')).toBe(ORIGINAL);
  });

  it('Cancel writes nothing', async () => {
    await proxyOn();
    writeFileSync(config, ORIGINAL);
    await startRoute();
    const dialog = vs.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    await vs.page.keyboard.press('Escape');
    expect(await routeResult()).toEqual({ file: config, changed: false, signIn: 'none' });
    expect(readFileSync(config, 'utf8')).toBe(ORIGINAL);
  });

  it('turning the proxy off takes the line out again', async () => {
    await proxyOn();
    writeFileSync(config, ORIGINAL);
    await startRoute();
    const dialog = vs.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    await dialog.getByRole('button', { name: 'Add Line' }).click();
    expect(((await routeResult()) as { changed: boolean }).changed).toBe(true);
    expect(readFileSync(config, 'utf8')).toContain(line());
    await setSetting('proxy.enabled', false);
    await waitUntil('the line to be removed', () => (readFileSync(config, 'utf8') === ORIGINAL ? true : undefined), 15_000);
  });

  it('signed in with ChatGPT: shows and writes the model provider, says so, never shows the tokens; Stop removes it', async () => {
    await proxyOn();
    writeFileSync(config, ORIGINAL);
    const token = 'eyJhbGciOiJSUzI1NiJ9.eyJ2c2NvZGUtdGVzdCI6InRva2VuLTQ0MTkifQ.c2lnLTQ0MTk';
    const auth = join(codexHome, 'auth.json');
    writeFileSync(
      auth,
      JSON.stringify({
        auth_mode: 'chatgpt',
        OPENAI_API_KEY: null,
        tokens: { id_token: token, access_token: token, refresh_token: 'rt-4419', account_id: 'acct-4419' },
      }),
    );
    try {
      await startRoute();
      const dialog = vs.page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: 15_000 });
      const shown = await dialog.innerText();
      expect(shown).toContain('signed in with ChatGPT');
      expect(shown).toContain(codexProviderLine());
      expect(shown).toContain(`base_url = "http://127.0.0.1:${port}/backend-api/codex"`);
      expect(shown).not.toContain(token);
      expect(readFileSync(config, 'utf8')).toBe(ORIGINAL);
      await dialog.getByRole('button', { name: 'Add Provider' }).click();
      const r = (await routeResult()) as { file: string; changed: boolean; signIn: string };
      expect([r.file, r.changed, r.signIn]).toEqual([config, true, 'chatgpt']);
      const where = (await vs.run(({ context, host }) => ({
        exec: process.execPath,
        ext: context.extensionPath,
        store: host.storeDir,
      }))) as {
        exec: string;
        ext: string;
        store: string;
      };
      const expected = addCodexMcpServer(
        addCodexChatgptRoute(ORIGINAL, `http://127.0.0.1:${port}`).text,
        mcpLaunch(where.exec, where.ext, where.store),
      ).text;
      expect(readFileSync(config, 'utf8')).toBe(expected);
      const notices = (await vs.run(({ host }) => host.notices.map((n: { message: string }) => n.message))) as string[];
      expectSome(notices, (m) => m.includes('signed in with ChatGPT') && m.includes(`http://127.0.0.1:${port}/backend-api/codex`));
      for (const m of notices) expect(m).not.toContain(token);
      expect(readFileSync(auth, 'utf8')).toContain(token); // auth.json itself is never touched
      const off = await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.unrouteCodex'));
      expect(off).toEqual({ file: config, changed: true });
      expect(readFileSync(config, 'utf8')).toBe(ORIGINAL);
    } finally {
      rmSync(auth, { force: true });
    }
  });

  it('a config.toml that is not TOML is reported and left alone', async () => {
    await proxyOn();
    const broken = 'model = "o3\n[broken\n';
    writeFileSync(config, broken);
    const r = await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.routeCodex'));
    expect(r).toEqual({ file: config, changed: false, signIn: 'none' });
    expect(readFileSync(config, 'utf8')).toBe(broken);
    const notices = await vs.run(({ host }) => host.notices.map((n: { message: string }) => n.message));
    expectSome(notices, (m: string) => m.includes(`${config} is not valid TOML`));
    writeFileSync(config, ORIGINAL);
  });
});
