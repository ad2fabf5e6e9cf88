/**
 * What a tool call's input says about its output: the command line of a shell tool (`command`,
 * `cmd`; Codex's `["bash", "-lc", "…"]` as its last element; the last of Cline's `commands`) or a
 * file tool's sub-command.
 *
 * Why: the same words (`pytest`, `git diff`, `rg`) name the kind of output more surely than any
 * pattern in the output; input shapes differ per agent, so they are read here in one place.
 */
import { observationCommand, type ParsedRequest, type ToolResult } from '../formats';
import { decodeString, get, toValue } from '../json';
import type { PreviewHint } from './kind';

/** A call input longer than this (as JSON text) is not read for a hint: it writes a file, it runs no command. */
const MAX_HINT_INPUT_CHARS = 16_000;
/** The fields of an input object that can name a command. */
const COMMAND_FIELDS = ['command', 'cmd', 'script', 'commands'] as const;

/** A command longer than this is not read for a hint (a heredoc that writes a file says nothing of its output). */
const MAX_HINT_COMMAND = 4_000;

function commandOf(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.length && v.every((x) => typeof x === 'string')) {
    const words = v as string[];
    // ["bash", "-lc", "cmd"]: the script; otherwise the words themselves
    return words.length >= 3 && /^-\w*c$/.test(words[words.length - 2]!) ? words[words.length - 1] : words.join(' ');
  }
  return undefined;
}

/** Cline's `run_commands` takes a list of whole commands: the last one's output ends the result. */
function lastCommand(v: unknown): string | undefined {
  return Array.isArray(v) && v.length > 0 && typeof v[v.length - 1] === 'string' ? (v[v.length - 1] as string) : undefined;
}

/** The hint of a call to `tool` with `input` (a plain value: an object, or the JSON text of one). */
function hintFromInput(tool: string, input: unknown): PreviewHint {
  let v = input;
  if (typeof v === 'string' && v.length <= MAX_HINT_COMMAND * 4 && v.trimStart().startsWith('{')) {
    try {
      v = JSON.parse(v) as unknown;
    } catch {
      // not JSON: the text itself is the command
    }
  }
  let command: string | undefined;
  if (typeof v === 'string') command = v;
  else if (v && typeof v === 'object' && !Array.isArray(v)) {
    const o = v as Record<string, unknown>;
    command = commandOf(o.command) ?? commandOf(o.cmd) ?? commandOf(o.script) ?? lastCommand(o.commands);
  }
  return command !== undefined && command.length <= MAX_HINT_COMMAND ? { tool, command } : { tool };
}

/**
 * The hint of result `r` of a parsed request: its call's input, or for an observation (text-mode
 * agents) the command of the action before it. Only the command fields are decoded, never a whole
 * input (a Write call's input can be a whole file).
 */
export function hintForResult(req: ParsedRequest, r: ToolResult): PreviewHint {
  if (r.observation) return hintFromInput(r.tool, { command: observationCommand(req, r) });
  const input = r.call?.input;
  if (!input || input.end - input.start > MAX_HINT_INPUT_CHARS) return { tool: r.tool };
  if (input.kind === 'string') return hintFromInput(r.tool, decodeString(req.text, input));
  const fields: Record<string, unknown> = {};
  for (const f of COMMAND_FIELDS) {
    const v = get(input, f);
    if (v) fields[f] = toValue(req.text, v);
  }
  return hintFromInput(r.tool, fields);
}
