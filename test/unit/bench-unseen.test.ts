/**
 * The default on sessions unlike the corpus (bench/unseen.ts): which files the set holds and where
 * each came from, one session's replay (every column routed, the limits beside it), and the table.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unseenFiles, unseenJob, unseenTable, type UnseenResult } from '../../bench/unseen';
import { fixturesDir } from '../../bench/peers';

describe('sessions unlike the corpus', () => {
  let dir: string;
  const CLAUDE = 'anthropic/claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl';
  const CODEX = 'responses/ai-sessions__codex-pomodor-timer.jsonl';
  beforeAll(() => {
    // two small corpus sessions stand in for the set, named in a README as the set's are
    dir = mkdtempSync(join(tmpdir(), 'spillway-unseen-'));
    mkdirSync(join(dir, 'claude-code'));
    mkdirSync(join(dir, 'codex'));
    copyFileSync(join(fixturesDir(), CLAUDE), join(dir, 'claude-code', 'viewer.jsonl'));
    copyFileSync(join(fixturesDir(), CODEX), join(dir, 'codex', 'pomodoro.jsonl'));
    writeFileSync(
      join(dir, 'README.md'),
      [
        '| local path | repo | path in repo |',
        '| --- | --- | --- |',
        '| claude-code/viewer.jsonl | d-kimuson/claude-code-viewer | x.jsonl |',
        '| codex/pomodoro.jsonl | yoavf/ai-sessions | y.jsonl |',
      ].join('\n'),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists every file with the source its README names, and refuses a file none names', () => {
    expect(unseenFiles(dir).map((f) => [f.name, f.source])).toEqual([
      ['claude-code/viewer.jsonl', 'd-kimuson/claude-code-viewer'],
      ['codex/pomodoro.jsonl', 'yoavf/ai-sessions'],
    ]);
    writeFileSync(join(dir, 'codex', 'stray.jsonl'), '');
    try {
      expect(() => unseenFiles(dir)).toThrow(/codex\/stray\.jsonl is in no README table/);
    } finally {
      rmSync(join(dir, 'codex', 'stray.jsonl'));
    }
  });

  it('replays a session under the default with its other provider routed there and the limits beside it', async () => {
    const r = await unseenJob(0, dir);
    expect(r.agent).toBe('claude-code');
    const t = r.totals!;
    expect(t.calls).toBeGreaterThan(0);
    // a Claude Code session goes to Anthropic: its GPT-5 column comes from a replay routed to OpenAI
    expect(Object.keys(t.routedAs ?? {})).toEqual(['openai']);
    for (const p of ['anthropic', 'openai'] as const) {
      const raw = t.cost[p]!.raw;
      expect(t.limits!.floor[p]!).toBeLessThanOrEqual(t.limits!.oracle[p]! + 1e-9);
      expect(t.limits!.oracle[p]!).toBeLessThanOrEqual(raw + 1e-9);
      // never dearer than raw before read-backs
      expect(t.cost[p]!.relative).toBeLessThanOrEqual(1 + 1e-9);
    }
  }, 120_000);

  it('pools the sessions, per agent, per source and per session, and counts those over raw', async () => {
    const results: UnseenResult[] = [await unseenJob(0, dir), await unseenJob(1, dir)];
    const md = unseenTable(results);
    expect(md).toMatch(/^2 sessions from 2 sources the corpus does not have \(claude-code 1, codex 1\)/);
    expect(md).toContain('Sessions over raw before read-backs (either price model): 0.');
    expect(md).toMatch(/\n\| all \| 2 \| \d+ \| /);
    expect(md).toMatch(/\n\| claude-code \| 1 \| /);
    expect(md).toMatch(/\n\| yoavf\/ai-sessions \| 1 \| /);
    expect(md).toMatch(/\n\| `codex\/pomodoro\.jsonl` \| 1 \| /);
    // a session over raw is counted
    const dear = {
      ...results[1]!,
      totals: {
        ...results[1]!.totals!,
        cost: { ...results[1]!.totals!.cost, openai: { ...results[1]!.totals!.cost.openai!, relative: 1.01 } },
      },
    };
    expect(unseenTable([results[0]!, dear])).toContain('Sessions over raw before read-backs (either price model): 1.');
    // a file that gave no model call is named, not pooled
    expect(unseenTable([...results, { name: 'x/empty.jsonl', source: 'a/b', agent: 'x', totals: undefined }])).toContain(
      'Left out, no model call read: x/empty.jsonl.',
    );
  }, 120_000);
});
