/**
 * The inspector panel in VS Code: `Spillway: Open Inspector`, a WebviewPanel restored after a
 * reload by its serializer, wired to the InspectorService; plus `Spillway: Open Transcript…` and
 * `Spillway: Browse Agent Sessions`, which replay a session from disk and show it in the panel.
 *
 * The service does the talking (protocol validation, the ready handshake, the answers); this file
 * only owns what needs `vscode`: the panel and its HTML, and the actions that reuse the extension's
 * commands (open a stored output as a `spillway:` document, compare in the diff editor, write
 * `spillway.toolCaps` through Set Cap for Tool).
 */
import * as vscode from 'vscode';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { defaultSessionsDir } from '../../proxy/recording';
import { copilotSessionsDir } from '../chat/sessions';
import { readTranscript } from '../../replay/readers';
import { replayAsync } from '../../replay/replay';
import { SECTION } from '../pure/settings';
import { formatCount } from '../pure/format';
import { COMMANDS } from '../commands';
import { errorText, type SpillwayHost } from '../host';
import type { CapChoice, CapValue } from '../../protocol';
import { agentSessions, clineDataDir, continueDir, piAgentDir, type AgentSessionFile } from './agentSessions';
import { exportOpenCodeSession, kiloBinary, openCodeBinary, openCodeExportPath, openCodeSessions } from './opencodeSessions';
import { sessionName } from '../../replay/session-title';
import { defaultArchiveDir, SessionArchive } from './archive';
import { sessionsStatus } from './status';
import { ApiSource } from './apiSource';
import { inspectorHtml, newNonce } from './html';
import { ProxySource } from './proxySource';
import { collectMarkers, recordFor, replayKey, ReplaySource } from './replaySource';
import { InspectorService, type InspectorActions } from './service';
import type { InspectorContext, InspectorSession, SessionSource, TextAt } from './session';
import { markerId } from '../pure/records';

/** How Browse Agent Sessions names each agent. */
const AGENT_LABEL: Record<AgentSessionFile['agent'], string> = {
  'claude-code': 'Claude Code',
  codex: 'Codex',
  'gemini-cli': 'Gemini CLI',
  'copilot-cli': 'Copilot CLI',
  'copilot-chat': 'Copilot (VS Code)',
  cline: 'Cline',
  'cline-extension': 'Cline (extension, before its SDK)',
  'roo-code': 'Roo Code',
  'kilo-code': 'Kilo Code',
  pi: 'pi',
  'qwen-code': 'Qwen Code',
  opencode: 'OpenCode',
  continue: 'Continue',
};

/** The Kilo Code extension (7 on ships Kilo's CLI as `bin/kilo` and runs it as its server). */
const KILO_CODE_EXTENSION = 'kilocode.kilo-code';

const VIEW_TYPE = 'spillway.inspector';
/** Opens the inspector when the window starts (the demo workspace sets it; off for everyone else). */
const OPEN_ON_STARTUP = 'inspector.openOnStartup';
/** Kept sessions are pruned this long after activation, then hourly, with the store's retention. */
const ARCHIVE_PRUNE_DELAY_MS = 15_000;
const ARCHIVE_PRUNE_INTERVAL_MS = 60 * 60 * 1000;
const INSPECTOR_COMMANDS = {
  open: 'spillway.openInspector',
  openTranscript: 'spillway.openTranscript',
  browseAgentSessions: 'spillway.browseAgentSessions',
} as const;

/**
 * What the inspector remembers per workspace, in `<workspace storage>/inspector.json`: the transcripts
 * opened (newest first) and the session shown last. A file written at once rather than
 * workspaceState, which VS Code flushes lazily and loses when the window reloads right after.
 */
interface Remembered {
  replayed?: string[];
  lastSession?: string;
}

class InspectorMemory {
  constructor(private readonly file: string) {}
  read(): Remembered {
    try {
      return JSON.parse(readFileSync(this.file, 'utf8')) as Remembered;
    } catch {
      return {};
    }
  }
  write(change: Remembered): void {
    try {
      mkdirSync(dirname(this.file), { recursive: true });
      writeFileSync(this.file, JSON.stringify({ ...this.read(), ...change }));
    } catch {
      /* remembering is a convenience */
    }
  }
}

export interface OpenTranscriptResult {
  sessionId: string;
  calls: number;
  missedIds: number;
  missRate: number;
}

export class Inspector implements vscode.Disposable {
  readonly replays: ReplaySource;
  readonly proxy: ProxySource;
  readonly api: ApiSource;
  /** Copilot chat turns through the spillway model vendor (recorded like proxy turns, their own folder) */
  readonly copilot: ProxySource;
  private readonly sources: SessionSource[];
  private panel: vscode.WebviewPanel | undefined;
  service: InspectorService | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly ctx: InspectorContext;
  private readonly memory: InspectorMemory;
  /** sessions kept on disk next to the store, by origin (API, replay, and any live source) */
  readonly archive: SessionArchive;

  constructor(private readonly host: SpillwayHost) {
    this.ctx = {
      store: () => host.store,
      config: () => host.config,
      projectedText: (handle, stage) => host.marker(handle, stage ? { stage } : undefined)?.text,
      recordProjection: (request, projected, reductions, at) =>
        host.recordProjection(request as object, projected as object, reductions, at),
      log: (line) => host.log.warn(line),
    };
    const memory = (this.memory = new InspectorMemory(join(host.baseDir, 'inspector.json')));
    this.archive = new SessionArchive(
      () => defaultArchiveDir(host.storeDir),
      (line) => host.log.warn(line),
    );
    this.replays = new ReplaySource(
      this.ctx,
      { get: () => memory.read().replayed ?? [], set: (replayed) => memory.write({ replayed }) },
      this.archive,
    );
    this.proxy = new ProxySource(this.ctx, () => defaultSessionsDir(host.storeDir));
    this.api = new ApiSource(this.ctx, this.archive);
    this.copilot = new ProxySource(this.ctx, () => copilotSessionsDir(host.storeDir), 2_000, 'copilot');
    this.sources = [this.proxy, this.replays, this.api, this.copilot];
    // the status bar shows what the sessions saved, and follows them
    host.statusTotals = () => sessionsStatus(this.sessionInfos());
    for (const src of this.sources) {
      const off = src.onDidChange(() => host.refreshStatus());
      this.disposables.push({ dispose: off });
    }
    setTimeout(() => host.refreshStatus(), 0);
    const prune = () => {
      const n = this.archive.prune(host.storage.retentionDays);
      if (n > 0) host.log.info(`pruned ${n} inspector sessions not used for ${host.storage.retentionDays} days`);
    };
    const first = setTimeout(prune, ARCHIVE_PRUNE_DELAY_MS);
    const every = setInterval(prune, ARCHIVE_PRUNE_INTERVAL_MS);
    this.disposables.push({ dispose: () => (clearTimeout(first), clearInterval(every)) });
    if (vscode.workspace.getConfiguration(SECTION).get<boolean>(OPEN_ON_STARTUP) === true) {
      setTimeout(() => void this.show(), 0);
    }
    this.disposables.push(
      host.onDidProject((e) => this.api.record(e.session, e.request, e.result)),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration(SECTION)) return;
        // the host rebuilt its engine first (it registered its listener earlier): replays follow the new caps
        this.replays.rerunAll();
        this.service?.settingsChanged();
      }),
      vscode.window.registerWebviewPanelSerializer(VIEW_TYPE, {
        deserializeWebviewPanel: async (panel) => this.attach(panel),
      }),
      vscode.commands.registerCommand(INSPECTOR_COMMANDS.open, () => this.show()),
      vscode.commands.registerCommand(INSPECTOR_COMMANDS.openTranscript, (uri?: vscode.Uri | string) => this.openTranscript(uri)),
      vscode.commands.registerCommand(INSPECTOR_COMMANDS.browseAgentSessions, (opts?: { home?: string; pick?: string }) =>
        this.browseAgentSessions(opts),
      ),
    );
  }

  /** Every session of every source (for the status bar). */
  sessionInfos() {
    const out = [];
    for (const src of this.sources) {
      try {
        out.push(...src.list());
      } catch {
        /* a source that cannot list counts nothing */
      }
    }
    return out;
  }

  /** Opens the panel (or reveals it) and resolves when the webview is listening. */
  async show(sessionId?: string): Promise<boolean> {
    if (this.panel) this.panel.reveal(undefined, false);
    else {
      const root = this.host.context.extensionUri;
      const panel = vscode.window.createWebviewPanel(VIEW_TYPE, 'Spillway Inspector', vscode.ViewColumn.Active, {
        enableScripts: true,
        // the webview's own Find (Ctrl+F) searches what is shown, the projected text included
        enableFindWidget: true,
        localResourceRoots: [vscode.Uri.joinPath(root, 'dist'), vscode.Uri.joinPath(root, 'media')],
      });
      this.attach(panel);
    }
    if (sessionId) this.service?.notify('host/showSession', { sessionId });
    return true;
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    this.service?.dispose();
    this.panel = panel;
    const root = this.host.context.extensionUri;
    panel.iconPath = {
      light: vscode.Uri.joinPath(root, 'media', 'inspector-light.svg'),
      dark: vscode.Uri.joinPath(root, 'media', 'inspector-dark.svg'),
    };
    panel.webview.options = {
      enableScripts: true,
      localResourceRoots: [vscode.Uri.joinPath(root, 'dist'), vscode.Uri.joinPath(root, 'media')],
    };
    const w = panel.webview;
    panel.webview.html = inspectorHtml({
      cspSource: w.cspSource,
      nonce: newNonce(),
      scriptUri: w.asWebviewUri(vscode.Uri.joinPath(root, 'dist', 'webview.js')).toString(),
      styleUri: w.asWebviewUri(vscode.Uri.joinPath(root, 'dist', 'webview.css')).toString(),
    });
    const service = new InspectorService(this.sources, this.actions(), (m) => void w.postMessage(m));
    this.service = service;
    // the webview keeps its own state too, but VS Code may not have saved its latest before a reload
    const last = this.memory.read().lastSession;
    if (last && service.sessions().some((s) => s.id === last)) service.notify('host/showSession', { sessionId: last });
    const subs = [
      w.onDidReceiveMessage((m) => service.receive(m)),
      // a hidden webview is torn down (no retainContextWhenHidden): hold messages until it is ready again
      panel.onDidChangeViewState(() => {
        if (!panel.visible) service.reset();
      }),
      panel.onDidDispose(() => {
        for (const s of subs) s.dispose();
        service.dispose();
        if (this.panel === panel) {
          this.panel = undefined;
          this.service = undefined;
        }
      }),
    ];
  }

  private actions(): InspectorActions {
    const host = this.host;
    return {
      config: () => host.config,
      // beside the inspector, never over it, and in the group already there (a second output or a
      // Compare after Open stored output reuses it rather than opening a third group)
      openStored: async (handle, _session, find) =>
        vscode.commands.executeCommand(COMMANDS.openStoredOutput, handle, { ...this.besideInspector(), ...(find ? { find } : {}) }),
      compare: async (handle, session, at) => {
        // the marker of the turn the result was chosen in (an output offloaded in turn 11 and cleared in 22 has two)
        const marker = this.rememberProjection(handle, session, at);
        return vscode.commands.executeCommand(COMMANDS.compare, handle, { ...this.besideInspector(), ...(marker ? { marker } : {}) });
      },
      copyHandle: async (handle) => {
        // not awaited: a browser-hosted workbench may hold the clipboard write until the page has focus
        void Promise.resolve(vscode.env.clipboard.writeText(handle)).catch((e) =>
          host.log.warn(`could not copy ${handle}: ${errorText(e)}`),
        );
        vscode.window.setStatusBarMessage(`Spillway: copied ${handle}`, 5000);
      },
      saveCaps: (caps, target) => this.saveCaps(caps, target),
      opened: (sessionId) => this.memory.write({ lastSession: sessionId }),
      // a notification with Cancel, as Open Transcript's replay has; a newer request (signal) stops it too
      progress: async (title, signal, task) =>
        await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title, cancellable: true },
          async (progress, token) => {
            const abort = new AbortController();
            const stop = () => abort.abort(signal.aborted ? signal.reason : new Error('cancelled'));
            const sub = token.onCancellationRequested(stop);
            signal.addEventListener('abort', stop, { once: true });
            try {
              return await task((message) => progress.report({ message }), abort.signal);
            } finally {
              sub.dispose();
              signal.removeEventListener('abort', stop);
            }
          },
        ),
      log: (level, line) => (level === 'error' ? host.log.error(line) : level === 'warn' ? host.log.warn(line) : host.log.info(line)),
    };
  }

  /**
   * Where the inspector opens an editor: the group to its right, else the one to its left, else a new
   * group to its right. VS Code's own Beside is beside the ACTIVE editor, so after Open stored output
   * (which makes that output active) Compare would open a third group and squeeze the inspector.
   */
  private besideInspector(): { viewColumn: number } | { beside: true } {
    const at = this.panel?.viewColumn;
    if (at === undefined) return { beside: true };
    const columns = vscode.window.tabGroups.all.map((g) => g.viewColumn).sort((a, b) => a - b);
    const right = columns.find((c) => c > at);
    const left = columns.filter((c) => c < at).pop();
    return { viewColumn: right ?? left ?? at + 1 };
  }

  /**
   * Gives Compare the projected side the inspector shows: the marker sent in turn `at` (a replayed or
   * proxied result was never projected by this window; an API one may have been reduced again later),
   * folded into the host's record of the output. Returns the marker's id, or undefined when the
   * session cannot say (Compare then shows the newest recorded).
   */
  private rememberProjection(handle: string, session: InspectorSession | undefined, at?: TextAt): string | undefined {
    if (!session) return undefined;
    const marker = session.text(handle, 'projected', 0, Number.MAX_SAFE_INTEGER, at);
    if (marker.unavailable) return undefined;
    const turns = at ? [at.turn] : [...Array(session.info.turns).keys()].reverse();
    for (const i of turns) {
      let detail;
      try {
        detail = session.detail(i);
      } catch {
        continue;
      }
      const pick = (x: { handle: string; callId: string }) => x.handle === handle && (at?.callId === undefined || x.callId === at.callId);
      const found = detail.results.find(pick);
      const input = found ? undefined : detail.inputs?.find(pick);
      const r = found ?? input;
      if (!r) continue;
      const source = session.callSource?.(i, r.callId);
      const sourcePath = input ? (source?.writes?.[0] ?? source?.path) : source?.path;
      const time = new Date().toISOString();
      return this.host.addRecord({
        handle,
        tool: r.tool,
        callId: r.callId,
        markers: [
          {
            id: markerId(marker.text),
            text: marker.text,
            stage: found ? found.stage : 'input',
            reason: r.reason,
            time,
            turn: i,
            session: session.info.id,
          },
        ],
        ...(sourcePath ? { sourcePath } : {}),
        ...(source?.command && !(input && sourcePath) ? { command: source.command } : {}),
        ...(input ? { input: true } : {}),
        time,
      });
    }
    return undefined;
  }

  /** Writes each changed cap through Set Cap for Tool (the extension's one settings writer). */
  private async saveCaps(
    caps: Record<string, CapChoice>,
    target?: 'workspace' | 'user' | 'ask',
  ): Promise<Record<string, CapValue> | undefined> {
    const hasFolder = (vscode.workspace.workspaceFolders?.length ?? 0) > 0;
    let where: 'workspace' | 'user' = target === 'workspace' || target === 'user' ? target : hasFolder ? 'workspace' : 'user';
    if (target === 'ask') {
      const picked = await vscode.window.showQuickPick(
        [
          ...(hasFolder
            ? [{ label: 'Workspace settings', description: 'this folder only (.vscode/settings.json)', target: 'workspace' as const }]
            : []),
          { label: 'User settings', description: 'every window', target: 'user' as const },
        ],
        {
          title: `Spillway: save ${Object.keys(caps).length === 1 ? 'this cap' : `${Object.keys(caps).length} caps`} to spillway.toolCaps`,
          placeHolder: 'Where should the caps be saved?',
        },
      );
      if (!picked) return undefined;
      where = picked.target;
    }
    for (const [tool, cap] of Object.entries(caps)) {
      await vscode.commands.executeCommand(COMMANDS.setToolCap, tool, cap, where);
    }
    const written = vscode.workspace.getConfiguration(SECTION).get<Record<string, CapValue>>('toolCaps') ?? {};
    this.host.log.info(`inspector: saved toolCaps ${JSON.stringify(caps)} (${where})`);
    const list = Object.entries(caps)
      .map(([t, c]) => `${t}: ${c}`)
      .join(', ');
    this.host.notify('info', `Spillway saved ${list} to spillway.toolCaps in ${where} settings.`);
    return written;
  }

  /**
   * Spillway: Open Transcript…: replays a session file and shows it in the inspector; `instance`, a
   * session inside the file other than its own (a Copilot CLI sub-agent's `task` call id).
   */
  async openTranscript(target?: vscode.Uri | string, instance?: string): Promise<OpenTranscriptResult | undefined> {
    let path = typeof target === 'string' ? target : target?.fsPath;
    if (!path) {
      const picked = await vscode.window.showOpenDialog({
        title: 'Spillway: Open Transcript',
        canSelectMany: false,
        openLabel: 'Replay',
        filters: { 'Agent transcripts': ['jsonl', 'json', 'traj'], 'All files': ['*'] },
      });
      path = picked?.[0]?.fsPath;
      if (!path) return undefined;
    }
    const file = path;
    try {
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Spillway: replaying ${basename(file)}`, cancellable: true },
        async (progress, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort(new Error('cancelled')));
          try {
            let last = 0;
            const transcript = await readTranscript(file, {
              ...(instance !== undefined ? { instance } : {}),
              signal: abort.signal,
              onProgress: (read, total) => {
                const pct = total ? Math.floor((read / total) * 50) : 0;
                if (pct > last)
                  progress.report({ increment: pct - last, message: `reading (${formatCount(read)} of ${formatCount(total)} bytes)` });
                last = Math.max(last, pct);
              },
            });
            progress.report({ increment: Math.max(0, 50 - last), message: `projecting ${transcript.calls.length} calls` });
            if (abort.signal.aborted) return undefined;
            // the replay yields between calls, so Cancel stops it there and the window stays responsive
            let done = 0;
            // what each call's new reductions sent: the stored outputs open titled by their source, and each turn keeps its markers
            const marks = collectMarkers(recordFor(this.ctx));
            const result = await replayAsync(transcript, {
              config: this.host.config,
              store: this.host.store,
              detail: true,
              signal: abort.signal,
              onProjection: marks.onProjection,
              onCall: (k, total) => {
                const pct = Math.floor(((k + 1) / total) * 50);
                if (pct > done) progress.report({ increment: pct - done, message: `projected ${k + 1} of ${total} calls` });
                done = Math.max(done, pct);
              },
            });
            const info = statSync(file);
            const session = this.replays.add(
              replayKey(file, instance),
              transcript,
              result,
              info.size,
              info.mtime.toISOString(),
              true,
              marks.markers,
            );
            this.host.log.info(
              `inspector: replayed ${file}: ${result.totals.calls} calls, ${formatCount(result.totals.originalTokens)} → ${formatCount(result.totals.projectedTokens)} tokens, ${result.totals.missedIds} missed identifiers`,
            );
            await this.show(session.id);
            return {
              sessionId: session.id,
              calls: result.totals.calls,
              missedIds: result.totals.missedIds,
              missRate: result.totals.missRate,
            };
          } finally {
            sub.dispose();
          }
        },
      );
    } catch (e) {
      if ((e as Error)?.message === 'cancelled') return undefined;
      this.host.notify('error', `Spillway: could not replay ${basename(file)}: ${errorText(e)}`);
      return undefined;
    }
  }

  /**
   * The OpenCode-family CLI that lists and exports `agent`'s sessions: `opencode`, or Kilo's `kilo`
   * (on the PATH, else the one the Kilo Code extension ships and runs as its server).
   */
  private openCodeFamilyBinary(agent: 'opencode' | 'kilo-code', env: NodeJS.ProcessEnv, home: string): string | undefined {
    if (agent === 'opencode') return openCodeBinary(env, home);
    const ext = vscode.extensions.getExtension(KILO_CODE_EXTENSION)?.extensionPath;
    return kiloBinary(env, home, ext ? [ext] : []);
  }

  /**
   * OpenCode's and Kilo's sessions of `folder`, as `opencode session list` and `kilo session list`
   * give them (their databases are not read here: opencodeSessions.ts), each listed by where its export
   * will be written; none of one, with a line in the log saying why, when its CLI is not installed or fails.
   */
  private async openCodeListed(folder: string, home: string, env: NodeJS.ProcessEnv): Promise<AgentSessionFile[]> {
    const out: AgentSessionFile[] = [];
    for (const agent of ['opencode', 'kilo-code'] as const) {
      const bin = this.openCodeFamilyBinary(agent, env, home);
      if (!bin) continue;
      try {
        const dir = join(this.host.baseDir, agent === 'opencode' ? 'opencode-exports' : 'kilo-exports');
        for (const s of await openCodeSessions(bin, folder, env))
          out.push({
            agent,
            file: openCodeExportPath(dir, s.id),
            bytes: 0,
            modified: s.modified,
            ...(s.title ? { name: s.title } : {}),
            opencodeId: s.id,
          });
      } catch (e) {
        this.host.log.warn(`Browse Agent Sessions: ${AGENT_LABEL[agent]}'s sessions are not listed: ${errorText(e)}`);
      }
    }
    return out;
  }

  /** Spillway: Browse Agent Sessions: the Claude Code, Codex, Gemini CLI, Copilot CLI, Copilot chat, Cline, Roo Code, Kilo Code, pi, Qwen Code, Continue and OpenCode sessions of the open folder. */
  async browseAgentSessions(opts?: { home?: string; pick?: string }): Promise<OpenTranscriptResult | { files: string[] } | undefined> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!folder) {
      this.host.notify('info', 'Spillway: open a folder first; agent sessions are listed for the folder they ran in.');
      return undefined;
    }
    const home = opts?.home ?? homedir();
    // Gemini CLI keeps .gemini under GEMINI_CLI_HOME when set, Cline and pi their data under their own
    // variables; a test's fake home stands for all of them
    const env = opts?.home !== undefined ? {} : process.env;
    // Cline's extension before its SDK, Roo Code and Kilo Code keep their tasks in VS Code's global
    // storage, beside Spillway's own folder there (a test's fake home holds a `globalStorage` for it)
    const globalStorage = opts?.home !== undefined ? join(home, 'globalStorage') : dirname(this.host.context.globalStorageUri.fsPath);
    // Copilot's chat keeps its sessions in the folder's workspace storage, beside Spillway's own folder there
    const storage = this.host.context.storageUri;
    const workspaceStorage = opts?.home !== undefined ? join(home, 'workspaceStorage') : storage ? dirname(storage.fsPath) : undefined;
    const found = [
      ...agentSessions(
        home,
        folder,
        env.GEMINI_CLI_HOME || home,
        clineDataDir(home, env),
        piAgentDir(home, env),
        continueDir(home, env),
        globalStorage,
        workspaceStorage,
      ),
      ...(await this.openCodeListed(folder, home, env)),
    ];
    if (found.length === 0) {
      const message = `Spillway found no Claude Code (~/.claude/projects), Codex (~/.codex/sessions), Gemini CLI (~/.gemini/tmp/…/chats), Copilot CLI (~/.copilot/session-state), Copilot chat (VS Code's workspace storage), Cline (~/.cline/data/sessions), Cline, Roo Code or Kilo Code extension tasks (VS Code's global storage), pi (~/.pi/agent/sessions), Qwen Code (~/.qwen/projects), Continue (~/.continue/sessions), OpenCode (opencode session list) or Kilo Code 7 (kilo session list) sessions for ${folder}.`;
      this.host.notices.push({ level: 'info', message });
      if (opts?.pick === undefined) {
        void vscode.window.showInformationMessage(message, 'Open Transcript…').then((choice) => {
          if (choice) void this.openTranscript();
        });
      }
      return { files: [] };
    }
    // a sub-agent inside its parent's file is listed, and picked, by the file and its instance
    const keyOf = (f: AgentSessionFile) => replayKey(f.file, f.instance);
    if (opts?.pick === '') return { files: found.map(keyOf) };
    let chosen = opts?.pick !== undefined ? found.find((f) => keyOf(f) === opts.pick || basename(keyOf(f)) === opts.pick) : undefined;
    if (!chosen) {
      const picked = await vscode.window.showQuickPick(
        found.map((f) => {
          // named by what it was (its title or first prompt), its project and day; the file in the detail
          const name =
            f.instance !== undefined
              ? `${f.name ?? 'sub-agent'} (task call ${f.instance})`
              : f.opencodeId !== undefined
                ? (f.name ?? f.opencodeId)
                : sessionName(f.file);
          // (an OpenCode session is in OpenCode's database until picked: no file size yet)
          const size = f.opencodeId !== undefined ? '' : ` · ${formatCount(Math.ceil(f.bytes / 1024))} KB`;
          return {
            label: f.parent ? `$(debug-stackframe-dot) ${name}` : name,
            description: `${AGENT_LABEL[f.agent]}${f.parent ? ' sub-agent' : ''}${size} · last written ${new Date(f.modified).toLocaleString()}`,
            detail:
              f.opencodeId !== undefined
                ? `${f.opencodeId}: exported with ${f.agent === 'kilo-code' ? 'kilo' : 'opencode'} export when picked`
                : f.file,
            session: f,
          };
        }),
        { title: 'Spillway: Browse Agent Sessions', placeHolder: `Sessions of ${basename(folder)}, newest first`, matchOnDetail: true },
      );
      chosen = picked?.session;
    }
    if (chosen?.opencodeId !== undefined) {
      const id = chosen.opencodeId;
      const agent = chosen.agent === 'kilo-code' ? 'kilo-code' : 'opencode';
      const bin = this.openCodeFamilyBinary(agent, env, home);
      const who = AGENT_LABEL[agent];
      try {
        if (!bin) throw new Error(`the ${agent === 'kilo-code' ? 'kilo' : 'opencode'} binary is no longer found`);
        await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `Spillway: exporting ${who} session ${id}…` },
          () => exportOpenCodeSession(bin, id, folder, dirname(chosen!.file), env),
        );
      } catch (e) {
        this.host.notify('error', `Spillway: could not export ${who} session ${id}: ${errorText(e)}`);
        return undefined;
      }
    }
    return chosen ? this.openTranscript(chosen.file, chosen.instance) : undefined;
  }

  dispose(): void {
    this.panel?.dispose();
    this.service?.dispose();
    for (const s of this.sources) s.dispose();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
