/**
 * What a store records about each output, and the checks every store makes on the way in.
 *
 * The file store and the memory store keep the same index entry and refuse the same bad input, so
 * the CLI, the proxy and the extension can swap one for the other; this module is the one place
 * those rules live. The engine hands in `StoredMeta` per call; the store folds repeated puts of the
 * same output (same handle) into one entry that lists every (tool, callId) that produced it.
 */
import { HANDLE_HEX_DIGITS, HANDLE_PATTERN, HANDLE_PREFIX, handleFromDigest, isHandle, sha256Hex } from '../engine/handle';
import { detached } from '../engine/memory-sink';
import { SpillwayError, type OutputSink, type StageName, type StoredMeta } from '../engine/types';
import type { ReadOptions, ReadResult } from './read';
import { countLines } from './slice';

/** One call that produced an output. */
export interface StoredCall {
  tool: string;
  callId: string;
  stage: StageName | 'input';
  session?: string;
  /** when this call's put was first recorded (ISO 8601) */
  time: string;
}

/** The index entry of one stored output. */
export interface StoreEntry extends StoredMeta {
  handle: string;
  /** SHA-256 of the UTF-8 bytes, full 64 hex digits (the handle keeps the first 24) */
  sha256: string;
  // tool, callId, stage and session are the first call's; chars, bytes and lines are measured from
  // the text by the store, so the index always agrees with `read`; tokens are the engine's count
  /** when the output was first stored (ISO 8601) */
  time: string;
  /** when a call last produced it (ISO 8601); retention ages entries by this, listings sort by it */
  used: string;
  /** every (tool, callId) that produced this output, each once, oldest first */
  calls: StoredCall[];
}

/**
 * How stale `used` may get before a repeated put refreshes it. The engine may put the same output
 * on every model call of a session (stickiness re-projects old results); rewriting the index on each
 * of those would cost a file write per reduction per call for no gain, while retention is measured
 * in days, so an hour of imprecision is harmless.
 */
export const USED_REFRESH_MS = 60 * 60 * 1000;

/** Shown in errors so the reader knows what a handle looks like. */
export const HANDLE_SHAPE = `${HANDLE_PREFIX} followed by ${HANDLE_HEX_DIGITS} lowercase hex digits, e.g. ${HANDLE_PREFIX}${'0123456789abcdef'.repeat(2).slice(0, HANDLE_HEX_DIGITS)}`;

/** Throws 'bad-handle' unless `value` has the exact shape of a handle (so it can never name a path). */
export function assertHandle(value: unknown): asserts value is string {
  if (typeof value === 'string' && isHandle(value)) return;
  const shown = typeof value === 'string' ? JSON.stringify(value.length > 80 ? value.slice(0, 80) + '…' : value) : String(value);
  throw new SpillwayError(`${shown} is not a Spillway handle: expected ${HANDLE_SHAPE} (${HANDLE_PATTERN.source})`, 'bad-handle');
}

/**
 * Throws unless `handle` is a handle and is the handle of `text` (stores are content-addressed).
 * Returns the full SHA-256 it computed, so the caller does not hash a large output twice.
 */
export function assertHandleOf(handle: string, text: string): string {
  assertHandle(handle);
  if (typeof text !== 'string') throw new SpillwayError(`the output stored under ${handle} must be a string, got ${typeof text}`);
  const sha256 = sha256Hex(text);
  const actual = handleFromDigest(sha256);
  if (actual !== handle) {
    throw new SpillwayError(
      `refusing to store output under ${handle}: its content hashes to ${actual} (handles are content hashes)`,
      'handle-mismatch',
    );
  }
  return sha256;
}

/**
 * The entry after one more put of `text` by the call described in `meta`, and whether it differs
 * from `previous` (so the caller can skip rewriting an unchanged index entry).
 */
export function recordPut(
  previous: StoreEntry | undefined,
  handle: string,
  text: string,
  meta: StoredMeta,
  now: Date,
  sha256: string = sha256Hex(text),
): { entry: StoreEntry; changed: boolean } {
  const time = now.toISOString();
  const tool = detached(meta.tool);
  const callId = detached(meta.callId);
  const session = meta.session === undefined ? undefined : detached(meta.session);
  const call: StoredCall = { tool, callId, stage: meta.stage, time };
  if (session !== undefined) call.session = session;
  if (!previous) {
    const entry: StoreEntry = {
      handle,
      sha256,
      tool,
      callId,
      stage: meta.stage,
      chars: text.length,
      bytes: Buffer.byteLength(text, 'utf8'),
      lines: countLines(text),
      tokens: meta.tokens,
      time,
      used: time,
      calls: [call],
    };
    if (session !== undefined) entry.session = session;
    return { entry, changed: true };
  }
  const known = previous.calls.some((c) => c.tool === meta.tool && c.callId === meta.callId);
  const stale = now.getTime() - Date.parse(previous.used) >= USED_REFRESH_MS;
  if (known && !stale) return { entry: previous, changed: false };
  const entry: StoreEntry = { ...previous, used: time, calls: known ? previous.calls : [...previous.calls, call] };
  return { entry, changed: true };
}

const SHA256_HEX = /^[0-9a-f]{64}$/;

/**
 * `value` as an entry for `handle`, or undefined when it is not one (a truncated or hand-edited
 * index file). Checks the fields the store relies on; the rest is carried as stored.
 */
export function parseEntry(value: unknown, handle: string): StoreEntry | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const e = value as Partial<StoreEntry>;
  if (e.handle !== handle || typeof e.sha256 !== 'string' || !SHA256_HEX.test(e.sha256)) return undefined;
  if (!e.sha256.startsWith(handle.slice(HANDLE_PREFIX.length))) return undefined;
  if (typeof e.time !== 'string' || Number.isNaN(Date.parse(e.time))) return undefined;
  if (typeof e.used !== 'string' || Number.isNaN(Date.parse(e.used))) return undefined;
  if (typeof e.bytes !== 'number' || typeof e.chars !== 'number' || !Array.isArray(e.calls)) return undefined;
  const callsOk = e.calls.every((c: unknown) => {
    const call = c as Partial<StoredCall> | null;
    return typeof call === 'object' && call !== null && typeof call.tool === 'string' && typeof call.callId === 'string';
  });
  if (!callsOk) return undefined;
  return e as StoreEntry;
}

/** Newest first by `used`, then by `time`, then by handle so the order is total and stable. */
export function newestFirst(a: StoreEntry, b: StoreEntry): number {
  return b.used.localeCompare(a.used) || b.time.localeCompare(a.time) || a.handle.localeCompare(b.handle);
}

/** Retention limits for `prune`. */
export interface PruneOptions {
  /** remove outputs no call has produced for more than this many days */
  maxAgeDays?: number;
  /** then remove the least recently used outputs until the stored outputs total at most this */
  maxBytes?: number;
  /** the current time (tests, replays); defaults to the store's clock */
  now?: Date;
}

export interface PruneResult {
  /** outputs removed */
  removed: number;
  /** UTF-8 bytes of the removed outputs (index files and temp files not counted) */
  freedBytes: number;
  /** leftover temp files of interrupted writes that were removed */
  tempFiles: number;
}

/** Checks prune options with the same care as read options (they come from settings and flags). */
export function checkPruneOptions(options: PruneOptions, clock: () => Date): { maxAgeMs?: number; maxBytes?: number; now: Date } {
  const { maxAgeDays, maxBytes, now = clock() } = options;
  if (maxAgeDays !== undefined && (typeof maxAgeDays !== 'number' || !Number.isFinite(maxAgeDays) || maxAgeDays < 0)) {
    throw new SpillwayError(`maxAgeDays must be a number of days ≥ 0, got ${String(maxAgeDays)}`);
  }
  if (maxBytes !== undefined && (typeof maxBytes !== 'number' || !Number.isSafeInteger(maxBytes) || maxBytes < 0)) {
    throw new SpillwayError(`maxBytes must be a whole number of bytes ≥ 0, got ${String(maxBytes)}`);
  }
  if (!(now instanceof Date) || Number.isNaN(now.getTime())) throw new SpillwayError(`now must be a valid Date, got ${String(now)}`);
  const out: { maxAgeMs?: number; maxBytes?: number; now: Date } = { now };
  if (maxAgeDays !== undefined) out.maxAgeMs = maxAgeDays * DAY_MS;
  if (maxBytes !== undefined) out.maxBytes = maxBytes;
  return out;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * What every store offers on top of the engine's `OutputSink`: lookups, `get`/`read`, listing and
 * retention. The file store and the memory store both implement it, with the same errors.
 */
export interface OutputStore extends OutputSink {
  has(handle: string): boolean;
  meta(handle: string): StoreEntry | undefined;
  list(): StoreEntry[];
  totalBytes(): number;
  get(handle: string): string;
  read(handle: string, options?: ReadOptions): ReadResult;
  prune(options: PruneOptions): PruneResult;
  clear(): void;
}

/** What retention needs to know about one stored output. */
export interface RetentionItem {
  handle: string;
  bytes: number;
  /** when a call last produced the output, in ms since the epoch */
  usedMs: number;
}

/**
 * The outputs `prune` removes, in removal order: first every output unused for longer than
 * `maxAgeMs`, then the least recently used of the rest until they total at most `maxBytes`.
 * Pure, so both stores apply exactly the same policy.
 */
export function choosePrunable(
  items: readonly RetentionItem[],
  limits: { maxAgeMs?: number; maxBytes?: number; now: Date },
): RetentionItem[] {
  const now = limits.now.getTime();
  const oldestFirst = [...items].sort((a, b) => a.usedMs - b.usedMs || a.handle.localeCompare(b.handle));
  const removed: RetentionItem[] = [];
  const kept: RetentionItem[] = [];
  for (const item of oldestFirst) {
    if (limits.maxAgeMs !== undefined && now - item.usedMs > limits.maxAgeMs) removed.push(item);
    else kept.push(item);
  }
  if (limits.maxBytes !== undefined) {
    let total = kept.reduce((sum, item) => sum + item.bytes, 0);
    for (const item of kept) {
      if (total <= limits.maxBytes) break;
      removed.push(item);
      total -= item.bytes;
    }
  }
  return removed;
}
