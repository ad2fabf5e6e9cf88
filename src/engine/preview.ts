/**
 * Previews: what the model still sees of a reduced result, under the marker header.
 *
 * A preview decides whether the agent can go on without reading the full output back, so the
 * default (`smart`) keeps what agents refer to next: the first lines (command echo, headers), lines
 * that carry errors, failures and file locations, and the tail (a test run's summary, an exit
 * status). JSON output gets a skeleton that stays valid JSON: its keys, types, first elements and
 * counts. All previews are pure functions of (text, budget): the same output always previews the
 * same way, which keeps projections byte-stable across calls.
 */
import type { PreviewKind } from './config';
import { formatInt } from './format-number';
import { countNewlines } from './lines';
import { kindPreview, type PreviewHint } from './previews';
import { CLINE_JSON, CODEX_JSON, unwrap } from './previews/envelope';
import { IMPORTANT } from './previews/select';

/** A line longer than this inside a smart preview is cut; one minified line must not eat it all. */
const MAX_IMPORTANT_LINE = 240;
/** Share of the smart budget for the head and the tail; the rest goes to important lines. */
const SMART_HEAD_SHARE = 0.3;
const SMART_TAIL_SHARE = 0.35;
/** Texts above this are not parsed for a JSON skeleton (parsing costs more than it is worth). */
const JSON_PREVIEW_MAX_CHARS = 20_000_000;

/**
 * The preview of `text` in `budget` characters. `smart` first tries the preview of the output's
 * kind (previews/: test runs, diagnostics, git, search, listings, file reads, builds), found from
 * `hint` (the call's tool and command) or the output, and falls back to the generic one.
 */
export function preview(kind: PreviewKind, text: string, budget: number, hint?: PreviewHint): string {
  if (budget <= 0) return '';
  if (text.length <= budget) return text;
  switch (kind) {
    case 'cut':
      return cut(text, budget);
    case 'head':
      return head(text, budget);
    case 'head-tail':
      return headTail(text, budget);
    case 'json':
      return jsonPreview(text, budget) ?? headTail(text, budget);
    case 'smart':
      // an agent's JSON envelope (Codex's, Cline's: previews/envelope.ts) is previewed by what it holds, not as JSON
      if (looksLikeJson(text) && !text.startsWith(CODEX_JSON) && !text.startsWith(CLINE_JSON)) return genericPreview(text, budget);
      return (
        kindPreview(text, budget, hint) ??
        (text.startsWith(CLINE_JSON) || text.startsWith(CODEX_JSON) ? unwrappedPreview(text, budget) : null) ??
        genericPreview(text, budget)
      );
  }
}

/**
 * The preview of an output no kind claims (and of every output before per-kind previews): a JSON
 * skeleton for JSON, else head, important lines and tail. The bench compares the kinds against it.
 */
export function genericPreview(text: string, budget: number): string {
  if (budget <= 0) return '';
  if (text.length <= budget) return text;
  return (looksLikeJson(text) ? jsonPreview(text, budget) : null) ?? smart(text, budget);
}

/**
 * The generic preview of what an agent's JSON envelope holds (Cline's list: its results, each
 * failure's error first; Codex's `{"output": …}`: the output, its exit code first), or null when it
 * is not such an envelope: a command's whole output is one JSON string there, which a skeleton would
 * cut to its first characters.
 */
function unwrappedPreview(text: string, budget: number): string | null {
  const { lead, body } = unwrap(text);
  if (body === text) return null;
  const leadText = lead.map((l) => l + '\n').join('');
  return leadText.length < budget / 2 ? leadText + genericPreview(body, budget - leadText.length) : null;
}

/** Cuts at `n` without splitting a surrogate pair. */
function cut(text: string, n: number): string {
  if (n <= 0) return '';
  if (n >= text.length) return text;
  const c = text.charCodeAt(n - 1);
  return text.slice(0, c >= 0xd800 && c <= 0xdbff ? n - 1 : n);
}

function cutEnd(text: string, n: number): string {
  if (n <= 0) return '';
  if (n >= text.length) return text;
  const start = text.length - n;
  const c = text.charCodeAt(start);
  return text.slice(c >= 0xdc00 && c <= 0xdfff ? start + 1 : start);
}

/** The first `budget` characters, ending at a line break when one is near the end. */
export function head(text: string, budget: number): string {
  const h = cut(text, budget);
  const nl = h.lastIndexOf('\n');
  return nl >= budget * 0.8 ? h.slice(0, nl + 1) : h;
}

function omission(lines: number, chars: number): string {
  return `\n[… ${formatInt(lines)} lines, ${formatInt(chars)} chars omitted …]\n`;
}

/** Head and tail with a line that says what was left out between them. */
export function headTail(text: string, budget: number): string {
  const sep = omission(countNewlines(text) + 1, text.length).length;
  const room = budget - sep;
  if (room < 20) return head(text, budget);
  const h = head(text, Math.floor(room * 0.6));
  let t = cutEnd(text, room - h.length);
  const nl = t.indexOf('\n');
  if (nl >= 0 && nl < t.length * 0.2) t = t.slice(nl + 1);
  const middle = text.slice(h.length, text.length - t.length);
  return h + omission(countNewlines(middle), middle.length).replace(/^\n/, h.endsWith('\n') ? '' : '\n') + t;
}

/**
 * Head, the important lines in between (in order, each at most MAX_IMPORTANT_LINE chars), and the
 * tail, with omission lines where text was skipped.
 */
export function smart(text: string, budget: number): string {
  const lines = text.split('\n');
  if (lines.length < 4) return headTail(text, budget);
  const headBudget = Math.floor(budget * SMART_HEAD_SHARE);
  const tailBudget = Math.floor(budget * SMART_TAIL_SHARE);
  // whole lines from the start and from the end
  let h = 0,
    used = 0;
  while (h < lines.length && used + lines[h]!.length + 1 <= headBudget) used += lines[h++]!.length + 1;
  let t = lines.length,
    tailUsed = 0;
  while (t > h && tailUsed + lines[t - 1]!.length + 1 <= tailBudget) tailUsed += lines[--t]!.length + 1;
  if (h === 0 && t === lines.length) return headTail(text, budget);
  // important lines from the middle, first come first kept, within what is left
  const sepCost = 48;
  let left = budget - used - tailUsed;
  const picked: number[] = [];
  for (let i = h; i < t && left > sepCost; i++) {
    const line = lines[i]!;
    if (!IMPORTANT.test(line)) continue;
    const cost = Math.min(line.length, MAX_IMPORTANT_LINE) + 1 + sepCost;
    if (cost > left) continue;
    picked.push(i);
    left -= cost;
  }
  const out: string[] = lines.slice(0, h);
  let prev = h - 1;
  const gap = (from: number, to: number) => {
    if (to - from <= 1) return;
    const skipped = lines.slice(from + 1, to);
    out.push(`[… ${formatInt(skipped.length)} lines omitted …]`);
  };
  for (const i of picked) {
    gap(prev, i);
    const line = lines[i]!;
    out.push(line.length > MAX_IMPORTANT_LINE ? cut(line, MAX_IMPORTANT_LINE) + '…' : line);
    prev = i;
  }
  gap(prev, t);
  out.push(...lines.slice(t));
  const result = out.join('\n');
  return result.length <= budget ? result : headTail(text, budget);
}

function looksLikeJson(text: string): boolean {
  const c = text.trimStart()[0];
  return c === '{' || c === '[';
}

/**
 * A skeleton of JSON output that is itself valid JSON: every key of the first levels, values
 * replaced by shortened ones, arrays cut to their first elements followed by a count of the rest.
 * Tries progressively smaller skeletons until one fits; null when the text is not JSON.
 */
export function jsonPreview(text: string, budget: number): string | null {
  if (text.length > JSON_PREVIEW_MAX_CHARS || !looksLikeJson(text)) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const shapes: Array<[depth: number, items: number, str: number, keys: number]> = [
    [6, 5, 120, 40],
    [5, 3, 80, 30],
    [4, 3, 60, 20],
    [4, 2, 40, 12],
    [3, 2, 30, 10],
    [3, 1, 24, 8],
    [2, 1, 16, 6],
    [1, 1, 12, 4],
    [1, 0, 8, 2],
    [0, 0, 8, 0],
  ];
  for (const [depth, items, str, keys] of shapes) {
    const out = JSON.stringify(skeleton(value, depth, items, str, keys), null, 1);
    if (out.length <= budget) return out;
    const compact = JSON.stringify(skeleton(value, depth, items, str, keys));
    if (compact.length <= budget) return compact;
  }
  return null;
}

function describeValue(v: unknown): string {
  if (Array.isArray(v)) return `array of ${v.length}`;
  if (v && typeof v === 'object') return `object with ${Object.keys(v).length} keys`;
  return typeof v;
}

function skeleton(v: unknown, depth: number, items: number, str: number, keys: number): unknown {
  if (typeof v === 'string') return v.length > str ? `${v.slice(0, str)}…(+${v.length - str} chars)` : v;
  if (v === null || typeof v !== 'object') return v;
  if (depth <= 0) return `…(${describeValue(v)})`;
  if (Array.isArray(v)) {
    const out = v.slice(0, items).map((x) => skeleton(x, depth - 1, items, str, keys));
    if (v.length > items) out.push(`…(+${v.length - items} more items, ${v.length} in all)`);
    return out;
  }
  const entries = Object.entries(v as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, x] of entries.slice(0, keys)) {
    // an own property even for "__proto__", which plain assignment would turn into the prototype
    Object.defineProperty(out, k, {
      value: skeleton(x, depth - 1, items, str, keys),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  if (entries.length > keys) out['…'] = `+${entries.length - keys} more keys`;
  return out;
}

/** Cuts a string so its UTF-8 encoding is at most `bytes` long, never inside a character. */
export function cutBytes(text: string, bytes: number): string {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= bytes) return text;
  let end = Math.max(0, bytes);
  // buf[end] is the first byte left out: if it continues a character, that character goes too
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString('utf8');
}
