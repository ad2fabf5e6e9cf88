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
 * Spillway wrote (store, recordings, its own output). A second run of nine 117 kB outputs, which
 * Gemini CLI truncates and then masks itself: the masked ones reach the provider as it wrote them and
 * are reported as saved by the agent; the truncated ones are offloaded with Gemini CLI's pointer to
 * the whole output kept in the preview.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureAgent, GEMINI_CLI } from './install';
import { geminiResults, startScriptedProvider, type ScriptedProvider } from './provider';
import {
  AGENT_TIMEOUT_MS,
  CLI,
  recordedTurns,
  ROOT,
  runAgent,
  spillwayRead,
  startProxy,
  truncatedByCall,
  type Proxy,
  type Run,
} from './spillway';
import { addGeminiMcpServer, routeGeminiCli } from '../../src/proxy/geminiConfig';
import type { Turn } from '../../src/proxy/recording';
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
    const turns = recordedTurns(proxy);
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

/**
 * Gemini CLI reduces big outputs itself, twice: an output over its limit arrives truncated (its first
 * 8,000 and last 32,000 characters, and the file that holds the whole), and once older outputs pass
 * its masking thresholds (50,000 tokens of recent output protected, 30,000 prunable) it replaces them
 * in its history by `<tool_output_masked>` previews naming another file. Spillway must leave the
 * masked ones alone and report them as saved by the agent (src/engine/markers.ts), and may reduce
 * the truncated ones, keeping Gemini CLI's pointer to the whole output in the preview.
 */
describe("Gemini CLI's own truncated and masked outputs through spillway proxy", () => {
  const BIG = 9;
  /** about 117 kB each, over Gemini CLI's limit */
  const big = (k: number) => `seq -f "big-${k} row %07g of the gemini masking run, lorem ipsum" 1 2600`;
  const commands = Array.from({ length: BIG }, (_, k) => big(k + 1));
  const runRoot = join(root, 'masking');
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  let turns: Turn[] = [];
  const key = `AIzaSy-spillway-masking-${process.pid}-GEMINI-SECRET`;

  beforeAll(async () => {
    provider = await startScriptedProvider({ commands, finalAnswer: 'GEMINI-DONE: nine big outputs.' });
    proxy = await startProxy(runRoot, ['--gemini-upstream', `${provider.url}/gemini`]);
    const home = join(runRoot, 'home');
    const work = join(runRoot, 'work');
    mkdirSync(join(home, '.gemini'), { recursive: true });
    mkdirSync(work, { recursive: true });
    writeFileSync(join(home, '.gemini', 'settings.json'), routeGeminiCli('').text);
    run = await runAgent(
      process.execPath,
      [geminiBin, '-p', 'Run the shell commands you are asked for, then report.', '--yolo', '--skip-trust'],
      { PATH: process.env.PATH, HOME: home, GEMINI_API_KEY: key, GOOGLE_GEMINI_BASE_URL: proxy.url, NO_COLOR: '1', CI: '1' },
      work,
    );
    await proxy.close();
    turns = recordedTurns(proxy);
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  const context = () => `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}`;
  /** the shell results of the provider's last request, in order */
  const last = () => {
    const main = provider.received.filter((r) => r.upstream === 'gemini' && Array.isArray(r.json?.contents) && r.path.includes('Content'));
    return geminiResults(main[main.length - 1]!.json).filter((r) => r.tool === 'run_shell_command');
  };

  it("finishes with the provider's final answer", () => {
    expect(run.code, context()).toBe(0);
    expect(run.stdout, context()).toContain('GEMINI-DONE: nine big outputs.');
  });

  it('the outputs Gemini CLI masked reached the provider as it wrote them, and the proxy says the agent saved them', () => {
    const results = last();
    expect(results, context()).toHaveLength(BIG);
    const masked = results.filter((r) => r.text.startsWith('<tool_output_masked>'));
    expect(masked.length, 'Gemini CLI masked none of the older outputs').toBeGreaterThan(0);
    for (const { text } of masked) expect(HANDLE.test(text), `Spillway reduced a masked output: ${text.slice(0, 200)}`).toBe(false);
    const saved = turns.flatMap((t) => t.stats?.savedByAgent ?? []).filter((s) => s.agent === 'gemini-cli');
    const files = new Set(saved.map((s) => s.file));
    expect(files.size, 'outputs reported as saved by Gemini CLI').toBe(masked.length);
    // each file Gemini CLI names holds what it masked (the function response, as JSON): its own
    // truncation of the command's output
    for (const file of files) {
      const held = JSON.parse(readFileSync(file, 'utf8')) as { output?: string };
      expect(held.output, file).toMatch(/^Output too large\. Showing first 8,000 and last 32,000 characters\./);
    }
  });

  it("the outputs it only truncated are Spillway's, and the preview keeps Gemini CLI's pointer to the whole output", () => {
    const kept = last().filter((r) => !r.text.startsWith('<tool_output_masked>'));
    expect(kept.length).toBeGreaterThan(0);
    for (const { text } of kept) {
      const handle = HANDLE.exec(text)?.[0];
      expect(handle, `an output reached the provider without a marker (${text.length} chars: ${text.slice(0, 200)})`).toBeDefined();
      const pointer = /For full output see: (\S+\.txt)/.exec(text);
      expect(pointer, `the preview lost Gemini CLI's pointer: ${text.slice(0, 600)}`).not.toBeNull();
      const step = Number(/big-(\d+) row/.exec(text)![1]);
      // the file holds the whole output, the handle what Gemini CLI sent: its truncation
      expect(readFileSync(pointer![1]!, 'utf8').trimEnd()).toContain(sh(big(step)).trimEnd());
      expect(spillwayRead(handle!, proxy.store)).toMatch(/^Output too large\. Showing first 8,000 and last 32,000 characters\./);
    }
  });

  it('the proxy reports each output Gemini CLI truncated, in the request it arrived in, with what it cut and its file', () => {
    // a side request (Gemini CLI's own checks) may carry the same new result again: one report per call
    const byCall = truncatedByCall(turns);
    expect(byCall.size, `reported: ${JSON.stringify([...byCall.values()].slice(0, 3))}`).toBe(BIG);
    for (const t of byCall.values()) {
      expect(t).toMatchObject({ agent: 'gemini-cli', unit: 'chars', tool: 'run_shell_command' });
      // it cut what its 40,000 characters leave out of the whole, which the file it names holds
      const whole = readFileSync(t.file, 'utf8');
      expect(whole).toMatch(/big-\d+ row 0002600 of the gemini masking run/);
      expect(t.omitted, 'Gemini CLI says how much it cut').toBeTypeOf('number');
      expect(Math.abs(t.omitted! + 40_000 - whole.length), `${t.omitted} + 40,000 against ${whole.length}`).toBeLessThan(100);
    }
  });

  it('no key in anything Spillway wrote', () => {
    const leaks = [...filesUnder(proxy.store), ...filesUnder(proxy.sessions)].filter((f) => readFileSync(f).includes(key));
    expect(leaks, `the API key was written by Spillway to ${leaks.join(', ')}`).toEqual([]);
    expect(proxy.out().includes(key), "the API key is in spillway proxy's output").toBe(false);
  });
});
