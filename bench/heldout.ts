/**
 * Held-out figures: the default judged on sessions it was not chosen on (leave-one-source-out).
 *
 * Why: a default tuned on a corpus and judged on the same corpus is judged on its own exam. Each
 * session comes from a source (the repository or author the corpus READMEs name for it); for every
 * source, the candidate configuration that the selection rule prefers on all the other sources is
 * applied to that source's sessions. Pooling those held-out sessions gives the headline: what the
 * rule that picks the default does on sessions it never saw. The in-sample figure (the candidate
 * picked on every source, which must be the shipped default) stands beside it.
 *
 * The selection rule is the aims in order: among candidates whose pooled miss rate on the
 * training sources is at most MISS_AIM, the one with the lowest cost with read-backs (mean of the
 * Anthropic and GPT-5 figures); when none meets the aim, the one with the fewest misses.
 *
 * Every session is replayed once per candidate (the folds only regroup those replays), one after
 * another in this process. `npm run bench:heldout` runs this alone and writes its table into
 * docs/benchmarks.md; `npm run bench` runs it first.
 */
import { execFile } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { cpus } from 'node:os';
import { promisify } from 'node:util';
import { dirname, join, relative } from 'node:path';
import { newTokenCounter } from '../src/engine';
import { readTranscript, type Transcript } from '../src/replay/readers';
import { ANTHROPIC_PRICES, OPENAI_PRICES, type PriceModel } from '../src/replay/metrics';
import { poolReplays, replay, type ReplayTotals } from '../src/replay/replay';
import { MemoryStore } from '../src/store';
import { agentOf, fixturesDir, fixtureFiles } from './peers';

const run = promisify(execFile);

/** The pooled miss rate the rule asks of a candidate on its training sources (the aim). */
export const MISS_AIM = 0.02;
const PRICES: readonly PriceModel[] = [ANTHROPIC_PRICES, OPENAI_PRICES];

export interface Candidate {
  name: string;
  over: Record<string, unknown>;
}

/**
 * The candidates: the default first, then the mechanisms of docs/savings.md one notch either side.
 * The default must be the candidate the rule picks on the whole corpus (the run says so if not).
 */
export const CANDIDATES: readonly Candidate[] = [
  { name: 'default', over: {} },
  { name: 'reads offloaded on arrival', over: { 'offload.keepReads': 0 } },
  { name: 'in use: 3 calls', over: { 'clear.inUseCalls': 3 } },
  { name: 'in use: 10 calls', over: { 'clear.inUseCalls': 10 } },
  { name: 'clears by age alone', over: { 'clear.inUseCalls': 0 } },
  { name: 'file inputs on arrival', over: { 'inputs.when': 'arrival' } },
  { name: 'file inputs off', over: { 'inputs.enabled': false } },
  { name: 'offload cap 16,000', over: { defaultCap: 16_000 } },
];

/** A session of the corpus with the source and agent it is judged under. */
export interface CorpusSession {
  name: string;
  source: string;
  agent: string;
  t: Transcript;
}

/**
 * The source of every corpus file, from the READMEs' tables: the first column is the file's path
 * relative to the README's folder, the second the repository it was taken from.
 */
export function sourcesOf(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const e of readdirSync(d)) {
      const p = join(d, e);
      if (statSync(p).isDirectory()) walk(p);
      else if (e === 'README.md') {
        for (const line of readFileSync(p, 'utf8').split('\n')) {
          const cells = line.split('|').map((c) => c.trim());
          if (cells.length < 4 || !cells[1] || cells[1].startsWith('---') || !/^[\w.-]+\/[\w.-]+$/.test(cells[2]!)) continue;
          out.set(relative(dir, join(dirname(p), cells[1])), cells[2]!);
        }
      }
    }
  };
  walk(dir);
  return out;
}

/** Every readable session of the corpus, with its source; a file no README names is an error. */
export async function loadCorpus(dir = fixturesDir(), log: (s: string) => void = () => {}): Promise<CorpusSession[]> {
  const sources = sourcesOf(dir);
  const out: CorpusSession[] = [];
  for (const { file } of fixtureFiles(dir)) {
    const name = relative(dir, file);
    const source = sources.get(name);
    if (!source) throw new Error(`bench: ${name} is in no README table of ${dir}: its source is unknown`);
    const t = await readTranscript(file);
    if (!t.calls.length) {
      log(`bench: ${name} gave no model call; left out`);
      continue;
    }
    const agent = agentOf(name) ?? (t.source === 'openai-chat' ? 'mini-swe-agent' : t.source);
    out.push({ name, source, agent, t });
  }
  return out;
}

type Totals = ReplayTotals;
const meanCost = (t: Totals) => (t.costWithReadBacks.anthropic!.relative + t.costWithReadBacks.openai!.relative) / 2;

/** The rule: the cheapest candidate within the miss aim, else the one that misses least. */
export function pick(pooled: readonly Totals[]): number {
  const within = pooled.map((t, k) => ({ t, k })).filter(({ t }) => t.missRate <= MISS_AIM);
  const by = within.length
    ? within.sort((a, b) => meanCost(a.t) - meanCost(b.t))
    : pooled.map((t, k) => ({ t, k })).sort((a, b) => a.t.missRate - b.t.missRate);
  return by[0]!.k;
}

export interface HeldOut {
  markdown: string;
  /** the candidate the rule picks on the whole corpus */
  inSample: string;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const row = (label: string, t: Totals & { sessions?: number }) =>
  `| ${label} | ${t.sessions ?? 1} | ${t.calls} | ${pct(t.cost.anthropic!.relative)} / ${pct(t.cost.openai!.relative)} | **${pct(t.costWithReadBacks.anthropic!.relative)} / ${pct(t.costWithReadBacks.openai!.relative)}** | **${pct(t.missRate)}** (${t.missedIds}/${t.referencedIds}) |`;

/** Candidate k replayed on every session of the corpus, in this process: the totals per session. */
export async function replayCandidate(k: number): Promise<Totals[]> {
  const corpus = await loadCorpus(fixturesDir());
  const counter = newTokenCounter('o200k_base');
  const c = CANDIDATES[k]!;
  return corpus.map(
    (s) => replay(s.t, { config: { preset: 'spillway', ...c.over }, tokenizer: counter, store: new MemoryStore(), prices: PRICES }).totals,
  );
}

/**
 * Every candidate's replays, one worker process per candidate (`bench-heldout.js --worker K`), as
 * many at once as the machine has cores: the replays are independent and each is single-threaded.
 */
async function replayAll(log: (s: string) => void): Promise<Totals[][]> {
  const worker = join(__dirname, 'bench-heldout.js');
  const out: Totals[][] = new Array<Totals[]>(CANDIDATES.length);
  let next = 0;
  const one = async (): Promise<void> => {
    for (let k = next++; k < CANDIDATES.length; k = next++) {
      const started = Date.now();
      const { stdout } = await run(process.execPath, [worker, '--worker', String(k)], { maxBuffer: 256 * 1024 * 1024 });
      out[k] = JSON.parse(stdout) as Totals[];
      log(`  ${CANDIDATES[k]!.name}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(cpus().length, CANDIDATES.length)) }, one));
  return out;
}

export async function runHeldOut(log: (s: string) => void): Promise<HeldOut> {
  const corpus = await loadCorpus(fixturesDir(), log);
  // totals[k][s]: candidate k on session s
  const totals = await replayAll(log);
  const pool = (k: number, keep: (i: number) => boolean) =>
    poolReplays(corpus.flatMap((_, i) => (keep(i) ? [{ totals: totals[k]![i]! }] : [])));
  const sources = [...new Set(corpus.map((s) => s.source))].sort();
  const chosen = new Map<string, number>();
  for (const src of sources) chosen.set(src, pick(CANDIDATES.map((_, k) => pool(k, (i) => corpus[i]!.source !== src))));
  const heldOut = (keep: (i: number) => boolean) =>
    poolReplays(corpus.flatMap((s, i) => (keep(i) ? [{ totals: totals[chosen.get(s.source)!]![i]! }] : [])));
  const all = pick(CANDIDATES.map((_, k) => pool(k, () => true)));
  const agents = [...new Set(corpus.map((s) => s.agent))].sort();
  const head =
    '| sessions | n | calls | cost before read-backs (Anthropic / GPT-5) | with read-backs | misses |\n| --- | ---: | ---: | --- | --- | --- |';
  const lines = [
    `**Held out** (each source judged under the candidate picked on the other ${sources.length - 1} sources):`,
    '',
    head,
    row(
      'all, held out',
      heldOut(() => true),
    ),
    ...agents.map((a) =>
      row(
        `${a}, held out`,
        heldOut((i) => corpus[i]!.agent === a),
      ),
    ),
    '',
    `**In sample** (the candidate picked on all ${sources.length} sources: *${CANDIDATES[all]!.name}*):`,
    '',
    head,
    row(
      'all, in sample',
      pool(all, () => true),
    ),
    ...agents.map((a) =>
      row(
        `${a}, in sample`,
        pool(all, (i) => corpus[i]!.agent === a),
      ),
    ),
    '',
    'Each candidate on the whole corpus, and the folds that picked it:',
    '',
    '| candidate | setting | cost with read-backs (Anthropic / GPT-5) | misses | picked when holding out |',
    '| --- | --- | --- | --- | --- |',
    ...CANDIDATES.map((c, k) => {
      const t = pool(k, () => true);
      const folds = sources.filter((s) => chosen.get(s) === k);
      return `| ${c.name} | \`${JSON.stringify(c.over)}\` | ${pct(t.costWithReadBacks.anthropic!.relative)} / ${pct(t.costWithReadBacks.openai!.relative)} | ${pct(t.missRate)} | ${folds.length ? folds.join(', ') : '–'} |`;
    }),
    '',
    "Held out, per source (the source's sessions under the candidate picked without them):",
    '',
    '| source | candidate | sessions | calls | with read-backs (Anthropic / GPT-5) | misses | worst session before / with read-backs (Anthropic) |',
    '| --- | --- | ---: | ---: | --- | --- | --- |',
    ...sources.map((src) => {
      const k = chosen.get(src)!;
      const mine = corpus.map((s, i) => ({ s, t: totals[k]![i]! })).filter((x) => x.s.source === src);
      const t = poolReplays(mine.map((x) => ({ totals: x.t })));
      const worst = (f: (t: Totals) => number) => pct(Math.max(...mine.map((x) => f(x.t))));
      return `| ${src} | ${CANDIDATES[k]!.name} | ${mine.length} | ${t.calls} | ${pct(t.costWithReadBacks.anthropic!.relative)} / ${pct(t.costWithReadBacks.openai!.relative)} | ${pct(t.missRate)} | ${worst((x) => x.cost.anthropic!.relative)} / ${worst((x) => x.costWithReadBacks.anthropic!.relative)} |`;
    }),
  ];
  if (all !== 0) lines.push('', `**Warning:** the rule picks *${CANDIDATES[all]!.name}* on the whole corpus, not the shipped default.`);
  return { markdown: lines.join('\n'), inSample: CANDIDATES[all]!.name };
}
