/**
 * Line selection: the one way every per-kind preview is put together.
 *
 * Why: a kind knows which lines of an output matter (a failure and its location, a diagnostic, a
 * hunk header, a definition) and in what order of importance; it should not also have to know how
 * to fit them into a budget. Here the lines a kind asks for are taken in its order of priority,
 * each only if the whole preview still fits, and written out in the order of the output with a
 * line saying how many were left out between them. The length is computed exactly as lines are
 * added, so a preview never exceeds its budget, and the result is a pure function of its inputs
 * (the same output always previews the same way: projections stay byte-stable across calls).
 */
import { formatInt } from '../format-number';

/** A line longer than this is cut in a preview: one minified line must not eat the whole budget. */
const MAX_PREVIEW_LINE = 240;

/** Lines worth keeping in any preview: errors, failures, stack frames and file locations. */
export const IMPORTANT =
  /error|fail|exception|traceback|panic|fatal|warning|denied|not found|cannot|undefined|assert|expected|✗|✘|\bE\s{2,}|^\s*at\s|\.\w{1,5}:\d+|line \d+/i;

/** The line written where lines were left out (the generic preview writes the same). */
function gapLine(count: number): string {
  return `[… ${formatInt(count)} lines omitted …]`;
}

/** Cost of the gap line for `count` skipped lines, with its newline; nothing when none are skipped. */
function gapCost(count: number): number {
  return count <= 0 ? 0 : gapLine(count).length + 1;
}

/** A line as it appears in a preview: cut at MAX_PREVIEW_LINE (never inside a surrogate pair). */
function clipLine(line: string, max = MAX_PREVIEW_LINE): string {
  if (line.length <= max) return line;
  const c = line.charCodeAt(max - 1);
  return line.slice(0, c >= 0xd800 && c <= 0xdbff ? max - 1 : max) + '…';
}

/**
 * The preview made of `lines[i]` for the indices in `wanted` (priority order, duplicates and out of
 * range indices ignored), taking each only while the whole text stays within `budget`, preceded by
 * `lead` (lines the kind wrote itself, e.g. a summary of counts; dropped from the end if they do not
 * fit). Null when not a single wanted line fits.
 */
export function selectLines(
  lines: readonly string[],
  wanted: Iterable<number>,
  budget: number,
  lead: readonly string[] = [],
): string | null {
  const shown = new Map<number, string>();
  // kept indices in order, with the running length of the body (lines, newlines and gap lines)
  const kept: number[] = [];
  const n = lines.length;
  const leadLines: string[] = [];
  let used = 0;
  for (const l of lead) {
    const c = clipLine(l, Math.max(MAX_PREVIEW_LINE, Math.floor(budget / 2) - 1));
    if (used + c.length + 1 > budget / 2) break;
    leadLines.push(c);
    used += c.length + 1;
  }
  // the body starts as one gap over every line
  let body = gapCost(n);
  for (const i of wanted) {
    if (!Number.isInteger(i) || i < 0 || i >= n || shown.has(i)) continue;
    const text = clipLine(lines[i]!);
    // neighbours among the kept lines: p before i, q after i (-1 and n at the ends)
    let lo = 0,
      hi = kept.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (kept[mid]! < i) lo = mid + 1;
      else hi = mid;
    }
    const p = lo > 0 ? kept[lo - 1]! : -1;
    const q = lo < kept.length ? kept[lo]! : n;
    const delta = text.length + 1 + gapCost(i - p - 1) + gapCost(q - i - 1) - gapCost(q - p - 1);
    // the last newline of the body is not written: the whole is body - 1
    if (used + body + delta - 1 > budget) continue;
    kept.splice(lo, 0, i);
    shown.set(i, text);
    body += delta;
  }
  if (kept.length === 0) return null;
  const out: string[] = [...leadLines];
  let prev = -1;
  for (const i of kept) {
    if (i - prev > 1) out.push(gapLine(i - prev - 1));
    out.push(shown.get(i)!);
    prev = i;
  }
  if (n - prev > 1) out.push(gapLine(n - prev - 1));
  return out.join('\n');
}

/** Indices 0..count-1 of the first lines and the last ones: the parts of an output most often read. */
export function headIndices(n: number, count: number): number[] {
  return Array.from({ length: Math.min(n, count) }, (_, i) => i);
}

export function tailIndices(n: number, count: number): number[] {
  return Array.from({ length: Math.min(n, count) }, (_, i) => n - 1 - i);
}

/** Indices of the lines matching `re`, in order. */
export function matching(lines: readonly string[], re: RegExp): number[] {
  const out: number[] = [];
  for (let i = 0; i < lines.length; i++) if (re.test(lines[i]!)) out.push(i);
  return out;
}

/**
 * Groups of line indices taken round robin: the first of every group, then the second of every
 * group, and so on (the first hit of every file before the second hit of any).
 */
export function roundRobin(groups: readonly (readonly number[])[]): number[] {
  const out: number[] = [];
  const deepest = groups.reduce((a, g) => Math.max(a, g.length), 0);
  for (let k = 0; k < deepest; k++) for (const g of groups) if (k < g.length) out.push(g[k]!);
  return out;
}
