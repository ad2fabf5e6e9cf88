/**
 * `find`: which stored outputs match a question like "the outputs of this session", "what did the
 * last pytest print", "the output that mentioned ECONNREFUSED", newest first.
 *
 * Why: a model that lost a handle (a summarised history, a new session on an old task) still needs
 * a way back to what the store holds. `spillway mcp`'s `find_outputs` tool and any other reader
 * list through this one function, so they agree on what matches and in which order.
 */
import { candidateNames } from '../engine/formats/model';
import { SpillwayError } from '../engine/types';
import type { OutputStore, StoreEntry } from './entry';

/**
 * Most outputs one listing returns unless asked for fewer: a listing line is ~150 chars, so 20 lines
 * stay well under a read page while covering the outputs of a typical task.
 */
export const DEFAULT_FIND_LIMIT = 20;
/** Most outputs one listing can return at all (a model asking for more should narrow the filter). */
export const MAX_FIND_LIMIT = 200;

export interface FindFilter {
  /** only outputs a call of this session produced */
  session?: string;
  /** only outputs of this tool (exact name, or the bare name of a namespaced tool) */
  tool?: string;
  /** only the output of this call id */
  callId?: string;
  /** only outputs whose text contains this, ignoring case */
  text?: string;
  /** most entries returned (default DEFAULT_FIND_LIMIT, at most MAX_FIND_LIMIT) */
  limit?: number;
}

export interface FindResult {
  /** the matching entries, newest first, at most `limit` */
  entries: StoreEntry[];
  /** true when more outputs matched than `limit` */
  more: boolean;
}

/** The stored outputs matching every filter given, newest first. */
export function findOutputs(store: Pick<OutputStore, 'list' | 'get'>, filter: FindFilter = {}): FindResult {
  const limit = filter.limit ?? DEFAULT_FIND_LIMIT;
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_FIND_LIMIT) {
    throw new SpillwayError(`limit must be a whole number from 1 to ${MAX_FIND_LIMIT}, got ${JSON.stringify(filter.limit)}`);
  }
  const needle = filter.text?.toLowerCase();
  const entries: StoreEntry[] = [];
  let more = false;
  for (const entry of store.list()) {
    const calls = entry.calls;
    if (filter.session !== undefined && !calls.some((c) => c.session === filter.session)) continue;
    if (filter.tool !== undefined && !calls.some((c) => candidateNames(c.tool).includes(filter.tool!))) continue;
    if (filter.callId !== undefined && !calls.some((c) => c.callId === filter.callId)) continue;
    // the text filter reads the output, so it runs last and only on what passed the index filters
    if (needle !== undefined && !store.get(entry.handle).toLowerCase().includes(needle)) continue;
    if (entries.length === limit) {
      more = true;
      break;
    }
    entries.push(entry);
  }
  return { entries, more };
}
