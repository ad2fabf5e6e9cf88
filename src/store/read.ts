/**
 * `read`: reading part of a stored output back, the same way for every store and every caller
 * (`spillway read`, the `spillway_read_output` language model tool, the `spillway:` documents).
 *
 * Options arrive from command lines and from models' tool calls, so they are checked here at run
 * time with messages that say what was wrong and what shape was expected. The slicing itself is in
 * `slice.ts`; this module decides what a combination of options means and says, in `shown`, what
 * part of the output the text is.
 *
 * Combination rules:
 * - no option: the whole text;
 * - `offset` and/or `limit` alone: a char window (`offset` defaults to 0, `limit` to the rest);
 * - `lines`: those lines, terminators included, exactly as stored;
 * - `grep` (with optional `context` and `ignoreCase`): matching lines as `grep -n -C`; with `lines`
 *   too, only those lines are searched (line numbers stay those of the whole output);
 * - `limit` with `lines` or `grep`: a cap on the returned text, cut at a line boundary when at least
 *   one line fits, and flagged by `truncated` and in `shown`;
 * - refused: `offset` with `lines` or `grep` (chars and lines are different coordinates, there is
 *   no single meaning), `context` or `ignoreCase` without `grep`, unknown option names.
 * Ranges past the end are not errors: they select what exists and `shown` says what that is.
 *
 * An output stored as one line of an agent's JSON (Cline's `[{"query": …, "result": …}]`, Codex's
 * older `{"output": …}`) has its own lines inside that JSON, and those are the lines its preview
 * showed: `lines` and `grep` read the output inside (`shown` says so); the other reads return the
 * text as stored.
 */
import { SpillwayError } from '../engine/types';
import { assertHandle } from './entry';
import { countLines, cutAtLimit, grepLines, lineSpans, selectLines, sliceChars } from './slice';
import { formatInt } from '../engine/format-number';
import { LINE_BREAK } from '../engine/lines';
import { insideEnvelope } from '../engine/previews/envelope';

export interface ReadOptions {
  /** "A:B" (1-based, inclusive), "A:" (to the end), ":B" (from the start), "N" (one line), or [A, B] */
  lines?: string | readonly [number, number];
  /** a JavaScript regular expression source, matched against each line */
  grep?: string;
  /** match `grep` without regard to case */
  ignoreCase?: boolean;
  /** lines shown before and after each grep match */
  context?: number;
  /** first char to return (UTF-16 code units, 0-based) */
  offset?: number;
  /** most chars to return */
  limit?: number;
}

export interface ReadRange {
  unit: 'lines' | 'chars';
  /** lines: first line, 1-based; chars: first char, 0-based */
  start: number;
  /** lines: last line, inclusive; chars: one past the last char */
  end: number;
}

export interface ReadResult {
  handle: string;
  text: string;
  totalChars: number;
  totalLines: number;
  /** what part of the output `text` is, as a sentence, e.g. "lines 10–20 of 1,204" */
  shown: string;
  /** the lines or chars returned (absent for whole-text and grep reads, and when nothing is returned) */
  range?: ReadRange;
  /** grep: how many lines matched */
  matches?: number;
  /** true when `limit` cut a lines or grep read short */
  truncated?: boolean;
}

const OPTION_NAMES = ['lines', 'grep', 'ignoreCase', 'context', 'offset', 'limit'] as const;
const LINES_SHAPE = 'A:B, A:, :B or N with 1-based line numbers and A ≤ B, e.g. "10:20"';
/** The longest regex or option value quoted back in an error; the rest is elided. */
const MAX_QUOTED = 120;

/** A line range after parsing: `last` undefined means to the end. */
export interface LineRange {
  first: number;
  last?: number;
}

/** Parses the `lines` option, or throws a message naming the value and the expected shape. */
export function parseLineRange(value: unknown): LineRange {
  const bad = (): never => {
    throw new SpillwayError(`lines ${quote(value)} is not a line range: expected ${LINES_SHAPE}`);
  };
  let first: number | undefined;
  let last: number | undefined;
  if (Array.isArray(value)) {
    if (value.length !== 2 || !value.every((n) => Number.isSafeInteger(n))) bad();
    [first, last] = value as [number, number];
  } else if (typeof value === 'string') {
    const m = /^\s*(\d*)\s*(:?)\s*(\d*)\s*$/.exec(value);
    if (!m || (m[1] === '' && m[3] === '')) return bad();
    const [, a = '', colon, b = ''] = m;
    if (!colon) {
      first = last = Number(a);
    } else {
      first = a === '' ? 1 : Number(a);
      last = b === '' ? undefined : Number(b);
    }
  } else {
    return bad();
  }
  if (first === undefined || !Number.isSafeInteger(first) || first < 1) return bad();
  if (last !== undefined && (!Number.isSafeInteger(last) || last < first)) return bad();
  return last === undefined ? { first } : { first, last };
}

/** Compiles the `grep` option, or throws a message naming the regex and the engine's complaint. */
function compileGrep(source: unknown, ignoreCase = false): RegExp {
  if (typeof source !== 'string') throw new SpillwayError(`grep must be a regular expression as a string, got ${quote(source)}`);
  try {
    return new RegExp(source, ignoreCase ? 'i' : '');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new SpillwayError(`grep ${quote(source)} is not a valid JavaScript regular expression: ${reason}`);
  }
}

/** The checked form of `ReadOptions`. */
type ReadPlan =
  | { kind: 'all' }
  | { kind: 'chars'; offset: number; limit?: number }
  | { kind: 'lines'; range: LineRange; limit?: number }
  | { kind: 'grep'; pattern: RegExp; context: number; range?: LineRange; limit?: number };

/** Checks `options` (which may come from untrusted JSON) and decides what they ask for. */
export function planRead(options: unknown = {}): ReadPlan {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new SpillwayError(`read options must be an object, got ${quote(options)}`);
  }
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!(OPTION_NAMES as readonly string[]).includes(key)) {
      throw new SpillwayError(`unknown read option ${JSON.stringify(key)}: expected ${OPTION_NAMES.join(', ')}`);
    }
  }
  const given = (key: string): boolean => o[key] !== undefined;
  const offset = given('offset') ? count(o.offset, 'offset') : undefined;
  const limit = given('limit') ? count(o.limit, 'limit') : undefined;
  const context = given('context') ? count(o.context, 'context') : undefined;
  if (given('ignoreCase') && typeof o.ignoreCase !== 'boolean') {
    throw new SpillwayError(`ignoreCase must be true or false, got ${quote(o.ignoreCase)}`);
  }
  if (offset !== undefined && (given('lines') || given('grep'))) {
    throw new SpillwayError(
      `offset counts chars and cannot be combined with ${given('lines') ? 'lines' : 'grep'}: use lines to pick lines, or offset and limit alone for a char window`,
    );
  }
  if (!given('grep')) {
    if (context !== undefined) throw new SpillwayError('context only applies to grep: give grep too, or drop context');
    if (given('ignoreCase')) throw new SpillwayError('ignoreCase only applies to grep: give grep too, or drop ignoreCase');
  }
  const range = given('lines') ? parseLineRange(o.lines) : undefined;
  const withLimit = <T extends object>(plan: T): T & { limit?: number } => (limit === undefined ? plan : { ...plan, limit });
  if (given('grep')) {
    const pattern = compileGrep(o.grep, o.ignoreCase === true);
    return withLimit({ kind: 'grep' as const, pattern, context: context ?? 0, ...(range ? { range } : {}) });
  }
  if (range) return withLimit({ kind: 'lines' as const, range });
  if (offset !== undefined || limit !== undefined) return withLimit({ kind: 'chars' as const, offset: offset ?? 0 });
  return { kind: 'all' };
}

/** Applies `options` to `text`, the full output stored under `handle`. */
export function readText(handle: string, text: string, options?: ReadOptions): ReadResult {
  return applyPlan(handle, text, planRead(options));
}

/** Applies an already checked plan (lets a store check options before it touches its storage). */
function applyPlan(handle: string, text: string, plan: ReadPlan): ReadResult {
  if (plan.kind === 'lines' || plan.kind === 'grep') {
    const inner = insideEnvelope(text);
    if (inner) {
      const r = applyPlan(handle, inner.body, plan);
      return { ...r, shown: `${r.shown}, of the output inside ${inner.whose}` };
    }
  }
  const totalChars = text.length;
  switch (plan.kind) {
    case 'all': {
      const totalLines = countLines(text);
      const shown = totalChars === 0 ? 'the whole output, which is empty' : `all ${lineCount(totalLines)} (${formatInt(totalChars)} chars)`;
      return { handle, text, totalChars, totalLines, shown };
    }
    case 'chars': {
      const totalLines = countLines(text);
      if (plan.offset >= totalChars && totalChars > 0) {
        const shown = `nothing at char ${formatInt(plan.offset)}: the output has ${formatInt(totalChars)} chars`;
        return { handle, text: '', totalChars, totalLines, shown, range: { unit: 'chars', start: totalChars, end: totalChars } };
      }
      const slice = sliceChars(text, plan.offset, plan.limit);
      const shown = `chars ${formatInt(slice.start)}–${formatInt(slice.end)} of ${formatInt(totalChars)}`;
      return { handle, text: slice.text, totalChars, totalLines, shown, range: { unit: 'chars', start: slice.start, end: slice.end } };
    }
    case 'lines': {
      const spans = lineSpans(text);
      const totalLines = spans.length;
      const { first, last } = plan.range;
      const asked = last === undefined ? `lines ${formatInt(first)}–end` : describeLines(first, last);
      const selection = selectLines(text, first, last, spans);
      if (!selection) {
        const shown = `nothing in ${asked}: the output has ${lineCount(totalLines)}`;
        return { handle, text: '', totalChars, totalLines, shown };
      }
      let end = selection.last;
      let out = selection.text;
      let truncated = false;
      let midLine = false;
      if (plan.limit !== undefined && out.length > plan.limit) {
        truncated = true;
        // Keep the most whole lines that fit; if not even the first fits, cut inside it.
        const base = spans[selection.first - 1]!.start;
        let fit = selection.first - 1;
        while (fit < selection.last && spans[fit]!.next - base <= plan.limit) fit++;
        if (fit >= selection.first) {
          end = fit;
          out = text.slice(base, spans[fit - 1]!.next);
        } else {
          end = selection.first;
          midLine = true;
          out = sliceChars(text, base, plan.limit).text;
        }
      }
      let shown = `${describeLines(selection.first, end)} of ${formatInt(totalLines)}`;
      if (truncated) {
        shown += midLine
          ? `, its first ${formatInt(out.length)} chars (cut by the limit of ${formatInt(plan.limit!)} chars)`
          : ` (cut by the limit of ${formatInt(plan.limit!)} chars; asked for ${describeLines(selection.first, selection.last)})`;
      }
      const result: ReadResult = {
        handle,
        text: out,
        totalChars,
        totalLines,
        shown,
        range: { unit: 'lines', start: selection.first, end },
      };
      if (truncated) result.truncated = true;
      return result;
    }
    case 'grep': {
      const spans = lineSpans(text);
      const totalLines = spans.length;
      const grep = grepLines(text, plan.pattern, plan.context, plan.range, spans);
      const regex = `/${plan.pattern.source}/${plan.pattern.flags}`;
      const where = plan.range
        ? ` in ${plan.range.last === undefined ? `lines ${formatInt(plan.range.first)}–end` : describeLines(plan.range.first, plan.range.last)}`
        : '';
      if (grep.matches === 0) {
        const scope = plan.range ? where.slice(1) + ` of ${formatInt(totalLines)}` : `in ${lineCount(totalLines)}`;
        return { handle, text: '', totalChars, totalLines, shown: `no match of ${regex} ${scope}`, matches: 0 };
      }
      const withContext = plan.context > 0 ? ` with ${lineCount(plan.context)} of context` : '';
      let shown = `${formatInt(grep.matches)} ${grep.matches === 1 ? 'match' : 'matches'} of ${regex}${where}${withContext}, ${lineCount(grep.shownLines)} of ${formatInt(totalLines)}`;
      let out = grep.text;
      let truncated = false;
      if (plan.limit !== undefined) {
        const cut = cutAtLimit(out, plan.limit);
        if (cut.cut) {
          truncated = true;
          out = cut.text;
          shown += ` (cut by the limit of ${formatInt(plan.limit)} chars)`;
        }
      }
      const result: ReadResult = { handle, text: out, totalChars, totalLines, shown, matches: grep.matches };
      if (truncated) result.truncated = true;
      return result;
    }
  }
}

function count(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new SpillwayError(`${name} must be a whole number ≥ 0, got ${quote(value)}`);
  }
  return value;
}

function describeLines(first: number, last: number): string {
  return first === last ? `line ${formatInt(first)}` : `lines ${formatInt(first)}–${formatInt(last)}`;
}

function lineCount(n: number): string {
  return `${formatInt(n)} ${n === 1 ? 'line' : 'lines'}`;
}

function quote(value: unknown): string {
  let s: string;
  try {
    s = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  } catch {
    s = String(value);
  }
  return s.length > MAX_QUOTED ? s.slice(0, MAX_QUOTED) + '…' : s;
}

/**
 * A store's `read`: the handle and the options are checked before the text is fetched, so a bad
 * request never touches the disk. Both stores read through this.
 */
export function readStored(handle: string, options: ReadOptions, get: (handle: string) => string): ReadResult {
  assertHandle(handle);
  const plan = planRead(options);
  return applyPlan(handle, get(handle), plan);
}

/**
 * Longest text one read-back answer carries (an MCP tool result, a proxy-answered read): 8,000 chars
 * is about 2,000 tokens, small enough that a page never becomes the context problem the marker
 * solved, large enough that a typical error log or stack trace comes back in one call.
 */
export const MAX_ANSWER_CHARS = 8_000;

/** A capped read: a `ReadResult` no longer than the cap, with how to ask for what follows. */
export interface ReadAnswer extends ReadResult {
  /** the options that read the next part, when the text stops before the part asked for ends */
  next?: { offset: number; limit: number } | { lines: string };
}

/**
 * `readStored` for a model's tool call: the same answers as `spillway read`, held to `cap` chars.
 * A read without `limit` is capped (a whole-output read of a long output becomes its first page of
 * chars, a lines or grep read is cut at a line boundary) and `next` says how to continue; a `limit`
 * over the cap is refused, so a model asking for pages learns the page size once. Pages read with
 * `offset` and `limit` reassemble the output byte for byte.
 */
export function readAnswer(handle: string, options: unknown, get: (handle: string) => string, cap = MAX_ANSWER_CHARS): ReadAnswer {
  assertHandle(handle);
  const plan = planRead(options);
  if (plan.kind !== 'all' && plan.limit !== undefined && plan.limit > cap) {
    throw new SpillwayError(
      `limit ${formatInt(plan.limit)} is over the cap of ${formatInt(cap)} chars per answer: read in pages of at most ${formatInt(cap)} (offset, limit), or narrow the read with lines or grep`,
    );
  }
  const text = get(handle);
  let capped: ReadPlan = plan;
  if (plan.kind === 'all') capped = text.length <= cap ? plan : { kind: 'chars', offset: 0, limit: cap };
  else if (plan.limit === undefined) capped = { ...plan, limit: cap };
  const result: ReadAnswer = applyPlan(handle, text, capped);
  const range = result.range;
  if (range?.unit === 'chars' && range.end < result.totalChars) {
    const page = plan.kind === 'chars' && plan.limit ? plan.limit : cap;
    result.next = { offset: range.end, limit: page };
  } else if (range?.unit === 'lines' && result.truncated && capped.kind === 'lines' && /[\r\n]$/.test(result.text)) {
    // cut at a line boundary: the next read starts on the line after; a cut inside one line has no line-shaped next
    const last = capped.range.last;
    result.next = { lines: `${range.end + 1}:${last ?? ''}` };
  }
  return result;
}

/** The answer as one text for a model: a header line saying which part of how much, then the text exactly. */
export function answerText(a: ReadAnswer): string {
  const next = a.next ? `; next: ${'lines' in a.next ? `lines "${a.next.lines}"` : `offset ${a.next.offset}, limit ${a.next.limit}`}` : '';
  return `[spillway ${a.handle}: ${a.shown}${next}]\n${a.text}`;
}

/** Longest answer a read tool gives a model in one call; the model asks again for other parts. */
const MAX_TOOL_ANSWER_CHARS = 8_000;

/**
 * A read's answer to a model (the LM tool, the proxy's and the chat provider's read-back loop): a
 * one-line header saying which part of how much is shown, then the text, clipped to `max`
 * characters with a note on how to ask for the rest.
 */
export function boundedAnswer(
  r: Pick<ReadResult, 'handle' | 'text' | 'totalChars' | 'totalLines' | 'shown'>,
  max = MAX_TOOL_ANSWER_CHARS,
): string {
  const whole = `${lineCount(r.totalLines)}, ${formatInt(r.totalChars)} chars`;
  let body = r.text;
  let note = '';
  if (body.length > max) {
    body = body.slice(0, max);
    note =
      `${LINE_BREAK}[clipped: showing the first ${formatInt(max)} of these ${formatInt(r.text.length)} chars (about ${lineCount(countLines(body))}); ` +
      `ask for a narrower part with lines "A:B", grep, or offset and limit]`;
  }
  return `[spillway ${r.handle}: ${r.shown ? r.shown + ' of ' : ''}${whole}]${LINE_BREAK}${body}${note}`;
}
