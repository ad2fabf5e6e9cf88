/**
 * The clear planner (stages/clear-planner.ts) answers, at each call, what a clear would take:
 * results stale at that call first, then the oldest, in order, until enough tokens are freed. It keeps
 * prefix sums instead of walking the results, so it must give exactly what the walk gives: checked
 * here against the walk itself on random sessions, with results cleared and re-estimated between calls,
 * and so must what the clear would owe (the handles it hides and their read-backs' answers).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ClearPlanner } from '../../src/engine/stages/clear-planner';
import type { Owed } from '../../src/engine/guarantee';

/** The walk the planner replaces: take clearable results in order until `need` tokens are freed. */
function walk(
  gain: (number | undefined)[],
  owes: Owed[],
  staleAt: number[] | undefined,
  cursor: number,
  protectedFrom: number,
  cp: number,
  need: number,
): { first: number; freed: number; owes: Owed } | undefined {
  let freed = 0,
    first = Number.POSITIVE_INFINITY;
  const owed = { handles: 0, answers: 0, largest: 0 };
  const planned = new Set<number>();
  const take = (i: number) => {
    planned.add(i);
    freed += gain[i]!;
    first = Math.min(first, i);
    owed.handles += owes[i]!.handles;
    owed.answers += owes[i]!.answers;
  };
  const enough = () => freed >= need;
  if (staleAt) for (let i = cursor; i < protectedFrom && !enough(); i++) if (staleAt[i]! < cp && gain[i] !== undefined) take(i);
  for (let i = cursor; i < protectedFrom && !enough(); i++) if (!planned.has(i) && gain[i] !== undefined) take(i);
  // (a plan gives the mean answer for the largest: the sums do not keep the largest)
  if (owed.handles > 0) owed.largest = owed.answers / owed.handles;
  return planned.size ? { first, freed, owes: owed } : undefined;
}

const session = fc.record({
  // a result's gain, or undefined when it cannot be cleared; zero gains happen (a tiny result)
  gains: fc.array(fc.option(fc.integer({ min: 0, max: 5_000 }), { nil: undefined }), { minLength: 1, maxLength: 60 }),
  stale: fc.boolean(),
  seed: fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 200, maxLength: 200 }),
});

describe('clear planner', () => {
  it('plans exactly what walking the results would, call after call, as results are cleared and re-estimated', () => {
    fc.assert(
      fc.property(session, ({ gains, stale, seed }) => {
        const n = gains.length;
        const gain = [...gains];
        let r = 0;
        const next = (m: number) => seed[r++ % seed.length]! % m;
        const staleAt = stale ? gain.map(() => (next(3) === 0 ? Number.POSITIVE_INFINITY : next(30))) : undefined;
        // a result owes its handle, and its file input's when a clear replaces that too
        const owes: Owed[] = gain.map(() => ({ handles: 1 + next(2), answers: next(600), largest: 0 }));
        const planner = new ClearPlanner(
          n,
          staleAt,
          (i) => gain[i],
          (i) => owes[i]!,
        );
        let cursor = 0;
        for (let cp = 0; cp < 30; cp++) {
          const protectedFrom = Math.min(n, cursor + next(n + 1));
          const need = next(4) === 0 ? Number.POSITIVE_INFINITY : next(20_000);
          expect(planner.plan(cursor, protectedFrom, cp, need)).toEqual(walk(gain, owes, staleAt, cursor, protectedFrom, cp, need));
          // between calls the stage clears some results and re-estimates others
          for (let k = next(3); k > 0; k--) {
            const i = next(n);
            gain[i] = next(2) === 0 ? undefined : next(5_000);
            owes[i] = { handles: 1 + next(2), answers: next(600), largest: 0 };
            planner.refresh(i);
          }
          if (next(4) === 0) cursor = Math.min(n, cursor + next(3));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('plans nothing when no result before protectedFrom can be cleared, or nothing is needed', () => {
    const planner = new ClearPlanner(
      3,
      undefined,
      (i) => (i === 2 ? 100 : undefined),
      () => ({ handles: 1, answers: 40, largest: 40 }),
    );
    expect(planner.plan(0, 2, 0, 50)).toBeUndefined();
    expect(planner.plan(0, 3, 0, 0)).toBeUndefined();
    expect(planner.plan(0, 3, 0, 50)).toEqual({ first: 2, freed: 100, owes: { handles: 1, answers: 40, largest: 40 } });
  });
});
