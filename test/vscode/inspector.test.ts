/**
 * The inspector in a real VS Code (code-server + Chromium): the panel on a demo session made through
 * the extension API, its turns, a result expanded, "Open stored output" opening the editor tab with
 * the stored text, a cap changed and saved into spillway.toolCaps; then Open Transcript on a real
 * fixture (its turns, and the marks where the agent named something the projection had hidden) and
 * Browse Agent Sessions on a fake home folder. The webview is driven in its iframe, like a person.
 *
 * Each test sets up what it uses (the API session, the settings, the panel on the session it needs)
 * and puts back the settings and editors it changed, so any one runs alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Frame } from 'playwright-core';
import { HARNESS_DIR, ROOT, launch, waitUntil, type Harness, inspectorFrame } from './harness';
import { makeDemoWorkspace, type DemoWorkspace } from './demo';
import { sessionName } from '../../src/replay/session-title';
import { anthropicRequest, testLog } from './requests';
import { copilotSubAgentLog } from '../support/copilot-log';
import { HANDLE_IN_TEXT, HANDLE_PATTERN } from '../../src/engine/handle';

const FIXTURE = join(ROOT, 'test/fixtures/sessions/openai-chat/mini-swe-agent__deepseek_bench1__django__django-14752.traj.json');
let vs: Harness;
let demo: DemoWorkspace;

beforeAll(async () => {
  demo = await makeDemoWorkspace(join(HARNESS_DIR, 'runs', `inspector-workspace-${process.pid}`), ROOT);
  vs = await launch({ name: 'inspector', workspace: demo.dir });
});

afterAll(async () => {
  if (vs) await vs.screenshot('inspector-last');
  await vs?.close();
});

/** The session the panel tests look at: three projections through the extension API, made once per window. */
const API_SESSION = 'demo-session';

/** Makes the API session unless this window already has it (it is kept on disk, so it survives a reload). */
async function apiSession(): Promise<void> {
  await vs.run(
    async ({ api, inspector }, name, reqs) => {
      if (inspector.api.list().some((s) => s.id === `api:${name}`)) return;
      for (const r of reqs) await api.project(r, 'auto', { session: name });
    },
    API_SESSION,
    [
      anthropicRequest('bash', 'toolu_demo_1', testLog(300)),
      anthropicRequest('bash', 'toolu_demo_2', testLog(500, 'FAIL')),
      anthropicRequest('grep', 'toolu_demo_3', testLog(200, 'MATCH')),
    ],
  );
}

/** Opens the inspector (from the palette) on the API session and returns its frame. */
async function showApiSession(): Promise<Frame> {
  await apiSession();
  await vs.runCommand('Spillway: Open Inspector');
  const frame = await inspectorFrame(vs.page);
  await frame.locator('button.session', { hasText: API_SESSION }).click();
  await frame.locator('.session-head h1', { hasText: API_SESSION }).waitFor();
  await frame.locator('.timeline .vrow').first().waitFor();
  return frame;
}

/** Selects turn 2 of the shown session and expands its result toolu_demo_2 (unless it still is). */
async function expandDemoResult(frame: Frame): Promise<void> {
  await frame.locator('.vrow').nth(1).click();
  await frame.locator('.details h2', { hasText: 'Turn 2' }).waitFor();
  // the row is named by the command its call ran; the call id is in the name's tooltip
  const row = frame.locator('li.result[data-call="toolu_demo_2"]');
  expect(await row.locator('.result-call').textContent()).toBe('$ npm test');
  expect(await row.locator('.result-call').getAttribute('title')).toContain('call toolu_demo_2');
  const head = row.locator('.result-head');
  if ((await head.getAttribute('aria-expanded')) !== 'true') await head.click();
  await frame.locator('.pager-original .pager-text').waitFor();
}

/** Closes every editor tab but the inspector's: what a test opened beside it. */
async function closeOtherTabs(): Promise<void> {
  await vs.run(async ({ vscode }) => {
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label !== 'Spillway Inspector');
    await vscode.window.tabGroups.close(tabs);
  });
}

/** Writes workspace settings `spillway.<key>` (null removes one); returns what each was before. */
function setWorkspaceSettings(values: Record<string, unknown>): Promise<Record<string, unknown>> {
  return vs.run(async ({ vscode }, v) => {
    const was: Record<string, unknown> = {};
    for (const [k, value] of Object.entries(v)) {
      const c = vscode.workspace.getConfiguration('spillway');
      was[k] = c.inspect(k)?.workspaceValue ?? null;
      await c.update(k, value === null ? undefined : value, vscode.ConfigurationTarget.Workspace);
    }
    return was;
  }, values);
}

/**
 * Runs `body` with the workspace settings `values` in force (the engine rebuilt from them), then
 * puts back what the workspace had, whatever `body` did to those keys.
 */
async function withSettings<T>(values: Record<string, unknown>, body: () => Promise<T>): Promise<T> {
  const before = await setWorkspaceSettings(values);
  try {
    if ('defaultCap' in values) {
      const want = values['defaultCap'] ?? 8_000;
      await waitUntil('the engine to use the new settings', async () => (await vs.run(({ host }) => host.config.defaultCap)) === want);
    }
    return await body();
  } finally {
    await setWorkspaceSettings(before);
  }
}

/**
 * The settings under which the mini-swe-agent fixture's bigger outputs are reduced and some missed (its outputs are under the default caps;
 * the files it cats are reads, which the default keeps whole while in use: these offload them on arrival).
 */
const TIGHT = { toolCaps: null, previewChars: 400, defaultCap: 1200, 'offload.keepReads': 0 };

/** A fake home folder with two Codex sessions (one of this folder) and a Claude Code session of this folder. */
/** A Copilot CLI session of the demo folder, in the shape 1.0.102 writes (two calls: a shell command, then the answer). */
function copilotSession(home: string): string {
  const dir = join(home, '.copilot/session-state/5a7ca710-4ba7-48ed-bb08-6da1dcb79f7b');
  mkdirSync(dir, { recursive: true });
  const ev = (type: string, data: Record<string, unknown>, s: number) =>
    JSON.stringify({ type, data, id: `e${s}-${type}`, timestamp: `2025-06-01T10:00:${String(s).padStart(2, '0')}.000Z`, parentId: null });
  const output = Array.from({ length: 400 }, (_, i) => `src/cart/line-${i}.ts:${i}: total += price * qty`).join('\n');
  const file = join(dir, 'events.jsonl');
  writeFileSync(
    file,
    [
      ev('session.start', { producer: 'copilot-agent', selectedModel: 'gpt-5', context: { cwd: demo.dir } }, 0),
      ev('user.message', { content: 'Fix the cart total', transformedContent: 'Fix the cart total' }, 1),
      ev('system.message', { content: 'You are a terminal assistant.' }, 1),
      ev('session.usage_record', { usage: { apiEndpoint: '/chat/completions', providerType: 'openai', model: 'gpt-5' } }, 2),
      ev(
        'assistant.message',
        { content: '', toolRequests: [{ toolCallId: 'c1', name: 'bash', arguments: { command: 'grep -rn total src/cart' } }] },
        2,
      ),
      ev('tool.execution_complete', { toolCallId: 'c1', success: true, result: { content: output } }, 3),
      ev('session.usage_record', { usage: { apiEndpoint: '/chat/completions', providerType: 'openai', model: 'gpt-5' } }, 4),
      ev('assistant.message', { content: 'The total is summed per line.', toolRequests: [] }, 4),
    ].join('\n') + '\n',
  );
  utimesSync(file, new Date('2025-06-01'), new Date('2025-06-01'));
  return file;
}

/** A Copilot CLI session of the demo folder that hands a command to a sub-agent (its task tool), which writes into the same log. */
function copilotSubAgentSession(home: string): string {
  const dir = join(home, '.copilot/session-state/7b8c9d10-0000-4000-8000-000000000001');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'events.jsonl');
  writeFileSync(file, copilotSubAgentLog(demo.dir, '2025-06-01T11:00'));
  utimesSync(file, new Date('2025-06-03'), new Date('2025-06-03'));
  return file;
}

/** A Cline session of the demo folder, in the shape 3.0.65 writes (two calls: a shell command, then the answer), with its manifest. */
function clineSession(home: string): string {
  const id = '1748772000000_cart1';
  const dir = join(home, '.cline/data/sessions', id);
  mkdirSync(dir, { recursive: true });
  const output = Array.from({ length: 400 }, (_, i) => `src/cart/line-${i}.ts:${i}: total += price * qty`).join('\n');
  const at = Date.parse('2025-06-01T10:00:00.000Z');
  const model = { id: 'gpt-5', provider: 'openai-compatible' };
  writeFileSync(
    join(dir, `${id}.json`),
    JSON.stringify({ version: 1, session_id: id, cwd: demo.dir, started_at: '2025-06-01T10:00:00.000Z', prompt: 'Total the cart' }),
  );
  const file = join(dir, `${id}.messages.json`);
  writeFileSync(
    file,
    JSON.stringify({
      version: 1,
      agent: 'lead',
      sessionId: id,
      origin: { source: 'cli', version: '3.0.65' },
      messages: [
        { role: 'user', content: [{ type: 'text', text: '<user_input mode="act">Total the cart</user_input>' }], ts: at },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'c1', name: 'run_commands', input: { commands: ['grep -rn total src/cart'] } }],
          ts: at + 1000,
          modelInfo: model,
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'c1', content: [{ query: 'grep -rn total src/cart', result: output, success: true }] },
          ],
          ts: at + 2000,
        },
        { role: 'assistant', content: [{ type: 'text', text: 'The total is summed per line.' }], ts: at + 3000, modelInfo: model },
      ],
      system_prompt: 'You are Cline.',
    }),
  );
  utimesSync(file, new Date('2025-06-02'), new Date('2025-06-02'));
  return file;
}

/**
 * A stand-in for OpenCode's binary where its installer puts it (`~/.opencode/bin/opencode`), or for
 * Kilo's (`~/.kilo/bin/kilo`, OpenCode's fork, whose server Kilo Code 7 runs): its sessions are in a
 * database Spillway asks it about, so `session list --format json` prints one session of the demo
 * folder and `export <id>` prints it (two calls: a command, then the answer), as 1.18.33 (Kilo 7.7.7)
 * does. The agents suite runs the real binaries.
 */
function openCodeStandIn(home: string, cli: 'opencode' | 'kilo' = 'opencode'): void {
  const bin = join(home, `.${cli}/bin`);
  mkdirSync(bin, { recursive: true });
  const created = Date.parse('2025-06-01T12:00:00.000Z');
  const output = Array.from({ length: 400 }, (_, i) => `src/cart/line-${i}.ts:${i}: total += price * qty`).join('\n');
  const at = (ms: number) => ({ created: created + ms });
  const who = { providerID: 'anthropic', modelID: 'claude-sonnet-4-5', path: { cwd: demo.dir, root: demo.dir } };
  const id = cli === 'kilo' ? 'ses_kilo1' : 'ses_cart2';
  const title = cli === 'kilo' ? 'Total the basket' : 'Price the cart';
  const doc = {
    info: {
      id,
      slug: 'calm-lake',
      projectID: 'p',
      directory: demo.dir,
      title,
      version: cli === 'kilo' ? '7.7.7' : '1.18.33',
      time: at(0),
    },
    messages: [
      { info: { role: 'user', id: 'm1', time: at(0) }, parts: [{ type: 'text', text: title }] },
      {
        info: { role: 'assistant', id: 'm2', time: at(1000), ...who },
        parts: [
          { type: 'step-start' },
          {
            type: 'tool',
            tool: 'bash',
            callID: 'c1',
            state: { status: 'completed', input: { command: 'grep -rn total src/cart' }, output },
          },
        ],
      },
      { info: { role: 'assistant', id: 'm3', time: at(2000), ...who }, parts: [{ type: 'text', text: 'Priced per line.' }] },
    ],
  };
  writeFileSync(join(home, `${cli}-export.json`), JSON.stringify(doc, null, 2));
  const list = JSON.stringify([{ id, title, updated: created + 2000, created, directory: demo.dir }]);
  writeFileSync(join(home, `${cli}-list.json`), list);
  const script = [
    '#!/bin/sh',
    `if [ "$1" = session ]; then exec /bin/cat '${join(home, `${cli}-list.json`)}'; fi`,
    `if [ "$1" = export ] && [ "$2" = ${id} ]; then echo "Exporting session: $2" >&2; exec /bin/cat '${join(home, `${cli}-export.json`)}'; fi`,
    'echo "Session not found" >&2; exit 1',
  ].join('\n');
  writeFileSync(join(bin, cli), `${script}\n`);
  chmodSync(join(bin, cli), 0o755);
}

function fakeHome(): { home: string; claude: string; codex: string } {
  const home = join(vs.dir, 'home');
  const claudeDir = join(home, '.claude/projects', demo.dir.replace(/[^A-Za-z0-9]/g, '-'));
  mkdirSync(claudeDir, { recursive: true });
  const claude = join(claudeDir, 'abc.jsonl');
  cpSync(join(ROOT, 'test/fixtures/sessions/anthropic/claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl'), claude);
  const codexDir = join(home, '.codex/sessions/2025/10/21');
  mkdirSync(codexDir, { recursive: true });
  const codexText = readFileSync(join(ROOT, 'test/fixtures/sessions/responses/ai-sessions__codex-pomodor-timer.jsonl'), 'utf8').replace(
    '"cwd":"/Users/yoavfarhi/dev/pomodoro/codex"',
    JSON.stringify({ cwd: demo.dir }).slice(1, -1),
  );
  const codex = join(codexDir, 'rollout-2025-10-21T20-02-50-x.jsonl');
  writeFileSync(codex, codexText);
  writeFileSync(
    join(codexDir, 'rollout-2025-10-21T21-00-00-other.jsonl'),
    readFileSync(join(ROOT, 'test/fixtures/sessions/responses/ai-sessions__codex-pomodor-timer.jsonl')),
  );
  utimesSync(claude, new Date('2025-01-01'), new Date('2025-01-01'));
  return { home, claude, codex };
}

/** Spillway: Browse Agent Sessions over a fake home: what it lists (`pick: ''`) or what it opens (a file's name or key). */
function browse(home: string, pick: string): Promise<unknown> {
  return vs.run(
    async ({ vscode }, h, p) => vscode.commands.executeCommand('spillway.browseAgentSessions', { home: h, pick: p }),
    home,
    pick,
  );
}

/** Reloads the window (the extension host restarts) and returns the inspector's frame, restored by its serializer. */
async function reloadWindow(): Promise<Frame> {
  await vs.page.reload();
  await vs.page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
  return inspectorFrame(vs.page);
}

describe('the inspector in a real VS Code', () => {
  it('declares its commands, the explorer menu on transcripts and the panel restore', async () => {
    const pkg = await vs.run(({ vscode }) => {
      const p = vscode.extensions.getExtension('spillway.spillway')!.packageJSON as {
        contributes: { menus: Record<string, { command: string; when: string }[]> };
        activationEvents: string[];
      };
      return { menu: p.contributes.menus['explorer/context'], events: p.activationEvents };
    });
    expect(pkg.menu?.[0]).toMatchObject({ command: 'spillway.openTranscript' });
    expect(pkg.menu?.[0]?.when).toContain('jsonl|json|traj');
    expect(pkg.events).toContain('onWebviewPanel:spillway.inspector');
    const commands = await vs.run(async ({ vscode }) => (await vscode.commands.getCommands(true)).filter((c) => c.startsWith('spillway.')));
    expect(commands).toEqual(expect.arrayContaining(['spillway.openInspector', 'spillway.openTranscript', 'spillway.browseAgentSessions']));
  });

  it('opens on a demo session made through the API and shows its turns', async () => {
    const frame = await showApiSession();
    // the header names the session as soon as it is picked; its turns follow the replay's answer
    await expect.poll(() => frame.locator('.timeline .vrow').count()).toBe(3);
    await expect.poll(() => frame.locator('.totals').textContent()).toMatch(/3 turns/);
    expect(await frame.locator('[data-testid="chart-projected"]').count()).toBe(1);
  });

  it('expands a result and opens its stored output in an editor tab', async () => {
    const frame = await showApiSession();
    try {
      await expandDemoResult(frame);
      await expect.poll(() => frame.locator('.pager-original .pager-text').textContent()).toMatch(/^line 1: FAIL src\/module0\.test\.ts/);
      await expect.poll(() => frame.locator('.pager-projected .pager-text').textContent()).toMatch(HANDLE_IN_TEXT);
      await frame.getByRole('button', { name: 'Open stored output' }).click();
      // titled by the command that printed it, the call id in the path (the tab's tooltip)
      const title = await vs.waitForTab('$ npm test');
      expect(title).toContain('npm test');
      const path = await vs.run(({ vscode }) => vscode.window.activeTextEditor?.document.uri.path ?? '');
      expect(path).toContain('/toolu_demo_2/');
      expect(await vs.activeEditorText()).toContain('line 1: FAIL src/module0.test.ts');
      // beside the inspector, not over it: the inspector is still the active tab of its own group
      const groups = await vs.run(({ vscode }) => vscode.window.tabGroups.all.map((g) => g.activeTab?.label ?? ''));
      expect(groups.length).toBeGreaterThanOrEqual(2);
      expect(groups).toContain('Spillway Inspector');
    } finally {
      await closeOtherTabs();
    }
  });

  it('compares a result in the diff editor and copies its handle', async () => {
    const frame = await showApiSession();
    try {
      await expandDemoResult(frame);
      const handle = (await frame.locator('.result.expanded code.handle').textContent())!;
      await frame.getByRole('button', { name: 'Copy handle' }).click();
      await vs.page
        .locator('.statusbar-item', { hasText: `Spillway: copied ${handle}` })
        .first()
        .waitFor({ state: 'visible', timeout: 10_000 });
      await frame.getByRole('button', { name: 'Compare original and projected' }).click();
      // named by the command, and by the marker of the turn the result was chosen in
      const title = await vs.waitForTab('original ↔ projected');
      expect(title).toContain('$ npm test: original ↔ projected (offload, turn 2)');
    } finally {
      await closeOtherTabs();
    }
  });

  it('changes a cap, shows the dry run, saves it and finds the setting written', async () => {
    await withSettings({ toolCaps: null }, async () => {
      const frame = await showApiSession();
      const toggle = frame.getByRole('button', { name: /Caps per tool/ });
      if ((await toggle.getAttribute('aria-expanded')) !== 'true') await toggle.click();
      const field = frame.getByLabel('New cap for grep');
      await field.click();
      await vs.page.keyboard.type('unlimited');
      await frame.locator('[data-testid="dry-totals"]').waitFor();
      await expect.poll(() => frame.locator('[data-testid="dry-delta"]').textContent()).toMatch(/^dry run: [+−±][^ ]* tokens/);
      await frame.getByRole('button', { name: 'Save caps to settings' }).click();
      // saving asks where, and confirms in a notification
      await vs.pickQuickItem('Workspace settings', 'Workspace');
      await waitUntil('the confirmation', async () =>
        (await vs.run(({ host }) => host.notices.map((n) => n.message))).find((m) => m.includes('saved grep: unlimited')),
      );
      const settings = await waitUntil('spillway.toolCaps in .vscode/settings.json', () => {
        const s = JSON.parse(readFileSync(join(demo.dir, '.vscode/settings.json'), 'utf8')) as Record<string, unknown>;
        return s['spillway.toolCaps'] ? s : undefined;
      });
      expect(settings['spillway.toolCaps']).toEqual({ grep: 'unlimited' });
      const inForce = await waitUntil('the new cap to be in force', async () => {
        const caps = await vs.run(({ host }) => host.config.toolCaps);
        return caps.grep ? caps : undefined;
      });
      expect(inForce).toMatchObject({ grep: 'unlimited' });
      await frame.locator('tr[data-tool="grep"] .cap-current', { hasText: 'unlimited' }).waitFor();
    });
  });

  it('replays a transcript with Open Transcript and marks the turns with missed identifiers', async () => {
    await withSettings(TIGHT, async () => {
      const r = (await vs.run(
        async ({ vscode }, file) => vscode.commands.executeCommand('spillway.openTranscript', vscode.Uri.file(file)),
        FIXTURE,
      )) as { sessionId: string; calls: number; missedIds: number };
      expect(r.calls).toBe(31);
      expect(r.missedIds).toBeGreaterThan(0);
      const frame = await inspectorFrame(vs.page);
      await frame.locator('.session-head h1', { hasText: 'mini-swe-agent__deepseek_bench1' }).waitFor();
      await frame.locator('.totals', { hasText: '31 turns' }).waitFor();
      const missedRow = frame.locator('.vrow', { has: frame.locator('.mark-missed') }).first();
      await missedRow.waitFor();
      await missedRow.click();
      const note = frame.locator('.details .missed');
      await note.waitFor();
      expect(await note.textContent()).toMatch(/referred to \d+ things? it could no longer see/);
      expect(await note.locator('code').count()).toBeGreaterThan(0);
      // the output that hid it is named by its file or command, its handle in the tooltip (issue 36, item 3)
      const link = note.locator('button.link').first();
      expect(await link.textContent()).not.toMatch(HANDLE_PATTERN);
      expect(await link.getAttribute('title')).toMatch(/sw_[0-9a-f]{24}/);
    });
  });

  it('re-runs the replay when a cap changes in the settings', async () => {
    await withSettings(TIGHT, async () => {
      await vs.run(async ({ vscode }, file) => vscode.commands.executeCommand('spillway.openTranscript', vscode.Uri.file(file)), FIXTURE);
      const detail = () =>
        vs.run(({ inspector }, id) => inspector.replays.list().find((s) => s.id === id)?.detail ?? null, `replay:${FIXTURE}`);
      const before = await detail();
      expect(before, 'the replay under the tight caps').toMatch(/miss rate /);
      expect(before, 'the replay under the tight caps').not.toMatch(/miss rate 0\.0%/);
      await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.setToolCap', 'bash', 'unlimited', 'workspace'));
      await vs.run(async ({ vscode }) =>
        vscode.workspace.getConfiguration('spillway').update('defaultCap', 'unlimited', vscode.ConfigurationTarget.Workspace),
      );
      const after = await waitUntil('the replay to re-run', async () => {
        const d = await detail();
        return d !== before ? d : undefined;
      });
      expect(after).toMatch(/miss rate 0\.0%/);
    });
  });

  it('lists the Claude Code and Codex sessions of the folder, newest first, and opens one', async () => {
    const { home, claude, codex } = fakeHome();
    const listed = (await browse(home, '')) as { files: string[] };
    expect(listed.files).toEqual([codex, claude]);
    const opened = (await browse(home, 'abc.jsonl')) as { sessionId: string; calls: number };
    expect(opened.calls).toBe(10);
    const frame = await inspectorFrame(vs.page);
    // named by what the session was, its project and day (src/replay/session-title.ts), not by abc.jsonl
    expect(sessionName(claude)).not.toContain('abc.jsonl');
    await frame.locator('.session-head h1', { hasText: sessionName(claude) }).waitFor();
  });

  it('lists a Copilot CLI session of the folder by its date, names it by its first prompt and replays it', async () => {
    const { home, claude, codex } = fakeHome();
    const copilot = copilotSession(home);
    const listed = (await browse(home, '')) as { files: string[] };
    expect(listed.files).toEqual([codex, copilot, claude]);
    const opened = (await browse(home, 'events.jsonl')) as { sessionId: string; calls: number };
    expect(opened.calls).toBe(2);
    const frame = await inspectorFrame(vs.page);
    expect(sessionName(copilot)).toMatch(/^Fix the cart total · /);
    await frame.locator('.session-head h1', { hasText: sessionName(copilot) }).waitFor();
    rmSync(join(home, '.copilot'), { recursive: true, force: true });
  });

  it("lists a Roo Code task of the folder from VS Code's global storage, names it by its task and replays it", async () => {
    const { home, claude, codex } = fakeHome();
    const dir = join(home, 'globalStorage', 'rooveterinaryinc.roo-cline', 'tasks', 'task-1');
    mkdirSync(dir, { recursive: true });
    const roo = join(dir, 'api_conversation_history.json');
    const history = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/transcripts/small/cline-task-roo.json'), 'utf8')) as {
      content: { text?: string }[];
    }[];
    history[0]!.content[1]!.text = `<environment_details>\n# Current Workspace Directory (${demo.dir}) Files\nsrc/\n</environment_details>`;
    writeFileSync(roo, JSON.stringify(history));
    const later = new Date(Date.now() + 60_000);
    utimesSync(roo, later, later);
    try {
      const listed = (await browse(home, '')) as { files: string[] };
      // newest first: the task was written last
      expect(listed.files).toEqual([roo, codex, claude]);
      const opened = (await browse(home, 'api_conversation_history.json')) as { sessionId: string; calls: number };
      expect(opened.calls).toBe(3);
      const frame = await inspectorFrame(vs.page);
      expect(sessionName(roo)).toMatch(/^Fix the failing test in calc\.py · /);
      await frame.locator('.session-head h1', { hasText: sessionName(roo) }).waitFor();
    } finally {
      rmSync(join(home, 'globalStorage'), { recursive: true, force: true });
    }
  });

  it("lists a Copilot chat session of the folder's workspace storage, names it by its title and replays it", async () => {
    const { home, claude, codex } = fakeHome();
    const ws = join(home, 'workspaceStorage');
    mkdirSync(join(ws, 'chatSessions'), { recursive: true });
    writeFileSync(join(ws, 'workspace.json'), JSON.stringify({ folder: pathToFileURL(demo.dir).href }));
    const chat = join(ws, 'chatSessions', '5c1d0e7a-2f4b-4a8e-9d61-0b7f3c2e9a14.jsonl');
    copyFileSync(join(ROOT, 'test/fixtures/transcripts/small/copilot-chat-session.jsonl'), chat);
    const later = new Date(Date.now() + 60_000);
    utimesSync(chat, later, later);
    try {
      const listed = (await browse(home, '')) as { files: string[] };
      expect(listed.files).toEqual([chat, codex, claude]);
      const opened = (await browse(home, basename(chat))) as { sessionId: string; calls: number };
      expect(opened.calls).toBe(5);
      const frame = await inspectorFrame(vs.page);
      expect(sessionName(chat)).toMatch(/^Fix parse\(\) on empty input · /);
      await frame.locator('.session-head h1', { hasText: sessionName(chat) }).waitFor();
    } finally {
      rmSync(ws, { recursive: true, force: true });
    }
  });

  it('lists a Copilot CLI sub-agent under its session and replays its own conversation', async () => {
    const { home, claude, codex } = fakeHome();
    const copilot = copilotSubAgentSession(home);
    const listed = (await browse(home, '')) as { files: string[] };
    expect(listed.files).toEqual([codex, copilot, `${copilot}#instance=t1`, claude]);
    const opened = (await browse(home, 'events.jsonl#instance=t1')) as { sessionId: string; calls: number };
    expect(opened.sessionId).toBe(`replay:${copilot}#instance=t1`);
    expect(opened.calls).toBe(2);
    const frame = await inspectorFrame(vs.page);
    await frame.locator('.session-head h1', { hasText: `sub-agent t1 of ${sessionName(copilot)}` }).waitFor();
    rmSync(join(home, '.copilot'), { recursive: true, force: true });
  });

  it('lists a Cline session of the folder by its date, names it by its manifest and replays it', async () => {
    const { home, claude, codex } = fakeHome();
    const cline = clineSession(home);
    const listed = (await browse(home, '')) as { files: string[] };
    expect(listed.files).toEqual([codex, cline, claude]);
    const opened = (await browse(home, '1748772000000_cart1.messages.json')) as { sessionId: string; calls: number };
    expect(opened.calls).toBe(2);
    const frame = await inspectorFrame(vs.page);
    expect(sessionName(cline)).toMatch(/^Total the cart · /);
    await frame.locator('.session-head h1', { hasText: sessionName(cline) }).waitFor();
    rmSync(join(home, '.cline'), { recursive: true, force: true });
  });

  it('lists an OpenCode session of the folder through opencode, exports it when picked and replays it', async () => {
    const { home, claude, codex } = fakeHome();
    openCodeStandIn(home);
    const listed = (await browse(home, '')) as { files: string[] };
    expect(listed.files.slice(0, 2)).toEqual([codex, claude]);
    expect(listed.files[2]).toMatch(/opencode-exports[\\/]ses_cart2\.json$/);
    const opened = (await browse(home, 'ses_cart2.json')) as { sessionId: string; calls: number };
    expect(opened.calls).toBe(2);
    expect(opened.sessionId).toBe(`replay:${listed.files[2]}`);
    const frame = await inspectorFrame(vs.page);
    await frame.locator('.session-head h1', { hasText: /^Price the cart · / }).waitFor();
    rmSync(join(home, '.opencode'), { recursive: true, force: true });
  });

  it("lists a Kilo Code 7 session of the folder through Kilo's kilo, exports it when picked and replays it", async () => {
    const { home, claude, codex } = fakeHome();
    openCodeStandIn(home, 'kilo');
    try {
      const listed = (await browse(home, '')) as { files: string[] };
      expect(listed.files.slice(0, 2)).toEqual([codex, claude]);
      expect(listed.files[2]).toMatch(/kilo-exports[\\/]ses_kilo1\.json$/);
      const opened = (await browse(home, 'ses_kilo1.json')) as { sessionId: string; calls: number };
      expect(opened.calls).toBe(2);
      const frame = await inspectorFrame(vs.page);
      await frame.locator('.session-head h1', { hasText: /^Total the basket · / }).waitFor();
    } finally {
      rmSync(join(home, '.kilo'), { recursive: true, force: true });
    }
  });

  it('comes back after a window reload on the session it showed (the panel serializer)', async () => {
    const { home, claude } = fakeHome();
    await browse(home, 'abc.jsonl');
    await (await inspectorFrame(vs.page)).locator('.session-head h1', { hasText: sessionName(claude) }).waitFor();
    const frame = await reloadWindow();
    await frame.locator('.session-head h1', { hasText: sessionName(claude) }).waitFor({ timeout: 30_000 });
    await frame.locator('.totals', { hasText: '10 turns' }).waitFor();
  });

  it('still has the session made through the API after the reload, with its turns', async () => {
    await showApiSession();
    const frame = await reloadWindow();
    const item = frame.locator('button.session', { hasText: API_SESSION });
    await item.waitFor({ timeout: 30_000 });
    expect(await item.textContent()).toMatch(/3 turns/);
    await item.click();
    await frame.locator('.session-head h1', { hasText: API_SESSION }).waitFor();
    await frame.locator('.totals', { hasText: '3 turns' }).waitFor();
    expect(await frame.locator('.timeline .vrow').count()).toBe(3);
    // a turn lists its results sent whole too, not only the reduced ones
    await frame.locator('.vrow').first().click();
    await frame.locator('.details-summary').waitFor();
    expect(await frame.locator('.details-summary').textContent()).toMatch(/new tool results?: \d+ reduced, \d+ sent whole/);
  });

  it('drops an invalid message from the webview and logs it', async () => {
    await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.openInspector'));
    await inspectorFrame(vs.page);
    await waitUntil('the panel service', async () => await vs.run(({ inspector }) => inspector.service !== undefined));
    const dropped = await vs.run(async ({ inspector }) => {
      const s = inspector.service!;
      const before = s.dropped;
      await s.receive({ kind: 'request', id: 1, method: 'turn/detail', params: { sessionId: 'x', turn: -1 } });
      await s.receive({ kind: 'command', method: 'result/openStored', params: { handle: '../../etc/passwd' } });
      return s.dropped - before;
    });
    expect(dropped).toBe(2);
  });
});
