/**
 * Speed work must not change a decision: every projected request of two real sessions, projected call
 * by call in one session as the proxy does, hashes to the value pinned here (under the default and
 * with `offload.afterUseCap: 40000`). A change that means to change decisions updates the pins (the
 * failure prints the new value); a change meant only to make the engine faster must leave them.
 * The pins are main's at 4c54acf (2026-11-27), before the in-use walk became incremental; the pi
 * session's changed on purpose with `clear.paybackHorizon: same` (the Claude Code one clears nothing
 * the horizon decides), and both when a clear stopped taking results whose marker is no shorter in
 * tokens (reduce.ts); the pi session's again with `clear.keepGathered` (what the agent gathered is
 * not cleared before it has written from it: stages/gathering.ts). The pi session's under
 * `offload.afterUseCap: 40000` changed when a dedupe reference became one line (markers.ts): the
 * same decisions, its call-46 reference 62 tokens instead of 114. When the default's `offload.keepReads`
 * went from 24,000 to 48,000 (2026-11-29) the pi session's default pin moved, and the Claude Code
 * session, which the new default leaves whole, kept its pin under the old value. Repeats (a re-read
 * sent as the earlier read's line ranges and what changed: repeats.ts) moved the pi pins and the
 * Claude Code one under `offload.afterUseCap`; 64,000 (the next default) moved none. The pi pins
 * moved when the default's `clear.paybackHorizon` went back to `corpus` (2026-11-29, with the
 * guarantee held per provider and calls after a pause charged cold: docs/log/2026-11-29-cold-calls.md),
 * and again when a clear at a call the cache finds cold stopped waiting for `clear.clearAtLeastTokens`
 * (docs/log/2026-11-29-routes.md). Three moved on 2026-11-30 with a shell loop read named as a read
 * and the default's clear from 30,000 tokens with the latest output in use for 8 calls
 * (docs/log/2026-11-30-latest-in-use.md). The Claude Code pins moved when its prelude was captured
 * again from 2.1.332 (the bodies carry it; one token less a call, every decision the same). The pi
 * pins moved on 2026-12-01 when a clear began to hold the read-backs of what clears hid, made late
 * (`clear.readBacksCovered`), and a later projection stopped making new clears at calls an earlier
 * one had cleared in (docs/log/2026-12-01-late-read-backs.md). Three moved on 2026-12-01 when the
 * session lengths the payback schedule learns from were read again from the 55-session corpus
 * (docs/log/2026-12-01-session-lengths.md). The Claude Code pins moved on 2026-12-02 when a
 * sub-agent's log (this one) began to be replayed with the sub-agent's own prelude, captured from
 * 2.1.332 (docs/log/2026-12-02-sub-agent-prelude.md): other bodies, and the engine now judges them a
 * sub-agent's.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { withAgentPrelude } from '../../src/replay/prelude';
import { readTranscript, requestForCall } from '../../src/replay/readers';

const SESSIONS = join(__dirname, '../fixtures/sessions');

/** sha256 over the sha256 of each projected request, in call order (16 hex digits of each). */
async function projectionHash(
  file: string,
  config: Record<string, unknown>,
): Promise<{ hash: string; calls: number; reduced: number; cleared: number }> {
  const t = withAgentPrelude(await readTranscript(join(SESSIONS, file))).transcript;
  const engine = createEngine(config, { store: new MemorySink() });
  const all = createHash('sha256');
  let cleared = 0,
    reduced = 0;
  for (let k = 0; k < t.calls.length; k++) {
    const p = engine.project(JSON.stringify(requestForCall(t, k)), t.wire, {
      session: 'pin',
      ...(t.observations ? { observations: t.observations } : {}),
      // when the call was sent, as the proxy tells its clock
      ...(t.calls[k]!.at !== undefined ? { at: t.calls[k]!.at } : {}),
    });
    all.update(createHash('sha256').update(p.request).digest('hex').slice(0, 16));
    if (k < t.calls.length - 1) continue;
    reduced = p.reductions.length;
    cleared = p.reductions.filter((r) => r.stage === 'clear').length;
  }
  return { hash: all.digest('hex').slice(0, 16), calls: t.calls.length, reduced, cleared };
}

const CLAUDE = 'dev3/claude-code/randlee__claude-history-subagent-a00c619.jsonl';
const PI = 'dev3/pi/badlogic__pi-session-20251217.jsonl';
const PINS: Array<{ file: string; config: Record<string, unknown>; hash: string; clears?: boolean }> = [
  // under the default (reads kept whole up to 64,000 characters) the Claude Code session clears
  // nothing: it is pinned under the 24,000 of before, where the clear stage acts
  { file: CLAUDE, config: { 'offload.keepReads': 24000 }, hash: '9fac219e38df3b16', clears: true },
  { file: PI, config: {}, hash: '7d78dc247642f172', clears: true },
  { file: CLAUDE, config: { 'offload.afterUseCap': 40000 }, hash: 'c29e4457f9389aef' },
  { file: PI, config: { 'offload.afterUseCap': 40000 }, hash: '59634ce3a055867d' },
];

describe('projections of real sessions are pinned', () => {
  for (const pin of PINS)
    it(`${pin.file} under ${JSON.stringify(pin.config)}`, async () => {
      const got = await projectionHash(pin.file, pin.config);
      // the engine reduces in these sessions, and in two the clear stage acts (the pins cover its decisions)
      expect(got.reduced).toBeGreaterThan(0);
      if (pin.clears) expect(got.cleared).toBeGreaterThan(0);
      expect(got.hash, `projections changed (${got.calls} calls): if decisions were meant to change, pin ${got.hash}`).toBe(pin.hash);
    }, 60_000);
});
