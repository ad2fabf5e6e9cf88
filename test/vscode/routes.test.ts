/**
 * Spillway: Route OpenCode, Kilo and pi Through Spillway in a real VS Code
 * (code-server + Chromium), on a temporary XDG_CONFIG_HOME and PI_CODING_AGENT_DIR: the modal names
 * the file and the values; after a click on its button they are in the file and every other byte is as
 * it was; Stop Routing gives the file back, and so does turning the proxy off. A file that is not JSON
 * is reported and left alone.
 *
 * Each test writes the file it starts from and turns the proxy on (routing needs it running), so any
 * one runs alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, launch, proxyOnAt, setSpillwaySetting, waitUntil, type Harness } from './harness';
import { expectSome } from '../support/expect';
import { routeKilo, routeOpenCode } from '../../src/proxy/opencodeConfig';
import { routePi } from '../../src/proxy/piConfig';

let vs: Harness;
let port = 0;
const dir = mkdtempSync(join(tmpdir(), 'sw-routes-'));
const xdg = join(dir, 'config');
const piDir = join(dir, 'pi-agent');
mkdirSync(join(xdg, 'opencode'), { recursive: true });
mkdirSync(join(xdg, 'kilo'), { recursive: true });
mkdirSync(piDir, { recursive: true });

beforeAll(async () => {
  port = await freePort();
  vs = await launch({ name: 'routes' });
  await vs.run(
    async (_t, env) => {
      Object.assign(process.env, env);
    },
    { XDG_CONFIG_HOME: xdg, PI_CODING_AGENT_DIR: piDir },
  );
});

afterAll(async () => {
  if (vs) await vs.screenshot('routes-last');
  await vs?.close();
});

const proxyOn = () => proxyOnAt(vs, port);
const url = () => `http://127.0.0.1:${port}`;

interface Case {
  name: string;
  command: string;
  file: string;
  original: string;
  /** what the modal must show */
  shows: () => string[];
  routed: (text: string) => string;
}

const CASES: Case[] = [
  {
    name: 'OpenCode',
    command: 'spillway.routeOpenCode',
    file: join(xdg, 'opencode', 'opencode.json'),
    original: '{\r\n\t"$schema": "https://opencode.ai/config.json",\r\n\t"model": "anthropic/claude-sonnet-4-5"\r\n}\r\n',
    shows: () => [`provider.anthropic.options.baseURL = "${url()}/v1"`, `provider.openai.options.baseURL = "${url()}/v1"`],
    routed: (text) => routeOpenCode(text, url(), []).text,
  },
  {
    name: 'Kilo',
    command: 'spillway.routeKilo',
    file: join(xdg, 'kilo', 'kilo.json'),
    original: '{\n  "$schema": "https://app.kilo.ai/config.json",\n  "model": "anthropic/claude-sonnet-4-5"\n}\n',
    shows: () => [`provider.anthropic.options.baseURL = "${url()}/v1"`, `provider.openai.options.baseURL = "${url()}/v1"`],
    routed: (text) => routeKilo(text, url(), []).text,
  },
  {
    name: 'pi',
    command: 'spillway.routePi',
    file: join(piDir, 'models.json'),
    original:
      '{\n    "providers": {\n        "ollama": { "baseUrl": "http://localhost:11434/v1", "api": "openai-completions" }\n    }\n}\n',
    shows: () => [`providers.anthropic.baseUrl = "${url()}"`, `providers.openai.baseUrl = "${url()}/v1"`],
    routed: (text) => routePi(text, url(), []).text,
  },
];

for (const c of CASES) {
  const unrouteCommand = c.command.replace('.route', '.unroute');

  /** Starts the command without waiting (its modal blocks), so the test can answer the dialog in the page. */
  const startRoute = () =>
    vs.run(async ({ vscode }, command) => {
      (globalThis as any).__swRoute = vscode.commands.executeCommand(command as string);
    }, c.command);
  const routeResult = () => vs.run(async () => await (globalThis as any).__swRoute);

  /** Runs the route through its modal, clicking Route; returns the command's result. */
  const routeWithClick = async () => {
    await startRoute();
    const dialog = vs.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 15_000 });
    const shown = await dialog.innerText();
    await dialog.getByRole('button', { name: 'Route', exact: true }).click();
    return { shown, result: await routeResult() };
  };

  describe(`Route ${c.name} Through Spillway`, () => {
    it('names the file and the values in a modal, writes them after the click, keeps the rest byte for byte', async () => {
      await proxyOn();
      writeFileSync(c.file, c.original);
      await startRoute();
      const dialog = vs.page.locator('.monaco-dialog-box');
      await dialog.waitFor({ state: 'visible', timeout: 15_000 });
      const shown = await dialog.innerText();
      for (const line of [c.file, ...c.shows()]) expect(shown).toContain(line);
      expect(readFileSync(c.file, 'utf8')).toBe(c.original); // nothing written before the answer
      await dialog.getByRole('button', { name: 'Route', exact: true }).click();
      expect(await routeResult()).toEqual({ file: c.file, changed: true });
      expect(readFileSync(c.file, 'utf8')).toBe(c.routed(c.original));
    });

    it(`Stop Routing ${c.name} Through Spillway gives the file back byte for byte`, async () => {
      await proxyOn();
      writeFileSync(c.file, c.original);
      expect((await routeWithClick()).result).toEqual({ file: c.file, changed: true });
      const r = await vs.run(({ vscode }, command) => vscode.commands.executeCommand(command as string), unrouteCommand);
      expect(r).toEqual({ file: c.file, changed: true });
      expect(readFileSync(c.file, 'utf8')).toBe(c.original);
    });

    it('turning the proxy off takes the route out again', async () => {
      await proxyOn();
      writeFileSync(c.file, c.original);
      expect((await routeWithClick()).result).toEqual({ file: c.file, changed: true });
      expect(readFileSync(c.file, 'utf8')).toBe(c.routed(c.original));
      await setSpillwaySetting(vs, 'proxy.enabled', false);
      await waitUntil('the route to be removed', () => (readFileSync(c.file, 'utf8') === c.original ? true : undefined), 15_000);
    });
  });
}

describe('a file that is not JSON', () => {
  it('is reported and left alone', async () => {
    await proxyOn();
    const file = CASES[0]!.file;
    const jsonc = '{\n  // mine\n  "model": "anthropic/claude-sonnet-4-5"\n}\n';
    writeFileSync(file, jsonc);
    const r = await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.routeOpenCode'));
    expect(r).toEqual({ file, changed: false });
    expect(readFileSync(file, 'utf8')).toBe(jsonc);
    const notices = await vs.run(({ host }) => host.notices.map((n: { message: string }) => n.message));
    expectSome(notices, (m: string) => m.includes(`${file} is not valid JSON`));
  });
});
