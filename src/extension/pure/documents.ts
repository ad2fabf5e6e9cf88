/**
 * How stored outputs are named as documents, without `vscode`.
 *
 * A stored output opens as `spillway:/<handle>/<tool> · <call id><ext>`. The editor tab shows the
 * last segment, so the title names the tool and the call, never a hash; the handle sits in the
 * folder segment (shown as the tab's description) and is the only part the file system provider
 * trusts. The extension picks the language mode: `.json` when the output parses as JSON, `.diff`
 * for a unified diff, the source file's own extension when the tool call named a file, `.log`
 * otherwise. The projected (marker) text of the same result opens as
 * `spillway:/<handle>/projected/<tool> · <call id><ext>`, for the diff editor.
 */
import { HANDLE_PATTERN } from '../../engine/handle';

export const SCHEME = 'spillway';
/** Longest tool or call id kept in a title; the rest is elided so tabs stay readable. */
const MAX_TITLE_PART = 60;

export interface DocumentName {
  handle: string;
  tool?: string;
  callId?: string;
  /** extension with its dot, e.g. `.json` */
  ext: string;
  projected?: boolean;
}

export type ParsedPath = { ok: true; handle: string; projected: boolean } | { ok: false; reason: string };

/** Makes one path segment safe and short: no slashes, backslashes, control characters or `..`. */
export function safeSegment(text: string | undefined, fallback: string): string {
  // eslint-disable-next-line no-control-regex -- control characters are exactly what must go
  let s = (text ?? '').replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim();
  if (s === '' || /^\.+$/.test(s)) s = fallback;
  if (s.length > MAX_TITLE_PART) s = s.slice(0, MAX_TITLE_PART - 1) + '…';
  return s;
}

/** The title a stored output's tab shows: `bash · call_abc123.log`. */
export function documentTitle(name: Omit<DocumentName, 'handle'>): string {
  return `${safeSegment(name.tool, 'tool')} · ${safeSegment(name.callId, 'output')}${name.ext}`;
}

/** The URI path (without the scheme) of a stored output or of its projection. */
export function documentPath(name: DocumentName): string {
  return `/${name.handle}${name.projected ? '/projected' : ''}/${documentTitle(name)}`;
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
  if (rest.length <= 1) return { ok: true, handle, projected: false };
  if (rest.length === 2 && rest[0] === 'projected') return { ok: true, handle, projected: true };
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

/** Keys of tool-call inputs that name the file a tool read or wrote. */
const PATH_KEYS = ['file_path', 'filePath', 'path', 'file', 'filename', 'target_file', 'notebook_path'];

/**
 * Finds, for each call id, the file path its tool call names, by walking the request in any of the
 * three wire formats: Anthropic `tool_use` (`id`, `input`), OpenAI Chat (`id`, `function.arguments`)
 * and Responses `function_call` (`call_id`, `arguments`). Unknown shapes are skipped.
 */
export function toolInputPaths(request: unknown): Map<string, string> {
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
