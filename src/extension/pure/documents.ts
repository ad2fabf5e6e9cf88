/**
 * How stored outputs are named as documents, without `vscode`.
 *
 * A stored output opens as `spillway:/<handle>/<call id>/<title>`. The editor tab shows the last
 * segment, so the title reads like the output's source: the file the tool call read
 * (`sync_raw_logs.py`), else the command it ran (what it does: `$ npm test.log`, engine/names.ts), else `<tool> · <call id>`; the
 * call id and the handle sit in the folder segments, so the tab's tooltip (the path) names them, and
 * the handle is the only part the file system provider trusts. The extension picks the language
 * mode: `.json` when the output parses as JSON, `.diff` for a unified diff, the source file's own
 * extension when the tool call named a file, `.log` otherwise. The projected (marker) text of the
 * same result opens as `spillway:/<handle>/projected/<call id>/<title>`, for the diff editor.
 *
 * Claude Code's Read tool numbers every line (`    12→text`); the editor numbers lines too, so the
 * document shows the file's text at its own line numbers instead (`readToolText`), not both.
 */
import { HANDLE_PATTERN } from '../../engine/handle';
import { callInputSource, callSources, commandName, parsedRequest, sourceExtension } from '../../engine/names';
import { readRequest } from '../../engine/formats';
import { resultText } from '../../engine/formats/model';

export const SCHEME = 'spillway';
/** Longest tool or call id kept in a title; the rest is elided so tabs stay readable. */
const MAX_TITLE_PART = 60;
/** Longest list of call ids kept in the folder segment that names them (the tab's tooltip). */
const MAX_CALLS_PART = 200;
/** A marker's id in a projected document's path: `m-` and the first hex digits of its text's hash. */
const MARKER_SEGMENT = /^m-[0-9a-f]{12}$/;

export interface DocumentName {
  handle: string;
  tool?: string;
  callId?: string;
  /** every call that produced this output, when more than one did (identical content shares one handle) */
  callIds?: readonly string[];
  /** the file the tool call read, or the command it ran: the title when known */
  sourcePath?: string;
  command?: string;
  /** a file input (what the agent wrote to a file): the path's folder says so */
  input?: boolean;
  /** extension with its dot, e.g. `.json` */
  ext: string;
  projected?: boolean;
  /** which of the output's markers a projected document shows (`m-…`, markerSegment); the latest when absent */
  marker?: string;
}

export type ParsedPath = { ok: true; handle: string; projected: boolean; isDir: boolean; marker?: string } | { ok: false; reason: string };
/** The folder of the projected texts; a call id spelled the same is renamed, so the two never collide. */
const PROJECTED_SEGMENT = 'projected';

/** Makes one path segment safe and short: no slashes, backslashes, control characters or `..`. */
export function safeSegment(text: string | undefined, fallback: string, max = MAX_TITLE_PART): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must go
  let s = (text ?? '').replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim();
  if (s === '' || /^\.+$/.test(s)) s = fallback;
  if (s.length > max) s = s.slice(0, max - 1) + '…';
  return s;
}

/** The path segment of a marker (`m-` and 12 hex digits of the id), for a projected document's path. */
export function markerSegment(id: string): string | undefined {
  const s = `m-${id}`;
  return MARKER_SEGMENT.test(s) ? s : undefined;
}

/**
 * The title a stored output's tab shows: the file it came from (`sync_raw_logs.py`, with the
 * language's extension added when the content says otherwise), else the command (`$ npm test.log`),
 * else `bash · call_abc123.log`.
 */
export function documentTitle(name: Omit<DocumentName, 'handle'>): string {
  const file = name.sourcePath?.split(/[\\/]/).pop();
  if (file) return `${safeSegment(file, 'output')}${file.toLowerCase().endsWith(name.ext) ? '' : name.ext}`;
  // named by what the command does (engine/names.ts commandName): `$ go test ./pkg/export/... -v.log`
  const command = name.command ? commandName(name.command) : '';
  if (command) return `${safeSegment(`$ ${command}`, 'output')}${name.ext}`;
  return `${safeSegment(name.tool, 'tool')} · ${safeSegment(name.callId, 'output')}${name.ext}`;
}

/**
 * The folder segment that names the calls (the tab's tooltip shows it): `toolu_1`, or every call
 * that produced the output (`toolu_1, toolu_2`), `input · ` first for a file input.
 */
function callSegment(name: Omit<DocumentName, 'handle'>): string {
  const ids = name.callIds?.length ? name.callIds : name.callId ? [name.callId] : [];
  const calls = ids.length ? ids.join(', ') : undefined;
  const text = `${name.input ? 'input · ' : ''}${calls ?? ''}`;
  const s = safeSegment(text, 'output', MAX_CALLS_PART);
  return s === PROJECTED_SEGMENT || MARKER_SEGMENT.test(s) ? `_${s}` : s;
}

/** The URI path (without the scheme) of a stored output or of its projection (one of its markers). */
export function documentPath(name: DocumentName): string {
  const marker = name.projected && name.marker && MARKER_SEGMENT.test(name.marker) ? `/${name.marker}` : '';
  return `/${name.handle}${name.projected ? `/${PROJECTED_SEGMENT}${marker}` : ''}/${callSegment(name)}/${documentTitle(name)}`;
}

/**
 * Reads the handle back from a URI path. Only `/<handle>/<title>` and `/<handle>/projected/<title>`
 * are accepted, and the handle must have the exact handle shape: `..`, extra slashes, encoded
 * separators or anything else are refused here, before any store lookup.
 */
export function parseDocumentPath(path: string): ParsedPath {
  const parts = path.split('/');
  if (parts[0] !== '') return { ok: false, reason: 'the path must start with /' };
  const handle = parts[1] ?? '';
  if (!HANDLE_PATTERN.test(handle)) {
    return { ok: false, reason: `"${handle.slice(0, 80)}" is not a Spillway handle (sw_ and 24 hex digits)` };
  }
  const rest = parts.slice(2);
  if (rest.some((p) => p === '..' || p === '.')) return { ok: false, reason: 'the path may not contain . or .. segments' };
  const projected = rest[0] === PROJECTED_SEGMENT;
  let below = projected ? rest.slice(1) : rest;
  // a projected document may name one of the output's markers first (`m-` and 12 hex digits)
  const marker = projected && below.length > 0 && MARKER_SEGMENT.test(below[0]!) ? below[0] : undefined;
  if (marker) below = below.slice(1);
  // <calls>/<title> is the document; anything shorter is one of its folders
  if (below.length <= 2) return { ok: true, handle, projected, isDir: below.length < 2, ...(marker ? { marker } : {}) };
  return { ok: false, reason: 'unexpected path below the handle' };
}

/** Unified diff: a `diff --git` header, or `---`/`+++` file lines followed by a hunk header. */
function looksLikeUnifiedDiff(text: string): boolean {
  const head = text.slice(0, 20_000);
  if (/^diff --git /m.test(head)) return true;
  return /^--- \S.*\n\+\+\+ \S.*\n@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m.test(head);
}

function looksLikeJson(text: string): boolean {
  const t = text.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return false;
  try {
    JSON.parse(t);
    return true;
  } catch {
    return false;
  }
}

/**
 * Picks the document extension (and so the language mode) for a stored output: JSON if it parses,
 * a diff if it looks like one, the source file's extension when the tool call read a file, log
 * otherwise. Content wins over the path: a JSON answer about a `.ts` file is still JSON.
 */
export function documentExtension(text: string, sourcePath?: string): string {
  if (looksLikeJson(text)) return '.json';
  if (looksLikeUnifiedDiff(text)) return '.diff';
  return sourceExtension(sourcePath) ?? '.log';
}

/** Claude Code's Read numbering: the line number right-aligned, then `→`. */
const READ_LINE = /^ *(\d+)→/;
/** A read starting further down than this keeps its numbers: that many blank lines would be no help. */
const MAX_READ_OFFSET_LINES = 100_000;

/**
 * A Claude Code Read result as the file's own text at the file's own line numbers: the `N→`
 * prefixes of its leading run of consecutive numbered lines removed, and, for a read that began at
 * line N, N−1 empty lines before it so the editor's numbers are the file's. What follows the numbered
 * run (Claude Code's `<system-reminder>`) is kept. Undefined when the text is not numbered that way.
 */
export function readToolText(text: string): string | undefined {
  const lines = text.split('\n');
  const first = READ_LINE.exec(lines[0] ?? '');
  if (!first) return undefined;
  const start = Number(first[1]);
  if (start < 1 || start > MAX_READ_OFFSET_LINES) return undefined;
  let n = 0;
  for (; n < lines.length; n++) {
    const m = READ_LINE.exec(lines[n]!);
    if (!m || Number(m[1]) !== start + n) break;
    lines[n] = lines[n]!.slice(m[0].length);
  }
  return '\n'.repeat(start - 1) + lines.join('\n');
}

/**
 * The first line (0-based) of a document that holds something other than white space: a Read of a
 * file from its line 425 keeps the file's numbers with 424 blank lines before it, and opens there
 * rather than on a blank screen. 0 for a text that starts with content or holds none.
 */
export function firstContentLine(text: string): number {
  const at = text.search(/\S/);
  if (at <= 0) return 0;
  let line = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

/** Where `find` first occurs in `text` (0-based line and column), so a missed identifier opens at its line. */
export function lineHolding(text: string, find: string): { line: number; character: number } | undefined {
  const at = find ? text.indexOf(find) : -1;
  if (at < 0) return undefined;
  const before = text.slice(0, at);
  const line = before.split('\n').length - 1;
  return { line, character: at - (before.lastIndexOf('\n') + 1) };
}

/**
 * Finds, for each call id, the file path its tool call names (see callSources). `commands`, when
 * given, receives the shell command of each call that ran one.
 */
export function toolInputPaths(request: unknown, commands?: Map<string, string>): Map<string, string> {
  const found = new Map<string, string>();
  for (const [id, s] of callSources(request)) {
    if (s.path) found.set(id, s.path);
    if (s.command && commands) commands.set(id, s.command);
  }
  return found;
}

/** Input fields that hold the whole text a file-writing call wrote (Write, create, write_file). */
const CONTENT_KEYS = ['content', 'file_text', 'contents', 'text'];

/**
 * A stored file input as a person reads it: a shell command (its heredocs hold the files it wrote)
 * as the command's own text, not JSON; a Write's input as the file's text; any other JSON input
 * laid out on several lines. `path` is the file written (titles the document, picks its language).
 * Undefined when the text is not a JSON object (a freeform patch is already text).
 */
export function inputDocument(text: string): { text: string; ext: string; path?: string; command?: string } | undefined {
  // Codex's apply_patch: already a patch a person reads; its first file names it
  if (text.startsWith('*** Begin Patch')) {
    const file = /^\*\*\* (?:Update|Add|Delete) File: (.+)$/m.exec(text)?.[1]?.trim();
    return { text: text.endsWith('\n') ? text : `${text}\n`, ext: '.diff', ...(file ? { path: file } : {}) };
  }
  if (!text.trimStart().startsWith('{')) return undefined;
  let obj: Record<string, unknown>;
  try {
    const v = JSON.parse(text) as unknown;
    if (!v || typeof v !== 'object' || Array.isArray(v)) return undefined;
    obj = v as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const source = callInputSource(obj);
  if (source?.command !== undefined && source.writes?.length) {
    const raw = obj.command ?? obj.cmd;
    const command = typeof raw === 'string' ? raw : Array.isArray(raw) ? String(raw.filter((c) => typeof c === 'string').pop()) : '';
    // one file written: its language (the body is most of the command); several: the shell's
    const ext = (source.writes.length === 1 && sourceExtension(source.writes[0])) || '.sh';
    return { text: command.endsWith('\n') ? command : `${command}\n`, ext, path: source.writes[0]!, command: command.split('\n')[0]! };
  }
  for (const k of CONTENT_KEYS) {
    const v = obj[k];
    if (typeof v === 'string' && source?.path) return { text: v, ext: sourceExtension(source.path) ?? '.log', path: source.path };
  }
  // an edit (Claude Code's Edit and MultiEdit, Gemini CLI's replace): the change as a diff of what it replaced
  const edits = Array.isArray(obj.edits) ? (obj.edits as unknown[]) : [obj];
  const pairs = edits.filter(
    (e): e is { old_string: string; new_string: string } =>
      !!e &&
      typeof e === 'object' &&
      typeof (e as Record<string, unknown>).old_string === 'string' &&
      typeof (e as Record<string, unknown>).new_string === 'string',
  );
  if (pairs.length && pairs.length === edits.length) {
    const name = source?.path ?? 'file';
    const lines = (t: string, sign: string) =>
      t === ''
        ? []
        : t
            .replace(/\n$/, '')
            .split('\n')
            .map((l) => `${sign}${l}`);
    const hunks = pairs.map((e) => ['@@ edit @@', ...lines(e.old_string, '-'), ...lines(e.new_string, '+')].join('\n'));
    return {
      text: [`--- ${name}`, `+++ ${name}`, ...hunks].join('\n') + '\n',
      ext: '.diff',
      ...(source?.path ? { path: source.path } : {}),
    };
  }
  return { text: JSON.stringify(obj, null, 2) + '\n', ext: '.json', ...(source?.path ? { path: source.path } : {}) };
}

/**
 * The marker text that replaced a result in a projected request: the first string in it that
 * contains the handle. Works for every wire format because a marker always carries its handle.
 */
export function markerTextFor(projected: unknown, handle: string): string | undefined {
  return markerTextsFor(projected, handle, 1)[0];
}

/**
 * The text a tool result was sent as, found by its call id in a request (parsed or as JSON text),
 * read as the engine reads it in any wire format (its text parts joined). Undefined when no result
 * of the request has that call id, or the request is not one the engine reads.
 */
export function resultTextFor(request: unknown, callId: string): string | undefined {
  try {
    const req = readRequest(typeof request === 'string' ? request : JSON.stringify(request));
    const r = req.results.find((x) => x.callId === callId);
    return r && resultText(req, r);
  } catch {
    return undefined;
  }
}

/**
 * Every string of a projected request that holds the handle, in the request's order: the markers of
 * each result (or input) that shares it (identical content shares one handle), first to last.
 */
export function markerTextsFor(projected: unknown, handle: string, most = Number.MAX_SAFE_INTEGER): string[] {
  const out: string[] = [];
  const root = parsedRequest(projected);
  if (root === undefined) return out;
  const stack: unknown[] = [root];
  while (stack.length > 0 && out.length < most) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (node.includes(handle)) out.push(node);
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push(node[i]);
    } else if (node && typeof node === 'object') {
      const values = Object.values(node as Record<string, unknown>);
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i]);
    }
  }
  return out;
}
