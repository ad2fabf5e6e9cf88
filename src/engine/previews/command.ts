/**
 * The program a shell command runs, as far as previews care: `cd /testbed && python -m pytest -x
 * tests | tail -50` runs `pytest`; `git --no-pager diff` runs `git diff`; `cat f | grep x` searches.
 *
 * Why: agents wrap the command that matters in `cd`, `export`, `timeout`, environment assignments
 * and pipes into `head`/`tail`; the kind of output follows from the command that produced it, not
 * from the wrapper.
 */

/** Commands that set up the shell rather than produce the output. */
const SETUP = new Set(['cd', 'export', 'source', '.', 'set', 'unset', 'pushd', 'popd', 'true', 'sleep', 'mkdir', 'echo', 'clear']);
/** Prefixes that run the next word as the command. */
const WRAPPERS = new Set(['timeout', 'time', 'env', 'sudo', 'nice', 'nohup', 'exec', 'command', 'npx', 'bunx', 'uv', 'poetry', 'pipenv']);
/** Pipe stages that only cut what the command before them printed. */
const FILTERS = new Set(['head', 'tail', 'less', 'more', 'cat', 'tee', 'sort', 'uniq', 'wc', 'cut', 'tr', 'column', 'nl']);
const SEARCHERS = new Set(['grep', 'egrep', 'fgrep', 'rg', 'ag', 'ack']);
/** Words that open a compound command's body: the command follows them (`do cat "$f"`, `then head f`). */
const OPENERS = /^(?:(?:do|then|else)\s+)+/;
/**
 * Words that head a loop or a test, or close one: not the program whose output is shown. A loop's
 * output is its body's (`for f in *.md; do echo "--- $f"; cat "$f"; done` reads files).
 */
const CONTROL = new Set(['for', 'while', 'until', 'case', 'if', 'elif', 'do', 'then', 'else', 'done', 'fi', 'esac']);

/** A command's words, quotes removed (good enough to name programs; never used to run anything). */
function words(stage: string): string[] {
  return (stage.match(/"[^"]*"|'[^']*'|\S+/g) ?? []).map((w) => w.replace(/^["']|["']$/g, ''));
}

/** The program of one pipe stage: `git diff`, `python -m pytest` → `pytest`, `npm test`, `cargo build`. */
function programOf(stage: string): string {
  const ws = words(stage);
  let i = 0;
  while (i < ws.length) {
    const w = ws[i]!;
    if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) i++;
    else if (WRAPPERS.has(w) || (w === 'run' && i > 0 && ws[i - 1] === 'uv')) {
      i++;
      while (i < ws.length && (/^-/.test(ws[i]!) || /^\d+[smh]?$/.test(ws[i]!))) i++;
    } else break;
  }
  const first = (ws[i] ?? '').replace(/^.*[\\/]/, '');
  const next = (ws[i + 1] ?? '').toLowerCase();
  if (/^python[\d.]*$/.test(first) && next === '-m') {
    const module = (ws[i + 2] ?? 'python').toLowerCase();
    return module === 'django' ? `manage.py ${(ws[i + 3] ?? '').toLowerCase()}` : module;
  }
  if (['git', 'npm', 'yarn', 'pnpm', 'cargo', 'go', 'pip', 'pip3', 'docker', 'bun', 'dotnet'].includes(first)) {
    // the sub-command, skipping options such as `git --no-pager -C dir`
    let j = i + 1;
    while (j < ws.length && ws[j]!.startsWith('-')) j += ws[j] === '-C' || ws[j] === '-c' ? 2 : 1;
    const sub = (ws[j] ?? '').toLowerCase();
    return sub === 'run' ? `${first} run ${(ws[j + 1] ?? '').toLowerCase()}` : `${first} ${sub}`;
  }
  if (/^python[\d.]*$/.test(first) && /manage\.py$/.test(next)) return `manage.py ${(ws[i + 2] ?? '').toLowerCase()}`;
  return first.toLowerCase();
}

/** The command with each heredoc's body left out (`cat <<'EOF' … EOF` is data, not commands). */
function withoutHeredocs(command: string): string {
  return command.replace(/<<-?\s*(['"]?)(\w+)\1[^\n]*\n[\s\S]*?\n\s*\2\b/g, '');
}

/**
 * The program whose output a command shows: the last command of a `&&`/`;` chain that is not
 * shell setup, and in its pipeline the first stage, unless a later stage searches (`cat f | grep`)
 * or the first stage is a filter and a later one is not. In a loop or an `if`, the last command of
 * its body (`do …`, `then …`, `else …`): what the loop runs is what it prints.
 */
export function mainProgram(command: string): string {
  const chain = withoutHeredocs(command)
    .split(/&&|\|\||(?<!\\);|\n/)
    .map((s) => s.trim())
    .filter(Boolean);
  for (let c = chain.length - 1; c >= 0; c--) {
    const stages = chain[c]!.replace(OPENERS, '')
      .split(/\|(?!\|)/)
      .map(programOf);
    const first = stages[0] ?? '';
    // setup, and what is left of a quoted or substituted command once split (`)"`), is not the command
    if (!/^[\w.]/.test(first) || SETUP.has(first)) continue;
    const search = stages.slice(1).find((p) => SEARCHERS.has(p));
    // a loop's header or end is not the command; its output piped to a search is searched (`done | grep x`)
    if (CONTROL.has(first)) {
      if (search) return search;
      continue;
    }
    if (search && (FILTERS.has(first) || first === 'find' || first === 'ls' || first === 'git log')) return search;
    return first;
  }
  return '';
}
