/**
 * The tuning table (docs/log/2026-11-25-tuning-table.md is its last full run): the mechanisms and settings that were tried for the default,
 * each measured on the whole corpus (every session in test/fixtures/sessions), pooled and per agent,
 * with read-backs priced, under Anthropic prices, OpenAI's current (GPT-5, cached input 0.1x) and the
 * GPT-4o generation's (0.5x). It also reports the guarantee per point: the worst session's cost
 * relative to raw, before and with read-backs, under every price model.
 *
 * `npm run bench:tune` prints the table as Markdown; `-- --points 0,3` runs only those rows (by
 * index), `-- --sessions` adds one line per session for the first point. It writes nothing, except
 * with `-- --lengths`: then it rewrites src/engine/session-lengths.ts (the calls per corpus session
 * that the payback schedule learns from) and measures nothing.
 * Sessions run one after another in this one process (the machine is shared).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { newTokenCounter } from '../src/engine';
import { MemoryStore } from '../src/store';
import { readTranscript, type Transcript } from '../src/replay/readers';
import { ANTHROPIC_PRICES, OPENAI_4O_PRICES, OPENAI_PRICES, type PriceModel } from '../src/replay/metrics';
import { poolReplays, replay, type ReplayTotals } from '../src/replay/replay';
import type { SweepPoint } from './frontier';
import { fixturesDir, fixtureFiles } from './peers';

/** The price models every point is judged under, named as the table names them. */
const PRICES: readonly PriceModel[] = [ANTHROPIC_PRICES, OPENAI_PRICES, OPENAI_4O_PRICES];

/** What was tried, grouped by the mechanism it tunes; the first row is the default itself. */
const POINTS: SweepPoint[] = [
  { name: '**default**', over: {} },
  { name: 'no back-off on read-backs', over: { 'offload.backoff': false } },
  { name: 'reduce after use up to 40,000 chars', over: { 'offload.afterUseCap': 40_000 } },
  {
    // what the proxy's Responses WebSocket mode can do (src/proxy/websocket.ts, arrivalEngine): items live upstream
    name: 'WebSocket route: offload on arrival only',
    over: { 'clear.enabled': false, 'offload.afterUseCap': 0, 'inputs.enabled': false },
  },
  { name: 'superseded results not cleared first', over: { 'clear.staleFirst': false } },
  { name: 'clear on the trigger alone (no payback rule)', over: { 'clear.schedule': 'trigger' } },
  { name: 'file inputs off', over: { 'inputs.enabled': false } },
  { name: 'files written through the shell kept', over: { 'inputs.shellTools': [] } },
  { name: 'file inputs from 60,000 tokens (the earlier default)', over: { 'inputs.minTokens': 60_000 } },
  { name: 'same, shell writes kept (the earlier default)', over: { 'inputs.minTokens': 60_000, 'inputs.shellTools': [] } },
  { name: 'file inputs from 20,000 tokens', over: { 'inputs.minTokens': 20_000 } },
  { name: 'offload cap 4,000', over: { defaultCap: 4_000 } },
  { name: 'clear keep 5', over: { 'clear.keep': 5 } },
];

/** The agent a fixture comes from, by the folder the corpus keeps it in. */
export function agentOf(file: string, t: Transcript): string {
  const parts = file.split(/[\\/]/);
  for (const a of ['claude-code', 'codex', 'mini-swe-agent', 'swe-agent', 'openhands']) {
    if (parts.includes(a) || parts.includes(`${a}-text`)) return a;
  }
  if (t.source === 'openai-chat') return 'mini-swe-agent';
  if (t.source === 'openai-responses') return 'codex';
  if (t.source === 'anthropic-messages') return 'claude-code';
  return t.source;
}

interface Loaded {
  name: string;
  agent: string;
  t: Transcript;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const names = PRICES.map((p) => p.name);
/** `cost A / O / 4o` cells: before read-backs, then with them. */
const cells = (t: ReplayTotals) =>
  `${names.map((n) => pct(t.cost[n]!.relative)).join(' / ')} | ${names.map((n) => pct(t.costWithReadBacks[n]!.relative)).join(' / ')} | ${pct(t.missRate)}`;

function worst(totals: ReplayTotals[], f: (t: ReplayTotals, n: string) => number): string {
  return names.map((n) => pct(Math.max(...totals.map((t) => f(t, n))))).join(' / ');
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const pick = argv.includes('--points') ? argv[argv.indexOf('--points') + 1]!.split(',').map(Number) : undefined;
  const perSession = argv.includes('--sessions');
  const dir = fixturesDir();
  const sessions: Loaded[] = [];
  for (const { file } of fixtureFiles(dir)) {
    try {
      const t = await readTranscript(file);
      if (t.calls.length) sessions.push({ name: relative(dir, file), agent: agentOf(file, t), t });
    } catch (e) {
      process.stderr.write(`bench:tune: skipped ${basename(file)}: ${e instanceof Error ? e.message : String(e)}\n`);
    }
  }
  if (argv.includes('--lengths')) {
    writeLengths(sessions.map((s) => s.t.calls.length));
    return;
  }
  const agents = [...new Set(sessions.map((s) => s.agent))].sort();
  const calls = sessions.reduce((a, s) => a + s.t.calls.length, 0);
  process.stderr.write(`bench:tune: ${sessions.length} sessions, ${calls} calls, agents ${agents.join(', ')}\n`);
  const head = `cost vs raw-with-cache ${names.join(' / ')} | with read-backs | miss`;
  const lines = [`| setting | pool | ${head} | worst session (before / with read-backs) |`, `| --- | --- | --- | --- | --- | --- |`];
  const counter = newTokenCounter('o200k_base');
  const points = POINTS.map((p, i) => ({ p, i })).filter(({ i }) => !pick || pick.includes(i));
  for (const { p, i } of points) {
    const started = Date.now();
    const results = sessions.map((s) => ({
      s,
      r: replay(s.t, { config: { preset: 'spillway', ...p.over }, tokenizer: counter, store: new MemoryStore(), prices: PRICES }),
    }));
    const all = results.map((x) => x.r.totals);
    const pooled = poolReplays(results.map((x) => x.r));
    lines.push(
      `| ${p.name} | all ${sessions.length} | ${cells(pooled)} | ${worst(all, (t, n) => t.cost[n]!.relative)}; ${worst(all, (t, n) => t.costWithReadBacks[n]!.relative)} |`,
    );
    for (const a of agents) {
      const mine = results.filter((x) => x.s.agent === a);
      lines.push(`| | ${a} (${mine.length}) | ${cells(poolReplays(mine.map((x) => x.r)))} | |`);
    }
    if (perSession && i === points[0]!.i) {
      for (const x of results) lines.push(`| | ${x.s.name} (${x.r.totals.calls} calls) | ${cells(x.r.totals)} | |`);
    }
    process.stderr.write(`  ${p.name}: ${((Date.now() - started) / 1000).toFixed(1)} s\n${lines.slice(-1 - agents.length).join('\n')}\n`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

/** Rewrites src/engine/session-lengths.ts, the data the payback schedule learns remaining calls from. */
function writeLengths(lengths: number[]): void {
  const file = join(process.cwd(), 'src', 'engine', 'session-lengths.ts');
  const text = readFileSync(file, 'utf8');
  const sorted = lengths.sort((a, b) => a - b).join(', ');
  const next = text.replace(/(CORPUS_SESSION_LENGTHS: readonly number\[\] = \[)[^\]]*(\])/, `$1\n  ${sorted},\n$2`);
  writeFileSync(file, next);
  process.stderr.write(`bench:tune: wrote ${lengths.length} session lengths to ${file}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:tune: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
