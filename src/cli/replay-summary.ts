/**
 * What `spillway replay` prints for people: a replay's figures as a summary that reads in a
 * 100-column terminal, and for a folder of sessions one row each and the pooled row. The JSON of
 * `--json` is for programs; this is for someone deciding whether Spillway pays: what it sent, what
 * that cost under each provider's caching with and without the read-backs its misses imply, how
 * often it hid something the agent then used, which tools it saved most on, and where it cleared.
 * Pure formatting: the command (main.ts) runs the replays and writes the text.
 */
import type { Projection } from '../engine';
import { compactionLine, pooledCompactionLine } from '../replay/compactions';
import { PRICE_MODELS } from '../replay/metrics';
import { oracleShare } from '../replay/limits';
import { causeLabel, causesInOrder } from '../replay/misses';
import { PRELUDE_AGENT_NAMES, preludeDescription } from '../replay/prelude';
import { modelPrice } from '../replay/prices';
import type { PooledTotals, ReplayCall, ReplayResult, ReplayTotals } from '../replay/replay';

/** The width every line fits in: a terminal of 100 columns. */
const SUMMARY_WIDTH = 100;
/** Tools listed by tokens saved; the rest are summed on one line. */
const TOP_TOOLS = 5;
/**
 * A turn as people read it: a model call numbered from 1, as the inspector numbers its turns (the
 * replay's `index` and a miss's `since` count from 0).
 */
const turnOf = (index: number) => `turn ${index + 1}`;
/** Calls with clears listed one by one; past this, how many more. */
const LISTED_CLEARS = 8;
/** Calls listed as the worst for misses (most missed identifiers, then most read-backs). */
const WORST_CALLS = 5;
/** Missed identifiers named on a worst call's line. */
const NAMED_MISSES = 3;
/** Characters of the file or command that names an output on a worst call's line. */
const NAMED_SOURCE = 36;
/** The price models the folder table shows per session (every one is in the pooled lines under it). */
const TABLE_PRICE_MODELS = ['anthropic', 'openai'] as const;

/** What the summary needs beyond the replay's totals: per tool, and the calls that cleared. */
export interface ReductionFigures {
  /** tool → tokens not sent, summed over the calls, and how many results it reduced */
  tools: Map<string, { saved: number; results: number }>;
  /**
   * calls where the clear stage cleared results: how many, the file inputs it replaced with them
   * (when any), and the tokens it freed there (results and inputs)
   */
  clears: { call: number; results: number; inputs?: number; freed: number }[];
  /** tool → tokens of file inputs (what the agent wrote) not sent, summed over the calls, and how many inputs */
  inputs: Map<string, { saved: number; inputs: number }>;
}

/** Collects `ReductionFigures` from each call's projection (pass `add` as the replay's `onProjection`). */
export class ReductionCollector implements ReductionFigures {
  readonly tools = new Map<string, { saved: number; results: number }>();
  readonly clears: { call: number; results: number; inputs?: number; freed: number }[] = [];
  readonly inputs = new Map<string, { saved: number; inputs: number }>();

  add(call: number, projection: Pick<Projection<string>, 'reductions'> & Partial<Pick<Projection<string>, 'inputs'>>): void {
    let cleared = 0,
      clearedInputs = 0,
      freed = 0;
    // file inputs, whatever replaced them; those a clear replaced with their call's result count with its clear too
    for (const r of projection.inputs ?? []) {
      const saved = Math.max(0, r.originalTokens - r.projectedTokens);
      const t = this.inputs.get(r.tool) ?? { saved: 0, inputs: 0 };
      t.saved += saved;
      if (r.fresh) t.inputs++;
      this.inputs.set(r.tool, t);
      if (r.fresh && r.by === 'clear') {
        clearedInputs++;
        freed += saved;
      }
    }
    for (const r of projection.reductions) {
      // a result sent as it was, only its call's file input replaced: counted with the inputs above
      if (r.inputOnly) continue;
      const saved = Math.max(0, r.originalTokens - r.projectedTokens);
      const t = this.tools.get(r.tool) ?? { saved: 0, results: 0 };
      t.saved += saved;
      if (r.fresh) t.results++;
      this.tools.set(r.tool, t);
      if (r.fresh && r.stage === 'clear') {
        cleared++;
        freed += saved;
      }
    }
    if (cleared || clearedInputs)
      this.clears.push({ call: call, results: cleared, ...(clearedInputs ? { inputs: clearedInputs } : {}), freed });
  }
}

// ---------------------------------------------------------------------------------------------
// Numbers as people read them

/** 2.6M, 61k, 1.2k, 830. */
function compact(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e6) return `${(n / 1e6).toFixed(a >= 1e7 ? 0 : 1)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  if (a >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
/** A share of raw as a change: 0.697 → "−30.3%", 1.04 → "+4.0%", and "0.0%" for what rounds to no change either way. */
export const change = (relative: number) => {
  const d = (relative - 1) * 100;
  return Math.abs(d) < 0.05 ? '0.0%' : `${d > 0 ? '+' : '−'}${Math.abs(d).toFixed(1)}%`;
};
const dollars = (x: number) => (x >= 100 ? `$${x.toFixed(0)}` : x >= 1 ? `$${x.toFixed(2)}` : `$${x.toFixed(3)}`);

/** Text cut to `width` with an ellipsis in the middle (the end of a file name says most). */
function fit(text: string, width: number): string {
  if (text.length <= width) return text;
  const head = Math.ceil((width - 1) / 2);
  return `${text.slice(0, head)}…${text.slice(text.length - (width - 1 - head))}`;
}

/** A path and the words after it on one summary line: the path is cut in its middle (keeping 20 characters at least), never the words. */
function pathLine(path: string, about: string): string {
  return `${fit(path, Math.max(20, SUMMARY_WIDTH - about.length))}${about}`;
}

/** Text cut to `width` around `id` (kept in view), an ellipsis where it was cut. */
function around(text: string, id: string, width: number): string {
  if (text.length <= width) return text;
  const at = Math.max(0, text.indexOf(id));
  const to = Math.min(text.length, Math.max(at + id.length + Math.floor((width - id.length) / 2), width));
  const from = Math.max(0, to - width);
  return `${from > 0 ? '…' : ''}${text.slice(from > 0 ? from + 1 : 0, to < text.length ? to - 1 : to)}${to < text.length ? '…' : ''}`;
}

/**
 * A session's name in the table: its file name without the transcript extension; a Cline-family
 * task, whose file every task names alike (`api_conversation_history.json`), by its task's folder.
 */
function sessionName(file: string): string {
  const parts = file.split(/[\\/]/);
  const name = parts.pop() ?? file;
  if (name === 'api_conversation_history.json' && parts.length > 0) return parts.pop()!;
  return name.replace(/\.(traj\.json|traj|jsonl|json)$/, '');
}

/** The end of a name, which tells sessions of one agent apart (`…cosmic-applet-c7d2069e`). */
function tail(text: string, width: number): string {
  return text.length <= width ? text : `…${text.slice(text.length - width + 1)}`;
}

/** Columns: left-aligned first, the rest right-aligned, two spaces apart. */
function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((c, i) => (i === 0 ? fit(c, widths[i]!).padEnd(widths[i]!) : c.padStart(widths[i]!)))
    .join('  ')
    .trimEnd();
}

function missLine(t: ReplayTotals): string {
  const before = t.referencedIdsBefore ? `${pct(t.missRateBefore)} (${t.missedIdsBefore} of ${t.referencedIdsBefore})` : 'n/a';
  const now = t.referencedIds ? `${pct(t.missRate)} (${t.missedIds} of ${t.referencedIds} identifiers)` : 'n/a (no identifiers)';
  return `miss rate ${now}; previous definition ${before}`;
}

/** Misses by what hid them: identifiers, their share of the misses, and the read-backs they imply. */
function missCauseLines(t: ReplayTotals): string[] {
  const causes = causesInOrder(t.missCauses ?? {});
  if (!causes.length) return [];
  const total = causes.reduce((a, c) => a + c.ids, 0);
  const widths = [36, 12, 7, 11];
  return [
    '',
    'misses by cause: what hid each missed identifier (a read-back is one grep of one stored output)',
    row(['  cause', 'identifiers', 'share', 'read-backs'], widths),
    ...causes.map((c) => row([`  ${c.label}`, String(c.ids), pct(total ? c.ids / total : 0), String(c.readBacks)], widths)),
  ];
}

/** A call of a session (named in a folder), for the worst-calls list. */
export interface CallOf {
  file?: string;
  call: Pick<ReplayCall, 'index' | 'referencedIds' | 'missedIds' | 'missed' | 'readBacks'>;
}

/** The calls with the most missed identifiers (then the most read-backs), worst first. */
export function worstCalls(calls: Iterable<CallOf>, n = WORST_CALLS): CallOf[] {
  const top: CallOf[] = [];
  const worse = (a: CallOf, b: CallOf) => b.call.missedIds - a.call.missedIds || b.call.readBacks.length - a.call.readBacks.length;
  for (const c of calls) {
    if (c.call.missedIds === 0) continue;
    top.push(c);
    if (top.length > n * 4) top.sort(worse).length = n;
  }
  return top.sort(worse).slice(0, n);
}

/** Groups of a worst call's misses listed (by tool, cause and call); past this, how many more. */
const LISTED_GROUPS = 3;

/** One worst call: how much it missed and its read-backs, then per tool and cause what hid them, with the first identifiers. */
function describeWorstCall(c: CallOf): string[] {
  // per output (its tool and file or command), cause and turn: the identifiers, and what the agent wrote around the first
  const groups = new Map<string, string[]>();
  const wrote = new Map<string, string>();
  for (const m of c.call.missed) {
    const source = m.source && m.source.length > NAMED_SOURCE ? `${m.source.slice(0, NAMED_SOURCE - 1)}…` : m.source;
    const what = m.tool ? `${m.tool}${source ? ` ${source}` : ''}, ` : '';
    const key = `${what}${causeLabel(m.cause)}${m.since !== undefined ? ` in ${turnOf(m.since)}` : ''}`;
    groups.set(key, [...(groups.get(key) ?? []), m.id]);
    if (m.wrote && !wrote.has(key)) wrote.set(key, m.wrote);
  }
  const where = c.file ? `${tail(sessionName(c.file), 40)}, ${turnOf(c.call.index)}` : turnOf(c.call.index);
  const reads = c.call.readBacks.length;
  const sorted = [...groups].sort((a, b) => b[1].length - a[1].length);
  const out = [
    `  ${where}: ${c.call.missedIds} of ${c.call.referencedIds} identifiers missed, ${reads} read-back${reads === 1 ? '' : 's'}`,
  ];
  for (const [what, ids] of sorted.slice(0, LISTED_GROUPS)) {
    const named = ids.slice(0, NAMED_MISSES).join(', ') + (ids.length > NAMED_MISSES ? ', …' : '');
    // cut at the end: what hid them and where stay whole, the identifiers go first
    const line = `    ${ids.length} ${what}: ${named}`;
    out.push(line.length <= SUMMARY_WIDTH ? line : `${line.slice(0, SUMMARY_WIDTH - 1)}…`);
    const said = wrote.get(what);
    const lead = '      the agent wrote: "';
    if (said) out.push(`${lead}${around(said, ids[0]!, SUMMARY_WIDTH - lead.length - 1)}"`);
  }
  if (sorted.length > LISTED_GROUPS) out.push(`    and ${sorted.length - LISTED_GROUPS} more`);
  return out;
}

function worstCallLines(calls: Iterable<CallOf>): string[] {
  const worst = worstCalls(calls);
  if (!worst.length) return [];
  return ['', 'worst turns for misses: what hid each group of identifiers, and in which turn', ...worst.flatMap(describeWorstCall)];
}

/** The cost lines: one per price model, the session's own family marked. */
function costLines(t: ReplayTotals, family: string | undefined): string[] {
  const widths = [14, 12, 12, 9, 16, 9];
  const out = [
    'cost under caching, in units of one uncached input token (raw history with caching = 100%)',
    row(['price model', 'raw', 'sent', 'vs raw', 'with read-backs', 'vs raw'], widths),
  ];
  for (const [name, c] of Object.entries(t.cost)) {
    const rb = t.costWithReadBacks[name];
    const label = name === family ? `${name} *` : t.routedAs?.[name] ? `${name} †` : name;
    out.push(
      row(
        [label, compact(c.raw), compact(c.projected), change(c.relative), rb ? compact(rb.projected) : '—', rb ? change(rb.relative) : '—'],
        widths,
      ),
    );
  }
  const note = routeNote(t, family);
  if (note) out.push(fit(note, SUMMARY_WIDTH));
  return out;
}

/** What the columns other than the session's own price model (*) are: the same projection priced, or a replay routed there (†). */
function routeNote(t: ReplayTotals, family: string | undefined): string | undefined {
  if (t.routedAs) return `† replayed as if sent to its provider, held to its prices; misses are the session's own`;
  if (!family || Object.keys(t.cost).length < 2) return undefined;
  return `other rows price the projection made for ${family} (*); --each-route replays each as sent there`;
}

/**
 * The limit (src/replay/limits.ts), when measured: first the share of the oracle's saving the
 * default keeps with read-backs priced (how much is left to win), then the oracle and the floor
 * against raw, per price model of the table.
 */
function limitLines(t: ReplayTotals): string[] {
  const l = t.limits;
  if (!l) return [];
  const models = TABLE_PRICE_MODELS.filter((p) => t.cost[p] && l.oracle[p] !== undefined && l.floor[p] !== undefined);
  if (!models.length) return [];
  const each = (f: (p: (typeof models)[number]) => string) => models.map((p) => `${p} ${f(p)}`).join(' · ');
  const share = (p: (typeof models)[number]) => {
    const s = oracleShare(t.cost[p]!.raw, t.costWithReadBacks[p]?.projected ?? t.cost[p]!.projected, l.oracle[p]!);
    return s === undefined ? 'n/a (the oracle saves nothing)' : pct(s);
  };
  const ofRaw = (x: number, p: (typeof models)[number]) => (t.cost[p]!.raw > 0 ? pct(x / t.cost[p]!.raw) : '—');
  return [
    '',
    'the limit: the oracle keeps only the lines the agent uses later; the floor sends no tool output',
    fit(`  share of the oracle's saving kept, with read-backs: ${each(share)}`, SUMMARY_WIDTH),
    fit(`  oracle (of raw): ${each((p) => ofRaw(l.oracle[p]!, p))}${l.oracleMisses ? ` (${l.oracleMisses} misses!)` : ''}`, SUMMARY_WIDTH),
    fit(`  floor (of raw): ${each((p) => ofRaw(l.floor[p]!, p))}`, SUMMARY_WIDTH),
  ];
}

/** A price model's idle time, as people write it (`5 min`, `1 h`). */
function idleTime(name: string): string | undefined {
  const ms = PRICE_MODELS.find((p) => p.name === name)?.cacheIdleMs;
  if (ms === undefined) return undefined;
  return ms < 3_600_000 ? `${Math.round(ms / 60_000)} min` : `${Math.round(ms / 3_600_000)} h`;
}

/**
 * Which price models' caches went cold after a pause (docs/replay-and-cost.md, *Cache expiry*), and
 * after how long; `dated` false: the log holds no call times, so no cache was taken to go cold.
 */
function coldLine(t: Pick<ReplayTotals, 'coldCalls'>, dated: boolean): string {
  if (!dated) return 'call times: none between calls in this log, so the cache is taken never to go cold';
  // price models with the same idle time and count are one group: `1 (openai, openai-4o, over 1 h)`
  const groups = new Map<string, { n: number; idle?: string; names: string[] }>();
  for (const [name, n] of Object.entries(t.coldCalls ?? {})) {
    if (n <= 0) continue;
    const idle = idleTime(name);
    const key = `${n}\0${idle ?? ''}`;
    const g = groups.get(key) ?? { n, ...(idle ? { idle } : {}), names: [] };
    g.names.push(name);
    groups.set(key, g);
  }
  if (!groups.size) return 'cache never cold: no pause longer than a provider keeps its cache idle';
  const parts = [...groups.values()].map(
    (g, i) => `${g.n}${i === 0 ? ` call${g.n === 1 ? '' : 's'}` : ''} (${g.names.join(', ')}${g.idle ? `, over ${g.idle}` : ''})`,
  );
  return `cache cold after a pause: ${parts.join(', ')}`;
}

/** The session's input cost in dollars at its own model's list price, when the model is known. */
function dollarLine(r: Pick<ReplayResult, 'model' | 'family' | 'totals'>): string | undefined {
  const price = modelPrice(r.model);
  const c = r.family ? r.totals.cost[r.family] : undefined;
  const rb = r.family ? r.totals.costWithReadBacks[r.family] : undefined;
  if (!price || !c || !rb) return undefined;
  const usd = (units: number) => dollars((units * price.inputPerMTok) / 1e6);
  const as = r.model!.toLowerCase().includes(price.model) ? '' : ` (priced as ${price.model})`;
  return `* ${r.model}: input ${usd(c.raw)} raw → ${usd(c.projected)} sent, ${usd(rb.projected)} with read-backs${as}`;
}

/** Which prelude the calls carried: the agent's captured system prompt and tools, or not (`--agent-prelude off`). */
function preludeLine(r: Pick<ReplayResult, 'prelude' | 'format'>, on: boolean): string | undefined {
  const p = r.prelude;
  const name = (PRELUDE_AGENT_NAMES as Record<string, string>)[r.format];
  if (p) {
    // a sub-agent's line leaves out "raw and sent alike" to stay within the summary's 100 columns
    return `agent prelude: ${preludeDescription(p)}, ${compact(p.tokens)} tokens a call${p.subAgent ? '' : ', raw and sent alike'}`;
  }
  if (!name) return undefined;
  return on
    ? `agent prelude: none added (the log holds ${name}'s system prompt and tools)`
    : `agent prelude off: calls without ${name}'s system prompt and tools (its log holds none)`;
}

/** The agents' names as the summary writes them. */
const TRUNCATING_AGENTS: Record<string, string> = {
  'gemini-cli': 'Gemini CLI',
  codex: 'Codex',
  'mini-swe-agent': 'mini-swe-agent',
  pi: 'pi',
  'qwen-code': 'Qwen Code',
  opencode: 'OpenCode',
  cline: 'Cline',
  continue: 'Continue',
};

/** How many outputs the agent had truncated itself (in how many sessions, for a folder): what it cut reached no model, with Spillway or without. */
function truncatedLine(x: ReplayTotals['truncatedByAgent'], sessions?: number): string | undefined {
  if (!x) return undefined;
  const who = x.agents.map((a) => TRUNCATING_AGENTS[a] ?? a).join(', ');
  const where = sessions === undefined ? '' : ` in ${sessions} session${sessions === 1 ? '' : 's'}`;
  return `truncated by the agent: ${x.outputs} output${x.outputs === 1 ? '' : 's'}${where} (${who}); what it cut reached no model`;
}

/** The agents that save an output to a file themselves and send a preview or pointer, as the summary names them. */
const SAVING_AGENTS: Record<string, string> = {
  'claude-code': 'Claude Code',
  'qwen-code': 'Qwen Code',
  'gemini-cli': 'Gemini CLI',
  'copilot-cli': 'Copilot CLI',
  'copilot-chat': 'Copilot',
};

/** How many outputs the agent had saved itself (in how many sessions, for a folder): the model saw the agent's preview or pointer, which Spillway left alone. */
function savedLine(x: ReplayTotals['savedByAgent'], sessions?: number): string | undefined {
  if (!x) return undefined;
  const who = x.agents.map((a) => SAVING_AGENTS[a] ?? a).join(', ');
  const where = sessions === undefined ? '' : ` in ${sessions} session${sessions === 1 ? '' : 's'}`;
  return `saved by the agent: ${x.outputs} output${x.outputs === 1 ? '' : 's'}${where} (${who}); its preview sent as it was`;
}

/** A folder's outputs the agents truncated or saved themselves, and in how many sessions. */
function folderAgentLine(
  sessions: readonly FolderSession[],
  pick: (t: ReplayTotals) => ReplayTotals['truncatedByAgent'],
  line: typeof truncatedLine,
): string | undefined {
  const cut = sessions.flatMap((s) => {
    const x = 'totals' in s ? pick(s.totals) : undefined;
    return x ? [x] : [];
  });
  if (!cut.length) return undefined;
  const outputs = cut.reduce((a, x) => a + x.outputs, 0);
  return line({ outputs, agents: [...new Set(cut.flatMap((x) => x.agents))].sort() }, cut.length);
}

/** One row per tool (tool, tokens saved, what it did) by tokens saved: the top TOP_TOOLS, then the rest summed. */
function toolRows(tools: [string, number, string][]): string[] {
  const tw = [30, 12, 20];
  const sorted = [...tools].sort((a, b) => b[1] - a[1]);
  const out = sorted.slice(0, TOP_TOOLS).map(([tool, saved, what]) => row([`  ${tool}`, compact(saved), what], tw));
  const rest = sorted.slice(TOP_TOOLS);
  if (rest.length) out.push(row([`  ${rest.length} more tools`, compact(rest.reduce((a, [, saved]) => a + saved, 0)), ''], tw));
  return out;
}

/** The summary of one replayed session. */
export function sessionSummary(file: string, r: ReplayResult, figures: ReductionFigures, prelude = true): string {
  const t = r.totals;
  const lines: string[] = [];
  const about = ` (${r.format}${r.model ? `, ${r.model}` : ''})`;
  lines.push(pathLine(file, about));
  lines.push(
    `${t.calls} turns (model calls, numbered from 1) · tokens ${compact(t.originalTokens)} raw → ${compact(t.projectedTokens)} sent (${change(t.originalTokens ? t.projectedTokens / t.originalTokens : 1)})`,
    `largest context ${compact(t.maxOriginalTokens)} → ${compact(t.maxProjectedTokens)} tokens · cache-stable turns ${pct(t.cacheStableShare)}`,
  );
  lines.push(missLine(t));
  const pl = preludeLine(r, prelude);
  if (pl) lines.push(fit(pl, SUMMARY_WIDTH));
  const tl = truncatedLine(t.truncatedByAgent);
  if (tl) lines.push(fit(tl, SUMMARY_WIDTH));
  const sl = savedLine(t.savedByAgent);
  if (sl) lines.push(fit(sl, SUMMARY_WIDTH));
  lines.push(...missCauseLines(t), ...worstCallLines(r.calls.map((call) => ({ call }))));
  if (!t.recoverable) lines.push(`NOT RECOVERABLE: ${t.unrecoverable.length} handle(s) did not read back equal to the original`);
  lines.push('', ...costLines(t, r.family));
  const dl = dollarLine(r);
  if (dl) lines.push(fit(dl, SUMMARY_WIDTH));
  lines.push(
    fit(
      coldLine(
        t,
        r.calls.some((c) => c.gapMs !== undefined),
      ),
      SUMMARY_WIDTH,
    ),
  );
  lines.push(...limitLines(t));
  const cl = compactionLine(t.compactions ?? []);
  if (cl) lines.push(fit(cl, SUMMARY_WIDTH));

  const tools = [...figures.tools].map(([tool, f]): [string, number, string] => [
    tool,
    f.saved,
    `${f.results} result${f.results === 1 ? '' : 's'} reduced`,
  ]);
  lines.push('', tools.length ? 'tokens saved by tool (summed over the calls)' : 'nothing was reduced', ...toolRows(tools));
  const inputs = [...figures.inputs].map(([tool, f]): [string, number, string] => [
    tool,
    f.saved,
    `${f.inputs} input${f.inputs === 1 ? '' : 's'} replaced`,
  ]);
  if (inputs.length)
    lines.push('', 'tokens saved by file inputs replaced by a marker (what the agent wrote; summed over the calls)', ...toolRows(inputs));

  if (figures.clears.length) {
    lines.push('', `turns with clears (${figures.clears.length}): the cache is rewritten from the first cleared result`);
    for (const c of figures.clears.slice(0, LISTED_CLEARS)) {
      const inputs = c.inputs ? `, ${c.inputs} file input${c.inputs === 1 ? '' : 's'} replaced` : '';
      lines.push(
        `  ${turnOf(c.call)}: ${c.results} result${c.results === 1 ? '' : 's'} cleared${inputs}, ${compact(c.freed)} tokens freed`,
      );
    }
    if (figures.clears.length > LISTED_CLEARS) lines.push(`  and ${figures.clears.length - LISTED_CLEARS} more`);
  } else lines.push('', 'no clears');
  return lines.join('\n') + '\n';
}

/** One session of a folder: its file (relative to the folder), and its replay's totals or why it failed. */
export type FolderSession =
  | { file: string; format: string; model?: string; prelude?: ReplayResult['prelude']; totals: ReplayTotals }
  | { file: string; error: string };

/** How many sessions carried their agent's prelude, or that it was left out. */
function folderPreludeLine(sessions: readonly FolderSession[], on: boolean): string[] {
  const agents = sessions.filter((s) => 'format' in s && s.format in PRELUDE_AGENT_NAMES);
  if (!agents.length) return [];
  if (!on) return [`agent prelude off: ${agents.length} Claude Code / Codex sessions without their agent's system prompt and tools`];
  const withIt = agents.filter((s) => 'prelude' in s && s.prelude).length;
  return [`agent prelude: ${withIt} of ${agents.length} Claude Code / Codex sessions with their agent's system prompt and tools`];
}

/** The table of a folder: one row per session, then the pooled row, then the pooled cost at every price model. */
export function folderSummary(
  dir: string,
  sessions: readonly FolderSession[],
  pooled: PooledTotals,
  files: { skipped: number; superseded: number },
  worst: readonly CallOf[] = [],
  prelude = true,
): string {
  const { skipped, superseded } = files;
  const widths = [34, 6, 13, 13, 13, 11];
  const cells = (name: string, t: ReplayTotals) => [
    name,
    String(t.calls),
    `${compact(t.originalTokens)} → ${compact(t.projectedTokens)}`,
    ...TABLE_PRICE_MODELS.map((p) =>
      t.cost[p] ? `${pct(t.cost[p].relative)} ${pct(t.costWithReadBacks[p]?.relative ?? t.cost[p].relative)}` : '—',
    ),
    t.referencedIds ? `${pct(t.missRate)} ${pct(t.missRateBefore)}` : 'n/a',
  ];
  const replayed = sessions.filter((s) => 'totals' in s).length;
  const about =
    `: ${replayed} session${replayed === 1 ? '' : 's'} replayed` +
    (skipped ? `, ${skipped} file(s) in no transcript format skipped` : '') +
    (superseded ? `, ${superseded} older Copilot chat file(s) left out for their .jsonl log` : '');
  const lines = [
    pathLine(dir, about),
    'cost relative to raw history with caching: without / with read-backs; miss rate: now / previously',
    ...folderPreludeLine(sessions, prelude),
    '',
    row(['session', 'turns', 'tokens', ...TABLE_PRICE_MODELS, 'miss rate'], widths),
  ];
  for (const s of sessions) {
    const name = tail(sessionName(s.file), widths[0]!);
    if ('totals' in s) lines.push(row(cells(name, s.totals), widths));
    else lines.push(fit(`${name.padEnd(widths[0]!)}  not replayed: ${s.error}`, SUMMARY_WIDTH));
  }
  lines.push('-'.repeat(widths.reduce((a, w) => a + w, 0) + 2 * (widths.length - 1)));
  lines.push(row(cells(`pooled (${pooled.sessions})`, pooled), widths));
  lines.push('', missLine(pooled), ...missCauseLines(pooled), ...worstCallLines(worst), '', ...costLines(pooled, undefined));
  lines.push(...limitLines(pooled));
  // a folder's totals do not say whether its logs had times: the line is there when some cache went cold
  if (Object.values(pooled.coldCalls ?? {}).some((n) => n > 0)) lines.push(fit(coldLine(pooled, true), SUMMARY_WIDTH));
  const cl = pooledCompactionLine(sessions.map((s) => ('totals' in s ? (s.totals.compactions ?? []) : [])));
  if (cl) lines.push(fit(cl, SUMMARY_WIDTH));
  const tl = folderAgentLine(sessions, (t) => t.truncatedByAgent, truncatedLine);
  if (tl) lines.push(fit(tl, SUMMARY_WIDTH));
  const sl = folderAgentLine(sessions, (t) => t.savedByAgent, savedLine);
  if (sl) lines.push(fit(sl, SUMMARY_WIDTH));
  return lines.join('\n') + '\n';
}
