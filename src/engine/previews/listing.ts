/**
 * Listings (ls, find, tree, an agent's Glob or LS tool): every name is equally likely to be the one
 * the agent opens next, so the preview shows as many names as fit. `ls -l` lines are cut down to the
 * name (a trailing `/` for a directory, `-> target` for a link), which fits several times as many;
 * a count of entries and of the directories they sit in opens the preview.
 */
import { shareMatching, type OutputKind } from './kind';
import { headIndices, selectLines, tailIndices } from './select';

const PROGRAMS = /^(ls|ll|dir|find|fd|fdfind|tree|du|exa|eza|lsd|locate|glob|git ls-files)$/;
const TOOLS = /^(glob|ls|list_dir|list_files|list_directory|find_file|find_files)$/i;

/** An `ls -l` line: type and permissions, links, owner, group, size, date, name. */
const LONG = /^([-dlcbps])[rwxsStT-]{9}[.@+]?\s+\d+\s+\S+\s+\S+\s+[\d,]+\s+(?:\S+\s+\S+\s+\S+)\s+(.+)$/;
const PATH = /^(?:[A-Za-z]:)?(?:\.{1,2}|~)?[\\/]?[\w@.+,=#%~-]+(?:[\\/][\w@.+,=#%~ -]+)*[\\/]?$/;
const TREE = /[├└]── |^[|`]-- /;
/** How many directories the opening line names. */
const LEAD_DIRS = 6;

function shortLong(line: string): string {
  const m = LONG.exec(line);
  if (!m) return line;
  const name = m[2]!;
  return m[1] === 'd' ? `${name}/` : name;
}

/** `N entries` and, for paths, the directories with the most entries. */
function lead(lines: readonly string[]): string[] {
  const entries = lines.filter((l) => l.trim() && !/^total \d/.test(l));
  const dirs = new Map<string, number>();
  for (const l of entries) {
    const slash = l.replace(/[\\/]$/, '').search(/[\\/][^\\/]*$/);
    if (slash > 0) {
      const d = l.slice(0, slash);
      dirs.set(d, (dirs.get(d) ?? 0) + 1);
    }
  }
  if (dirs.size < 2) return [`[${entries.length} entries]`];
  const top = [...dirs.entries()]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, LEAD_DIRS)
    .map(([d, c]) => `${d} (${c})`)
    .join(', ');
  return [`[${entries.length} entries in ${dirs.size} directories; most in ${top}]`];
}

export const listingKind: OutputKind = {
  name: 'listing',
  byCommand: (program, _command, tool) => PROGRAMS.test(program) || TOOLS.test(tool),
  byOutput: (lines) => {
    if (shareMatching(lines, LONG).share >= 0.6 || shareMatching(lines, TREE).share >= 0.6) return true;
    const paths = shareMatching(lines, PATH);
    return paths.count >= 5 && paths.share >= 0.9 && shareMatching(lines, /[\\/]/).share >= 0.9;
  },
  preview(lines, budget) {
    const shown = lines.map(shortLong);
    const n = shown.length;
    // tree: the top levels first, then the rest in order
    const top: number[] = [];
    if (lines.some((l) => TREE.test(l))) for (let i = 0; i < n; i++) if (/^([├└|`])/.test(lines[i]!)) top.push(i);
    return selectLines(shown, [...tailIndices(n, 1), ...top, ...headIndices(n, n), ...tailIndices(n, n)], budget, lead(shown));
  },
};
