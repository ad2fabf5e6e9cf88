/**
 * The real agents, installed from npm as their users install them, through `spillway proxy` (the built
 * dist/cli.js) to a scripted provider on 127.0.0.1, each run non-interactively for a dozen shell
 * commands with 25 kB outputs, configured only the way Spillway tells users to:
 *   - Claude Code: `ANTHROPIC_BASE_URL` (what the proxy prints), `claude -p … --allowedTools Bash
 *     --output-format json` with `IS_SANDBOX=1` and a fake key;
 *   - Codex: a `CODEX_HOME` whose config.toml was written by src/proxy/codexConfig.ts (the code behind
 *     Spillway: Route Codex Through Spillway), `codex exec --skip-git-repo-check
 *     --dangerously-bypass-approvals-and-sandbox` with a fake key in `OPENAI_API_KEY`.
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
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { CLAUDE_CODE, CODEX, ensureAgent } from './install';
import { outputText, startScriptedProvider, type ScriptedProvider } from './provider';
import { addCodexBaseUrl, addCodexMcpServer, codexBaseUrl } from '../../src/proxy/codexConfig';
import { addMcpJsonServer, allowMcpTools, CLAUDE_MCP_TOOLS } from '../../src/proxy/claudeConfig';
import { findReadTool } from '../../src/engine/read-tool';
import { readRequest } from '../../src/engine/formats';
import { filesUnder } from '../support/files';
import { HANDLE_IN_TEXT as HANDLE } from '../../src/engine/handle';
import { expectSome } from '../support/expect';
import { captureOrCheckPrelude, CAPTURE } from './prelude';

const ROOT = resolve(__dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli.js');
const STEPS = 12;
/** About 25 kB per command: 560 numbered lines of 45 characters, different for every step. */
const command = (k: number) => `seq -f "step-${String(k).padStart(2, '0')} row %05g of the real-agent run, lorem ipsum" 1 560`;
const COMMANDS = Array.from({ length: STEPS }, (_, k) => command(k + 1));
const AGENT_TIMEOUT_MS = 240_000;

function sh(cmd: string): string {
  return execFileSync('bash', ['-c', cmd], { encoding: 'utf8' });
}

interface Proxy {
  url: string;
  child: ChildProcess;
  out: () => string;
  store: string;
  sessions: string;
  close(): Promise<void>;
}

async function startProxy(provider: ScriptedProvider, root: string, extra: string[] = []): Promise<Proxy> {
  const store = join(root, 'store');
  const sessions = join(root, 'sessions');
  const child = spawn(
    process.execPath,
    [
      CLI,
      'proxy',
      '--port',
      '0',
      '--store',
      store,
      '--sessions',
      sessions,
      '--openai-upstream',
      `${provider.url}/openai/v1`,
      '--anthropic-upstream',
      `${provider.url}/anthropic`,
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`spillway proxy printed no "listening on" line within 15 s:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`spillway proxy exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    child,
    out: () => out,
    store,
    sessions,
    close: () =>
      new Promise<void>((res) => {
        if (child.exitCode !== null) return res();
        child.once('exit', () => res());
        child.kill('SIGTERM');
        setTimeout(() => {
          child.kill('SIGKILL');
          res();
        }, 5_000);
      }),
  };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function runAgent(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  const started = Date.now();
  return new Promise((res) => {
    const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      stderr += `\n[test] killed after ${AGENT_TIMEOUT_MS / 1000} s`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, AGENT_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

function spillwayRead(handle: string, store: string): string {
  return execFileSync(process.execPath, [CLI, 'read', handle, '--store', store], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** The text of every tool result the provider was sent, in order of the last (longest) request. */
function toolResultsSeen(provider: ScriptedProvider, kind: 'anthropic' | 'responses'): string[] {
  const main = provider.received.filter(
    (r) =>
      r.json &&
      (kind === 'anthropic'
        ? r.path === '/v1/messages' && Array.isArray(r.json.tools) && r.json.tools.some((t: any) => t?.name === 'Bash')
        : r.path.endsWith('/responses')),
  );
  const last = main[main.length - 1];
  if (!last) return [];
  if (kind === 'anthropic') {
    return (last.json.messages as any[])
      .flatMap((m) => (m.role === 'user' && Array.isArray(m.content) ? m.content : []))
      .filter((b: any) => b?.type === 'tool_result')
      .map((b: any) => (typeof b.content === 'string' ? b.content : (b.content ?? []).map((c: any) => c.text ?? '').join('')));
  }
  return (last.json.input as any[])
    .filter((i) => i?.type === 'function_call_output' || i?.type === 'custom_tool_call_output')
    .map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));
}

let claudeBin = '';
let codexBin = '';
const root = mkdtempSync(join(tmpdir(), 'sw-agents-'));
const expected = COMMANDS.map(sh);

beforeAll(() => {
  if (!existsSync(CLI)) execFileSync(process.execPath, [join(ROOT, 'esbuild.mjs')], { cwd: ROOT, stdio: 'inherit' });
  claudeBin = ensureAgent(CLAUDE_CODE);
  codexBin = ensureAgent(CODEX);
}, 15 * 60_000);

it('the commands give 25 kB outputs, each different', () => {
  for (const out of expected) expect(out.length).toBeGreaterThan(24_000);
  expect(new Set(expected).size).toBe(STEPS);
});

function checkProjected(results: string[], store: string, agent: string, exact: boolean): void {
  expect(results, `${agent}: the provider saw ${results.length} tool results, not ${STEPS}`).toHaveLength(STEPS);
  results.forEach((text, k) => {
    const handle = HANDLE.exec(text)?.[0];
    expect(
      handle,
      `${agent}: tool result ${k + 1} reached the provider without a Spillway marker (${text.length} chars: ${text.slice(0, 120)}…)`,
    ).toBeDefined();
    expect(text.length, `${agent}: the marker for result ${k + 1} is not short`).toBeLessThan(4_000);
    const back = spillwayRead(handle!, store);
    if (exact) expect(back.trimEnd(), `${agent}: spillway read ${handle} is not the output of step ${k + 1}`).toBe(expected[k]!.trimEnd());
    // Codex puts a short header (chunk id, wall time, exit code) before the output it sends
    else
      expect(
        back.trimEnd().endsWith('\n' + expected[k]!.trimEnd()),
        `${agent}: spillway read ${handle} does not end with the whole output of step ${k + 1}:\n${back.slice(0, 400)}`,
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
    checkProjected(toolResultsSeen(provider, 'anthropic'), proxy.store, 'Claude Code', true);
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

describe('Claude Code reads back through spillway mcp, with only the MCP tool allowed', () => {
  let provider: ScriptedProvider;
  let proxy: Proxy;
  let run: Run;
  const key = `sk-ant-api03-spillway-test-${process.pid}-MCP-SECRET`;
  const READ_TOOL = CLAUDE_MCP_TOOLS[0]!;
  const PAGE = 8_000;

  beforeAll(async () => {
    provider = await startScriptedProvider({
      commands: [COMMANDS[0]!],
      finalAnswer: 'CLAUDE-MCP-DONE: read back.',
      readBack: { tool: READ_TOOL, page: PAGE },
    });
    proxy = await startProxy(provider, join(root, 'claude-mcp'));
    const home = join(root, 'claude-mcp', 'home');
    const work = join(root, 'claude-mcp', 'work');
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
      claudeEnv(home, proxy.url, key),
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
    checkNoKey(key, proxy, 'Claude Code (MCP)');
  });
});

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
      checkProjected(toolResultsSeen(provider, 'responses'), proxy.store, 'Codex', false);
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
