/**
 * The inspector's host side, without `vscode`: receives the webview's messages, validates them
 * against the protocol, answers requests from the session sources, and posts notifications only
 * after the webview said `webview/ready`. The panel (panel.ts) wires it to a real WebviewPanel and
 * to VS Code's commands; the browser tests and the benchmark wire the same service to Chromium.
 */
import { capFor, type SpillwayConfig } from '../../engine';
import {
  checkResult,
  errorResponse,
  isCommand,
  notification,
  parseWebviewMessage,
  response,
  type CapChoice,
  type CapValue,
  type NotificationMethod,
  type NotificationParams,
  type RequestMessage,
  type SessionInfo,
  type SessionView,
  type ToolCap,
  type WebviewMessage,
} from '../../protocol';
import { priceChoices } from './prices';
import { totalsOf, type InspectorSession, type SessionSource, type TextAt } from './session';

/** Most turns a search names; the webview says when there were more. */
const MAX_SEARCH_TURNS = 10_000;
/** With more caps changed at once than this, the dry run reports only the total, not each tool's share. */
const MAX_PER_TOOL_DRY_RUNS = 4;

/** What the service asks of its host (VS Code, or a test stub). */
export interface InspectorActions {
  config(): SpillwayConfig;
  /** `find`: open at the first line holding it (a missed identifier) */
  openStored(handle: string, session: InspectorSession | undefined, find?: string): Promise<unknown>;
  /** `at`: the turn (and call) whose marker to compare with */
  compare(handle: string, session: InspectorSession | undefined, at?: TextAt): Promise<unknown>;
  copyHandle(handle: string): Promise<unknown>;
  /** writes spillway.toolCaps; resolves with the caps now in force, or undefined when the user cancelled (`ask`) */
  saveCaps(caps: Record<string, CapChoice>, target?: 'workspace' | 'user' | 'ask'): Promise<Record<string, CapValue> | undefined>;
  log(level: 'info' | 'warn' | 'error', line: string): void;
  /** the session the webview opened last (the panel shows it again after a reload) */
  opened?(sessionId: string): void;
  /**
   * Runs a long task with the host's own progress and Cancel (VS Code's notification): `task` gets
   * a signal that stops when the user cancels or `signal` aborts, and a reporter for what runs.
   */
  progress?<T>(
    title: string,
    signal: AbortSignal,
    task: (report: (message: string) => void, signal: AbortSignal) => Promise<T>,
  ): Promise<T>;
}

export function mergeCaps(base: SpillwayConfig['toolCaps'], changes: Record<string, CapChoice> | null): SpillwayConfig['toolCaps'] {
  const out = { ...base };
  for (const [tool, cap] of Object.entries(changes ?? {})) {
    if (cap === 'default') delete out[tool];
    else out[tool] = cap;
  }
  return out;
}

export class InspectorService {
  private ready = false;
  private readonly queue: unknown[] = [];
  private readonly unsubscribe: (() => void)[] = [];
  /** the session the webview shows (for live appends and cap listings) */
  private current: InspectorSession | undefined;
  private dryRunAbort: AbortController | undefined;
  /** the replays run on request under way, one of each kind (`exclusive`): the limit, the session as sent elsewhere */
  private readonly onRequest = new Map<'limits' | 'routed', AbortController>();
  /** messages dropped because they failed validation (tests read it) */
  dropped = 0;
  /** the last handled request of each method, for tests */
  readonly handled = new Map<string, number>();

  constructor(
    private readonly sources: readonly SessionSource[],
    private readonly actions: InspectorActions,
    private readonly post: (message: unknown) => void,
  ) {
    for (const s of sources) {
      this.unsubscribe.push(
        s.onDidChange((e) => {
          if (e.appended && e.sessionId) this.notify('session/turnsAppended', { sessionId: e.sessionId, turns: e.appended });
          if (e.reloaded && e.sessionId) this.notify('session/reloaded', { sessionId: e.sessionId });
          this.notify('sessions/changed', { sessions: this.sessions() });
        }),
      );
    }
  }

  get isReady(): boolean {
    return this.ready;
  }

  /** Posts a notification, or holds it until the webview is ready. */
  notify<M extends NotificationMethod>(method: M, params: NotificationParams<M>): void {
    const m = notification(method, params);
    if (this.ready) this.post(m);
    else if (method !== 'sessions/changed') this.queue.push(m); // the ready answer lists sessions anyway
  }

  /** The webview was reloaded (hidden and shown, or restored): wait for its ready again. */
  reset(): void {
    this.ready = false;
  }

  sessions(): SessionInfo[] {
    const all: SessionInfo[] = [];
    for (const s of this.sources) {
      try {
        all.push(...s.list());
      } catch (e) {
        this.actions.log('warn', `inspector: listing ${s.origin} sessions failed: ${String(e)}`);
      }
    }
    return all.sort((a, b) => b.modified.localeCompare(a.modified) || a.title.localeCompare(b.title));
  }

  async session(id: string): Promise<InspectorSession> {
    const origin = id.slice(0, id.indexOf(':'));
    // several sources may share an origin (a live source and its kept sessions): the first that knows the id answers
    for (const source of this.sources) {
      if (source.origin !== origin) continue;
      const s = await source.open(id);
      if (s) return s;
    }
    throw new Error(`no session ${id}`);
  }

  caps(session: InspectorSession | undefined): ToolCap[] {
    const config = this.actions.config();
    const counts = session?.tools() ?? new Map<string, number>();
    const whole = session?.keptWhole?.() ?? new Map<string, { results: number; why: string }>();
    const tools = new Set([...counts.keys(), ...whole.keys(), ...Object.keys(config.toolCaps).filter((t) => !t.includes('*'))]);
    return [...tools].sort().map((tool) => ({
      tool,
      cap: capFor(config, [tool]),
      explicit: config.toolCaps[tool] !== undefined,
      reducedTurns: counts.get(tool) ?? 0,
      ...(whole.has(tool) ? { keptWhole: whole.get(tool)! } : {}),
    }));
  }

  /** Call after the settings changed: the caps shown follow them. */
  settingsChanged(): void {
    this.notify('caps/changed', { caps: this.caps(this.current), defaultCap: this.actions.config().defaultCap });
  }

  /** Everything the webview posts goes through here. */
  async receive(data: unknown): Promise<void> {
    const parsed = parseWebviewMessage(data);
    if (!parsed.ok) {
      this.dropped++;
      this.actions.log('warn', `inspector: dropped an invalid message from the webview: ${parsed.error}`);
      return;
    }
    const m: WebviewMessage = parsed.message;
    if (m.kind === 'request') return this.answer(m);
    try {
      if (isCommand(m, 'webview/ready')) {
        this.ready = true;
        this.post(notification('sessions/changed', { sessions: this.sessions() }));
        for (const q of this.queue.splice(0)) this.post(q);
      } else if (isCommand(m, 'webview/log')) {
        this.actions.log(m.params.level, `inspector webview: ${m.params.message}`);
      } else if (isCommand(m, 'result/openStored')) {
        await this.actions.openStored(m.params.handle, this.current, m.params.find);
      } else if (isCommand(m, 'result/compare')) {
        const { turn, callId } = m.params;
        await this.actions.compare(m.params.handle, this.current, turn !== undefined ? { turn, ...(callId ? { callId } : {}) } : undefined);
      } else if (isCommand(m, 'result/copyHandle')) {
        await this.actions.copyHandle(m.params.handle);
      }
    } catch (e) {
      this.actions.log('error', `inspector: ${m.method} failed: ${String(e)}`);
    }
  }

  private async answer(m: RequestMessage): Promise<void> {
    let result: unknown;
    try {
      result = await this.handle(m);
      this.post(response(m.id, m.method, checkResult(m.method, result)));
      this.handled.set(m.method, (this.handled.get(m.method) ?? 0) + 1);
    } catch (e) {
      const text = e instanceof Error ? e.message : String(e);
      this.actions.log('warn', `inspector: ${m.method} failed: ${text}`);
      this.post(errorResponse(m.id, m.method, text));
    }
  }

  private async handle(m: RequestMessage): Promise<unknown> {
    switch (m.method) {
      case 'sessions/list':
        return { sessions: this.sessions() };
      case 'session/open': {
        const s = await this.session(m.params.sessionId);
        this.current = s;
        this.actions.opened?.(s.info.id);
        const config = this.actions.config();
        const view: SessionView = {
          session: s.info,
          prices: priceChoices(s.info.model),
          turns: s.turns(),
          caps: this.caps(s),
          defaultCap: config.defaultCap,
          capUnit: config.capUnit,
        };
        return view;
      }
      case 'turn/detail':
        return (await this.session(m.params.sessionId)).detail(m.params.turn);
      case 'text/page': {
        const p = m.params;
        const at = p.turn !== undefined ? { turn: p.turn, ...(p.callId ? { callId: p.callId } : {}) } : undefined;
        return (await this.session(p.sessionId)).text(p.handle, p.side, p.offset, p.limit, at);
      }
      case 'result/page': {
        const p = m.params;
        return (await this.session(p.sessionId)).resultPage(p.turn, p.callId, p.offset, p.limit);
      }
      case 'search/results':
        return (await this.session(m.params.sessionId)).search(m.params.query, MAX_SEARCH_TURNS);
      case 'caps/dryRun': {
        const s = await this.session(m.params.sessionId);
        this.dryRunAbort?.abort();
        const abort = new AbortController();
        this.dryRunAbort = abort;
        const base = this.actions.config();
        const config = { ...base, toolCaps: mergeCaps(base.toolCaps, m.params.caps) };
        this.notify('host/progress', { message: `re-projecting ${s.info.turns} turns…` });
        try {
          const turns = m.params.caps === null ? s.turns() : await s.dryRun(config, abort.signal);
          const changed = Object.keys(m.params.caps ?? {});
          const perTool: Record<string, ReturnType<typeof totalsOf>> = {};
          if (changed.length === 1) perTool[changed[0]!] = totalsOf(turns);
          else if (changed.length > 1 && changed.length <= MAX_PER_TOOL_DRY_RUNS) {
            // each change alone, so the panel can say what each tool's new cap does
            for (const tool of changed) {
              const one = { ...base, toolCaps: mergeCaps(base.toolCaps, { [tool]: m.params.caps![tool]! }) };
              perTool[tool] = totalsOf(await s.dryRun(one, abort.signal));
            }
          }
          const clear = { enabled: config.clear.enabled, triggerTokens: config.clear.triggerTokens, schedule: config.clear.schedule };
          return { turns, totals: totalsOf(turns), ...(Object.keys(perTool).length ? { perTool } : {}), clear };
        } finally {
          if (this.dryRunAbort === abort) this.notify('host/progress', { message: null });
        }
      }
      case 'session/limits': {
        const s = await this.session(m.params.sessionId);
        const limits = s.limits?.bind(s);
        if (!limits) throw new Error(`the limit is measured for replayed transcripts only, not for ${s.info.origin} sessions`);
        return this.exclusive(
          'limits',
          `Spillway: measuring the limit of ${s.info.title}`,
          'a newer measurement started',
          (report, signal) => limits(signal, report),
        );
      }
      case 'session/routed': {
        const s = await this.session(m.params.sessionId);
        const routed = s.routed?.bind(s);
        if (!routed) throw new Error(`a session is replayed as sent elsewhere only from its transcript, not for ${s.info.origin} sessions`);
        const { costModel } = m.params;
        return this.exclusive(
          'routed',
          `Spillway: replaying ${s.info.title} as sent to ${costModel}`,
          'a newer replay started',
          (report, signal) => routed(costModel, signal, report),
        );
      }
      case 'caps/save': {
        const toolCaps = await this.actions.saveCaps(m.params.caps, m.params.target);
        return toolCaps ? { toolCaps } : { toolCaps: this.actions.config().toolCaps, cancelled: true };
      }
    }
  }

  /**
   * Runs a replay asked for on request (`kind`), one of each kind at a time: a newer request stops the
   * one before with `newer`; under the host's progress (cancellable) when it has one.
   */
  private async exclusive<T>(
    kind: 'limits' | 'routed',
    title: string,
    newer: string,
    task: (report: (message: string) => void, signal: AbortSignal) => Promise<T>,
  ): Promise<T> {
    this.onRequest.get(kind)?.abort(new Error(newer));
    const abort = new AbortController();
    this.onRequest.set(kind, abort);
    try {
      return await (this.actions.progress ? this.actions.progress(title, abort.signal, task) : task(() => undefined, abort.signal));
    } finally {
      if (this.onRequest.get(kind) === abort) this.onRequest.delete(kind);
    }
  }

  dispose(): void {
    this.dryRunAbort?.abort();
    for (const abort of this.onRequest.values()) abort.abort();
    for (const u of this.unsubscribe.splice(0)) u();
  }
}
