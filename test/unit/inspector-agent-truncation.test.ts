/**
 * The inspector (in the turn an output arrives) and `spillway replay` (in its totals and summary)
 * show that the agent had truncated an output itself (src/engine/agent-truncation.ts), replayed
 * from real logs of mini-swe-agent, pi and Codex.
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

const SESSIONS = join(__dirname, '../fixtures/sessions');
const config = parseConfig({}).config;

async function truncatedTurns(file: string) {
  const { session } = await replayedSession(join(SESSIONS, file), config);
  return session.turns().flatMap((t) => {
    const d = TurnDetail.parse(session.detail(t.index));
    return (d.truncatedByAgent ?? []).map((x) => ({ turn: t.index, ...x }));
  });
}

describe('outputs the agent truncated itself, in the inspector', () => {
  it('mini-swe-agent: the one output it cut, in the turn it arrived, with the characters it elided', async () => {
    const cut = await truncatedTurns('dev/mini-swe-agent/SWE-agent__deepseek-reasoner-sqlfluff-1763.traj.json');
    expect(cut).toHaveLength(1);
    expect(cut[0]).toMatchObject({ agent: 'mini-swe-agent', omitted: 10_868, unit: 'chars', file: '' });
  });

  it('pi: each output its tools cut by lines, with the log its bash tool keeps of the whole', async () => {
    const cut = [
      ...(await truncatedTurns('dev3/pi/badlogic__pi-session-20251217.jsonl')),
      ...(await truncatedTurns('dev4/pi/badlogic__pi-before-compaction.jsonl')),
    ];
    expect(cut.length).toBeGreaterThan(0);
    for (const c of cut) expect(c).toMatchObject({ agent: 'pi', unit: 'lines' });
    // the read tool's (the first 1,603 lines of 2,377), and the bash tool's with its log
    expect(cut.map((c) => c.omitted)).toContain(774);
    expect(cut).toContainEqual(expect.objectContaining({ omitted: 1_463, file: expect.stringMatching(/\/pi-bash-[0-9a-f]+\.log$/) }));
  }, 120_000);

  it('Codex (2025): each output it cut by lines, listed once, in its own turn', async () => {
    const cut = await truncatedTurns('dev/codex/AcidicSoil__sample-rollout-019a93b9.jsonl');
    expect(cut.length).toBeGreaterThan(0);
    for (const c of cut) expect(c).toMatchObject({ agent: 'codex', unit: 'lines', file: '' });
    expect(cut.map((c) => c.omitted)).toContain(39);
    expect(new Set(cut.map((c) => c.callId)).size).toBe(cut.length);
  }, 60_000);
});

describe('outputs the agent truncated itself, in `spillway replay`', () => {
  it("are counted in the totals, with the agent, and named in a session's and a folder's summary", async () => {
    const file = join(SESSIONS, 'dev/mini-swe-agent/SWE-agent__deepseek-reasoner-sqlfluff-1763.traj.json');
    const r = replay(await readTranscript(file), { config, store: new MemoryStore() });
    expect(r.totals.truncatedByAgent).toEqual({ outputs: 1, agents: ['mini-swe-agent'] });
    expect(sessionSummary(file, r, new ReductionCollector())).toContain(
      'truncated by the agent: 1 output (mini-swe-agent); what it cut reached no model',
    );
    // a session whose agent cut nothing says nothing of it
    const plain = replay(await readTranscript(join(SESSIONS, 'dev/swe-agent/SWE-bench__swesmith-pandas-pr53652.traj')), {
      config,
      store: new MemoryStore(),
    });
    expect(plain.totals.truncatedByAgent).toBeUndefined();
    // a folder's summary adds them up and says in how many sessions
    const sessions = [
      { file: 'a.traj.json', format: r.format, totals: r.totals },
      { file: 'b.traj.json', format: r.format, totals: r.totals },
      { file: 'c.traj', format: plain.format, totals: plain.totals },
    ];
    expect(folderSummary('dir', sessions, poolReplays([r, r, plain]), { skipped: 0, superseded: 0 })).toContain(
      'truncated by the agent: 2 outputs in 2 sessions (mini-swe-agent); what it cut reached no model',
    );
  });
});
