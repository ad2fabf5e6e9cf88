/**
 * git: status, diff (and show), log, and whatever else git prints.
 *
 * - status: the branch line and every path (staged, unstaged, untracked), never the `(use "git
 *   add" …)` hints;
 * - diff and show: every file header, then every hunk header, then the changed lines in order,
 *   as many as fit, and the `--stat` lines;
 * - log: each commit's hash and the first line of its message, then authors and dates;
 * - anything else (push, pull, merge, rebase): conflicts, errors and the head and tail.
 */
import { anyLine, type OutputKind } from './kind';
import { headIndices, matching, selectLines, tailIndices } from './select';

const FILE_HEADER = /^diff --git |^diff --cc |^Binary files /;
const HUNK = /^@@/;
const CHANGED = /^[+-](?![+-]{2} )/;
const STAT = /^ \S.* \| +\d+|^ \d+ files? changed/;
const STATUS_HEADER =
  /^(On branch|HEAD detached|Your branch|Changes to be committed|Changes not staged|Untracked files|Unmerged paths|nothing to commit|no changes added)/;
const STATUS_PATH = /^\t\S|^[ MADRCU?!]{2} \S/;
/** git's advice under a status section: never what the agent needs. */
const STATUS_HINT = /^\s*\(use "git /;
const COMMIT = /^commit [0-9a-f]{7,40}\b/;
const ONELINE = /^(\* )?[0-9a-f]{7,12} \S/;
const TROUBLE = /^(CONFLICT|error|fatal|hint: |Automatic merge failed|! \[rejected\]|warning)/i;

function diffPreview(lines: readonly string[], budget: number): string | null {
  return selectLines(
    lines,
    [
      ...headIndices(lines.length, 1),
      ...matching(lines, FILE_HEADER),
      ...matching(lines, / \d+ files? changed/),
      ...matching(lines, HUNK),
      ...matching(lines, CHANGED),
      ...matching(lines, STAT),
    ],
    budget,
  );
}

function statusPreview(lines: readonly string[], budget: number): string | null {
  const paths = matching(lines, STATUS_PATH).filter((i) => !STATUS_HINT.test(lines[i]!));
  return selectLines(lines, [...matching(lines, STATUS_HEADER), ...paths], budget);
}

function logPreview(lines: readonly string[], budget: number): string | null {
  const commits = matching(lines, COMMIT);
  // the first line of each message: the first non-empty indented line after the commit line
  const subjects = commits.flatMap((c) => {
    for (let i = c + 1; i < lines.length && i < c + 8; i++) if (/^ {4}\S/.test(lines[i]!)) return [i];
    return [];
  });
  const pairs = commits.flatMap((c, k) => [c, ...(subjects[k] !== undefined ? [subjects[k]!] : [])]);
  return selectLines(lines, [...pairs, ...matching(lines, /^(Author|Date|Merge):/)], budget);
}

export const gitKind: OutputKind = {
  name: 'git',
  byCommand: (program) => program.startsWith('git ') && program !== 'git grep',
  byOutput: (lines) =>
    anyLine(lines, FILE_HEADER) || anyLine(lines, /^(On branch|HEAD detached at) /) || matching(lines.slice(0, 400), COMMIT).length >= 2,
  preview(lines, budget) {
    const n = lines.length;
    if (anyLine(lines, FILE_HEADER) || anyLine(lines, HUNK)) return diffPreview(lines, budget);
    if (anyLine(lines, STATUS_HEADER) || matching(lines.slice(0, 50), STATUS_PATH).length >= 3) return statusPreview(lines, budget);
    if (anyLine(lines, COMMIT)) return logPreview(lines, budget);
    if (matching(lines.slice(0, 50), ONELINE).length >= 3) return selectLines(lines, [...headIndices(n, n)], budget);
    return selectLines(lines, [...headIndices(n, 2), ...matching(lines, TROUBLE), ...tailIndices(n, 3), ...headIndices(n, 8)], budget);
  },
};
