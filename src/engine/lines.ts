/**
 * Counting lines, once for all of Spillway: the engine's markers, the store's index and `read`,
 * the read tool's answers. It lives in the engine because the engine imports nothing else of ours;
 * `src/store/slice.ts` re-exports it beside the rest of the line model (lines, grep, char windows).
 *
 * The line model: a line ends at "\n" (a "\r" before it belongs to the terminator); the last line
 * may lack one, and a trailing "\n" does not start an extra, empty line; the empty text has no lines.
 */

/** How many "\n" characters `text` holds. */
export function countNewlines(text: string): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

/** The number of lines in `text` under the line model above ("" → 0, "a" → 1, "a\n" → 1, "a\nb" → 2). */
export function countLines(text: string): number {
  if (text.length === 0) return 0;
  const newlines = countNewlines(text);
  return text.charCodeAt(text.length - 1) === 10 /* "\n" */ ? newlines : newlines + 1;
}

/**
 * "\n" as a value the minifier cannot fold back into a template literal with a real line break:
 * text built with it keeps the shipped bundles a few long lines (test/unit/bundle.test.ts).
 */
export const LINE_BREAK = [10].map((c) => String.fromCharCode(c)).join('');
