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
import { SpillwayError, type StoredMeta } from '../engine/types';
import {
  assertHandle,
  assertHandleOf,
  checkPruneOptions,
  choosePrunable,
  detached,
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

export class MemoryStore implements OutputStore {
  private readonly outputs = new Map<string, { text: string; entry: StoreEntry }>();
  private readonly clock: () => Date;

  constructor(options: MemoryStoreOptions = {}) {
    this.clock = options.clock ?? (() => new Date());
  }

  put(handle: string, text: string, meta: StoredMeta): void {
    const sha256 = assertHandleOf(handle, text);
    const previous = this.outputs.get(handle);
    const { entry, changed } = recordPut(previous?.entry, handle, text, meta, this.clock(), sha256);
    // a copy of the text: the caller's string may be a view of a whole request body (see `detached`)
    if (!previous || changed) this.outputs.set(handle, { text: previous?.text ?? detached(text), entry });
  }

  /** Always undefined: the memory store has no files to point a reader at. */
  locate(_handle: string): string | undefined {
    return undefined;
  }

  has(handle: string): boolean {
    return isHandle(handle) && this.outputs.has(handle);
  }

  meta(handle: string): StoreEntry | undefined {
    return isHandle(handle) ? this.outputs.get(handle)?.entry : undefined;
  }

  list(): StoreEntry[] {
    return [...this.outputs.values()].map((o) => o.entry).sort(newestFirst);
  }

  totalBytes(): number {
    let total = 0;
    for (const { entry } of this.outputs.values()) total += entry.bytes;
    return total;
  }

  get(handle: string): string {
    assertHandle(handle);
    const stored = this.outputs.get(handle);
    if (!stored) throw new SpillwayError(`no stored output with handle ${handle} in memory`, 'not-found');
    return stored.text;
  }

  read(handle: string, options: ReadOptions = {}): ReadResult {
    return readStored(handle, options, (h) => this.get(h));
  }

  prune(options: PruneOptions = {}): PruneResult {
    const limits = checkPruneOptions(options, this.clock);
    const items = [...this.outputs.values()].map(({ entry }) => ({
      handle: entry.handle,
      bytes: entry.bytes,
      usedMs: Date.parse(entry.used),
    }));
    let removed = 0;
    let freedBytes = 0;
    for (const item of choosePrunable(items, limits)) {
      this.outputs.delete(item.handle);
      removed++;
      freedBytes += item.bytes;
    }
    return { removed, freedBytes, tempFiles: 0 };
  }

  clear(): void {
    this.outputs.clear();
  }
}
