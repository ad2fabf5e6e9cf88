/**
 * Search results (grep, rg, ag, ack, git grep, an agent's Grep tool): the agent needs to know which
 * files matched, how often, and what the first hits look like. The preview opens with the files and
 * their counts, then takes the first hit of every file, then the second of every file, and so on.
 */
import { shareMatching, type OutputKind } from './kind';
import { headIndices, roundRobin, selectLines } from './select';

const PROGRAMS = /^(grep|egrep|fgrep|rg|ag|ack|git grep|grep\.exe|findstr|search_dir|search_file|find_file)$/;
const TOOLS = /^(grep|search|search_files|search_dir|search_file|codebase_search|grep_search|find_in_files|ripgrep|search_codebase)$/i;

/** A hit: `path:line:text` or a context line `path-line-text`; the path has a dot or a slash (a time of day is no hit). */
const NUMBERED = /^(?=\S)((?:[A-Za-z]:)?[^:\n]*?[./][^\s:]*?)(?::\d+:|-\d+-)/;
/** A hit without a line number (`grep -r`): a path with an extension, then a colon. */
const UNNUMBERED = /^((?:[A-Za-z]:)?[^\s:]+\.\w{1,8}):/;
const HIT = new RegExp(`${NUMBERED.source}|${UNNUMBERED.source}`);
/** The share of the budget the opening line (files and counts) may take: the hits need the rest. */
const SUMMARY_SHARE = 0.4;

function fileOf(line: string): string | undefined {
  return (NUMBERED.exec(line) ?? UNNUMBERED.exec(line))?.[1];
}

export const searchKind: OutputKind = {
  name: 'search',
  byCommand: (program, _command, tool) => PROGRAMS.test(program) || TOOLS.test(tool),
  byOutput: (lines) => {
    const { share, count } = shareMatching(lines, HIT);
    return count >= 3 && share >= 0.6;
  },
  preview(lines, budget) {
    const byFile = new Map<string, number[]>();
    for (let i = 0; i < lines.length; i++) {
      const f = fileOf(lines[i]!);
      if (f === undefined) continue;
      let hits = byFile.get(f);
      if (!hits) byFile.set(f, (hits = []));
      hits.push(i);
    }
    if (byFile.size === 0) return null;
    const files = [...byFile.entries()];
    const hits = files.reduce((a, [, h]) => a + h.length, 0);
    // the files and their counts, as many as fit in a share of the budget
    const room = Math.floor(budget * SUMMARY_SHARE);
    let named = '';
    let shown = 0;
    for (const [f, h] of files) {
      const next = `${named ? ', ' : ''}${f} (${h.length})`;
      if (named.length + next.length > room) break;
      named += next;
      shown++;
    }
    const more = shown < files.length ? `, +${files.length - shown} more files` : '';
    const lead = [`[${hits} lines in ${files.length} files: ${named}${more}]`];
    // every file's first hit, then every file's second, ...
    return selectLines(lines, [...headIndices(lines.length, 1), ...roundRobin(files.map(([, h]) => h))], budget, lead);
  },
};
