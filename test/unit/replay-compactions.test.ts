/**
 * Compactions (src/replay/compactions.ts): the readers list the compactions Claude Code, Codex and pi
 * record, and the replay reports, at each, the raw context against the projected one and whether
 * the projection stays under the agent's own threshold to the session's end. The corpus sessions
 * that compact are the cases: four Claude Code sessions (three automatic, one manual) and three pi
 * sessions (five compactions); no Codex session of the corpus compacts, so a small file in Codex's
 * shape stands in.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { compactionLine, compactionReports, pooledCompactionLine, thresholdOf, type CompactionReport } from '../../src/replay/compactions';
import { readTranscript, type Transcript } from '../../src/replay/readers/index';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store/memory';
import { CORPUS } from '../support/corpus';

const small = (name: string) => join(__dirname, '..', 'fixtures', 'transcripts', 'small', name);

describe('the readers list the compactions their logs record', () => {
  test('Claude Code: a compact_boundary with its trigger, preTokens and version, and the summary that follows it', async () => {
    const t = await readTranscript(join(CORPUS, 'dev/claude-code/M-Thisness__m-claude-code-de73bc86.jsonl'));
    expect(t.compactions).toHaveLength(1);
    const c = t.compactions![0]!;
    expect(c).toMatchObject({ calls: 125, line: 615, trigger: 'auto', tokens: 155_121, version: '2.0.76' });
    expect(c.summary).toMatch(/^This session is being continued from a previous conversation/);
  });

  test('Claude Code: a manual compaction (/compact) at the end of the session comes after its last call', async () => {
    const t = await readTranscript(join(CORPUS, 'dev/claude-code/M-Thisness__router-ssh-97b0ffde.jsonl'));
    expect(t.compactions).toMatchObject([{ calls: t.calls.length, line: 138, trigger: 'manual', tokens: 31_469 }]);
  });

  test("pi: each compaction entry with its tokensBefore and the calls made before it, no trigger (pi's log has none)", async () => {
    const t = await readTranscript(join(CORPUS, 'dev4/pi/badlogic__pi-before-compaction.jsonl'));
    expect(t.compactions?.map(({ calls, line, tokens, trigger }) => ({ calls, line, tokens, trigger }))).toEqual([
      { calls: 171, line: 360, tokens: 175_004, trigger: undefined },
      { calls: 294, line: 629, tokens: 185_014, trigger: undefined },
    ]);
    expect(t.compactions![0]!.summary).toMatch(/^# Context Checkpoint/);
    expect(t.compactions![0]!.model).toBe('claude-opus-4-5');
  });

  test("Codex: a compacted line with the last token_count's usage and context window, and its message as the summary", async () => {
    const t = await readTranscript(small('codex-compacted.jsonl'));
    expect(t.calls).toHaveLength(3);
    expect(t.compactions).toEqual([
      {
        calls: 1,
        line: 7,
        tokens: 246_100,
        contextWindow: 258_400,
        model: 'gpt-5.1-codex',
        summary: "Summary: `make` fails at src/parse.c:41 ('tok' undeclared); next, read src/parse.c.",
      },
    ]);
  });

  test('a session that never compacted lists none', async () => {
    const t = await readTranscript(join(CORPUS, 'dev4/claude-code/DRMacIver__claude-reliability-coverage-test-fix.jsonl'));
    expect(t.compactions).toBeUndefined();
  });
});

describe("each agent's threshold, from its source", () => {
  test('Claude Code 2.1 compacts at 200,000 − 20,000 − 13,000; 2.0 at 155,000', () => {
    expect(thresholdOf('claude-code', { version: '2.1.14' }).threshold).toBe(167_000);
    expect(thresholdOf('claude-code', { version: '2.0.76' }).threshold).toBe(155_000);
    // the corpus' automatic compactions came just over the rule of their version
    expect([155_121, 155_548].every((n) => n > thresholdOf('claude-code', { version: '2.0.76' }).threshold)).toBe(true);
    expect(174_834).toBeGreaterThan(thresholdOf('claude-code', { version: '2.1.29' }).threshold);
  });

  test('Codex compacts at 90% of the 272,000-token window of the gpt-5 family', () => {
    expect(thresholdOf('codex', { model: 'gpt-5.1-codex', contextWindow: 258_400 }).threshold).toBe(244_800);
    expect(thresholdOf('codex', { model: 'o3', contextWindow: 200_000 }).threshold).toBe(180_000);
  });

  test("pi compacts over its model's window less 16,384 reserved", () => {
    expect(thresholdOf('pi', { model: 'claude-opus-4-5' })).toEqual({
      threshold: 183_616,
      rule: 'pi: 200,000-token window − 16,384 reserved',
    });
    expect(thresholdOf('pi', { model: 'mystery' }).rule).toContain('(assumed)');
  });
});

/** Calls whose raw context grows by `step` a call and whose projection is `share` of it. */
const calls = (n: number, step: number, share: number) =>
  Array.from({ length: n }, (_, k) => ({ originalTokens: (k + 1) * step, projectedTokens: Math.round((k + 1) * step * share) }));
const piAt = (c: { calls: number; tokens?: number }): Pick<Transcript, 'source' | 'compactions'> => ({
  source: 'pi',
  compactions: [{ line: 1, summary: 'x'.repeat(400), model: 'claude-opus-4-5', ...c }],
});

describe('what the projection does to a compaction', () => {
  test('the context is measured at the first call after the compaction, replayed with the full history', () => {
    const [r] = compactionReports(piAt({ calls: 9, tokens: 200_000 }), calls(12, 20_000, 0.5));
    expect(r).toMatchObject({ call: 9, rawTokens: 200_000, projectedTokens: 100_000, agentTokens: 200_000, summaryTokens: 100 });
  });

  test('an automatic compaction the projection keeps under the threshold to the end is postponed past it', () => {
    const [r] = compactionReports(piAt({ calls: 9, tokens: 200_000 }), calls(12, 20_000, 0.5));
    expect(r).toMatchObject({ trigger: 'auto', triggerInferred: true, threshold: 183_616, postponed: true });
    expect(r!.reachedAt).toBeUndefined();
  });

  test('the projection that reaches the threshold later postpones the compaction to that call', () => {
    const [r] = compactionReports(piAt({ calls: 9, tokens: 200_000 }), calls(20, 20_000, 0.5));
    // 0.5 × 20,000 × (k + 1) ≥ 183,616 from k = 18
    expect(r).toMatchObject({ postponed: false, reachedAt: 18 });
  });

  test('a projection over the threshold at the compaction keeps it where it was', () => {
    const [r] = compactionReports(piAt({ calls: 9, tokens: 200_000 }), calls(12, 20_000, 0.95));
    expect(r).toMatchObject({ postponed: false, reachedAt: 9 });
  });

  test('the projection is put on the agent’s scale: its count over the replay’s at the first compaction', () => {
    // the agent counted 10% more than the replay: a projection of 170,000 is 187,000 to it, over 183,616
    const [r] = compactionReports(piAt({ calls: 9, tokens: 220_000 }), calls(10, 20_000, 0.85));
    expect(r).toMatchObject({ projectedTokens: 170_000, projectedAgentTokens: 187_000, postponed: false, reachedAt: 9 });
  });

  test('a compaction under the threshold was asked for (manual) and is never postponed', () => {
    const [r] = compactionReports(piAt({ calls: 9, tokens: 175_004 }), calls(12, 20_000, 0.1));
    expect(r).toMatchObject({ trigger: 'manual', triggerInferred: true, postponed: false });
  });

  test('a compaction after the last call is measured at the last call', () => {
    const [r] = compactionReports(piAt({ calls: 12, tokens: 240_000 }), calls(12, 20_000, 0.5));
    expect(r).toMatchObject({ call: 11, rawTokens: 240_000 });
  });

  test('one line for people names each compaction and what became of it', () => {
    const reports: CompactionReport[] = [
      ...compactionReports(piAt({ calls: 9, tokens: 200_000 }), calls(12, 20_000, 0.5)),
      ...compactionReports(piAt({ calls: 9, tokens: 175_004 }), calls(12, 20_000, 0.5)),
    ];
    expect(compactionLine(reports)).toBe(
      'compactions: 2, 1 postponed past the end (threshold 184k; raw→sent): call 9 auto? 200k→100k postponed; call 9 manual? 175k→88k',
    );
    expect(compactionLine([])).toBeUndefined();
  });

  test("a folder's line pools its sessions' compactions by what became of them", () => {
    const session = (share: number, n: number) => compactionReports(piAt({ calls: 9, tokens: 200_000 }), calls(n, 20_000, share));
    expect(pooledCompactionLine([session(0.5, 12), session(0.5, 20), [], session(0.95, 12)])).toBe(
      'compactions: 3 in 3 sessions, 3 automatic: 1 postponed past the end, 1 to a later call, 1 kept',
    );
    expect(pooledCompactionLine([[], []])).toBeUndefined();
  });
});

describe('the replay reports the compactions of a corpus session', () => {
  test('a manual compaction at the end of a Claude Code session: measured at the last call, never postponed', async () => {
    const t = await readTranscript(join(CORPUS, 'dev/claude-code/M-Thisness__router-ssh-97b0ffde.jsonl'));
    const r = replay(t, { config: {}, store: new MemoryStore() });
    const [c] = r.totals.compactions!;
    expect(c).toMatchObject({ call: t.calls.length - 1, trigger: 'manual', agentTokens: 31_469, threshold: 155_000, postponed: false });
    expect(c!.triggerInferred).toBeUndefined();
    expect(c!.rawTokens).toBe(r.calls.at(-1)!.originalTokens);
    expect(c!.projectedTokens).toBe(r.calls.at(-1)!.projectedTokens);
  });

  test("an automatic compaction of Claude Code 2.1 that the default's projection postpones past the session's end", async () => {
    const t = await readTranscript(join(CORPUS, 'dev3/claude-code/randlee__claude-history-simple-session.jsonl'));
    const r = replay(t, { config: {}, store: new MemoryStore() });
    const [c] = r.totals.compactions!;
    expect(c).toMatchObject({ call: 62, trigger: 'auto', agentTokens: 174_834, threshold: 167_000, postponed: true });
    // on the agent's scale the projection stays under the threshold from the compaction to the last call
    const scale = 174_834 / r.calls[62]!.originalTokens;
    expect(r.calls.slice(62).filter((k) => k.projectedTokens * scale >= 167_000)).toEqual([]);
    expect(c!.projectedAgentTokens).toBe(Math.round(r.calls[62]!.projectedTokens * scale));
    expect(c!.projectedTokens).toBeLessThan(c!.rawTokens);
  });

  test('a session that never compacted has no compactions in its totals', async () => {
    const t = await readTranscript(join(CORPUS, 'dev4/claude-code/DRMacIver__claude-reliability-coverage-test-fix.jsonl'));
    expect(replay(t, { config: {}, store: new MemoryStore() }).totals.compactions).toBeUndefined();
  });
});

describe('spillway replay (the built dist/cli.js)', () => {
  test("prints one line for the session's compactions", () => {
    const store = mkdtempSync(join(tmpdir(), 'spillway-compactions-'));
    try {
      const r = spawnSync(
        process.execPath,
        [join(__dirname, '../../dist/cli.js'), 'replay', join(CORPUS, 'dev/claude-code/M-Thisness__router-ssh-97b0ffde.jsonl')],
        { encoding: 'utf8', env: { ...process.env, SPILLWAY_STORE: store } },
      );
      expect(r.stdout.split('\n')).toContain('compactions: 1, 0 postponed past the end (threshold 155k; raw→sent): call 61 manual 31k→31k');
    } finally {
      rmSync(store, { recursive: true, force: true });
    }
  });
});
