/**
 * The real Gemini CLI, installed from npm as its users install it, through `spillway proxy` (the built
 * dist/cli.js) to a scripted Gemini API provider on 127.0.0.1, configured only the way Spillway tells
 * users to: `GOOGLE_GEMINI_BASE_URL` (what the proxy prints and Copy Agent Environment copies) and a
 * `~/.gemini/settings.json` written by src/proxy/geminiConfig.ts (the code behind Spillway: Route
 * Gemini CLI Through Spillway: the API key sign-in, and `spillway mcp` among its MCP servers).
 * Headless: `gemini -p … --yolo --skip-trust` in a fresh HOME with a fake key in `GEMINI_API_KEY`.
 *
 * Asserted: it finishes with the provider's final answer; every 25 kB shell output reached the
 * provider as a marker inside `functionResponse.response.output` whose handle reads back the exact
 * output; the first output read back through `mcp_spillway_read_output`, page by page, is the stored
 * output byte for byte; the model calls were recorded as gemini turns; the key is in nothing
 * Spillway wrote (store, recordings, its own output).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureAgent, GEMINI_CLI } from './install';
import { geminiResults, startScriptedProvider, type ScriptedProvider } from './provider';
import { AGENT_TIMEOUT_MS, CLI, ROOT, runAgent, spillwayRead, startProxy, type Proxy, type Run } from './spillway';
import { addGeminiMcpServer, routeGeminiCli } from '../../src/proxy/geminiConfig';
import { listSessions, readSession } from '../../src/proxy/recording';
import { filesUnder } from '../support/files';
import { HANDLE_IN_TEXT as HANDLE } from '../../src/engine/handle';

const STEPS = 4;
/** About 25 kB per command: 560 numbered lines of 45 characters, different for every step. */
const command = (k: number) => `seq -f "step-${String(k).padStart(2, '0')} row %05g of the gemini run, lorem ipsum dolor" 1 560`;
const COMMANDS = Array.from({ length: STEPS }, (_, k) => command(k + 1));
const READ_TOOL = 'mcp_spillway_read_output';
const PAGE = 8_000;
const FINAL = 'GEMINI-DONE: four outputs run, the first read back.';

const sh = (cmd: string) => execFileSync('bash', ['-c', cmd], { encoding: 'utf8' });
const expected = COMMANDS.map(sh);
const root = mkdtempSync(join(tmpdir(), 'sw-agents-gemini-'));
// the runs' homes, stores and recordings (about 100 MB a run) go when the file is done;
// SPILLWAY_KEEP_AGENT_RUNS=1 keeps them to look at
afterAll(() => {
  if (process.env.SPILLWAY_KEEP_AGENT_RUNS !== '1') rmSync(root, { recursive: true, force: true });
});
let geminiBin = '';

beforeAll(() => {
  if (!existsSync(CLI)) execFileSync(process.execPath, [join(ROOT, 'esbuild.mjs')], { cwd: ROOT, stdio: 'inherit' });
  geminiBin = ensureAgent(GEMINI_CLI);
}, 15 * 60_000);

describe('Gemini CLI through spillway proxy, reading back through spillway mcp', () => {
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  const key = `AIzaSy-spillway-test-${process.pid}-GEMINI-SECRET`;

  beforeAll(async () => {
    provider = await startScriptedProvider({ commands: COMMANDS, finalAnswer: FINAL, readBack: { tool: READ_TOOL, page: PAGE } });
    proxy = await startProxy(root, ['--gemini-upstream', `${provider.url}/gemini`]);
    expect(proxy.out()).toContain(`export GOOGLE_GEMINI_BASE_URL=${proxy.url}`);
    const home = join(root, 'home');
    const work = join(root, 'work');
    mkdirSync(join(home, '.gemini'), { recursive: true });
    mkdirSync(work, { recursive: true });
    // what Spillway: Route Gemini CLI Through Spillway writes, and nothing else
    let settings = routeGeminiCli('').text;
    settings = addGeminiMcpServer(settings, { command: process.execPath, args: [CLI, 'mcp', '--store', proxy.store] }).text;
    writeFileSync(join(home, '.gemini', 'settings.json'), settings);
    // Gemini CLI runs on the Node that runs this suite (its bin is a JavaScript file)
    run = await runAgent(
      process.execPath,
      [geminiBin, '-p', 'Run the shell commands you are asked for, then report.', '--yolo', '--skip-trust'],
      { PATH: process.env.PATH, HOME: home, GEMINI_API_KEY: key, GOOGLE_GEMINI_BASE_URL: proxy.url, NO_COLOR: '1', CI: '1' },
      work,
    );
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  const context = () =>
    `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}\nproxy: ${proxy.out().slice(-3000)}`;

  /** The function responses of the provider's last (longest) main request: the shell outputs, then the read-back pages. */
  const results = () => {
    const main = provider.received.filter((r) => r.upstream === 'gemini' && Array.isArray(r.json?.contents) && r.path.includes('Content'));
    const longest = main.reduce<(typeof main)[number] | undefined>(
      (a, r) => (!a || geminiResults(r.json).length >= geminiResults(a.json).length ? r : a),
      undefined,
    );
    return longest ? geminiResults(longest.json) : [];
  };

  it("finishes with the provider's final answer", () => {
    expect(run.code, context()).toBe(0);
    expect(run.stdout, context()).toContain(FINAL);
  });

  it('every 25 kB output reached the provider as a marker whose handle reads back the exact output', () => {
    const shell = results().filter((r) => r.tool === 'run_shell_command');
    expect(shell, context()).toHaveLength(STEPS);
    shell.forEach(({ text }, k) => {
      const handle = HANDLE.exec(text)?.[0];
      expect(handle, `result ${k + 1} reached the provider without a marker (${text.length} chars: ${text.slice(0, 200)})`).toBeDefined();
      expect(text.length).toBeLessThan(4_000);
      // Gemini CLI sends the command's output, with its own lines around it only when the command fails
      expect(spillwayRead(handle!, proxy.store).trimEnd()).toContain(expected[k]!.trimEnd());
    });
  });

  it('the first output read back through mcp_spillway_read_output, page by page, is the stored output byte for byte', () => {
    const all = results();
    const first = all.find((r) => r.tool === 'run_shell_command')!;
    const handle = HANDLE.exec(first.text)![0];
    const pages = all.filter((r) => r.tool === READ_TOOL);
    expect(pages.length, context()).toBeGreaterThan(2);
    // Gemini CLI frames every tool's text in <untrusted_context> and escapes that closing tag inside it
    // (wrapUntrusted in its bundle); the stored output, which Gemini CLI framed the same way when the
    // shell ran, ends with one: undone here, the pages are the stored bytes
    const whole = pages
      .map(({ text }) => text.slice(text.indexOf('\n') + 1).replaceAll('&lt;/untrusted_context&gt;', '</untrusted_context>'))
      .join('');
    expect(whole).toBe(spillwayRead(handle, proxy.store));
  });

  it('the model calls were recorded as gemini turns, under the model the path names', () => {
    const turns = listSessions(proxy.sessions).flatMap((s) => readSession(s.file));
    const main = turns.filter((t) => t.reductions.length > 0);
    expect(main.length, context()).toBeGreaterThan(0);
    for (const t of main) {
      expect(t.format).toBe('gemini');
      expect(t.path).toMatch(/^\/v1beta\/models\/[^/]+:(stream)?[gG]enerateContent$/);
      expect(t.model).toBeDefined();
    }
  });

  it('no key in anything Spillway wrote', () => {
    const leaks = [...filesUnder(proxy.store), ...filesUnder(proxy.sessions)].filter((f) => readFileSync(f).includes(key));
    expect(leaks, `the API key was written by Spillway to ${leaks.join(', ')}`).toEqual([]);
    expect(proxy.out().includes(key), "the API key is in spillway proxy's output").toBe(false);
    // and it did reach the provider, so the check above means something
    expect(provider.received.some((r) => r.headers['x-goog-api-key'] === key)).toBe(true);
  });
});
