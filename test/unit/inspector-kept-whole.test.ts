/**
 * A result over its cap that the engine sent whole all the same (a read the agent asked for, kept
 * whole while in use: `offload.keepReads`) says so in the inspector, with the engine's own reason,
 * instead of "under its cap"; a reduction that is a reference to an identical output is counted and
 * named as one, not as a preview.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { parseConfig, type Reduction } from '../../src/engine/index';
import type { ReplaySession } from '../../src/extension/inspector/replaySource';
import { freshFigures } from '../../src/extension/inspector/session';
import { TurnDetail } from '../../src/protocol';
import { replayedSession } from '../support/replayed';

/** A 41-call Claude Code session whose Reads of 9 to 14k characters are kept whole under the default. */
const SESSION = join(__dirname, '../fixtures/sessions/dev/claude-code/M-Thisness__windows-admin-e5821007.jsonl');

describe('a read over its cap kept whole while in use, under the default settings', () => {
  const config = parseConfig({}).config;
  let session: ReplaySession;
  beforeAll(async () => {
    ({ session } = await replayedSession(SESSION, config, '2026-11-29T00:00:00Z'));
  });

  const wholeOverCap = () =>
    session
      .turns()
      .flatMap((t) => TurnDetail.parse(session.detail(t.index)).whole ?? [])
      .filter((w) => w.why?.over);

  it("lists each with the engine's reason, naming offload.keepReads, not 'under its cap'", () => {
    const over = wholeOverCap();
    expect(over.length).toBeGreaterThan(0);
    for (const w of over) {
      expect(w.tool).toBe('Read');
      expect(w.chars).toBeGreaterThan(8_000);
      expect(w.why!.reason).toMatch(/^[\d,]+ chars, over Read's cap of 8,000; kept whole while in use: .*\(offload\.keepReads\)/);
    }
  });

  it('says a result sent whole under its cap is under its cap', () => {
    const under = session
      .turns()
      .flatMap((t) => TurnDetail.parse(session.detail(t.index)).whole ?? [])
      .filter((w) => w.why && !w.why.over);
    expect(under.length).toBeGreaterThan(0);
    expect(under.every((w) => w.why!.reason === 'under its cap' && w.chars <= 8_000)).toBe(true);
  });

  it('counts them per tool for the caps table, with the reason they share', () => {
    const kept = session.keptWhole().get('Read');
    expect(kept?.results).toBe(wholeOverCap().length);
    expect(kept?.why).toMatch(/^kept whole while in use: a read the agent asked for stays whole up to 64,000 chars \(offload\.keepReads\)/);
  });
});

describe('a reference to an identical output', () => {
  const reduction = (over: Partial<Reduction>): Reduction => ({
    result: 0,
    callId: 'c',
    tool: 'Bash',
    stage: 'offload',
    reason: "3,000 chars over Bash's cap of 2,000",
    originalChars: 3_000,
    projectedChars: 200,
    originalTokens: 800,
    projectedTokens: 60,
    handle: 'sw_fedcba9876543210fedcba98',
    fresh: true,
    ...over,
  });

  it('is counted as a reference, apart from the previews', () => {
    const f = freshFigures([reduction({}), reduction({ callId: 'd', reason: 'identical to the output of call c' })]);
    expect(f).toMatchObject({ previews: 1, references: 1, clears: 0 });
  });
});
