/**
 * Why a request still carries results whole: the clear stage's reason for each result it left as it
 * was at a call (ProjectionDetail.held, src/engine/types.ts `ClearHold`), grouped by reason with the
 * tokens each group sends. The words for the reasons live here, for the inspector and `npm run
 * bench:whole` alike.
 */
import type { ClearHold } from '../engine';

/** Each reason in words: what keeps a result whole at this call. */
export const CLEAR_HOLD_LABELS: Readonly<Record<ClearHold, string>> = {
  'in-use': 'in use (referred to in the last calls)',
  gathered: 'gathered, not yet written from',
  excluded: 'tool excluded from clears',
  'as-is': 'a marker, a read-back or saved by the agent',
  'no-gain': 'a marker would not be shorter',
  'under-trigger': 'request under the clear trigger',
  'earlier-clear': "an earlier projection's clear in force",
  'too-little': 'too little clearable',
  'no-payback': 'no clear pays back in the calls expected',
  unaffordable: "the session's bank cannot pay for a clear",
  recent: 'kept by clear.keep',
  enough: 'the clear had freed enough',
};

/** The results one reason keeps whole at a call, and the tokens they send. */
export interface HeldGroup {
  reason: ClearHold;
  results: number;
  tokens: number;
}

/**
 * The results a call sends whole, grouped by the clear stage's reason, the group sending the most
 * tokens first (ties by reason, so the order is stable). `held` and `tokens` are per result, as the
 * engine's detail gives them; results a stage reduced (no reason) are left out.
 */
export function heldGroups(held: readonly (ClearHold | undefined)[], tokens: readonly number[]): HeldGroup[] {
  const groups = new Map<ClearHold, HeldGroup>();
  held.forEach((reason, i) => {
    if (!reason) return;
    let g = groups.get(reason);
    if (!g) groups.set(reason, (g = { reason, results: 0, tokens: 0 }));
    g.results++;
    g.tokens += tokens[i] ?? 0;
  });
  return [...groups.values()].sort((a, b) => b.tokens - a.tokens || a.reason.localeCompare(b.reason));
}
