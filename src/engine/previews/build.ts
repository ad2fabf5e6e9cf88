/**
 * Package managers and builds (npm/yarn/pnpm install, pip, cargo build, make, go build, docker
 * build, maven, gradle): most of their output is progress. What matters is whether it worked, so
 * the preview keeps errors first, then the summary (`Successfully installed …`, `added 120
 * packages`, `Finished`, `BUILD SUCCESS`), the last lines, warnings, and the head.
 */
import { shareMatching, type OutputKind } from './kind';
import { headIndices, IMPORTANT, matching, selectLines, tailIndices } from './select';

const PROGRAMS =
  /^(npm (install|i|ci|add|update|run build|run compile|run bundle)|yarn (install|add|build|run build)?|pnpm (install|i|add|run build)|bun (install|add|run build)|pip (install|uninstall|download)|pip3 (install|uninstall)|pip|pip3|uv|poetry|conda|mamba|cargo (build|install|update|fetch)|go (build|install|get|mod)|make|cmake|ninja|mvn|gradle|gradlew|docker (build|compose|pull)|apt-get|brew|dnf|yum|setup\.py|bundle|gem|composer|dotnet (build|restore)|webpack|vite|esbuild|rollup|tsup)$/;
const SIGNS =
  /^(Collecting |Downloading |Installing collected packages|Successfully (installed|built)|Requirement already satisfied|npm (ERR!|WARN|error)|added \d+ packages?|\s*Compiling \S+ v\d|\s*Finished |\[INFO\] |BUILD (SUCCESS|FAILURE|FAILED)|Step \d+\/\d+ :|#\d+ \[|Get:\d+ |Setting up |Preparing metadata|Building wheels?)/;
const ERROR = /\b(error|ERR!|ERROR|FAILED|FAILURE|fatal|Traceback|Exception|failed|not found|No matching distribution|conflict)\b/;
const SUMMARY =
  /^(Successfully (installed|built)|added \d+ packages?|removed \d+ packages?|up to date|changed \d+ packages?|found \d+ vulnerabilit|\s*Finished |BUILD (SUCCESS|FAILURE|FAILED)|Done in |Total time|Installing collected packages|Successfully tagged|naming to|make(\[\d+\])?: \*\*\*)/;
const WARNING = /\b(warn(ing)?|WARN|deprecated|DEPRECATION)\b/;

export const buildKind: OutputKind = {
  name: 'build',
  byCommand: (program) => PROGRAMS.test(program),
  byOutput: (lines) => shareMatching(lines, SIGNS).count >= 2,
  preview(lines, budget) {
    const n = lines.length;
    return selectLines(
      lines,
      [
        ...headIndices(n, 1),
        ...tailIndices(n, 2),
        ...matching(lines, ERROR),
        ...matching(lines, SUMMARY),
        ...tailIndices(n, 6),
        ...matching(lines, WARNING),
        ...matching(lines, IMPORTANT),
        ...headIndices(n, 4),
      ],
      budget,
    );
  },
};
