/**
 * The one in-memory store of outputs. The engine uses it when its host gives no store (tests, the
 * module API without a store); the store layer's `MemoryStore` (src/store/memory.ts) is this map
 * with the index, reads and retention on top, so there is one place that keeps texts in memory and
 * one rule for how they are kept: as copies (see `detached`).
 */
import type { OutputSink, StoredMeta } from './types';

/**
 * A copy of `s` that shares no memory with it. The engine hands a store slices of the request
 * text (the output, its tool and call id), and V8 keeps a slice's whole parent alive: a store that
 * kept the slices would pin the full request body of every call that stored something (1,000 calls
 * of a few MB each ran the benchmark out of heap). UTF-16 in and out, so unpaired surrogates stay.
 */
export function detached(s: string): string {
  return Buffer.from(s, 'utf16le').toString('utf16le');
}

export class MemorySink implements OutputSink {
  /** handle → the output's text, a detached copy; the first text put under a handle stays */
  protected readonly texts = new Map<string, string>();

  put(handle: string, text: string, _meta?: StoredMeta): void {
    if (!this.texts.has(handle)) this.texts.set(handle, detached(text));
  }

  /** Always undefined: outputs in memory have no file to point a reader at. */
  locate(_handle: string): string | undefined {
    return undefined;
  }

  has(handle: string): boolean {
    return this.texts.has(handle);
  }

  get(handle: string): string | undefined {
    return this.texts.get(handle);
  }
}
