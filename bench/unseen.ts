/**
 * The default on sessions unlike the corpus (issue 35's aim: at most 85% / 85% of raw with
 * read-backs there): real sessions from sources the corpus does not have, kept apart in
 * `test/fixtures/unseen/` so that no tuning (bench/heldout.ts, bench/tune.ts, the frontier) ever
 * reads them. Each session is replayed as the held-out table replays the corpus: the shipped
 * default, with the agents' prelude, every other provider's column replayed routed there, and the
 * oracle and the floor beside it (src/replay/limits.ts). One worker process per session
 * (bench/workers.ts). `npm run bench:unseen` writes the `bench:unseen` block of docs/benchmarks.md.
 */
import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { newTokenCounter } from '../src/engine';
import { readTranscript } from '../src/replay/readers';
import { ANTHROPIC_PRICES, OPENAI_PRICES } from '../src/replay/metrics';
import { measureLimits } from '../src/replay/limits';
import { poolReplays, replay, type ReplayOptions, type ReplayTotals } from '../src/replay/replay';
import { otherRoutes, replayRouted, routeOf, withRouteColumns } from '../src/replay/routes';
import { MemoryStore } from '../src/store';
import { HELD_OUT_HEAD, heldOutRow, sourcesOf } from './heldout';
import { agentOf, fixtureFiles } from './peers';
import { runWorkers } from './workers';

/** Where the sessions unlike the corpus are: `SPILLWAY_UNSEEN`, else `test/fixtures/unseen`. */
function unseenDir(root = process.cwd()): string {
  const dir = process.env.SPILLWAY_UNSEEN ?? join(root, 'test', 'fixtures', 'unseen');
  if (!existsSync(join(dir, 'README.md'))) throw new Error(`bench: no sessions at ${dir} (expected a README.md naming each file's source)`);
  return dir;
}

/** One session's replay: where it came from and its totals, every column under its own route, limits included. */
export interface UnseenResult {
  name: string;
  source: string;
  agent: string;
  totals: ReplayTotals | undefined;
}

/** The files of the set, each with the source its README names (a file none names is an error). */
export function unseenFiles(dir: string): Array<{ file: string; name: string; source: string }> {
  const sources = sourcesOf(dir);
  return fixtureFiles(dir).map(({ file }) => {
    const name = relative(dir, file);
    const source = sources.get(name);
    if (!source) throw new Error(`bench: ${name} is in no README table of ${dir}: its source is unknown`);
    return { file, name, source };
  });
}

/** Worker job: session `i` of the set replayed under the shipped default, its routes and its limits. */
export async function unseenJob(i: number, dir = unseenDir()): Promise<UnseenResult> {
  const f = unseenFiles(dir)[i];
  if (!f) throw new Error(`bench: no session ${i} in ${dir}`);
  const t = await readTranscript(f.file);
  const agent = agentOf(f.name) ?? t.source;
  if (!t.calls.length) return { name: f.name, source: f.source, agent, totals: undefined };
  const prices = [ANTHROPIC_PRICES, OPENAI_PRICES];
  const opts: ReplayOptions = { config: { preset: 'spillway' }, tokenizer: newTokenCounter('o200k_base'), prices, prelude: true };
  const own = replay(t, { ...opts, store: new MemoryStore() }).totals;
  const routed = otherRoutes(
    routeOf(t),
    prices.map((p) => p.name),
  ).map((provider) => ({ provider, totals: replayRouted(t, opts, provider).totals }));
  const limits = measureLimits(t, { config: { preset: 'spillway' }, tokenizer: opts.tokenizer!, prices, prelude: true });
  return { name: f.name, source: f.source, agent, totals: { ...withRouteColumns(own, routed), limits } };
}

/** The table: pooled, per agent, per source, per session, with how many sessions end over raw. */
export function unseenTable(results: readonly UnseenResult[]): string {
  const kept = results.filter((r): r is UnseenResult & { totals: ReplayTotals } => r.totals !== undefined);
  const pool = (keep: (r: UnseenResult) => boolean) => {
    const mine = kept.filter(keep);
    return { ...poolReplays(mine.map((r) => ({ totals: r.totals }))), sessions: mine.length };
  };
  const over = kept.filter((r) => r.totals.cost.anthropic!.relative > 1 || r.totals.cost.openai!.relative > 1).length;
  const agents = [...new Set(kept.map((r) => r.agent))].sort();
  const sources = [...new Set(kept.map((r) => r.source))].sort();
  const head = HELD_OUT_HEAD;
  const skipped = results.filter((r) => r.totals === undefined);
  return [
    `${kept.length} sessions from ${sources.length} sources the corpus does not have (${agents.map((a) => `${a} ${kept.filter((r) => r.agent === a).length}`).join(', ')}), under the shipped default, billed with the agents' prelude, each column routed to its provider. Sessions over raw before read-backs (either price model): ${over}.${skipped.length ? ` Left out, no model call read: ${skipped.map((r) => r.name).join(', ')}.` : ''}`,
    '',
    head,
    heldOutRow(
      'all',
      pool(() => true),
    ),
    ...agents.map((a) =>
      heldOutRow(
        a,
        pool((r) => r.agent === a),
      ),
    ),
    '',
    'Per source:',
    '',
    head,
    ...sources.map((s) =>
      heldOutRow(
        s,
        pool((r) => r.source === s),
      ),
    ),
    '',
    'Per session:',
    '',
    head,
    ...kept.map((r) => heldOutRow(`\`${r.name}\``, r.totals)),
  ].join('\n');
}

/** Every session of the set, one worker process each (in the set's order), and the table. */
export async function runUnseen(log: (s: string) => void): Promise<{ markdown: string; results: UnseenResult[] }> {
  const dir = unseenDir();
  const files = unseenFiles(dir);
  const jobs = files.map((f, i) => ({ args: ['--session', String(i)], label: f.name }));
  const results = await runWorkers<UnseenResult>('bench-unseen.js', jobs, log);
  return { markdown: unseenTable(results), results };
}
