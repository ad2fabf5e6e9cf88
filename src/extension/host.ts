/**
 * The extension's state for one window: the engine built from the current settings, the workspace
 * store, what the projections of this window reduced, and the log.
 *
 * Everything that reacts to VS Code (commands, documents, the read tool, the status bar) goes through
 * this one object, so a settings change that rebuilds the engine is seen by all of them at once.
 */
import * as vscode from 'vscode';
import { readFileSync, readdirSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { CONFIG_KEYS, createEngine, createSessionStore, parseConfig } from '../engine/index';
import type { Engine, Projection, SpillwayConfig } from '../engine/index';
import { isHandle } from '../engine/handle';
import { SpillwayError, whenStored, type InputReduction, type OutputSink, type Reduction, type WireFormat } from '../engine/types';
import { openBackgroundStore, type FileStore } from '../store/store';
import { mkdirPrivate, PRIVATE_FILE_MODE, tightenPrivate } from '../store/private';
import {
  configInputFromSettings,
  problemWarning,
  readStorageSettings,
  resolveStoreFolder,
  settingProblems,
  SECTION,
  type SettingProblem,
  type StorageSettings,
} from './pure/settings';
import { defaultSessionsDir } from '../proxy/recording';
import { defaultArchiveDir } from './inspector/archive';
import { documentExtension, documentPath, inputDocument, markerSegment, SCHEME } from './pure/documents';
import {
  latestMarker,
  mergeRecords,
  PROJECTED_DIR,
  projectedRecords,
  readRecord,
  recordCallIds,
  withInputStage,
  type MarkerRecord,
  type ProjectedRecord,
  type RecordedAt,
  type RecordedReduction,
} from './pure/records';
import { formatCount, statusText } from './pure/format';

export type { ProjectedRecord } from './pure/records';

export interface ProjectOptions {
  session?: string;
  /** not shown as an API session: the caller records the turn in its own source (Copilot's chat turns) */
  silent?: boolean;
  /** when the request is sent, in ms since the epoch (default: now); the engine's `ProjectOptions.at` */
  at?: number;
  /** the provider it goes to (`anthropic`, `openai`, `openai-4o`); the engine's `ProjectOptions.provider` */
  provider?: string;
}

/**
 * A projection that was not released: its outputs could not be stored, so the original request
 * goes instead (fail open) and `failOpen` says why.
 */
export type HostProjection = Projection & { failOpen?: string };

export interface ProjectEvent {
  request: string | object;
  result: Projection;
  session: string | undefined;
}

export type ReadOptions = Parameters<FileStore['read']>[1];

/** How long a background prune waits after activation, so it never competes with startup. */
const FIRST_PRUNE_DELAY_MS = 10_000;
/** After the retention settings change, prune this soon (debounced by the settings UI anyway). */
const SETTINGS_PRUNE_DELAY_MS = 1_000;
/** Pruning is cheap (one index scan); hourly is plenty for limits measured in days and megabytes. */
const PRUNE_INTERVAL_MS = 60 * 60 * 1000;

export class SpillwayHost implements vscode.Disposable {
  engine!: Engine;
  private readonly sessions = createSessionStore();
  /** problems with the current settings, each already warned about once */
  problems: SettingProblem[] = [];
  storage!: StorageSettings;
  savedTokens = 0;
  projections = 0;
  /** every message shown to the user through `notify`, newest last (the test bridge reads it) */
  readonly notices: { level: 'info' | 'warning' | 'error'; message: string }[] = [];

  /** the workspace's own storage folder (storageUri, or globalStorageUri without a folder) */
  readonly baseDir: string;
  /** the store folder in force: `spillway.storage.folder`, or `<baseDir>/store` */
  storeDir: string;
  /** the marker texts of this store's reductions (for Compare Original and Projected) live beside its objects */
  get projectedDir(): string {
    return join(this.storeDir, PROJECTED_DIR);
  }
  private storeInstance: FileStore | undefined;
  /** the owner-only pass over the store folder in force (tests await it) */
  tightening: Promise<unknown> = Promise.resolve();
  private readonly records = new Map<string, ProjectedRecord>();
  private loaded = false;
  /** document extension (language) per handle */
  private readonly extensions = new Map<string, string>();
  private readonly warned = new Set<string>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly changeEmitter = new vscode.EventEmitter<void>();
  /** fires after a projection stored something or the store was cleared */
  readonly onDidChangeStore = this.changeEmitter.event;
  private readonly projectEmitter = new vscode.EventEmitter<ProjectEvent>();
  /** fires after every projection made through `project` (the inspector shows them as API sessions) */
  readonly onDidProject = this.projectEmitter.event;
  private readonly engineEmitter = new vscode.EventEmitter<Engine>();
  /** fires after the settings rebuilt the engine (the proxy projects later calls with it) */
  readonly onDidChangeEngine = this.engineEmitter.event;
  /** the configuration the engine was built from (the inspector's dry runs start from it) */
  config!: SpillwayConfig;
  private readonly status: vscode.StatusBarItem;

  constructor(
    readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
  ) {
    this.baseDir = (context.storageUri ?? context.globalStorageUri).fsPath;
    this.storeDir = join(this.baseDir, 'store');
    this.status = vscode.window.createStatusBarItem('spillway.saved', vscode.StatusBarAlignment.Right, 100);
    this.status.name = 'Spillway';
    this.status.command = 'spillway.openInspector';
    this.status.tooltip = 'Tokens Spillway kept out of model calls in this window. Click to open the inspector.';
    this.updateStatus();
    this.status.show();
    this.disposables.push(this.status, this.changeEmitter, this.projectEmitter, this.engineEmitter);

    this.reloadSettings();
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(SECTION)) this.reloadSettings();
      }),
    );
    // timed prunes run in the background, in slices (FileStore.pruneInBackground), never stalling the editor
    const first = setTimeout(() => void this.pruneInBackground(), FIRST_PRUNE_DELAY_MS);
    const every = setInterval(() => void this.pruneInBackground(), PRUNE_INTERVAL_MS);
    this.disposables.push({ dispose: () => (clearTimeout(first), clearInterval(every)) });
  }

  /** The store, created on first use and re-created if its folder was deleted behind our back. */
  get store(): FileStore {
    // (a store with writes still pending recreates its folder itself when it writes them)
    if (!this.storeInstance || (!this.storeInstance.unflushed && !existsSync(this.storeDir))) {
      if (this.storeInstance) this.log.warn(`the store folder ${this.storeDir} was deleted; starting an empty store`);
      mkdirPrivate(this.storeDir);
      // writes happen off the hot path: put returns at once, files follow asynchronously, and a
      // projection is released once its own are on disk (project awaits whenStored)
      this.storeInstance = openBackgroundStore(this.storeDir, (line) => this.log.warn(line));
    }
    return this.storeInstance;
  }

  /** Reads `spillway.*`, rebuilds the engine, warns once about each bad setting. */
  reloadSettings(): void {
    const cfg = vscode.workspace.getConfiguration(SECTION);
    const inspect = (key: string) => cfg.inspect(key);
    const input = configInputFromSettings(CONFIG_KEYS, inspect);
    const parsed = parseConfig(input);
    const storage = readStorageSettings(inspect);
    const limitsChanged =
      this.loaded &&
      (storage.settings.retentionDays !== this.storage.retentionDays || storage.settings.maxMegabytes !== this.storage.maxMegabytes);
    this.storage = storage.settings;
    // tighter limits take effect soon, in the background, not at the next hourly prune
    if (limitsChanged) setTimeout(() => void this.pruneInBackground(), SETTINGS_PRUNE_DELAY_MS);
    this.problems = [...settingProblems(parsed.problems), ...storage.problems];
    const folder = resolveStoreFolder(storage.settings.folder, vscode.workspace.workspaceFolders?.[0]?.uri.fsPath, isAbsolute, join);
    if (folder.problem) this.problems.push({ setting: `${SECTION}.storage.folder`, message: folder.problem });
    const storeDir = folder.path ?? join(this.baseDir, 'store');
    if (storeDir !== this.storeDir || !this.loaded) {
      this.storeDir = storeDir;
      this.storeInstance = undefined;
      this.records.clear();
      this.loadRecords();
      this.loaded = true;
      this.log.info(`store: ${this.storeDir}`);
      // a store, recordings or archive an older version left readable by others become owner-only (one log line when they were)
      this.tightening = tightenPrivate([this.storeDir, defaultSessionsDir(this.storeDir), defaultArchiveDir(this.storeDir)], (line) =>
        this.log.info(line),
      );
      this.changeEmitter.fire();
    }
    // one session store for every engine this host builds: a settings change keeps sessions sticky
    const options = { store: this.sinkProxy(), log: (line: string) => this.log.debug(line), sessions: this.sessions };
    try {
      this.engine = createEngine(parsed.config, options);
      this.config = parsed.config;
    } catch (e) {
      // parseConfig already dropped every bad key, so this is a bug; keep Spillway working on defaults
      this.log.error(`could not build the engine from the settings (${errorText(e)}); using the defaults`);
      this.config = parseConfig({}).config;
      this.engine = createEngine(this.config, options);
    }
    this.engineEmitter.fire(this.engine);
    const set = Object.keys(input).length === 0 ? 'none (preset defaults)' : JSON.stringify(input);
    this.log.info(`settings loaded; keys set by the user: ${set}`);
    const current = new Set<string>();
    for (const p of this.problems) {
      const text = problemWarning(p);
      current.add(text);
      this.log.warn(text);
      if (!this.warned.has(text)) this.notify('warning', text);
    }
    // a problem that was fixed and comes back is warned about again
    this.warned.clear();
    for (const t of current) this.warned.add(t);
  }

  /** The engine writes through this, so a store re-created after deletion or moved by a setting is picked up. */
  private sinkProxy(): OutputSink {
    return {
      put: (handle, text, meta) => this.store.put(handle, text, meta),
      locate: (handle) => this.store.locate(handle),
      has: (handle) => this.store.has(handle),
      written: (handles) => this.store.written(handles),
    };
  }

  /**
   * Projects a request through the engine, records what was reduced, updates the status bar.
   * Resolves only once every output the projection's markers point at is on disk (durable before
   * sent): the writes are asynchronous, so the extension host's thread is never held by them. When
   * an output cannot be written, the projection is not released: the result is the original request,
   * unchanged, with `failOpen` saying why (and the log too).
   */
  async project(request: string | object, format?: WireFormat | 'auto', options?: ProjectOptions): Promise<HostProjection> {
    let result: ReturnType<Engine['project']>;
    const engine = this.engine;
    try {
      result = engine.project(request, format ?? 'auto', {
        ...(options?.session ? { session: options.session } : {}),
        // when it is sent, unless the caller says: a call after a pause finds the provider's cache cold
        at: options?.at ?? Date.now(),
        ...(options?.provider ? { provider: options.provider } : {}),
        // why results went whole, for the inspector's turn (no cost beyond the noise: npm run bench:held)
        held: true,
      });
    } catch (e) {
      this.log.error(`projection failed: ${errorText(e)}`);
      throw e;
    }
    try {
      await whenStored(engine.store, result);
    } catch (e) {
      const failOpen = `the store could not write the outputs this projection points at (${errorText(e)}); the original request goes unchanged`;
      this.log.error(`projection ${this.projections + 1}: ${failOpen}`);
      return unreleased(request, result, failOpen);
    }
    this.projections++;
    this.savedTokens += Math.max(0, result.stats.savedTokens);
    this.updateStatus();
    if (result.reductions.length > 0 || result.inputs.length > 0)
      this.recordReductions(request, result.request, result.reductions, result.inputs);
    if (!options?.silent) this.projectEmitter.fire({ request, result, session: options?.session });
    const s = result.stats;
    this.log.info(
      `projection ${this.projections} (${s.format}): ${s.reducedResults} of ${s.toolResults} tool results reduced, ` +
        `${formatCount(s.originalTokens)} → ${formatCount(s.projectedTokens)} tokens (${formatCount(s.savedTokens)} saved)`,
    );
    return result;
  }

  /**
   * Keeps what a replayed call's reductions sent (the inspector's replays of transcripts), as the
   * engine's own projections are kept, so a stored output opens titled by the file or command it came
   * from, and Compare finds each turn's marker. Replays are not logged per reduction: the inspector shows them.
   */
  recordProjection(
    request: object,
    projected: object,
    reductions: readonly RecordedReduction[],
    at?: RecordedAt,
    keep?: (r: RecordedReduction) => boolean,
  ): void {
    this.keepRecords(request, projected, reductions, at, keep);
  }

  /** Logs and keeps what a projection reduced: tool results, and file inputs (stage `input`). */
  private recordReductions(
    request: string | object,
    projected: string | object,
    reductions: readonly Reduction[],
    inputs: readonly InputReduction[],
  ): void {
    const all = [...reductions, ...withInputStage(inputs)];
    for (const r of all) {
      this.log[r.fresh ? 'info' : 'debug'](
        `${r.fresh ? 'reduced' : 'kept reduced'} ${r.tool} ${r.callId} (${r.stage}): ${r.reason}; ` +
          `${formatCount(r.originalChars)} → ${formatCount(r.projectedChars)} chars, handle ${r.handle}`,
      );
    }
    // carried-over decisions were recorded when they were made (each decision's marker is kept once)
    const wanted = new Set<RecordedReduction>(all.filter((r) => r.fresh || !this.records.has(r.handle)));
    this.keepRecords(request, projected, all, undefined, (r) => wanted.has(r));
    if (wanted.size > 0) this.changeEmitter.fire();
  }

  /** Keeps, in memory and on disk, what each of `reductions` sent, folded into what each output already had. */
  private keepRecords(
    request: string | object,
    projected: string | object,
    reductions: readonly RecordedReduction[],
    at?: RecordedAt,
    keep?: (r: RecordedReduction) => boolean,
  ): void {
    for (const record of projectedRecords(request, projected, reductions, new Date().toISOString(), at, keep)) this.addRecord(record);
  }

  private saveRecord(record: ProjectedRecord): void {
    try {
      mkdirPrivate(this.projectedDir);
      const file = join(this.projectedDir, `${record.handle}.json`);
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify(record), { mode: PRIVATE_FILE_MODE });
      renameSync(tmp, file); // atomic: a crash never leaves half a record
    } catch (e) {
      this.log.error(`could not save the projected text of ${record.handle}: ${errorText(e)}`);
    }
  }

  private loadRecords(): void {
    let names: string[];
    try {
      names = readdirSync(this.projectedDir);
    } catch {
      return;
    }
    for (const name of names) {
      const handle = name.replace(/\.json$/, '');
      if (!isHandle(handle)) continue;
      try {
        const r = readRecord(JSON.parse(readFileSync(join(this.projectedDir, name), 'utf8')) as unknown, handle);
        if (r) this.records.set(handle, r);
      } catch {
        /* a damaged record only loses the projected side of one diff */
      }
    }
  }

  record(handle: string): ProjectedRecord | undefined {
    return this.records.get(handle);
  }

  /**
   * Keeps the projected text of a reduction (a projection of this window, or one made elsewhere: a
   * replay in the inspector), for Compare: folded into the output's record, each marker text once.
   * Returns the marker's id in the record (a projected document names it).
   */
  addRecord(record: ProjectedRecord): string | undefined {
    const before = this.records.get(record.handle);
    const merged = mergeRecords(before, record);
    this.records.set(record.handle, merged);
    if (JSON.stringify(merged) !== JSON.stringify(before)) this.saveRecord(merged);
    return record.markers[0]?.id;
  }

  /** The marker the model was sent for `handle`: the one with this id, else the newest (of `stage`, when it has one). */
  marker(handle: string, which?: { id?: string; stage?: string }): MarkerRecord | undefined {
    const r = this.records.get(handle);
    if (!r) return undefined;
    return (which?.id ? r.markers.find((m) => m.id === which.id) : undefined) ?? latestMarker(r, which?.stage);
  }

  /** Projected records whose output is still in the store, newest first. */
  recordsNewestFirst(): ProjectedRecord[] {
    return [...this.records.values()].sort((a, b) => b.time.localeCompare(a.time));
  }

  read(handle: string, options?: ReadOptions) {
    return this.store.read(handle, options ?? {});
  }

  /**
   * The `spillway:` URI of a stored output, or of one of its markers (`projected`, with the marker's
   * id; the newest without). The title names the file or command the call read or wrote; the folder
   * above it every call that produced the output (the tab's tooltip).
   */
  documentUri(handle: string, projected = false, marker?: string): vscode.Uri {
    if (!isHandle(handle)) {
      throw new SpillwayError(`${JSON.stringify(handle.slice(0, 80))} is not a Spillway handle`, 'bad-handle');
    }
    const record = this.records.get(handle);
    let tool = record?.tool;
    let callId = record?.callId;
    let callIds = record ? recordCallIds(record) : undefined;
    let input = record?.input ?? false;
    let ext = this.extensions.get(handle) ?? '.log';
    try {
      const meta = this.store.meta(handle);
      tool ??= meta?.tool;
      callId ??= meta?.callId;
      // the store's index lists every call that produced the output
      if (meta?.calls && meta.calls.length > (callIds?.length ?? 0)) callIds = meta.calls.map((c) => c.callId);
      input ||= meta?.stage === 'input';
      if (!this.extensions.has(handle)) {
        const text = this.store.get(handle);
        ext = (input ? inputDocument(text)?.ext : undefined) ?? documentExtension(text, record?.sourcePath);
        // outputs never change under a handle (content hashes), so neither does their language
        if (this.extensions.size > 10_000) this.extensions.clear();
        this.extensions.set(handle, ext);
      }
    } catch {
      /* a missing or damaged output still gets a URI; opening it explains what is wrong */
    }
    if (projected) ext = '.log';
    const source = {
      ...(record?.sourcePath ? { sourcePath: record.sourcePath } : {}),
      ...(record?.command ? { command: record.command } : {}),
    };
    const segment = projected && marker ? markerSegment(marker) : undefined;
    return vscode.Uri.from({
      scheme: SCHEME,
      path: documentPath({
        handle,
        tool,
        callId,
        ...(callIds && callIds.length > 1 ? { callIds } : {}),
        ...(input ? { input } : {}),
        ext,
        projected,
        ...(segment ? { marker: segment } : {}),
        ...source,
      }),
    });
  }

  /** Deletes every stored output and projected record of this workspace. */
  clear(): void {
    this.store.clear();
    rmSync(this.projectedDir, { recursive: true, force: true });
    this.records.clear();
    this.log.info('cleared all stored outputs');
    this.changeEmitter.fire();
  }

  /** Deletes outputs older than retentionDays, then the least recently used beyond maxMegabytes. */
  prune(): { removed: number; freedBytes: number } {
    try {
      return this.afterPrune(
        this.store.prune({ maxAgeDays: this.storage.retentionDays, maxBytes: this.storage.maxMegabytes * 1024 * 1024 }),
      );
    } catch (e) {
      this.log.error(`pruning the store failed: ${errorText(e)}`);
      return { removed: 0, freedBytes: 0 };
    }
  }

  /** Logs a prune and forgets the records of the outputs it removed. */
  private afterPrune(result: { removed: number; freedBytes: number }): { removed: number; freedBytes: number } {
    const line =
      `pruned the store (older than ${this.storage.retentionDays} days, beyond ${this.storage.maxMegabytes} MB): ` +
      `${result.removed} outputs, ${formatCount(result.freedBytes)} bytes`;
    if (result.removed > 0) this.log.info(line);
    else this.log.debug(line);
    const alive = new Set(this.store.list().map((e) => e.handle));
    for (const handle of [...this.records.keys()]) {
      if (alive.has(handle)) continue;
      this.records.delete(handle);
      rmSync(join(this.projectedDir, `${handle}.json`), { force: true });
    }
    if (result.removed > 0) this.changeEmitter.fire();
    return result;
  }

  /** `prune` off the hot path: scans and removes in slices, yielding to the editor between them. */
  async pruneInBackground(): Promise<void> {
    try {
      this.afterPrune(
        await this.store.pruneInBackground({ maxAgeDays: this.storage.retentionDays, maxBytes: this.storage.maxMegabytes * 1024 * 1024 }),
      );
    } catch (e) {
      this.log.error(`pruning the store failed: ${errorText(e)}`);
    }
  }

  /** Waits until every output put so far is on disk (deactivate and dispose call it). */
  async flush(): Promise<void> {
    const r = await this.storeInstance?.flush();
    if (r?.failed.length)
      this.log.error(`${r.failed.length} stored output(s) could not be written to ${this.storeDir}: ${r.failed.join(', ')}`);
  }

  /** Shows a message and remembers it (tests read the list through the test bridge). */
  notify(level: 'info' | 'warning' | 'error', message: string): void {
    this.notices.push({ level, message });
    if (this.notices.length > 200) this.notices.splice(0, this.notices.length - 200);
    const show =
      level === 'error'
        ? vscode.window.showErrorMessage
        : level === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    void show(message);
  }

  /** the inspector's session totals for the status bar; without it, the tokens this window's projections saved */
  statusTotals: (() => { text: string; tooltip: string }) | undefined;

  refreshStatus(): void {
    this.updateStatus();
  }

  private updateStatus(): void {
    const t = this.statusTotals?.();
    this.status.text = t?.text ?? statusText(this.savedTokens);
    if (t) this.status.tooltip = t.tooltip;
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
    void this.flush();
  }
}

/** What goes in place of a projection that could not be made durable: the request as it came. */
function unreleased(request: string | object, p: Projection, failOpen: string): HostProjection {
  const s = p.stats;
  return {
    request,
    format: p.format,
    reductions: [],
    inputs: [],
    stats: {
      ...s,
      reducedResults: 0,
      projectedTokens: s.originalTokens,
      savedTokens: 0,
      projectedChars: s.originalChars,
      byStage: { offload: 0, window: 0, budget: 0, clear: 0 },
      unchanged: true,
    },
    failOpen,
  };
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function errorCode(e: unknown): string | undefined {
  return e instanceof SpillwayError ? e.code : (e as { code?: string } | undefined)?.code;
}
