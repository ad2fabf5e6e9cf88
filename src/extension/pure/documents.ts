/**
 * How stored outputs are named as documents, without `vscode`.
 *
 * A stored output opens as `spillway:/<handle>/<call id>/<title>`. The editor tab shows the last
 * segment, so the title reads like the output's source: the file the tool call read
 * (`sync_raw_logs.py`), else the command it ran (`$ npm test.log`), else `<tool> · <call id>`; the
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

export const SCHEME = 'spillway';
/** Longest tool or call id kept in a title; the rest is elided so tabs stay readable. */
const MAX_TITLE_PART = 60;

export interface DocumentName {
  handle: string;
  tool?: string;
  callId?: string;
  /** the file the tool call read, or the command it ran: the title when known */
  sourcePath?: string;
  command?: string;
  /** extension with its dot, e.g. `.json` */
  ext: string;
  projected?: boolean;
}

export type ParsedPath = { ok: true; handle: string; projected: boolean; isDir: boolean } | { ok: false; reason: string };
/** The folder of the projected texts; a call id spelled the same is renamed, so the two never collide. */
const PROJECTED_SEGMENT = 'projected';

/** Makes one path segment safe and short: no slashes, backslashes, control characters or `..`. */
export function safeSegment(text: string | undefined, fallback: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must go
  let s = (text ?? '').replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim();
  if (s === '' || /^\.+$/.test(s)) s = fallback;
  if (s.length > MAX_TITLE_PART) s = s.slice(0, MAX_TITLE_PART - 1) + '…';
  return s;
}

/**
 * The title a stored output's tab shows: the file it came from (`sync_raw_logs.py`, with the
 * language's extension added when the content says otherwise), else the command (`$ npm test.log`),
 * else `bash · call_abc123.log`.
 */
export function documentTitle(name: Omit<DocumentName, 'handle'>): string {
  const file = name.sourcePath?.split(/[\\/]/).pop();
  if (file) return `${safeSegment(file, 'output')}${file.toLowerCase().endsWith(name.ext) ? '' : name.ext}`;
  const command = name.command?.trim().split('\n')[0]?.trim();
  if (command) return `${safeSegment(`$ ${command}`, 'output')}${name.ext}`;
  return `${safeSegment(name.tool, 'tool')} · ${safeSegment(name.callId, 'output')}${name.ext}`;
}

function callSegment(callId: string | undefined): string {
  const s = safeSegment(callId, 'output');
  return s === PROJECTED_SEGMENT ? `_${s}` : s;
}

/** The URI path (without the scheme) of a stored output or of its projection. */
export function documentPath(name: DocumentName): string {
  return `/${name.handle}${name.projected ? `/${PROJECTED_SEGMENT}` : ''}/${callSegment(name.callId)}/${documentTitle(name)}`;
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
  const below = projected ? rest.slice(1) : rest;
  // <call id>/<title> is the document; anything shorter is one of its folders
  if (below.length <= 2) return { ok: true, handle, projected, isDir: below.length < 2 };
  return { ok: false, reason: 'unexpected path below the handle' };
}

/** Source extensions the editor maps to languages; a tool-input path with another extension is ignored. */
const SOURCE_EXTENSIONS = new Set([
  'ts',
  'tsx',
  'js',
  'jsx',
  'mjs',
  'cjs',
  'json',
  'jsonc',
  'py',
  'rs',
  'go',
  'java',
  'kt',
  'c',
  'h',
  'cc',
  'cpp',
  'hpp',
  'cs',
  'rb',
  'php',
  'swift',
  'm',
  'scala',
  'sh',
  'bash',
  'zsh',
  'ps1',
  'sql',
  'html',
  'css',
  'scss',
  'less',
  'md',
  'yaml',
  'yml',
  'toml',
  'xml',
  'ini',
  'lua',
  'r',
  'dart',
  'vue',
  'svelte',
  'txt',
  'csv',
  'diff',
  'patch',
  'log',
  'dockerfile',
  'makefile',
  'tf',
  'ex',
  'exs',
  'erl',
  'hs',
  'clj',
  'fs',
  'pl',
]);

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

/** The extension (with dot) of a source path named in a tool call, if it is one we map. */
export function sourceExtension(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const base = path.split(/[\\/]/).pop() ?? '';
  const lower = base.toLowerCase();
  if (lower === 'dockerfile' || lower === 'makefile') return undefined;
  const m = /\.([A-Za-z0-9]{1,10})$/.exec(base);
  if (!m) return undefined;
  return SOURCE_EXTENSIONS.has(m[1]!.toLowerCase()) ? `.${m[1]!.toLowerCase()}` : undefined;
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

/** Where `find` first occurs in `text` (0-based line and column), so a missed identifier opens at its line. */
export function lineHolding(text: string, find: string): { line: number; character: number } | undefined {
  const at = find ? text.indexOf(find) : -1;
  if (at < 0) return undefined;
  const before = text.slice(0, at);
  const line = before.split('\n').length - 1;
  return { line, character: at - (before.lastIndexOf('\n') + 1) };
}

/** Keys of tool-call inputs that name the file a tool read or wrote. */
const PATH_KEYS = ['file_path', 'filePath', 'path', 'file', 'filename', 'target_file', 'notebook_path'];

/**
 * Finds, for each call id, the file path its tool call names, by walking the request in any of the
 * three wire formats: Anthropic `tool_use` (`id`, `input`), OpenAI Chat (`id`, `function.arguments`)
 * and Responses `function_call` (`call_id`, `arguments`). Unknown shapes are skipped. `commands`,
 * when given, receives the shell command of each call that ran one.
 */
export function toolInputPaths(request: unknown, commands?: Map<string, string>): Map<string, string> {
  const found = new Map<string, string>();
  let root = request;
  if (typeof root === 'string') {
    try {
      root = JSON.parse(root);
    } catch {
      return found;
    }
  }
  const visit = (node: unknown, depth: number): void => {
    if (depth > 64 || node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item, depth + 1);
      return;
    }
    const o = node as Record<string, unknown>;
    const id = typeof o.call_id === 'string' ? o.call_id : typeof o.id === 'string' ? o.id : undefined;
    if (id) {
      let input: unknown = o.input;
      const fn = o.function as Record<string, unknown> | undefined;
      const args = typeof o.arguments === 'string' ? o.arguments : typeof fn?.arguments === 'string' ? fn.arguments : undefined;
      if (args !== undefined) {
        try {
          input = JSON.parse(args);
        } catch {
          input = undefined;
        }
      }
      if (input && typeof input === 'object' && !Array.isArray(input)) {
        const fields = input as Record<string, unknown>;
        for (const k of PATH_KEYS) {
          const v = fields[k];
          if (typeof v === 'string' && v.length > 0 && v.length < 4096) {
            found.set(id, v);
            break;
          }
        }
        const cmd = typeof fields.command === 'string' ? fields.command : typeof fields.cmd === 'string' ? fields.cmd : undefined;
        if (cmd && commands && cmd.length < 4096) commands.set(id, cmd);
        const shown = cmd && !found.has(id) ? fileShownBy(cmd) : undefined;
        if (shown) found.set(id, shown);
      }
    }
    for (const v of Object.values(o)) if (typeof v === 'object') visit(v, depth + 1);
  };
  visit(root, 0);
  return found;
}

/**
 * The file a simple shell command prints (`cat a.py`, `head -n 50 src/x.ts`, `sed -n 1,80p x.go`,
 * `nl -ba x.rs`): its output is that file's source. Pipelines and compound commands are skipped,
 * since their output is no longer the file.
 */
function fileShownBy(command: string): string | undefined {
  const c = command.trim();
  if (c.length > 500 || /[|;&><`$]/.test(c)) return undefined;
  const words = c.split(/\s+/);
  if (!/^(cat|head|tail|nl|bat|less|more|sed)$/.test(words[0] ?? '')) return undefined;
  const last = words[words.length - 1] ?? '';
  if (words.length < 2 || last.startsWith('-')) return undefined;
  return sourceExtension(last.replace(/^['"]|['"]$/g, '')) ? last.replace(/^['"]|['"]$/g, '') : undefined;
}

/**
 * The marker text that replaced a result in a projected request: the first string in it that
 * contains the handle. Works for every wire format because a marker always carries its handle.
 */
export function markerTextFor(projected: unknown, handle: string): string | undefined {
  let root = projected;
  if (typeof root === 'string') {
    try {
      root = JSON.parse(root);
    } catch {
      return undefined;
    }
  }
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === 'string') {
      if (node.includes(handle)) return node;
    } else if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push(node[i]);
    } else if (node && typeof node === 'object') {
      const values = Object.values(node as Record<string, unknown>);
      for (let i = values.length - 1; i >= 0; i--) stack.push(values[i]);
    }
  }
  return undefined;
}
