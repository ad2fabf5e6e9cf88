/**
 * File inputs: the inputs of tool calls that wrote a file (Write, Edit, MultiEdit, apply_patch,
 * str_replace_based_edit_tool, ...) carry file content that is on disk once the call ran. In real
 * Claude Code sessions they are a quarter of the conversation's characters, sent again with every
 * later call. This module recognises such an input and renders what replaces it: a marker that keeps
 * the path (so the model still knows which file it changed) and the handle of the stored input (so
 * the exact input reads back).
 *
 * It sits in the offload stage (stages/inputs.ts runs it): the decision is taken from the call's own
 * input and how many model calls followed it, never from later items, so a cleared input stays
 * cleared the same way in every later call (stickiness). With `inputs.keepRounds` 0 the input is
 * replaced in the first request that carries it back, where it is new, uncached text anyway, so the
 * reduction costs no prompt-cache rewrite at all.
 */
import { formatInt } from './format-number';
import { countLines } from './lines';

/** Tools whose inputs hold file content the call wrote (exact names or bare names of namespaced ones). */
export const FILE_WRITE_TOOLS = [
  'Write',
  'Edit',
  'MultiEdit',
  'NotebookEdit',
  'apply_patch',
  'str_replace_based_edit_tool',
  'str_replace_editor',
  'edit_file',
  'write_file',
  'create_file',
  'replace_in_file',
  'write_to_file',
  'search_replace',
  // Gemini CLI's edit tool: file_path, old_string, new_string
  'replace',
] as const;

/** Input fields that name the written file. */
const PATH_KEYS = ['file_path', 'path', 'filePath', 'notebook_path', 'target_file', 'filename', 'absolute_path'];
/** The key our marker object carries; an input holding it is recognised and never cleared again. */
const INPUT_MARKER_KEY = 'spillway_cleared';
/** The first line of the marker that replaces a freeform (non-JSON) patch input. */
const PATCH_MARKER_PREFIX = '*** spillway: patch cleared';
/** Paths longer than this are not kept (the marker stays bounded); the handle still reads it back. */
const MAX_PATH_CHARS = 300;
/** Other fields up to this size (flags such as `replace_all`, a command name) are kept as they were. */
const MAX_KEPT_FIELD_CHARS = 80;
/** At most this many patched files are named in a freeform patch marker. */
const MAX_PATCH_FILES = 8;
/** Inputs shorter than this are left alone: a marker would save next to nothing. */
export const MIN_INPUT_CHARS = 400;

/** What a file-writing input holds, as far as the marker needs it. */
export interface FileInput {
  /** the written file(s), as the input names them */
  paths: string[];
  /** the key that named the path in a JSON input (kept in the marker object) */
  pathKey?: string;
  /** true when the input is JSON (an object, or a string holding an object) */
  json: boolean;
  /** short scalar fields of a JSON input, kept in the marker as they were */
  kept?: Record<string, unknown>;
}

/**
 * Reads a file-writing input: the value of a JSON input (object) or a freeform string (a patch).
 * Returns undefined when it is not one we can mark (no path), or is already our marker.
 */
export function readFileInput(value: unknown): FileInput | undefined {
  if (typeof value === 'string') {
    if (value.startsWith(PATCH_MARKER_PREFIX)) return undefined;
    const paths: string[] = [];
    for (const m of value.matchAll(/^\*\*\* (?:Add|Update|Delete) File: (.+)$/gm)) paths.push(m[1]!.trim());
    return paths.length ? { paths, json: false } : undefined;
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const obj = value as Record<string, unknown>;
  if (INPUT_MARKER_KEY in obj) return undefined;
  for (const k of PATH_KEYS) {
    const v = obj[k];
    if (typeof v === 'string' && v.length > 0) return { paths: [v], pathKey: k, json: true, kept: shortFields(obj, k) };
  }
  // Codex's shell-style apply_patch: {"command": ["apply_patch", "*** Begin Patch ..."]}
  const cmd = obj.command;
  if (Array.isArray(cmd) && cmd.some((c) => typeof c === 'string' && c.includes('*** Begin Patch'))) {
    const inner = readFileInput(cmd.find((c) => typeof c === 'string' && c.includes('*** Begin Patch')));
    return inner ? { paths: inner.paths, json: true } : undefined;
  }
  return undefined;
}

/** True when an input (its parsed value) is a marker this module wrote. */
export function isInputMarker(value: unknown): boolean {
  if (typeof value === 'string') return value.startsWith(PATCH_MARKER_PREFIX);
  return !!value && typeof value === 'object' && !Array.isArray(value) && INPUT_MARKER_KEY in (value as object);
}

function shortFields(obj: Record<string, unknown>, pathKey: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === pathKey || k.length > MAX_KEPT_FIELD_CHARS) continue;
    if (
      typeof v === 'boolean' ||
      typeof v === 'number' ||
      v === null ||
      (typeof v === 'string' && v.length <= MAX_KEPT_FIELD_CHARS && !v.includes('\n'))
    )
      out[k] = v;
  }
  return out;
}

/**
 * The value that replaces the input: an object with the path key and a note (JSON inputs), or a
 * short patch header (freeform patches). The caller encodes it as the input node was encoded and
 * keeps the original when the replacement would not be shorter.
 */
export function fileInputMarker(tool: string, f: FileInput, chars: number, handle: string): unknown {
  const paths = f.paths.filter((p) => p.length <= MAX_PATH_CHARS);
  const read = `spillway read ${handle}`;
  if (!f.json) {
    const shown = paths.slice(0, MAX_PATCH_FILES).map((p) => `*** File: ${p}`);
    const more = paths.length > MAX_PATCH_FILES ? [`*** and ${paths.length - MAX_PATCH_FILES} more files`] : [];
    return [
      `${PATCH_MARKER_PREFIX} by spillway (${formatInt(chars)} chars; the files hold the result; ${read} returns this input)`,
      ...shown,
      ...more,
    ].join('\n');
  }
  const note = `${tool.slice(0, 64)} input cleared by spillway: ${formatInt(chars)} chars of file content, on disk at the path; ${read} returns this input`;
  const out: Record<string, unknown> = {};
  if (f.pathKey && paths.length) out[f.pathKey] = paths[0];
  else if (paths.length) out.paths = paths.slice(0, MAX_PATCH_FILES);
  Object.assign(out, f.kept);
  out[INPUT_MARKER_KEY] = note;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Files written through the shell: `cat > path << 'EOF'` ... `EOF`

/**
 * Shell tools, whose command may write a file through a heredoc (Claude Code's Bash, mini-swe-agent's
 * and SWE-agent's bash, OpenHands' execute_bash, Codex's shell and exec_command, Gemini CLI's
 * run_shell_command). Agents without a file-writing tool write every file this way: in the corpus's
 * mini-swe-agent sessions such heredocs are 5% to 32% of what is sent.
 */
export const SHELL_TOOLS = [
  'Bash',
  'bash',
  'shell',
  'exec_command',
  'execute_bash',
  'run_shell_command',
  'terminal',
  'local_shell',
] as const;

/** The first line of what replaces a heredoc's body; a body that starts with it is ours. */
const HEREDOC_MARKER_PREFIX = '[spillway:';
/** Heredoc bodies shorter than this stay: the marker line would save next to nothing. */
const MIN_HEREDOC_CHARS = 300;

/** A heredoc operator: `<<`, `<<-`, with the delimiter bare or quoted. */
const HEREDOC = /<<(-?)[ \t]*(['"]?)([A-Za-z_][A-Za-z0-9_.-]*)\2/g;

/** One heredoc whose body a command writes to a file: the body's span in the command, and the file. */
interface HeredocWrite {
  start: number;
  end: number;
  path: string;
}

/**
 * The simple command around a heredoc operator, on its line: from the previous `&&`, `||`, `;` or
 * line start to the next one (pipes stay in, so `cat <<EOF | tee f` is one piece).
 */
function commandAround(line: string, at: number): string {
  let from = 0;
  for (const m of line.slice(0, at).matchAll(/&&|\|\||;/g)) from = m.index! + m[0].length;
  const rest = line.slice(at).search(/&&|\|\||;/);
  return line.slice(from, rest < 0 ? line.length : at + rest);
}

/** The file a heredoc fed to `cat` or `tee` goes to, or undefined when its body is not written to a file as it is. */
function writtenFile(command: string): string | undefined {
  const words = command.trim();
  // the body must reach the file unchanged: `cat` redirected to a file, or `tee` (through a pipe or not)
  const tee = /(?:^|\|)\s*tee\s+(?:-a\s+|--append\s+)?(['"]?)([^\s'"|&;<>]+)\1/.exec(words);
  if (tee) return tee[2];
  if (!/^cat\b/.test(words)) return undefined;
  const redirect = /(?:^|[^0-9&>])>>?[ \t]*(['"]?)([^\s'"|&;<>]+)\1/.exec(words);
  if (!redirect || redirect[2] === '/dev/null') return undefined;
  return redirect[2];
}

/** Every heredoc of `command` whose body is written to a file, in order. */
export function heredocWrites(command: string): HeredocWrite[] {
  const out: HeredocWrite[] = [];
  let pos = 0;
  HEREDOC.lastIndex = 0;
  for (let m = HEREDOC.exec(command); m; m = HEREDOC.exec(command)) {
    if (m.index < pos) continue;
    const lineStart = command.lastIndexOf('\n', m.index) + 1;
    const lineEnd = command.indexOf('\n', m.index);
    if (lineEnd < 0) break;
    const path = writtenFile(commandAround(command.slice(lineStart, lineEnd), m.index - lineStart));
    // the body runs to the first line that is the delimiter (indented by tabs with `<<-`)
    const delimiter = m[3]!;
    const start = lineEnd + 1;
    let end = -1;
    for (let at = start; at <= command.length;) {
      const next = command.indexOf('\n', at);
      const line = command.slice(at, next < 0 ? command.length : next);
      if ((m[1] ? line.replace(/^\t+/, '') : line).trimEnd() === delimiter) {
        end = at;
        break;
      }
      if (next < 0) break;
      at = next + 1;
    }
    if (end < 0) break; // unterminated: the shell reads to the end; leave it be
    pos = end;
    HEREDOC.lastIndex = end;
    if (path) out.push({ start, end, path });
  }
  return out;
}

/** Where a shell input keeps its command: a `command` or `cmd` string, or the script of a `["bash", "-lc", script]` array. */
function commandOf(obj: Record<string, unknown>): { key: string; index?: number; command: string } | undefined {
  for (const key of ['command', 'cmd']) {
    const v = obj[key];
    if (typeof v === 'string') return { key, command: v };
    if (Array.isArray(v)) {
      const index = v.findIndex((c) => typeof c === 'string' && c.includes('<<'));
      if (index >= 0) return { key, index, command: v[index] as string };
    }
  }
  return undefined;
}

/**
 * The input of a shell call with every heredoc body it writes to a file (of MIN_HEREDOC_CHARS or
 * more) replaced by one line naming the file, its size and the handle of the whole input; the rest
 * of the command is kept byte for byte, so the model still sees what it ran. `value` is the parsed
 * input (an object, or a JSON string holding one); undefined when nothing qualifies.
 */
export function shellWriteMarker(value: unknown, handle: string): { value: unknown; paths: string[]; chars: number } | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const obj = value as Record<string, unknown>;
  const found = commandOf(obj);
  if (!found) return undefined;
  const { command } = found;
  const writes = heredocWrites(command).filter(
    (w) => w.end - w.start >= MIN_HEREDOC_CHARS && !command.startsWith(HEREDOC_MARKER_PREFIX, w.start),
  );
  if (!writes.length) return undefined;
  let next = '';
  let at = 0;
  let chars = 0;
  for (const w of writes) {
    const body = command.slice(w.start, w.end);
    chars += body.length;
    next += command.slice(at, w.start);
    next += `${HEREDOC_MARKER_PREFIX} ${formatInt(body.length)} chars in ${formatInt(countLines(body))} lines written to ${w.path.slice(0, MAX_PATH_CHARS)}, cleared; the file holds them; spillway read ${handle} returns this command]\n`;
    at = w.end;
  }
  next += command.slice(at);
  const out: Record<string, unknown> = { ...obj };
  if (found.index === undefined) out[found.key] = next;
  else out[found.key] = (obj[found.key] as unknown[]).map((c, i) => (i === found.index ? next : c));
  return { value: out, paths: writes.map((w) => w.path), chars };
}
