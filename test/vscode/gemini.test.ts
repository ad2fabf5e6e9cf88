/**
 * Spillway: Route Gemini CLI Through Spillway in a real VS Code (code-server + Chromium), on a
 * temporary GEMINI_CLI_HOME: the modal names the file and the entries; after a click on its button
 * settings.json chooses the API key sign-in and has Spillway's mcpServers.spillway, every other byte
 * as it was, and new terminals get GOOGLE_GEMINI_BASE_URL; Stop Routing removes exactly what was
 * added, and so does turning the proxy off. A user who signs in with Google is told why nothing
 * changed; a settings file with comments is reported and left alone.
 *
 * Each test writes the settings.json it starts from and turns the proxy on (it needs it running), so
 * any one runs alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, launch, proxyOnAt, setSpillwaySetting, waitUntil, type Harness } from './harness';
import { expectSome } from '../support/expect';
import { addGeminiMcpServer, routeGeminiCli } from '../../src/proxy/geminiConfig';
import { mcpLaunch } from '../../src/extension/pure/mcpLaunch';

let vs: Harness;
let port = 0;
const geminiHome = mkdtempSync(join(tmpdir(), 'sw-gemini-home-'));
const settings = join(geminiHome, '.gemini', 'settings.json');
const ORIGINAL = '{\n    "ui": {\n        "theme": "GitHub"\n    },\n    "general": { "vimMode": true }\n}\n';

function startRoute() {
  return vs.run(async ({ vscode }) => {
    (globalThis as any).__swRoute = vscode.commands.executeCommand('spillway.routeGeminiCli');
  });
}
const routeResult = () => vs.run(async () => await (globalThis as any).__swRoute);
const terminalBaseUrl = () =>
  vs.run(({ context }) => context.environmentVariableCollection.get('GOOGLE_GEMINI_BASE_URL')?.value ?? null) as Promise<string | null>;

beforeAll(async () => {
  mkdirSync(join(geminiHome, '.gemini'), { recursive: true });
  writeFileSync(settings, ORIGINAL);
  port = await freePort();
  vs = await launch({ name: 'gemini' });
  await vs.run(async (_t, home) => {
    process.env.GEMINI_CLI_HOME = home as string;
  }, geminiHome);
});

const proxyOn = () => proxyOnAt(vs, port);

afterAll(async () => {
  if (vs) await vs.screenshot('gemini-last');
  await vs?.close();
});

/** settings.json as the command leaves it: the sign-in chosen, and the server launching the extension's cli.js mcp on the window's store. */
async function routed(from = ORIGINAL): Promise<string> {
  const where = (await vs.run(({ context, host }) => ({ exec: process.execPath, ext: context.extensionPath, store: host.storeDir }))) as {
    exec: string;
    ext: string;
    store: string;
  };
  return addGeminiMcpServer(routeGeminiCli(from).text, mcpLaunch(where.exec, where.ext, where.store)).text;
}

async function routeByClick(): Promise<string> {
  await startRoute();
  const dialog = vs.page.locator('.monaco-dialog-box');
  await dialog.waitFor({ state: 'visible', timeout: 15_000 });
  const shown = await dialog.innerText();
  await dialog.getByRole('button', { name: 'Route Gemini CLI' }).click();
  return shown;
}

describe('Route Gemini CLI Through Spillway', () => {
  it('names the file and entries in a modal, writes them after the click, keeps the rest byte for byte, and sets the terminals', async () => {
    await proxyOn();
    writeFileSync(settings, ORIGINAL);
    await startRoute();
    const dialog = vs.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    const shown = await dialog.innerText();
    expect(shown).toContain(settings);
    expect(shown).toContain('"selectedType": "gemini-api-key"');
    expect(shown).toContain(`GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:${port}`);
    expect(readFileSync(settings, 'utf8')).toBe(ORIGINAL); // nothing written before the answer
    await dialog.getByRole('button', { name: 'Route Gemini CLI' }).click();
    expect(await routeResult()).toEqual({ file: settings, changed: true });
    expect(readFileSync(settings, 'utf8')).toBe(await routed());
    await waitUntil(
      'the terminals to get the base URL',
      async () => ((await terminalBaseUrl()) === `http://127.0.0.1:${port}` ? true : undefined),
      10_000,
    );
  });

  it('Stop Routing Gemini CLI Through Spillway removes exactly what it added, and the terminal variable', async () => {
    await proxyOn();
    writeFileSync(settings, ORIGINAL);
    await routeByClick();
    expect((await routeResult()) as { changed: boolean }).toMatchObject({ changed: true });
    const r = await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.unrouteGeminiCli'));
    expect(r).toEqual({ file: settings, changed: true });
    expect(readFileSync(settings, 'utf8')).toBe(ORIGINAL);
    expect(await terminalBaseUrl()).toBeNull();
  });

  it("keeps a sign-in the user had chosen when stopping (only Spillway's server goes)", async () => {
    await proxyOn();
    const own = '{"security":{"auth":{"selectedType":"gemini-api-key"}}}\n';
    writeFileSync(settings, own);
    await routeByClick();
    expect(await routeResult()).toEqual({ file: settings, changed: true });
    expect(readFileSync(settings, 'utf8')).toBe(await routed(own));
    await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.unrouteGeminiCli'));
    expect(readFileSync(settings, 'utf8')).toBe(own);
  });

  it('turning the proxy off takes the entries out again', async () => {
    await proxyOn();
    writeFileSync(settings, ORIGINAL);
    await routeByClick();
    expect(((await routeResult()) as { changed: boolean }).changed).toBe(true);
    await setSpillwaySetting(vs, 'proxy.enabled', false);
    await waitUntil('the entries to be removed', () => (readFileSync(settings, 'utf8') === ORIGINAL ? true : undefined), 15_000);
  });

  it('a user who signs in with Google, or a settings file with comments, is told why and left alone', async () => {
    await proxyOn();
    const google = '{"security":{"auth":{"selectedType":"oauth-personal"}}}';
    writeFileSync(settings, google);
    expect(await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.routeGeminiCli'))).toEqual({
      file: settings,
      changed: false,
    });
    expect(readFileSync(settings, 'utf8')).toBe(google);
    const commented = '{\n  // mine\n  "ui": {}\n}\n';
    writeFileSync(settings, commented);
    expect(await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.routeGeminiCli'))).toEqual({
      file: settings,
      changed: false,
    });
    expect(readFileSync(settings, 'utf8')).toBe(commented);
    const notices = await vs.run(({ host }) => host.notices.map((n: { message: string }) => n.message));
    expectSome(notices, (m: string) => m.includes('signs Gemini CLI in otherwise'));
    expectSome(notices, (m: string) => m.includes(`${settings} is not valid JSON`));
    writeFileSync(settings, ORIGINAL);
  });
});
