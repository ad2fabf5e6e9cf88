/**
 * Chunking a stored output for `extract`'s full-chunked mode (seed 002's `full-chunked`): the text
 * is cut into runs of whole lines of at most `chunkChars` characters, each chunk starting a little
 * before the previous one ended (`overlapPercent` of a chunk), so a record that straddles a cut
 * (a stack trace, a JSON object) is seen whole by at least one of the two chunks it touches. A line
 * longer than a chunk is cut by characters, with the same overlap.
 *
 * Pure: line numbers and char positions follow the store's line model (src/store/slice.ts), so the
 * answer can say which lines each chunk covered and `read --lines` gives them back exactly.
 */
import { lineSpans } from '../store/slice';

/** Characters of output per chunk: about 6,000 tokens, well inside every current model's window with room for the question and the answer. */
export const DEFAULT_CHUNK_CHARS = 24_000;
/** Overlap between neighbouring chunks, as seed 002 defaults it (0-50 accepted). */
export const DEFAULT_OVERLAP_PERCENT = 10;
export const MAX_OVERLAP_PERCENT = 50;

export interface Chunk {
  /** 1-based, inclusive: the lines this chunk holds (a line cut by characters counts in each part) */
  firstLine: number;
  lastLine: number;
  /** char offsets in the whole text: `[start, end)` */
  start: number;
  end: number;
  text: string;
}

/**
 * Cuts `text` into overlapping chunks. `lineOffset` is the number of the text's first line in the
 * output it was read from (1 for a whole output), so a chunk of a `lines` read names real lines.
 */
export function chunkText(
  text: string,
  chunkChars = DEFAULT_CHUNK_CHARS,
  overlapPercent = DEFAULT_OVERLAP_PERCENT,
  lineOffset = 1,
): Chunk[] {
  if (!Number.isSafeInteger(chunkChars) || chunkChars < 1) throw new RangeError(`chunkChars must be a whole number ≥ 1, got ${chunkChars}`);
  if (!(overlapPercent >= 0 && overlapPercent <= MAX_OVERLAP_PERCENT))
    throw new RangeError(`overlapPercent must be between 0 and ${MAX_OVERLAP_PERCENT}, got ${overlapPercent}`);
  if (text.length === 0) return [];
  const overlap = Math.floor((chunkChars * overlapPercent) / 100);
  const spans = lineSpans(text);
  const lineAt = (pos: number): number => {
    // the last line that starts at or before pos (binary search)
    let lo = 0;
    let hi = spans.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (spans[mid]!.start <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const chunks: Chunk[] = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + chunkChars);
    if (end < text.length) {
      // end on a line boundary when a whole line fits after start
      const line = lineAt(end);
      const boundary = spans[line]!.start;
      if (boundary > start) end = boundary;
    }
    chunks.push({
      firstLine: lineAt(start) + lineOffset,
      lastLine: lineAt(Math.max(start, end - 1)) + lineOffset,
      start,
      end,
      text: text.slice(start, end),
    });
    if (end >= text.length) break;
    // step back by the overlap, then to the start of that line (a whole line is shared, not half of one)
    let next = Math.max(start + 1, end - overlap);
    const lineStart = spans[lineAt(next)]!.start;
    if (overlap > 0 && lineStart > start) next = lineStart;
    start = next;
  }
  return chunks;
}
