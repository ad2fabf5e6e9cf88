/**
 * The tuning table of docs/benchmarks.md ("Tuning on long sessions"): the mechanisms and settings that were
 * tried for the default, each measured on the long sessions pooled and on the one real Claude Code
 * session alone (the only long session whose agent writes files through tool inputs), with the same
 * meter as the benchmark. The frontier (bench/frontier.ts) moves one knob at a time on every
 * `npm run bench`; this table keeps the combinations and finer steps the default was chosen from,
 * so the choice can be re-checked whenever the readers or the meter change.
 *
 * `npm run bench:tune` prints the table as Markdown; it does not touch docs/ or bench/results.
 */
import type { SweepPoint } from './frontier';
import { runSpillway, strategyRow, type Row } from './metrics';
import { fixturesDir, fixtureFiles, poolRows, sessionName, type Session } from './peers';
import { readTranscript } from '../src/replay/readers';

/** What was tried, grouped by the mechanism it tunes; the first row is the default itself. */
const POINTS: SweepPoint[] = [
  { name: '**default** (clear 20,000 / 10,000 / keep 3, file inputs from 60,000)', over: {} },
  {
    name: 'previous default (clear 40,000 / 20,000 / keep 10, no file inputs)',
    over: { 'clear.triggerTokens': 40_000, 'clear.clearAtLeastTokens': 20_000, 'clear.keep': 10, 'inputs.enabled': false },
  },
  { name: 'file inputs off', over: { 'inputs.enabled': false } },
  { name: 'file inputs from 30,000 tokens', over: { 'inputs.minTokens': 30_000 } },
  { name: 'file inputs from 15,000 tokens', over: { 'inputs.minTokens': 15_000 } },
  { name: 'file inputs from the first call', over: { 'inputs.minTokens': 0 } },
  { name: 'file inputs from the first call, kept whole 2 calls', over: { 'inputs.minTokens': 0, 'inputs.keepRounds': 2 } },
  { name: 'file inputs from the first call, kept whole 8 calls', over: { 'inputs.minTokens': 0, 'inputs.keepRounds': 8 } },
  { name: 'clear keep 2', over: { 'clear.keep': 2 } },
  { name: 'clear keep 5', over: { 'clear.keep': 5 } },
  { name: 'clear keep 8', over: { 'clear.keep': 8 } },
  { name: 'clear at least 5,000', over: { 'clear.clearAtLeastTokens': 5_000 } },
  { name: 'clear at least 15,000', over: { 'clear.clearAtLeastTokens': 15_000 } },
  { name: 'clear trigger 30,000', over: { 'clear.triggerTokens': 30_000 } },
  { name: 'payback schedule', over: { 'clear.schedule': 'payback' } },
  { name: 'payback schedule, clear at least "all"', over: { 'clear.schedule': 'payback', 'clear.clearAtLeastTokens': 'all' } },
  { name: 'offload cap 4,000', over: { defaultCap: 4_000 } },
  { name: 'offload cap 6,000 + newest whole to 40,000', over: { defaultCap: 6_000, 'offload.latestCap': 40_000 } },
  { name: 'stale re-runs not cleared first', over: { 'clear.staleFirst': false } },
];

const pct = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`);
const cells = (r: Row) =>
  `${pct(r.cost.anthropic)} / ${pct(r.cost.openai)}, miss ${pct(r.missRate)} | ${pct(r.costWithReadBacks.anthropic)} / ${pct(r.costWithReadBacks.openai)}`;

async function main(): Promise<void> {
  const dir = fixturesDir();
  const sessions: Session[] = [];
  for (const { file, long } of fixtureFiles(dir)) {
    if (!long) continue;
    const transcript = await readTranscript(file);
    sessions.push({ name: sessionName(file, long), real: true, long, transcript, note: file });
  }
  const claude = sessions.find((s) => s.transcript.source === 'claude-code');
  process.stderr.write(
    `bench:tune: ${sessions.length} long sessions (${sessions.map((s) => `${s.name} ${s.transcript.calls.length} calls`).join(', ')})\n`,
  );
  const lines = [
    `| setting | long sessions pooled: cost vs raw-with-cache A / O, miss | with read-backs A / O | ${claude ? 'Claude Code session: cost A / O, miss' : ''} |`,
    `| --- | --- | --- | --- |`,
  ];
  for (const p of POINTS) {
    const started = Date.now();
    const rows = sessions.map((s) => ({
      s,
      row: strategyRow(p.name, 'spillway', runSpillway(s.transcript, { preset: 'spillway', ...p.over }), new Map()),
    }));
    const pooledRow = poolRows(
      p.name,
      rows.map((r) => r.row),
    );
    const own = rows.find((r) => r.s === claude)?.row;
    const ownCells = own ? `${pct(own.cost.anthropic)} / ${pct(own.cost.openai)}, miss ${pct(own.missRate)}` : '';
    lines.push(`| ${p.name} | ${cells(pooledRow)} | ${ownCells} |`);
    process.stderr.write(`  ${p.name}: ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
  process.stdout.write(lines.join('\n') + '\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`bench:tune: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
