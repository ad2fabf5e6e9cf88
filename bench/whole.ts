/**
 * Where the default leaves the oracle's saving (issue 35: "how much is left"). For every call of every
 * corpus session under the shipped default, each tool result the request holds goes in one bucket:
 * reduced (by which stage), or sent whole and why the clear stage left it so at that call
 * (ProjectionDetail.held: in use, gathered, under the trigger, no clear that pays back, ...). Beside
 * what each bucket sends, what the limit's oracle keeps of the same results: the lines holding the
 * identifiers the agent writes from the result's arrival on (`linesHolding` of src/replay/limits.ts,
 * its own definition, called). Both are summed over calls in characters: characters × calls is what
 * cached input costs, give or take the rewrites, so the gap column says where the default sends most
 * that the oracle would not.
 */
import { DEFAULT_CONFIG } from '../src/engine/config';
import { readRequest, resultText } from '../src/engine/formats';
import { formatInt } from '../src/engine/format-number';
import { CLEAR_HOLD_LABELS } from '../src/replay/held';
import { identifiersIn } from '../src/replay/identifiers';
import { linesHolding } from '../src/replay/limits';
import { readTranscript, type Transcript } from '../src/replay/readers';
import { replay } from '../src/replay/replay';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { agentOf, fixtureFiles, fixturesDir } from './peers';
import { laterIdentifiers } from './preview-kinds';
import { updateBenchmarksPage } from './readme';

/** One bucket's sums: results (each counted once, in the bucket of its first call there), characters sent and the oracle's, summed over calls. */
export interface Bucket {
  name: string;
  results: number;
  sent: number;
  oracle: number;
  /** the gap (sent − oracle) per agent family */
  byAgent: Map<string, number>;
}

/** The buckets of one session, added to `into` (keyed by name); `agent` names its family. */
export function measureSession(t: Transcript, agent: string, into: Map<string, Bucket>): void {
  const laterIds = laterIdentifiers(t);
  const oracleChars = new Map<string, number>();
  const counted = new Set<string>();
  const add = (name: string, key: string, sent: number, oracle: number) => {
    let b = into.get(name);
    if (!b) into.set(name, (b = { name, results: 0, sent: 0, oracle: 0, byAgent: new Map() }));
    if (!counted.has(`${name}\u0000${key}`)) {
      counted.add(`${name}\u0000${key}`);
      b.results++;
    }
    b.sent += sent;
    b.oracle += oracle;
    b.byAgent.set(agent, (b.byAgent.get(agent) ?? 0) + sent - oracle);
  };
  replay(t, {
    config: DEFAULT_CONFIG,
    prelude: true,
    // the clear stage's reason per result (ProjectionDetail.held) comes with the replay's detail
    detail: true,
    onProjection: (k, { request, projection }) => {
      const req = readRequest(request, t.wire, undefined, t.observations ?? 'off');
      const reduced = new Map(projection.reductions.map((r) => [r.result, r]));
      const held = projection.detail?.held;
      req.results.forEach((r, i) => {
        const text = resultText(req, r);
        const key = `${r.callId}\u0000${i}`;
        let oracle = oracleChars.get(key);
        if (oracle === undefined) {
          const later = laterIds[k] ?? new Set<string>();
          const used = identifiersIn(text).filter((id) => later.has(id));
          oracleChars.set(key, (oracle = used.length ? linesHolding(text, used).length : 0));
        }
        const d = reduced.get(i);
        if (d)
          add(
            d.stage === 'offload' ? 'reduced on arrival' : d.stage === 'clear' ? 'cleared' : `reduced (${d.stage})`,
            key,
            d.inputOnly ? text.length : d.projectedChars,
            oracle,
          );
        else add(`whole: ${CLEAR_HOLD_LABELS[held?.[i] ?? 'under-trigger']}`, key, text.length, oracle);
      });
    },
  });
}

const millions = (x: number) => (x / 1e6).toFixed(1);

/** The table: reductions first, then the whole buckets by gap, largest first, and the total. */
export function wholeTable(buckets: readonly Bucket[]): string {
  const gapOf = (b: Bucket) => b.sent - b.oracle;
  const reducedFirst = (b: Bucket) => (b.name.startsWith('whole') ? 1 : 0);
  const rows = [...buckets].sort((a, b) => reducedFirst(a) - reducedFirst(b) || gapOf(b) - gapOf(a));
  const whole = rows.filter((b) => b.name.startsWith('whole'));
  const wholeGap = whole.reduce((a, b) => a + Math.max(0, gapOf(b)), 0);
  const top = (b: Bucket) =>
    [...b.byAgent]
      .filter(([, g]) => g > 0)
      .sort((x, y) => y[1] - x[1])
      .slice(0, 2)
      .map(([a, g]) => `${a} ${millions(g)}`)
      .join(', ') || '–';
  const line = (b: Bucket) =>
    `| ${b.name} | ${formatInt(b.results)} | ${millions(b.sent)} | ${millions(b.oracle)} | ${millions(gapOf(b))} | ${b.name.startsWith('whole') && wholeGap > 0 && gapOf(b) > 0 ? `${((gapOf(b) / wholeGap) * 100).toFixed(1)}%` : '–'} | ${top(b)} |`;
  const total: Bucket = { name: '**all**', results: 0, sent: 0, oracle: 0, byAgent: new Map() };
  for (const b of rows) {
    total.sent += b.sent;
    total.oracle += b.oracle;
    for (const [a, g] of b.byAgent) total.byAgent.set(a, (total.byAgent.get(a) ?? 0) + g);
  }
  return [
    "| where the result is, at a call | results | sent (millions of characters × calls) | the oracle's | gap | share of the gap sent whole | largest gap in (millions) |",
    '| --- | ---: | ---: | ---: | ---: | ---: | --- |',
    ...rows.map(line),
    `| **all** | – | ${millions(total.sent)} | ${millions(total.oracle)} | ${millions(gapOf(total))} | – | ${top(total)} |`,
  ].join('\n');
}

const WHOLE_COMMAND = 'npm run bench:whole';

/** The table over every session of the corpus, written to `out` (whole.md) and into docs/benchmarks.md. */
export async function runWhole(out: string, root = process.cwd()): Promise<string> {
  const dir = fixturesDir(root);
  const buckets = new Map<string, Bucket>();
  let n = 0;
  for (const { file } of fixtureFiles(dir)) {
    const t = await readTranscript(file);
    if (!t.calls.length) continue;
    measureSession(t, agentOf(relative(dir, file)) ?? t.source, buckets);
    n++;
  }
  const text = `Made by \`${WHOLE_COMMAND}\` over the ${n} sessions of \`test/fixtures/sessions/\` under the shipped default, each replayed as logged.\n\n${wholeTable([...buckets.values()])}`;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'whole.md'), text + '\n');
  updateBenchmarksPage('whole', text, root);
  return text;
}
