/**
 * Envelopes: what agents wrap around a command's output before the model sees it.
 *
 * Claude Code opens a failed command's output with `Exit code N`; mini-swe-agent wraps every output
 * in `<returncode>N</returncode><output>…</output>`; Codex's shell tool answers with JSON
 * (`{"output": "…", "metadata": {"exit_code": 0, …}}`), and Cline's tools with a JSON list, one entry
 * per command, file or query (`[{"query": "…", "result": "…", "success": true}]`, with `"error"` when
 * one failed). The kind of output is in the body, and a
 * preview should spend its budget on the body: the envelope is taken off, and its exit status kept
 * as a lead line (whether a command failed is what an agent looks at first). Claude Code's
 * `<system-reminder>` after a file read is left out as well.
 */
import { countLines } from '../lines';

export interface Unwrapped {
  /** lines kept before the body's preview (the exit status), possibly none */
  lead: string[];
  body: string;
}

/** How Codex's shell tool opens its JSON envelope. */
export const CODEX_JSON = '{"output":';
/** How Cline's tools open their JSON list. */
export const CLINE_JSON = '[{"query":';

/** The JSON envelopes an agent stores a whole output in, on one line: whose they are. */
const ONE_LINE_ENVELOPES: ReadonlyArray<[prefix: string, whose: string]> = [
  [CLINE_JSON, "Cline's JSON list"],
  [CODEX_JSON, "Codex's JSON"],
];

/**
 * The output inside a one-line JSON envelope (Cline's list, Codex's `{"output": …}`) and whose
 * envelope it is, or undefined: its lines are the output's lines, those its preview shows, a
 * marker counts and `spillway read --lines` numbers.
 */
export function insideEnvelope(text: string): { body: string; whose: string } | undefined {
  const envelope = ONE_LINE_ENVELOPES.find(([prefix]) => text.startsWith(prefix));
  if (!envelope || text.includes('\n')) return undefined;
  const { body } = unwrap(text);
  return body === text ? undefined : { body, whose: envelope[1] };
}

/** The lines of an output as a marker counts them: inside its one-line JSON envelope when it has one. */
export function outputLines(text: string): number {
  return countLines(insideEnvelope(text)?.body ?? text);
}

/** JSON envelopes are only parsed up to this size; beyond it the output is previewed as it is. */
const MAX_JSON_ENVELOPE_CHARS = 2_000_000;

const CLAUDE_EXIT = /^Exit code (\d+)\r?\n/;
const MINI_SWE = /^<returncode>(-?\d+)<\/returncode>\r?\n<output>\r?\n?/;
const MINI_SWE_END = /\r?\n?<\/output>\s*$/;
/** Claude Code's note after a file read: the same words every time, never what the agent came for. */
const SYSTEM_REMINDER = /\n*<system-reminder>[\s\S]*?<\/system-reminder>\s*$/;

export function unwrap(text: string): Unwrapped {
  const u = unwrapStatus(text);
  return { lead: u.lead, body: u.body.replace(SYSTEM_REMINDER, '') };
}

function unwrapStatus(text: string): Unwrapped {
  const claude = CLAUDE_EXIT.exec(text);
  if (claude) return { lead: [`Exit code ${claude[1]}`], body: text.slice(claude[0].length) };
  const mini = MINI_SWE.exec(text);
  if (mini) return { lead: [`<returncode>${mini[1]}</returncode>`], body: text.slice(mini[0].length).replace(MINI_SWE_END, '') };
  if (text.startsWith(CLINE_JSON) && text.length <= MAX_JSON_ENVELOPE_CHARS) {
    const cline = clineEnvelope(text);
    if (cline) return cline;
  }
  if (text.startsWith(CODEX_JSON) && text.length <= MAX_JSON_ENVELOPE_CHARS) {
    try {
      const v = JSON.parse(text) as { output?: unknown; metadata?: { exit_code?: unknown } };
      if (typeof v.output === 'string') {
        const code = v.metadata?.exit_code;
        return { lead: typeof code === 'number' ? [`exit_code: ${code}`] : [], body: v.output };
      }
    } catch {
      // not JSON after all: previewed as it is
    }
  }
  return { lead: [], body: text };
}

interface ClineEntry {
  query: string;
  result: string;
  error?: unknown;
  success?: unknown;
}

/** A failed entry's error as a lead line, cut to one short line. */
const failure = (e: ClineEntry) =>
  `failed: ${String(e.error ?? 'no result')
    .replace(/\s+/g, ' ')
    .slice(0, 200)}`;

/**
 * Cline's list of results: the body is the one result, or each result under a `--- <query>` line;
 * each failed entry's error leads.
 */
function clineEnvelope(text: string): Unwrapped | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length === 0) return undefined;
  const entries = v as ClineEntry[];
  if (!entries.every((e) => e && typeof e === 'object' && typeof e.query === 'string' && typeof e.result === 'string')) return undefined;
  const lead = entries.filter((e) => e.success === false).map(failure);
  const body = entries.length === 1 ? entries[0]!.result : entries.map((e) => `--- ${e.query}\n${e.result}`).join('\n');
  return { lead, body };
}
