/**
 * Reduce after use (`offload.afterUseCap`, with the payback schedule): a result over its tool's
 * cap but not over `afterUseCap` reaches the model whole in the call it arrives in and is offloaded
 * from the next call on, when the session's savings so far pay for that rewrite; else it is
 * offloaded on arrival, as the offload stage would have.
 *
 * Why: the model uses what it just asked for in the very next reply, and a result reduced one call
 * later changes only the end of the request, so the cache rewrite it causes is small. Whether the
 * session can pay for that rewrite is known only to the clear stage's walk over the session's calls
 * (its cost ledger, ../guarantee.ts), so the offload stage leaves these results to that walk.
 *
 * Where it sits: a helper of the clear stage (clear.ts), which asks at each call which results
 * arrive to be weighed, reduces them through this module, and counts what earlier calls still saw
 * of them whole. While it is on, the offload stage leaves these results, reads kept whole included,
 * to it (offload.ts), and file inputs are replaced on arrival, not by clears (inputs.ts).
 */
import type { SpillwayConfig } from '../config';
import { formatInt as fmt } from '../format-number';
import { reduceResult, type Reduced } from './reduce';
import type { Draft } from './results';

/** Whether the offload stage leaves results over their cap, up to afterUseCap, to the clear stage's walk. */
export function deferredToClear(cfg: SpillwayConfig): boolean {
  return cfg.offload.enabled && cfg.offload.afterUseCap > 0 && cfg.clear.enabled && cfg.clear.schedule === 'payback';
}

/** The results reduced after use in one projection, and those waiting for the next call to be. */
export class AfterUse {
  /** whether reduce after use is on (`deferredToClear`) */
  readonly on: boolean;
  /** each result's offload marker, rendered once (the walk weighs it before it decides) */
  private readonly markers = new Map<number, Reduced>();
  /** results let through whole in the current call, to be reduced at the next one */
  private waiting: number[] = [];
  /**
   * Items holding results that an earlier projection of the session reduced after use, with the
   * tokens those results had verbatim: the call whose latest round they were in saw them whole,
   * and the walk counts (and walks) that call as it was made live.
   */
  private readonly seenWhole = new Map<number, number>();
  private readonly seenItems: number[];
  /** the first of `seenItems` not before the current call's latest round (rounds only move forward) */
  private nextSeen = 0;

  constructor(private readonly draft: Draft) {
    const results = draft.results;
    this.on = deferredToClear(results.cfg);
    results.list.forEach((r, i) => {
      const d = draft.decisions[i];
      if (d?.afterUse) this.seenWhole.set(r.item, (this.seenWhole.get(r.item) ?? 0) + results.partsTokens(i, d) - d.projectedTokens);
    });
    this.seenItems = [...this.seenWhole.keys()].sort((a, b) => a - b);
  }

  /**
   * What results reduced after use by earlier projections had verbatim in the call whose latest
   * round starts at item `roundStart` and ends before checkpoint `cp`: their tokens, and the first
   * of their items (-1 when none).
   */
  seenIn(roundStart: number, cp: number): { tokens: number; first: number } {
    let tokens = 0,
      first = -1;
    while (this.nextSeen < this.seenItems.length && this.seenItems[this.nextSeen]! < roundStart) this.nextSeen++;
    for (let k = this.nextSeen; k < this.seenItems.length && this.seenItems[k]! < cp; k++) {
      const item = this.seenItems[k]!;
      tokens += this.seenWhole.get(item)!;
      if (first < 0) first = item;
    }
    return { tokens, first };
  }

  /** Results arriving in the latest round (at or after item `roundStart`, before result `before`) that may wait, in order. */
  arriving(before: number, roundStart: number): number[] {
    const list = this.draft.results.list;
    const out: number[] = [];
    for (let i = before - 1; i >= 0 && list[i]!.item >= roundStart; i--) if (this.deferrable(i)) out.unshift(i);
    return out;
  }

  /** Lets these results through whole in this call, to be reduced at the next one. */
  wait(results: number[]): void {
    this.waiting = results;
  }

  /** The results let through whole in the current call so far. */
  waitingNow(): readonly number[] {
    return this.waiting;
  }

  /** The results let through whole in the previous call, now due; none wait any longer. */
  takeWaiting(): number[] {
    const due = this.waiting;
    this.waiting = [];
    return due;
  }

  /** Tokens reducing result i after use would free. */
  gain(i: number): number {
    const out = this.offloaded(i, true);
    return typeof out === 'string' ? 0 : Math.max(0, this.tokensNow(i) - out.decision.projectedTokens);
  }

  /** Offloads result i now (after use, or on arrival) on the draft; returns the tokens freed, undefined when kept. */
  reduce(i: number, afterUse: boolean): number | undefined {
    const draft = this.draft;
    if (!draft.open(i) || !this.sizeOver(i)) return undefined;
    this.markers.delete(i);
    const out = this.offloaded(i, afterUse);
    if (out === 'no-gain') draft.refuse(i);
    if (typeof out === 'string') return undefined;
    const was = this.tokensNow(i);
    if (afterUse) out.decision.afterUse = true;
    draft.record(i, out.decision, [out.write]);
    return was - this.tokensNow(i);
  }

  private tokensNow(i: number): number {
    return this.draft.results.resultTokens(i, this.draft.decisions[i]);
  }

  /** Result i's size over its cap, when it is over and not over afterUseCap. */
  private sizeOver(i: number): { size: number; cap: number } | undefined {
    const results = this.draft.results;
    const cap = results.capOf(i);
    if (cap === 'unlimited') return undefined;
    const size = results.overCap(i, cap);
    return size === undefined || size > results.cfg.offload.afterUseCap ? undefined : { size, cap };
  }

  private deferrable(i: number): boolean {
    return this.draft.open(i) && this.sizeOver(i) !== undefined;
  }

  private offloaded(i: number, afterUse: boolean): Reduced {
    let out = this.markers.get(i);
    if (!out) {
      const results = this.draft.results;
      const { size, cap } = this.sizeOver(i)!;
      const why = `${fmt(size)} ${results.cfg.capUnit} over ${results.list[i]!.tool}'s cap of ${fmt(cap)}`;
      out = reduceResult(
        results,
        i,
        'offload',
        afterUse ? `${why}, reduced after the model used it` : why,
        undefined,
        cap,
        this.draft.decisions[i],
      );
      this.markers.set(i, out);
    }
    return out;
  }
}
