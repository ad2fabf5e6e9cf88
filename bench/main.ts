/**
 * `npm run bench`: every benchmark in one run; results go to bench/results/. Independent replays run
 * in worker processes, one per core (bench/workers.ts).
 * `npm run bench -- --quick` runs smaller generated sessions and engine bodies and three sweep points;
 * the real sessions still run whole (on 2 cores the comparison with the peers alone takes about 17 minutes).
 * `npm run bench -- --engine-only` runs the engine speed benchmark alone, full size (a few minutes),
 * and writes its table (the `bench:engine` block of docs/benchmarks.md) and nothing else.
 * `npm run bench -- --only heldout,peers` runs the sections named (heldout, unseen, peer, engine, peers) and
 * writes their blocks alone; each block names the command that made it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { incrementalBench, sizeBench, type IncrementalRow, type SizeRow } from './engine';
import { runPeers } from './peers';
import { syncFigures } from './figures';
import { SESSIONS_PAGE, updateBenchmarksPage, updateSection } from './readme';
import { runKinds } from './preview-kinds';
import { runWhole } from './whole';
import { runHeldOut } from './heldout';
import { runPeer } from './peer';
import { runUnseen } from './unseen';

const SECTIONS = ['heldout', 'unseen', 'peer', 'engine', 'peers'] as const;
type Section = (typeof SECTIONS)[number];

/** The sections `--only` names (all of them without it; `--engine-only` is `--only engine`). */
function sectionsOf(argv: readonly string[]): Set<Section> {
  if (argv.includes('--engine-only')) return new Set(['engine']);
  const i = argv.indexOf('--only');
  if (i < 0) return new Set(SECTIONS);
  const named = (argv[i + 1] ?? '').split(',').filter(Boolean);
  const bad = named.filter((n) => !(SECTIONS as readonly string[]).includes(n));
  if (!named.length || bad.length)
    throw new Error(`bench: --only takes sections among ${SECTIONS.join(', ')}, separated by commas; got "${argv[i + 1] ?? ''}"`);
  return new Set(named as Section[]);
}

const quick = process.argv.includes('--quick');
const engineOnly = process.argv.includes('--engine-only');
const sections = sectionsOf(process.argv);
/** The command as a block's "Made by" line names it. */
const command = `npm run bench${[
  quick ? '--quick' : '',
  engineOnly ? '--engine-only' : '',
  !engineOnly && sections.size < SECTIONS.length ? `--only ${[...sections].join(',')}` : '',
]
  .filter(Boolean)
  .map((a, i) => (i === 0 ? ` -- ${a}` : ` ${a}`))
  .join('')}`;
const out = join(process.cwd(), 'bench', 'results');
mkdirSync(out, { recursive: true });

const f = (n: number, d = 2) => n.toFixed(d);

function engineTable(rows: SizeRow[], inc: IncrementalRow[]): string {
  const lines = [
    '| body | tokenizer | JSON.parse ms | project ms (cold) | cold / parse | project ms (same body again, in session) | warm / parse | reductions |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map(
      (r) =>
        `| ${r.body} | ${r.tokenizer} | ${f(r.parseMs)} | ${f(r.coldMs)} | ${f(r.coldRatio)} | ${f(r.warmMs)} | ${f(r.warmRatio)} | ${r.reductions} |`,
    ),
    '',
    '| session | tokenizer | last body | median ms per call (last 10% of calls) | p90 ms | JSON.parse ms of that body | call / parse |',
    '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...inc.map(
      (r) =>
        `| ${r.calls} calls | ${r.tokenizer} | ${(r.lastBodyBytes / 1e6).toFixed(1)} MB | ${f(r.medianCallMs)} | ${f(r.p90CallMs)} | ${f(r.medianParseMs)} | ${f(r.ratio)} |`,
    ),
  ];
  return lines.join('\n');
}

async function main(): Promise<void> {
  const started = Date.now();
  if (sections.has('heldout')) await heldOut();
  if (sections.has('unseen')) await unseen();
  if (sections.has('peer')) await againstContextGuru();
  if (sections.has('engine')) await engineSpeed(started);
  if (sections.has('peers')) await againstPeers(started);
}

const today = () => new Date().toISOString().slice(0, 10);

/** The headline: the default judged on sources it was not chosen on (bench/heldout.ts). */
async function heldOut(): Promise<void> {
  const held = await runHeldOut((line) => process.stderr.write(line + '\n'));
  updateBenchmarksPage('heldout', `Made by \`${command}\` (node ${process.version}) on ${today()}.\n\n${held.markdown}`);
  // the README and docs quote the headline: their figure spans follow the new block (figures.ts)
  syncFigures();
  process.stdout.write(`## Held out (leave one source out)\n\n${held.markdown}\n\n`);
}

/** The default on sessions unlike the corpus, which no tuning reads (bench/unseen.ts). */
async function unseen(): Promise<void> {
  const r = await runUnseen((line) => process.stderr.write(line + '\n'));
  updateBenchmarksPage('unseen', `Made by \`${command}\` (node ${process.version}) on ${today()}.\n\n${r.markdown}`);
  syncFigures();
  process.stdout.write(`## Sessions unlike the corpus\n\n${r.markdown}\n\n`);
}

/** The default against context-guru, measured the peer's way (bench/peer.ts). */
async function againstContextGuru(): Promise<void> {
  const peer = await runPeer({}, (line) => process.stderr.write(line + '\n'));
  updateBenchmarksPage('peer', `Made by \`${command}\` (node ${process.version}) on ${today()}.\n\n${peer.markdown}`);
  process.stdout.write(`## Against context-guru, measured its way\n\n${peer.markdown}\n\n`);
}

/** The engine's time against `JSON.parse` of the same bodies (bench/engine.ts). */
async function engineSpeed(started: number): Promise<void> {
  const sizes: Array<[number, string]> = quick
    ? [
        [1_000_000, '1 MB'],
        [10_000_000, '10 MB'],
      ]
    : [
        [1_000_000, '1 MB'],
        [50_000_000, '50 MB'],
      ];
  // alone, the process has run no engine yet: a first pass compiles the engine's code, so the cold
  // rows time a cold engine as in the whole run rather than the first compilation
  if (engineOnly) for (const tok of ['approximate', 'o200k_base'] as const) sizeBench(1_000_000, 'warm-up', tok, 3);
  const rows: SizeRow[] = [];
  for (const [bytes, label] of sizes) {
    for (const tok of ['approximate', 'o200k_base'] as const) {
      rows.push(sizeBench(bytes, label, tok, bytes > 10_000_000 ? 3 : 9));
      process.stderr.write(`engine ${label} ${tok} done\n`);
    }
  }
  const inc = [incrementalBench(quick ? 200 : 1000, 'o200k_base'), incrementalBench(quick ? 200 : 1000, 'approximate')];
  const table = engineTable(rows, inc);
  writeFileSync(join(out, 'engine.json'), JSON.stringify({ quick, node: process.version, sizes: rows, incremental: inc }, null, 2) + '\n');
  writeFileSync(join(out, 'engine.md'), table + '\n');
  if (!quick) {
    updateBenchmarksPage(
      'engine',
      `Made by \`${command}\` on ${today()} (node ${process.version}). Bodies are generated coding-agent sessions (bench/generate.ts) in the Chat Completions format, projected with the \`spillway\` preset and an in-memory store. *Cold*: a fresh engine and token cache; *in session*: the same body projected again in its session; *incremental*: each call of a session projected in order, call k+1 after call k.\n\n${table}`,
    );
  }
  process.stdout.write(
    `## Engine speed (${quick ? 'quick' : 'full'} run, node ${process.version})\n\n${table}\n\n(${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
  );
}

/** Spillway against its peers, the frontier, the agents' tables and the previews per kind. */
async function againstPeers(started: number): Promise<void> {
  // Spillway against its peers, on real and generated sessions (bench/peers.ts)
  const peersStarted = Date.now();
  const peers = await runPeers({ quick, out, command, log: (line) => process.stderr.write(line + '\n') });
  if (!quick) {
    updateBenchmarksPage(
      'peers',
      `${peers.summary}\nEvery session's own table: [Benchmarks per session](benchmarks-sessions.md). Per agent and the frontier: the next two sections.\n\n![Tokens sent per call, generated session](../bench/results/tokens-per-call.svg)\n\n![Tokens sent per call, real session](../bench/results/tokens-per-call-real.svg)`,
    );
    updateSection(SESSIONS_PAGE, 'sessions', `Made by \`${command}\` (node ${process.version}) on ${today()}.\n\n${peers.sessions}`);
  }
  // the real sessions run whole in a quick run too (only generated sessions and the sweep shrink),
  // so the frontier and per-agent tables are written by both, naming the command that made them
  const made = `Made by \`${command}\` (node ${process.version}) on ${today()}${quick ? ', the sweep cut to three points' : ''}; every session's own table is in [Benchmarks per session](benchmarks-sessions.md).`;
  updateBenchmarksPage(
    'frontier',
    `${made}\n\n${peers.frontier}\n\n![Cost against miss rate, real sessions pooled](../bench/results/frontier.svg)`,
  );
  updateBenchmarksPage('agents', `${made}\n\n${peers.byAgent}`);
  // previews per kind of output (docs/previews.md): seconds, so the quick run makes them too
  const kinds = await runKinds(out);
  process.stdout.write(`\n## Previews per kind of output\n\n${kinds}\n`);
  // where the default leaves the oracle's saving (docs/benchmarks.md): one replay of each session
  const whole = await runWhole(out);
  process.stdout.write(`\n## Where the default leaves the oracle's saving\n\n${whole}\n`);
  const met = peers.aims.filter((a) => a.met).length;
  process.stdout.write(
    `\n## Spillway against its peers (${((Date.now() - peersStarted) / 1000).toFixed(0)} s; bench/results/peers.md)\n\n`,
  );
  process.stdout.write(`Aims for the \`spillway\` default on the long sessions pooled: ${met} of ${peers.aims.length} met\n`);
  for (const a of peers.aims) process.stdout.write(`  [${a.met ? 'MET' : 'NOT MET'}] ${a.aim}: ${a.value}\n`);
  if (peers.frontier) process.stdout.write(`\n## Frontier (real sessions pooled, then per agent)\n\n${peers.frontier}\n`);
  process.stdout.write(`\n(total ${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
