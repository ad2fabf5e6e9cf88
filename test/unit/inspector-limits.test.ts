/**
 * The inspector's host side of "How much is left?" (ReplaySession.limits): on a short real session
 * it gives, per price model, the same share of the oracle's saving kept as `spillway replay
 * --limits` (measured the CLI's way, synchronously), and an aborted signal stops it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/engine/index';
import type { Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { measureLimits, oracleShare } from '../../src/replay/limits';
import type { ReplaySession } from '../../src/extension/inspector/replaySource';
import { SessionLimits } from '../../src/protocol';
import { SHORT_SESSIONS } from '../support/corpus';
import { replayedSession } from '../support/replayed';

const FILE = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;

describe("a replayed session's limit, measured by the inspector's host", () => {
  const config = parseConfig({}).config;
  let transcript: Transcript;
  let session: ReplaySession;
  beforeAll(async () => {
    ({ transcript, session } = await replayedSession(FILE, config));
  });

  it('gives the share the CLI reports, per price model, and a valid protocol answer', async () => {
    const stages: string[] = [];
    const got = SessionLimits.parse(await session.limits(new AbortController().signal, (m) => stages.push(m)));
    // the CLI's figures: the default's totals with read-backs, and the limits measured synchronously
    const t = replay(transcript, { config }).totals;
    const l = measureLimits(transcript, { config });
    expect(got.oracleMisses).toBe(l.oracleMisses);
    for (const p of ['anthropic', 'openai']) {
      const m = got.models[p]!;
      const kept = t.costWithReadBacks[p]?.projected ?? t.cost[p]!.projected;
      expect(m.raw).toBeCloseTo(t.cost[p]!.raw, 6);
      expect(m.kept).toBeCloseTo(kept, 6);
      expect(m.oracle).toBeCloseTo(l.oracle[p]!, 6);
      expect(m.floor).toBeCloseTo(l.floor[p]!, 6);
      expect(m.share).toBeCloseTo(oracleShare(t.cost[p]!.raw, kept, l.oracle[p]!)!, 6);
      expect(m.floor).toBeLessThanOrEqual(m.oracle);
      expect(m.oracle).toBeLessThan(m.raw);
    }
    expect(stages).toEqual([expect.stringMatching(/^the oracle/), expect.stringMatching(/^the floor/)]);
  });

  it('stops with the reason when its signal is aborted', async () => {
    const abort = new AbortController();
    abort.abort(new Error('cancelled'));
    await expect(session.limits(abort.signal)).rejects.toThrow('cancelled');
  });
});
