/**
 * A replay shows the outputs the agent saved to a file itself and sent as its own preview or pointer
 * (Claude Code's `<persisted-output>`, Copilot's pointer in VS Code): in every replayed turn that
 * sends one, as a live turn does, and in `spillway replay`'s totals and summary. Replayed from a real
 * Claude Code log and the Copilot chat fixture.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { parseConfig } from '../../src/engine/index';
import { TurnDetail } from '../../src/protocol';
import { replayedSession } from '../support/replayed';
import { poolReplays, replay } from '../../src/replay/replay';
import { readTranscript } from '../../src/replay/readers';
import { MemoryStore } from '../../src/store/memory';
import { folderSummary, ReductionCollector, sessionSummary } from '../../src/cli/replay-summary';

const CLAUDE = join(__dirname, '../fixtures/sessions/dev3/claude-code/randlee__claude-history-subagent-a00c619.jsonl');
const COPILOT = join(__dirname, '../fixtures/transcripts/small/copilot-chat-session.jsonl');
const config = parseConfig({}).config;

async function savedTurns(file: string) {
  const { session } = await replayedSession(file, config);
  return session.turns().map((t) => TurnDetail.parse(session.detail(t.index)).savedByAgent ?? []);
}

describe('outputs the agent saved itself, in a replayed session', () => {
  it('Claude Code: its <persisted-output> in every turn that sends it, from the turn it arrived, with the file it names', async () => {
    const turns = await savedTurns(CLAUDE);
    const first = turns.findIndex((s) => s.length > 0);
    expect(first).toBeGreaterThan(0);
    // sent again by every later call, as the agent resends its history
    for (const s of turns.slice(first)) expect(s).toHaveLength(1);
    expect(turns[first]![0]).toMatchObject({ agent: 'claude-code', file: expect.stringMatching(/tool-results\/.+\.txt$/) });
  }, 120_000);

  it("Copilot in VS Code: its pointer to the file it wrote, from the call that sent the test run's result", async () => {
    const turns = await savedTurns(COPILOT);
    expect(turns.map((s) => s.length)).toEqual([0, 0, 1, 1, 1]);
    expect(turns[2]![0]).toMatchObject({ agent: 'copilot-chat', tool: 'run_in_terminal', file: expect.stringMatching(/content\.txt$/) });
  });
});

describe('outputs the agent saved itself, in `spillway replay`', () => {
  it("are counted once each in the totals, with the agent, and named in a session's and a folder's summary", async () => {
    const r = replay(await readTranscript(COPILOT), { config, store: new MemoryStore() });
    expect(r.totals.savedByAgent).toEqual({ outputs: 1, agents: ['copilot-chat'] });
    expect(sessionSummary(COPILOT, r, new ReductionCollector())).toContain(
      'saved by the agent: 1 output (Copilot); its preview sent as it was',
    );
    const c = replay(await readTranscript(CLAUDE), { config, store: new MemoryStore() });
    expect(c.totals.savedByAgent).toEqual({ outputs: 1, agents: ['claude-code'] });
    const plain = replay(await readTranscript(join(__dirname, '../fixtures/transcripts/small/cline-task-roo.json')), {
      config,
      store: new MemoryStore(),
    });
    expect(plain.totals.savedByAgent).toBeUndefined();
    const sessions = [
      { file: 'a.jsonl', format: r.format, totals: r.totals },
      { file: 'b.jsonl', format: c.format, totals: c.totals },
      { file: 'c.json', format: plain.format, totals: plain.totals },
    ];
    expect(folderSummary('dir', sessions, poolReplays([r, c, plain]), { skipped: 0, superseded: 0 })).toContain(
      'saved by the agent: 2 outputs in 2 sessions (Claude Code, Copilot); its preview sent as it was',
    );
  }, 120_000);
});
