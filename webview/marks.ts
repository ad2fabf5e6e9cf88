/**
 * The turns worth looking at first: where a clear fired (the drops in the chart), where the agent
 * named something the projection had hidden, and where what the turn decided (its reductions and the
 * file inputs it replaced by a marker) saved the most. The chart marks them, the timeline filters on them, and the inspector opens on one.
 */
import { headline, type TurnSummary } from '../src/protocol';

/** How many turns "the largest savings" names. */
const TOP_SAVINGS = 10;

export interface Marks {
  clears: number[];
  missed: number[];
  savings: number[];
}

export type MarkKind = keyof Marks;
export const MARK_LABEL: Record<MarkKind, string> = { clears: 'Clears', missed: 'Missed identifiers', savings: 'Largest savings' };

/**
 * A turn is a saving when its reductions removed tokens and, where its cost is known, it did not cost
 * more than raw history under `costModel` (a clear that rewrites the cache removes tokens and costs
 * more this turn: listing it under "savings" contradicted its own cost).
 */
export function marksOf(turns: readonly TurnSummary[], costModel = 'anthropic'): Marks {
  const clears: number[] = [];
  const missed: number[] = [];
  const saving: { i: number; v: number }[] = [];
  for (const t of turns) {
    if (!t) continue;
    if ((t.clears ?? 0) > 0) clears.push(t.index);
    if (t.missed > 0) missed.push(t.index);
    const v = t.freshSaved ?? 0;
    const c = t.cost?.[costModel];
    const dearer = c ? headline(c).change > 0 : false;
    if (v > 0 && !dearer) saving.push({ i: t.index, v });
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

/**
 * The turn to open on: the one whose outputs became previews with a handle and that saved the most
 * (what Spillway is for, shown first), else the largest saving, else the first clear or miss, else
 * the first turn.
 */
export function firstInteresting(turns: readonly TurnSummary[], marks: Marks = marksOf(turns)): number {
  if (turns.length === 0) return -1;
  let preview = -1;
  let previewSaved = -1;
  for (const t of turns) {
    if (!t || (t.previews ?? 0) === 0) continue;
    if ((t.freshSaved ?? 0) > previewSaved) {
      preview = t.index;
      previewSaved = t.freshSaved ?? 0;
    }
  }
  if (preview >= 0) return preview;
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
