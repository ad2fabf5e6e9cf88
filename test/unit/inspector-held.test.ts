/**
 * Why a request still carries results whole: the clear stage's reason per result, grouped by the
 * engine when asked (`Projection.held`), kept per call by the replay (`heldList`) and shown per turn
 * in the inspector (TurnDetail.held, in the words of src/replay/held.ts). Every result a request
 * holds is either reduced or in exactly one group, and the groups' tokens are what those results send.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createEngine, parseConfig, readRequest } from '../../src/engine/index';
import { CLEAR_HOLD_LABELS } from '../../src/replay/held';
import { requestForCall, type Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store/memory';
import { SessionArchive } from '../../src/extension/inspector/archive';
import type { ReplaySession } from '../../src/extension/inspector/replaySource';
import { ApiSession } from '../../src/extension/inspector/apiSource';
import { TurnDetail } from '../../src/protocol';
import { commandSession } from '../support/command-session';
import { replayedSession } from '../support/replayed';

/** A 41-call Claude Code session (Reads, Bash, edits) that grows past the clear trigger. */
const SESSION = join(__dirname, '../fixtures/sessions/dev/claude-code/M-Thisness__windows-admin-e5821007.jsonl');

const resultsIn = (t: Transcript, k: number) => readRequest(JSON.stringify(requestForCall(t, k)), t.wire).results.length;

describe('the words', () => {
  it('has words for every reason', () => {
    for (const label of Object.values(CLEAR_HOLD_LABELS)) expect(label.length).toBeGreaterThan(5);
  });
});

describe('the replay with detail', () => {
  /** Call k runs c<k>; its output (110 distinct lines, 1,300 tokens, under bash's cap) arrives in call k + 1. */
  const t = commandSession(60, (k) =>
    Array.from({ length: 110 }, (_, i) => `${k}.${i} value ${(k * 7919 + i * 104729) % 100003} of run ${k}`).join('\n'),
  );

  it('accounts for every result of every call, each in one group with the tokens it sends', () => {
    const r = replay(t, { config: parseConfig({}).config, store: new MemoryStore(), detail: true });
    r.calls.forEach((c, k) => {
      const held = c.heldList!;
      const at = `call ${k}: ${JSON.stringify(held)}`;
      expect(held, at).toBeDefined();
      // nothing is over its cap and no clear is ever affordable: every output the request holds is in a group
      expect(c.reductionList, at).toEqual([]);
      expect(
        held.reduce((a, g) => a + g.results, 0),
        at,
      ).toBe(resultsIn(t, k));
      for (const g of held) expect(g.tokens / g.results, at).toBeGreaterThan(1_200);
      // the group that sends the most first
      expect(
        held.map((g) => g.tokens),
        at,
      ).toEqual(held.map((g) => g.tokens).sort((a, b) => b - a));
      expect(
        held.reduce((a, g) => a + g.tokens, 0),
        at,
      ).toBeLessThan(c.projectedTokens);
      const group = (reason: string) => held.find((g) => g.reason === reason)?.results ?? 0;
      // what the agent received in its last six calls (clear.inUseCalls) is in use
      expect(group('in-use'), at).toBe(Math.min(6, k));
      // the rest waits: under the trigger (20,000 tokens), then for a bank that a session with no
      // reduction never fills (the guarantee: a clear's rewrite is paid from savings already made)
      const waiting = c.projectedTokens < 20_000 ? 'under-trigger' : 'unaffordable';
      expect(group(waiting), at).toBe(Math.max(0, k - 6));
    });
    expect(r.calls.some((c) => c.heldList!.some((g) => g.reason === 'unaffordable'))).toBe(true);
  });

  it('names the clear that was made: results it left because it had freed enough, or kept by clear.keep', () => {
    const config = parseConfig({ clear: { schedule: 'trigger', inUseCalls: 0, keepGathered: false, clearAtLeastTokens: 5_000 } }).config;
    const r = replay(t, { config, store: new MemoryStore(), detail: true });
    const cleared = r.calls.findIndex((c) => c.reductionList!.some((x) => x.stage === 'clear' && x.fresh));
    expect(cleared).toBeGreaterThan(0);
    const c = r.calls[cleared]!;
    const reduced = new Set(c.reductionList!.map((x) => x.result)).size;
    expect(c.heldList!.reduce((a, g) => a + g.results, 0) + reduced).toBe(resultsIn(t, cleared));
    expect(c.heldList!.map((g) => g.reason).sort()).toEqual(['enough', 'recent']);
    expect(c.heldList!.find((g) => g.reason === 'recent')!.results).toBe(3);
  });

  it('is not worked out without detail, nor by an engine not asked, nor without the clear stage', () => {
    const r = replay(t, { config: parseConfig({}).config, store: new MemoryStore() });
    expect(r.calls.every((c) => c.heldList === undefined)).toBe(true);
    const body = JSON.stringify(requestForCall(t, 40));
    const engine = (over: object) => createEngine(parseConfig(over).config, { store: new MemoryStore() });
    expect(engine({}).project(body, 'openai-chat').held).toBeUndefined();
    expect(
      engine({})
        .project(body, 'openai-chat', { held: true })
        .held!.reduce((a, g) => a + g.results, 0),
    ).toBe(resultsIn(t, 40));
    expect(engine({ clear: { enabled: false } }).project(body, 'openai-chat', { held: true }).held).toBeUndefined();
  });
});

describe('the inspector, on a replayed Claude Code session', () => {
  const config = parseConfig({}).config;
  let session: ReplaySession;
  let transcript: Transcript;
  beforeAll(async () => {
    ({ session, transcript } = await replayedSession(SESSION, config, '2026-12-01T00:00:00Z'));
  });

  it('tells per turn what the request sent whole and why, in words, every result counted once', () => {
    let withHeld = 0;
    for (const turn of session.turns()) {
      const d = TurnDetail.parse(session.detail(turn.index));
      const n = resultsIn(transcript, turn.index);
      const held = d.held ?? [];
      if (held.length) withHeld++;
      for (const g of held) expect(g.label).toBe(CLEAR_HOLD_LABELS[g.reason as keyof typeof CLEAR_HOLD_LABELS]);
      const reduced = new Set(d.results.map((x) => x.callId)).size;
      // a result shown as a replaced file input only (its call's result sent as it was) is whole too
      expect(held.reduce((a, g) => a + g.results, 0) + reduced, `turn ${turn.index + 1}`).toBeLessThanOrEqual(n);
      expect(held.reduce((a, g) => a + g.results, 0) + reduced, `turn ${turn.index + 1}`).toBeGreaterThanOrEqual(
        n - (d.inputs?.length ?? 0),
      );
    }
    expect(withHeld).toBeGreaterThan(session.turns().length / 2);
  });

  it('keeps the groups when the replay is kept on disk, and drops a damaged one, not the turn', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-held-'));
    try {
      const archive = new SessionArchive(() => dir);
      const turns = session.turns().map((t) => session.detail(t.index));
      const header = { v: 1 as const, origin: 'replay', name: 'held', title: 't', detail: 'd', created: '2026-12-01T00:00:00Z' };
      const kept = turns.map((d) => ({
        summary: session.turns()[d.index]!,
        reductions: [],
        missed: [],
        ...(d.held ? { held: d.held.map(({ reason, results, tokens }) => ({ reason, results, tokens })) } : {}),
      }));
      archive.writeAll(header, kept as never);
      const read = archive.read('replay')[0]!;
      expect(read.turns.map((x) => x.held)).toEqual(kept.map((x) => x.held));
      // a damaged group (unknown reason, a count that is not a whole number) is dropped alone
      const file = archive.fileOf('replay', 'held');
      const bad = {
        ...kept[0],
        held: [
          { reason: 'in-use', results: 2, tokens: 10 },
          { reason: 'nonsense', results: 1, tokens: 1 },
          { reason: 'in-use', results: 1.5, tokens: 1 },
        ],
      };
      writeFileSync(file, [header, bad].map((x) => JSON.stringify(x)).join('\n') + '\n');
      expect(new SessionArchive(() => dir).read('replay')[0]!.turns[0]!.held).toEqual([{ reason: 'in-use', results: 2, tokens: 10 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a session made through the extension API', () => {
  it('keeps per turn the groups the engine gave, in words, also once restored from the archive', () => {
    const config = parseConfig({}).config;
    const store = new MemoryStore();
    const engine = createEngine(config, { store });
    const t = commandSession(12, (k) => Array.from({ length: 40 }, (_, i) => `${k}.${i} value of run ${k}`).join('\n'));
    const session = new ApiSession({ store: () => store, config: () => config }, 'api-held');
    const records = t.calls.map((_, k) => {
      const body = JSON.stringify(requestForCall(t, k));
      return session.add(body, engine.project(body, 'openai-chat', { session: 's', held: true }));
    });
    const last = TurnDetail.parse(session.detail(11));
    expect(last.held!.reduce((a, g) => a + g.results, 0)).toBe(resultsIn(t, 11));
    expect(last.held!.every((g) => g.label === CLEAR_HOLD_LABELS[g.reason as keyof typeof CLEAR_HOLD_LABELS])).toBe(true);
    const restored = new ApiSession({ store: () => store, config: () => config }, 'api-held', 'api', {
      turns: records.map((r) => JSON.parse(JSON.stringify(r)) as never),
      modified: new Date().toISOString(),
      detail: '',
    });
    expect(TurnDetail.parse(restored.detail(11)).held).toEqual(last.held);
  });
});
