/**
 * What a per-kind preview is: how it recognises its kind of output (from the command that made it,
 * or from the output itself) and which lines it keeps.
 *
 * Why a shared shape: the dispatcher (index.ts) tries every kind the same way, first by command
 * (the tool call says `pytest`, `git diff`, `rg`), then by output (a pytest summary line, a `diff
 * --git` header), and the bench classifies results with the very same functions.
 */

/** The kinds of output with a preview of their own, and `generic` for the rest (smart preview). */
export const OUTPUT_KINDS = ['file', 'test', 'search', 'git', 'diagnostics', 'listing', 'build', 'generic'] as const;
export type OutputKindName = (typeof OUTPUT_KINDS)[number];

/** What the call that produced an output says about it. */
export interface PreviewHint {
  /** the tool name (`Bash`, `Read`, `shell`, `open`) */
  tool?: string;
  /** the command line, or a file tool's sub-command (`view`) */
  command?: string;
}

export interface OutputKind {
  name: Exclude<OutputKindName, 'generic'>;
  /** the program (first word of the command's main stage, `git`/`python -m` folded in) or the tool name says so */
  byCommand(program: string, command: string, tool: string): boolean;
  /** the output says so (only its first lines are looked at) */
  byOutput(lines: readonly string[]): boolean;
  /** the preview within `budget`, or null when this output has nothing the kind keeps */
  preview(lines: readonly string[], budget: number): string | null;
}

/** How many of the first lines detection looks at: enough to see a pattern, bounded for huge outputs. */
export const DETECT_LINES = 400;

/** The share of `lines` (empty ones not counted) that match `re`, over the first DETECT_LINES. */
export function shareMatching(lines: readonly string[], re: RegExp): { share: number; count: number } {
  let count = 0,
    nonEmpty = 0;
  for (let i = 0; i < lines.length && i < DETECT_LINES; i++) {
    const l = lines[i]!;
    if (!l.trim()) continue;
    nonEmpty++;
    if (re.test(l)) count++;
  }
  return { share: nonEmpty ? count / nonEmpty : 0, count };
}

/** Whether any of the first DETECT_LINES lines (and the last few) match `re`. */
export function anyLine(lines: readonly string[], re: RegExp, tail = 20): boolean {
  for (let i = 0; i < lines.length && i < DETECT_LINES; i++) if (re.test(lines[i]!)) return true;
  for (let i = Math.max(DETECT_LINES, lines.length - tail); i < lines.length; i++) if (re.test(lines[i]!)) return true;
  return false;
}
