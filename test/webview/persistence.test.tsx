// The inspector's host side added for the first minute and every day (no DOM, no vscode): sessions
// kept on disk by origin and pruned with the store's retention, cost under caching per turn, every
// result of a turn (reduced or sent whole), search in a turn's own results, the status bar's text.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, rmSync, appendFileSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, parseConfig, type Projection } from '../../src/engine';
import { MemoryStore } from '../../src/store';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { totalsOf, type SessionInfo } from '../../src/protocol';
import { SessionArchive, fileNameFor } from '../../src/extension/inspector/archive';
import { ApiSource } from '../../src/extension/inspector/apiSource';
import { ReplaySource, replayRecords } from '../../src/extension/inspector/replaySource';
import { costOf } from '../../src/extension/inspector/session';
import { sessionsStatus } from '../../src/extension/inspector/status';
import { failing } from '../support/expect';
import { LONG_CLAUDE_CODE, SHORT_SESSIONS } from '../support/corpus';

const LONG = LONG_CLAUDE_CODE;
const config = parseConfig({ defaultCap: 1200, previewChars: 400 }).config;
const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'spillway-persist-'));
  temps.push(d);
  return d;
};
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A chat request whose history grows by one tool result per call; every third result is big. */
function chatRequest(n: number) {
  const messages: object[] = [{ role: 'user', content: 'fix the tests' }];
  for (let i = 1; i <= n; i++) {
    messages.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: i % 3 === 0 ? 'bash' : 'ls', arguments: '{}' } }],
    });
    messages.push({
      role: 'tool',
      tool_call_id: `call_${i}`,
      content: i % 3 === 0 ? `test ${i} line\n`.repeat(600) : `file_${i}.ts\nindex.ts`,
    });
  }
  return { model: 'm', messages };
}

describe('the session archive', () => {
  it('keeps a growing session line by line and reads it back, skipping a torn last line', () => {
    const dir = temp();
    const a = new SessionArchive(() => dir);
    a.begin({ v: 1, origin: 'api', name: 'chat/1', title: 'chat/1', detail: 'd', created: 'x' });
    const summary = { index: 0, originalTokens: 10, projectedTokens: 5, cacheStable: false, reductions: 0, tools: [], missed: 0 };
    a.append('api', 'chat/1', { summary, reductions: [], missed: [] });
    a.append('api', 'chat/1', { summary: { ...summary, index: 7 }, reductions: [], missed: [] });
    appendFileSync(a.fileOf('api', 'chat/1'), '{"summary": {"ind');
    const read = a.read('api');
    expect(read).toHaveLength(1);
    expect(read[0]!.header.name).toBe('chat/1');
    expect(read[0]!.turns.map((t) => t.summary.index)).toEqual([0, 1]);
    // a name with a slash never becomes a path
    expect(fileNameFor('../../etc/passwd')).not.toContain('/');
    expect(a.read('replay')).toEqual([]);
  });

  it('prunes sessions not written for the retention period, and only those', () => {
    const dir = temp();
    const a = new SessionArchive(() => dir);
    a.begin({ v: 1, origin: 'api', name: 'old', title: 'old', detail: '', created: 'x' });
    a.begin({ v: 1, origin: 'copilot', name: 'new', title: 'new', detail: '', created: 'x' });
    const old = new Date(Date.now() - 20 * 86_400_000);
    utimesSync(a.fileOf('api', 'old'), old, old);
    expect(a.prune(14)).toBe(1);
    expect(readdirSync(join(dir, 'api'))).toEqual([]);
    expect(a.read('copilot').map((s) => s.header.name)).toEqual(['new']);
  });
});

describe('sessions that survive a reload', () => {
  it('an API session comes back with its turns, figures and the text of results sent whole', () => {
    const dir = temp();
    const store = new MemoryStore();
    const engine = createEngine(config, { store });
    const ctx = { store: () => store, config: () => config };
    const before = new ApiSource(ctx, new SessionArchive(() => dir));
    for (let n = 1; n <= 4; n++) {
      const req = chatRequest(n);
      before.record('chat-1', req, engine.project(req, 'auto', { session: 'chat-1' }) as Projection);
    }
    const after = new ApiSource(ctx, new SessionArchive(() => dir));
    const [info] = after.list();
    expect(info).toMatchObject({ id: 'api:chat-1', turns: 4 });
    expect(info!.totals!.originalTokens).toBe(before.list()[0]!.totals!.originalTokens);
    return after.open('api:chat-1').then((s) => {
      // turn 3 brought call_3 (big, reduced); turn 4 brought call_4 (small, sent whole)
      const d3 = s!.detail(2);
      expect(d3.own).toEqual(['call_3']);
      expect(d3.whole).toEqual([]);
      const d4 = s!.detail(3);
      expect(d4.whole).toEqual([{ tool: 'ls', callId: 'call_4', chars: 'file_4.ts\nindex.ts'.length }]);
      expect(s!.resultPage(3, 'call_4', 0, 100).text).toBe('file_4.ts\nindex.ts');
      // the same source keeps appending to the kept session
      const req = chatRequest(5);
      after.record('chat-1', req, engine.project(req, 'auto', { session: 'chat-1' }) as Projection);
      expect(new ApiSource(ctx, new SessionArchive(() => dir)).list()[0]!.turns).toBe(5);
    });
  });

  it('any origin can keep its sessions the same way (the chat model provider)', () => {
    const dir = temp();
    const store = new MemoryStore();
    const engine = createEngine(config, { store });
    const ctx = { store: () => store, config: () => config };
    const req = chatRequest(3);
    new ApiSource(ctx, new SessionArchive(() => dir), 'proxy').record('copilot-chat', req, engine.project(req, 'auto') as Projection);
    expect(new ApiSource(ctx, new SessionArchive(() => dir), 'proxy').list()).toMatchObject([
      { id: 'proxy:copilot-chat', origin: 'proxy', turns: 1 },
    ]);
    expect(new ApiSource(ctx, new SessionArchive(() => dir)).list()).toEqual([]);
  });

  it('a replayed session lists its real turn count after a reload and opens without replaying again', async () => {
    const dir = temp();
    const store = new MemoryStore();
    const file = SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!;
    const t = await readTranscript(file);
    const ctx = { store: () => store, config: () => config };
    new ReplaySource(ctx, undefined, new SessionArchive(() => dir)).add(file, t, replay(t, { config, store, detail: true }), 1, 'x');
    const after = new ReplaySource(ctx, undefined, new SessionArchive(() => dir));
    expect(after.list()).toMatchObject([{ id: `replay:${file}`, turns: 18 }]);
    expect(after.list()[0]!.detail).not.toMatch(/not replayed/);
    const s = await after.open(`replay:${file}`);
    expect(s!.turns().map((x) => x.projectedTokens)).toEqual(
      replayRecords(replay(t, { config, store, detail: true })).map((r) => r.summary.projectedTokens),
    );
    // under another configuration the kept figures are stale: it replays again
    const other = parseConfig({ defaultCap: 'unlimited' }).config;
    const changed = new ReplaySource({ store: () => store, config: () => other }, undefined, new SessionArchive(() => dir));
    const s2 = await changed.open(`replay:${file}`);
    expect(s2!.turns().every((x) => x.reductions === 0)).toBe(true);
  });
});

describe('cost under caching per turn', () => {
  it('prices raw history and projection with their cached prefixes, under both price models', async () => {
    const t = await readTranscript(SHORT_SESSIONS['mini-swe-agent__deepseek_bench1__django__django-14752.traj.json']!);
    const result = replay(t, { config, store: new MemoryStore(), detail: true });
    const turns = replayRecords(result).map((r) => r.summary);
    const c = result.calls[5]!;
    // replay prices each call itself (breakpoints, cache minimum, read-backs): the turn shows exactly that
    expect(turns[5]!.cost).toEqual(c.cost);
    // the session's totals equal the replay's own cost totals, with read-backs
    const totals = totalsOf(turns);
    for (const model of ['anthropic', 'openai']) {
      expect(totals.cost![model]!.raw).toBeCloseTo(result.totals.cost[model]!.raw, 6);
      expect(totals.cost![model]!.relative).toBeCloseTo(result.totals.cost[model]!.relative, 9);
      expect(totals.cost![model]!.projected + totals.cost![model]!.readBack!).toBeCloseTo(
        result.totals.costWithReadBacks[model]!.projected,
        6,
      );
    }
  });

  it("uses the replay call's own cost, with read-backs, once replay reports it", () => {
    const provided = { anthropic: { raw: 100, projected: 40, readBack: 5 }, openai: { raw: 80, projected: 50, readBack: 3 } };
    expect(costOf(1, 0, 1, 0, provided)).toEqual(provided);
    const totals = totalsOf([
      { index: 0, originalTokens: 1, projectedTokens: 1, cacheStable: false, reductions: 0, tools: [], missed: 0, cost: provided },
    ]);
    expect(totals.cost!['anthropic']).toEqual({ raw: 100, projected: 40, relative: 0.4, readBack: 5 });
  });
});

describe("a turn's own results", () => {
  it('lists every result of a replayed turn, reduced or whole, and search finds a result only in the turn that brought it', async () => {
    const store = new MemoryStore();
    const t = await readTranscript(SHORT_SESSIONS['mini-swe-agent__deepseek_bench1__django__django-14752.traj.json']!);
    const s = new ReplaySource({ store: () => store, config: () => config }).add(
      '/x/t.traj.json',
      t,
      replay(t, { config, store, detail: true }),
      1,
      'x',
    );
    let total = 0;
    for (let k = 0; k < s.turns().length; k++) {
      const d = s.detail(k);
      total += (d.whole?.length ?? 0) + (d.own?.length ?? 0);
      // the own reduced ones are among the results in force
      for (const id of d.own ?? []) expect(d.results.some((r) => r.callId === id)).toBe(true);
    }
    // every tool result of the transcript belongs to exactly one turn
    expect(total).toBe(t.items.filter((m) => (m as { role?: string }).role === 'tool').length);
    const k = s.turns().findIndex((_, i) => (s.detail(i).whole?.length ?? 0) > 0);
    const w = s.detail(k).whole![0]!;
    const text = s.resultPage(k, w.callId, 0, 100_000).text;
    expect(text.length).toBe(w.chars);
    const needle = text
      .trim()
      .split('\n')
      .find((l) => l.trim().length > 25)!
      .trim()
      .slice(0, 25);
    const hits = s.search(needle, 100).turns;
    expect(hits).toContain(k);
    // later turns carry the same result in their history but do not match
    const ownHas = (i: number) => {
      const d = s.detail(i);
      const n = needle.toLowerCase();
      return (
        d.whole!.some((x) => s.resultPage(i, x.callId, 0, 100_000).text.toLowerCase().includes(n)) ||
        d.results.filter((r) => d.own!.includes(r.callId)).some((r) => store.get(r.handle).toLowerCase().includes(n))
      );
    };
    expect(hits.every(ownHas)).toBe(true);
    // and a turn that only carries it does not match
    const carriers = s
      .turns()
      .map((_, i) => i)
      .filter((i) => i > k && !ownHas(i));
    expect(carriers.length).toBeGreaterThan(0);
    expect(hits.some((i) => carriers.includes(i))).toBe(false);
  });

  it('reads the long real Claude Code session: every turn has its own results and cost', async () => {
    const t = await readTranscript(LONG);
    const store = new MemoryStore();
    const s = new ReplaySource({ store: () => store, config: () => parseConfig({}).config }).add(
      LONG,
      t,
      replay(t, { config: parseConfig({}).config, store, detail: true }),
      1,
      'x',
    );
    const turns = s.turns();
    expect(turns.length).toBeGreaterThan(50);
    expect(
      failing(turns, (x) => x.cost?.['anthropic'] && x.cost['openai']).map((x) => x.index),
      'turns without both costs',
    ).toEqual([]);
    const own = turns.reduce((a, _, i) => a + (s.detail(i).whole?.length ?? 0) + (s.detail(i).own?.length ?? 0), 0);
    expect(own).toBeGreaterThan(turns.length / 2);
    // the tool filter finds the turns that ran Bash, not only the few whose Bash results were reduced
    const ranBash = turns.filter((x) => x.resultTools?.includes('Bash')).length;
    expect(ranBash).toBeGreaterThan(turns.filter((x) => x.tools.includes('Bash')).length);
    expect(s.info.model).toMatch(/^claude-/);
  }, 120_000);

  it('keeps the model of a replayed session, so the status bar prices it before it is opened again', async () => {
    const dir = temp();
    const store = new MemoryStore();
    const t = await readTranscript(LONG);
    const ctx = { store: () => store, config: () => parseConfig({}).config };
    new ReplaySource(ctx, undefined, new SessionArchive(() => dir)).add(
      LONG,
      t,
      replay(t, { config: ctx.config(), store, detail: true }),
      1,
      'x',
    );
    const [listed] = new ReplaySource(ctx, undefined, new SessionArchive(() => dir)).list();
    expect(listed!.model).toBe(t.base['model']);
    expect(listed!.model).toMatch(/^claude-/);
  }, 120_000);
});

describe('the status bar', () => {
  /** a replayed session of three turns, with `over` */
  const replayed = (over: Partial<SessionInfo>): SessionInfo => ({
    id: 'replay:a',
    origin: 'replay',
    title: 'a',
    detail: '',
    turns: 3,
    modified: 'x',
    live: false,
    ...over,
  });

  const api = (over: Partial<SessionInfo>): SessionInfo => ({
    id: 'api:b',
    origin: 'api',
    title: 'b',
    detail: '',
    turns: 1,
    modified: 'x',
    live: true,
    ...over,
  });

  it('counts only the live sessions on its face, tokens and cost in dollars, and the replays apart in the tooltip', () => {
    const s = sessionsStatus([
      replayed({ totals: { originalTokens: 1000, projectedTokens: 600, cost: { anthropic: { raw: 500, projected: 400 } } } }),
      api({ totals: { originalTokens: 1000, projectedTokens: 700, cost: { anthropic: { raw: 1_000_000, projected: 900_000 } } } }),
      { id: 'replay:c', origin: 'replay', title: 'c', detail: '', turns: 0, modified: 'x', live: false },
    ]);
    expect(s.text).toBe('$(fold) Spillway: 300 tokens saved · cost −10.0% (−$0.30)');
    expect(s.tooltip).toMatch(
      /^Spillway in this workspace's live sessions \(1 API session\): 1,000 → 700 tokens sent; input cost under caching with read-backs −10\.0% \(\$3\.00 → \$2\.70, claude-sonnet-4-5 prices where the model is unknown\)\. Not counted above: what Spillway would have saved in 1 replayed session .*: 1,000 → 600 tokens sent; .*−20\.0%.* Click to open the inspector\.$/,
    );
  });

  it('says the savings are in replays when replays are all there is', () => {
    const s = sessionsStatus([
      replayed({ totals: { originalTokens: 1000, projectedTokens: 600, cost: { anthropic: { raw: 500, projected: 400 } } } }),
    ]);
    expect(s.text).toBe('$(fold) Spillway: 400 tokens saved in replays · cost −20.0% (−$0.00030)');
    expect(s.tooltip).not.toMatch(/live sessions/);
  });

  it('counts a proxy session observed without projecting as what would have been saved, not as saved', () => {
    const s = sessionsStatus([
      api({ origin: 'proxy', observed: true, totals: { originalTokens: 1000, projectedTokens: 600 } }),
      api({ id: 'api:d', totals: { originalTokens: 100, projectedTokens: 90 } }),
    ]);
    expect(s.text).toBe('$(fold) Spillway: 10 tokens saved');
    expect(s.tooltip).toContain('would have saved in 1 observed session');
  });

  it('says there is nothing yet when there are no sessions', () => {
    expect(sessionsStatus([]).text).toBe('$(fold) Spillway: 0 tokens saved');
  });

  it('leads with the cost with read-backs, priced at the session model, the same figure as the inspector header', () => {
    const s = sessionsStatus([
      replayed({
        model: 'claude-opus-4-5-20251101',
        totals: {
          originalTokens: 1000,
          projectedTokens: 600,
          cost: { anthropic: { raw: 1_000_000, projected: 700_000, readBack: 100_000 } },
        },
      }),
    ]);
    expect(s.text).toBe('$(fold) Spillway: 400 tokens saved in replays · cost −20.0% (−$1.00)');
    expect(s.tooltip).toContain('with read-backs −20.0% ($5.00 → $4.00)');
  });

  it("prices an OpenAI session under OpenAI's cache rules and its model's price", () => {
    const s = sessionsStatus([
      replayed({
        model: 'gpt-5',
        costModel: 'openai',
        totals: {
          originalTokens: 1000,
          projectedTokens: 600,
          cost: { anthropic: { raw: 1_000_000, projected: 1_000_000 }, openai: { raw: 1_000_000, projected: 500_000 } },
        },
      }),
    ]);
    expect(s.text).toBe('$(fold) Spillway: 400 tokens saved in replays · cost −50.0% (−$0.63)');
    expect(s.tooltip).toContain('($1.25 → $0.63)');
  });
});
