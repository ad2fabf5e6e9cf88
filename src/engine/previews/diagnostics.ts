/**
 * Compilers, type checkers and linters (tsc, eslint, mypy, ruff, flake8, pylint, rustc and cargo
 * check, gcc and clang, go vet): every diagnostic with its code and location is what the agent
 * fixes next, so errors come first (with rustc's `-->` location line and eslint's file line), then
 * the summary (`Found 3 errors`), then warnings, then the head and tail.
 */
import { shareMatching, type OutputKind } from './kind';
import { headIndices, IMPORTANT, matching, roundRobin, selectLines, tailIndices } from './select';

const PROGRAMS =
  /^(tsc|vue-tsc|eslint|mypy|pyright|ruff|flake8|pylint|pyflakes|pycodestyle|rustc|cargo check|cargo clippy|gcc|g\+\+|cc|c\+\+|clang|clang\+\+|go vet|staticcheck|golangci-lint|shellcheck|npm run (lint|typecheck|type-check|tsc|check)|yarn lint|pnpm lint|biome|stylelint|javac)$/;

/** One diagnostic, the line that names it: `file:line[:col]: error ...`, tsc, rustc and eslint shapes. */
const DIAGNOSTIC =
  /^[^\s:]([^:]*?)(\(\d+,\d+\)|:\d+(:\d+)?)(:| -) *(fatal error|error|warning|note|[A-Z]{1,3}\d{2,4}\b)|^(error|warning)(\[[A-Z]?\d+\])?: |^\s+\d+:\d+\s+(error|warning)\s/;
const ERROR = /\berror\b|^[^\s:][^:]*:\d+(:\d+)?: *[EF]\d{2,4}\b/i;
/** A location on the line after a headline (rustc, cargo). */
const LOCATION = /^\s*--> \S+:\d+/;
/** The eslint style: diagnostics indented under a line naming the file. */
const INDENTED = /^\s+\d+:\d+\s/;
/** The first diagnostics stay first, whatever their severity: they are the ones an agent fixes first. */
const FIRST_DIAGNOSTICS = 3;
const SUMMARY =
  /^Found \d+ errors?|^✖ \d+ problems?|^\d+ problems?|could not compile|aborting due to|^\d+ (errors?|warnings?) generated|^Success: no issues found|^Found \d+ errors? in \d+ files?|^error: Recipe|^(warning|error): .* generated \d+ warnings?|^Errors? +Files?$|^Your code has been rated/;

export const diagnosticsKind: OutputKind = {
  name: 'diagnostics',
  byCommand: (program) => PROGRAMS.test(program),
  byOutput: (lines) => {
    const { count } = shareMatching(lines, DIAGNOSTIC);
    return count >= 2 || (count >= 1 && shareMatching(lines, LOCATION).count >= 1);
  },
  preview(lines, budget) {
    const n = lines.length;
    const diags = matching(lines, DIAGNOSTIC);
    const withContext = (i: number): number[] => {
      const out: number[] = [];
      if (INDENTED.test(lines[i]!)) {
        let f = i - 1;
        while (f >= 0 && (INDENTED.test(lines[f]!) || !lines[f]!.trim())) f--;
        if (f >= 0) out.push(f);
      }
      out.push(i);
      for (let j = i + 1; j <= i + 2 && j < n; j++) if (LOCATION.test(lines[j]!)) out.push(j);
      return out;
    };
    // the file a diagnostic is about: its own location, the location line after it, or eslint's file line above it
    const fileOf = (i: number) => {
      const ctx = withContext(i);
      const at = ctx.map((j) => /^\s*(?:--> )?([^\s:(]+)[:(]\d/.exec(lines[j]!)?.[1]).find((f) => f !== undefined);
      return at ?? lines[ctx[0]!]!.trim();
    };
    // the first diagnostic of every file before the second of any, errors before the rest
    const byFile = (is: number[]) => {
      const groups = new Map<string, number[]>();
      for (const i of is) {
        const f = fileOf(i);
        groups.set(f, [...(groups.get(f) ?? []), i]);
      }
      return roundRobin([...groups.values()]).flatMap(withContext);
    };
    const errors = byFile(diags.filter((i) => ERROR.test(lines[i]!)));
    const others = byFile(diags.filter((i) => !ERROR.test(lines[i]!)));
    const summary = matching(lines, SUMMARY);
    return selectLines(
      lines,
      [
        ...headIndices(n, 1),
        ...diags.slice(0, FIRST_DIAGNOSTICS).flatMap(withContext),
        ...errors,
        ...summary.slice(-1),
        ...tailIndices(n, 1),
        ...others,
        ...matching(lines, IMPORTANT),
        ...summary,
        ...tailIndices(n, 4),
      ],
      budget,
    );
  },
};
