/**
 * No reduction longer than what it replaced, and projections that do not depend on where the store
 * lives (issues 35 and 36), on real sessions replayed into a store on disk as `npm start`'s demo and
 * `spillway replay --store` do.
 *
 * - The demo's turn 12: a 644-character Read of 149 tokens, identical to an earlier one, became a
 *   154-token dedupe reference whose marker said "preview below" (its note was the "preview") and
 *   named the store's file. It is now a one-line reference, fewer tokens than the Read.
 * - A marker named the store's absolute path, so two corpus mini-swe-agent sessions replayed with a
 *   store at another path ended at 100.1% of raw under GPT-5 prices. Markers name no file now: the
 *   projections are the same byte for byte wherever the store is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { replay } from '../../src/replay/replay';
import { readTranscript } from '../../src/replay/readers';
import { FileStore } from '../../src/store/store';
import { CORPUS } from '../support/corpus';

const DEMO = 'dev3/claude-code/randlee__claude-history-subagent-a5e7369.jsonl';
const dirs: string[] = [];
const storeAt = (name: string) => {
  const d = mkdtempSync(join(tmpdir(), name));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every projected request of a corpus session replayed under the default into a file store at `dir`. */
async function projections(session: string, dir: string) {
  const requests: string[] = [];
  const result = replay(await readTranscript(join(CORPUS, session)), {
    config: {},
    store: new FileStore(dir),
    onProjection: (i, { projection }) => (requests[i] = projection.request),
  });
  return { requests, result };
}

describe("the demo's turn 12", () => {
  it('the Read identical to an earlier one is a one-line reference of fewer tokens, which calls itself no preview', async () => {
    const reductions: Array<{ turn: number; r: import('../../src/engine/types').Reduction; request: string }> = [];
    replay(await readTranscript(join(CORPUS, DEMO)), {
      config: {},
      store: new FileStore(storeAt('spillway-demo-')),
      onProjection: (i, { projection }) => {
        for (const r of projection.reductions) if (r.fresh) reductions.push({ turn: i + 1, r, request: projection.request });
      },
    });
    const dedupe = reductions.find((x) => x.r.callId === 'toolu_0156Zzq154YL9sCyoVxx2EmJ')!;
    expect(dedupe.turn).toBe(12);
    expect(dedupe.r).toMatchObject({ stage: 'offload', tool: 'Read', originalChars: 644, originalTokens: 149 });
    expect(dedupe.r.reason).toBe('identical to the output of call toolu_01TgBC75wHRZjScxorYVdm2j');
    expect(dedupe.r.projectedTokens).toBeLessThan(dedupe.r.originalTokens);
    // (a one-line marker: the same in the request's JSON text as in the message)
    const marker = /\[spillway: Read output identical[^\]]*\]/.exec(dedupe.request)?.[0];
    expect(marker).toMatch(
      /^\[spillway: Read output identical to the Read output of call toolu_01TgBC75wHRZjScxorYVdm2j above · 644 chars · 149 tokens · read it back: spillway read sw_[0-9a-f]+\]$/,
    );
    // and no reduction of the session, on arrival or later, is a marker of as many tokens as what it replaced
    expect(reductions.filter((x) => !x.r.inputOnly && x.r.projectedTokens >= x.r.originalTokens).map((x) => [x.turn, x.r.callId])).toEqual(
      [],
    );
  }, 120_000);
});

describe('where the store lives', () => {
  for (const session of [DEMO, 'dev/mini-swe-agent/SWE-agent__deepseek-chat-django-11910.traj.json'])
    it(`changes no projected byte: ${session} replayed into two stores at different paths`, async () => {
      const a = await projections(session, storeAt('s-'));
      const b = await projections(session, join(storeAt('spillway-a-much-longer-folder-name-'), 'and/deeper/still/store'));
      expect(a.requests.length).toBe(a.result.totals.calls);
      expect(b.requests.length).toBe(a.requests.length);
      const differ = a.requests.map((r, i) => (r === b.requests[i] ? -1 : i)).filter((i) => i >= 0);
      expect(differ, 'calls whose projection differs').toEqual([]);
      expect(b.result.totals.cost).toEqual(a.result.totals.cost);
    }, 240_000);
});
