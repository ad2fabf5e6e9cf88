/**
 * The file store: where full tool outputs live on disk so every reduction stays recoverable.
 *
 * The engine hands each reduced output to `put` (synchronously, while it projects a request), the
 * marker shows the handle, and later `spillway read`, the language model tool or
 * a `spillway:` document reads it back with `get`/`read`. Several processes (the extension, the CLI,
 * the proxy) may share one store folder, so nothing here keeps state that another writer could make
 * stale: every call goes to the files.
 *
 * Layout under the root (the root may hold other things, e.g. recorded turns; this store only ever
 * touches `objects/`):
 *   objects/<first two hex digits of the handle>/<handle>.txt    the output, UTF-8, exactly as given
 *   objects/<first two hex digits of the handle>/<handle>.json   its index entry (`StoreEntry`)
 * The two-digit shards keep folders small (256 of them) for stores of many thousand outputs.
 *
 * Crash safety: every file is written to a uniquely named temp file in the same folder, flushed,
 * then renamed over the final name, so a reader sees the old file or the new one, never part of
 * one. The output is written before its index entry; an output whose entry is missing or unreadable
 * is still served (checked against its handle) and the next put of it rewrites the entry. Temp files
 * left by a crash are never read and `prune` removes them.
 *
 * Background writes (`background: true`, what the VS Code extension uses so a store write never
 * stalls the editor): `put` still checks the handle against the text synchronously (the handle is
 * the content hash the engine has already put in its marker) and keeps the output's UTF-8 bytes in
 * memory; the files are written afterwards, one output at a time in put order, asynchronously, by
 * the same temp-file-then-rename steps (output before index entry). Until an output is on disk,
 * `get`, `read`, `has`, `locate`, `meta` and `list` serve it from memory, so a reader never sees a
 * handle the engine gave out go missing. A failed write is reported (`onWriteError`) and retried
 * (WRITE_TRIES times, backing off); if it keeps failing the output stays in memory, still readable,
 * and the next `flush()` or `written()` tries again. `flush()` resolves once everything put so far is
 * on disk (the extension awaits it on dispose and deactivate); `written(handles)` resolves once the
 * given outputs are, and every path that sends a projection awaits it first (durable before sent),
 * so the thread is never held by a write and a model is never shown a handle that is only in memory. fsync policy: as for synchronous writes,
 * `durable` (default true) flushes each new file before its rename; the rename alone already makes
 * a crash of the process leave the old file or the new one, never part of one.
 *
 * Privacy: folders are created 0700 and files 0600 on POSIX (private.ts), since outputs hold
 * whatever the agent printed, secrets included.
 *
 * Texts with unpaired UTF-16 surrogates cannot be written as UTF-8: like any UTF-8 writer the store
 * keeps U+FFFD in their place, and `handleFor` hashes the same bytes, so the handle still matches.
 */
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { HANDLE_PREFIX, isHandle } from '../engine/handle';
import { SpillwayError, type StoredMeta } from '../engine/types';
import {
  assertHandle,
  assertHandleOf,
  checkPruneOptions,
  choosePrunable,
  newestFirst,
  parseEntry,
  recordPut,
  type OutputStore,
  type PruneOptions,
  type PruneResult,
  type RetentionItem,
  type StoreEntry,
} from './entry';
import { mkdirPrivate, mkdirPrivateAsync, PRIVATE_FILE_MODE } from './private';
import { readStored, type ReadOptions, type ReadResult } from './read';

/** The folder under the root this store owns; nothing else under the root is ever touched. */
export const OBJECTS_DIR = 'objects';
const OUTPUT_SUFFIX = '.txt';
const INDEX_SUFFIX = '.json';
/** Temp files start with a dot (hidden, and never a handle) and end with this. */
const TEMP_SUFFIX = '.tmp';
/** Random bytes in a temp name, so concurrent writers in one process or several never collide. */
const TEMP_RANDOM_BYTES = 6;
/**
 * A temp file younger than this may belong to a write in progress in another process, so `prune`
 * leaves it; a write of even a very large output finishes in seconds.
 */
export const STALE_TEMP_MS = 10 * 60 * 1000;
/** Hex digits of the handle that name its shard folder: 256 folders, each small even for 100k outputs. */
const SHARD_DIGITS = 2;
const SHARD = /^[0-9a-f]{2}$/;

export interface FileStoreOptions {
  /** the time puts are recorded at and prune measures against (tests inject one) */
  clock?: () => Date;
  /**
   * Flush each new file to disk before renaming it into place (default true). The rename alone
   * survives a crash of the process; the flush also survives a power cut, at the price of a few
   * milliseconds per new output (measured ~6 ms per first put on ext4; repeated puts write nothing).
   * Benchmarks and throwaway stores may turn it off.
   */
  durable?: boolean;
  /**
   * Write files in the background (see the module comment): `put` returns before anything touches
   * the disk and reads of not-yet-written outputs are served from memory. Default false (the CLI
   * and tests write synchronously).
   */
  background?: boolean;
  /** Told about each failed background write (it is retried; see WRITE_TRIES). */
  onWriteError?: (handle: string, error: unknown, attempt: number) => void;
  /** Base delay between retries of a failed background write, in ms (tests shorten it). */
  retryMs?: number;
}

/** Tries of one background write before the output is kept in memory until the next `flush()`. */
export const WRITE_TRIES = 3;
const RETRY_MS = 200;
/** Background prune yields to the event loop after this many files (and after every shard). */
const PRUNE_SLICE = 64;

/** An output put in background mode and not yet (completely) on disk. */
interface Pending {
  bytes: Buffer;
  sha256: string;
  /** the puts not yet recorded in the index entry on disk, with when they happened */
  puts: Array<{ meta: StoredMeta; at: Date }>;
  attempts: number;
  /** gave up after WRITE_TRIES; kept in memory, retried by flush() and written() */
  failed?: boolean;
  /** callers of `written` waiting for this output to reach the disk */
  waiters: Array<{ resolve: () => void; reject: (error: Error) => void }>;
}

/** What `check` found in the folder: the things `list` and `get` quietly work around. */
export interface StoreCheck {
  /** outputs with a readable index entry */
  indexed: number;
  /** outputs whose index entry is missing or unreadable (served anyway; repaired by the next put) */
  unindexed: string[];
  /** index entries whose output file is gone (ignored; removed by prune) */
  orphanIndexes: string[];
  /** temp files of interrupted writes, as paths (ignored; removed by prune once stale) */
  tempFiles: string[];
}

/** One handle's files as found by a scan of the folder. */
interface Found {
  handle: string;
  output: boolean;
  index: boolean;
}

export class FileStore implements OutputStore {
  /** the store folder, absolute */
  readonly root: string;
  private readonly objects: string;
  private readonly clock: () => Date;
  private readonly durable: boolean;
  private readonly background: boolean;
  private readonly onWriteError: (handle: string, error: unknown, attempt: number) => void;
  private readonly retryMs: number;
  private readonly pending = new Map<string, Pending>();
  /** handles waiting to be written, in put order */
  private readonly queue: string[] = [];
  private draining: Promise<void> | undefined;

  constructor(root: string, options: FileStoreOptions = {}) {
    if (typeof root !== 'string' || root.trim() === '') {
      throw new SpillwayError(`the store folder must be a path, got ${JSON.stringify(root)}`);
    }
    this.root = path.resolve(root);
    this.objects = path.join(this.root, OBJECTS_DIR);
    this.clock = options.clock ?? (() => new Date());
    this.durable = options.durable ?? true;
    this.background = options.background ?? false;
    this.onWriteError = options.onWriteError ?? (() => undefined);
    this.retryMs = options.retryMs ?? RETRY_MS;
  }

  /** Outputs put but not yet completely on disk (background mode). */
  get unflushed(): number {
    return this.pending.size;
  }

  put(handle: string, text: string, meta: StoredMeta): void {
    const sha256 = assertHandleOf(handle, text);
    if (this.background) {
      const at = this.clock();
      const waiting = this.pending.get(handle);
      if (waiting) {
        waiting.puts.push({ meta, at });
        if (waiting.failed || !this.queue.includes(handle)) {
          waiting.failed = false;
          this.queue.push(handle);
        }
      } else {
        // the bytes are a copy: the engine's text may be a view of a whole request body
        this.pending.set(handle, { bytes: Buffer.from(text, 'utf8'), sha256, puts: [{ meta, at }], attempts: 0, waiters: [] });
        this.queue.push(handle);
      }
      this.drainSoon();
      return;
    }
    const output = this.outputPath(handle);
    try {
      mkdirPrivate(path.dirname(output));
      const bytes = Buffer.byteLength(text, 'utf8');
      // Same handle, same text: skip the write unless the file is plainly damaged (wrong size),
      // in which case this put repairs it.
      if (fileSize(output) !== bytes) writeAtomic(output, text, this.durable);
      const { entry, changed } = recordPut(this.readEntry(handle), handle, text, meta, this.clock(), sha256);
      if (changed) writeAtomic(this.indexPath(handle), JSON.stringify(entry, null, 2) + '\n', this.durable);
    } catch (error) {
      throw new SpillwayError(`could not store output ${handle} in ${this.root}: ${reason(error)}`, 'io');
    }
  }

  locate(handle: string): string | undefined {
    if (!isHandle(handle)) return undefined;
    const output = this.outputPath(handle);
    // written in a moment: the path is where it will be
    if (this.pending.has(handle)) return output;
    return fs.existsSync(output) ? output : undefined;
  }

  /** Where `handle`'s output is, or will be once put. */
  pathFor(handle: string): string | undefined {
    return isHandle(handle) ? this.outputPath(handle) : undefined;
  }

  /** False for anything that is not a stored handle, including values that are not handles at all. */
  has(handle: string): boolean {
    return this.locate(handle) !== undefined;
  }

  /** The index entry, or undefined when the handle is not stored or its entry is unreadable. */
  meta(handle: string): StoreEntry | undefined {
    if (!this.has(handle)) return undefined;
    const waiting = this.pending.get(handle);
    return waiting ? this.entryWith(this.readEntry(handle), handle, waiting).entry : this.readEntry(handle);
  }

  /** Index entries of the stored outputs, most recently used first. */
  list(): StoreEntry[] {
    const entries: StoreEntry[] = [];
    for (const found of this.scan().found) {
      if (!found.output || !found.index || this.pending.has(found.handle)) continue;
      const entry = this.readEntry(found.handle);
      if (entry) entries.push(entry);
    }
    for (const handle of this.pending.keys()) {
      const entry = this.meta(handle);
      if (entry) entries.push(entry);
    }
    return entries.sort(newestFirst);
  }

  /** UTF-8 bytes of all stored outputs (index and temp files not counted). */
  totalBytes(): number {
    let total = 0;
    for (const found of this.scan().found)
      if (found.output && !this.pending.has(found.handle)) total += fileSize(this.outputPath(found.handle)) ?? 0;
    for (const p of this.pending.values()) total += p.bytes.length;
    return total;
  }

  /**
   * The full output. Throws 'bad-handle' for a value that is not a handle (before any file access),
   * 'not-found' when nothing is stored under it, and 'corrupt' when the file no longer has the
   * SHA-256 it was stored with.
   */
  get(handle: string): string {
    assertHandle(handle);
    const waiting = this.pending.get(handle);
    if (waiting) return waiting.bytes.toString('utf8');
    const output = this.outputPath(handle);
    let bytes: Buffer;
    try {
      bytes = fs.readFileSync(output);
    } catch (error) {
      if (isMissing(error)) throw this.notFound(handle);
      throw new SpillwayError(`could not read stored output ${handle} from ${output}: ${reason(error)}`, 'io');
    }
    const digest = createHash('sha256').update(bytes).digest('hex');
    const entry = this.readEntry(handle);
    const intact = entry ? digest === entry.sha256 : digest.startsWith(handle.slice(HANDLE_PREFIX.length));
    if (!intact) {
      throw new SpillwayError(
        `stored output ${handle} is corrupt: ${output} no longer has the SHA-256 it was stored with ` +
          `(it was changed on disk after it was stored); store the output again or prune it`,
        'corrupt',
      );
    }
    return bytes.toString('utf8');
  }

  /** Part of the output (see `read.ts` for the options); options are checked before the file is read. */
  read(handle: string, options: ReadOptions = {}): ReadResult {
    return readStored(handle, options, (h) => this.get(h));
  }

  /** Removes outputs by age, then by total size (least recently used first), and stale temp files. */
  prune(options: PruneOptions = {}): PruneResult {
    const limits = checkPruneOptions(options, this.clock);
    const { found, temps } = this.scan();
    const items: RetentionItem[] = [];
    for (const f of found) {
      if (!f.output) continue;
      const output = this.outputPath(f.handle);
      const stat = statOrUndefined(output);
      if (!stat) continue;
      const entry = f.index ? this.readEntry(f.handle) : undefined;
      items.push({ handle: f.handle, bytes: stat.size, usedMs: entry ? Date.parse(entry.used) : stat.mtimeMs });
    }
    let removed = 0;
    let freedBytes = 0;
    for (const item of choosePrunable(items, limits)) {
      // Output first: a crash in between leaves an orphan index entry, which is ignored and pruned.
      if (!removeFile(this.outputPath(item.handle))) continue;
      removeFile(this.indexPath(item.handle));
      removed++;
      freedBytes += item.bytes;
    }
    for (const f of found) if (f.index && !f.output) removeFile(this.indexPath(f.handle));
    let tempFiles = 0;
    for (const temp of temps) {
      const stat = statOrUndefined(temp);
      if (stat && limits.now.getTime() - stat.mtimeMs > STALE_TEMP_MS && removeFile(temp)) tempFiles++;
    }
    this.removeEmptyShards();
    return { removed, freedBytes, tempFiles };
  }

  /** Removes every stored output and index entry (the `objects/` folder), and nothing else. */
  clear(): void {
    for (const [handle, p] of this.pending)
      settle(p, new SpillwayError(`the store ${this.root} was cleared before ${handle} was written`, 'io'));
    this.pending.clear();
    this.queue.length = 0;
    fs.rmSync(this.objects, { recursive: true, force: true });
  }

  /**
   * Resolves once every output put so far is on disk, retrying those a failed write kept in
   * memory; `failed` lists the handles that are still only in memory (each was reported).
   */
  async flush(): Promise<{ failed: string[] }> {
    for (const [handle, p] of this.pending) {
      if (p.failed) {
        p.failed = false;
        p.attempts = 0;
        if (!this.queue.includes(handle)) this.queue.push(handle);
      }
    }
    while (this.queue.length) {
      this.drainSoon();
      await this.draining;
    }
    return { failed: [...this.pending.keys()] };
  }

  /**
   * Resolves once the outputs of `handles` are on disk (at once for those already there, or never
   * put here); rejects with the write's error when one of them cannot be written after WRITE_TRIES
   * tries. A projection awaits this before it is released (durable before sent): a marker's handle
   * never reaches a model while a crash could still lose its output. An output a failed write kept
   * in memory is tried again, so one bad moment does not fail every later call that repeats it.
   */
  async written(handles: Iterable<string>): Promise<void> {
    const waits: Promise<void>[] = [];
    for (const handle of new Set(handles)) {
      const p = this.pending.get(handle);
      if (!p) continue;
      if (p.failed) {
        p.failed = false;
        p.attempts = 0;
        if (!this.queue.includes(handle)) this.queue.push(handle);
      }
      waits.push(new Promise<void>((resolve, reject) => p.waiters.push({ resolve, reject })));
    }
    if (!waits.length) return;
    this.drainSoon();
    await Promise.all(waits);
  }

  private drainSoon(): void {
    this.draining ??= this.drain().finally(() => {
      this.draining = undefined;
    });
  }

  /** Writes queued outputs one at a time, in put order; never throws (failures are reported). */
  private async drain(): Promise<void> {
    while (this.queue.length) {
      const handle = this.queue[0]!;
      const p = this.pending.get(handle);
      if (!p) {
        this.queue.shift();
        continue;
      }
      const recorded = p.puts.length;
      try {
        await this.writePending(handle, p, recorded);
        settle(p);
        this.queue.shift();
        p.puts.splice(0, recorded);
        p.attempts = 0;
        // puts of the same output that came in while it was written: their entry update goes next
        if (p.puts.length) this.queue.push(handle);
        else if (this.pending.get(handle) === p) this.pending.delete(handle);
      } catch (error) {
        p.attempts++;
        this.onWriteError(handle, error, p.attempts);
        if (p.attempts >= WRITE_TRIES) {
          this.queue.shift();
          p.failed = true;
          settle(p, new SpillwayError(`could not write stored output ${handle} to ${this.root}: ${reason(error)}`, 'io'));
        } else {
          await new Promise((r) => setTimeout(r, this.retryMs * p.attempts));
        }
      }
    }
  }

  private async writePending(handle: string, p: Pending, recorded: number): Promise<void> {
    const output = this.outputPath(handle);
    await mkdirPrivateAsync(path.dirname(output));
    const size = await fs.promises.stat(output).then(
      (st) => (st.isFile() ? st.size : undefined),
      () => undefined,
    );
    if (size !== p.bytes.length) await writeAtomicAsync(output, p.bytes, this.durable);
    const previous = await fs.promises.readFile(this.indexPath(handle), 'utf8').then(
      (t) => parseEntry(JSON.parse(t), handle),
      () => undefined,
    );
    const { entry, changed } = this.entryWith(previous, handle, p, recorded);
    if (changed) await writeAtomicAsync(this.indexPath(handle), JSON.stringify(entry, null, 2) + '\n', this.durable);
  }

  /** The index entry after the first `count` pending puts are recorded on top of `previous`. */
  private entryWith(
    previous: StoreEntry | undefined,
    handle: string,
    p: Pending,
    count = p.puts.length,
  ): { entry: StoreEntry; changed: boolean } {
    const text = p.bytes.toString('utf8');
    let entry = previous;
    let changed = false;
    for (const { meta, at } of p.puts.slice(0, count)) {
      const r = recordPut(entry, handle, text, meta, at, p.sha256);
      entry = r.entry;
      changed ||= r.changed;
    }
    return { entry: entry!, changed };
  }

  /**
   * `prune` without holding the thread: the folder is scanned one shard at a time and files are
   * stat'ed and removed asynchronously, yielding to the event loop every PRUNE_SLICE files, so an
   * hourly prune of a large store never stalls the editor. Outputs not yet written are never pruned.
   */
  async pruneInBackground(options: PruneOptions = {}): Promise<PruneResult> {
    const limits = checkPruneOptions(options, this.clock);
    const yieldNow = () => new Promise<void>((r) => setImmediate(r));
    const items: RetentionItem[] = [];
    const orphans: string[] = [];
    const temps: string[] = [];
    let work = 0;
    const shards = await fs.promises.readdir(this.objects).catch(() => [] as string[]);
    for (const shard of shards) {
      if (!SHARD.test(shard)) continue;
      const dir = path.join(this.objects, shard);
      const names = new Set(await fs.promises.readdir(dir).catch(() => [] as string[]));
      for (const name of names) {
        if (++work % PRUNE_SLICE === 0) await yieldNow();
        if (name.startsWith('.') && name.endsWith(TEMP_SUFFIX)) {
          temps.push(path.join(dir, name));
          continue;
        }
        if (name.endsWith(INDEX_SUFFIX)) {
          const handle = name.slice(0, -INDEX_SUFFIX.length);
          if (isHandle(handle) && !names.has(handle + OUTPUT_SUFFIX) && !this.pending.has(handle)) orphans.push(path.join(dir, name));
          continue;
        }
        if (!name.endsWith(OUTPUT_SUFFIX)) continue;
        const handle = name.slice(0, -OUTPUT_SUFFIX.length);
        if (
          !isHandle(handle) ||
          handle.slice(HANDLE_PREFIX.length, HANDLE_PREFIX.length + SHARD_DIGITS) !== shard ||
          this.pending.has(handle)
        )
          continue;
        const stat = await fs.promises.stat(path.join(dir, name)).catch(() => undefined);
        if (!stat?.isFile()) continue;
        const entry = names.has(handle + INDEX_SUFFIX)
          ? await fs.promises.readFile(this.indexPath(handle), 'utf8').then(
              (t) => parseEntry(JSON.parse(t), handle),
              () => undefined,
            )
          : undefined;
        items.push({ handle, bytes: stat.size, usedMs: entry ? Date.parse(entry.used) : stat.mtimeMs });
      }
      await yieldNow();
    }
    const unlink = (f: string) =>
      fs.promises.unlink(f).then(
        () => true,
        () => false,
      );
    let removed = 0;
    let freedBytes = 0;
    for (const item of choosePrunable(items, limits)) {
      if (this.pending.has(item.handle)) continue; // put again while we scanned
      if (++work % PRUNE_SLICE === 0) await yieldNow();
      if (!(await unlink(this.outputPath(item.handle)))) continue;
      await unlink(this.indexPath(item.handle));
      removed++;
      freedBytes += item.bytes;
    }
    for (const o of orphans) await unlink(o);
    let tempFiles = 0;
    for (const temp of temps) {
      const stat = await fs.promises.stat(temp).catch(() => undefined);
      if (stat && limits.now.getTime() - stat.mtimeMs > STALE_TEMP_MS && (await unlink(temp))) tempFiles++;
    }
    this.removeEmptyShards();
    return { removed, freedBytes, tempFiles };
  }

  /** Reports what `list` and `get` work around: unindexed outputs, orphan entries, temp files. */
  check(): StoreCheck {
    const { found, temps } = this.scan();
    const result: StoreCheck = { indexed: 0, unindexed: [], orphanIndexes: [], tempFiles: temps };
    for (const f of found) {
      if (f.output && f.index && this.readEntry(f.handle)) result.indexed++;
      else if (f.output) result.unindexed.push(f.handle);
      else if (f.index) result.orphanIndexes.push(f.handle);
    }
    return result;
  }

  private shardPath(handle: string): string {
    const shard = path.join(this.objects, handle.slice(HANDLE_PREFIX.length, HANDLE_PREFIX.length + SHARD_DIGITS));
    // Handles are checked before they get here; this guards the invariant, not user input.
    if (!isHandle(handle) || path.dirname(shard) !== this.objects) {
      throw new SpillwayError(`internal: ${JSON.stringify(handle)} reached the file layer unchecked`, 'bad-handle');
    }
    return shard;
  }

  private outputPath(handle: string): string {
    return path.join(this.shardPath(handle), handle + OUTPUT_SUFFIX);
  }

  private indexPath(handle: string): string {
    return path.join(this.shardPath(handle), handle + INDEX_SUFFIX);
  }

  /** The index entry as stored, or undefined when it is missing, truncated or not an entry. */
  private readEntry(handle: string): StoreEntry | undefined {
    try {
      return parseEntry(JSON.parse(fs.readFileSync(this.indexPath(handle), 'utf8')), handle);
    } catch {
      return undefined;
    }
  }

  private notFound(handle: string): SpillwayError {
    const missing = fs.existsSync(this.root) ? '' : ' (the store folder does not exist)';
    return new SpillwayError(`no stored output with handle ${handle} in ${this.root}${missing}`, 'not-found');
  }

  /** Every handle with a file in the folder, and every temp file; unknown names are left alone. */
  private scan(): { found: Found[]; temps: string[] } {
    const byHandle = new Map<string, Found>();
    const temps: string[] = [];
    for (const shard of readdirOrEmpty(this.objects)) {
      if (!SHARD.test(shard)) continue;
      const dir = path.join(this.objects, shard);
      for (const name of readdirOrEmpty(dir)) {
        if (name.startsWith('.') && name.endsWith(TEMP_SUFFIX)) {
          temps.push(path.join(dir, name));
          continue;
        }
        const suffix = name.endsWith(OUTPUT_SUFFIX) ? OUTPUT_SUFFIX : name.endsWith(INDEX_SUFFIX) ? INDEX_SUFFIX : undefined;
        if (!suffix) continue;
        const handle = name.slice(0, -suffix.length);
        if (!isHandle(handle) || handle.slice(HANDLE_PREFIX.length, HANDLE_PREFIX.length + SHARD_DIGITS) !== shard) continue;
        const f = byHandle.get(handle) ?? { handle, output: false, index: false };
        if (suffix === OUTPUT_SUFFIX) f.output = true;
        else f.index = true;
        byHandle.set(handle, f);
      }
    }
    return { found: [...byHandle.values()], temps };
  }

  private removeEmptyShards(): void {
    for (const shard of readdirOrEmpty(this.objects)) {
      if (!SHARD.test(shard)) continue;
      try {
        fs.rmdirSync(path.join(this.objects, shard)); // fails, harmlessly, unless empty
      } catch {
        /* not empty, or already gone */
      }
    }
  }
}

/**
 * The store as the VS Code extension keeps it: written in the background so a write never holds the
 * extension host's thread, each new file flushed before its rename (`durable`), every failed write
 * reported through `warn`. Whoever sends a projection made over it awaits `written` first.
 */
export function openBackgroundStore(root: string, warn: (line: string) => void): FileStore {
  return new FileStore(root, {
    background: true,
    durable: true,
    onWriteError: (handle, e, attempt) =>
      warn(`writing stored output ${handle} failed (try ${attempt}): ${reason(e)}; it stays readable from memory`),
  });
}

/** Tells everyone waiting for `p` that it is on disk, or (with `error`) that it could not be written. */
function settle(p: Pending, error?: Error): void {
  for (const w of p.waiters.splice(0)) {
    if (error) w.reject(error);
    else w.resolve();
  }
}

/**
 * Writes `data` to `file` so that `file` is either absent/old or complete: temp file in the same
 * folder (same file system, so the rename is atomic), flushed to disk when `durable`, then renamed.
 */
function writeAtomic(file: string, data: string, durable: boolean): void {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(TEMP_RANDOM_BYTES).toString('hex')}${TEMP_SUFFIX}`,
  );
  try {
    const fd = fs.openSync(temp, 'wx', PRIVATE_FILE_MODE);
    try {
      fs.writeFileSync(fd, data, 'utf8');
      if (durable) fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    renameWithRetry(temp, file);
  } catch (error) {
    removeFile(temp);
    throw error;
  }
}

/** `writeAtomic` for background writes: the same steps, asynchronously. */
async function writeAtomicAsync(file: string, data: Buffer | string, durable: boolean): Promise<void> {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(TEMP_RANDOM_BYTES).toString('hex')}${TEMP_SUFFIX}`,
  );
  try {
    const fh = await fs.promises.open(temp, 'wx', PRIVATE_FILE_MODE);
    try {
      await fh.writeFile(data);
      if (durable) await fh.sync();
    } finally {
      await fh.close();
    }
    for (let attempt = 1; ; attempt++) {
      try {
        await fs.promises.rename(temp, file);
        break;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? '';
        if (attempt >= RENAME_TRIES || !TRANSIENT_RENAME_ERRORS.has(code)) throw error;
        await new Promise((r) => setTimeout(r, RENAME_RETRY_MS));
      }
    }
  } catch (error) {
    await fs.promises.unlink(temp).catch(() => undefined);
    throw error;
  }
}

/**
 * How often, and how long apart, a rename refused with EPERM/EACCES/EBUSY is retried. On Windows a
 * rename over a file fails while another process (a reader, a virus scanner, the indexer) has it
 * open; those holds last milliseconds. Five tries 20 ms apart wait at most 0.1 s, which a put, run
 * synchronously while a request is projected, can afford; elsewhere these errors do not occur.
 */
const RENAME_TRIES = 5;
const RENAME_RETRY_MS = 20;
const TRANSIENT_RENAME_ERRORS = new Set(['EPERM', 'EACCES', 'EBUSY']);

function renameWithRetry(from: string, to: string): void {
  for (let attempt = 1; ; attempt++) {
    try {
      fs.renameSync(from, to);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      if (attempt >= RENAME_TRIES || !TRANSIENT_RENAME_ERRORS.has(code)) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, RENAME_RETRY_MS);
    }
  }
}

function fileSize(file: string): number | undefined {
  return statOrUndefined(file)?.size;
}

function statOrUndefined(file: string): fs.Stats | undefined {
  try {
    const stat = fs.statSync(file);
    return stat.isFile() ? stat : undefined;
  } catch {
    return undefined;
  }
}

function readdirOrEmpty(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

/** Removes a file; false when it was not there (someone else removed it first). */
function removeFile(file: string): boolean {
  try {
    fs.unlinkSync(file);
    return true;
  } catch {
    return false;
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
