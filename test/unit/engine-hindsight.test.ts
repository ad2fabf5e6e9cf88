/**
 * Hindsight (src/engine/types.ts), which only the limit's oracle gives the engine (src/replay/limits.ts):
 * the clear stage takes a result only after the last call that needs it, and weighs a clear against
 * the calls the session really has left.
 */
import { describe, expect, it } from 'vitest';
import type { Hindsight } from '../../src/engine';
import type { Transcript } from '../../src/replay/readers';
import { CLEARS_WHEN_THEY_PAY, commandSession } from '../support/command-session';
import { replay } from '../../src/replay/replay';
import { ANTHROPIC_PRICES, OPENAI_PRICES } from '../../src/replay/metrics';
import { perChar } from '../support/run';

const CALLS = 16;

/** Call k runs command c<k>; its 6,000-character output arrives in call k + 1. */
const session = (): Transcript => commandSession(CALLS, (k) => `c${k} output line\n`.repeat(400));

const config = CLEARS_WHEN_THEY_PAY;

/** The call (0-based) in which each result was first sent cleared. */
function clearedAt(t: Transcript, hindsight: Hindsight): Map<string, number> {
  const r = replay(t, { config, tokenizer: perChar, prices: [ANTHROPIC_PRICES, OPENAI_PRICES], detail: true, hindsight });
  const at = new Map<string, number>();
  r.calls.forEach((c, k) => {
    for (const d of c.reductionList ?? []) if (d.stage === 'clear' && !at.has(d.callId)) at.set(d.callId, k);
  });
  return at;
}

describe('the clear stage with hindsight', () => {
  const t = session();
  // c0 arrives in call 1 and is needed until call 12; every other result only in the call it arrives in
  const neededUntil = ({ callId }: { callId: string }) => (callId === 'c0' ? 12 : Number(callId.slice(1)) + 1);
  const remainingCalls = (call: number) => CALLS - 1 - call;

  it('clears a result only after the last call that needs it, and the others once they are used', () => {
    const at = clearedAt(t, { neededUntil, remainingCalls });
    expect(at.size).toBeGreaterThan(0);
    for (const [callId, k] of at) expect(k).toBeGreaterThan(neededUntil({ callId }));
    // results needed no longer are taken while c0 still waits
    expect([...at].some(([callId, k]) => callId !== 'c0' && k <= 12)).toBe(true);
  });

  it('clears nothing that is needed to the end', () => {
    const at = clearedAt(t, { neededUntil: () => CALLS, remainingCalls });
    expect(at.size).toBe(0);
  });

  it('clears nothing when the session is about to end: no clear pays back in the calls it really has left', () => {
    const at = clearedAt(t, { neededUntil, remainingCalls: () => 0 });
    expect(at.size).toBe(0);
  });
});
