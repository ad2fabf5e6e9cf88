/**
 * Repeats: an output that is mostly the lines of an earlier one, written as that earlier output's
 * line ranges plus the lines that differ. Agents re-read a file after editing it (pi's edit tool
 * answers with one line, so pi reads the file again), re-run a listing, or read part of a file they
 * read whole; most of the second output is already in the context, verbatim.
 *
 * `encodeRepeat` walks the new output line by line: a run of lines found in order in the earlier
 * output becomes one line `[= lines A–B of that output]`, any other line is written as it is. Lines
 * numbered by the read tool (Claude Code's `   12→`, `cat -n`'s tab) are matched without their
 * number, since an edit shifts every number after it; the range line then says where the run starts
 * here. Nothing is left out: the earlier output and the ranges give back every line, in order, and
 * the whole text is stored under the reference's handle.
 *
 * Pure text: the offload stage (stages/offload.ts) decides when a repeat is worth sending.
 */

/** A run of fewer lines than this is written out: a range line would not be much shorter. */
const MIN_RUN_LINES = 3;
/** ...unless it holds at least this many characters. */
const MIN_RUN_CHARS = 160;
/** Positions of one line remembered in the earlier output (blank lines and braces recur). */
const MAX_POSITIONS = 8;
/** Lines numbered by a read tool: spaces, the number, then `→` (Claude Code) or a tab (`cat -n`). */
const NUMBERED = /^ *(\d+)(→|\t)/;

export interface Repeat {
  /** the new output as ranges of the earlier one and the lines that differ */
  body: string;
  /** lines of the new output written as they are */
  literalLines: number;
}

interface Lines {
  lines: string[];
  /** each line as matched: without its number when the output is numbered */
  keys: string[];
  numbered: boolean;
}

function splitLines(text: string, strip: boolean): Lines {
  const lines = text.split('\n');
  const keys = strip ? lines.map((l) => l.replace(NUMBERED, '$2')) : lines;
  return { lines, keys, numbered: strip };
}

/** A line without the number a read tool printed before it. */
export function withoutLineNumber(line: string): string {
  return line.replace(NUMBERED, '');
}

/** Whether nearly every non-empty line of `text` starts with a line number (as read tools print them). */
function isNumbered(text: string): boolean {
  let lines = 0,
    numbered = 0;
  for (const l of text.split('\n', 400)) {
    if (!l) continue;
    lines++;
    if (NUMBERED.test(l)) numbered++;
  }
  return lines >= 3 && numbered >= 0.9 * lines;
}

/**
 * The new output `text` written against `earlier`, or undefined when fewer than `minCopied` of its
 * characters are found there in runs.
 */
export function encodeRepeat(earlier: string, text: string, minCopied: number): Repeat | undefined {
  const strip = isNumbered(text) && isNumbered(earlier);
  const a = splitLines(earlier, strip);
  const b = splitLines(text, strip);
  const at = new Map<string, number[]>();
  a.keys.forEach((k, p) => {
    const list = at.get(k);
    if (!list) at.set(k, [p]);
    else if (list.length < MAX_POSITIONS) list.push(p);
  });
  const out: string[] = [];
  let copied = 0,
    literal = 0,
    next = -1; // the earlier line after the last run: tried first, as runs usually continue there
  for (let k = 0; k < b.keys.length;) {
    let best = 0,
      from = -1;
    const tryAt = (p: number) => {
      let n = 0;
      while (k + n < b.keys.length && p + n < a.keys.length && b.keys[k + n] === a.keys[p + n]) n++;
      if (n > best) {
        best = n;
        from = p;
      }
    };
    if (next >= 0 && next < a.keys.length) tryAt(next);
    for (const p of at.get(b.keys[k]!) ?? []) if (p !== next) tryAt(p);
    let chars = 0;
    for (let n = 0; n < best; n++) chars += b.lines[k + n]!.length + 1;
    if (best > 0 && (best >= MIN_RUN_LINES || chars >= MIN_RUN_CHARS)) {
      out.push(rangeLine(a, from, best, b, k));
      copied += chars;
      k += best;
      next = from + best;
    } else {
      out.push(b.lines[k]!);
      literal++;
      k++;
    }
  }
  if (copied < minCopied) return undefined;
  return { body: out.join('\n'), literalLines: literal };
}

/**
 * `[= lines 12–40 of that output]`: the run's first and last lines as the earlier output numbers them
 * (its own numbers when a read tool numbered it, else counted from 1), and where the run starts here
 * when this output numbers it differently.
 */
function rangeLine(a: Lines, from: number, n: number, b: Lines, k: number): string {
  const number = (l: Lines, i: number) => (l.numbered ? Number(NUMBERED.exec(l.lines[i]!)?.[1] ?? i + 1) : i + 1);
  const first = number(a, from),
    last = number(a, from + n - 1);
  const range = n === 1 ? `line ${first}` : `lines ${first}–${last}`;
  const here = number(b, k);
  return b.numbered && here !== first ? `[= ${range} of that output, numbered from ${here} here]` : `[= ${range} of that output]`;
}
