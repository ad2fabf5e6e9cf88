/**
 * `extract`: a question asked of a stored output ("the failing tests with their first error line",
 * "every URL in this JSON"), answered by a model instead of by the agent reading the output itself.
 * The agent's context gets the answer, a few lines, where reading back would have brought back the
 * whole output, or many pages of it.
 *
 * Two modes, after seed 002 (ai-agent's `tool_output`):
 * - `full-chunked`: the output (or the `lines` asked for) is cut into overlapping chunks
 *   (chunks.ts), the model is asked the question of each chunk on its own, and the answers that
 *   found something are merged by one more call (duplicates from the overlaps dropped); one chunk
 *   needs no merge.
 * - `read-grep`: when the question names something greppable (a quoted string, a path, a dotted or
 *   snake_case name, an upper-case word such as FAIL, a number, URLs), the output is grepped for it
 *   first, with context, and only the matching lines are asked about: one call instead of one per
 *   chunk, and no chance for a chunk answer to miss a needle. No match falls back to full-chunked.
 * `auto` (the default) picks read-grep when the question names something and the grep finds it.
 *
 * Every answer starts with a line naming the handle, the mode and the part read ("lines 1–1,500 of
 * 1,500 in 4 chunks"), so the agent knows what the answer covers and what to ask next. Chunks past
 * `maxChunks` are not read, and the header says so.
 *
 * Pure: the store and the model are passed in (`read`, `model`): in VS Code the user's model through
 * `vscode.lm` (src/extension/extractTool.ts); over MCP the client's, through sampling (sampling.ts).
 */
import { z } from 'zod';
import { formatInt } from '../engine/format-number';
import { LINE_BREAK as NL } from '../engine/lines';
import type { ReadOptions, ReadResult } from '../store/read';
import { chunkText, DEFAULT_CHUNK_CHARS, DEFAULT_OVERLAP_PERCENT, MAX_OVERLAP_PERCENT, type Chunk } from './chunks';

/** A model that answers one prompt with text. */
export interface ExtractModel {
  ask(prompt: { system: string; user: string }): Promise<string>;
}

const EXTRACT_MODES = ['auto', 'full-chunked', 'read-grep'] as const;

/**
 * Chunks asked at most for one question: each is a model call the user pays for, and a question
 * that needs more than this many chunks of an output is better narrowed (`lines`, or grep terms).
 */
const DEFAULT_MAX_CHUNKS = 16;
/** Lines of context kept around each grep match, so a match comes with the error line or the key it belongs to. */
const GREP_CONTEXT_LINES = 3;
/** What a chunk answers when it holds nothing the question asks for; those answers are not merged. */
const NOTHING = 'NOTHING';
/** Longest greppable term taken from a question; longer quoted text is more likely prose than a needle. */
const MAX_TERM_CHARS = 200;

/** The input, as a tool call (LM tool, MCP) gives it: checked here once. */
export const ExtractInput = z.object({
  handle: z.string({ error: 'handle is missing: pass the handle a marker names (sw_ and 24 hex digits)' }),
  question: z.string().min(1, 'question is empty: say what to extract, e.g. "the failing tests with their first error line"'),
  mode: z.enum(EXTRACT_MODES).optional(),
  lines: z.string().optional(),
  maxChunks: z.number().int().min(1).optional(),
  chunkChars: z.number().int().min(1_000).optional(),
  overlapPercent: z.number().min(0).max(MAX_OVERLAP_PERCENT).optional(),
});
export type ExtractRequest = z.infer<typeof ExtractInput>;

export interface ExtractAnswer {
  handle: string;
  mode: 'full-chunked' | 'read-grep';
  /** the header line, then the model's answer */
  text: string;
  /** what was read, as a sentence (also in the header) */
  read: string;
  /** model calls made */
  calls: number;
}

/** The JSON schema of ExtractInput, for tool declarations (LM tool, MCP). */
export const EXTRACT_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    handle: { type: 'string', description: 'The handle from a Spillway marker, e.g. sw_0123456789abcdef01234567.' },
    question: {
      type: 'string',
      description:
        'What to extract, precisely: e.g. "the failing tests with their first error line", "every URL in this JSON". ' +
        'Quote exact strings, paths or names to make the search grep for them first.',
    },
    mode: {
      type: 'string',
      enum: [...EXTRACT_MODES],
      description:
        'auto (default): grep first when the question names something greppable; full-chunked: ask of every chunk; read-grep: grep first.',
    },
    lines: { type: 'string', description: 'Only these lines of the output, "A:B" (1-based, inclusive).' },
    maxChunks: { type: 'integer', minimum: 1, description: `Most chunks asked about (default ${DEFAULT_MAX_CHUNKS}).` },
  },
  required: ['handle', 'question'],
} as const;

export const EXTRACT_DESCRIPTION =
  'Answers a question about a tool output that Spillway stored (a marker names its handle) by having a model read it ' +
  'for you, in overlapping chunks or by grepping first, and returns only the answer. Use it when you need facts from a ' +
  'large output (failing tests, errors with their locations, every URL, the values of a key) rather than the text itself; ' +
  'use spillway_read_output for exact text.';

type Reader = (handle: string, options: ReadOptions) => ReadResult;

/** Greppable terms a question names (see the module comment), as one regex source, or undefined. */
export function greppableTerms(question: string): string | undefined {
  const terms = new Set<string>();
  const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const m of question.matchAll(/"([^"]+)"|'([^']+)'|`([^`]+)`|“([^”]+)”/g)) {
    const t = (m[1] ?? m[2] ?? m[3] ?? m[4] ?? '').trim();
    if (t && t.length <= MAX_TERM_CHARS) terms.add(literal(t));
  }
  const unquoted = question.replace(/"[^"]*"|'[^']*'|`[^`]*`|“[^”]*”/g, ' ');
  // paths, dotted and snake_case names, codes with digits: a word with inner punctuation or a digit
  for (const m of unquoted.matchAll(/[A-Za-z0-9_$-]*(?:[/._:][A-Za-z0-9_$-]+)+|\b[A-Za-z]+\d+[A-Za-z0-9]*\b|\b\d{3,}\b/g))
    if (!/^[a-z]+\.$/.test(m[0])) terms.add(literal(m[0]));
  // upper-case words: FAIL, ERROR, TODO, WARN
  for (const m of unquoted.matchAll(/\b[A-Z][A-Z_]{2,}\b/g)) if (!['URL', 'URLS', 'JSON', 'HTTP'].includes(m[0])) terms.add(m[0]);
  if (/\b(urls?|links?)\b/i.test(unquoted)) terms.add('https?://');
  return terms.size ? [...terms].join('|') : undefined;
}

/** Answers `request` from the output `read` gives, with `model`. Throws a SpillwayError-like message for a bad handle or options. */
export async function extract(request: ExtractRequest, read: Reader, model: ExtractModel): Promise<ExtractAnswer> {
  const { handle, question } = request;
  const mode = request.mode ?? 'auto';
  const maxChunks = request.maxChunks ?? DEFAULT_MAX_CHUNKS;
  const scope: ReadOptions = request.lines ? { lines: request.lines } : {};
  let calls = 0;
  const ask = async (user: string) => {
    calls++;
    return (await model.ask({ system: SYSTEM, user })).trim();
  };

  const askAll = async (chunks: readonly Chunk[], part: (c: Chunk) => string) => {
    // one after the other: each is a paid call, and an MCP client may ask its user about each
    const answers: string[] = [];
    for (const c of chunks) answers.push(await ask(chunkPrompt(question, handle, part(c), c.text)));
    return answers;
  };

  let note = '';
  if (mode !== 'full-chunked') {
    const terms = greppableTerms(question);
    if (terms) {
      const grep = read(handle, { ...scope, grep: terms, ignoreCase: true, context: GREP_CONTEXT_LINES });
      if (grep.matches) {
        const chunks = chunkText(grep.text, request.chunkChars ?? DEFAULT_CHUNK_CHARS, 0);
        const used = chunks.slice(0, maxChunks);
        const answer = await merge(question, await askAll(used, () => `${grep.shown} (as grep -n prints them)`), ask);
        const left = chunks.length - used.length;
        const readSentence = `${grep.shown}${left ? `; ${left} more chunk(s) of matches not read (raise maxChunks or narrow the question)` : ''}`;
        return done(handle, 'read-grep', readSentence, answer, calls);
      }
      note = ` (grep found no line matching /${terms}/i)`;
    } else if (mode === 'read-grep') note = ' (the question names nothing greppable)';
  }
  return fullChunked();

  async function fullChunked(): Promise<ExtractAnswer> {
    const whole = read(handle, scope);
    const firstLine = whole.range?.unit === 'lines' ? whole.range.start : 1;
    const overlap = request.overlapPercent ?? DEFAULT_OVERLAP_PERCENT;
    const chunks = chunkText(whole.text, request.chunkChars ?? DEFAULT_CHUNK_CHARS, overlap, firstLine);
    if (!chunks.length) return done(handle, 'full-chunked', `${whole.shown}: nothing to read${note}`, 'The output is empty.', calls);
    const used = chunks.slice(0, maxChunks);
    const answer = await merge(question, await askAll(used, (c) => describeChunk(c, whole.totalLines)), ask);
    const last = used[used.length - 1]!;
    const span = `lines ${formatInt(used[0]!.firstLine)}–${formatInt(last.lastLine)} of ${formatInt(whole.totalLines)}`;
    const how = used.length === 1 ? 'in one chunk' : `in ${used.length} chunks overlapping by ${overlap}%`;
    const left = chunks.length - used.length;
    const rest = left
      ? `; ${left} more chunk(s) from line ${formatInt(chunks[used.length]!.firstLine)} not read (raise maxChunks or pass lines)`
      : '';
    return done(handle, 'full-chunked', `${span} ${how}${rest}${note}`, answer, calls);
  }
}

const SYSTEM =
  'You extract information from part of a tool output for a coding agent. Answer the question using only the text given; ' +
  'quote names, paths, numbers and messages exactly as they appear; be complete and brief; no preamble. ' +
  `If the text holds nothing the question asks for, answer exactly ${NOTHING}.`;

function describeChunk(c: Chunk, totalLines: number): string {
  return `lines ${formatInt(c.firstLine)}–${formatInt(c.lastLine)} of ${formatInt(totalLines)}`;
}

function chunkPrompt(question: string, handle: string, part: string, text: string): string {
  return [`Question: ${question}`, '', `This is ${part} of the stored output ${handle}:`, '<output>', text, '</output>'].join(NL);
}

/** Merges the chunks' answers: those that found nothing are dropped; one left needs no model call. */
async function merge(question: string, partial: readonly string[], ask: (user: string) => Promise<string>): Promise<string> {
  const found = partial.filter((a) => a !== '' && a.toUpperCase() !== NOTHING);
  if (found.length === 0) return 'Nothing in the part read answers the question.';
  if (found.length === 1) return found[0]!;
  const listed = found.map((a, i) => [`<answer part="${i + 1}">`, a, '</answer>'].join(NL)).join(NL);
  return ask(
    [
      `Question: ${question}`,
      '',
      'These answers were given for consecutive, overlapping parts of one output, in order. ' +
        'Merge them into one answer to the question: keep every distinct item in order, drop the duplicates the overlaps caused.',
      listed,
    ].join(NL),
  );
}

function done(handle: string, mode: ExtractAnswer['mode'], read: string, answer: string, calls: number): ExtractAnswer {
  return { handle, mode, read, calls, text: [`[spillway extract ${handle}, ${mode}: read ${read}]`, answer].join(NL) };
}
