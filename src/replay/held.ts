/**
 * Why a request still carries results whole, in words: the clear stage's reason for each result it
 * left as it was at a call (src/engine/types.ts `ClearHold`; grouped per call in `Projection.held`),
 * for the inspector and `npm run bench:whole` alike.
 */
import type { ClearHold } from '../engine';

/** Each reason in words: what keeps a result whole at this call. */
export const CLEAR_HOLD_LABELS: Readonly<Record<ClearHold, string>> = {
  'in-use': 'in use (referred to in the last calls)',
  gathered: 'gathered, not yet written from',
  excluded: 'tool excluded from clears',
  'as-is': 'a marker, a read-back or saved by the agent',
  'no-gain': 'a marker would not be shorter',
  small: 'too short to clear (clear.minFreedTokens)',
  'under-trigger': 'request under the clear trigger',
  'earlier-clear': "an earlier projection's clear in force",
  'too-little': 'too little clearable',
  'no-payback': 'no clear pays back in the calls expected',
  unaffordable: "the session's bank cannot pay for a clear",
  recent: 'kept by clear.keep',
  enough: 'the clear had freed enough',
};
