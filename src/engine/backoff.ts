/**
 * Back-off on read-backs: a session whose reductions make the agent read outputs back reduces less
 * of that tool from then on. A read-back is the agent asking for a stored output by its handle:
 * `spillway read sw_…`, a read of the store file (whose name is the handle), or a read tool
 * (`read_output`, `mcp__spillway__read_output`, `spillway_read_output`) given the handle; the engine
 * finds them in the requests it projects (an assistant item that names a handle this session
 * issued), and a host that sees one another way tells it with `Engine.noteReadBack` (the replay
 * does, when its miss check decides the agent would have read back).
 *
 * Why per tool and per session: read-backs say that this agent, on this task, needs that tool's
 * outputs whole; another tool's outputs, or another session, say nothing about it. Why only
 * read-backs of outputs offloaded on arrival: back-off raises the cap on arrival, and only those say
 * the preview on arrival was not enough. An output a clear took (or a file input it replaced) was
 * sent whole until the agent had moved on; reading it back says the agent came back to an old
 * result, which a higher cap on arrival does not prevent (the clear still takes it), while every
 * large output of that tool then went whole for the rest of the session
 * (docs/log/2026-12-01-backoff-on-arrival.md). Why sticky:
 * markers already sent never change (the prompt cache keeps hitting); only results still to come
 * are affected. Clears are not: measured on the corpus, sparing a read-back tool's results from
 * clears cost 4.6 points with read-backs for 0.1 point of misses (docs/savings.md).
 *
 * Where it sits: the engine keeps the record in the session memory (session.ts); the run hands it
 * to `Results.capOf` (offload's caps).
 */
import type { ReductionKind } from './guarantee';
import { HANDLE_IN_TEXT } from './handle';

/** Each read-back multiplies the tool's cap by this: one read-back of a 10 KB output lets 40 KB through. */
export const BACKOFF_CAP_FACTOR = 4;
/** From this many read-backs on, the tool is kept whole (its cap is unlimited). */
export const BACKOFF_UNLIMITED_AFTER = 3;

/** Per tool, the calls (0-based, in the session) at which one of its outputs was read back. */
export type BackoffRecord = Map<string, number[]>;

/** Read-backs of `tool` noted up to call `call` (all of them when `call` is omitted). */
export function readBacks(record: BackoffRecord | undefined, tool: string, call = Number.POSITIVE_INFINITY): number {
  const calls = record?.get(tool);
  if (!calls) return 0;
  let n = 0;
  for (const c of calls) if (c <= call) n++;
  return n;
}

/** A cap raised for `n` read-backs. */
export function backedOffCap(cap: number, n: number): number | 'unlimited' {
  if (n <= 0) return cap;
  if (n >= BACKOFF_UNLIMITED_AFTER) return 'unlimited';
  return cap * BACKOFF_CAP_FACTOR ** n;
}

/**
 * Records one read-back of `tool`, counted from call `call` on, when what it read back was
 * reduced on arrival (`kind` `offload`); a read-back of what a clear or the inputs stage hid is
 * left out (above).
 */
export function noteReadBack(record: BackoffRecord, tool: string, call: number, kind: ReductionKind): void {
  if (kind !== 'offload') return;
  const calls = record.get(tool);
  if (calls) calls.push(call);
  else record.set(tool, [call]);
}

/** The handles named in `text` (an assistant item: a tool call's input, or a text-mode agent's action). */
export function handlesIn(text: string): string[] {
  return [...text.matchAll(new RegExp(HANDLE_IN_TEXT.source, 'g'))].map((m) => m[0]);
}
