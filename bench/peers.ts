/**
 * Spillway against its peers and against the floor, on real sessions (issue 7): every strategy on
 * every session in one run, measured by one meter (bench/metrics.ts), written to bench/results/
 * as peers.json, peers.md and SVG charts of tokens per call. Prints whether the `spillway` default
 * meets each aim of the issue.
 */
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { tokenCounter } from '../src/engine';
import { readTranscript, type Transcript } from '../src/replay/readers';
import { poolReplays } from '../src/replay/replay';
import { aiSdkDriver, langchainDriver, maskingDriver, rawDriver, type DriverFactory } from './drivers';
import { generateSession } from './generate';
import {
  parseTimes,
  rowTotals,
  runDriver,
  runSpillway,
  strategyRow,
  totalsFigures,
  type Row,
  type StrategyKind,
  type StrategyRun,
} from './metrics';
import { tokensPerCallSvg } from './svg';
import {
  frontierSvg,
  frontierTable,
  markFrontier,
  runSweep,
  sweepPoints,
  type FrontierPoint,
  type PointKind,
  type SweepPoint,
  type SweepResult,
} from './frontier';
import { configValue, PRESETS } from '../src/engine/config';
import { runWorkers, workersFor, type Job } from './workers';
import { formatInt } from '../src/engine/format-number';

interface Strategy {
  name: string;
  kind: StrategyKind;
  /** how it is driven, for the tables */
  how: string;
  driver?: DriverFactory;
  config?: Record<string, unknown>;
}

const SEED_PRESETS = ['openai-trimmer', 'clark-budget', 'ai-agent', 'eino', 'oracle-offload'] as const;

const STRATEGIES: Strategy[] = [
  { name: 'raw', kind: 'raw', how: 'the requests as the agent sent them', driver: rawDriver },
  {
    name: 'langchain-clear-tool-uses',
    kind: 'peer',
    how: 'langchain `contextEditingMiddleware({ edits: [new ClearToolUsesEdit()] })` (defaults: trigger 100,000 tokens, keep 3, approximate counts), `wrapModelCall` on the agent state each call',
    driver: langchainDriver(),
  },
  {
    name: 'ai-sdk-prune (docs example)',
    kind: 'peer',
    how: "ai `pruneMessages({ messages, reasoning: 'before-last-message', toolCalls: 'before-last-2-messages', emptyMessages: 'remove' })` before each call",
    driver: aiSdkDriver({ reasoning: 'before-last-message', toolCalls: 'before-last-2-messages', emptyMessages: 'remove' }),
  },
  {
    name: 'ai-sdk-prune (before-last-message)',
    kind: 'peer',
    how: "ai `pruneMessages({ messages, toolCalls: 'before-last-message' })` before each call",
    driver: aiSdkDriver({ toolCalls: 'before-last-message' }),
  },
  ...SEED_PRESETS.map((p): Strategy => ({
    name: `preset ${p}`,
    kind: 'peer',
    how: `Spillway engine, preset \`${p}\` (seed system reproduced), through replay()`,
    config: { preset: p },
  })),
  {
    name: 'spillway',
    kind: 'spillway',
    how: 'Spillway engine, default preset `spillway`, through replay()',
    config: { preset: 'spillway' },
  },
  {
    name: 'mask last 1 turn (reference)',
    kind: 'reference',
    how: "reference, not a peer: the Complexity Trap's observation masking with a window of one, tool results older than the last model call replaced by a one-line placeholder, no store",
    driver: maskingDriver(1),
  },
  {
    name: 'mask last 10 turns (reference)',
    kind: 'reference',
    how: 'reference, not a peer: tool results older than the last 10 model calls replaced by a one-line placeholder, no store',
    driver: maskingDriver(10),
  },
];

export interface Session {
  name: string;
  real: boolean;
  /** a real session of `long/`: the set the default is tuned and judged on */
  long: boolean;
  /** the agent that made a real session */
  agent?: Agent;
  transcript: Transcript;
  note: string;
}

/** The agents of the corpus, each pooled on its own. */
export const AGENTS = ['claude-code', 'codex', 'mini-swe-agent', 'swe-agent', 'openhands', 'pi'] as const;
export type Agent = (typeof AGENTS)[number];

/**
 * The agent that made a corpus file, from its path (the corpus files sessions by agent or by
 * format, and names the agent in the folder or the file name); undefined when none is named.
 */
export function agentOf(path: string): Agent | undefined {
  const p = path.toLowerCase().replace(/\\/g, '/');
  if (p.includes('mini-swe-agent')) return 'mini-swe-agent';
  if (p.includes('openhands')) return 'openhands';
  if (p.includes('codex')) return 'codex';
  if (p.includes('claude-code')) return 'claude-code';
  if (p.includes('swe-agent')) return 'swe-agent';
  // the pi coding agent: its folder (dev3/pi), or a file named after it
  if (/(^|\/)pi(\/|-)/.test(p)) return 'pi';
  return undefined;
}

/** A generated session as a transcript (replies unknown, so no miss rate). */
function generatedTranscript(calls: number, maxToolChars: number, seed: number, maxHuge: number): { t: Transcript; toolChars: number } {
  const s = generateSession(calls, maxToolChars, seed, maxHuge);
  return {
    toolChars: s.toolChars,
    t: {
      source: 'openai-chat',
      wire: 'openai-chat',
      base: { model: 'gpt-4.1', tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }], stream: true },
      items: s.messages,
      calls: s.ends.map((end) => ({ end, reply: '' })),
      skipped: { total: 0, byReason: {}, notes: [] },
    },
  };
}

/**
 * Where the real sessions are: `SPILLWAY_FIXTURES`, else the repository's corpus
 * (`test/fixtures/sessions`: the short sessions by format, `long/` and `dev/`).
 */
export function fixturesDir(root = process.cwd()): string {
  const dir = process.env.SPILLWAY_FIXTURES ?? join(root, 'test', 'fixtures', 'sessions');
  if (!existsSync(join(dir, 'long')))
    throw new Error(`bench: no fixtures at ${dir} (expected the corpus with a long/ folder; set SPILLWAY_FIXTURES)`);
  return dir;
}

/** Every transcript under `dir`, one folder deep and in `long/*` two deep, sorted by path. */
export function fixtureFiles(dir: string): Array<{ file: string; long: boolean }> {
  const out: Array<{ file: string; long: boolean }> = [];
  const walk = (d: string, long: boolean, depth: number) => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(d, e.name);
      if (e.isDirectory() && depth < 3) walk(path, long || e.name === 'long', depth + 1);
      else if (e.isFile() && !e.name.endsWith('.md')) out.push({ file: path, long });
    }
  };
  walk(dir, false, 0);
  return out;
}

/** A short name for a fixture file: its source and the session's own name, or the task id of a long mini-swe-agent run. */
export function sessionName(file: string, long: boolean): string {
  const base = basename(file).replace(/\.(traj\.json|traj|jsonl|json)$/, '');
  const parts = base.split('__');
  const name =
    long && parts.length > 2
      ? `${parts[0]!.replace(/^gruckion-/, '')} ${parts.slice(2).join('__')}`
      : long
        ? parts.join(' ')
        : // the part before `__` names the source, which several sessions share (seven Claude Code sessions of one person)
          parts.slice(0, 2).join(' ');
  return long ? `long: ${name}` : name;
}

/** One session of the run: a corpus file, or a generated session's parameters (`generateSession`). */
type SessionSource =
  { kind: 'file'; file: string; long: boolean } | { kind: 'generated'; calls: number; max: number; seed: number; huge: number };

/** Every session the run measures, real ones first (in the corpus's order), then the generated ones. */
function sessionSources(quick: boolean, dir: string): SessionSource[] {
  const gens: Array<[number, number, number, number]> = quick
    ? [
        [100, 2_000_000, 11, 300_000],
        [200, 2_000_000, 12, 100_000],
      ]
    : [
        [100, 50_000_000, 11, 20_000_000],
        [1000, 50_000_000, 12, 200_000],
      ];
  return [
    ...fixtureFiles(dir).map(({ file, long }) => ({ kind: 'file' as const, file, long })),
    ...gens.map(([calls, max, seed, huge]) => ({ kind: 'generated' as const, calls, max, seed, huge })),
  ];
}

/** A session's name in the tables and the log. */
const nameOf = (src: SessionSource): string => (src.kind === 'file' ? sessionName(src.file, src.long) : `generated ${src.calls} calls`);

async function loadSession(src: SessionSource, dir: string): Promise<Session> {
  if (src.kind === 'file') {
    const t = await readTranscript(src.file);
    const agent = agentOf(relative(dir, src.file));
    return {
      name: nameOf(src),
      real: true,
      long: src.long,
      ...(agent ? { agent } : {}),
      transcript: t,
      note: `${relative(dir, src.file)}: ${t.source}, ${t.calls.length} calls`,
    };
  }
  const { calls, max, seed, huge } = src;
  const { t, toolChars } = generatedTranscript(calls, max, seed, huge);
  return {
    name: nameOf(src),
    real: false,
    long: false,
    transcript: t,
    note: `bench/generate.ts generateSession(${calls}, ${max}, ${seed}, ${huge}): ${(toolChars / 1e6).toFixed(1)} MB of tool output`,
  };
}

export interface SessionResult {
  session: string;
  real: boolean;
  long: boolean;
  agent?: Agent;
  note: string;
  calls: number;
  rows: Row[];
  /** projected tokens per call, per strategy (for the charts) */
  perCall: Record<string, number[]>;
}

async function runSession(
  s: Session,
  strategies: Strategy[] = STRATEGIES,
  log: (line: string) => void = () => {},
  quick = false,
): Promise<SessionResult> {
  const t = s.transcript;
  const counter = tokenCounter('o200k_base');
  const n = t.calls.length;
  const stride = Math.max(1, Math.ceil(n / 40));
  const parse = parseTimes(t, (k) => k % stride === 0 || k === n - 1, s.real && !quick ? 5 : 1);
  const rows: Row[] = [];
  const perCall: Record<string, number[]> = {};
  for (const st of strategies) {
    const started = Date.now();
    const run: StrategyRun = st.config ? runSpillway(t, st.config) : await runDriver(t, st.driver!(t), counter);
    rows.push(strategyRow(st.name, st.kind, run, parse));
    perCall[st.name] = run.calls.map((c) => c.projectedTokens);
    log(`  ${s.name}: ${st.name} ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  return { session: s.name, real: s.real, long: s.long, ...(s.agent ? { agent: s.agent } : {}), note: s.note, calls: n, rows, perCall };
}

/** Which sessions a pooled figure covers: the long ones, the short ones, all real ones, or one agent's. */
type Pool = 'long' | 'short' | 'real' | Agent;
const inPool = (pool: Pool) => (r: { real: boolean; long: boolean; agent?: Agent }) =>
  pool === 'long' ? r.long : pool === 'short' ? r.real && !r.long : pool === 'real' ? r.real : r.agent === pool;

/** Pools the rows of one strategy, one per session (costs, tokens and misses summed). */
export function poolRows(strategy: string, rows: Row[]): Row {
  return pooledOf(strategy, rows);
}

/** One strategy's figures over the real sessions of a pool together (costs, tokens and misses summed). */
function pooled(results: SessionResult[], strategy: string, pool: Pool = 'real'): Row {
  return pooledOf(
    strategy,
    results.filter(inPool(pool)).map((r) => r.rows.find((x) => x.strategy === strategy)!),
  );
}

/**
 * Rows pooled with `poolReplays` (src/replay/replay.ts), the function `spillway replay DIR` pools
 * with, so the benchmark's pooled figures and the CLI's are the same sums; the bench's own figures
 * (timings, what is readable back, the worst largest context) are pooled here.
 */
function pooledOf(strategy: string, rows: Row[]): Row {
  const sum = (f: (r: Row) => number) => rows.reduce((a, r) => a + f(r), 0);
  const removed = sum((r) => r.removedTokens);
  const figures = totalsFigures(poolReplays(rows.map((r) => ({ totals: rowTotals(r) }))));
  return {
    strategy,
    kind: rows[0]!.kind,
    ...figures,
    // the worst session decides whether the largest context stays under half of raw's
    largestRel: Math.max(...rows.map((r) => r.largestRel)),
    recoverableShare: removed > 0 ? sum((r) => r.recoverableTokens) / removed : null,
    msPerCall: sum((r) => r.msPerCall * r.calls) / figures.calls,
    overParse: sum((r) => r.sampledEngineMs) / sum((r) => r.sampledParseMs),
    sampledEngineMs: sum((r) => r.sampledEngineMs),
    sampledParseMs: sum((r) => r.sampledParseMs),
    removedTokens: removed,
    recoverableTokens: sum((r) => r.recoverableTokens),
  };
}

// ---- aims ----------------------------------------------------------------------------------------

/**
 * The aims for the `spillway` default, pooled over the long sessions: at a miss rate of at most 3%
 * (issue 10), cost at most 75% of raw-with-cache at Anthropic and at OpenAI's GPT-5 prices, with the
 * ambition 60% at both (issue 19: OpenAI's cached input is now 0.1x, as Anthropic's reads, so the
 * 65% / 50% that issue 10 set for the 0.5x GPT-4o prices no longer apply); cost with read-backs below
 * every peer's and preset's; and, from issue 7, all removed content readable back and engine time
 * under half a JSON.parse.
 */
const AIMS = {
  maxMiss: 0.03,
  cost: { anthropic: 0.75, openai: 0.75 },
  ambition: { anthropic: 0.6, openai: 0.6 },
  recoverable: 1,
  maxOverParse: 0.5,
} as const;

export interface Aim {
  aim: string;
  value: string;
  met: boolean;
}

const pctOf = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The figure a strategy is ranked by: cost with read-backs (docs/replay-and-cost.md). */
function rankCost(r: Row, price: string): number {
  return r.costWithReadBacks[price]!;
}

export function aimsFor(row: Row, others: Row[], short?: Row): Aim[] {
  const a = row.cost.anthropic!,
    o = row.cost.openai!;
  const miss = row.missRate ?? 0;
  const what = 'cost with read-backs';
  const notBelow = others.filter(
    (p) => rankCost(p, 'anthropic') <= rankCost(row, 'anthropic') || rankCost(p, 'openai') <= rankCost(row, 'openai'),
  );
  const aims: Aim[] = [
    {
      aim: 'miss rate ≤ 3%',
      value:
        row.missRate === null
          ? 'n/a (no identifiers)'
          : `${pctOf(miss)} (${row.missedIds}/${row.referencedIds}; previous definition ${row.missedIdsBefore}/${row.referencedIdsBefore})`,
      met: miss <= AIMS.maxMiss,
    },
    { aim: 'cost ≤ 75% of raw-with-cache (Anthropic prices)', value: pctOf(a), met: a <= AIMS.cost.anthropic && miss <= AIMS.maxMiss },
    { aim: 'cost ≤ 75% of raw-with-cache (OpenAI GPT-5 prices)', value: pctOf(o), met: o <= AIMS.cost.openai && miss <= AIMS.maxMiss },
    {
      aim: 'ambition: cost ≤ 60% / 60% (Anthropic / OpenAI)',
      value: `${pctOf(a)} / ${pctOf(o)}`,
      met: a <= AIMS.ambition.anthropic && o <= AIMS.ambition.openai && miss <= AIMS.maxMiss,
    },
    {
      aim: `${what} below every peer's and preset's, both price models`,
      value: notBelow.length
        ? `${pctOf(rankCost(row, 'anthropic'))} / ${pctOf(rankCost(row, 'openai'))}; not below ${notBelow.map((p) => `${p.strategy} (${pctOf(rankCost(p, 'anthropic'))} / ${pctOf(rankCost(p, 'openai'))})`).join(', ')}`
        : `${pctOf(rankCost(row, 'anthropic'))} / ${pctOf(rankCost(row, 'openai'))}: below all`,
      met: notBelow.length === 0,
    },
    {
      aim: '100% of removed content readable back',
      value: row.recoverableShare === null ? 'nothing removed' : pctOf(row.recoverableShare),
      met: row.recoverableShare === null || row.recoverableShare >= AIMS.recoverable,
    },
    {
      aim: 'engine time ≤ 0.5 × JSON.parse of the same bodies',
      value: `${row.overParse.toFixed(2)}×`,
      met: row.overParse <= AIMS.maxOverParse,
    },
  ];
  if (short) {
    const sa = short.cost.anthropic!,
      so = short.cost.openai!;
    aims.push({
      aim: 'short sessions (pooled) no dearer than raw, miss ≤ 3%',
      value: `${pctOf(sa)} / ${pctOf(so)}, miss ${short.missRate === null ? 'n/a' : pctOf(short.missRate)}`,
      met: sa <= 1 && so <= 1 && (short.missRate ?? 0) <= AIMS.maxMiss,
    });
  }
  return aims;
}

// ---- output --------------------------------------------------------------------------------------

const pct = (x: number | null, d = 1) => (x === null ? 'n/a' : `${(x * 100).toFixed(d)}%`);
const int = (n: number) => formatInt(Math.round(n));

function rowsTable(rows: Row[]): string {
  return [
    '| strategy | input tokens (sum over calls) | reduction vs raw | largest context | largest vs raw | removed content readable back | cache-stable calls | cost vs raw, Anthropic cache prices | cost vs raw, OpenAI cache prices | miss rate | ms per call | time / JSON.parse |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.kind === 'spillway' ? `**${r.strategy}**` : r.strategy} | ${int(r.inputTokens)} | ${pct(r.reduction)} | ${int(r.largest)} | ${pct(r.largestRel, 0)} | ${r.recoverableShare === null ? '—' : pct(r.recoverableShare, 0)} | ${pct(r.cacheStableShare, 0)} | ${pct(r.cost.anthropic!)} | ${pct(r.cost.openai!)} | ${r.missRate === null ? 'n/a' : `${pct(r.missRate)} (${r.missedIds}/${r.referencedIds})`} | ${r.kind === 'raw' ? '—' : r.msPerCall.toFixed(3)} | ${r.kind === 'raw' ? '—' : r.overParse.toFixed(2)} |`,
    ),
  ].join('\n');
}

function aimsTable(aims: Aim[]): string {
  return [
    '| aim (long sessions, pooled) | spillway | met |',
    '| --- | --- | --- |',
    ...aims.map((a) => `| ${a.aim} | ${a.value} | ${a.met ? 'yes' : '**no**'} |`),
  ].join('\n');
}

export interface PeersReport {
  /** everything, for bench/results/peers.md */
  markdown: string;
  /** the pooled tables and how each strategy is driven, for the `peers` block of docs/benchmarks.md */
  summary: string;
  /** one table per session, for the `sessions` block of docs/benchmarks-sessions.md */
  sessions: string;
  frontier: string;
  /** every strategy pooled per agent, one table each */
  byAgent: string;
  aims: Aim[];
  json: unknown;
  svgs: Record<string, string>;
}

/** The frontier points of a pool: every strategy pooled over its sessions, and the sweep over the same sessions. */
function frontierPoints(results: SessionResult[], strategies: Strategy[], sweep: SweepResult[], pool: Pool): FrontierPoint[] {
  const kindOf = (s: Strategy): PointKind =>
    s.kind === 'spillway'
      ? 'default'
      : s.kind === 'raw'
        ? 'raw'
        : s.kind === 'reference'
          ? 'reference'
          : s.name.startsWith('preset ')
            ? 'preset'
            : 'peer';
  // the sweep ran over the real sessions, in the order of `results`
  const real = results.filter((r) => r.real);
  const member = real.map(inPool(pool));
  return markFrontier([
    ...strategies.map((s) => ({ name: s.name, kind: kindOf(s), row: pooled(results, s.name, pool) })),
    ...sweep.map(({ point, rows }) => ({
      name: point.name,
      kind: 'sweep' as const,
      over: point.over,
      row: poolRows(
        point.name,
        rows.filter((_, i) => member[i]),
      ),
    })),
  ]);
}

function report(
  results: SessionResult[],
  meta: { quick: boolean; node: string; seconds: number; command: string; workers: number },
  strategies: Strategy[] = STRATEGIES,
  sweep: SweepResult[] = [],
): PeersReport {
  const real = results.filter((r) => r.real);
  const long = results.filter((r) => r.long);
  const pool = (p: Pool) => strategies.map((s) => pooled(results, s.name, p));
  const longRows = long.length ? pool('long') : pool('real');
  const shortRows = real.some((r) => !r.long) ? pool('short') : undefined;
  const spill = longRows.find((r) => r.kind === 'spillway')!;
  const aims = aimsFor(
    spill,
    longRows.filter((r) => r.kind === 'peer'),
    shortRows?.find((r) => r.kind === 'spillway'),
  );
  const parts: string[] = [];
  parts.push(
    `Made by \`${meta.command}\` (node ${meta.node}, ${meta.quick ? 'quick' : 'full'} run, ${meta.seconds.toFixed(0)} s on ${meta.workers} worker${meta.workers === 1 ? '' : 's'}) over every session of \`test/fixtures/sessions/\` (${long.length} long, ${real.length - long.length} short) and generated ones. Tokens are o200k_base counts; costs are per call from the longest prefix shared with the previous call's request, under the replay's cost model for Anthropic and OpenAI prices, relative to the raw requests priced the same way. Times are ratios taken side by side in this run.`,
  );
  parts.push(`### Aims for \`spillway\` (${long.length} long sessions pooled)\n\n${aimsTable(aims)}`);
  parts.push(
    `### Long sessions pooled\n\nCosts, tokens, misses and read-back summed over the sessions of \`long/\`; the largest context is the worst session's ratio.\n\n${rowsTable(longRows)}`,
  );
  if (shortRows) parts.push(`### Short sessions pooled\n\n${rowsTable(shortRows)}`);
  parts.push(`### All real sessions pooled\n\n${rowsTable(pool('real'))}`);
  const pooledParts = parts.length;
  for (const r of results) parts.push(`### ${r.session}\n\n${r.note}\n\n${rowsTable(r.rows)}`);
  const how = `### How each strategy is driven\n\n${strategies.map((s) => `- **${s.name}**: ${s.how}`).join('\n')}`;
  parts.push(how);
  // the pages: the pooled tables on the benchmarks page, the per-session ones on a page of their own
  // (they are most of the bytes); the per-agent and frontier tables have blocks of their own
  const summary = [...parts.slice(0, pooledParts), how].join('\n\n') + '\n';
  const sessions = parts.slice(pooledParts, -1).join('\n\n') + '\n';
  const points = real.length ? frontierPoints(results, strategies, sweep, 'real') : [];
  const agents = AGENTS.filter((a) => real.some(inPool(a)));
  const sessionsOf = (pool: Pool) => real.filter(inPool(pool)).length;
  const callsOf = (pool: Pool) => real.filter(inPool(pool)).reduce((a, r) => a + r.calls, 0);
  const frontier = points.length
    ? [
        `Cost against miss rate over the ${real.length} real sessions of the corpus (${formatInt(callsOf('real'))} model calls) pooled, then per agent: the default, the presets, the peers, masking after one turn and after ten (references), and the default with one knob moved (the sweep). A point is on the frontier when no other point is at least as cheap with at most as many misses.`,
        `#### All real sessions pooled\n\n${frontierTable(points)}`,
        ...agents.map(
          (a) =>
            `#### ${a} (${sessionsOf(a)} session${sessionsOf(a) === 1 ? '' : 's'}, ${formatInt(callsOf(a))} calls)\n\n${frontierTable(frontierPoints(results, strategies, sweep, a))}`,
        ),
      ].join('\n\n')
    : '';
  const byAgent = agents.map((a) => `#### ${a}\n\n${rowsTable(pool(a))}`).join('\n\n');
  if (byAgent) parts.push(`### Per agent, pooled\n\n${byAgent}`);
  if (frontier) parts.push(`### Frontier\n\n${frontier}`);
  const chartSession = results.find((r) => !r.real && r.calls <= 150) ?? results.find((r) => !r.real);
  const realChart = [...real].sort((a, b) => b.calls - a.calls)[0];
  const svgs: Record<string, string> = {};
  if (chartSession)
    svgs['tokens-per-call.svg'] = tokensPerCallSvg(
      `Tokens sent per call: ${chartSession.session} (${chartSession.note.split(': ')[1]})`,
      chartSession.perCall,
      strategies,
      true,
    );
  if (realChart)
    svgs['tokens-per-call-real.svg'] = tokensPerCallSvg(
      `Tokens sent per call: ${realChart.session} (real, ${realChart.calls} calls)`,
      realChart.perCall,
      strategies,
    );
  if (points.length) svgs['frontier.svg'] = frontierSvg(`Cost against miss rate, ${real.length} real sessions pooled`, points, AIMS.cost);
  const json = {
    quick: meta.quick,
    node: meta.node,
    seconds: meta.seconds,
    aims,
    strategies: strategies.map(({ name, kind, how }) => ({ name, kind, how })),
    pooledLong: longRows,
    pooledShort: shortRows ?? null,
    pooledReal: pool('real'),
    frontier: points.map(({ name, kind, over, row, frontier: f }) => ({
      name,
      kind,
      over: over ?? null,
      frontier: f,
      cost: row.cost,
      costWithReadBacks: row.costWithReadBacks,
      missRate: row.missRate,
      missedIds: row.missedIds,
      referencedIds: row.referencedIds,
    })),
    sessions: results.map(({ session, real: isReal, long: isLong, agent, note, calls, rows, perCall }) => ({
      session,
      real: isReal,
      long: isLong,
      agent: agent ?? null,
      note,
      calls,
      rows,
      projectedTokensPerCall: perCall,
    })),
  };
  return { markdown: parts.join('\n\n') + '\n', summary, sessions, frontier, byAgent, aims, json, svgs };
}

/** The sweep points that move a knob of the default (a point that restates it is left out: the default is a point itself). */
function movedPoints(quick: boolean): SweepPoint[] {
  return sweepPoints(quick).filter((p) =>
    Object.entries(p.over).some(([k, v]) => JSON.stringify(configValue(PRESETS.spillway, k)) !== JSON.stringify(v)),
  );
}

/** Worker job (bench/peers-worker.ts): every strategy on session `i` of the run. */
export async function sessionJob(i: number, quick: boolean): Promise<SessionResult> {
  const dir = fixturesDir();
  const src = sessionSources(quick, dir)[i];
  if (!src) throw new Error(`bench: no session ${i} in this run`);
  return runSession(await loadSession(src, dir), STRATEGIES, (line) => process.stderr.write(line + '\n'), quick);
}

/** Worker job (bench/peers-worker.ts): sweep point `k` over every real session, in the corpus's order. */
export async function pointJob(k: number, quick: boolean): Promise<SweepResult> {
  const point = movedPoints(quick)[k];
  if (!point) throw new Error(`bench: no sweep point ${k} in this run`);
  const dir = fixturesDir();
  const real = sessionSources(quick, dir).filter((s) => s.kind === 'file');
  const sessions: Session[] = [];
  for (const src of real) sessions.push(await loadSession(src, dir));
  return runSweep(sessions, point);
}

/**
 * The run's jobs, the longest first so that no worker is left with a long one at the end: the
 * generated sessions, then the sweep points (each replays the whole corpus), then the real sessions,
 * largest file first. `unpack` puts the workers' results back in the run's order.
 */
export function peerJobs(
  sources: ReadonlyArray<{ label: string; size: number }>,
  points: readonly SweepPoint[],
  quick: boolean,
): { jobs: Job[]; unpack: (done: readonly unknown[]) => { results: SessionResult[]; sweep: SweepResult[] } } {
  const q = quick ? ['--quick'] : [];
  const bySize = sources.map((_, i) => i).sort((a, b) => sources[b]!.size - sources[a]!.size || a - b);
  const first = bySize.filter((i) => sources[i]!.size === Number.POSITIVE_INFINITY);
  const rest = bySize.filter((i) => sources[i]!.size !== Number.POSITIVE_INFINITY);
  const jobOf = (i: number): Job => ({ args: ['--session', String(i), ...q], label: sources[i]!.label });
  const jobs = [
    ...first.map(jobOf),
    ...points.map((p, k) => ({ args: ['--point', String(k), ...q], label: `sweep ${p.name}` })),
    ...rest.map(jobOf),
  ];
  const unpack = (done: readonly unknown[]) => {
    const results = new Array<SessionResult>(sources.length);
    [...first, ...points.map(() => -1), ...rest].forEach((i, j) => {
      if (i >= 0) results[i] = done[j] as SessionResult;
    });
    return { results, sweep: points.map((_, k) => done[first.length + k] as SweepResult) };
  };
  return { jobs, unpack };
}

/** Every strategy on every session and every sweep point on the real sessions, each a job in a worker process (bench/workers.ts). */
export async function runPeers(opts: {
  quick: boolean;
  out: string;
  /** the command a report's "Made by" line names */
  command: string;
  log?: (line: string) => void;
}): Promise<PeersReport> {
  const started = Date.now();
  const log = opts.log ?? (() => {});
  const sources = sessionSources(opts.quick, fixturesDir()).map((src) => ({
    label: nameOf(src),
    size: src.kind === 'file' ? statSync(src.file).size : Number.POSITIVE_INFINITY,
  }));
  const { jobs, unpack } = peerJobs(sources, movedPoints(opts.quick), opts.quick);
  const { results, sweep } = unpack(await runWorkers<unknown>('bench-peers-worker.js', jobs, log));
  const meta = {
    quick: opts.quick,
    node: process.version,
    seconds: (Date.now() - started) / 1000,
    command: opts.command,
    workers: workersFor(jobs.length),
  };
  const rep = report(results, meta, STRATEGIES, sweep);
  writeFileSync(join(opts.out, 'peers.json'), JSON.stringify(rep.json, null, 2) + '\n');
  writeFileSync(join(opts.out, 'peers.md'), rep.markdown);
  for (const [f, svg] of Object.entries(rep.svgs)) writeFileSync(join(opts.out, f), svg);
  return rep;
}
