/**
 * The clear planner: what a clear at a given call would take, without deciding anything.
 *
 * Why a module of its own: the clear stage (clear.ts) asks this at every call over its trigger, to
 * weigh a clear before it takes one (the payback schedule, ../clear-schedule.ts), so the answer is
 * kept in prefix sums (prefix-sums.ts) and asking costs a few searches, not a walk over the results.
 *
 * Where it sits: a helper of the clear stage, built once per projection and refreshed by the walk
 * whenever a result's gain or clearability changes.
 */
import type { Owed } from '../guarantee';
import { PrefixSums } from './prefix-sums';

/**
 * What a clear at a checkpoint would take, in the order the stage clears (results stale at that
 * checkpoint first, then the oldest), without deciding anything: the first result it touches and
 * the tokens it frees. The walk asks at every call over the trigger; walking the results each time
 * made a session's projection quadratic in its calls (a generated 50 MB body took 2.4 s again in its
 * session). Here the gains of clearable results sit in prefix-sum trees, one for results stale at
 * the checkpoint and one for the others, so a plan is a few searches; a result's entry is refreshed
 * whenever the walk clears or reduces it.
 */
export class ClearPlanner {
  private readonly gains: [PrefixSums, PrefixSums];
  private readonly counts: [PrefixSums, PrefixSums];
  /** what clearing each result would owe (../guarantee.ts, `Owed`): its handles and their read-backs' answers */
  private readonly handles: [PrefixSums, PrefixSums];
  private readonly answers: [PrefixSums, PrefixSums];
  private readonly value: Float64Array;
  private readonly owes: Array<Owed | undefined>;
  private readonly clearable: Uint8Array;
  /** 1 once the result is stale at the checkpoint (its tree), 0 before */
  private readonly side: Uint8Array;
  /** results by the checkpoint from which they are stale, and how many of them are */
  private readonly byStale: number[];
  private staleUpTo = 0;

  constructor(
    n: number,
    private readonly staleAt: readonly number[] | undefined,
    private readonly gainOf: (i: number) => number | undefined,
    private readonly owesOf: (i: number) => Owed,
  ) {
    const zeros = new Array<number>(n).fill(0);
    this.gains = [new PrefixSums(zeros), new PrefixSums(zeros)];
    this.counts = [new PrefixSums(zeros), new PrefixSums(zeros)];
    this.handles = [new PrefixSums(zeros), new PrefixSums(zeros)];
    this.answers = [new PrefixSums(zeros), new PrefixSums(zeros)];
    this.value = new Float64Array(n);
    this.owes = new Array<Owed | undefined>(n);
    this.clearable = new Uint8Array(n);
    this.side = new Uint8Array(n);
    for (let i = 0; i < n; i++) this.refresh(i);
    this.byStale = staleAt ? [...staleAt.keys()].filter((i) => Number.isFinite(staleAt[i]!)).sort((a, b) => staleAt[a]! - staleAt[b]!) : [];
  }

  /** Takes result i's gain and whether it is clearable anew. */
  refresh(i: number): void {
    const g = this.gainOf(i);
    const s = this.side[i]! as 0 | 1;
    this.gains[s].add(i, (g ?? 0) - this.value[i]!);
    this.counts[s].add(i, (g === undefined ? 0 : 1) - this.clearable[i]!);
    this.value[i] = g ?? 0;
    this.clearable[i] = g === undefined ? 0 : 1;
    const was = this.owes[i];
    const owes = g === undefined ? undefined : this.owesOf(i);
    this.handles[s].add(i, (owes?.handles ?? 0) - (was?.handles ?? 0));
    this.answers[s].add(i, (owes?.answers ?? 0) - (was?.answers ?? 0));
    this.owes[i] = owes;
  }

  /**
   * The plan at checkpoint `cp` over results [cursor, protectedFrom) that frees at least `need` tokens
   * if it can, and what clearing them would owe.
   */
  plan(cursor: number, protectedFrom: number, cp: number, need: number): { first: number; freed: number; owes: Owed } | undefined {
    if (this.staleAt) this.advance(cp);
    let freed = 0,
      first = Number.POSITIVE_INFINITY;
    const owes = { handles: 0, answers: 0, largest: 0 };
    for (const s of this.staleAt ? ([1, 0] as const) : ([0] as const)) {
      if (freed >= need) break;
      const part = this.take(s, cursor, protectedFrom, need - freed);
      freed += part.freed;
      first = Math.min(first, part.first);
      owes.handles += part.handles;
      owes.answers += part.answers;
    }
    // (the largest answer is not kept in the sums: their mean stands for it in a plan)
    if (owes.handles > 0) owes.largest = owes.answers / owes.handles;
    return first < Number.POSITIVE_INFINITY ? { first, freed, owes } : undefined;
  }

  /** The gains of every clearable result in [lo, hi), stale or not. */
  total(lo: number, hi: number): number {
    if (hi <= lo) return 0;
    return this.gains[0].before(hi) - this.gains[0].before(lo) + this.gains[1].before(hi) - this.gains[1].before(lo);
  }

  /** Moves the results stale at checkpoint `cp` into the stale tree. */
  private advance(cp: number): void {
    const staleAt = this.staleAt!;
    for (; this.staleUpTo < this.byStale.length && staleAt[this.byStale[this.staleUpTo]!]! < cp; this.staleUpTo++) {
      const i = this.byStale[this.staleUpTo]!;
      const owes = this.owes[i];
      this.gains[0].add(i, -this.value[i]!);
      this.counts[0].add(i, -this.clearable[i]!);
      this.handles[0].add(i, -(owes?.handles ?? 0));
      this.answers[0].add(i, -(owes?.answers ?? 0));
      this.side[i] = 1;
      this.gains[1].add(i, this.value[i]!);
      this.counts[1].add(i, this.clearable[i]!);
      this.handles[1].add(i, owes?.handles ?? 0);
      this.answers[1].add(i, owes?.answers ?? 0);
    }
  }

  /** The clearable results of one tree from `lo` on, in order, until `want` tokens are freed or `hi` is reached. */
  private take(s: 0 | 1, lo: number, hi: number, want: number): { first: number; freed: number; handles: number; answers: number } {
    const none = { first: Number.POSITIVE_INFINITY, freed: 0, handles: 0, answers: 0 };
    if (hi <= lo || want <= 0) return none;
    const g = this.gains[s],
      c = this.counts[s];
    const base = g.before(lo);
    const end = g.before(hi) - base >= want ? g.lowerBound(base + want) + 1 : hi;
    const countBase = c.before(lo);
    if (c.before(end) - countBase === 0) return none;
    const h = this.handles[s],
      a = this.answers[s];
    return {
      first: c.lowerBound(countBase + 1),
      freed: g.before(end) - base,
      handles: h.before(end) - h.before(lo),
      answers: a.before(end) - a.before(lo),
    };
  }
}
