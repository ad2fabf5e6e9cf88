/**
 * The real agents, installed from npm as their users install them, through `spillway proxy` (the built
 * dist/cli.js) to a scripted provider on 127.0.0.1, each run non-interactively for a dozen shell
 * commands with 25 kB outputs, configured only the way Spillway tells users to:
 *   - Claude Code: `ANTHROPIC_BASE_URL` (what the proxy prints), `claude -p … --allowedTools Bash
 *     --output-format json` with `IS_SANDBOX=1` and a fake key;
 *   - Claude Code on a subscription: the same with `CLAUDE_CODE_OAUTH_TOKEN` instead of a key;
 *   - Claude Code with an output over its own limit, which it saves to a file and sends as a
 *     `<persisted-output>` preview: left alone, reported as saved by the agent;
 *   - Claude Code handing three commands to a sub-agent (its `Agent` tool): the engine must know the
 *     sub-agent's requests from the main conversation's as the pinned release marks them;
 *   - Codex: a `CODEX_HOME` whose config.toml was written by src/proxy/codexConfig.ts (the code behind
 *     Spillway: Route Codex Through Spillway), `codex exec --skip-git-repo-check
 *     --dangerously-bypass-approvals-and-sandbox` with a fake key in `OPENAI_API_KEY`;
 *   - Codex signed in with ChatGPT: an `auth.json` in ChatGPT mode with fake tokens, and the model
 *     provider the route writes for that sign-in; the provider plays the ChatGPT backend under
 *     `/backend-api/` and Codex's shell is its code-mode `exec`, whose outputs come back as JSON.
 *   - OpenCode (`opencode run`) and pi (`pi -p`), each with its Anthropic and its OpenAI provider, routed
 *     by the file Route OpenCode / pi Through Spillway writes (src/proxy/opencodeConfig.ts, piConfig.ts)
 *     and OpenCode also by the variables alone; Qwen Code (`qwen -p --yolo`) by `OPENAI_BASE_URL`;
 *   - Kilo's CLI (`kilo run`, OpenCode's fork, Kilo Code 7's server) by the same provider baseURL in its
 *     `kilo.json`, its export replayed and listed as Browse Agent Sessions lists it.
 * Read-backs over MCP: Claude Code with the `.mcp.json` and `.claude/settings.local.json` Spillway's
 * command writes (its read tools allowed there, Bash only for the one `seq` it runs), and Codex with
 * the `[mcp_servers.spillway]` table Route Codex Through Spillway adds; the scripted provider reads
 * the first output back through `read_output`, page by page, and the pages must be the stored bytes.
 * Asserted: the agent finishes with the provider's final answer; every big output reached the provider
 * as a marker whose handle reads back (`spillway read`) the exact output; the fake key is in nothing
 * Spillway wrote (store, recordings, its own output). Codex's transport: WebSocket when the proxy
 * offers it (`spillway.proxy.websockets`, once the proxy has that mode), HTTP otherwise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { agentPath, CLAUDE_CODE, CLINE, CODEX, CONTINUE_CLI, COPILOT_CLI, ensureAgent, KILO_CLI, OPENCODE, PI, QWEN_CODE } from './install';
import { firstUserText, outputText, startScriptedProvider, type ScriptedProvider } from './provider';
import {
  AGENT_TIMEOUT_MS,
  CLI,
  recordedTurns,
  ROOT,
  truncatedByCall,
  runAgent,
  spillwayRead,
  startProxy as startSpillwayProxy,
  type Proxy,
  type Run,
} from './spillway';
import { addCodexBaseUrl, addCodexChatgptRoute, addCodexMcpServer, codexAuthMode, codexBaseUrl } from '../../src/proxy/codexConfig';
import { addMcpJsonServer, allowMcpTools, CLAUDE_MCP_TOOLS } from '../../src/proxy/claudeConfig';
import { kiloConfigPath, opencodeConfigPath, routeKilo, routeOpenCode } from '../../src/proxy/opencodeConfig';
import { piModelsPath, routePi } from '../../src/proxy/piConfig';
import { findReadTool } from '../../src/engine/read-tool';
import { readRequest } from '../../src/engine/formats';
import { readTranscript, requestForCall, type Transcript } from '../../src/replay/readers';
import { agentSessions } from '../../src/extension/inspector/agentSessions';
import { exportOpenCodeSession, kiloBinary, openCodeSessions } from '../../src/extension/inspector/opencodeSessions';
import { sessionName } from '../../src/replay/session-title';
import { isSubAgent } from '../../src/engine/stages/gathering';
import { filesUnder } from '../support/files';
import { HANDLE_IN_TEXT as HANDLE } from '../../src/engine/handle';
import { expectSome } from '../support/expect';
import { captureOrCheckPrelude, CAPTURE } from './prelude';
import { readBody, type Turn } from '../../src/proxy/recording';
import type { TruncatedByAgent } from '../../src/engine/types';
import { get, parseLazy, type JObject, type JValue } from '../../src/engine/json';

const STEPS = 12;
/** About 25 kB per command: 560 numbered lines of 45 characters, different for every step. */
const command = (k: number) => `seq -f "step-${String(k).padStart(2, '0')} row %05g of the real-agent run, lorem ipsum" 1 560`;
const COMMANDS = Array.from({ length: STEPS }, (_, k) => command(k + 1));

function sh(cmd: string): string {
  return execFileSync('bash', ['-c', cmd], { encoding: 'utf8' });
}

/** The proxy with the scripted provider as its OpenAI and Anthropic upstreams, and `extra` flags. */
const startProxy = (provider: ScriptedProvider, root: string, extra: string[] = []): Promise<Proxy> =>
  startSpillwayProxy(root, [
    '--openai-upstream',
    `${provider.url}/openai/v1`,
    '--anthropic-upstream',
    `${provider.url}/anthropic`,
    ...extra,
  ]);

/** The text of every tool result in an Anthropic request body, in order. */
function anthropicToolResults(body: any): string[] {
  return (body.messages as any[])
    .flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content : []))
    .filter((b: any) => b?.type === 'tool_result')
    .map((b: any) => (typeof b.content === 'string' ? b.content : (b.content ?? []).map((c: any) => c.text ?? '').join('')));
}

/** The text of every tool result the provider was sent, in order of the last (longest) request. */
function toolResultsSeen(provider: ScriptedProvider, kind: 'anthropic' | 'responses' | 'chat'): string[] {
  const shell = (t: any) => t?.name === 'Bash' || t?.name === 'bash';
  const main = provider.received.filter(
    (r) =>
      r.json &&
      (kind === 'anthropic'
        ? r.path === '/v1/messages' && Array.isArray(r.json.tools) && r.json.tools.some(shell)
        : kind === 'chat'
          ? r.path === '/v1/chat/completions'
          : r.path.endsWith('/responses')),
  );
  const last = main[main.length - 1];
  if (!last) return [];
  if (kind === 'chat') {
    return (last.json.messages as any[])
      .filter((m) => m?.role === 'tool')
      .map((m) => (typeof m.content === 'string' ? m.content : (m.content ?? []).map((c: any) => c.text ?? '').join('')));
  }
  if (kind === 'anthropic') return anthropicToolResults(last.json);
  return (last.json.input as any[])
    .filter((i) => i?.type === 'function_call_output' || i?.type === 'custom_tool_call_output')
    .map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));
}

let claudeBin = '';
let codexBin = '';
let opencodeBin = '';
let kiloBin = '';
let qwenBin = '';
let clineBin = '';
let continueBin = '';
let copilotBin = '';
let piBin = '';
const root = mkdtempSync(join(tmpdir(), 'sw-agents-'));
// the runs' homes, stores and recordings (about 100 MB a run) go when the file is done;
// SPILLWAY_KEEP_AGENT_RUNS=1 keeps them to look at
afterAll(() => {
  if (process.env.SPILLWAY_KEEP_AGENT_RUNS !== '1') rmSync(root, { recursive: true, force: true });
});
const expected = COMMANDS.map(sh);

beforeAll(() => {
  if (!existsSync(CLI)) execFileSync(process.execPath, [join(ROOT, 'esbuild.mjs')], { cwd: ROOT, stdio: 'inherit' });
  claudeBin = ensureAgent(CLAUDE_CODE);
  codexBin = ensureAgent(CODEX);
  opencodeBin = ensureAgent(OPENCODE);
  kiloBin = ensureAgent(KILO_CLI);
  qwenBin = ensureAgent(QWEN_CODE);
  piBin = ensureAgent(PI);
  clineBin = ensureAgent(CLINE);
  continueBin = ensureAgent(CONTINUE_CLI);
  copilotBin = ensureAgent(COPILOT_CLI);
}, 15 * 60_000);

it('the commands give 25 kB outputs, each different', () => {
  for (const out of expected) expect(out.length).toBeGreaterThan(24_000);
  expect(new Set(expected).size).toBe(STEPS);
});

/**
 * How a read-back holds the command's output: `exact` is the output itself; `suffix`, after a header
 * the agent puts first (Codex: chunk id, wall time, exit code); `within`, wrapped in the agent's own
 * lines (Qwen Code: `Command: …`, `Output: …`, `Exit Code: …`).
 */
type Holds = 'exact' | 'suffix' | 'within';

function checkProjected(results: string[], store: string, agent: string, holds: Holds, steps = STEPS): void {
  expect(results, `${agent}: the provider saw ${results.length} tool results, not ${steps}`).toHaveLength(steps);
  results.forEach((text, k) => {
    const handle = HANDLE.exec(text)?.[0];
    expect(
      handle,
      `${agent}: tool result ${k + 1} reached the provider without a Spillway marker (${text.length} chars: ${text.slice(0, 120)}…)`,
    ).toBeDefined();
    expect(text.length, `${agent}: the marker for result ${k + 1} is not short`).toBeLessThan(4_000);
    const back = spillwayRead(handle!, store);
    const out = expected[k]!.trimEnd();
    if (holds === 'exact') expect(back.trimEnd(), `${agent}: spillway read ${handle} is not the output of step ${k + 1}`).toBe(out);
    else
      expect(
        holds === 'suffix' ? back.trimEnd().endsWith('\n' + out) : back.includes(out + '\n'),
        `${agent}: spillway read ${handle} does not hold the whole output of step ${k + 1}:\n${back.slice(0, 400)}`,
      ).toBe(true);
  });
}

function checkNoKey(key: string, proxy: Proxy, agent: string): void {
  const leaks = [...filesUnder(proxy.store), ...filesUnder(proxy.sessions)].filter((f) => readFileSync(f).includes(key));
  expect(leaks, `${agent}: the API key was written by Spillway to ${leaks.join(', ')}`).toEqual([]);
  expect(proxy.out().includes(key), `${agent}: the API key is in spillway proxy's output`).toBe(false);
}

/** Claude Code's environment in these runs: a fresh HOME, the proxy as its base URL, a fake key, no traffic of its own. */
function claudeEnv(home: string, baseUrl: string, key: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    IS_SANDBOX: '1',
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: key,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
  };
}

describe('Claude Code through spillway proxy', () => {
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  const key = `sk-ant-api03-spillway-test-${process.pid}-SECRET`;

  beforeAll(async () => {
    provider = await startScriptedProvider({ commands: COMMANDS, finalAnswer: 'CLAUDE-DONE: twelve outputs read.' });
    proxy = await startProxy(provider, join(root, 'claude'));
    const home = join(root, 'claude', 'home');
    const work = join(root, 'claude', 'work');
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    expect(proxy.out()).toContain(`export ANTHROPIC_BASE_URL=${proxy.url}`);
    run = await runAgent(
      claudeBin,
      ['-p', 'Run the twelve shell commands you are asked for, then report.', '--allowedTools', 'Bash', '--output-format', 'json'],
      claudeEnv(home, proxy.url, key),
      work,
    );
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  it("finishes with the provider's final answer", () => {
    const ctx = `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}`;
    expect(run.code, ctx).toBe(0);
    const out = JSON.parse(run.stdout) as { result?: string; is_error?: boolean };
    expect(out.is_error, ctx).toBe(false);
    expect(out.result, ctx).toBe('CLAUDE-DONE: twelve outputs read.');
  });

  it('every 25 kB output reached the provider as a marker whose handle reads back the exact output', () => {
    checkProjected(toolResultsSeen(provider, 'anthropic'), proxy.store, 'Claude Code', 'exact');
  });

  it('every request of the Anthropic client went to the Anthropic upstream, the preflight included', () => {
    const strays = provider.received.filter((r) => r.upstream !== 'anthropic');
    expect(strays.map((r) => `${r.method} ${r.path} (to ${r.upstream})`)).toEqual([]);
    expectSome(
      provider.received.map((r) => `${r.method} ${r.path}`),
      (r) => r === 'POST /v1/messages',
      'requests the provider received',
    );
  });

  it('no key in anything Spillway wrote', () => {
    checkNoKey(key, proxy, 'Claude Code');
  });

  it(`${CAPTURE ? 'captures' : 'has captured'} the system prompt and tools the replay adds to Claude Code logs (test/fixtures/agent-preludes.json)`, () => {
    const main = provider.received.filter((r) => r.path === '/v1/messages' && r.json?.tools?.some((t: any) => t?.name === 'Bash')).pop();
    expect(main, 'no main-conversation request reached the provider').toBeDefined();
    captureOrCheckPrelude('claude-code', CLAUDE_CODE.version, main!.json, root);
  });
});

/**
 * Claude Code in print mode (`claude -p … --output-format json`) with the shell and `tools`, through a
 * fresh proxy in front of a provider playing `script`, with its own HOME under `root/<name>`. The
 * proxy is closed once the agent exits, so its recordings are complete when this resolves.
 */
async function claudeThroughProxy(
  name: string,
  script: Parameters<typeof startScriptedProvider>[0],
  prompt: string,
  tools: string,
  key: string,
): Promise<{ provider: ScriptedProvider; proxy: Proxy; run: Run; home: string }> {
  const provider = await startScriptedProvider(script);
  const proxy = await startProxy(provider, join(root, name));
  const home = join(root, name, 'home');
  const work = join(root, name, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const run = await runAgent(
    claudeBin,
    ['-p', prompt, '--allowedTools', tools, '--output-format', 'json'],
    claudeEnv(home, proxy.url, key),
    work,
  );
  await proxy.close();
  return { provider, proxy, run, home };
}

/**
 * Claude Code saves an output over its own limit (about 30 kB) to a file and sends a preview in
 * `<persisted-output>` tags: Spillway must know that preview (src/engine/markers.ts), leave it alone
 * and report it as saved by the agent, while a 25 kB output beside it is Spillway's to reduce. The
 * format is the agent's, and a release that changes it shows here.
 */
describe("Claude Code's own saved outputs through spillway proxy", () => {
  /** about 97 kB: over Claude Code's limit */
  const big = 'seq -f "row %07g of a big output, lorem ipsum dolor sit amet" 1 2200';
  const commands = [big, COMMANDS[0]!];
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  let turns: Turn[] = [];
  const key = `sk-ant-api03-spillway-saved-${process.pid}-SECRET`;

  beforeAll(async () => {
    ({ provider, proxy, run } = await claudeThroughProxy(
      'claude-saved',
      { commands, finalAnswer: 'CLAUDE-DONE: two outputs read.' },
      'Run the two shell commands you are asked for, then report.',
      'Bash',
      key,
    ));
    turns = recordedTurns(proxy);
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  it("finishes with the provider's final answer", () => {
    const ctx = `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`;
    expect(run.code, ctx).toBe(0);
    expect((JSON.parse(run.stdout) as { result?: string }).result, ctx).toBe('CLAUDE-DONE: two outputs read.');
  });

  it('the output Claude Code saved reached the provider as Claude Code wrote it, and the proxy says the agent saved it', () => {
    const [saved, reduced] = toolResultsSeen(provider, 'anthropic');
    expect(saved, 'the first result').toMatch(/^<persisted-output>\nOutput too large \([\d.]+KB\)\. Full output saved to: /);
    expect(HANDLE.test(saved!), 'Spillway reduced what Claude Code had already saved').toBe(false);
    const last = turns.filter((t) => t.stats?.savedByAgent?.length).pop();
    const entry = last?.stats?.savedByAgent?.[0];
    expect(entry, 'no recorded turn lists an output saved by the agent').toMatchObject({
      agent: 'claude-code',
      tool: 'Bash',
      chars: saved!.length,
    });
    // the file Claude Code names holds the whole output
    expect(readFileSync(entry!.file, 'utf8').trimEnd()).toBe(sh(big).trimEnd());
    // and the 25 kB output beside it is Spillway's
    expect(HANDLE.exec(reduced ?? '')?.[0], 'the second result').toBeDefined();
    expect(spillwayRead(HANDLE.exec(reduced!)![0], proxy.store).trimEnd()).toBe(expected[0]!.trimEnd());
  });

  it('no key in anything Spillway wrote', () => {
    checkNoKey(key, proxy, 'Claude Code with an output it saved');
  });
});

/**
 * A Claude Code sub-agent: the main conversation hands three commands to a general-purpose sub-agent
 * through its `Agent` tool. Gather, then report (src/engine/stages/gathering.ts) treats a sub-agent's
 * session differently, and knows one only by what Claude Code writes at the start of its system
 * prompt (`cc_is_subagent=true` since 2.1): this is where a release that stops writing it shows.
 */
describe('Claude Code hands the commands to a sub-agent through spillway proxy', () => {
  const commands = COMMANDS.slice(0, 3);
  const prompt = 'SPILLWAY-SUBTASK: run the three shell commands you are asked for, then report what they printed.';
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  /** the request bodies of the conversations (main and sub-agent) as Claude Code sent them, recorded by the proxy */
  let sent: any[] = [];
  /** Claude Code's own logs of the run */
  let logs: string[] = [];
  const key = `sk-ant-api03-spillway-sub-${process.pid}-SECRET`;
  const withShell = (r: { path: string; json?: any }) => r.path === '/v1/messages' && r.json?.tools?.some((t: any) => t?.name === 'Bash');
  const isSub = (r: { json?: any }) => firstUserText(r.json).includes(prompt);

  beforeAll(async () => {
    let home: string;
    ({ provider, proxy, run, home } = await claudeThroughProxy(
      'claude-sub',
      { commands, finalAnswer: 'CLAUDE-DONE: the sub-agent reported.', subAgent: { prompt, report: 'SUB-REPORT: three outputs read.' } },
      'Hand the shell commands to a sub-agent, then report.',
      'Bash,Agent',
      key,
    ));
    // the requests as Claude Code sent them, from the proxy's recordings
    sent = sentBodies(recordedTurns(proxy), proxy, '/v1/messages').filter((body) => withShell({ path: '/v1/messages', json: body }));
    logs = filesUnder(join(home, '.claude', 'projects')).filter((f) => f.endsWith('.jsonl'));
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  it("finishes with the provider's final answer, after the sub-agent's report", () => {
    const ctx = `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}`;
    expect(run.code, ctx).toBe(0);
    const out = JSON.parse(run.stdout) as { result?: string; is_error?: boolean };
    expect(out.result, ctx).toBe('CLAUDE-DONE: the sub-agent reported.');
    // the provider answers the main conversation only once the report is in it: Claude Code 2.1.332
    // runs the sub-agent in the background (its Agent result says so) and delivers the report as a
    // notification in a later call, which -p waits for
    const mainCalls = provider.received.filter((r) => withShell(r) && !isSub(r));
    expect(mainCalls[mainCalls.length - 1]!.body, ctx).toContain('SUB-REPORT: three outputs read.');
  });

  it("the engine tells the sub-agent's requests from the main conversation's, as this release marks them", () => {
    const calls = provider.received.filter(withShell);
    const sub = calls.filter(isSub);
    const main = calls.filter((r) => !isSub(r));
    // three commands and the report
    expect(sub.length, 'the sub-agent made fewer model calls than its script').toBeGreaterThanOrEqual(commands.length + 1);
    expect(main.length, 'the main conversation made fewer model calls than its script').toBeGreaterThanOrEqual(2);
    const system = (r: { json?: any }) => JSON.stringify(r.json?.system ?? '').slice(0, 300);
    for (const r of sub)
      expect(isSubAgent(readRequest(r.body, 'anthropic-messages')), `a sub-agent request not known as one: ${system(r)}`).toBe(true);
    for (const r of main)
      expect(isSubAgent(readRequest(r.body, 'anthropic-messages')), `a main request taken for a sub-agent's: ${system(r)}`).toBe(false);
  });

  it(`${CAPTURE ? 'captures' : 'has captured'} the system prompt and tools the replay adds to a sub-agent's log (test/fixtures/agent-preludes.json)`, () => {
    const sub = provider.received.filter((r) => withShell(r) && isSub(r)).pop();
    expect(sub, 'no sub-agent request reached the provider').toBeDefined();
    captureOrCheckPrelude('claude-code', CLAUDE_CODE.version, sub!.json, root, 'claude-code-subagent');
  });

  it('every 25 kB output of the sub-agent reached the provider as a marker whose handle reads back the exact output', () => {
    const sub = provider.received.filter((r) => withShell(r) && isSub(r));
    checkProjected(anthropicToolResults(sub[sub.length - 1]!.json), proxy.store, 'Claude Code sub-agent', 'exact', commands.length);
  });

  it('no key in anything Spillway wrote', () => {
    checkNoKey(key, proxy, 'Claude Code with a sub-agent');
  });

  it('its logs on disk replay as the requests it sent: every call of the main conversation and of the sub-agent, system prompt and tools included', async () => {
    const main = logs.filter((f) => !f.includes('/subagents/'));
    const sub = logs.filter((f) => /\/subagents\/agent-[^/]+\.jsonl$/.test(f));
    expect(main, `Claude Code's logs: ${logs.join(', ')}`).toHaveLength(1);
    expect(sub, `Claude Code's logs: ${logs.join(', ')}`).toHaveLength(1);
    // what the comparison leaves out: settings, not text the model reads. Where Claude Code put its
    // cache breakpoints (the log keeps them apart from the messages; the replay's meter prices the
    // cache itself) and the effort it set on a message (`output_config`, per-turn control)
    // Nor whether a content of one text block went as that block or as its string: the API reads
    // both alike, and Claude Code sends the string where the block carries no breakpoint
    const SETTINGS = new Set(['cache_control', 'output_config']);
    const plain = (v: unknown) => withoutSettings(v, SETTINGS, true);
    for (const [file, conversation] of [
      [main[0]!, sent.filter((b) => !isSub({ json: b }))],
      [sub[0]!, sent.filter((b) => isSub({ json: b }))],
    ] as const) {
      const t = await readTranscript(file);
      expect(t.skipped.notes.join('\n'), file).toContain('every call is replayed as sent');
      expect(t.calls.length, `${file}: calls replayed against requests sent`).toBe(conversation.length);
      t.calls.forEach((_, k) => {
        const replayed = requestForCall(t, k);
        const body = conversation[k];
        for (const field of ['system', 'tools', 'messages'])
          expect(plain(replayed[field]), `${file}, call ${k + 1}: ${field} as replayed and as sent`).toEqual(plain(body[field]));
      });
    }
  });
});

/**
 * Claude Code signed in with a subscription: `CLAUDE_CODE_OAUTH_TOKEN` (what `claude setup-token` prints)
 * instead of a key, so it sends `Authorization: Bearer`, an `anthropic-beta` list that names the OAuth
 * beta, `context_management` in the body and `role: "system"` items inside `messages`; its start-up
 * preflight (`HEAD /api/hello`, left on here: no CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC) carries none
 * of Anthropic's headers. All of it must reach the provider as Claude Code sent it, but the results.
 */
describe('Claude Code on a subscription (CLAUDE_CODE_OAUTH_TOKEN) through spillway proxy', () => {
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  const token = `sk-ant-oat01-spillway-test-${process.pid}-OAUTH-SECRET`;
  /** Each model call the provider received, with the turn the proxy recorded for it (original body, headers). */
  let calls: Array<{ received: ScriptedProvider['received'][number]; turn: Turn; original: string }> = [];

  beforeAll(async () => {
    provider = await startScriptedProvider({ commands: COMMANDS, finalAnswer: 'CLAUDE-OAUTH-DONE: twelve outputs read.' });
    proxy = await startProxy(provider, join(root, 'claude-oauth'));
    const home = join(root, 'claude-oauth', 'home');
    const work = join(root, 'claude-oauth', 'work');
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    const { ANTHROPIC_API_KEY: _key, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: _quiet, ...env } = claudeEnv(home, proxy.url, '');
    run = await runAgent(
      claudeBin,
      ['-p', 'Run the twelve shell commands you are asked for, then report.', '--allowedTools', 'Bash', '--output-format', 'json'],
      { ...env, CLAUDE_CODE_OAUTH_TOKEN: token },
      work,
    );
    // the proxy records a turn after it has answered, so the last one may still be on its way when
    // the agent exits: stopping the proxy waits for its recordings (the later checks read only its
    // files and its output)
    await proxy.close();
    const turns = recordedTurns(proxy);
    calls = provider.received
      .filter((r) => r.method === 'POST' && r.path === '/v1/messages')
      .map((received) => {
        const turn = turns.find((t) => t.projectionRef !== undefined && readBody(proxy.sessions, t.projectionRef) === received.body);
        if (!turn) throw new Error(`no recorded turn forwarded the body the provider received (${received.body.length} bytes)`);
        return { received, turn, original: readBody(proxy.sessions, turn.requestRef!) };
      });
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  it("finishes with the provider's final answer", () => {
    const ctx = `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}`;
    expect(run.code, ctx).toBe(0);
    const out = JSON.parse(run.stdout) as { result?: string; is_error?: boolean };
    expect(out.is_error, ctx).toBe(false);
    expect(out.result, ctx).toBe('CLAUDE-OAUTH-DONE: twelve outputs read.');
  });

  it('the bearer token and the anthropic-beta list (the OAuth beta among them) reached the provider as Claude Code sent them', () => {
    expect(calls.length).toBeGreaterThan(STEPS);
    for (const { received, turn } of calls) {
      expect(received.headers.authorization).toBe(`Bearer ${token}`);
      expect(received.headers['x-api-key']).toBeUndefined();
      // the recording keeps the header as the client sent it (never the authorization)
      expect(received.headers['anthropic-beta']).toBe(turn.headers?.['anthropic-beta']);
      const betas = String(received.headers['anthropic-beta']).split(',');
      expect(betas).toEqual(expect.arrayContaining(['oauth-2025-04-20', 'context-management-2025-06-27']));
    }
  });

  it('context_management and the role "system" items inside messages passed byte for byte; only tool results changed', () => {
    const span = (text: string, node: JValue | undefined) => (node ? text.slice(node.start, node.end) : undefined);
    const items = (node: JValue | undefined) => (node?.kind === 'array' ? node.items : []);
    let systemItems = 0;
    for (const { received, original } of calls) {
      const sent = parseLazy(original) as JObject;
      const got = parseLazy(received.body) as JObject;
      expect(got.keys).toEqual(sent.keys);
      expect(sent.keys).toContain('context_management');
      for (const key of sent.keys.filter((k) => k !== 'messages'))
        expect(span(received.body, get(got, key)), key).toBe(span(original, get(sent, key)));
      const before = items(get(sent, 'messages'));
      const after = items(get(got, 'messages'));
      expect(after).toHaveLength(before.length);
      before.forEach((m, i) => {
        const role = JSON.parse(span(original, get(m, 'role'))!) as string;
        if (role === 'system') systemItems++;
        const results = JSON.stringify(JSON.parse(span(original, m)!)).includes('"tool_result"');
        if (!results) expect(span(received.body, after[i]), `messages[${i}] (${role})`).toBe(span(original, m));
      });
    }
    // Claude Code 2.1 sends its environment notes as a system item in every call
    expect(systemItems).toBeGreaterThanOrEqual(calls.length);
  });

  it('every 25 kB output reached the provider as a marker whose handle reads back the exact output', () => {
    checkProjected(toolResultsSeen(provider, 'anthropic'), proxy.store, 'Claude Code (subscription)', 'exact');
  });

  it('the preflight, which carries no Anthropic header, went to the Anthropic upstream like every other request', () => {
    expectSome(
      provider.received.map((r) => `${r.method} ${r.path} (to ${r.upstream})`),
      (r) => r === 'HEAD /api/hello (to anthropic)',
      'requests the provider received',
    );
    expect(provider.received.filter((r) => r.upstream !== 'anthropic').map((r) => `${r.method} ${r.path} (to ${r.upstream})`)).toEqual([]);
  });

  it('no token in anything Spillway wrote', () => {
    checkNoKey(token, proxy, 'Claude Code (subscription)');
  });
});

/**
 * OpenCode (a Bun binary from npm, its providers on the Vercel AI SDK), `opencode run` headless with the
 * Anthropic provider (a fake key in `ANTHROPIC_API_KEY`) or the OpenAI one (Responses API, a fake key in
 * `OPENAI_API_KEY`), routed two ways: its global opencode.json as Spillway: Route OpenCode Through
 * Spillway writes it (`provider.<id>.options.baseURL = <proxy>/v1`), and, with no config, only the
 * variable as the proxy prints it (`ANTHROPIC_BASE_URL` has no `/v1`: OpenCode then posts `/messages`,
 * which the proxy maps). Its shell tool is `bash`. No network of its own: the models list
 * it ships, no update check, no sharing.
 */
function opencodeEnv(home: string, keys: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...keys,
    PATH: agentPath(OPENCODE),
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_SHARE: '1',
  };
}

function opencodeSuite(route: 'config' | 'environment', upstream: 'anthropic' | 'openai') {
  const steps = route === 'config' && upstream === 'anthropic' ? STEPS : 2;
  const how = route === 'config' ? 'opencode.json' : upstream === 'anthropic' ? 'ANTHROPIC_BASE_URL' : 'OPENAI_BASE_URL';
  describe(`OpenCode${upstream === 'openai' ? ' with the OpenAI provider' : ''} through spillway proxy (routed by ${route === 'config' ? 'its ' : ''}${how})`, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let run: Run;
    let configText = '';
    const key = `sk-${upstream === 'anthropic' ? 'ant-api03' : 'proj'}-spillway-test-${process.pid}-OPENCODE-${route}-${upstream}-SECRET`;
    const answer = `OPENCODE-DONE: ${steps} outputs read.`;

    beforeAll(async () => {
      provider = await startScriptedProvider({ commands: COMMANDS.slice(0, steps), finalAnswer: answer });
      const dir = join(root, `opencode-${route}-${upstream}`);
      proxy = await startProxy(provider, dir);
      const home = join(dir, 'home');
      const work = join(dir, 'work');
      mkdirSync(work, { recursive: true });
      const env = opencodeEnv(home, upstream === 'anthropic' ? { ANTHROPIC_API_KEY: key } : { OPENAI_API_KEY: key });
      if (route === 'environment' && upstream === 'anthropic') env.ANTHROPIC_BASE_URL = proxy.url;
      if (route === 'environment' && upstream === 'openai') env.OPENAI_BASE_URL = `${proxy.url}/v1`;
      if (route === 'config') {
        const file = opencodeConfigPath(env, home);
        mkdirSync(join(file, '..'), { recursive: true });
        const user = '{\n  "$schema": "https://opencode.ai/config.json",\n  "autoupdate": false,\n  "share": "disabled"\n}\n';
        configText = routeOpenCode(user, proxy.url, [], file).text;
        writeFileSync(file, configText);
      } else {
        expect(proxy.out()).toContain(`export ${how}=${env[how]}`);
      }
      run = await runAgent(
        opencodeBin,
        [
          'run',
          '--model',
          upstream === 'anthropic' ? 'anthropic/claude-sonnet-4-5' : 'openai/gpt-5',
          `Run the ${steps} shell commands you are asked for, then report.`,
        ],
        env,
        work,
      );
    }, AGENT_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
    });

    it("finishes with the provider's final answer", () => {
      const ctx = `exit ${run.code} after ${run.ms} ms\nopencode.json:\n${configText}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}\nreceived: ${provider.received.map((r) => `${r.method} ${r.path}`).join(', ')}`;
      expect(run.code, ctx).toBe(0);
      expect(run.stdout, ctx).toContain(answer);
    });

    it('every 25 kB output reached the provider as a marker whose handle reads back the exact output', () => {
      const results = toolResultsSeen(provider, upstream === 'anthropic' ? 'anthropic' : 'responses');
      expect(results).toHaveLength(steps);
      checkProjected(results, proxy.store, 'OpenCode', 'exact', steps);
    });

    it(`every model call was projected on the ${upstream === 'anthropic' ? 'Anthropic' : 'OpenAI'} upstream`, () => {
      const expected = upstream === 'anthropic' ? 'POST /v1/messages (to anthropic)' : 'POST /v1/responses (to openai)';
      expect(provider.received.map((r) => `${r.method} ${r.path} (to ${r.upstream})`)).toEqual(provider.received.map(() => expected));
    });

    it('no key in anything Spillway wrote', () => {
      checkNoKey(key, proxy, 'OpenCode');
    });
  });
}

opencodeSuite('config', 'anthropic');
opencodeSuite('environment', 'anthropic');
opencodeSuite('config', 'openai');
opencodeSuite('environment', 'openai');

/**
 * An OpenCode-family CLI (`opencode`, Kilo's `kilo`) run on two prompts in `work`, the second
 * continuing the session (`run --continue`), then its one session exported, as `session list` and
 * `export` print them, to `exported`. Returns the two runs.
 */
async function twoPromptsExported(bin: string, model: string, env: NodeJS.ProcessEnv, work: string, exported: string): Promise<Run[]> {
  const runs = [
    await runAgent(bin, ['run', '--model', model, 'Run the 2 shell commands you are asked for, then report.'], env, work),
    await runAgent(bin, ['run', '--continue', '--model', model, 'Say it once more.'], env, work),
  ];
  const sessions = JSON.parse(execFileSync(bin, ['session', 'list', '--format', 'json'], { env, cwd: work, encoding: 'utf8' })) as Array<{
    id: string;
  }>;
  const opts = {
    env,
    cwd: work,
    encoding: 'utf8' as const,
    maxBuffer: 64 << 20,
    stdio: ['ignore', 'pipe', 'pipe'] as ['ignore', 'pipe', 'pipe'],
  };
  writeFileSync(exported, execFileSync(bin, ['export', sessions[0]!.id], opts));
  return runs;
}

/**
 * OpenCode's session, as `opencode export` prints it (OpenCode keeps it in SQLite), replays as the
 * requests OpenCode sent, on each provider's wire: two prompts, the second continuing the session
 * (`opencode run --continue`), so an answer's text and a later prompt are in the history too. What
 * the export does not hold is compared apart: OpenCode's system prompt (Anthropic's `system`, the
 * Responses `developer` item) and its cache breakpoints (`cache_control`, where it put them).
 */
function opencodeExportSuite(upstream: 'anthropic' | 'openai') {
  const model = upstream === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-5';
  describe(`OpenCode's export replays as OpenCode sent it (${upstream === 'anthropic' ? 'Anthropic' : 'OpenAI'} provider)`, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let exported = '';
    let turns: Turn[] = [];
    const runs: Run[] = [];
    let env: NodeJS.ProcessEnv = {};
    let work = '';
    const key = `sk-${upstream === 'anthropic' ? 'ant-api03' : 'proj'}-spillway-test-${process.pid}-OPENCODE-export-SECRET`;
    const answer = 'OPENCODE-DONE: exported.';

    beforeAll(
      async () => {
        provider = await startScriptedProvider({ commands: COMMANDS.slice(0, 2), finalAnswer: answer });
        const dir = join(root, `opencode-export-${upstream}`);
        proxy = await startProxy(provider, dir);
        const home = join(dir, 'home');
        work = join(dir, 'work');
        mkdirSync(work, { recursive: true });
        env = opencodeEnv(home, upstream === 'anthropic' ? { ANTHROPIC_API_KEY: key } : { OPENAI_API_KEY: key });
        const file = opencodeConfigPath(env, home);
        mkdirSync(join(file, '..'), { recursive: true });
        writeFileSync(file, routeOpenCode('{ "autoupdate": false, "share": "disabled" }\n', proxy.url, [], file).text);
        exported = join(dir, 'export.json');
        runs.push(...(await twoPromptsExported(opencodeBin, `${upstream}/${model}`, env, work, exported)));
        turns = recordedTurns(proxy);
      },
      2 * AGENT_TIMEOUT_MS + 60_000,
    );

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
    });

    it('both prompts were answered', () => {
      for (const run of runs) expect(run.code, `stdout: ${run.stdout.slice(-1500)}\nstderr: ${run.stderr.slice(-1500)}`).toBe(0);
      expect(runs[1]!.stdout).toContain(answer);
    });

    it("every call's messages, as replayed from the export, are those OpenCode sent", async () => {
      const t = await readTranscript(exported);
      expect(t.source).toBe('opencode');
      expect(t.wire).toBe(upstream === 'anthropic' ? 'anthropic-messages' : 'openai-responses');
      // the session's own calls: OpenCode's title call goes to another model
      const sent = sentBodies(
        turns.filter((x) => x.model === model),
        proxy,
        upstream === 'anthropic' ? '/v1/messages' : '/v1/responses',
      );
      expect(sent.length).toBeGreaterThan(3);
      expect(t.calls.length, `${exported}: calls replayed against requests sent`).toBe(sent.length);
      const settings = new Set(['cache_control']);
      t.calls.forEach((_, k) => {
        const replayed = requestForCall(t, k);
        if (upstream === 'anthropic')
          expect(replayed.messages, `call ${k + 1}: messages as replayed and as sent`).toEqual(withoutSettings(sent[k].messages, settings));
        else {
          expect(sent[k].input[0].role).toBe('developer');
          expect(replayed.input, `call ${k + 1}: input as replayed and as sent, less the system prompt`).toEqual(sent[k].input.slice(1));
        }
      });
      expect(t.base.model).toBe(model);
      expect(t.skipped.notes.join('\n')).toContain('system prompt and tool declarations');
    });

    it('Browse Agent Sessions lists it through the real opencode, and its export there replays alike', async () => {
      const listed = await openCodeSessions(opencodeBin, work, env);
      expect(listed).toHaveLength(1);
      expect(listed[0]!.directory).toBe(work);
      const file = await exportOpenCodeSession(opencodeBin, listed[0]!.id, work, join(work, '..', 'exports'), env);
      const [a, b] = await Promise.all([readTranscript(file), readTranscript(exported)]);
      expect(a.items).toEqual(b.items);
      expect(a.calls).toEqual(b.calls);
      expect(sessionName(file)).toContain(' · work · ');
    });

    it('no key in anything Spillway wrote', () => {
      checkNoKey(key, proxy, 'OpenCode');
    });
  });
}

opencodeExportSuite('anthropic');
opencodeExportSuite('openai');

/**
 * Kilo's CLI (OpenCode's fork; Kilo Code 7's VS Code extension runs the same binary as its server and
 * shares its database, `~/.local/share/kilo/kilo.db`), with the Anthropic provider routed by
 * `provider.anthropic.options.baseURL` in its global `kilo.json` as Route Kilo Through Spillway writes it. No network of its own: no update
 * check, models list, sharing, session upload, telemetry or daemon. Its session, as `kilo export`
 * prints it, is OpenCode's export and replays as the requests Kilo sent; Browse Agent Sessions lists
 * it through the real `kilo`.
 */
function kiloEnv(home: string, keys: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    ...keys,
    PATH: agentPath(KILO_CLI),
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    KILO_DISABLE_AUTOUPDATE: '1',
    KILO_DISABLE_MODELS_FETCH: '1',
    KILO_DISABLE_LSP_DOWNLOAD: '1',
    KILO_DISABLE_SHARE: '1',
    KILO_DISABLE_SESSION_INGEST: '1',
    KILO_DISABLE_PRESENCE: '1',
    KILO_DISABLE_CODEBASE_INDEXING: '1',
    KILO_DISABLE_CLAUDE_CODE: '1',
    KILO_TELEMETRY_LEVEL: 'off',
    KILO_NO_DAEMON: '1',
  };
}

describe("Kilo's CLI through spillway proxy (routed by its kilo.json): its export replays as Kilo sent it, and Browse Agent Sessions lists it", () => {
  const model = 'claude-sonnet-4-5';
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let exported = '';
  let turns: Turn[] = [];
  const runs: Run[] = [];
  let env: NodeJS.ProcessEnv = {};
  let work = '';
  let home = '';
  const key = `sk-ant-api03-spillway-test-${process.pid}-KILO-export-SECRET`;
  const answer = 'KILO-DONE: exported.';

  beforeAll(
    async () => {
      provider = await startScriptedProvider({ commands: COMMANDS.slice(0, 2), finalAnswer: answer });
      const dir = join(root, 'kilo-export');
      proxy = await startProxy(provider, dir);
      home = join(dir, 'home');
      work = join(dir, 'work');
      mkdirSync(work, { recursive: true });
      env = kiloEnv(home, { ANTHROPIC_API_KEY: key });
      // as Spillway: Route Kilo Through Spillway writes it
      const file = kiloConfigPath(env, home);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, routeKilo('{ "autoupdate": false, "share": "disabled" }\n', proxy.url, [], file).text);
      exported = join(dir, 'export.json');
      runs.push(...(await twoPromptsExported(kiloBin, `anthropic/${model}`, env, work, exported)));
      turns = recordedTurns(proxy);
    },
    2 * AGENT_TIMEOUT_MS + 60_000,
  );

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  it('both prompts were answered through the proxy', () => {
    for (const run of runs) expect(run.code, `stdout: ${run.stdout.slice(-1500)}\nstderr: ${run.stderr.slice(-1500)}`).toBe(0);
    expect(runs[1]!.stdout).toContain(answer);
    expect(turns.filter((x) => x.model === model).length).toBeGreaterThan(3);
  });

  it('each 25 kB output reached the provider as a marker whose handle reads back the exact output', () => {
    checkProjected(toolResultsSeen(provider, 'anthropic'), proxy.store, 'Kilo', 'exact', 2);
  });

  it("every call's messages, as replayed from the export, are those Kilo sent", async () => {
    const t = await readTranscript(exported);
    expect(t.source).toBe('opencode');
    expect(t.wire).toBe('anthropic-messages');
    const sent = sentBodies(
      turns.filter((x) => x.model === model),
      proxy,
      '/v1/messages',
    );
    expect(t.calls.length, `${exported}: calls replayed against requests sent`).toBe(sent.length);
    t.calls.forEach((_, k) => {
      expect(requestForCall(t, k).messages, `call ${k + 1}: messages as replayed and as sent`).toEqual(
        withoutSettings(sent[k].messages, new Set(['cache_control'])),
      );
    });
    expect(t.base.model).toBe(model);
  });

  it('Browse Agent Sessions lists it through the real kilo, and its export there replays alike', async () => {
    // found on the PATH, as Browse Agent Sessions finds it
    expect(kiloBinary({ PATH: dirname(kiloBin) }, home)).toBe(kiloBin);
    const listed = await openCodeSessions(kiloBin, work, env);
    expect(listed).toHaveLength(1);
    expect(listed[0]!.directory).toBe(work);
    const file = await exportOpenCodeSession(kiloBin, listed[0]!.id, work, join(work, '..', 'exports'), env);
    const [a, b] = await Promise.all([readTranscript(file), readTranscript(exported)]);
    expect(a.items).toEqual(b.items);
    expect(a.calls).toEqual(b.calls);
    expect(sessionName(file)).toContain(' · work · ');
  });

  it('no key in anything Spillway wrote', () => {
    checkNoKey(key, proxy, 'Kilo');
  });
});

/** One run of an agent whose outputs it truncates itself: what it runs, how it starts, what must be reported. */
interface OwnTruncation {
  /** the run's folder under the suite's root */
  dir: string;
  commands: string[];
  answer: string;
  /** the wire the agent's tool results reach the provider in (for the message when the check fails) */
  seen: 'anthropic' | 'responses' | 'chat';
  proxyArgs?: string[];
  /** starts the agent against the proxy, with its home and working folders made */
  start: (proxy: Proxy, home: string, work: string) => Promise<Run>;
  /** what the proxy must report, as the check's name says it */
  reports: string;
  /** checks the outputs reported as truncated by the agent (one per call, at least one), with the commands run and the tool results the provider was sent */
  check: (reported: TruncatedByAgent[], commands: string[], sent: string[]) => void;
}

/** The agent runs `commands`, ends with the final answer, and the proxy reports what the agent cut. */
function ownTruncationSuite(title: string, o: OwnTruncation) {
  describe(title, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let run: Run;
    let turns: Turn[] = [];

    beforeAll(async () => {
      provider = await startScriptedProvider({ commands: o.commands, finalAnswer: o.answer });
      const dir = join(root, o.dir);
      proxy = await startProxy(provider, dir, o.proxyArgs);
      const home = join(dir, 'home');
      const work = join(dir, 'work');
      mkdirSync(home, { recursive: true });
      mkdirSync(work, { recursive: true });
      run = await o.start(proxy, home, work);
      await proxy.close();
      turns = recordedTurns(proxy);
    }, AGENT_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
    });

    it("finishes with the provider's final answer", () => {
      expect(run.code, `exit ${run.code}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}`).toBe(0);
      expect(run.stdout.trim().split('\n').pop()).toBe(o.answer);
    });

    it(`the proxy reports ${o.reports}`, () => {
      const reported = [...truncatedByCall(turns).values()];
      const sent = toolResultsSeen(provider, o.seen);
      const starts = JSON.stringify(sent.slice(0, 2).map((t) => t.slice(0, 300)));
      expect(reported.length, `nothing reported; the agent sent (starts): ${starts}`).toBeGreaterThan(0);
      expect(reported.length, `reported ${JSON.stringify(reported)}`).toBe(o.commands.length);
      o.check(reported, o.commands, sent);
    });
  });
}

/**
 * OpenCode keeps the last 2,000 lines (or 50 kB) of a shell output, saves the whole under its data
 * folder and says so first. The proxy must report such an output as truncated by the agent, with
 * that file.
 */
ownTruncationSuite("OpenCode's own truncated outputs through spillway proxy", {
  dir: 'opencode-truncated',
  commands: ['seq -f "opencode-cut row %05g of 3000" 1 3000'],
  answer: 'OPENCODE-DONE: one output cut.',
  seen: 'anthropic',
  start: (proxy, home, work) => {
    const env = opencodeEnv(home, { ANTHROPIC_API_KEY: 'sk-ant-api03-spillway-opencode-cut' });
    env.ANTHROPIC_BASE_URL = proxy.url;
    return runAgent(
      opencodeBin,
      ['run', '--model', 'anthropic/claude-sonnet-4-5', 'Run the shell command you are asked for, then report.'],
      env,
      work,
    );
  },
  reports: 'the output OpenCode cut, with the file that holds the whole',
  check: ([t], [long], sent) => {
    // OpenCode does not say how much it cut
    expect(t).toMatchObject({ agent: 'opencode', unit: 'lines', tool: 'bash' });
    expect(t!.omitted).toBeUndefined();
    // OpenCode 1.18 races the command's exit against its own reader of the output and stops reading
    // when the command exits, so on a loaded machine its file (and the tail it sends) can end a few
    // hundred lines early: the file then holds a head of the output past the 50 kB at which OpenCode
    // opens it, and the result the model was sent ends where the file ends. Quiet, it is the whole.
    const whole = sh(long!).trimEnd();
    const saved = readFileSync(t!.file, 'utf8').trimEnd();
    expect(whole.startsWith(saved), `${t!.file} is not a head of the output`).toBe(true);
    expect(Buffer.byteLength(saved)).toBeGreaterThan(50 * 1024);
    const result = sent.find((s) => s.includes(t!.file));
    expect(result, 'no result names the saved file').toBeDefined();
    expect(result!.trimEnd().endsWith(saved.slice(saved.lastIndexOf('\n') + 1))).toBe(true);
  },
});

/**
 * Qwen Code (plain JavaScript from npm, run on the Node 24 its engines ask for), `qwen -p … --yolo`
 * headless, routed by the environment alone as the proxy prints it: `OPENAI_BASE_URL` (with `/v1`),
 * beside the `OPENAI_API_KEY` and `OPENAI_MODEL` Qwen Code needs to pick its OpenAI sign-in without a
 * settings file. It speaks Chat Completions; its shell tool is `run_shell_command`, whose result text
 * wraps the output in its own lines. Qwen Code 0.24 itself sometimes loses the whole output of a
 * command that exits at once (`Output: (empty)`, seen without Spillway too, one or two in twelve), so
 * each command here lingers a moment after printing (`&& sleep 0.3`; the output is the same).
 */
describe('Qwen Code through spillway proxy (routed by OPENAI_BASE_URL)', () => {
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  const key = `sk-proj-spillway-test-${process.pid}-QWEN-SECRET`;
  const answer = 'QWEN-DONE: twelve outputs read.';

  beforeAll(async () => {
    provider = await startScriptedProvider({ commands: COMMANDS.map((c) => `${c} && sleep 0.3`), finalAnswer: answer });
    proxy = await startProxy(provider, join(root, 'qwen'));
    const home = join(root, 'qwen', 'home');
    const work = join(root, 'qwen', 'work');
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    expect(proxy.out()).toContain(`export OPENAI_BASE_URL=${proxy.url}/v1`);
    run = await runAgent(
      qwenBin,
      ['-p', 'Run the twelve shell commands you are asked for, then report.', '--yolo'],
      { PATH: agentPath(QWEN_CODE), HOME: home, OPENAI_BASE_URL: `${proxy.url}/v1`, OPENAI_API_KEY: key, OPENAI_MODEL: 'qwen3-coder-plus' },
      work,
    );
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  it("finishes with the provider's final answer", () => {
    const ctx = `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}`;
    expect(run.code, ctx).toBe(0);
    expect(run.stdout.trim().split('\n').pop(), ctx).toBe(answer);
  });

  it('every 25 kB output reached the provider as a marker whose handle reads back the output', () => {
    checkProjected(toolResultsSeen(provider, 'chat'), proxy.store, 'Qwen Code', 'within');
  });

  it('every model call was projected on the OpenAI upstream as Chat Completions', () => {
    expect(provider.received.map((r) => `${r.method} ${r.path} (to ${r.upstream})`)).toEqual(
      provider.received.map(() => 'POST /v1/chat/completions (to openai)'),
    );
  });

  it('its chat log replays as the requests it sent, but for what it adds before the first prompt and keeps out of the log', async () => {
    const home = join(root, 'qwen', 'home');
    const logs = filesUnder(join(home, '.qwen', 'projects')).filter((f) => f.endsWith('.jsonl'));
    expect(logs).toHaveLength(1);
    const t = await readTranscript(logs[0]!);
    expect(t.source).toBe('qwen-code');
    const sent = sentBodies(recordedTurns(proxy), proxy, '/v1/chat/completions');
    expect(t.calls.length, `${logs[0]}: calls replayed against requests sent`).toBe(sent.length);
    // the system prompt and the <system-reminder> parts of the first prompt are not in the log
    const withoutPrelude = (messages: Array<{ role: string; content: unknown }>) =>
      messages
        .filter((m) => m.role !== 'system')
        .map((m, i) =>
          i === 0 && Array.isArray(m.content)
            ? { ...m, content: m.content.filter((p: { text?: string }) => !p.text?.startsWith('<system-reminder>')) }
            : m,
        );
    t.calls.forEach((_, k) => {
      expect(requestForCall(t, k).messages, `call ${k + 1}: messages as replayed and as sent`).toEqual(withoutPrelude(sent[k].messages));
    });
    // and Browse Agent Sessions lists it for the folder it ran in
    expect(agentSessions(home, join(root, 'qwen', 'work')).map((f) => [f.agent, f.file])).toEqual([['qwen-code', logs[0]]]);
  });

  it('no key in anything Spillway wrote', () => {
    checkNoKey(key, proxy, 'Qwen Code');
  });
});

/**
 * Qwen Code cuts a shell output over 30,000 characters to a head and a tail (a fifth and four fifths
 * of its budget), saves the whole to a file of its own and says so first. The proxy must report such
 * an output as truncated by the agent, with that file.
 */
ownTruncationSuite("Qwen Code's own truncated outputs through spillway proxy", {
  dir: 'qwen-truncated',
  /** 3,000 lines of 29 characters: 87,000 characters, over Qwen Code's 30,000 for a shell output */
  commands: ['seq -f "qwen-cut row %05g of 3000" 1 3000 && sleep 0.3'],
  answer: 'QWEN-DONE: one output cut.',
  seen: 'chat',
  start: (proxy, home, work) =>
    runAgent(
      qwenBin,
      ['-p', 'Run the shell command you are asked for, then report.', '--yolo'],
      {
        PATH: agentPath(QWEN_CODE),
        HOME: home,
        OPENAI_BASE_URL: `${proxy.url}/v1`,
        OPENAI_API_KEY: 'sk-proj-spillway-qwen-cut',
        OPENAI_MODEL: 'qwen3-coder-plus',
      },
      work,
    ),
  reports: 'the output Qwen Code cut, with the file that holds the whole',
  check: ([t]) => {
    // Qwen Code does not say how much it cut
    expect(t).toMatchObject({ agent: 'qwen-code', unit: 'chars', tool: 'run_shell_command' });
    expect(t!.omitted).toBeUndefined();
    expect(readFileSync(t!.file, 'utf8')).toContain(sh('seq -f "qwen-cut row %05g of 3000" 1 3000').trimEnd());
  },
});

/**
 * Cline's CLI (npm `cline`, a Bun binary), `cline --json <prompt>` headless in act mode with every
 * tool approved, signed in as its own `cline auth` writes it for an OpenAI-compatible endpoint: the
 * key, the model and the proxy as its base URL (`<proxy>/v1`) in `~/.cline/data/settings/providers.json`.
 * It speaks Chat Completions; its shell tool is `run_commands` (a list of commands). Its sessions run
 * in-process (`CLINE_SESSION_BACKEND_MODE=local`): otherwise it starts a hub daemon that outlives the
 * run. Cline cuts every tool result to 8,000 characters itself (the middle left out, no copy kept),
 * so the 25 kB outputs reach Spillway already cut: the proxy must report them as truncated by Cline.
 */
/** A Cline CLI run through the proxy, signed in with `cline auth` for the proxy's OpenAI-compatible endpoint. */
interface ClineRun {
  provider: ScriptedProvider;
  proxy: Proxy;
  run: Run;
  auth: string;
  turns: Turn[];
  key: string;
  /** the session's own file, as Cline wrote it */
  sessionFiles: () => string[];
  home: string;
  work: string;
}

/** Runs Cline's CLI on `commands` (each one model call of its run_commands tool) in its own folder under `root`. */
async function runCline(name: string, commands: string[], answer: string): Promise<ClineRun> {
  const key = `sk-proj-spillway-test-${process.pid}-CLINE-SECRET`;
  const provider = await startScriptedProvider({ commands, finalAnswer: answer });
  const dir = join(root, name);
  const proxy = await startProxy(provider, dir);
  const home = join(dir, 'home');
  const work = join(dir, 'work');
  mkdirSync(home, { recursive: true });
  mkdirSync(work, { recursive: true });
  const env = { PATH: agentPath(CLINE), HOME: home, CLINE_SESSION_BACKEND_MODE: 'local', CLINE_NO_AUTO_UPDATE: '1' };
  const auth = execFileSync(clineBin, ['auth', '-p', 'openai', '-k', key, '-m', 'gpt-5', '-b', `${proxy.url}/v1`], {
    env,
    cwd: work,
    encoding: 'utf8',
    timeout: 60_000,
  });
  const run = await runAgent(clineBin, ['--json', `Run the ${commands.length} shell commands you are asked for, then report.`], env, work);
  await proxy.close();
  const sessionFiles = () => filesUnder(join(home, '.cline', 'data', 'sessions')).filter((f) => f.endsWith('.messages.json'));
  return { provider, proxy, run, auth, turns: recordedTurns(proxy), key, sessionFiles, home, work };
}

/** Cline's session file read back: every call's messages equal to what the proxy recorded Cline sending. */
async function expectClineReplayAsSent(c: ClineRun): Promise<Transcript> {
  const files = c.sessionFiles();
  expect(files).toHaveLength(1);
  const t = await readTranscript(files[0]!);
  expect(t.source).toBe('cline');
  const sent = sentBodies(c.turns, c.proxy, '/v1/chat/completions');
  expect(t.calls.length, `${files[0]}: calls replayed against requests sent`).toBe(sent.length);
  t.calls.forEach((_, k) => {
    expect(requestForCall(t, k).messages, `call ${k + 1}: messages as replayed and as sent`).toEqual(sent[k].messages);
  });
  return t;
}

describe('Cline through spillway proxy (routed by cline auth)', () => {
  const steps = 2;
  let c: ClineRun;
  const answer = `CLINE-DONE: ${steps} outputs read.`;

  beforeAll(async () => {
    c = await runCline('cline', COMMANDS.slice(0, steps), answer);
  }, AGENT_TIMEOUT_MS + 90_000);

  afterAll(async () => {
    await c?.proxy.close();
    await c?.provider.close();
  });

  it("finishes with the provider's final answer", () => {
    const { run, auth, proxy } = c;
    const ctx = `exit ${run.code} after ${run.ms} ms\nauth: ${auth}\nstdout: ${run.stdout.slice(-3000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}`;
    expect(run.code, ctx).toBe(0);
    expect(run.stdout, ctx).toContain(answer);
  });

  it('every model call was projected on the OpenAI upstream as Chat Completions', () => {
    const { provider } = c;
    expect(provider.received.length).toBeGreaterThan(steps);
    expect(provider.received.map((r) => `${r.method} ${r.path} (to ${r.upstream})`)).toEqual(
      provider.received.map(() => 'POST /v1/chat/completions (to openai)'),
    );
  });

  it("each output reached the provider as a marker previewing the output inside Cline's JSON, its handle reading back what Cline sent", () => {
    const results = toolResultsSeen(c.provider, 'chat');
    expect(results).toHaveLength(steps);
    results.forEach((text, k) => {
      const handle = HANDLE.exec(text)?.[0];
      expect(handle, `result ${k + 1} reached the provider without a marker: ${text.slice(0, 200)}`).toBeDefined();
      // the preview shows the output's lines, not the JSON list around them
      const first = sh(COMMANDS[k]!).split('\n')[0]!;
      expect(text.split('\n'), `preview of result ${k + 1}:\n${text.slice(0, 600)}`).toContain(first);
      const back = JSON.parse(spillwayRead(handle!, c.proxy.store)) as Array<{ query: string; result: string }>;
      expect(back.map((e) => e.query)).toEqual([COMMANDS[k]]);
      expect(back[0]!.result.startsWith(`${first}\n`)).toBe(true);
    });
  });

  it('the proxy reports each output Cline cut, once, with how much it cut', () => {
    const byCall = truncatedByCall(c.turns);
    const sent = toolResultsSeen(c.provider, 'chat').map((t) => t.slice(0, 300));
    expect(byCall.size, `reported ${JSON.stringify([...byCall.values()])}; Cline sent (starts): ${JSON.stringify(sent)}`).toBe(steps);
    for (const t of byCall.values()) {
      expect(t).toMatchObject({ agent: 'cline', unit: 'chars', file: '', tool: 'run_commands' });
      // it keeps 8,000 characters of the 25 kB
      expect(t.omitted).toBeGreaterThan(sh(COMMANDS[0]!).length - 8_100);
      expect(t.omitted).toBeLessThan(sh(COMMANDS[0]!).length - 7_000);
    }
  });

  it("its session file replays as the requests it sent: every call's messages, the system prompt and the cut results included", async () => {
    const t = await expectClineReplayAsSent(c);
    expect(t.skipped.notes.join('\n')).toContain(`Cline cut ${steps} tool result(s)`);
  });

  it('its session is listed by Browse Agent Sessions for the folder it ran in (its manifest names it)', () => {
    expect(agentSessions(c.home, c.work).map((f) => [f.agent, f.file])).toEqual([['cline', c.sessionFiles()[0]]]);
  });

  it('no key in anything Spillway wrote', () => {
    checkNoKey(c.key, c.proxy, 'Cline');
  });
});

/**
 * Cline's session file on what the first run does not show: a command that fails (Cline's entry then
 * carries the error and `success: false`) and a short output it does not cut.
 */
describe("Cline's session file replays a failed command as sent", () => {
  let c: ClineRun;
  const answer = 'CLINE-DONE: one failed.';

  beforeAll(async () => {
    c = await runCline('cline-failed', ['ls /spillway-no-such-dir', 'seq 1 3'], answer);
  }, AGENT_TIMEOUT_MS + 90_000);

  afterAll(async () => {
    await c?.proxy.close();
    await c?.provider.close();
  });

  it('finishes, with the failure in what Cline sent', () => {
    expect(c.run.code, c.run.stderr.slice(-2000)).toBe(0);
    expect(c.run.stdout).toContain(answer);
    expect(toolResultsSeen(c.provider, 'chat')[0]).toContain('spillway-no-such-dir');
  });

  it('every call replays as sent', async () => {
    const t = await expectClineReplayAsSent(c);
    expect(t.skipped.notes.join('\n')).not.toContain('Cline cut');
  });
});

/**
 * Continue's CLI (npm `@continuedev/cli`), `cn -p --auto --config <file>` headless with every tool
 * allowed, the model in its `config.yaml` as Continue's docs give it for the proxy: `provider: openai`
 * with `apiBase: <proxy>/v1` (it then speaks the Responses API) or `provider: anthropic` with
 * `apiBase: <proxy>/v1/`. Its shell tool is `Bash`. It keeps the last 1,000 lines (or 50,000
 * characters) of a shell output and says so first, with no copy of the whole: the OpenAI run ends
 * with a 3,000-line output, which the proxy must report as truncated by Continue.
 */
function continueSuite(upstream: 'anthropic' | 'openai') {
  const long = 'seq -f "continue-cut row %05g of 3000" 1 3000';
  const commands = upstream === 'openai' ? [...COMMANDS.slice(0, 2), long] : COMMANDS.slice(0, 2);
  describe(`Continue's CLI with the ${upstream === 'openai' ? 'OpenAI' : 'Anthropic'} provider through spillway proxy (routed by apiBase in its config.yaml)`, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let run: Run;
    let again: Run;
    let turns: Turn[] = [];
    let sessions = '';
    let home = '';
    let work = '';
    const key = `sk-${upstream === 'anthropic' ? 'ant-api03' : 'proj'}-spillway-test-${process.pid}-CONTINUE-${upstream}-SECRET`;
    const answer = `CONTINUE-DONE: ${commands.length} outputs read.`;

    beforeAll(async () => {
      provider = await startScriptedProvider({ commands, finalAnswer: answer });
      const dir = join(root, `continue-${upstream}`);
      proxy = await startProxy(provider, dir);
      home = join(dir, 'home');
      work = join(dir, 'work');
      mkdirSync(home, { recursive: true });
      mkdirSync(work, { recursive: true });
      const config = join(dir, 'config.yaml');
      writeFileSync(
        config,
        [
          'name: spillway-test',
          'version: 1.0.0',
          'schema: v1',
          'models:',
          '  - name: scripted',
          `    provider: ${upstream}`,
          `    model: ${upstream === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-5'}`,
          `    apiKey: ${key}`,
          `    apiBase: ${proxy.url}/v1${upstream === 'anthropic' ? '/' : ''}`,
          '    roles: [chat]',
          '',
        ].join('\n'),
      );
      run = await runAgent(
        continueBin,
        ['-p', '--auto', '--config', config, `Run the ${commands.length} shell commands you are asked for, then report.`],
        { PATH: agentPath(CONTINUE_CLI), HOME: home },
        work,
      );
      // a second prompt in the same session: an answer's text and a later prompt are in its history too
      again = await runAgent(
        continueBin,
        ['-p', '--auto', '--resume', '--config', config, 'Say it once more.'],
        { PATH: agentPath(CONTINUE_CLI), HOME: home },
        work,
      );
      sessions = join(home, '.continue', 'sessions');
      await proxy.close();
      turns = recordedTurns(proxy);
    }, AGENT_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
      // its config holds the fake key: not left behind in the run's folder
      rmSync(join(root, `continue-${upstream}`, 'config.yaml'), { force: true });
    });

    it("finishes with the provider's final answer", () => {
      const ctx = `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}`;
      expect(run.code, ctx).toBe(0);
      expect(run.stdout, ctx).toContain(answer);
      expect(again.code, `stderr: ${again.stderr.slice(-2000)}`).toBe(0);
    });

    it(`its session file replays as the requests it sent${upstream === 'anthropic' ? ", every call's messages less the cache breakpoints" : ", every call's input less the system prompt"}`, async () => {
      const files = readdirSync(sessions).filter((f) => f.endsWith('.json') && f !== 'sessions.json');
      expect(files).toHaveLength(1);
      const t = await readTranscript(join(sessions, files[0]!));
      expect(t.source).toBe('continue');
      const sent = sentBodies(turns, proxy, upstream === 'anthropic' ? '/v1/messages' : '/v1/responses');
      expect(t.calls.length).toBe(sent.length);
      expect(t.calls.length).toBe(commands.length + 2);
      if (upstream === 'openai') {
        expect(t.wire).toBe('openai-responses');
        t.calls.forEach((_, k) => {
          expect(sent[k].input[0].role).toBe('developer');
          expect(requestForCall(t, k).input, `call ${k + 1}: input as replayed and as sent, less the system prompt`).toEqual(
            sent[k].input.slice(1),
          );
        });
      } else {
        expect(t.wire).toBe('anthropic-messages');
        expect(t.skipped.notes.join('\n')).toContain('the last two user text blocks of each call');
        // the breakpoints Continue's adapter adds (the note above) are the only difference
        const breakpoints = (v: unknown): unknown =>
          JSON.parse(JSON.stringify(v, (k, x: unknown) => (k === 'cache_control' ? undefined : x)));
        expect(
          sent.map((b) => JSON.stringify(b.messages).includes('"cache_control"')),
          'the calls in which Continue marked a user text block for caching',
        ).toContain(true);
        t.calls.forEach((_, k) => {
          expect(requestForCall(t, k).messages, `call ${k + 1}: messages as replayed and as sent, less the breakpoints`).toEqual(
            breakpoints(sent[k].messages),
          );
        });
      }
    });

    it('every 25 kB output reached the provider as a marker whose handle reads back the exact output', () => {
      const results = toolResultsSeen(provider, upstream === 'anthropic' ? 'anthropic' : 'responses');
      expect(results).toHaveLength(commands.length);
      checkProjected(results.slice(0, 2), proxy.store, "Continue's CLI", 'exact', 2);
    });

    it(`every model call was projected on the ${upstream === 'anthropic' ? 'Anthropic' : 'OpenAI'} upstream`, () => {
      const expected = upstream === 'anthropic' ? 'POST /v1/messages (to anthropic)' : 'POST /v1/responses (to openai)';
      expect(provider.received.map((r) => `${r.method} ${r.path} (to ${r.upstream})`)).toEqual(provider.received.map(() => expected));
    });

    if (upstream === 'openai')
      it('the proxy reports the output Continue cut, with the lines it left out', () => {
        const byCall = truncatedByCall(turns);
        const sent = toolResultsSeen(provider, 'responses').map((t) => t.slice(0, 300));
        expect(byCall.size, `reported ${JSON.stringify([...byCall.values()])}; Continue sent (starts): ${JSON.stringify(sent)}`).toBe(1);
        // it keeps the last 1,000 of the 3,001 lines it counts (the empty one after the last line break among them)
        expect([...byCall.values()][0]).toMatchObject({ agent: 'continue', unit: 'lines', omitted: 2_001, file: '', tool: 'Bash' });
      });

    it('its session is listed by Browse Agent Sessions for the folder it ran in', () => {
      const files = readdirSync(sessions).filter((f) => f.endsWith('.json') && f !== 'sessions.json');
      expect(agentSessions(home, work).map((f) => [f.agent, f.file])).toEqual([['continue', join(sessions, files[0]!)]]);
      expect(sessionName(join(sessions, files[0]!))).toMatch(/^Run the \d shell commands you are asked for, then report\. · work$/);
    });

    it('no key in anything Spillway wrote', () => {
      checkNoKey(key, proxy, "Continue's CLI");
    });
  });
}

continueSuite('openai');
continueSuite('anthropic');

/**
 * GitHub Copilot's CLI (npm `@github/copilot`), `copilot -p … --allow-all-tools` headless, with its
 * own model provider (BYOK) as its help gives it: `COPILOT_PROVIDER_BASE_URL` (the proxy, `<proxy>/v1`
 * for OpenAI), `COPILOT_PROVIDER_TYPE`, `COPILOT_PROVIDER_API_KEY`, `COPILOT_MODEL`, and
 * `COPILOT_PROVIDER_WIRE_API=responses` for the Responses API; `COPILOT_OFFLINE=true` keeps it off
 * GitHub's servers (no sign-in needed with a provider of one's own). Its shell tool is `bash`. It
 * saves an output over 20 kB to a file itself and sends a 500-character preview instead (as Claude
 * Code does over 30 kB): two 13.5 kB outputs are Spillway's to reduce, the 25 kB one is Copilot's.
 */
/**
 * Copilot's CLI with a provider of its own (BYOK) at the proxy, as its help gives it: the base URL
 * (`<proxy>/v1` for OpenAI), type, key and model, the Responses API when asked, and
 * `COPILOT_OFFLINE=true` (nothing sent to GitHub). Its temporary files (the outputs it saves) in `tmp`.
 */
function copilotEnv(
  proxy: Proxy,
  home: string,
  tmp: string,
  upstream: 'anthropic' | 'openai',
  key: string,
  responses = false,
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: home,
    TMPDIR: tmp,
    COPILOT_OFFLINE: 'true',
    COPILOT_PROVIDER_BASE_URL: upstream === 'anthropic' ? proxy.url : `${proxy.url}/v1`,
    COPILOT_PROVIDER_TYPE: upstream,
    COPILOT_PROVIDER_API_KEY: key,
    COPILOT_MODEL: upstream === 'anthropic' ? 'claude-sonnet-4.5' : 'gpt-5',
    ...(responses ? { COPILOT_PROVIDER_WIRE_API: 'responses' } : {}),
  };
}

/** The request bodies the proxy recorded on `path`, as the agent sent them. */
function sentBodies(turns: readonly Turn[], proxy: Proxy, path: string): any[] {
  return turns.filter((x) => x.path === path && x.requestRef !== undefined).map((x) => JSON.parse(readBody(proxy.sessions, x.requestRef!)));
}

/** A system prompt's text: Anthropic's goes as blocks, which Copilot splits at a cache breakpoint. */
const systemText = (v: unknown) => (Array.isArray(v) ? v.map((b: { text: string }) => b.text).join('\n\n') : v);

/**
 * A request's fields without the keys in `settings` (settings, not text the model reads: where an
 * agent put its cache breakpoints), at any depth; with `oneTextAsString`, a content of one text block
 * as its string (the API reads both alike).
 */
function withoutSettings(v: unknown, settings: ReadonlySet<string>, oneTextAsString = false): unknown {
  if (Array.isArray(v)) return v.map((x) => withoutSettings(x, settings, oneTextAsString));
  if (!v || typeof v !== 'object') return v;
  const out = Object.fromEntries(
    Object.entries(v)
      .filter(([k]) => !settings.has(k))
      .map(([k, x]) => [k, withoutSettings(x, settings, oneTextAsString)]),
  );
  const only =
    oneTextAsString && Array.isArray(out.content) && out.content.length === 1 ? (out.content[0] as Record<string, unknown>) : undefined;
  if (only?.type === 'text' && Object.keys(only).length === 2 && typeof only.text === 'string') out.content = only.text;
  return out;
}

/** Copilot's requests without where it put its cache breakpoints. */
const copilotPlain = (v: unknown) => withoutSettings(v, new Set(['cache_control']));

function copilotSuite(wire: 'completions' | 'responses' | 'anthropic') {
  const upstream = wire === 'anthropic' ? 'anthropic' : 'openai';
  const small = (k: number) => `seq -f "step-${String(k).padStart(2, '0')} row %05g of the real-agent run, lorem ipsum" 1 300`;
  const commands = [small(1), small(2), command(3)];
  describe(`GitHub Copilot's CLI with its own ${wire === 'anthropic' ? 'Anthropic' : `OpenAI (${wire === 'completions' ? 'Chat Completions' : 'Responses'})`} provider through spillway proxy (routed by COPILOT_PROVIDER_BASE_URL)`, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let run: Run;
    let turns: Turn[] = [];
    const key = `sk-${upstream === 'anthropic' ? 'ant-api03' : 'proj'}-spillway-test-${process.pid}-COPILOT-${wire}-SECRET`;
    const answer = `COPILOT-DONE: ${commands.length} outputs read.`;
    const results = () => toolResultsSeen(provider, wire === 'anthropic' ? 'anthropic' : wire === 'responses' ? 'responses' : 'chat');

    beforeAll(async () => {
      provider = await startScriptedProvider({ commands, finalAnswer: answer });
      const dir = join(root, `copilot-${wire}`);
      proxy = await startProxy(provider, dir);
      const home = join(dir, 'home');
      const work = join(dir, 'work');
      mkdirSync(join(dir, 'tmp'), { recursive: true });
      mkdirSync(home, { recursive: true });
      mkdirSync(work, { recursive: true });
      run = await runAgent(
        copilotBin,
        ['-p', `Run the ${commands.length} shell commands you are asked for, then report.`, '--allow-all-tools', '--no-auto-update'],
        copilotEnv(proxy, home, join(dir, 'tmp'), upstream, key, wire === 'responses'),
        work,
      );
      await proxy.close();
      turns = recordedTurns(proxy);
    }, AGENT_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
    });

    it("finishes with the provider's final answer", () => {
      const ctx = `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}\nreceived: ${provider.received.map((r) => `${r.method} ${r.path}`).join(', ')}`;
      expect(run.code, ctx).toBe(0);
      expect(run.stdout, ctx).toContain(answer);
    });

    it('each 13.5 kB output reached the provider as a marker whose handle reads back the output', () => {
      const seen = results();
      expect(seen).toHaveLength(commands.length);
      seen.slice(0, 2).forEach((text, k) => {
        const handle = HANDLE.exec(text)?.[0];
        expect(handle, `result ${k + 1} reached the provider without a marker: ${text.slice(0, 200)}`).toBeDefined();
        expect(text.length).toBeLessThan(4_000);
        // Copilot's own last line (`<shellId: 0 completed with exit code 0>`) follows the output
        expect(spillwayRead(handle!, proxy.store)).toContain(sh(commands[k]!));
      });
    });

    it('the 25 kB output Copilot saved itself reached the provider untouched, reported as saved by the agent', () => {
      const text = results()[2]!;
      expect(text).toMatch(/^Output too large to read at once \([\d.]+ KB\)\. Saved to: /);
      expect(HANDLE.test(text)).toBe(false);
      const saved = new Map(turns.flatMap((t) => t.stats?.savedByAgent ?? []).map((s) => [s.callId, s]));
      expect([...saved.values()].map((s) => s.agent)).toEqual(['copilot-cli']);
      expect(text).toContain(`Saved to: ${[...saved.values()][0]!.file}\n`);
    });

    it("its session log replays as the requests it sent: every call's messages (or input), the system prompt included", async () => {
      const logs = filesUnder(join(root, `copilot-${wire}`, 'home', '.copilot', 'session-state')).filter((f) => f.endsWith('events.jsonl'));
      expect(logs).toHaveLength(1);
      const t = await readTranscript(logs[0]!);
      expect(t.source).toBe('copilot-cli');
      const path = wire === 'anthropic' ? '/v1/messages' : wire === 'responses' ? '/v1/responses' : '/v1/chat/completions';
      const sent = sentBodies(turns, proxy, path);
      expect(t.calls.length, `${logs[0]}: calls replayed against requests sent`).toBe(sent.length);
      const field = wire === 'anthropic' ? 'messages' : wire === 'responses' ? 'input' : 'messages';
      t.calls.forEach((_, k) => {
        const replayed = requestForCall(t, k);
        expect(copilotPlain(replayed[field]), `call ${k + 1}: ${field} as replayed and as sent`).toEqual(copilotPlain(sent[k][field]));
        if (wire !== 'completions')
          expect(systemText(replayed.system ?? replayed.instructions)).toBe(systemText(sent[k].system ?? sent[k].instructions));
      });
    });

    it(`every model call was projected on the ${upstream === 'anthropic' ? 'Anthropic' : 'OpenAI'} upstream`, () => {
      const expected =
        wire === 'anthropic'
          ? 'POST /v1/messages (to anthropic)'
          : wire === 'responses'
            ? 'POST /v1/responses (to openai)'
            : 'POST /v1/chat/completions (to openai)';
      expect(provider.received.map((r) => `${r.method} ${r.path} (to ${r.upstream})`)).toEqual(provider.received.map(() => expected));
    });

    it('no key in anything Spillway wrote', () => {
      checkNoKey(key, proxy, "GitHub Copilot's CLI");
    });
  });
}

copilotSuite('completions');
copilotSuite('responses');
copilotSuite('anthropic');

/**
 * Copilot's CLI hands the command to a sub-agent through its `task` tool; the sub-agent's turns are
 * written into the same session log as the main conversation's. The sub-agent's output must reach
 * the provider projected like any other, and the log must replay as the main conversation it holds.
 */
describe("GitHub Copilot's CLI hands the command to a sub-agent (its task tool) through spillway proxy", () => {
  const prompt = 'SUBTASK: run the scripted commands';
  /** 13.5 kB: Spillway's to reduce (Copilot saves an output over 20 kB itself) */
  const run13k = 'seq -f "sub row %05g of the real-agent run, lorem ipsum, step one" 1 300';
  const report = 'SUB-REPORT: the command ran.';
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  let turns: Turn[] = [];
  const dir = () => join(root, 'copilot-sub');

  beforeAll(async () => {
    provider = await startScriptedProvider({
      commands: [run13k],
      finalAnswer: 'COPILOT-SUB-DONE',
      subAgent: { prompt, report, tool: 'task' },
    });
    proxy = await startProxy(provider, dir());
    mkdirSync(join(dir(), 'home'), { recursive: true });
    mkdirSync(join(dir(), 'work'), { recursive: true });
    run = await runAgent(
      copilotBin,
      ['-p', 'Hand the work to a sub-agent, then report.', '--allow-all-tools', '--no-auto-update'],
      copilotEnv(proxy, join(dir(), 'home'), dir(), 'anthropic', 'sk-ant-api03-spillway-copilot-sub'),
      join(dir(), 'work'),
    );
    await proxy.close();
    turns = recordedTurns(proxy);
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  it("finishes with the provider's final answer, after the sub-agent's report", () => {
    expect(run.code, `exit ${run.code}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}`).toBe(0);
    expect(run.stdout).toContain('COPILOT-SUB-DONE');
    const isSub = (r: { json?: any }) => firstUserText(r.json).includes(prompt);
    expect(provider.received.filter(isSub).length).toBeGreaterThan(1);
  });

  it("the sub-agent's 13.5 kB output reached the provider as a marker whose handle reads back the output", () => {
    const sub = provider.received.filter((r) => firstUserText(r.json).includes(prompt));
    const results = anthropicToolResults(sub[sub.length - 1]!.json);
    expect(results).toHaveLength(1);
    const handle = HANDLE.exec(results[0]!)?.[0];
    expect(handle, results[0]!.slice(0, 200)).toBeDefined();
    expect(spillwayRead(handle!, proxy.store)).toContain(sh(run13k));
  });

  it("its session log replays as the main conversation it sent, the sub-agent left out and said so, and as the sub-agent's with --instance", async () => {
    const logs = filesUnder(join(dir(), 'home', '.copilot', 'session-state')).filter((f) => f.endsWith('events.jsonl'));
    expect(logs).toHaveLength(1);
    const t = await readTranscript(logs[0]!);
    const main = sentBodies(turns, proxy, '/v1/messages').filter((b) => !firstUserText(b).includes(prompt));
    expect(t.calls.length).toBe(main.length);
    t.calls.forEach((_, k) => expect(copilotPlain(requestForCall(t, k).messages), `call ${k + 1}`).toEqual(copilotPlain(main[k].messages)));
    const note = t.skipped.notes.find((n) => n.startsWith('sub-agent '));
    expect(note).toMatch(/^sub-agent (\S+) \(runner\), started by the task tool, made 2 call\(s\) written in the same log/);
    // and the sub-agent's own conversation, picked by the task call the note names
    const sub = await readTranscript(logs[0]!, { instance: /^sub-agent (\S+)/.exec(note!)![1]! });
    const subSent = sentBodies(turns, proxy, '/v1/messages').filter((b) => firstUserText(b).includes(prompt));
    expect(sub.calls.length).toBe(subSent.length);
    sub.calls.forEach((_, k) => {
      const replayed = requestForCall(sub, k);
      expect(copilotPlain(replayed.messages), `sub-agent call ${k + 1}`).toEqual(copilotPlain(subSent[k].messages));
      expect(systemText(replayed.system)).toBe(systemText(subSent[k].system));
    });
  });
});

/**
 * The pi coding agent (plain JavaScript from npm), `pi -p` headless with its built-in Anthropic provider
 * and a fake key in `ANTHROPIC_API_KEY` (or its OpenAI one, Responses API, with `OPENAI_API_KEY`),
 * routed by its models.json as src/proxy/piConfig.ts writes it (`providers.anthropic.baseUrl = <proxy>`,
 * `providers.openai.baseUrl = <proxy>/v1`; the provider keeps its models and sign-in). Its shell tool
 * is `bash`.
 */
function piSuite(upstream: 'anthropic' | 'openai') {
  const steps = upstream === 'anthropic' ? STEPS : 2;
  describe(`pi${upstream === 'openai' ? ' with the OpenAI provider' : ''} through spillway proxy (routed by its models.json)`, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let run: Run;
    let configText = '';
    const home = join(root, `pi-${upstream}`, 'home');
    const work = join(root, `pi-${upstream}`, 'work');
    const key = `sk-${upstream === 'anthropic' ? 'ant-api03' : 'proj'}-spillway-test-${process.pid}-PI-${upstream}-SECRET`;
    const answer = `PI-DONE: ${steps} outputs read.`;

    beforeAll(async () => {
      provider = await startScriptedProvider({ commands: COMMANDS.slice(0, steps), finalAnswer: answer });
      proxy = await startProxy(provider, join(root, `pi-${upstream}`));
      mkdirSync(work, { recursive: true });
      const env = {
        PATH: agentPath(PI),
        HOME: home,
        PI_CODING_AGENT_DIR: join(home, '.pi', 'agent'),
        [upstream === 'anthropic' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY']: key,
      };
      const file = piModelsPath(env, home);
      mkdirSync(join(file, '..'), { recursive: true });
      configText = routePi('', proxy.url, [], file).text;
      writeFileSync(file, configText);
      run = await runAgent(
        piBin,
        [
          '-p',
          '--provider',
          upstream,
          '--model',
          upstream === 'anthropic' ? 'claude-sonnet-4-5' : 'gpt-5',
          `Run the ${steps} shell commands you are asked for, then report.`,
        ],
        env,
        work,
      );
    }, AGENT_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
    });

    it("finishes with the provider's final answer", () => {
      const ctx = `exit ${run.code} after ${run.ms} ms\nmodels.json:\n${configText}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}`;
      expect(run.code, ctx).toBe(0);
      expect(run.stdout.trim().split('\n').pop(), ctx).toBe(answer);
    });

    it('every 25 kB output reached the provider as a marker whose handle reads back the exact output', () => {
      checkProjected(toolResultsSeen(provider, upstream === 'anthropic' ? 'anthropic' : 'responses'), proxy.store, 'pi', 'exact', steps);
    });

    it(`every model call was projected on the ${upstream === 'anthropic' ? 'Anthropic' : 'OpenAI'} upstream`, () => {
      const expected = upstream === 'anthropic' ? 'POST /v1/messages (to anthropic)' : 'POST /v1/responses (to openai)';
      expect(provider.received.map((r) => `${r.method} ${r.path} (to ${r.upstream})`)).toEqual(provider.received.map(() => expected));
    });

    it('its session is listed by Browse Agent Sessions for the folder it ran in, and replays its calls', async () => {
      const found = agentSessions(home, work, home, undefined, join(home, '.pi', 'agent'));
      expect(found.map((f) => f.agent)).toEqual(['pi']);
      const t = await readTranscript(found[0]!.file);
      expect(t.source).toBe('pi');
      expect(t.calls).toHaveLength(provider.received.length);
    });

    it('no key in anything Spillway wrote', () => {
      checkNoKey(key, proxy, 'pi');
    });
  });
}

piSuite('anthropic');
piSuite('openai');

/**
 * pi keeps the last 2,000 lines (or 50 kB) of a bash output, writes the whole to a log and says so at
 * the end. The proxy must report such an output as truncated by the agent, in the wording the pinned
 * release writes, with the log that holds the whole.
 */
ownTruncationSuite("pi's own truncated outputs through spillway proxy", {
  dir: 'pi-truncated',
  /** 3,000 lines of 27 characters: over pi's 2,000 lines, under its 50 kB */
  commands: ['seq -f "pi-cut row %05g of 3000" 1 3000'],
  answer: 'PI-DONE: one output cut.',
  seen: 'anthropic',
  start: (proxy, home, work) => {
    const env = {
      PATH: agentPath(PI),
      HOME: home,
      PI_CODING_AGENT_DIR: join(home, '.pi', 'agent'),
      ANTHROPIC_API_KEY: 'sk-ant-api03-spillway-pi-cut',
    };
    const file = piModelsPath(env, home);
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(file, routePi('', proxy.url, [], file).text);
    return runAgent(
      piBin,
      ['-p', '--provider', 'anthropic', '--model', 'claude-sonnet-4-5', 'Run the shell command you are asked for, then report.'],
      env,
      work,
    );
  },
  reports: 'the output pi cut, with the lines it left out and the log that holds the whole',
  check: ([t], [long]) => {
    // pi counts the empty line after the last line break: it shows lines 1002-3001 of 3001, the last
    // 1,999 rows and that empty line, so it left out rows 1 to 1,001
    expect(t).toMatchObject({ agent: 'pi', unit: 'lines', omitted: 1_001 });
    expect(readFileSync(t!.file, 'utf8').trimEnd()).toBe(sh(long!).trimEnd());
    // pi's log is in the system's temporary folder, outside the run's: not left behind
    rmSync(t!.file, { force: true });
  },
});

/**
 * The read-back pages of a run, checked: after the first result (a marker), every result answers the
 * read tool, there are several, and the text after each answer's header line, joined, is the stored
 * output byte for byte. Returns that text.
 */
function readBackPages(results: Array<[string, string]>, readTool: string, store: string): string {
  const handle = HANDLE.exec(results[0]![1])![0];
  const pages = results.slice(1);
  expect(pages.length).toBeGreaterThan(2);
  for (const [tool] of pages) expect(tool).toBe(readTool);
  const whole = pages.map(([, text]) => text.slice(text.indexOf('\n') + 1)).join('');
  expect(whole).toBe(spillwayRead(handle, store));
  return whole;
}

/** `token`: signed in with a subscription token (CLAUDE_CODE_OAUTH_TOKEN) instead of a key. */
function claudeMcpSuite(signIn: 'key' | 'token') {
  describe(`Claude Code${signIn === 'token' ? ' on a subscription' : ''} reads back through spillway mcp, with only the MCP tool allowed`, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let run: Run;
    const key =
      signIn === 'key'
        ? `sk-ant-api03-spillway-test-${process.pid}-MCP-SECRET`
        : `sk-ant-oat01-spillway-test-${process.pid}-MCP-OAUTH-SECRET`;
    const READ_TOOL = CLAUDE_MCP_TOOLS[0]!;
    const PAGE = 8_000;

    beforeAll(async () => {
      provider = await startScriptedProvider({
        commands: [COMMANDS[0]!],
        finalAnswer: 'CLAUDE-MCP-DONE: read back.',
        readBack: { tool: READ_TOOL, page: PAGE },
      });
      const dir = join(root, `claude-mcp-${signIn}`);
      proxy = await startProxy(provider, dir);
      const home = join(dir, 'home');
      const work = join(dir, 'work');
      mkdirSync(home, { recursive: true });
      mkdirSync(join(work, '.claude'), { recursive: true });
      // the files Spillway: Add Spillway's MCP Server for Claude Code writes: the server, and the allow-once
      writeFileSync(
        join(work, '.mcp.json'),
        addMcpJsonServer('', { command: process.execPath, args: [CLI, 'mcp', '--store', proxy.store] }).text,
      );
      writeFileSync(join(work, '.claude', 'settings.local.json'), allowMcpTools('').text);
      run = await runAgent(
        claudeBin,
        // the one shell command the script runs is allowed by name; no other Bash, so a read-back can only be the MCP tool
        [
          '-p',
          'Run the shell command you are asked for, read its output back, then report.',
          '--allowedTools',
          'Bash(seq:*)',
          '--output-format',
          'json',
        ],
        signIn === 'key'
          ? claudeEnv(home, proxy.url, key)
          : { ...claudeEnv(home, proxy.url, ''), ANTHROPIC_API_KEY: undefined, CLAUDE_CODE_OAUTH_TOKEN: key },
        work,
      );
    }, AGENT_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
    });

    /** The last request of the main conversation, as the provider received it. */
    const lastMain = () =>
      provider.received.filter((r) => r.path === '/v1/messages' && r.json?.tools?.some((t: any) => t?.name === 'Bash')).pop()!.json;
    /** [tool name, text] of every tool result in the last request. */
    const results = (): Array<[string, string]> => {
      const names = new Map<string, string>();
      const out: Array<[string, string]> = [];
      for (const m of lastMain().messages as any[]) {
        if (!Array.isArray(m.content)) continue;
        for (const b of m.content) {
          if (b?.type === 'tool_use') names.set(b.id, b.name);
          if (b?.type === 'tool_result')
            out.push([
              names.get(b.tool_use_id) ?? '',
              typeof b.content === 'string' ? b.content : b.content.map((c: any) => c.text ?? '').join(''),
            ]);
        }
      }
      return out;
    };

    it("finishes with the provider's final answer, nothing denied", () => {
      const ctx = `exit ${run.code} after ${run.ms} ms\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-2000)}\nproxy: ${proxy.out().slice(-2000)}`;
      expect(run.code, ctx).toBe(0);
      const out = JSON.parse(run.stdout) as { result?: string; is_error?: boolean; permission_denials?: unknown[] };
      expect(out.is_error, ctx).toBe(false);
      expect(out.result, ctx).toBe('CLAUDE-MCP-DONE: read back.');
      expect(out.permission_denials ?? [], ctx).toEqual([]);
    });

    it('offered the MCP read tool (as a deferred tool, with tool search on), and the marker told the model to call it', () => {
      const last = provider.received.filter((r) => r.path === '/v1/messages' && r.json?.tools?.some((t: any) => t?.name === 'Bash')).pop()!;
      expect(findReadTool(readRequest(last.body, 'anthropic-messages'))).toBe(READ_TOOL);
      const [tool, marker] = results()[0]!;
      expect(tool).toBe('Bash');
      expect(marker).toContain(`call \`${READ_TOOL}\` with handle`);
    });

    it('received the exact output back, page by page, through the MCP tool', () => {
      expect(readBackPages(results(), READ_TOOL, proxy.store).trimEnd()).toBe(expected[0]!.trimEnd());
    });

    it('no key in anything Spillway wrote', () => {
      checkNoKey(key, proxy, `Claude Code (MCP, ${signIn})`);
    });

    it(`every model call carried the ${signIn === 'key' ? 'key as x-api-key' : 'token as the bearer'}`, () => {
      const calls = provider.received.filter((r) => r.method === 'POST' && r.path === '/v1/messages');
      expect(calls.length).toBeGreaterThan(2);
      for (const r of calls) {
        if (signIn === 'key') expect(r.headers['x-api-key']).toBe(key);
        else expect([r.headers.authorization, r.headers['x-api-key']]).toEqual([`Bearer ${key}`, undefined]);
      }
    });
  });
}

claudeMcpSuite('key');
claudeMcpSuite('token');

describe('Codex reads back through spillway mcp, the server added as Route Codex Through Spillway adds it', () => {
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  let configText = '';
  const key = `sk-proj-spillway-test-${process.pid}-MCP-SECRET`;
  // Codex puts each MCP server's tools in a Responses namespace: `read_output` in `mcp__spillway`
  const READ_TOOL = 'mcp__spillway.read_output';

  beforeAll(async () => {
    provider = await startScriptedProvider({
      commands: [COMMANDS[0]!],
      finalAnswer: 'CODEX-MCP-DONE: read back.',
      readBack: { tool: READ_TOOL, page: 8_000 },
    });
    proxy = await startProxy(provider, join(root, 'codex-mcp'), ['--websockets', 'refuse']);
    const codexHome = join(root, 'codex-mcp', 'codex-home');
    const work = join(root, 'codex-mcp', 'work');
    mkdirSync(codexHome, { recursive: true });
    mkdirSync(work, { recursive: true });
    const user = '# my settings\nmodel = "gpt-5.2-codex"\ntool_output_token_limit = 20000\n\n[shell_environment_policy]\ninherit = "all"\n';
    const routed = addCodexBaseUrl(user, codexBaseUrl(proxy.url), 'config.toml').text;
    configText = addCodexMcpServer(routed, { command: process.execPath, args: [CLI, 'mcp', '--store', proxy.store] }).text;
    writeFileSync(join(codexHome, 'config.toml'), configText);
    run = await runAgent(
      codexBin,
      [
        'exec',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        'Run the shell command you are asked for, read its output back, then report.',
      ],
      { PATH: process.env.PATH, HOME: join(root, 'codex-mcp'), CODEX_HOME: codexHome, OPENAI_API_KEY: key, RUST_LOG: 'warn' },
      work,
    );
  }, AGENT_TIMEOUT_MS + 30_000);

  afterAll(async () => {
    await proxy?.close();
    await provider?.close();
  });

  /** [tool name, text] of every tool output in the last Responses request. */
  const results = (): Array<[string, string]> => {
    const last = provider.received.filter((r) => r.path.endsWith('/responses') && r.json).pop()!;
    const names = new Map<string, string>();
    const out: Array<[string, string]> = [];
    for (const i of last.json.input as any[]) {
      if (i?.type === 'function_call') names.set(i.call_id, i.namespace ? `${i.namespace}.${i.name}` : i.name);
      if (i?.type === 'function_call_output') out.push([names.get(i.call_id) ?? '', outputText(i.output)]);
    }
    return out;
  };

  it("finishes with the provider's final answer", () => {
    const ctx = `exit ${run.code} after ${run.ms} ms\nconfig.toml:\n${configText}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}\ntools: ${JSON.stringify(
      provider.received
        .filter((r) => r.json?.tools)
        .pop()
        ?.json.tools.map((t: any) => t.name ?? t.type),
    )}`;
    expect(run.code, ctx).toBe(0);
    expect(run.stdout.trim().split('\n').pop(), ctx).toBe('CODEX-MCP-DONE: read back.');
  });

  it('offered the MCP read tool, and the marker told the model to call it', () => {
    const last = provider.received.filter((r) => r.path.endsWith('/responses') && r.json).pop()!;
    expect(findReadTool(readRequest(last.body, 'openai-responses'))).toBe(READ_TOOL);
    expect(results()[0]![1]).toContain(`call \`${READ_TOOL}\` with handle`);
  });

  it('received the stored output back byte for byte, page by page, through the MCP tool', () => {
    // Codex puts a short header (chunk id, wall time, exit code) before the output it sends
    expect(
      readBackPages(results(), READ_TOOL, proxy.store)
        .trimEnd()
        .endsWith('\n' + expected[0]!.trimEnd()),
    ).toBe(true);
  });
});

function codexSuite(mode: 'http' | 'websocket') {
  describe(`Codex through spillway proxy (${mode})`, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let run: Run;
    let configText = '';
    const key = `sk-proj-spillway-test-${process.pid}-SECRET`;

    beforeAll(async () => {
      provider = await startScriptedProvider({
        commands: COMMANDS,
        finalAnswer: 'CODEX-DONE: twelve outputs read.',
        websockets: mode === 'websocket',
      });
      // HTTP: the proxy refuses the WebSocket upgrade itself (426), so Codex falls back before anything reaches the provider
      const ws = ['--websockets', mode === 'http' ? 'refuse' : 'project'];
      proxy = await startProxy(provider, join(root, `codex-${mode}`), ws);
      const codexHome = join(root, `codex-${mode}`, 'codex-home');
      const work = join(root, `codex-${mode}`, 'work');
      mkdirSync(codexHome, { recursive: true });
      mkdirSync(work, { recursive: true });
      // the same code as Spillway: Route Codex Through Spillway, on a config with the user's own settings
      // (tool_output_token_limit: Codex cuts what it sends of a tool output to a few thousand tokens by default; 25 kB must arrive whole)
      const user =
        '# my settings\nmodel = "gpt-5.2-codex"\ntool_output_token_limit = 20000\n\n[shell_environment_policy]\ninherit = "all"\n';
      configText = addCodexBaseUrl(user, codexBaseUrl(proxy.url), 'config.toml').text;
      writeFileSync(join(codexHome, 'config.toml'), configText);
      run = await runAgent(
        codexBin,
        [
          'exec',
          '--skip-git-repo-check',
          '--dangerously-bypass-approvals-and-sandbox',
          'Run the twelve shell commands you are asked for, then report.',
        ],
        {
          PATH: process.env.PATH,
          HOME: join(root, `codex-${mode}`),
          CODEX_HOME: codexHome,
          OPENAI_API_KEY: key,
          RUST_LOG: 'warn',
        },
        work,
      );
    }, AGENT_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
    });

    it("finishes with the provider's final answer", () => {
      const ctx = `exit ${run.code} after ${run.ms} ms\nconfig.toml:\n${configText}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}\nproxy: ${proxy.out().slice(-2000)}`;
      expect(run.code, ctx).toBe(0);
      expect(run.stdout.trim().split('\n').pop(), ctx).toBe('CODEX-DONE: twelve outputs read.');
    });

    it('every 25 kB output reached the provider as a marker whose handle reads back the output', () => {
      checkProjected(toolResultsSeen(provider, 'responses'), proxy.store, 'Codex', 'suffix');
    });

    it(
      mode === 'http' ? 'used HTTP (WebSocket refused by the proxy): no WebSocket reached the provider' : 'used the WebSocket transport',
      () => {
        const posts = provider.received.filter((r) => r.method === 'POST' && r.path === '/v1/responses' && r.upstream === 'openai');
        if (mode === 'http') {
          expect(posts.length).toBeGreaterThan(STEPS);
          expect(provider.received.filter((r) => r.transport === 'websocket-refused')).toEqual([]);
        } else {
          // the proxy projects response.create messages on its WebSocket to the provider; no HTTP POST carried the turns
          expect(posts).toEqual([]);
          const creates = provider.received.filter((r) => r.transport === 'websocket' && r.json?.generate !== false);
          expect(creates.length).toBeGreaterThan(STEPS);
          // each turn after the first continues the previous response and carries only its new items
          expect(creates.slice(1).every((r) => typeof r.json.previous_response_id === 'string')).toBe(true);
        }
      },
    );

    it('no key in anything Spillway wrote', () => {
      checkNoKey(key, proxy, 'Codex');
    });

    it.runIf(mode === 'http')(
      `${CAPTURE ? 'captures' : 'has captured'} the instructions and tools the replay adds to Codex logs (test/fixtures/agent-preludes.json)`,
      () => {
        const main = provider.received.filter((r) => r.method === 'POST' && r.path === '/v1/responses' && r.json?.tools).pop();
        expect(main, 'no Responses request reached the provider').toBeDefined();
        captureOrCheckPrelude('codex', CODEX.version, main!.json, root);
      },
    );
  });
}

codexSuite('http');
codexSuite('websocket');

/**
 * Codex cuts what it sends of a tool output to a few thousand tokens by default (its
 * `tool_output_token_limit`), keeping a head and a tail and saying how much it cut. The proxy must
 * report each such output as truncated by the agent (src/engine/agent-truncation.ts) in the request
 * it arrives in, in the wording the pinned release writes.
 */
ownTruncationSuite("Codex's own truncated outputs through spillway proxy", {
  dir: 'codex-truncated',
  commands: [command(21), command(22)],
  answer: 'CODEX-DONE: two outputs cut.',
  seen: 'responses',
  proxyArgs: ['--websockets', 'refuse'],
  start: (proxy, home, work) => {
    const codexHome = join(home, 'codex-home');
    mkdirSync(codexHome, { recursive: true });
    // the user's settings leave Codex's own limit on tool output as it ships
    writeFileSync(
      join(codexHome, 'config.toml'),
      addCodexBaseUrl('model = "gpt-5.2-codex"\n', codexBaseUrl(proxy.url), 'config.toml').text,
    );
    return runAgent(
      codexBin,
      [
        'exec',
        '--skip-git-repo-check',
        '--dangerously-bypass-approvals-and-sandbox',
        'Run the two shell commands you are asked for, then report.',
      ],
      { PATH: process.env.PATH, HOME: home, CODEX_HOME: codexHome, OPENAI_API_KEY: 'sk-proj-spillway-truncated', RUST_LOG: 'warn' },
      work,
    );
  },
  reports: 'each output Codex cut, once, with how much it cut and no file',
  check: (reported, cut) => {
    expect(reported).toHaveLength(cut.length);
    for (const t of reported) {
      // 0.171 cuts by characters (`…19680 chars truncated…`): most of the 25 kB output
      expect(t).toMatchObject({ agent: 'codex', unit: 'chars', file: '', tool: 'exec_command' });
      expect(t.omitted).toBeGreaterThan(sh(cut[0]!).length / 2);
      expect(t.omitted).toBeLessThan(sh(cut[0]!).length);
    }
  },
});

/**
 * A ChatGPT-mode `auth.json` as `codex login` writes it, with fake tokens: the id and access tokens
 * are JWTs carrying the claims Codex parses (email, plan, user and account ids, an expiry a month
 * ahead, so Codex does not try to refresh them), `last_refresh` now.
 */
function chatgptAuth(tag: string): { json: string; token: string; account: string } {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const account = `acct-spillway-test-${tag}`;
  const claims = {
    email: 'agent-test@example.invalid',
    iat: now,
    exp: now + 30 * 86_400,
    'https://api.openai.com/auth': { chatgpt_plan_type: 'plus', chatgpt_user_id: `user-${tag}`, chatgpt_account_id: account },
  };
  const token = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64(claims)}.${Buffer.from(`sig-${tag}-SECRET`).toString('base64url')}`;
  const json = JSON.stringify(
    {
      auth_mode: 'chatgpt',
      OPENAI_API_KEY: null,
      tokens: { id_token: token, access_token: token, refresh_token: `rt-${tag}-SECRET`, account_id: account },
      last_refresh: new Date().toISOString(),
    },
    null,
    2,
  );
  return { json, token, account };
}

/** The command outputs inside Codex's `exec` answers (the `output` of the tool's JSON) in the last model call the provider saw. */
function execOutputsSeen(provider: ScriptedProvider): string[] {
  const calls = provider.received.filter((r) => r.json && r.upstream === 'chatgpt' && r.path.endsWith('/codex/responses'));
  const last = calls[calls.length - 1];
  if (!last) return [];
  return (last.json.input as any[])
    .filter((i) => i?.type === 'custom_tool_call_output')
    .map((i) => {
      const parts: any[] = Array.isArray(i.output) ? i.output : [{ text: i.output }];
      const json = parts.map((p) => p?.text ?? '').find((t: string) => t.startsWith('{'));
      return json ? String(JSON.parse(json).output) : JSON.stringify(i.output);
    });
}

function codexChatgptSuite(mode: 'http' | 'websocket') {
  describe(`Codex signed in with ChatGPT through spillway proxy (${mode})`, () => {
    let provider: ScriptedProvider;
    let proxy: Proxy;
    let run: Run;
    let configText = '';
    const dir = join(root, `codex-chatgpt-${mode}`);
    const codexHome = join(dir, 'codex-home');
    const auth = chatgptAuth(`${process.pid}-${mode}`);

    beforeAll(async () => {
      provider = await startScriptedProvider({
        commands: COMMANDS,
        finalAnswer: 'CODEX-CHATGPT-DONE: twelve outputs read.',
        websockets: mode === 'websocket',
      });
      proxy = await startProxy(provider, dir, [
        '--websockets',
        mode === 'http' ? 'refuse' : 'project',
        '--chatgpt-upstream',
        `${provider.url}/backend-api`,
      ]);
      const work = join(dir, 'work');
      mkdirSync(codexHome, { recursive: true });
      mkdirSync(work, { recursive: true });
      writeFileSync(join(codexHome, 'auth.json'), auth.json, { mode: 0o600 });
      // what Spillway: Route Codex Through Spillway writes for a ChatGPT sign-in (it reads the mode from this auth.json)
      expect(codexAuthMode(auth.json)).toBe('chatgpt');
      const user = '# my settings\ntool_output_token_limit = 20000\n\n[shell_environment_policy]\ninherit = "all"\n';
      configText = addCodexChatgptRoute(user, proxy.url, 'config.toml').text;
      writeFileSync(join(codexHome, 'config.toml'), configText);
      run = await runAgent(
        codexBin,
        [
          'exec',
          '--skip-git-repo-check',
          '--dangerously-bypass-approvals-and-sandbox',
          'Run the twelve shell commands you are asked for, then report.',
        ],
        { PATH: process.env.PATH, HOME: dir, CODEX_HOME: codexHome, RUST_LOG: 'warn' },
        work,
      );
    }, AGENT_TIMEOUT_MS + 30_000);

    afterAll(async () => {
      await proxy?.close();
      await provider?.close();
    });

    it("finishes with the provider's final answer", () => {
      const ctx = `exit ${run.code} after ${run.ms} ms\nconfig.toml:\n${configText}\nstdout: ${run.stdout.slice(-2000)}\nstderr: ${run.stderr.slice(-3000)}\nproxy: ${proxy.out().slice(-2000)}`;
      expect(run.code, ctx).toBe(0);
      expect(run.stdout.trim().split('\n').pop(), ctx).toBe('CODEX-CHATGPT-DONE: twelve outputs read.');
    });

    it('the model calls reached the ChatGPT backend with the ChatGPT sign-in, through the proxy', () => {
      const calls = provider.received.filter((r) => r.upstream === 'chatgpt' && r.path === '/backend-api/codex/responses');
      expect(calls.length).toBeGreaterThan(STEPS);
      for (const c of calls) {
        expect(c.headers.authorization).toBe(`Bearer ${auth.token}`);
        expect(c.headers['chatgpt-account-id']).toBe(auth.account);
      }
    });

    it("every 25 kB output reached the provider as a marker inside exec's JSON whose handle reads back the output exactly", () => {
      checkProjected(execOutputsSeen(provider), proxy.store, 'Codex (ChatGPT)', 'exact');
    });

    it(mode === 'http' ? 'used HTTP (WebSocket refused by the proxy)' : 'used the WebSocket transport', () => {
      const posts = provider.received.filter((r) => r.method === 'POST' && r.path === '/backend-api/codex/responses');
      const creates = provider.received.filter(
        (r) => r.transport === 'websocket' && r.upstream === 'chatgpt' && r.json?.generate !== false,
      );
      if (mode === 'http') {
        expect(posts.length).toBeGreaterThan(STEPS);
        expect(creates).toEqual([]);
      } else {
        expect(posts).toEqual([]);
        expect(creates.length).toBeGreaterThan(STEPS);
      }
    });

    it('no token on disk outside the auth file, and none in the proxy output', () => {
      const secrets = [auth.token, `rt-${process.pid}-${mode}-SECRET`];
      const leaks = filesUnder(dir).filter((f) => f !== join(codexHome, 'auth.json') && secrets.some((s) => readFileSync(f).includes(s)));
      expect(leaks, `the ChatGPT tokens are in ${leaks.join(', ')}`).toEqual([]);
      for (const s of secrets) expect(proxy.out().includes(s)).toBe(false);
    });
  });
}

codexChatgptSuite('http');
codexChatgptSuite('websocket');
