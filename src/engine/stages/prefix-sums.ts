/**
 * Prefix sums over values that change one at a time (a Fenwick tree): "the sum of the values
 * before index i" and "the first index where the running sum reaches a target", each in O(log n),
 * with a value changed in O(log n) too.
 *
 * Why: the clear stage asks such questions at every model call of a session (the projected
 * tokens before an item, what clearing the oldest results would free), while each call changes a
 * few values (a result cleared, a file input replaced). Summing the values again at each call made
 * a session's projection quadratic in its calls.
 *
 * Where it sits: a helper of the clear stage (clear.ts: the projected tokens per item) and of its
 * planner (clear-planner.ts: the gains of clearable results). `countUpTo` answers the same kind of
 * question over positions that never change (the calls' checkpoints, the request ends a cache holds).
 */

/** How many of the first `n` values of ascending `sorted` are at or before `x`, by binary search. */
export function countUpTo(sorted: readonly number[], x: number, n = sorted.length): number {
  let lo = 0,
    hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class PrefixSums {
  private readonly tree: Float64Array;

  constructor(values: readonly number[]) {
    this.tree = new Float64Array(values.length + 1);
    values.forEach((v, i) => this.add(i, v));
  }

  add(i: number, delta: number): void {
    for (let x = i + 1; x < this.tree.length; x += x & -x) this.tree[x]! += delta;
  }

  /** The sum of the values before index `i`. */
  before(i: number): number {
    let s = 0;
    for (let x = Math.min(i, this.tree.length - 1); x > 0; x -= x & -x) s += this.tree[x]!;
    return s;
  }

  /** The first index at which the sum up to and including it reaches `target` (values must not be negative). */
  lowerBound(target: number): number {
    let pos = 0,
      rest = target;
    for (let step = 1 << Math.floor(Math.log2(Math.max(1, this.tree.length - 1))); step > 0; step >>= 1) {
      const next = pos + step;
      if (next < this.tree.length && this.tree[next]! < rest) {
        pos = next;
        rest -= this.tree[next]!;
      }
    }
    return pos;
  }
}
