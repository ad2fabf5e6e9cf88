/**
 * The turns worth looking at first: where a clear fired (the drops in the chart), where the agent
 * named something the projection had hidden, and where the reductions decided in the turn saved the
 * most. The chart marks them, the timeline filters on them, and the inspector opens on one.
 */
import type { TurnSummary } from '../src/protocol';

/** How many turns "the largest savings" names. */
const TOP_SAVINGS = 10;

export interface Marks {
  clears: number[];
  missed: number[];
  savings: number[];
}

export type MarkKind = keyof Marks;
export const MARK_LABEL: Record<MarkKind, string> = { clears: 'Clears', missed: 'Missed identifiers', savings: 'Largest savings' };

export function marksOf(turns: readonly TurnSummary[]): Marks {
  const clears: number[] = [];
  const missed: number[] = [];
  const saving: { i: number; v: number }[] = [];
  for (const t of turns) {
    if (!t) continue;
    if ((t.clears ?? 0) > 0) clears.push(t.index);
    if (t.missed > 0) missed.push(t.index);
    const v = t.freshSaved ?? 0;
    if (v > 0) saving.push({ i: t.index, v });
  }
  saving.sort((a, b) => b.v - a.v || a.i - b.i);
  return {
    clears,
    missed,
    savings: saving
      .slice(0, TOP_SAVINGS)
      .map((s) => s.i)
      .sort((a, b) => a - b),
  };
}

/** The turn to open on: the largest saving, else the first clear or miss, else the first turn. */
export function firstInteresting(turns: readonly TurnSummary[], marks: Marks = marksOf(turns)): number {
  if (turns.length === 0) return -1;
  let best = -1;
  let bestV = 0;
  for (const i of marks.savings) {
    const v = turns[i]?.freshSaved ?? 0;
    if (v > bestV) {
      best = i;
      bestV = v;
    }
  }
  if (best >= 0) return best;
  return marks.clears[0] ?? marks.missed[0] ?? 0;
}

/** The input cost of a turn under one price model (first model when not named). */
export function turnCost(
  t: TurnSummary | undefined,
  model = 'anthropic',
): { raw: number; projected: number; readBack?: number } | undefined {
  const c = t?.cost;
  if (!c) return undefined;
  return c[model] ?? Object.values(c)[0];
}
