/**
 * How a tool result is named where people read it: the inspector's rows and tooltips, the pickers,
 * a stored output's tab title, Compare, the misses, `spillway replay`'s summary. One function for all
 * of them (`sourceLabel`), so a result reads the same everywhere.
 *
 * A result is named by the file its call read (a file input by the file it wrote), else by the
 * command it ran, as what the command does: agents start most commands with `cd /their/worktree &&`
 * and environment assignments, so the command's own text would name every result of a session the
 * same (`$ cd /Users/…/claude-history-worktrees…`). `commandName` drops that setup and shortens long
 * paths to their last segments: `cd /Users/r/wt/feature && GOFLAGS=-count=1 go test ./pkg/export/... -v`
 * reads `go test ./pkg/export/... -v`.
 *
 * Pure and without imports beyond the engine's own, so every layer that names results can use it
 * (the webview gets the names made here through the protocol).
 */
import { heredocWrites } from './file-inputs';

/** What a tool call's input says about where its output or its input comes from. */
export interface CallSource {
  /** the file the call read or wrote (a path field of its input, or the file a simple `cat` prints) */
  path?: string;
  /** the shell command it ran */
  command?: string;
  /** the files its command writes through heredocs (`cat > f << 'EOF'`) */
  writes?: string[];
  /** the tool the call used, when the request names it (callSources) */
  tool?: string;
}

/** Keys of tool-call inputs that name the file a tool read or wrote. */
const PATH_KEYS = ['file_path', 'filePath', 'path', 'file', 'filename', 'target_file', 'notebook_path'];
/** Most characters of a command kept to name its output. */
const MAX_KEPT_COMMAND = 4096;
/** Paths longer than this are shortened from the left in labels (`…/src/foo.ts`). */
const MAX_LABEL_PATH = 48;
/** Commands longer than this are cut in labels. */
const MAX_LABEL_COMMAND = 60;
/** A path inside a command longer than this keeps only its last segments (`…/bin/claude-history`). */
const MAX_COMMAND_PATH = 28;
/** Segments a shortened path inside a command keeps: the file and its folder say what it is. */
const KEPT_PATH_SEGMENTS = 2;

/** Source extensions the editor maps to languages; a tool-input path with another extension is ignored. */
const SOURCE_EXTENSIONS = new Set(
  (
    'ts tsx js jsx mjs cjs json jsonc py rs go java kt c h cc cpp hpp cs rb php swift m scala sh bash zsh ps1 sql html css scss ' +
    'less md yaml yml toml xml ini lua r dart vue svelte txt csv diff patch log dockerfile makefile tf ex exs erl hs clj fs pl'
  ).split(' '),
);

/** The extension (with dot) of a source path named in a tool call, if it is one the editor maps to a language. */
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

/** What one tool call's input (an object) names: its file, its command, the files its heredocs write. */
export function callInputSource(fields: Record<string, unknown>): CallSource | undefined {
  const source: CallSource = {};
  for (const k of PATH_KEYS) {
    const v = fields[k];
    if (typeof v === 'string' && v.length > 0 && v.length < 4096) {
      source.path = v;
      break;
    }
  }
  // a patch given as a field (`{"input": "*** Begin Patch…"}`): the files it writes
  const patch = typeof fields.input === 'string' && fields.input.startsWith(PATCH_START) ? fields.input : undefined;
  const patched = patch ? [...new Set([...patch.matchAll(PATCH_FILE)].map((m) => m[1]!.trim()))] : [];
  if (patched.length) {
    source.path ??= patched[0]!;
    source.writes = patched;
  }
  const raw = fields.command ?? fields.cmd;
  // Codex's shell takes an argv (`["bash", "-lc", script]`): the script is the command
  const cmd = typeof raw === 'string' ? raw : Array.isArray(raw) ? raw.filter((c) => typeof c === 'string').pop() : undefined;
  if (typeof cmd === 'string' && cmd.length > 0) {
    // a long command (a heredoc's body) is kept to its start: it titles the output, and its first line is read
    source.command = cmd.length < MAX_KEPT_COMMAND ? cmd : cmd.slice(0, MAX_KEPT_COMMAND);
    const writes = cmd.includes('<<') ? heredocWrites(cmd).map((w) => w.path) : [];
    if (writes.length) source.writes = [...new Set(writes)];
    // what `cd dir && cat a.py` prints is a.py too
    const shown = !source.path && !cmd.includes('\n') ? fileShownBy(withoutSetup(cmd)) : undefined;
    if (shown) source.path = shown;
  }
  return source.path || source.command || source.writes ? source : undefined;
}

/** How a freeform patch starts, and the lines that name its files. */
const PATCH_START = '*** Begin Patch';
const PATCH_FILE = /^\*\*\* (?:Update|Add|Delete) File: (.+)$/gm;

/** A request as given (parsed), or parsed from its JSON text; undefined for text that does not parse. */
export function parsedRequest(request: unknown): unknown {
  if (typeof request !== 'string') return request;
  try {
    return JSON.parse(request) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Finds, for each call id, what its tool call names (the file, the command, the files a heredoc
 * writes), by walking the request in any of the three wire formats: Anthropic `tool_use` (`id`,
 * `input`), OpenAI Chat (`id`, `function.arguments`) and Responses `function_call` (`call_id`,
 * `arguments`). Unknown shapes are skipped.
 */
export function callSources(request: unknown): Map<string, CallSource> {
  const found = new Map<string, CallSource>();
  const root = parsedRequest(request);
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
          input = args.startsWith(PATCH_START) ? args : undefined;
        }
      }
      // a freeform patch (Codex's apply_patch): the files it writes, the first names it
      if (typeof input === 'string' && input.startsWith(PATCH_START)) {
        const files = [...input.matchAll(PATCH_FILE)].map((m) => m[1]!.trim());
        if (files.length)
          found.set(id, { path: files[0]!, writes: [...new Set(files)], ...(typeof o.name === 'string' ? { tool: o.name } : {}) });
      } else if (input && typeof input === 'object' && !Array.isArray(input)) {
        const source = callInputSource(input as Record<string, unknown>);
        const tool = typeof o.name === 'string' ? o.name : typeof fn?.name === 'string' ? fn.name : undefined;
        if (source) found.set(id, tool ? { ...source, tool } : source);
      }
    }
    for (const v of Object.values(o)) if (typeof v === 'object') visit(v, depth + 1);
  };
  visit(root, 0);
  return found;
}

/** A path for a label: as it was when short, else its last segments after `…/`. */
export function shortPath(path: string): string {
  if (path.length <= MAX_LABEL_PATH) return path;
  const parts = path.split(/[\\/]/);
  let out = parts.pop() ?? path;
  while (parts.length > 0 && out.length + parts[parts.length - 1]!.length + 1 <= MAX_LABEL_PATH - 2) out = `${parts.pop()}/${out}`;
  return `…/${out}`;
}

/** One shell word at the start of `s`: quoted strings and backslash escapes kept, up to a blank or an operator. */
const WORD = String.raw`(?:"(?:[^"\\]|\\.)*"|'[^']*'|\\.|[^\s;&|<>()"'\\])+`;
/** Commands that only set up the shell for the next one: `cd dir &&`, `pushd dir;`, `source venv/bin/activate &&`, `export A=1 &&`, `set -e;`. */
const SETUP_STEP = new RegExp(String.raw`^(?:cd|pushd|source|\.|export|set)(?:[ \t]+${WORD})*[ \t]*(?:&&|;)[ \t]*`);
/** Environment assignments before a command: `FOO=1 BAR="a b" cmd`. */
const ASSIGNMENTS = new RegExp(String.raw`^(?:[A-Za-z_][A-Za-z0-9_]*=(?:${WORD})?[ \t]+)+`);

/** A command line without the shell setup before what it runs (see the module comment); the line itself when nothing would be left. */
function withoutSetup(line: string): string {
  let s = line.trim();
  for (;;) {
    const step = SETUP_STEP.exec(s);
    if (step && step[0].length < s.length) {
      s = s.slice(step[0].length);
      continue;
    }
    const env = ASSIGNMENTS.exec(s);
    // `A=$(…) && next` assigns and runs nothing: that is not a prefix of a command
    if (env && env[0].length < s.length && !/^(?:&&|;|\|)/.test(s.slice(env[0].length))) {
      s = s.slice(env[0].length);
      continue;
    }
    return s;
  }
}

/** A long path inside a command kept to its last segments (`/Users/r/wt/bin/claude-history` → `…/bin/claude-history`); other words as they are. */
function shortWord(word: string): string {
  if (word.length <= MAX_COMMAND_PATH || word.includes('://')) return word;
  // `--out=/very/long/path`: the path after the `=`
  const eq = /^(-[\w-]*=|[\w.-]*=)?(["']?)(.*?)(["']?)$/.exec(word);
  const [, flag = '', open = '', path = word, close = ''] = eq ?? [];
  const parts = path.split('/');
  if (parts.length <= KEPT_PATH_SEGMENTS + 1 || parts.slice(-KEPT_PATH_SEGMENTS).some((p) => p === '')) return word;
  return `${flag}${open}…/${parts.slice(-KEPT_PATH_SEGMENTS).join('/')}${close}`;
}

/**
 * A command as what it does, for a label: its first line, without the `cd … &&`, `export …;` and
 * environment assignments in front of what it runs, long paths kept to their last segments, blanks
 * collapsed. `cd /Users/r/wt && FOO=1 go test ./pkg/export/... -v` → `go test ./pkg/export/... -v`.
 * Not cut to a length: `sourceLabel` does that.
 */
export function commandName(command: string): string {
  const line = command.trim().split('\n')[0]?.trim() ?? '';
  return withoutSetup(line)
    .split(/[ \t]+/)
    .map(shortWord)
    .join(' ');
}

/**
 * How a result or a file input is named where people read it (the inspector's rows, the pickers,
 * tab titles, Compare, misses, the CLI): a result by the file it read, else by what its command does
 * (`$ go test ./pkg/export/... -v`); a file input by the file it wrote. Undefined when the call names
 * neither (the tool and call id name it then).
 */
export function sourceLabel(source: CallSource | undefined, kind: 'result' | 'input'): string | undefined {
  if (!source) return undefined;
  const file = kind === 'input' ? (source.writes?.[0] ?? source.path) : source.path;
  if (file) return shortPath(file) + (kind === 'input' && (source.writes?.length ?? 0) > 1 ? ` +${source.writes!.length - 1}` : '');
  const line = source.command ? commandName(source.command) : '';
  if (!line) return undefined;
  return `$ ${line.length > MAX_LABEL_COMMAND ? `${line.slice(0, MAX_LABEL_COMMAND - 1)}…` : line}`;
}

/** A call id as the engine's reasons cite it (`identical to the output of call toolu_01TgBC75…`). */
const CITED_CALL = /\bcall ([A-Za-z0-9][\w.:-]*[A-Za-z0-9])/g;

/**
 * A reason with every call it cites named by its tool and file or command instead of its id
 * (`identical to the output of Bash $ go test ./...`): a call id tells a person nothing. A call the
 * request does not name is `an earlier call`.
 */
export function withCallsNamed(reason: string, sources: ReadonlyMap<string, CallSource> | undefined): string {
  return reason.replace(CITED_CALL, (_whole, id: string) => {
    const source = sources?.get(id);
    const name = sourceLabel(source, 'result');
    if (!name) return source?.tool ? `an earlier ${source.tool} call` : 'an earlier call';
    return source?.tool ? `${source.tool} ${name}` : name;
  });
}
