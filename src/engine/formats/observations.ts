/**
 * Observations: a command's output carried in a user message.
 *
 * Text-mode agents (mini-swe-agent's text mode, SWE-agent's thought-action mode and others built the
 * same way) have no tool calls: the model writes its action in a fenced code block, the agent runs it
 * and sends the output back as the next user message, wrapped in the agent's template. Left alone,
 * an engine that reduces tool results sees none in such a session, and an 868,167-char output goes
 * to the model whole. This module finds those messages and, inside each, the span that holds the
 * command's output (the body), so the stages can reduce it like a tool result while the template
 * around it (`<returncode>1</returncode>`, SWE-agent's `(Open file: …)` prompt) stays as it was.
 *
 * Who decides that a user message is an observation:
 * - a transcript reader that knows the agent (replay) passes explicit marks: item and tool;
 * - live traffic (proxy, extension API, `spillway project`) uses the `observations` setting: `auto`
 *   takes a user message as an observation only when the message before it is an assistant message
 *   with an action (a fenced code block) and no tool calls, and the user message's text matches one
 *   of the known agents' observation templates (below); `off` never does.
 * A real user's prompt is not an observation by position (it does not answer an action) or by
 * template (it does not start like an agent's observation), so it is never reduced.
 *
 * Bodies are found on the raw JSON text: only a bounded head and tail of the string are decoded,
 * and the body is kept as a raw span that starts and ends on escape boundaries, so a 10 MB
 * observation costs no more to recognise than a short one and the patch replaces exactly the body's
 * bytes: everything else in the message, and in the request, stays byte for byte.
 */
import type { JString } from '../json';

/** How the engine decides which user messages are observations, when no reader marked them. */
export const OBSERVATION_MODES = ['auto', 'off'] as const;
export type ObservationMode = (typeof OBSERVATION_MODES)[number];

/** A reader's mark: the user message at `item` is the output of an action of tool `tool`. */
export interface ObservationMark {
  item: number;
  tool: string;
}

/** What `readRequest` is told about observations: a mode, or the marks a transcript reader made. */
export type ObservationOption = ObservationMode | readonly ObservationMark[];

/** The body of an observation: a raw span of the JSON text, inside one string, on escape boundaries. */
export interface ObservationSpan {
  /** raw offsets in the request text (inside the string's quotes) */
  start: number;
  end: number;
  /** the string node that holds it */
  string: JString;
  /** the template that placed it, or 'whole' when the body is the whole text (a reader's mark without a known template) */
  template: ObservationTemplate | 'whole';
}

export type ObservationTemplate = 'mini-swe-agent' | 'mini-swe-agent-timeout' | 'swe-agent' | 'swe-agent-prompt';

/** The tool name an observation of each agent is reduced under, when the template decides it. */
export const MINI_SWE_AGENT_TOOL = 'bash';

/** How much of a string's start and end is decoded to recognise a template (templates are short). */
const EDGE_CHARS = 4096;

const BACKSLASH = 92,
  LOWER_U = 117;

/** True when the backslash at `i` starts an escape (an even number of backslashes precede it). */
function escapeStartsAt(t: string, i: number, lo: number): boolean {
  if (t.charCodeAt(i) !== BACKSLASH) return false;
  let n = 0;
  for (let k = i - 1; k >= lo && t.charCodeAt(k) === BACKSLASH; k--) n++;
  return n % 2 === 0;
}

/** The nearest offset at or before `p` that does not split an escape sequence. */
export function safeCut(t: string, p: number, lo: number): number {
  for (let back = 1; back <= 5 && p - back >= lo; back++) {
    const i = p - back;
    if (escapeStartsAt(t, i, lo)) {
      const len = t.charCodeAt(i + 1) === LOWER_U ? 6 : 2;
      if (i + len > p) return i;
    }
  }
  return p;
}

/** Decodes the raw JSON string content `t[from, to)` (both on escape boundaries). */
export function decodeRaw(t: string, from: number, to: number, escaped: boolean): string {
  const raw = t.slice(from, to);
  return escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
}

/** The raw offset reached after decoding `count` UTF-16 units from raw offset `from`. */
export function rawAdvance(t: string, from: number, count: number): number {
  let r = from;
  for (let k = 0; k < count; k++) {
    if (t.charCodeAt(r) === BACKSLASH) r += t.charCodeAt(r + 1) === LOWER_U ? 6 : 2;
    else r++;
  }
  return r;
}

/** The decoded start and end of a string, with where each piece starts in the raw text. */
interface Edges {
  head: string;
  /** raw offset where the tail piece starts; the head piece starts at the string's content */
  tailStart: number;
  tail: string;
  /** the whole string fits in the head (tail === head, tailStart === content start) */
  whole: boolean;
}

function edges(t: string, s: JString): Edges {
  const lo = s.start + 1,
    hi = s.end - 1;
  if (hi - lo <= EDGE_CHARS * 2) {
    const all = decodeRaw(t, lo, hi, s.escaped);
    return { head: all, tailStart: lo, tail: all, whole: true };
  }
  const headEnd = safeCut(t, lo + EDGE_CHARS, lo);
  const tailStart = safeCut(t, hi - EDGE_CHARS, lo);
  return { head: decodeRaw(t, lo, headEnd, s.escaped), tailStart, tail: decodeRaw(t, tailStart, hi, s.escaped), whole: false };
}

/** A body found in decoded head/tail coordinates. */
interface Found {
  template: ObservationTemplate;
  headFrom: number;
  tailTo: number;
}

// mini-swe-agent (1.x `environment.action_observation_template`, 2.x `model.…`): an optional
// <exception>, then <returncode>N</returncode>, then either <output>…</output> (the body is inside)
// or, over 10,000 chars, a <warning> followed by <output_head>, <elided_chars> and <output_tail>
// (the body runs from inside <output_head> to inside <output_tail>).
const MINI_HEAD = /^(?:<exception>[\s\S]*?<\/exception>\s*)?<returncode>-?\d+<\/returncode>\s*/;
// mini-swe-agent's timeout_template: the command, then the same two shapes, then a closing line
const MINI_TIMEOUT_HEAD =
  /^The last command <command>[\s\S]*?<\/command> timed out and has been killed\.\s*The output of the command was:\s*/;
// SWE-agent 1.x next_step_template ("Observation: {{observation}}", config/default.yaml "OBSERVATION:\n{{observation}}")
const SWE_HEAD = /^(?:OBSERVATION|Observation):[ \t]*\n?/;
// SWE-agent 0.x and thought_action configs: "{{observation}}\n(Open file: …)\n(Current directory: …)\nbash-$"
const SWE_PROMPT_TAIL = /\n?\(Open file: [^\n]*\)\n\(Current directory: [^\n]*\)\n?bash-\$\s*$/;

/** The body of a mini-swe-agent observation after its head: inside <output>, or the long-output shape. */
function miniBody(e: Edges, after: number, template: ObservationTemplate): Found | undefined {
  const rest = e.head.slice(after);
  if (rest.startsWith('<output>')) {
    const from = after + '<output>'.length + (rest.startsWith('<output>\n') ? 1 : 0);
    const close = e.tail.lastIndexOf('</output>');
    if (close < 0) return undefined;
    // the body must not end before it starts (a head and a tail that overlap)
    if (e.whole && close < from) return undefined;
    return { template, headFrom: from, tailTo: close };
  }
  if (rest.startsWith('<warning>') || rest.startsWith('<output_head>')) {
    // the warning stays (it tells the model the output was long); from the head's first line to the
    // tail's last is the body, so a projection still reads as this template and is recognised again
    const open = rest.indexOf('<output_head>');
    const close = e.tail.lastIndexOf('</output_tail>');
    if (open < 0 || close < 0) return undefined;
    let from = after + open + '<output_head>'.length;
    if (e.head.charCodeAt(from) === 10) from++;
    const to = e.tail.charCodeAt(close - 1) === 10 ? close - 1 : close;
    if (e.whole && to < from) return undefined;
    return { template, headFrom: from, tailTo: to };
  }
  return undefined;
}

/** Which template a (decoded) observation text matches, and where its body is. */
function findTemplate(e: Edges): Found | undefined {
  const mini = MINI_HEAD.exec(e.head);
  if (mini) return miniBody(e, mini[0].length, 'mini-swe-agent');
  const timeout = MINI_TIMEOUT_HEAD.exec(e.head);
  if (timeout) return miniBody(e, timeout[0].length, 'mini-swe-agent-timeout');
  const swe = SWE_HEAD.exec(e.head);
  if (swe) {
    const tailTo = e.tail.length - (SWE_PROMPT_TAIL.exec(e.tail)?.[0].length ?? 0);
    return { template: 'swe-agent', headFrom: swe[0].length, tailTo };
  }
  const prompt = SWE_PROMPT_TAIL.exec(e.tail);
  if (prompt) return { template: 'swe-agent-prompt', headFrom: 0, tailTo: prompt.index };
  return undefined;
}

/**
 * Where the command output is in the string `s`, by the known templates; undefined when none
 * matches. With `whole`, a string that matches no template is all body (a reader said it is an
 * observation).
 */
export function observationSpan(t: string, s: JString, whole = false): ObservationSpan | undefined {
  const lo = s.start + 1,
    hi = s.end - 1;
  const e = edges(t, s);
  const f = findTemplate(e);
  if (!f) return whole ? { start: lo, end: hi, string: s, template: 'whole' } : undefined;
  const start = rawAdvance(t, lo, f.headFrom);
  const end = rawAdvance(t, e.tailStart, f.tailTo);
  if (end < start) return whole ? { start: lo, end: hi, string: s, template: 'whole' } : undefined;
  return { start, end, string: s, template: f.template };
}

/** The last fenced code block of an assistant's text: the action a text-mode agent runs. */
export function actionOf(text: string): { lang: string; command: string } | undefined {
  const re = /```([\w.+-]*)[ \t]*\r?\n([\s\S]*?)```/g;
  let last: RegExpExecArray | null = null;
  for (let m = re.exec(text); m; m = re.exec(text)) last = m;
  if (!last) return undefined;
  return { lang: last[1] ?? '', command: last[2]!.replace(/\s+$/, '') };
}

/**
 * The tool an observation is reduced under: `bash` for mini-swe-agent (every action is a shell
 * command); for SWE-agent the first word of the command (`open`, `edit`, `python3`, `submit`: its
 * own commands get their own caps), or `bash` when there is none.
 */
export function toolForObservation(template: ObservationTemplate | 'whole', command: string | undefined): string {
  if (template === 'mini-swe-agent' || template === 'mini-swe-agent-timeout') return MINI_SWE_AGENT_TOOL;
  return firstWord(command ?? '') || MINI_SWE_AGENT_TOOL;
}

/** The first word of a command (`open`, `python3`), or '' for none. */
export function firstWord(command: string): string {
  return command.trim().split(/\s+/)[0] ?? '';
}

/** The call id of the observation in item `item`: stable as the conversation grows. */
export function observationCallId(item: number): string {
  return `obs-${item}`;
}
