/**
 * Slicing a stored output: the pure text functions behind `read` (lines, grep, char windows).
 *
 * Both stores (files on disk, and the in-memory one used by tests and the proxy) answer `read`
 * the same way because they both call these functions; nothing here knows where text comes from.
 *
 * The line model, used everywhere in Spillway that counts lines of an output:
 * - a line ends at "\n"; a "\r" right before it belongs to the terminator (CRLF), a lone "\r" does not
 *   end a line;
 * - the last line may lack a terminator; a trailing "\n" does not start an extra, empty line;
 * - the empty text has no lines; "\n" has one (empty) line.
 * Line numbers are 1-based. Char positions count UTF-16 code units, like `string.length` and caps.
 */
import { countLines } from '../engine/lines';

/** One line of a text: `[start, end)` is its content, `[end, next)` its terminator ("", "\n" or "\r\n"). */
export interface LineSpan {
  start: number;
  end: number;
  next: number;
}

const CARRIAGE_RETURN = 13; // "\r"

/** Splits `text` into line spans (see the line model above). */
export function lineSpans(text: string): LineSpan[] {
  const spans: LineSpan[] = [];
  let start = 0;
  while (start < text.length) {
    const newline = text.indexOf('\n', start);
    if (newline === -1) {
      spans.push({ start, end: text.length, next: text.length });
      break;
    }
    const end = newline > start && text.charCodeAt(newline - 1) === CARRIAGE_RETURN ? newline - 1 : newline;
    spans.push({ start, end, next: newline + 1 });
    start = newline + 1;
  }
  return spans;
}

/** The number of lines in `text`, without building the spans (the engine's count: one for all of Spillway). */
export { countLines };

/** A run of whole lines, 1-based and inclusive, and the exact text they cover. */
export interface LineSelection {
  first: number;
  last: number;
  /** the exact substring of the original, terminators included, so lines 1..N give back the text */
  text: string;
}

/**
 * Lines `first..last` (1-based, inclusive; `last` undefined = to the end), clamped to the text.
 * Returns undefined when the range holds no line of the text (it starts past the last line).
 */
export function selectLines(
  text: string,
  first: number,
  last?: number,
  spans: readonly LineSpan[] = lineSpans(text),
): LineSelection | undefined {
  const from = Math.max(1, first);
  const to = Math.min(spans.length, last ?? spans.length);
  if (from > to) return undefined;
  const startSpan = spans[from - 1]!;
  const endSpan = spans[to - 1]!;
  return { first: from, last: to, text: text.slice(startSpan.start, endSpan.next) };
}

/** The result of a grep over the lines of a text. */
export interface GrepResult {
  /** `N:line` for matching lines, `N-line` for context lines, `--` between non-adjacent groups */
  text: string;
  /** how many lines matched */
  matches: number;
  /** how many lines of the original the output shows (matches plus context) */
  shownLines: number;
}

/** Separates groups of lines that are not adjacent, as `grep -C` does. */
const GREP_GROUP_SEPARATOR = '--';

/**
 * Lines whose content (terminator excluded) matches `pattern`, each with `context` lines before
 * and after, printed like `grep -n -C context`: the 1-based line number, ":" for a match or "-"
 * for context, then the line, with `--` between non-adjacent groups when `context` > 0.
 * Only lines `within.first..within.last` are searched and shown.
 * A pattern never matches across lines. `pattern` must not carry the g or y flag (they make
 * `test` stateful); the caller builds it.
 */
export function grepLines(
  text: string,
  pattern: RegExp,
  context = 0,
  within?: { first: number; last?: number },
  spans: readonly LineSpan[] = lineSpans(text),
): GrepResult {
  if (pattern.global || pattern.sticky) {
    throw new Error(`grepLines needs a pattern without the g or y flag, got /${pattern.source}/${pattern.flags}`);
  }
  const lo = Math.max(1, within?.first ?? 1);
  const hi = Math.min(spans.length, within?.last ?? spans.length);
  const matched = new Set<number>();
  for (let n = lo; n <= hi; n++) {
    const span = spans[n - 1]!;
    if (pattern.test(text.slice(span.start, span.end))) matched.add(n);
  }
  // Each match shows [n - context, n + context]; overlapping or touching windows merge into one
  // group, and groups are printed in order with a separator between them (only when context is
  // asked for: like grep, plain matches are listed without separators).
  const out: string[] = [];
  let shownLines = 0;
  let printedUpTo = 0;
  for (const n of matched) {
    const from = Math.max(lo, n - context, printedUpTo + 1);
    const to = Math.min(hi, n + context);
    if (context > 0 && printedUpTo > 0 && from > printedUpTo + 1) out.push(GREP_GROUP_SEPARATOR);
    for (let line = from; line <= to; line++) {
      const span = spans[line - 1]!;
      out.push(`${line}${matched.has(line) ? ':' : '-'}${text.slice(span.start, span.end)}`);
      shownLines++;
    }
    printedUpTo = Math.max(printedUpTo, to);
  }
  return { text: out.join('\n'), matches: matched.size, shownLines };
}

/** A char window of a text: `[start, end)` in UTF-16 code units. */
export interface CharSlice {
  start: number;
  end: number;
  text: string;
}

/**
 * `limit` chars of `text` from `offset` (to the end when `limit` is undefined), clamped to the
 * text. A window edge never splits a surrogate pair, so every slice is valid UTF-16 and survives
 * being written as UTF-8: a start inside a pair moves back one; an end inside a pair moves back
 * one too (so paging on with `offset = end` loses nothing), unless that would leave the window
 * empty, in which case it moves forward and the window is one char over `limit`.
 */
export function sliceChars(text: string, offset: number, limit?: number): CharSlice {
  let start = Math.min(Math.max(0, offset), text.length);
  if (splitsPair(text, start)) start--;
  let end = limit === undefined ? text.length : Math.min(text.length, start + Math.max(0, limit));
  if (splitsPair(text, end)) end = end - 1 > start ? end - 1 : end + 1;
  return { start, end, text: text.slice(start, end) };
}

/**
 * Cuts `text` to at most `limit` chars at a line boundary (after the last "\n" that fits);
 * when not even one line fits, cuts inside the first line without splitting a surrogate pair.
 */
export function cutAtLimit(text: string, limit: number): { text: string; cut: boolean } {
  if (text.length <= limit) return { text, cut: false };
  const lastNewline = text.lastIndexOf('\n', limit - 1);
  if (lastNewline >= 0) return { text: text.slice(0, lastNewline + 1), cut: true };
  return { text: sliceChars(text, 0, limit).text, cut: true };
}

/** True when position `at` falls between the two halves of a surrogate pair. */
export function splitsPair(text: string, at: number): boolean {
  if (at <= 0 || at >= text.length) return false;
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}
