/**
 * How the inspector's host names what it sends the panel, on real corpus sessions: results by what
 * their command does (not by the `cd` in front of it), a search that finds a command by its text, and
 * turns numbered as `spillway replay` numbers them.
 */
import './support';
import { beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { parseConfig } from '../../src/engine';
import { MemoryStore } from '../../src/store';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { ReplaySource } from '../../src/extension/inspector/replaySource';
import type { InspectorSession } from '../../src/extension/inspector/session';
import { ReductionCollector, sessionSummary } from '../../src/cli/replay-summary';
import { CORPUS } from '../support/corpus';

const DEMO = join(__dirname, '../fixtures/sessions/dev3/claude-code/randlee__claude-history-subagent-a5e7369.jsonl');

describe("the demo session's results, named and searched (default settings)", () => {
  let s: InspectorSession;
  beforeAll(async () => {
    const config = parseConfig({}).config;
    const store = new MemoryStore();
    const t = await readTranscript(DEMO);
    s = new ReplaySource({ store: () => store, config: () => config }).add(DEMO, t, replay(t, { config, store, detail: true }), 1, 'x');
  }, 120_000);

  it('names every Bash result by what its command does, none by the cd in front of it', () => {
    const names = s.turns().flatMap((t) => {
      const d = s.detail(t.index);
      return [...d.results, ...(d.whole ?? [])].filter((r) => r.tool === 'Bash').map((r) => r.source);
    });
    expect(names.length).toBeGreaterThan(5);
    expect(names.filter((n) => !n || n.startsWith('$ cd '))).toEqual([]);
    expect(names).toContainEqual(expect.stringMatching(/^\$ go test \.\/pkg\/export/));
  });

  it('finds the turns that ran `go test` by the command, saying so', () => {
    const found = s.search('go test', 100);
    expect(found.turns.length).toBeGreaterThan(0);
    expect(found.matches!.filter((m) => m.where === 'command').map((m) => m.tool)).toContain('Bash');
    const m = found.matches!.find((x) => x.where === 'command')!;
    expect(m.snippet.slice(m.at, m.at + m.length).toLowerCase()).toBe('go test');
  });
});

describe('one numbering: `spillway replay` and the inspector', () => {
  it('name the same turns for the clears and the misses of one corpus session', async () => {
    // offloads on arrival and clears by age make misses in this short session (as cli.test.ts does)
    const config = parseConfig({
      'offload.keepReads': 0,
      'clear.inUseCalls': 0,
      'inputs.when': 'arrival',
      'clear.schedule': 'trigger',
    }).config;
    // a Claude Code research sub-agent: the Codex pomodoro session, with its reasoning counted as billed,
    // no longer grows enough to clear
    const file = join(CORPUS, 'dev/claude-code/M-Thisness__subagent-cosmic-research-ae346a8.jsonl');
    const t = await readTranscript(file);
    const store = new MemoryStore();
    const figures = new ReductionCollector();
    const result = replay(t, { config, store, detail: true, onProjection: (k, c) => figures.add(k, c.projection) });
    const out = sessionSummary(file, result, figures);
    const s = new ReplaySource({ store: () => store, config: () => config }).add(file, t, result, 1, 'x');
    // the inspector shows turn N for the summary at index N - 1 (`#N` in the timeline, "Turn N" in the details)
    const shown = (index: number) => index + 1;
    const missedTurns = s
      .turns()
      .filter((x) => x.missed > 0)
      .map((x) => shown(x.index));
    expect(missedTurns.length).toBeGreaterThan(0);
    const worst = [...out.matchAll(/^ {2}turn (\d+): \d+ of \d+ identifiers missed/gm)].map((m) => Number(m[1]));
    expect(worst.length).toBeGreaterThan(0);
    for (const n of worst) expect(missedTurns).toContain(n);
    const clearTurns = s
      .turns()
      .filter((x) => s.detail(x.index).results.some((r) => r.fresh && r.stage === 'clear'))
      .map((x) => shown(x.index));
    const listed = [...out.matchAll(/^ {2}turn (\d+): \d+ results? cleared/gm)].map((m) => Number(m[1]));
    expect(listed).toEqual(clearTurns.slice(0, listed.length));
    // a miss's "in turn N" (where it was hidden) is a turn the panel names for one of its misses too
    const since = new Set(
      s
        .turns()
        .filter((y) => y.missed > 0)
        .flatMap((x) => s.detail(x.index).missed.flatMap((m) => (m.since === undefined ? [] : [shown(m.since)]))),
    );
    const hidden = [...out.matchAll(/ in turn (\d+): /g)].map((m) => Number(m[1]));
    expect(hidden.length).toBeGreaterThan(0);
    expect(hidden.filter((n) => !since.has(n))).toEqual([]);
  }, 120_000);
});
