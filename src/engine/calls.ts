/**
 * The model calls a request shows. Each call's reply is a run of assistant items (a Responses turn
 * is a message plus one function_call item per parallel call), so a call is counted where such a run
 * begins, never per assistant item. Every stage that needs "which call is this item in" asks here.
 */
import type { ItemKind } from './formats';

/** Whether item `i` begins a model call's reply: the first assistant item of a run of them. */
function startsCall(kinds: readonly ItemKind[], i: number): boolean {
  return kinds[i] === 'assistant' && (i === 0 || kinds[i - 1] !== 'assistant');
}

/**
 * Every model call a request shows, as the item each begins at: before each run of assistant items,
 * and the request's own call last (at the end of its items). Call r's reply is the run at checkpoint r.
 */
export function callCheckpoints(kinds: readonly ItemKind[]): number[] {
  const checkpoints: number[] = [];
  for (let i = 0; i < kinds.length; i++) if (startsCall(kinds, i)) checkpoints.push(i);
  checkpoints.push(kinds.length);
  return checkpoints;
}

/** For each item, the model calls whose reply began at or before it (0 before the first reply). */
export function callsThrough(kinds: readonly ItemKind[]): Uint32Array {
  const through = new Uint32Array(kinds.length);
  let n = 0;
  for (let i = 0; i < kinds.length; i++) {
    if (startsCall(kinds, i)) n++;
    through[i] = n;
  }
  return through;
}
