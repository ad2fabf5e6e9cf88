/**
 * The real-VS-Code harness: Spillway packaged with vsce, installed into a fresh code-server
 * (the real workbench and Node extension host, see scripts/install-code-server.sh), driven by
 * Debian's Chromium through Playwright.
 *
 * - `prepare()` (vitest globalSetup) installs code-server into the cache (CODE_SERVER_DIR) once, builds
 *   and packages the test build of the extension (with its test bridge) into .harness/spillway-test.vsix.
 * - `launch()` makes a fresh user-data / extensions / workspace folder under .harness/runs/, installs
 *   the vsix there, starts code-server on 127.0.0.1 with a free port and SPILLWAY_TEST_OUT set (so the
 *   extension registers its test bridge), opens the workbench in Chromium and waits until the
 *   extension has activated.
 * - `Harness.run(fn, ...args)` runs `fn` inside the extension host (see test/vscode/bridge/testBridge.ts)
 *   with `{ vscode, api, context, host }`; the page helpers drive the workbench like a user.
 * Every wait is bounded; `close()` kills the server's whole process group.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect, createServer } from 'node:net';
import { homedir } from 'node:os';
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type * as vscodeTypes from 'vscode';
import { chromium, type Browser, type Frame, type Locator, type Page } from 'playwright-core';
import type { SpillwayApi } from '../../src/extension/extension';
import type { SpillwayHost } from '../../src/extension/host';
import type { Inspector } from '../../src/extension/inspector/panel';
import { filesUnder } from '../support/files';
import { CHROMIUM, CHROMIUM_ARGS } from '../../bench/chromium';
import { codeServers, type CodeServer } from './code-servers';

export const ROOT = resolve(__dirname, '../..');
export const HARNESS_DIR = join(ROOT, '.harness');
/** Where the suites' screenshots of the inspector go, attached to the tests that take them. */
export const SHOTS_DIR = join(ROOT, 'test-results', 'inspector');
/** Big installs live outside the clone (keyed by version) so a fresh clone reuses them. */
const CACHE_DIR = process.env.SPILLWAY_CACHE ?? join(homedir(), '.cache', 'spillway');
/** The two code-servers the install scripts install (code-servers.ts reads their versions). */
const [BASE, CHAT] = codeServers(ROOT, CACHE_DIR) as [CodeServer, CodeServer];
const INSTALL_SCRIPT = BASE.install.script;
const CODE_SERVER_DIR = BASE.dir;
/** The TEST build (shipped extension + test bridge, see test/vscode/bridge/); never the release .vsix. */
const VSIX = join(HARNESS_DIR, 'spillway-test.vsix');
const ENTRY = BASE.entry;
/**
 * The second code-server, whose VS Code has the language model chat provider API (1.104+), on the
 * Node its engines ask for, from npm (scripts/install-code-server-chat.sh; versions read from it).
 */
const CHAT_INSTALL_SCRIPT = CHAT.install.script;
const CHAT_CODE_SERVER_VERSION = CHAT.version;
const CHAT_CODE_SERVER_DIR = CHAT.dir;
const CHAT_NODE = CHAT.node;

/** What a test function sees inside the extension host. */
export interface HostContext {
  vscode: typeof vscodeTypes;
  api: SpillwayApi;
  context: vscodeTypes.ExtensionContext;
  host: SpillwayHost;
  inspector: Inspector;
  require: NodeRequire;
}

function log(message: string): void {
  if (process.env.SPILLWAY_HARNESS_QUIET !== '1') process.stderr.write(`[harness] ${message}\n`);
}

function sh(command: string, args: string[], options: { cwd?: string; timeoutMs: number; env?: NodeJS.ProcessEnv }): string {
  const r = spawnSync(command, args, {
    cwd: options.cwd ?? ROOT,
    encoding: 'utf8',
    timeout: options.timeoutMs,
    env: options.env ?? process.env,
  });
  if (r.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} failed (${r.error?.message ?? `exit ${r.status}`}):\n${(r.stdout ?? '').slice(-2000)}\n${(r.stderr ?? '').slice(-4000)}`,
    );
  }
  return r.stdout;
}

/** Installs code-server once (marker: CODE_SERVER_DIR/.complete) and the Debian packages it needs. */
function ensureCodeServer(): void {
  if (existsSync(join(CODE_SERVER_DIR, '.complete')) && existsSync(CHROMIUM)) return;
  log(`installing code-server into ${CODE_SERVER_DIR} (once, about 2 minutes)…`);
  sh('bash', [INSTALL_SCRIPT, CODE_SERVER_DIR], { timeoutMs: 15 * 60_000 });
}

/** Installs the chat code-server and its Node once (markers: each folder's .complete). */
export function ensureChatCodeServer(): void {
  if (existsSync(join(CHAT_CODE_SERVER_DIR, '.complete')) && existsSync(CHAT_NODE) && existsSync(CHROMIUM)) return;
  log(`installing code-server ${CHAT_CODE_SERVER_VERSION} and its Node (${CHAT_NODE}) into ${CACHE_DIR} (once, several minutes)…`);
  sh('bash', [CHAT_INSTALL_SCRIPT], { timeoutMs: 30 * 60_000 });
}

/** Builds the test build of the extension and packages it into VSIX (scripts/package-vsix.mjs --test-bridge). */
function buildAndPackage(): string {
  sh(process.execPath, [join(ROOT, 'scripts/package-vsix.mjs'), '--test-bridge', VSIX], { timeoutMs: 180_000 });
  return VSIX;
}

export async function prepare(): Promise<string> {
  ensureCodeServer();
  return buildAndPackage();
}

/** A port free on 127.0.0.1 right now (for servers a test starts). */
export async function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => res(port));
    });
  });
}

/** Writes `spillway.<key>` into the workspace (or user) settings from the extension host; null removes it. */
export function setSpillwaySetting(vs: Harness, key: string, value: unknown, where: 'workspace' | 'user' = 'workspace') {
  return vs.run(
    async ({ vscode }, k, v, w) => {
      // undefined (remove the setting) travels as null
      await vscode.workspace
        .getConfiguration('spillway')
        .update(k, v === null ? undefined : v, w === 'user' ? vscode.ConfigurationTarget.Global : vscode.ConfigurationTarget.Workspace);
    },
    key,
    value,
    where,
  );
}

export async function waitUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (e) {
      lastError = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export interface LaunchOptions {
  /** open this folder (default: a fresh empty workspace); null opens no folder */
  workspace?: string | null;
  /** files to create in the workspace, path → text */
  files?: Record<string, string>;
  /** user settings added to the harness defaults */
  userSettings?: Record<string, unknown>;
  /** a name for the run folder */
  name?: string;
  /** 'chat': the code-server whose VS Code has the chat provider API (ensureChatCodeServer first); default 4.100.3 */
  codeServer?: 'default' | 'chat';
}

export class Harness {
  private seq = 0;
  constructor(
    readonly dir: string,
    readonly userData: string,
    readonly extensions: string,
    readonly workspace: string | null,
    readonly out: string,
    readonly port: number,
    readonly server: ChildProcess,
    readonly browser: Browser,
    readonly page: Page,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/`;
  }

  /** Runs `fn` inside the extension host and returns its (JSON) result; throws what it threw. */
  async run<R, A extends unknown[] = []>(fn: (t: HostContext, ...args: A) => R | Promise<R>, ...args: A): Promise<R> {
    return this.runSource(fn.toString(), args) as Promise<R>;
  }

  async runSource(source: string, args: unknown[] = [], timeoutMs = 30_000): Promise<unknown> {
    const id = `${String(++this.seq).padStart(5, '0')}.json`;
    const inbox = join(this.out, 'inbox');
    mkdirSync(inbox, { recursive: true });
    writeFileSync(join(inbox, `${id}.tmp`), JSON.stringify({ fn: source, args }));
    renameSync(join(inbox, `${id}.tmp`), join(inbox, id));
    const reply = join(this.out, 'outbox', id);
    await waitUntil(`the extension host to answer ${id}`, () => existsSync(reply), timeoutMs, 25);
    const answer = JSON.parse(readFileSync(reply, 'utf8')) as { ok: boolean; value?: unknown; error?: string; code?: string };
    rmSync(reply, { force: true });
    if (!answer.ok) throw Object.assign(new Error(answer.error ?? 'failed'), { code: answer.code });
    return answer.value;
  }

  /** Runs a command from the command palette by its title, as a user would. */
  async runCommand(title: string): Promise<void> {
    await (await this.paletteRow(title)).click({ timeout: 10_000 });
  }

  /**
   * Runs a command that shows a quick pick titled `pickerTitle` and returns the pick's visible rows
   * once the first is shown. Like the palette (paletteRow), the pick can be closed under us as it
   * opens, by a webview taking focus as it finishes loading on a loaded machine (a CI run on
   * 2026-11-29 saw Open Stored Output's pick never shown after a test had opened a diff beside the
   * inspector), so the command is run again, a bounded number of times, whenever the pick closed
   * before its rows were shown.
   */
  async pickerRows(commandTitle: string, pickerTitle = commandTitle): Promise<Locator> {
    const widget = this.page.locator('.quick-input-widget');
    const title = widget.locator('.quick-input-title', { hasText: pickerTitle });
    const rows = this.page.locator('.quick-input-list .monaco-list-row:visible');
    for (let attempt = 1; ; attempt++) {
      await this.runCommand(commandTitle);
      try {
        await title.waitFor({ state: 'visible', timeout: 10_000 });
        await rows.first().waitFor({ state: 'visible', timeout: 10_000 });
        return rows;
      } catch (e) {
        if (attempt >= 3 || (await title.isVisible())) throw e;
        await this.page.keyboard.press('Escape');
      }
    }
  }

  /** Opens the command palette on `title` and returns its row once shown (the palette stays open). */
  async paletteRow(title: string): Promise<Locator> {
    const input = this.page.locator('.quick-input-widget .quick-input-box input');
    const row = this.page.locator('.quick-input-list .monaco-list-row:visible', { hasText: title }).first();
    // the palette can be closed under us while it opens: a webview taking focus as it finishes loading
    // (seen on a loaded machine in the 1.139 demo window, the input going inert then hidden), so it is
    // opened again, a bounded number of times, whenever it closed before its row was shown
    for (let attempt = 1; ; attempt++) {
      await this.page
        .locator('.monaco-workbench')
        .click({ position: { x: 700, y: 5 }, timeout: 10_000 })
        .catch(() => undefined);
      await this.page.keyboard.press('F1');
      try {
        await input.waitFor({ state: 'visible', timeout: 10_000 });
        await input.fill(`>${title}`, { timeout: 10_000 });
        await row.waitFor({ state: 'visible', timeout: 10_000 });
        return row;
      } catch (e) {
        if (attempt >= 4 || (await input.isVisible())) throw e;
      }
    }
  }

  /** Types into the open quick pick and accepts the first row that contains `text`. */
  async pickQuickItem(text: string, filter = text): Promise<void> {
    const input = this.page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 10_000 });
    await input.fill(filter);
    const row = this.page.locator('.quick-input-list .monaco-list-row:visible', { hasText: text }).first();
    await row.waitFor({ state: 'visible', timeout: 10_000 });
    await row.click({ timeout: 10_000 });
  }

  /**
   * Waits for an editor tab whose title contains `title`; returns its full label. The page shows the
   * tab before the extension host hears of it (and before a text editor's document has loaded), so
   * this also waits until the extension host sees that tab active in its group and, when it is a
   * text editor in the active group, `activeTextEditor` showing its document: what a test reads
   * next through `run` is then the tab's.
   */
  async waitForTab(title: string, timeoutMs = 15_000): Promise<string> {
    const tab = this.page.locator('.tabs-container .tab', { hasText: title }).first();
    await tab.waitFor({ state: 'visible', timeout: timeoutMs });
    await waitUntil(
      `the extension host to see the tab "${title}" active`,
      () =>
        this.run(({ vscode }, t) => {
          const group = vscode.window.tabGroups.all.find((g) => g.activeTab?.label.includes(t));
          if (!group) return false;
          const input = group.activeTab!.input;
          if (group !== vscode.window.tabGroups.activeTabGroup || !(input instanceof vscode.TabInputText)) return true;
          return vscode.window.activeTextEditor?.document.uri.toString() === input.uri.toString();
        }, title),
      timeoutMs,
    );
    return (await tab.locator('.label-name').first().textContent()) ?? '';
  }

  /**
   * The text of the active editor as rendered (visible lines only; spaces normalised). The workbench
   * renders a document a frame or more after the extension host has it, so this waits until the
   * rendered lines hold the active text editor's first visible line (when there is one).
   */
  async activeEditorText(timeoutMs = 10_000): Promise<string> {
    const lines = this.page.locator('.editor-group-container.active .editor-container .monaco-editor .view-lines').first();
    await lines.waitFor({ state: 'visible', timeout: timeoutMs });
    const rendered = async () =>
      (
        await lines.evaluate((el) => {
          const rows = [...el.querySelectorAll<HTMLElement>('.view-line')];
          rows.sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top));
          return rows.map((r) => r.textContent ?? '').join('\n');
        })
      ).replace(/\u00a0/g, ' ');
    const first = await this.run(({ vscode }) => {
      const e = vscode.window.activeTextEditor;
      // a diff editor shows two documents; its first .view-lines is the original's
      const plain = vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputText;
      return e && plain ? e.document.lineAt(e.visibleRanges[0]?.start.line ?? 0).text : null;
    });
    // a line rendered as typed: printable ASCII, no tabs (rendered as spaces); a prefix, as long lines are cut
    const want = first && /^[\x20-\x7e]+$/.test(first) ? first.trim().slice(0, 40) : '';
    return waitUntil(
      `the active editor to render${want ? ` "${want}"` : ' its text'}`,
      async () => {
        const text = await rendered();
        return text.trim() !== '' && text.includes(want) ? text : undefined;
      },
      timeoutMs,
    );
  }

  /** Texts of the notification toasts currently shown. */
  async notifications(): Promise<string[]> {
    return this.page.locator('.notification-toast .notification-list-item-message').allTextContents();
  }

  async screenshot(name: string): Promise<string> {
    const file = join(this.dir, `${name}.png`);
    await this.page.screenshot({ path: file }).catch(() => undefined);
    return file;
  }

  /**
   * Saves a screenshot of the workbench to test-results/inspector/ and attaches it to the test, with
   * the toasts cleared first (git's offer to open the parent repository would cover the panel).
   */
  async reportShot(name: string, annotate: (message: string, attachment: { path: string }) => Promise<unknown>): Promise<void> {
    mkdirSync(SHOTS_DIR, { recursive: true });
    const path = join(SHOTS_DIR, `${name}.png`);
    await this.run(async ({ vscode }) => {
      await vscode.commands.executeCommand('notifications.clearAll');
    });
    await this.page.screenshot({ path });
    await annotate(name, { path });
  }

  /** The remote extension host log (says whether and why the extension did not activate). */
  extensionHostLog(): string {
    const logs = join(this.userData, 'logs');
    if (!existsSync(logs)) return '';
    const found = filesUnder(logs).filter((p) => /exthost/i.test(p) && p.endsWith('.log'));
    return found.map((f) => `== ${f}\n${readFileSync(f, 'utf8').slice(-5000)}`).join('\n');
  }

  async close(): Promise<void> {
    await Promise.race([this.browser.close(), new Promise((r) => setTimeout(r, 5_000))]).catch(() => undefined);
    await killGroup(this.server);
  }
}

async function killGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null) return;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const done = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 5_000))]);
  if (!done) {
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

const HARNESS_USER_SETTINGS = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
  'telemetry.telemetryLevel': 'off',
  'extensions.autoUpdate': false,
  'extensions.autoCheckUpdates': false,
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'update.mode': 'none',
  'editor.minimap.enabled': false,
};

/** Starts a fresh code-server with the packaged extension and opens the workbench in Chromium. */
export async function launch(options: LaunchOptions = {}): Promise<Harness> {
  if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: run prepare() first (vitest globalSetup does)`);
  const runs = join(HARNESS_DIR, 'runs');
  const dir = join(runs, `${new Date().toISOString().replace(/[:.]/g, '-')}-${options.name ?? 'run'}-${process.pid}`);
  const userData = join(dir, 'user-data');
  const extensions = join(dir, 'extensions');
  const out = join(dir, 'out');
  const workspace = options.workspace === null ? null : (options.workspace ?? join(dir, 'workspace'));
  for (const d of [join(userData, 'User'), extensions, out]) mkdirSync(d, { recursive: true });
  if (workspace) {
    mkdirSync(workspace, { recursive: true });
    for (const [name, text] of Object.entries(options.files ?? {})) {
      mkdirSync(join(workspace, name, '..'), { recursive: true });
      writeFileSync(join(workspace, name), text);
    }
  }
  writeFileSync(join(userData, 'User/settings.json'), JSON.stringify({ ...HARNESS_USER_SETTINGS, ...options.userSettings }, null, 2));

  const chat = options.codeServer === 'chat';
  const entry = chat ? join(CHAT_CODE_SERVER_DIR, 'node_modules/code-server/out/node/entry.js') : ENTRY;
  const node = chat ? CHAT_NODE : process.execPath;
  // installed before the server starts, or the first window would not have it
  sh(node, [entry, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', VSIX], { timeoutMs: 120_000 });

  const port = await freePort();
  const args = [
    entry,
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensions,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
  ];
  if (workspace) args.push(workspace);
  const server = spawn(node, args, {
    env: { ...process.env, SPILLWAY_TEST_OUT: out },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, so close() ends the extension host too
  });
  let serverOutput = '';
  server.stdout?.on('data', (d) => (serverOutput = (serverOutput + String(d)).slice(-20_000)));
  server.stderr?.on('data', (d) => (serverOutput = (serverOutput + String(d)).slice(-20_000)));
  let browser: Browser | undefined;
  try {
    // 150 s: beside another suite and two CPU hogs on the 2-core machine, code-server took over 60 s to listen
    await waitUntil('code-server to listen', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 150_000, 200);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 60_000 });
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(15_000);
    const url = `http://127.0.0.1:${port}/${workspace ? `?folder=${encodeURIComponent(workspace)}` : '?ew=true'}`;
    await page.goto(url, { timeout: 60_000 });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    const harness = new Harness(dir, userData, extensions, workspace, out, port, server, browser, page);
    try {
      // 150 s: with the machine's two cores loaded (load average 42), the extension host took 35 s to start its
      // extensions and reached Spillway's onStartupFinished 60 s after the workbench showed
      await waitUntil('Spillway to activate (out/activated.json)', () => existsSync(join(out, 'activated.json')), 150_000, 200);
    } catch (e) {
      throw new Error(
        `${String(e)}\n--- server output\n${serverOutput.slice(-3000)}\n--- extension host log\n${harness.extensionHostLog()}`,
        { cause: e },
      );
    }
    log(`VS Code up at ${harness.url} (${dir})`);
    return harness;
  } catch (e) {
    await browser?.close().catch(() => undefined);
    await killGroup(server);
    throw e;
  }
}

/** Whether the process that made a run folder (its name ends in -PID) is still running: another suite in this clone. */
function liveRun(name: string): boolean {
  const pid = Number(/-(\d+)$/.exec(name)?.[1]);
  if (!pid || pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes run folders of earlier test runs (kept after a run for debugging), never those of a suite still running. */
export function cleanRuns(keep = 0): void {
  const runs = join(HARNESS_DIR, 'runs');
  if (!existsSync(runs)) return;
  const names = readdirSync(runs).sort();
  for (const n of names.slice(0, Math.max(0, names.length - keep)))
    if (!liveRun(n)) rmSync(join(runs, n), { recursive: true, force: true });
}

/** The Spillway inspector's document inside the workbench page's webview iframes. */
export async function inspectorFrame(page: Page): Promise<Frame> {
  return waitUntil(
    'the inspector webview to render',
    async () => {
      for (const f of page.frames()) {
        const ok = await f.evaluate(() => !!document.querySelector('.app')).catch(() => false);
        if (ok) return f;
      }
      return undefined;
    },
    30_000,
    250,
  );
}

/** Whether something accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((res) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      res(true);
    });
    sock.once('error', () => res(false));
  });
}

/** Turns the extension's proxy on at `port` and waits until it listens (the route commands need it running). */
export async function proxyOnAt(vs: Harness, port: number): Promise<void> {
  await setSpillwaySetting(vs, 'proxy.port', port);
  await setSpillwaySetting(vs, 'proxy.enabled', true);
  await waitUntil('the proxy to listen', () => listening(port), 20_000);
}

/**
 * Waits until the inspector shows the session titled `title` with a turn chosen and no session/open
 * in flight (the panel's `aria-busy` is false): a click on a turn from then on is not undone by an
 * open answered later (an open of the same session keeps the chosen turn).
 */
export async function inspectorSettled(frame: Frame, title: string): Promise<void> {
  await frame.locator('.session-head h1', { hasText: title }).waitFor({ timeout: 30_000 });
  await frame.locator('main.main[aria-busy="false"]').waitFor({ timeout: 30_000 });
  await frame.locator('.timeline .vrow').first().waitFor();
  await frame.locator('.details h2').waitFor({ timeout: 30_000 });
}
