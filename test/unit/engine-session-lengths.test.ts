/**
 * The session lengths the payback schedule learns from (EngineOptions.sessionLengths): how many calls a
 * session can still be expected to make, and so whether a clear pays back, comes from them; the
 * corpus's (src/engine/session-lengths.ts) unless given. The held-out benchmark gives the lengths of the
 * other sources' sessions (bench/heldout.ts, `lengthsWithout`).
 */
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../src/replay/readers';
import { CLEARS_WHEN_THEY_PAY, commandSession } from '../support/command-session';
import { replay } from '../../src/replay/replay';
import { ANTHROPIC_PRICES, OPENAI_PRICES } from '../../src/replay/metrics';
import { CORPUS_SESSION_LENGTHS } from '../../src/engine/session-lengths';
import { lengthsWithout } from '../../bench/heldout';
import { perChar } from '../support/run';

const CALLS = 16;

/** Call k runs command c<k>; its 6,000-character output arrives in call k + 1. */
const session = (): Transcript => commandSession(CALLS, (k) => `c${k} output line\n`.repeat(400));

const config = CLEARS_WHEN_THEY_PAY;

/** The callIds cleared over the session, in the order first sent cleared. */
function cleared(sessionLengths?: readonly number[]): string[] {
  const r = replay(session(), {
    config,
    tokenizer: perChar,
    prices: [ANTHROPIC_PRICES, OPENAI_PRICES],
    detail: true,
    ...(sessionLengths ? { sessionLengths } : {}),
  });
  const out: string[] = [];
  for (const c of r.calls) for (const d of c.reductionList ?? []) if (d.stage === 'clear' && !out.includes(d.callId)) out.push(d.callId);
  return out;
}

describe('the payback schedule learns remaining calls from the session lengths it is given', () => {
  it('clears when the lengths say sessions like this one go on for long', () => {
    expect(cleared([1_000, 1_000, 1_000, 1_000]).length).toBeGreaterThan(0);
  });

  it('clears nothing when they say sessions end where this one is: no clear pays back', () => {
    expect(cleared([2, 2, 2, 2])).toEqual([]);
    // too few sessions to learn from: nothing is counted on
    expect(cleared([])).toEqual([]);
  });

  it("learns from the corpus's lengths when given none", () => {
    expect(cleared()).toEqual(cleared(CORPUS_SESSION_LENGTHS));
  });
});

describe('lengthsWithout (the held-out benchmark)', () => {
  it("gives the lengths of every other source's sessions", () => {
    const s = (source: string, calls: number) =>
      ({ name: source, source, agent: 'a', t: { ...session(), calls: session().calls.slice(0, calls) } }) as Parameters<
        typeof lengthsWithout
      >[0][number];
    expect(lengthsWithout([s('a', 3), s('b', 5), s('a', 7), s('c', 2)], 'a')).toEqual([5, 2]);
  });
});
