/**
 * The local proxy inside a real VS Code (code-server + Chromium): enabled through the settings, it
 * shows in the status bar, sets the agent variables in new integrated terminals, projects a call
 * made with the official `openai` client from this test process (to a fake upstream started here),
 * records the turn next to the store, and the inspector shows the session and, live, its next turn.
 * Then: a settings change that rebuilds the engine reaches the running proxy, Copy Agent Environment
 * fills the clipboard, a bad upstream and a taken port are warnings (never a crash), and disabling
 * it stops the server and clears the terminals' variables; Copy Agent Environment then offers to
 * enable it; old recordings are pruned with the store's retention. No key is written anywhere.
 *
 * Each test sets up what it uses (the proxy on or off at its port, its own conversation, so its own
 * recorded session) and puts back the settings and files it changed, so any one runs alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, relative, isAbsolute } from 'node:path';
import OpenAI from 'openai';
import { geminiShellLines, mcpShellLines } from '../../src/proxy/env';
import { mcpLaunch } from '../../src/extension/pure/mcpLaunch';
import { freePort, launch, setSpillwaySetting, waitUntil, type Harness, inspectorFrame } from './harness';
import { defaultReply, startFakeUpstream, type FakeUpstream } from '../proxy/fake-upstream';
import { bigLog, chatRequest, OPENAI_KEY } from '../proxy/support';
import { expectSome } from '../support/expect';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';

let vs: Harness;
let fake: FakeUpstream;
let port = 0;
const LOG = bigLog(1500);

beforeAll(async () => {
  fake = await startFakeUpstream();
  port = await freePort();
  vs = await launch({ name: 'proxy' });
  // vscode.env.clipboard in the browser workbench is the page's clipboard: allow it as a person would
  await vs.page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: vs.url.replace(/\/$/, '') });
});

afterAll(async () => {
  if (vs) await vs.screenshot('proxy-last');
  await vs?.close();
  await fake?.close();
});

/** Writes `spillway.<key>` into the workspace settings, or the user settings (in the extension host). */
function setSetting(key: string, value: unknown, where: 'workspace' | 'user' = 'workspace') {
  return setSpillwaySetting(vs, key, value, where);
}

/**
 * Waits until VS Code has read the folder's settings file with `editor.tabSize` = `want` (absent:
 * undefined): written beside a setting VS Code keeps out of the folder's scope, it shows the file was read.
 */
function folderTabSize(want: unknown) {
  return waitUntil(`VS Code to read the folder's settings (editor.tabSize ${String(want)})`, () =>
    vs.run(
      ({ vscode }, w) => vscode.workspace.getConfiguration('editor').inspect('tabSize')?.workspaceValue === (w ?? undefined),
      want ?? null,
    ),
  );
}

/** The variables in Spillway's environment variable collection, as the API reports them. */
function terminalVariables() {
  return vs.run(({ context }) => {
    const c = context.environmentVariableCollection;
    const vars: Record<string, string> = {};
    c.forEach((name, m) => (vars[name] = m.value));
    return { vars, description: typeof c.description === 'string' ? c.description : null };
  });
}

/** The clipboard as the extension sees it; a read that never answers (no permission) is reported, not waited for. */
function readClipboard() {
  return vs.run(async ({ vscode }) =>
    Promise.race([
      Promise.resolve(vscode.env.clipboard.readText()),
      new Promise<string>((r) => setTimeout(() => r('(clipboard read timed out)'), 5_000)),
    ]),
  );
}

function proxyStatusItem(text: string | RegExp) {
  return vs.page.locator('.statusbar-item', { hasText: text }).first();
}

function client(): OpenAI {
  return new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: OPENAI_KEY, maxRetries: 0, timeout: 20_000 });
}

type ToolMessage = { role: string; content: unknown; tool_call_id?: string };
const lastBody = () =>
  JSON.parse(fake.received[fake.received.length - 1]!.body!.toString('utf8')) as { messages: ToolMessage[] } & Record<string, unknown>;

/** Points the proxy at the fake upstream (user settings) and runs it at `port`, terminals configured: where most tests start. */
async function enableProxy(): Promise<void> {
  await setSetting('proxy.openaiUpstream', `${fake.url}/v1`, 'user');
  await setSetting('proxy.anthropicUpstream', fake.url, 'user');
  await setSetting('proxy.port', port);
  await setSetting('proxy.configureTerminals', null);
  await setSetting('proxy.enabled', true);
  await proxyStatusItem(new RegExp(`Spillway proxy :${port}$`)).waitFor({ state: 'visible', timeout: 15_000 });
}

/** Where the proxy records its sessions: `sessions/` next to the window's store. */
async function sessionsDir(): Promise<string> {
  return join(await vs.run(({ host }) => host.storeDir), '..', 'sessions');
}

const recordings = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.jsonl')) : []);

/**
 * Sends one call of a conversation of its own (the proxy fingerprints a session by its opening, so
 * `task`, the first user message, names it) and returns the session it was recorded in.
 */
async function recordedCall(task: string, output = LOG): Promise<{ session: string; dir: string }> {
  const dir = await sessionsDir();
  const before = new Set(recordings(dir));
  await client().chat.completions.create(chatRequest(output, {}, task) as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
  const file = await waitUntil(`the session file of "${task}"`, () => {
    const f = recordings(dir).find((n) => !before.has(n));
    return f && statSync(join(dir, f)).size > 0 ? f : undefined;
  });
  return { session: file.replace(/\.jsonl$/, ''), dir };
}

describe('the local proxy in a real VS Code', () => {
  it('is off by default: no status bar item, no terminal variables', async () => {
    // the default: nothing in the workspace settings
    await setSetting('proxy.enabled', null);
    await vs.page
      .locator('.statusbar-item', { hasText: /Spillway: [\d,]+ tokens saved/ })
      .first()
      .waitFor({ state: 'visible' });
    await waitUntil(
      'no proxy status bar item',
      async () => (await vs.page.locator('.statusbar-item', { hasText: 'Spillway proxy' }).count()) === 0,
    );
    expect(await vs.page.locator('.statusbar-item', { hasText: 'Spillway proxy' }).count()).toBe(0);
    expect((await terminalVariables()).vars).toEqual({});
  });

  it('starts when enabled through the settings and shows in the status bar (checked in the page)', async () => {
    // where keys are sent is a user setting: a folder's settings cannot redirect them
    await setSetting('proxy.openaiUpstream', `${fake.url}/v1`, 'user');
    await setSetting('proxy.anthropicUpstream', fake.url, 'user');
    await setSetting('proxy.port', port);
    await setSetting('proxy.enabled', true);
    const item = proxyStatusItem(`Spillway proxy :${port}`);
    await item.waitFor({ state: 'visible', timeout: 15_000 });
    expect(await item.textContent()).toContain(`Spillway proxy :${port}`);
    const paths = await vs.run(({ host, context }) => ({ store: host.storeDir, storage: context.storageUri!.fsPath }));
    const rel = relative(paths.storage, join(paths.store, '..', 'sessions'));
    expect(rel, 'path relative to the storage folder').not.toMatch(/^\.\./);
    expect(isAbsolute(rel), `${rel} is absolute (another drive)`).toBe(false);
  });

  it('sets the agent variables for new integrated terminals (read through the API, then in a real terminal)', async () => {
    await enableProxy();
    const env = await waitUntil('the terminal variables', async () => {
      const e = await terminalVariables();
      return Object.keys(e.vars).length === 3 ? e : undefined;
    });
    expect(env.vars).toEqual({
      OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      OPENAI_API_BASE: `http://127.0.0.1:${port}/v1`,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    });
    expect(env.description).toContain(`Spillway proxy at http://127.0.0.1:${port}`);

    const out = join(vs.workspace!, 'terminal-env.txt');
    rmSync(out, { force: true });
    await vs.run(({ vscode }, file) => {
      vscode.window.createTerminal({
        name: 'env probe',
        shellPath: '/bin/sh',
        shellArgs: ['-c', `printf '%s\\n' "$OPENAI_BASE_URL" "$ANTHROPIC_BASE_URL" > '${file}.tmp' && mv '${file}.tmp' '${file}'`],
      });
    }, out);
    const seen = await waitUntil(
      'the terminal to write its environment',
      () => (existsSync(out) ? readFileSync(out, 'utf8') : undefined),
      20_000,
    );
    expect(seen.trim().split('\n')).toEqual([`http://127.0.0.1:${port}/v1`, `http://127.0.0.1:${port}`]);
    rmSync(out, { force: true });
  });

  it('projects a call made with the official openai client and records the turn', async () => {
    await enableProxy();
    await setSetting('toolCaps', null);
    const task = 'Run the tests and fix what fails.';
    const dir = await sessionsDir();
    const before = new Set(recordings(dir));
    const request = chatRequest(LOG, {}, task) as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
    const answer = await client().chat.completions.create(request);
    expect(answer.choices[0]!.message.content).toBe('All tests pass.');

    // the upstream got the reduced body: the big tool result is a marker, the rest as sent
    const sent = lastBody();
    const original = chatRequest(LOG, {}, task) as { messages: ToolMessage[] } & Record<string, unknown>;
    const tool = sent.messages.find((m) => m.tool_call_id === 'call_tests')!;
    expect(String(tool.content)).toMatch(HANDLE_IN_TEXT);
    expect(String(tool.content).length).toBeLessThan(LOG.length / 5);
    expect(sent.messages.filter((m) => m !== tool)).toEqual(original.messages.filter((m) => m.tool_call_id !== 'call_tests'));
    expect({ ...sent, messages: null }).toEqual({ ...original, messages: null });
    expect(fake.received[fake.received.length - 1]!.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);

    // the recording: a new session file, its turn with the reduction and the provider's usage
    const file = await waitUntil('the session file', () => {
      const f = recordings(dir).find((n) => !before.has(n));
      return f && statSync(join(dir, f)).size > 0 ? f : undefined;
    });
    const session = file.replace(/\.jsonl$/, '');
    const turns = readFileSync(join(dir, file), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      session,
      turn: 1,
      path: '/v1/chat/completions',
      format: 'openai-chat',
      model: 'gpt-4.1',
      status: 200,
      usage: { cachedTokens: 1024 },
    });
    expect((turns[0]!.reductions as { callId: string }[]).map((r) => r.callId)).toEqual(['call_tests']);

    // the reduced output is in the window's store, readable through the extension API
    const handle = HANDLE_IN_TEXT.exec(String(tool.content))![0];
    const back = await vs.run(({ api }, h) => api.read(h).text, handle);
    expect(back).toBe(LOG);
  });

  it('shows the session in the inspector, and its next turn live', async () => {
    await enableProxy();
    const task = 'Find out why the parser test fails.';
    const { session } = await recordedCall(task);
    await vs.runCommand('Spillway: Open Inspector');
    const frame = await inspectorFrame(vs.page);
    const button = frame.locator(`button.session[data-session="proxy:${session}"]`);
    await button.waitFor({ timeout: 15_000 });
    expect(await button.textContent()).toMatch(/proxy.*1 turns/);
    // named by the agent (the official client's User-Agent) and the start time, not by the proxy's fingerprint
    const title = (await button.locator('.session-title').textContent()) ?? '';
    expect(title).toMatch(/^OpenAI SDK · \w{3} \d{1,2}, \d\d:\d\d$/);
    expect(title).not.toContain(session);
    await button.click();
    await frame.locator('.timeline .vrow').first().waitFor();
    expect(await frame.locator('.timeline .vrow').count()).toBe(1);

    // the same conversation, one call later: the open session grows without a reload
    const next = chatRequest(LOG, {}, task) as { messages: unknown[] };
    next.messages.push({ role: 'assistant', content: 'The parser test fails; looking at it.' }, { role: 'user', content: 'Go on.' });
    await client().chat.completions.create(next as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
    await waitUntil('the second turn in the inspector', async () => (await frame.locator('.timeline .vrow').count()) === 2, 15_000, 200);
    await frame.locator('.totals', { hasText: '2 turns' }).waitFor();
    await frame.locator(`button.session[data-session="proxy:${session}"]`, { hasText: '2 turns' }).waitFor();
  });

  it("shows a call the upstream refused as an error with the upstream's message (checked in the page)", async () => {
    await enableProxy();
    const task = 'A call the provider is too busy for.';
    const refused = fake.respond;
    fake.respond = () => ({ kind: 'json', status: 529, body: { error: { type: 'overloaded_error', message: 'Overloaded' } } });
    let session: string;
    try {
      await client()
        .chat.completions.create(chatRequest(LOG, {}, task) as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming)
        .catch(() => undefined);
      const dir = await sessionsDir();
      session = await waitUntil('the refused call recorded', () =>
        recordings(dir)
          .map((n) => n.replace(/\.jsonl$/, ''))
          .find((s) => readFileSync(join(dir, `${s}.jsonl`), 'utf8').includes('"status":529')),
      );
    } finally {
      fake.respond = refused;
    }
    await vs.runCommand('Spillway: Open Inspector');
    const frame = await inspectorFrame(vs.page);
    await frame.locator(`button.session[data-session="proxy:${session}"]`).click();
    await frame.locator('.timeline .vrow .mark-error').first().waitFor({ timeout: 15_000 });
    await frame.locator('.timeline .vrow').first().click();
    expect(await frame.locator('[data-testid="turn-error"]').textContent()).toContain('HTTP 529: overloaded_error: Overloaded');
  });

  it('projects later calls with the engine rebuilt from changed settings, without a restart', async () => {
    await enableProxy();
    try {
      await setSetting('toolCaps', { bash: 'unlimited' });
      await waitUntil('the cap to be in force', async () => (await vs.run(({ host }) => host.config.toolCaps.bash)) === 'unlimited');
      const before = fake.received.length;
      await client().chat.completions.create(
        chatRequest(LOG, {}, 'Another task.') as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
      );
      expect(fake.received.length).toBe(before + 1);
      expect(lastBody().messages.find((m) => m.tool_call_id === 'call_tests')!.content).toBe(LOG);
    } finally {
      await setSetting('toolCaps', undefined);
    }
    // still the same port, still running
    await proxyStatusItem(`Spillway proxy :${port}`).waitFor({ state: 'visible' });
  });
  it("answers the model's read-backs from the window's store once spillway.proxy.answerReads is set, without a restart", async () => {
    await enableProxy();
    const ask = () =>
      client().chat.completions.create(
        chatRequest(LOG, {}, 'Read it back.') as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
      );
    const toolNames = (i: number) =>
      ((JSON.parse(fake.received[i]!.body!.toString('utf8')) as { tools: { function: { name: string } }[] }).tools ?? []).map(
        (t) => t.function.name,
      );
    try {
      await setSetting('proxy.answerReads', true);
      await waitUntil('the proxy to offer the read tool', async () => {
        await ask();
        return toolNames(fake.received.length - 1).includes('spillway_read_output') || undefined;
      });
      const before = fake.received.length;
      let handle = '';
      fake.respond = (r) => {
        if (fake.received.length - before > 1) return defaultReply(r);
        handle = HANDLE_IN_TEXT.exec(r.body!.toString('utf8'))![0];
        const call = {
          id: 'call_read',
          type: 'function',
          function: { name: 'spillway_read_output', arguments: JSON.stringify({ handle, lines: '1:3' }) },
        };
        const message = { role: 'assistant', content: null, tool_calls: [call] };
        return {
          kind: 'json',
          body: {
            id: 'c',
            object: 'chat.completion',
            created: 1,
            model: 'gpt-4.1',
            choices: [{ index: 0, message, finish_reason: 'tool_calls' }],
          },
        };
      };
      const answer = await ask();
      expect(answer.choices[0]!.message.content).toBe('All tests pass.');
      expect(fake.received.length).toBe(before + 2);
      const sent = lastBody().messages.at(-1)!;
      expect(sent).toMatchObject({ role: 'tool', tool_call_id: 'call_read' });
      expect(String(sent.content)).toContain(LOG.split('\n').slice(0, 3).join('\n') + '\n');
    } finally {
      fake.respond = defaultReply;
      await setSetting('proxy.answerReads', null);
    }
  });

  it('Copy Agent Environment puts the lines for the shell on the clipboard and says so', async () => {
    await enableProxy();
    const r = await vs.run(async ({ vscode }) => {
      const result = (await vscode.commands.executeCommand('spillway.copyAgentEnvironment')) as {
        url: string;
        shell: string;
        lines: string[];
      };
      return { result, shell: vscode.env.shell };
    });
    expect(r.result.url).toBe(`http://127.0.0.1:${port}`);
    expect(r.result.shell).toBe(/fish/.test(r.shell) ? 'fish' : /pwsh|powershell/.test(r.shell) ? 'powershell' : 'posix');
    const clipboard = await readClipboard();
    expect(clipboard).toBe(r.result.lines.join('\n') + '\n');
    if (r.result.shell === 'posix') {
      // and, since issue 20, the one-time `claude mcp add` for the extension's bundled server on this window's store
      const where = (await vs.run(({ context, host }) => ({
        exec: process.execPath,
        ext: context.extensionPath,
        store: host.storeDir,
      }))) as {
        exec: string;
        ext: string;
        store: string;
      };
      expect(clipboard).toBe(
        [
          `export OPENAI_BASE_URL=http://127.0.0.1:${port}/v1`,
          `export OPENAI_API_BASE=http://127.0.0.1:${port}/v1`,
          `export ANTHROPIC_BASE_URL=http://127.0.0.1:${port}`,
          '# Codex reads openai_base_url, not OPENAI_BASE_URL (or run Spillway: Route Codex Through Spillway)',
          `alias codex='command codex -c openai_base_url="http://127.0.0.1:${port}/v1"'`,
          ...geminiShellLines(`http://127.0.0.1:${port}`, 'posix'),
          ...mcpShellLines(mcpLaunch(where.exec, where.ext, where.store), 'posix'),
        ].join('\n') + '\n',
      );
      expect(clipboard).toContain("\n# Claude Code reads back through Spillway's MCP server after, once: claude mcp add spillway ");
    }
    const notices = await vs.run(({ host }) => host.notices.map((n) => n.message));
    expectSome(notices, (m) => m.includes('copied the agent environment'));

    // from the command palette, as a person would, for another shell through the API
    await vs.run(async ({ vscode }) => {
      await vscode.env.clipboard.writeText('nothing yet');
    });
    await vs.runCommand('Spillway: Copy Agent Environment');
    const clip = await waitUntil('the clipboard', async () => {
      const t = await readClipboard();
      return t.includes('OPENAI_BASE_URL') ? t : undefined;
    });
    expect(clip).toContain(`http://127.0.0.1:${port}/v1`);

    // a click on the status bar item does the same
    await vs.run(async ({ vscode }) => {
      await vscode.env.clipboard.writeText('nothing yet');
    });
    await proxyStatusItem(`Spillway proxy :${port}`).click();
    const clicked = await waitUntil('the clipboard after the click', async () => {
      const t = await readClipboard();
      return t.includes('ANTHROPIC_BASE_URL') ? t : undefined;
    });
    expect(clicked).toContain(`http://127.0.0.1:${port}`);
    await vs.run(async ({ vscode }) => {
      await vscode.commands.executeCommand('spillway.copyAgentEnvironment', { shell: 'fish' });
    });
    const fish = await readClipboard();
    expect(fish).toContain(`set -gx ANTHROPIC_BASE_URL http://127.0.0.1:${port}`);
  });

  it('warns about a bad upstream setting, naming it, and uses the default', async () => {
    await enableProxy();
    try {
      await setSetting('proxy.openaiUpstream', 'ftp://example.invalid', 'user');
      const warning = await waitUntil('the warning', async () =>
        (await vs.run(({ host }) => host.notices.map((n) => n.message))).find((m) => m.includes('spillway.proxy.openaiUpstream')),
      );
      expect(warning).toMatch(/spillway\.proxy\.openaiUpstream is invalid .*falls back to its default/);
    } finally {
      await setSetting('proxy.openaiUpstream', `${fake.url}/v1`, 'user');
    }
    await proxyStatusItem(`Spillway proxy :${port}`).waitFor({ state: 'visible' });
  });

  it("ignores an upstream set in the folder's .vscode/settings.json: keys keep going where the user said", async () => {
    await enableProxy();
    const file = join(vs.workspace!, '.vscode/settings.json');
    const text = readFileSync(file, 'utf8');
    const settings = JSON.parse(text) as Record<string, unknown>;
    try {
      writeFileSync(
        file,
        JSON.stringify({ ...settings, 'spillway.proxy.openaiUpstream': 'http://127.0.0.1:9/attacker/v1', 'editor.tabSize': 3 }, null, 2),
      );
      await folderTabSize(3); // VS Code has read the changed file
      const before = fake.received.length;
      await client().chat.completions.create(
        chatRequest('short output', {}, 'Third task.') as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming,
      );
      expect(fake.received.length).toBe(before + 1);
      expect(fake.received[before]!.url).toBe('/v1/chat/completions');
    } finally {
      writeFileSync(file, text);
      await folderTabSize(settings['editor.tabSize']);
    }
  });

  it('reports a taken port with the port and a suggestion, and keeps working', async () => {
    await enableProxy();
    const taken = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(taken, '127.0.0.1', () => r()));
    try {
      await setSetting('proxy.port', taken);
      const warning = await waitUntil('the port warning', async () =>
        (await vs.run(({ host }) => host.notices.map((n) => n.message))).find((m) => m.includes(`port ${taken}`)),
      );
      expect(warning).toMatch(
        new RegExp(`port ${taken} on 127\\.0\\.0\\.1 is already in use.*Set spillway\\.proxy\\.port to a free port, or to 0`),
      );
      await proxyStatusItem(`Spillway proxy :${taken} not running`).waitFor({ state: 'visible' });
      expect((await terminalVariables()).vars).toEqual({});
      const toasts = await waitUntil(
        'the warning toast',
        async () => (await vs.notifications()).find((t) => t.includes(`port ${taken}`)),
        10_000,
      );
      expect(toasts).toContain('already in use');
      // the extension is still alive
      expect(await vs.run(({ api }) => typeof api.project)).toBe('function');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
    // the port is free again: Copy Agent Environment tries once more, and starts it
    const retried = (await vs.run(async ({ vscode }) =>
      vscode.commands.executeCommand('spillway.copyAgentEnvironment', { shell: 'posix' }),
    )) as { url: string } | null;
    expect(retried?.url).toBe(`http://127.0.0.1:${taken}`);
    await proxyStatusItem(new RegExp(`Spillway proxy :${taken}$`)).waitFor({ state: 'visible' });
    await setSetting('proxy.port', port);
    await proxyStatusItem(`Spillway proxy :${port}`).waitFor({ state: 'visible' });
    await waitUntil('the terminal variables again', async () => Object.keys((await terminalVariables()).vars).length === 3);
  });

  it('clears the terminal variables when configureTerminals is off, and stops when disabled', async () => {
    await enableProxy();
    await setSetting('proxy.configureTerminals', false);
    await waitUntil('the variables to be cleared', async () => Object.keys((await terminalVariables()).vars).length === 0);
    await setSetting('proxy.configureTerminals', true);
    await waitUntil('the variables again', async () => Object.keys((await terminalVariables()).vars).length === 3);

    await setSetting('proxy.enabled', false);
    await waitUntil(
      'the status bar item to go',
      async () => (await vs.page.locator('.statusbar-item', { hasText: 'Spillway proxy' }).count()) === 0,
    );
    expect((await terminalVariables()).vars).toEqual({});
    await expect(fetch(`http://127.0.0.1:${port}/v1/models`)).rejects.toThrow();
  });

  it("Copy Agent Environment offers to enable the proxy when it is off (the notification's button, in the page)", async () => {
    // the proxy set up to run at `port` once enabled, and off
    await setSetting('proxy.openaiUpstream', `${fake.url}/v1`, 'user');
    await setSetting('proxy.anthropicUpstream', fake.url, 'user');
    await setSetting('proxy.port', port);
    await setSetting('proxy.enabled', false);
    await waitUntil(
      'the proxy to be off',
      async () => (await vs.page.locator('.statusbar-item', { hasText: 'Spillway proxy' }).count()) === 0,
    );
    await vs.run(async ({ vscode }) => {
      await vscode.env.clipboard.writeText('nothing yet');
    });
    await vs.runCommand('Spillway: Copy Agent Environment');
    const toast = vs.page.locator('.notification-toast', { hasText: 'The Spillway proxy is off' }).first();
    await toast.waitFor({ state: 'visible', timeout: 10_000 });
    await toast.locator('.monaco-button', { hasText: 'Enable Proxy' }).click();
    await proxyStatusItem(`Spillway proxy :${port}`).waitFor({ state: 'visible', timeout: 15_000 });
    const clip = await waitUntil('the clipboard', async () => {
      const t = await readClipboard();
      return t.includes('OPENAI_BASE_URL') ? t : undefined;
    });
    expect(clip).toContain(`http://127.0.0.1:${port}/v1`);
    const enabled = JSON.parse(readFileSync(join(vs.workspace!, '.vscode/settings.json'), 'utf8'))['spillway.proxy.enabled'];
    expect(enabled).toBe(true);
  });

  it("prunes the recordings with the store's retention settings", async () => {
    await enableProxy();
    const { session, dir } = await recordedCall('Keep this recording while old ones go.');
    const old = join(dir, 's_old_session.jsonl');
    writeFileSync(old, '{"v":1}\n');
    const monthAgo = new Date(Date.now() - 30 * 24 * 3600 * 1000);
    utimesSync(old, monthAgo, monthAgo);
    try {
      await setSetting('storage.retentionDays', 7);
      await waitUntil('the old recording to be pruned', () => !existsSync(old), 15_000, 200);
      expect(existsSync(join(dir, `${session}.jsonl`))).toBe(true);
    } finally {
      await setSetting('storage.retentionDays', undefined);
    }
  });

  it('never writes the key: not in the recordings, not in the log', async () => {
    // a call with the key recorded in this window, by a proxy started in this window
    await enableProxy();
    const { dir: sessionsDir } = await recordedCall('Keep the key out of every file.');
    const files: string[] = [];
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else files.push(p);
      }
    };
    walk(sessionsDir);
    walk(join(vs.userData, 'logs'));
    const logs = files.filter((f) => /Spillway\.log$/.test(f));
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.map((f) => readFileSync(f, 'utf8')).join('\n')).toMatch(/proxy: listening on http:\/\/127\.0\.0\.1:/);
    for (const f of files) expect(readFileSync(f, 'utf8'), f).not.toContain('OPENAIKEY');
  });
});
