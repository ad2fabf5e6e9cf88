/**
 * Previews per kind of output, measured on the corpus (issue 19, "previews that keep what agents
 * reuse"): for every tool result long enough to be previewed, its kind (src/engine/previews), the
 * identifiers the agent wrote in its later replies that came from that result, and how many of them
 * the per-kind preview keeps against the generic preview every result had before.
 *
 * Identifiers are `identifiersIn` of src/replay/identifiers.ts (the miss rate's own definition, called,
 * not copied). A result's referenced identifiers are those of its text that the agent wrote in a
 * reply of a later call (from the first call that sent the result to the end of the session); an
 * identifier counts as kept when the preview's text contains it.
 */
import { DEFAULT_CONFIG } from '../src/engine/config';
import { readRequest, resultText } from '../src/engine/formats';
import { genericPreview, preview } from '../src/engine/preview';
import { classifyOutput, hintForResult, OUTPUT_KINDS, type OutputKindName, type PreviewHint } from '../src/engine/previews';
import { identifiersIn } from '../src/replay/identifiers';
import { linesHolding } from '../src/replay/limits';
import { readTranscript, requestForCall, type Transcript } from '../src/replay/readers';
import { formatInt } from '../src/engine/format-number';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { updateSection } from './readme';
import { fixtureFiles, fixturesDir } from './peers';

/** One tool result of a session, as the last request of the session holds it. */
export interface SessionResult {
  text: string;
  tool: string;
  hint: PreviewHint;
  /** the first call whose request holds the result: the model has seen it from this call on */
  firstCall: number;
}

/** Every tool result of a transcript (observations of text-mode agents included), with the hint its call gives. */
export function sessionResults(t: Transcript): SessionResult[] {
  if (t.calls.length === 0) return [];
  const text = JSON.stringify(requestForCall(t, t.calls.length - 1));
  const req = readRequest(text, t.wire, undefined, t.observations ?? 'off');
  let k = 0;
  return req.results.map((r) => {
    while (k < t.calls.length - 1 && t.calls[k]!.end <= r.item) k++;
    return { text: resultText(req, r), tool: r.tool, hint: hintForResult(req, r), firstCall: k };
  });
}

export interface KindRow {
  kind: OutputKindName;
  /** results over the preview budget (the ones a reduction would preview) */
  results: number;
  /** of those, results with at least one identifier the agent used later */
  referenced: number;
  referencedIds: number;
  keptGeneric: number;
  keptKind: number;
  /** characters of the results */
  chars: number;
  /** characters of their per-kind previews */
  kindChars: number;
  /**
   * characters the limit's oracle keeps of them (src/replay/limits.ts, `linesHolding`): the lines that
   * hold every referenced identifier, none of a result no later reply refers to
   */
  oracleChars: number;
}

function emptyRow(kind: OutputKindName): KindRow {
  return { kind, results: 0, referenced: 0, referencedIds: 0, keptGeneric: 0, keptKind: 0, chars: 0, kindChars: 0, oracleChars: 0 };
}

/** Per call k, the identifiers the agent wrote in its replies from call k on: built once, from the end. */
export function laterIdentifiers(t: Transcript): Array<Set<string>> {
  const laterIds: Array<Set<string>> = new Array<Set<string>>(t.calls.length);
  let acc = new Set<string>();
  for (let k = t.calls.length - 1; k >= 0; k--) {
    acc = new Set([...acc, ...identifiersIn(t.calls[k]!.reply)]);
    laterIds[k] = acc;
  }
  return laterIds;
}

/** Adds one session's results to `rows` (keyed by kind), previewing each in `budget` characters. */
function measureSession(t: Transcript, rows: Map<OutputKindName, KindRow>, budget = DEFAULT_CONFIG.previewChars): void {
  const results = sessionResults(t);
  const laterIds = laterIdentifiers(t);
  for (const r of results) {
    if (r.text.length <= budget) continue;
    const kind = classifyOutput(r.text, r.hint);
    const row = rows.get(kind) ?? emptyRow(kind);
    rows.set(kind, row);
    row.results++;
    const later = laterIds[r.firstCall] ?? new Set<string>();
    const used = identifiersIn(r.text).filter((id) => later.has(id));
    const perKind = preview('smart', r.text, budget, r.hint);
    row.chars += r.text.length;
    row.kindChars += perKind.length;
    if (used.length === 0) continue;
    row.oracleChars += linesHolding(r.text, used).length;
    row.referenced++;
    row.referencedIds += used.length;
    const generic = genericPreview(r.text, budget);
    row.keptGeneric += used.filter((id) => generic.includes(id)).length;
    row.keptKind += used.filter((id) => perKind.includes(id)).length;
  }
}

/** The rows of every kind in OUTPUT_KINDS order, then the total. */
export function kindRows(sessions: readonly Transcript[], budget = DEFAULT_CONFIG.previewChars): KindRow[] {
  const rows = new Map<OutputKindName, KindRow>();
  for (const t of sessions) measureSession(t, rows, budget);
  return OUTPUT_KINDS.map((k) => rows.get(k) ?? emptyRow(k));
}

const share = (n: number, of: number) => (of ? `${((n / of) * 100).toFixed(1)}%` : '—');

/** The Markdown table of `rows` with a total line. */
export function kindTable(rows: readonly KindRow[]): string {
  const total = rows.reduce(
    (a, r) => ({
      ...a,
      results: a.results + r.results,
      referenced: a.referenced + r.referenced,
      referencedIds: a.referencedIds + r.referencedIds,
      keptGeneric: a.keptGeneric + r.keptGeneric,
      keptKind: a.keptKind + r.keptKind,
      chars: a.chars + r.chars,
      kindChars: a.kindChars + r.kindChars,
      oracleChars: a.oracleChars + r.oracleChars,
    }),
    emptyRow('generic'),
  );
  const line = (name: string, r: KindRow) =>
    `| ${name} | ${formatInt(r.results)} | ${formatInt(r.referenced)} | ${formatInt(r.referencedIds)} | ${formatInt(r.keptGeneric)} (${share(r.keptGeneric, r.referencedIds)}) | ${formatInt(r.keptKind)} (${share(r.keptKind, r.referencedIds)}) | ${share(r.kindChars, r.chars)} | ${share(r.oracleChars, r.chars)} |`;
  return [
    "| kind | results over the preview budget | results referenced later | referenced identifiers | kept by the generic preview | kept by the per-kind preview | the per-kind preview's characters | the oracle's characters (every identifier kept) |",
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...rows.map((r) => line(r.kind, r)),
    line('**all**', total),
  ].join('\n');
}

/** The command that makes the table, quoted beside it. */
const KINDS_COMMAND = 'npm run bench:kinds';

/** The table over every session of the corpus, written to `out` (preview-kinds.md, .json) and into docs/previews.md. */
export async function runKinds(out: string, root = process.cwd()): Promise<string> {
  const files = fixtureFiles(fixturesDir(root));
  const sessions = [];
  for (const { file } of files) sessions.push(await readTranscript(file));
  const rows = kindRows(sessions);
  const table = kindTable(rows);
  const text = `Made by \`${KINDS_COMMAND}\` over the ${sessions.length} sessions of \`test/fixtures/sessions/\`, previews of ${formatBudget()} characters (the default \`previewChars\`).\n\n${table}`;
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'preview-kinds.md'), text + '\n');
  writeFileSync(
    join(out, 'preview-kinds.json'),
    JSON.stringify({ sessions: sessions.length, budget: DEFAULT_CONFIG.previewChars, rows }, null, 2) + '\n',
  );
  updateSection('docs/previews.md', 'preview-kinds', text, root);
  return text;
}

function formatBudget(): string {
  return DEFAULT_CONFIG.previewChars.toLocaleString('en-US');
}
