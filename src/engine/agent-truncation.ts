/**
 * Outputs the agent truncated itself: a tool output over the agent's own limit reaches Spillway
 * already cut to a head and a tail, with the agent's note of what it left out in between.
 *
 * Why: the model never receives the part the agent cut, whatever Spillway does. A person reading
 * what the model was sent (the inspector) should see that the agent cut first, how much, and where
 * the agent says the whole output is, apart from what Spillway reduced. Unlike a result the agent
 * saved and previewed itself (markers.ts, `recognisePersistedOutput`, `recogniseMaskedOutput`), a
 * truncated output is still the agent's full answer to the model, often tens of thousands of
 * characters, so the stages treat it like any other result: this is what it is, not a decision.
 *
 * The wordings, as the agents write them:
 * - Gemini CLI (packages/core, `formatTruncatedToolOutput`): `Output too large. Showing first 8,000
 *   and last 32,000 characters. For full output see: <file>`, the head, `... [N characters omitted]
 *   ...`, the tail.
 * - Codex CLI (codex-rs/core/src/truncate.rs): a header among the first lines of its exec output
 *   (`Warning: truncated output (original token count: N)`, `Total output lines: N`; 0.171 writes
 *   both after its `Chunk ID`, `Wall time`, exit code and `Original token count`), and `…N chars
 *   truncated…` (or `tokens`) where it cut; releases of 2025 wrote `[... omitted X of N lines ...]`
 *   instead. Codex keeps no file of the whole.
 * - pi (its bash and read tools): the lines it kept, at the end of what it sends: `[Showing lines
 *   446-1520 of 1520 (50.0KB limit). Full output: <file>]` (bash keeps the tail), or `[Showing lines
 *   1-1603 of 2377 (50.0KB limit). Use offset=1604 to continue.]` (read keeps the head; the file read
 *   is the whole).
 * - mini-swe-agent (its default template): `<output_head>` … `</output_head>`, `<elided_chars>` `N
 *   characters elided` `</elided_chars>`, `<output_tail>` …; no file either.
 * - Qwen Code (packages/core/src/tools/truncation.ts, 0.24): `Tool output was too large and has been
 *   truncated.`, `The full output has been saved to: <file>`, two lines of advice, `Truncated part of
 *   the output:`, then a head and a tail around `... [CONTENT TRUNCATED] ...`. It says nothing of how
 *   much it cut. When it could not write the file it sends the head and tail alone, ending `[Note:
 *   Could not save full output to file]`.
 * - OpenCode (1.18): its bash tool keeps the last lines and starts `...output truncated...`, `Full
 *   output saved to: <file>`; its other tools keep a head and a tail around `... output truncated;
 *   full content saved to <file> ...`. Neither says how much. When it compacts, an old output sent to
 *   the summary ends `[Tool output truncated for compaction: omitted N chars]`, with no file.
 * - Cline (its CLI 3.0's message builder, before every request): each result over 8,000 characters
 *   keeps its head and tail around `...[truncated N chars]...` (`… chars to fit provider request
 *   budget]...` when the whole request is over its budget), inside the JSON list its tools answer
 *   with (one gap per command or file). No file either.
 * - Continue's CLI (1.5): its Bash tool keeps the last 1,000 lines (or 50,000 characters) and starts
 *   `(previous N lines truncated)`, `(previous N characters truncated)` or `(previous output
 *   truncated: N lines and M characters removed)`; its other tools keep the head and end `(N lines of
 *   file content truncated)` / `(N characters … truncated)`, its search `[Results truncated: showing
 *   100 of N matches]`. No file.
 *
 * Where it sits: read by the run's statistics (../run.ts) for the results new in a request.
 */
import { unwrap } from './previews/envelope';
import type { AgentTruncation } from './types';

const GEMINI_HEAD = /^Output too large\. Showing first [\d,]+ and last [\d,]+ characters\. For full output see: *([^\n]+?) *\n/;
const GEMINI_GAP = /\n\n\.\.\. \[([\d,]+) characters omitted\] \.\.\.\n\n/;
/** Codex's header, among the first lines of its exec output (after its chunk id, wall time, exit code). */
const CODEX_HEADER = /^(?:[^\n]*\n){0,8}(?:Total output lines: \d+|Warning: truncated output \(original token count: \d+\))\n/;
const CODEX_GAP = /…(\d+) (tokens|chars) truncated…/;
const CODEX_LINES_GAP = /\n\[\.\.\. omitted (\d+) of \d+ lines \.\.\.\]\n/;
const PI_NOTE = /\n\[Showing lines (\d+)-(\d+) of (\d+)(?: \([^)\n]*\))?\. (?:Full output: ([^\]\n]+)|Use offset=\d+ to continue\.?)\]\s*$/;
const MINI_SWE_GAP = /<\/output_head>\n<elided_chars>\n(\d+) characters elided\n<\/elided_chars>\n<output_tail>/;
const QWEN_HEAD = /^Tool output was too large and has been truncated\.\nThe full output has been saved to: ([^\n]+)\n/;
const QWEN_GAP = '\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n';
const QWEN_UNSAVED = '\n[Note: Could not save full output to file]';
const OPENCODE_BASH = /^\.\.\.output truncated\.\.\.\n\nFull output saved to: ([^\n]+)\n\n/;
const OPENCODE_GAP = /\n\n\.\.\. output truncated; full content saved to ([^\n]+?) \.\.\.(?:\n\n|$)/;
const OPENCODE_COMPACTED = /\n\[Tool output truncated for compaction: omitted (\d+) chars\]$/;
const CONTINUE_HEAD =
  /^\(previous (?:(\d+) lines truncated|(\d+) characters truncated|output truncated: (\d+) lines and \d+ characters removed)\)\n\n/;
const CONTINUE_TAIL = /\n\n\((\d+) (lines|characters)(?: of [^()\n]+)? truncated\)$/;
const CONTINUE_SEARCH = /\n\n\[Results truncated: showing (\d+) of (\d+) matches\]$/;
const CLINE_GAP = /\n\n\.\.\.\[truncated (\d+) chars(?: to fit provider request budget)?\]\.\.\.\n\n/g;

const count = (s: string) => Number(s.replace(/,/g, ''));

/** What the agent says it cut from `text` (a tool result as the agent sent it), when it says so. */
export function recogniseAgentTruncation(text: string): AgentTruncation | undefined {
  // cheap tests on the raw text first: most results are none of these
  const gemini = text.startsWith('Output too large. Showing first');
  const codex = text.includes('Total output lines: ') || text.includes('Warning: truncated output');
  const mini = text.includes('</elided_chars>');
  const pi = text.includes('[Showing lines ', Math.max(0, text.length - 600));
  const qwen = text.includes('[CONTENT TRUNCATED]');
  const opencode = text.includes('output truncated');
  const cline = text.includes('...[truncated ');
  const cont = text.startsWith('(previous ') || text.endsWith(' truncated)') || text.endsWith(' matches]');
  if (!gemini && !codex && !mini && !pi && !qwen && !opencode && !cline && !cont) return undefined;
  const body = unwrap(text).body;
  if (gemini) {
    const head = GEMINI_HEAD.exec(body);
    const gap = head && GEMINI_GAP.exec(body);
    if (head && gap) return { agent: 'gemini-cli', omitted: count(gap[1]!), unit: 'chars', file: head[1]! };
  }
  if (codex && CODEX_HEADER.test(body)) {
    const gap = CODEX_GAP.exec(body);
    if (gap) return { agent: 'codex', omitted: Number(gap[1]), unit: gap[2] === 'chars' ? 'chars' : 'tokens', file: '' };
    const lines = CODEX_LINES_GAP.exec(body);
    if (lines) return { agent: 'codex', omitted: Number(lines[1]), unit: 'lines', file: '' };
  }
  if (pi) {
    const note = PI_NOTE.exec(text.slice(-600));
    const shown = note ? Number(note[2]) - Number(note[1]) + 1 : 0;
    if (note && shown > 0 && Number(note[3]) > shown)
      return { agent: 'pi', omitted: Number(note[3]) - shown, unit: 'lines', file: note[4] ?? '' };
  }
  if (mini) {
    const gap = MINI_SWE_GAP.exec(body);
    if (gap) return { agent: 'mini-swe-agent', omitted: Number(gap[1]), unit: 'chars', file: '' };
  }
  if (qwen && body.includes(QWEN_GAP)) {
    const head = QWEN_HEAD.exec(body);
    if (head) return { agent: 'qwen-code', unit: 'chars', file: head[1]! };
    if (body.endsWith(QWEN_UNSAVED)) return { agent: 'qwen-code', unit: 'chars', file: '' };
  }
  if (opencode) {
    const found = OPENCODE_BASH.exec(body) ?? OPENCODE_GAP.exec(body);
    if (found) return { agent: 'opencode', unit: 'lines', file: found[1]! };
    const compacted = OPENCODE_COMPACTED.exec(body);
    if (compacted) return { agent: 'opencode', omitted: Number(compacted[1]), unit: 'chars', file: '' };
  }
  if (cont) {
    const head = CONTINUE_HEAD.exec(body);
    if (head)
      return head[2] !== undefined
        ? { agent: 'continue', omitted: Number(head[2]), unit: 'chars', file: '' }
        : { agent: 'continue', omitted: Number(head[1] ?? head[3]), unit: 'lines', file: '' };
    const tail = CONTINUE_TAIL.exec(body);
    if (tail) return { agent: 'continue', omitted: Number(tail[1]), unit: tail[2] === 'lines' ? 'lines' : 'chars', file: '' };
    const search = CONTINUE_SEARCH.exec(body);
    if (search && Number(search[2]) > Number(search[1]))
      return { agent: 'continue', omitted: Number(search[2]) - Number(search[1]), unit: 'lines', file: '' };
  }
  if (cline) {
    const gaps = [...body.matchAll(CLINE_GAP)];
    if (gaps.length) return { agent: 'cline', omitted: gaps.reduce((n, g) => n + Number(g[1]), 0), unit: 'chars', file: '' };
  }
  return undefined;
}
