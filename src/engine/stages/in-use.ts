/**
 * In use: which tool results the clear stage must leave alone at a given call, because the agent
 * received them or referred to them (references.ts) in its last `clear.inUseCalls` model calls.
 *
 * Why: a clear is a bet that the agent has moved on from what it hides. The agent's own requests
 * say when it has not: a result it just asked for, or one it keeps quoting from, is what its next
 * reply is built from. Results it has not touched for longer are cleared as before (stale first,
 * then the oldest), and become protected again the moment the agent refers to one of them.
 *
 * A later output sent as a reference to a result (an identical output, or a repeat with changes:
 * offload.ts) touches that result too: the model reads the earlier copy again to read the later one.
 * With `clear.inUseLatest`, a name the agent writes touches only the latest result that shows it:
 * the path every command repeats keeps the last output that printed it in use, not all of them.
 *
 * Gathered material the agent has not yet written from (a search, a read, a fetch, a listing, until a
 * later reply writes a file or a report, and through the writes that follow it) is in use however long
 * ago it arrived: gathering.ts, with `clear.keepGathered`.
 *
 * Where it sits: a helper of the clear stage (clear.ts), which walks the session's calls in order
 * and asks `moveTo` at each call which results changed state, so its planner stays current.
 */
import { gatheredUntil } from './gathering';
import { countUpTo } from './prefix-sums';
import { referencesOf } from './references';
import type { Results } from './results';

export class InUse {
  /** per result, the calls from which a touch (its arrival, a reference to it) is known, ascending */
  private readonly touches: number[][];
  /** per result, the last call through which it is gathered material not yet written from (gathering.ts); -1 for none */
  private readonly gathered: readonly number[] | undefined;
  /** per call, the results whose state may change at it */
  private readonly events = new Map<number, number[]>();
  private call = -1;

  constructor(
    results: Results,
    private readonly calls: number,
    candidate: (i: number) => boolean,
    checkpoints: readonly number[],
    /** more text that stands for result i (its call's file input, when the clear replaces it too) */
    extra?: (i: number) => string | undefined,
    /** keep gathered material until the agent has written from it (`clear.keepGathered`) */
    keepGathered = false,
    /** items of later outputs sent as references to result i (offload.ts): the model reads i again there */
    referredBy?: (i: number) => readonly number[],
    /** a token the agent writes touches only the latest result holding it (`clear.inUseLatest`: references.ts) */
    latest = false,
  ) {
    // the call that first sees item x: the first checkpoint after it
    const knownFrom = (x: number): number => countUpTo(checkpoints, x, checkpoints.length - 1);
    const refs = referencesOf(results, candidate, extra, latest);
    this.touches = refs.map((items, i) => {
      if (!candidate(i)) return [];
      // the referring items come after the result and in order, so the calls ascend: drop repeats
      const uniq = [knownFrom(results.list[i]!.item)];
      const more = referredBy?.(i);
      for (const x of more?.length ? [...items, ...more].sort((a, b) => a - b) : items) {
        const t = knownFrom(x);
        if (t !== uniq[uniq.length - 1]) uniq.push(t);
      }
      for (const t of uniq) {
        this.at(t, i);
        this.at(t + calls, i);
      }
      return uniq;
    });
    if (keepGathered) {
      this.gathered = gatheredUntil(results, checkpoints, candidate);
      // the call after the last one it is kept through: its state may change there
      this.gathered.forEach((until, i) => {
        if (until >= 0 && until < Number.POSITIVE_INFINITY) this.at(until + 1, i);
      });
    }
  }

  private at(call: number, i: number): void {
    const e = this.events.get(call);
    if (e) e.push(i);
    else this.events.set(call, [i]);
  }

  /** Whether result i is in use at the current call. */
  now(i: number): boolean {
    const ts = this.touches[i];
    if (!ts) return false;
    if (this.gatheredNow(i)) return true;
    for (let k = ts.length - 1; k >= 0; k--) {
      const t = ts[k]!;
      if (t > this.call) continue;
      return this.call - t < this.calls;
    }
    return false;
  }

  /**
   * Whether result i is in use at the current call as gathered material not yet written from
   * (gathering.ts): only once it has arrived (its first touch).
   */
  gatheredNow(i: number): boolean {
    const ts = this.touches[i];
    return !!this.gathered && !!ts?.length && ts[0]! <= this.call && this.call <= this.gathered[i]!;
  }

  /** Moves to call `call`; returns the results whose state may have changed. */
  moveTo(call: number): readonly number[] {
    this.call = call;
    return this.events.get(call) ?? [];
  }
}
