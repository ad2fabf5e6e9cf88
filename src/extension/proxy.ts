/**
 * The local proxy inside VS Code: with `spillway.proxy.enabled`, the extension serves the proxy
 * (src/proxy) on 127.0.0.1 with the window's engine, records turns next to the store (where the
 * inspector's proxy source reads them), shows it in the status bar, offers Spillway: Copy Agent
 * Environment, and with `spillway.proxy.configureTerminals` sets the variables in new integrated
 * terminals.
 *
 * Changing the port, an upstream or the store folder restarts the proxy; a settings change that
 * rebuilds the engine only swaps the engine (`setEngine`), so calls in flight are not cut. A port
 * that is taken is a warning naming it, never a failed activation.
 *
 * Secrets: the proxy never logs headers; this file logs only the URL it listens on and the upstreams
 * without their query strings.
 */
import * as vscode from 'vscode';
import { startProxy, type RunningProxy } from '../proxy/server';
import { agentEnvironment, codexShellLines, geminiBaseUrl, geminiShellLines, mcpShellLines, type Shell } from '../proxy/env';
import { defaultSessionsDir, pruneRecordings, type Turn } from '../proxy/recording';
import { errorText, type SpillwayHost } from './host';
import { problemWarning, SECTION, type SettingProblem } from './pure/settings';
import { formatCount } from './pure/format';
import { CodexRoute } from './codexRoute';
import { BaseUrlRoutes } from './baseUrlRoute';
import { GeminiRoute } from './geminiRoute';
import { ClaudeCodeSetup, launchFor } from './mcp';
import {
  displayUrl,
  proxyRunKey,
  proxyStatus,
  readProxySettings,
  shellKind,
  SHELL_LABEL,
  startFailureMessage,
  terminalDescription,
  type ProxySettings,
} from './proxyConfig';

const COPY_AGENT_ENVIRONMENT = 'spillway.copyAgentEnvironment';

/** Pruning follows the store's schedule (host.ts): a while after activation, then hourly. */
const FIRST_PRUNE_DELAY_MS = 12_000;
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const SETTINGS_PRUNE_DELAY_MS = 1_000;

export interface CopyEnvironmentOptions {
  /** the shell to write for (default: the active terminal's, else the default terminal profile's) */
  shell?: Shell;
  /** when the proxy is off: true enables it without asking, false does not ask */
  enable?: boolean;
}

export interface CopyEnvironmentResult {
  url: string;
  shell: Shell;
  lines: string[];
}

export class ProxyController implements vscode.Disposable {
  /** the running proxy, if any */
  proxy: RunningProxy | undefined;
  settings!: ProxySettings;
  problems: SettingProblem[] = [];
  /** why the enabled proxy is not running (e.g. the port is taken) */
  failure: string | undefined;
  /** turns recorded by this window's proxy */
  turns = 0;
  savedTokens = 0;
  private readonly sessionIds = new Set<string>();
  /** the run key in force or being brought in force ('' when off) */
  private key = '';
  private queue: Promise<void> = Promise.resolve();
  private readonly warned = new Set<string>();
  private readonly status: vscode.StatusBarItem;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly turnEmitter = new vscode.EventEmitter<Turn>();
  /** fires after each turn the proxy recorded (the inspector refreshes its proxy sessions) */
  readonly onDidRecordTurn = this.turnEmitter.event;
  private readonly stateEmitter = new vscode.EventEmitter<void>();
  /** fires after the proxy started, stopped or failed to start */
  readonly onDidChangeState = this.stateEmitter.event;
  private lastRetention = '';
  private disposed = false;
  private readonly onTurn = (turn: Turn) => this.recorded(turn);
  /** Spillway: Route Codex Through Spillway (its config.toml line goes when the proxy is turned off) */
  readonly codex: CodexRoute;
  /** Spillway: Route Claude Code Through Spillway and the .mcp.json server (its route goes with the proxy, like Codex's) */
  readonly claude: ClaudeCodeSetup;
  /** Spillway: Route OpenCode / pi Through Spillway (their base URLs go with the proxy too) */
  readonly baseUrls: BaseUrlRoutes;
  /** Spillway: Route Gemini CLI Through Spillway (settings.json entries, and GOOGLE_GEMINI_BASE_URL in terminals while routed) */
  readonly gemini: GeminiRoute;

  constructor(
    private readonly host: SpillwayHost,
    private readonly context: vscode.ExtensionContext,
  ) {
    this.status = vscode.window.createStatusBarItem('spillway.proxy', vscode.StatusBarAlignment.Right, 99);
    this.status.name = 'Spillway Proxy';
    // a stale collection from a window that crashed with the proxy on would point at a dead port
    context.environmentVariableCollection.persistent = false;
    this.codex = new CodexRoute(host, () => this.proxy?.url);
    this.claude = new ClaudeCodeSetup(host, () => this.proxy?.url);
    this.baseUrls = new BaseUrlRoutes(host, () => this.proxy?.url);
    this.gemini = new GeminiRoute(
      host,
      context,
      () => this.proxy?.url,
      () => this.updateTerminals(),
    );
    this.disposables.push(
      this.codex,
      this.claude,
      this.baseUrls,
      this.gemini,
      this.status,
      this.turnEmitter,
      this.stateEmitter,
      vscode.commands.registerCommand(COPY_AGENT_ENVIRONMENT, (opts?: CopyEnvironmentOptions) => this.copyEnvironment(opts)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration(SECTION)) return;
        void this.reload();
        const retention = this.retentionKey();
        if (retention !== this.lastRetention) setTimeout(() => this.prune(), SETTINGS_PRUNE_DELAY_MS);
        this.lastRetention = retention;
      }),
      host.onDidChangeEngine((engine) => this.proxy?.setEngine(engine)),
    );
    this.lastRetention = this.retentionKey();
    const first = setTimeout(() => this.prune(), FIRST_PRUNE_DELAY_MS);
    const every = setInterval(() => this.prune(), PRUNE_INTERVAL_MS);
    this.disposables.push({ dispose: () => (clearTimeout(first), clearInterval(every)) });
    void this.reload();
  }

  /** Where the proxy records: `sessions` next to the store, the folder the inspector reads. */
  get sessionsDir(): string {
    return defaultSessionsDir(this.host.storeDir);
  }

  get url(): string | undefined {
    return this.proxy?.url;
  }

  /**
   * Reads `spillway.proxy.*`, warns once about each bad value, and starts, stops or restarts the
   * proxy when what it depends on changed. Resolves when the proxy is in the state the settings ask for.
   */
  reload(): Promise<void> {
    const cfg = vscode.workspace.getConfiguration(SECTION);
    const read = readProxySettings((key) => cfg.inspect(key));
    this.settings = read.settings;
    this.problems = read.problems;
    const current = new Set<string>();
    for (const text of [...this.problems.map(problemWarning), ...read.ignored]) {
      current.add(text);
      this.host.log.warn(text);
      if (!this.warned.has(text)) this.host.notify('warning', text);
    }
    this.warned.clear();
    for (const t of current) this.warned.add(t);

    const key = proxyRunKey(this.settings, this.sessionsDir) ?? '';
    if (key === this.key) {
      this.proxy?.setWebsockets(this.settings.websockets);
      this.setMode();
      this.proxy?.setAnswerReads(this.settings.answerReads);
      this.updateTerminals();
      this.updateStatus();
      return this.queue;
    }
    this.key = key;
    this.queue = this.queue.then(() => this.apply(key)).catch((e: unknown) => this.host.log.error(`proxy: ${errorText(e)}`));
    return this.queue;
  }

  /** Brings the proxy to `key` (stopped when ''), unless a later change superseded it. */
  private async apply(key: string): Promise<void> {
    if (key !== this.key) return; // a later change is queued behind this one
    await this.stop();
    this.failure = undefined;
    if (!key) {
      this.codex.unroute(true);
      this.claude.unroute(true);
      this.baseUrls.unroute(true);
      this.gemini.unroute(true);
      this.updateTerminals();
      this.updateStatus();
      this.stateEmitter.fire();
      return;
    }
    const s = this.settings;
    const sessionsDir = this.sessionsDir;
    try {
      const proxy = await startProxy({
        port: s.port,
        openaiUpstream: s.openaiUpstream,
        anthropicUpstream: s.anthropicUpstream,
        geminiUpstream: s.geminiUpstream,
        engine: this.host.engine,
        sessionsDir,
        websockets: s.websockets,
        mode: s.mode,
        answerReads: s.answerReads,
        read: (handle, options) => this.host.read(handle, options),
        // problems start with "proxy:", turns with "turn"; neither ever holds a header
        log: (line) => (line.startsWith('proxy:') ? this.host.log.warn(line) : this.host.log.info(line)),
      });
      if (key !== this.key || this.disposed) {
        // the settings changed while it started (the next queued apply brings the right one up), or the window is closing
        await proxy.close();
        return;
      }
      this.proxy = proxy;
      proxy.on('turn', this.onTurn);
      this.codex.follow(proxy.url);
      this.claude.follow(proxy.url);
      this.baseUrls.follow(proxy.url);
      this.host.log.info(
        `proxy: listening on ${proxy.url} (OpenAI upstream ${displayUrl(s.openaiUpstream)}, Anthropic upstream ${displayUrl(s.anthropicUpstream)}, Gemini upstream ${displayUrl(s.geminiUpstream)}); ` +
          `recording turns in ${sessionsDir}`,
      );
    } catch (e) {
      this.failure = errorText(e);
      const message = startFailureMessage(s.port, this.failure);
      this.host.log.warn(message);
      this.host.notify('warning', message);
    }
    this.updateTerminals();
    this.updateStatus();
    this.stateEmitter.fire();
  }

  /** Observe or project from the next call on (no restart: calls in flight and open WebSockets carry on). */
  private setMode(): void {
    const p = this.proxy;
    if (!p || p.mode === this.settings.mode) return;
    p.setMode(this.settings.mode);
    this.updateStatus();
    this.host.log.info(
      this.settings.mode === 'observe'
        ? 'proxy: observe mode: requests go upstream byte for byte; the inspector shows what Spillway would have sent'
        : 'proxy: project mode: requests go upstream projected',
    );
  }

  private async stop(): Promise<void> {
    const p = this.proxy;
    if (!p) return;
    this.proxy = undefined;
    this.updateTerminals();
    p.off('turn', this.onTurn);
    try {
      await p.close();
      this.host.log.info(`proxy: stopped (was ${p.url})`);
    } catch (e) {
      this.host.log.warn(`proxy: stopping failed: ${errorText(e)}`);
    }
  }

  private recorded(turn: Turn): void {
    this.turns++;
    this.sessionIds.add(turn.session);
    if (turn.stats) this.savedTokens += Math.max(0, turn.stats.savedTokens);
    this.updateStatus();
    this.turnEmitter.fire(turn);
  }

  /** The variables in new integrated terminals: set while the proxy runs and the setting is on, cleared otherwise. */
  private updateTerminals(): void {
    const env = this.context.environmentVariableCollection;
    const url = this.proxy?.url;
    if (!url || !this.settings.configureTerminals) {
      env.clear();
      env.description = undefined;
      return;
    }
    const vars = [...agentEnvironment(url), ...(this.gemini.routed ? [{ name: 'GOOGLE_GEMINI_BASE_URL', value: geminiBaseUrl(url) }] : [])];
    // the Gemini CLI variable is there only while Gemini CLI is routed
    const stale = !this.gemini.routed && env.get('GOOGLE_GEMINI_BASE_URL') !== undefined;
    if (!stale && vars.every((v) => env.get(v.name)?.value === v.value)) return;
    env.clear();
    for (const v of vars) env.replace(v.name, v.value);
    env.description = terminalDescription(url);
  }

  private updateStatus(): void {
    if (!this.settings.enabled || (!this.proxy && !this.failure)) {
      this.status.hide();
      return;
    }
    const s = proxyStatus({
      url: this.proxy?.url,
      port: this.proxy?.port,
      failure: this.failure,
      wantedPort: this.settings.port,
      turns: this.turns,
      sessions: this.sessionIds.size,
      savedTokens: this.savedTokens,
      openaiUpstream: this.settings.openaiUpstream,
      anthropicUpstream: this.settings.anthropicUpstream,
      observe: this.proxy?.mode === 'observe',
    });
    this.status.text = s.text;
    this.status.tooltip = s.tooltip;
    this.status.command = this.proxy
      ? { command: COPY_AGENT_ENVIRONMENT, title: 'Copy Agent Environment' }
      : { command: 'workbench.action.openSettings', title: 'Change the proxy port', arguments: [`${SECTION}.proxy.port`] };
    this.status.show();
  }

  /** The shell of the active terminal, else of the default terminal profile, else the platform's. */
  private shell(): Shell {
    const opts = vscode.window.activeTerminal?.creationOptions;
    const path = opts && 'shellPath' in opts && typeof opts.shellPath === 'string' ? opts.shellPath : vscode.env.shell;
    return shellKind(path, process.platform);
  }

  /** Spillway: Copy Agent Environment. */
  async copyEnvironment(opts?: CopyEnvironmentOptions): Promise<CopyEnvironmentResult | undefined> {
    if (!this.proxy && this.settings.enabled && this.failure) {
      // the port may be free by now: try once more before saying why not
      this.key = '';
      await this.reload();
      if (!this.proxy) return undefined; // the failed start warned again
    }
    if (!this.proxy) {
      let enable = opts?.enable;
      if (enable === undefined) {
        const answer = await vscode.window.showInformationMessage(
          'The Spillway proxy is off. Enable it (spillway.proxy.enabled) and copy the variables that point agents at it?',
          'Enable Proxy',
        );
        enable = answer === 'Enable Proxy';
      }
      if (!enable) return undefined;
      const hasFolder = (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
      await vscode.workspace
        .getConfiguration(SECTION)
        .update('proxy.enabled', true, hasFolder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global);
      await this.reload();
      if (!this.proxy) {
        if (!this.failure) this.host.notify('warning', 'Spillway: the proxy did not start; see Spillway: Show Log.');
        return undefined;
      }
    }
    const proxy = this.proxy;
    const shell = opts?.shell ?? this.shell();
    const launch = launchFor(this.host);
    const lines = [
      ...proxy.environment(shell),
      ...codexShellLines(proxy.url, shell),
      ...geminiShellLines(proxy.url, shell),
      ...mcpShellLines(launch, shell),
    ];
    await vscode.env.clipboard.writeText(lines.join('\n') + '\n');
    this.host.notify(
      'info',
      `Spillway: copied the agent environment for ${SHELL_LABEL[shell]} (${lines.length} lines pointing at ${proxy.url}) to the clipboard.`,
    );
    return { url: proxy.url, shell, lines };
  }

  private retentionKey(): string {
    return `${this.host.storage?.retentionDays}/${this.host.storage?.maxMegabytes}/${this.sessionsDir}`;
  }

  /** Prunes the recordings with the store's retention settings. */
  prune(): { sessions: number; bodies: number; freedBytes: number } {
    const { retentionDays, maxMegabytes } = this.host.storage;
    try {
      const r = pruneRecordings(this.sessionsDir, { maxAgeDays: retentionDays, maxBodyBytes: maxMegabytes * 1024 * 1024 });
      const line =
        `pruned the proxy recordings (older than ${retentionDays} days, bodies beyond ${maxMegabytes} MB): ` +
        `${r.sessions} sessions, ${r.bodies} bodies, ${formatCount(r.freedBytes)} bytes`;
      if (r.sessions + r.bodies > 0) this.host.log.info(line);
      else this.host.log.debug(line);
      return r;
    } catch (e) {
      this.host.log.error(`pruning the proxy recordings failed: ${errorText(e)}`);
      return { sessions: 0, bodies: 0, freedBytes: 0 };
    }
  }

  dispose(): void {
    this.disposed = true;
    if (this.proxy) {
      // the proxy goes with the window: no agent may point at a dead port
      this.codex.unroute(true);
      this.claude.unroute(true);
      this.baseUrls.unroute(true);
      this.gemini.unroute(true);
    }
    this.key = '';
    for (const d of this.disposables.splice(0)) d.dispose();
    const p = this.proxy;
    this.proxy = undefined;
    this.context.environmentVariableCollection.clear();
    if (p) void p.close();
  }
}
