/**
 * The memory store: an `OutputStore` that keeps outputs in a map, for tests, benchmarks and hosts
 * that must not write to disk (e.g. `spillway project` without `--store`).
 *
 * It answers exactly like the file store: the same handle checks and errors, the same index
 * entries, the same `read` (both call `read.ts`), the same retention policy (`choosePrunable`).
 * It has no files, so `locate` is always undefined, and nothing can change a text behind its back,
 * so it never reports 'corrupt'. Unlike the file store it keeps unpaired surrogates as they are.
 */
import { isHandle } from '../engine/handle';
import { MemorySink } from '../engine/memory-sink';
import { SpillwayError, type StoredMeta } from '../engine/types';
import {
  assertHandle,
  assertHandleOf,
  checkPruneOptions,
  choosePrunable,
  newestFirst,
  recordPut,
  type OutputStore,
  type PruneOptions,
  type PruneResult,
  type StoreEntry,
} from './entry';
import { readStored, type ReadOptions, type ReadResult } from './read';

export interface MemoryStoreOptions {
  /** the time puts are recorded at and prune measures against (tests inject one) */
  clock?: () => Date;
}

/** The engine's in-memory map of texts (MemorySink) with the store's index, reads and retention. */
export class MemoryStore extends MemorySink implements OutputStore {
  private readonly entries = new Map<string, StoreEntry>();
  private readonly clock: () => Date;

  constructor(options: MemoryStoreOptions = {}) {
    super();
    this.clock = options.clock ?? (() => new Date());
  }

  override put(handle: string, text: string, meta: StoredMeta): void {
    const sha256 = assertHandleOf(handle, text);
    const { entry, changed } = recordPut(this.entries.get(handle), handle, text, meta, this.clock(), sha256);
    if (!changed && this.texts.has(handle)) return;
    // the sink keeps a copy of the text: the caller's string may be a view of a whole request body
    super.put(handle, text);
    this.entries.set(handle, entry);
  }

  override has(handle: string): boolean {
    return isHandle(handle) && super.has(handle);
  }

  meta(handle: string): StoreEntry | undefined {
    return isHandle(handle) ? this.entries.get(handle) : undefined;
  }

  list(): StoreEntry[] {
    return [...this.entries.values()].sort(newestFirst);
  }

  totalBytes(): number {
    let total = 0;
    for (const entry of this.entries.values()) total += entry.bytes;
    return total;
  }

  override get(handle: string): string {
    assertHandle(handle);
    const text = super.get(handle);
    if (text === undefined) throw new SpillwayError(`no stored output with handle ${handle} in memory`, 'not-found');
    return text;
  }

  read(handle: string, options: ReadOptions = {}): ReadResult {
    return readStored(handle, options, (h) => this.get(h));
  }

  prune(options: PruneOptions = {}): PruneResult {
    const limits = checkPruneOptions(options, this.clock);
    const items = [...this.entries.values()].map((entry) => ({
      handle: entry.handle,
      bytes: entry.bytes,
      usedMs: Date.parse(entry.used),
    }));
    let removed = 0;
    let freedBytes = 0;
    for (const item of choosePrunable(items, limits)) {
      this.entries.delete(item.handle);
      this.texts.delete(item.handle);
      removed++;
      freedBytes += item.bytes;
    }
    return { removed, freedBytes, tempFiles: 0 };
  }

  clear(): void {
    this.entries.clear();
    this.texts.clear();
  }
}
