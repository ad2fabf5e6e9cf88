/**
 * The inspector's host side of "Replay it as sent to …" (ReplaySession.routed): a replayed Claude
 * Code session lists the providers it can be routed to, and replayed as sent to OpenAI gives the
 * figures `spillway replay --provider openai` gives (src/replay/routes.ts, measured the CLI's way,
 * synchronously); a provider the engine holds no prices for, and an aborted signal, are refused.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/engine/index';
import type { Transcript } from '../../src/replay/readers';
import type { ReplaySession } from '../../src/extension/inspector/replaySource';
import { replayRouted } from '../../src/replay/routes';
import { RoutedFigures, SessionInfo } from '../../src/protocol';
import { SHORT_SESSIONS } from '../support/corpus';
import { replayedSession } from '../support/replayed';

const FILE = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;

describe("a replayed session replayed as sent to another provider, by the inspector's host", () => {
  const config = parseConfig({}).config;
  let transcript: Transcript;
  let session: ReplaySession;
  beforeAll(async () => {
    ({ transcript, session } = await replayedSession(FILE, config));
  });

  it('lists the providers other than its own that the engine holds prices for', () => {
    expect(SessionInfo.parse(session.info).routes).toEqual(['openai', 'openai-4o']);
    expect(session.info.costModel).toBe('anthropic');
  });

  it('gives the figures the CLI gives routed there, and a valid protocol answer', async () => {
    const reports: string[] = [];
    const got = RoutedFigures.parse(await session.routed('openai', new AbortController().signal, (m) => reports.push(m)));
    const t = replayRouted(transcript, { config }, 'openai').totals;
    expect(got.costModel).toBe('openai');
    expect(got.raw).toBeCloseTo(t.cost.openai!.raw, 6);
    expect(got.projected).toBeCloseTo(t.cost.openai!.projected, 6);
    expect(got.projected + got.readBack).toBeCloseTo(t.costWithReadBacks.openai!.projected, 6);
    expect([got.missedIds, got.referencedIds]).toEqual([t.missedIds, t.referencedIds]);
    // the same raw history as the session's own figures: only the projection's bill changes
    expect(got.raw).toBeCloseTo(session.info.totals!.cost!.openai!.raw, 6);
    expect(got.projected).toBeLessThanOrEqual(got.raw);
    expect(reports).toEqual([`the session as sent to openai, over ${transcript.calls.length} calls`]);
  });

  it('refuses a provider the engine holds no prices for, naming it', async () => {
    await expect(session.routed('deepseek', new AbortController().signal)).rejects.toThrow(
      /^the engine holds no cache prices for deepseek:/,
    );
  });

  it('stops with the reason when its signal is aborted', async () => {
    const abort = new AbortController();
    abort.abort(new Error('cancelled'));
    await expect(session.routed('openai', abort.signal)).rejects.toThrow('cancelled');
  });
});
