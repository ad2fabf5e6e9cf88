/**
 * Test runs (pytest, unittest and Django's runner, jest and vitest, go test, cargo test): what an
 * agent does next depends on which tests failed, where, and the summary, so those are kept first:
 * the summary lines, each failure's headline, then its assertion and location lines, then the head
 * (the command and what was collected) and the tail.
 */
import { anyLine, type OutputKind } from './kind';
import { headIndices, IMPORTANT, matching, roundRobin, selectLines, tailIndices } from './select';

const PROGRAMS =
  /^(pytest|py\.test|unittest|nose2?|tox|nox|jest|vitest|mocha|ava|tap|go test|cargo test|cargo nextest|npm test|npm run test\S*|yarn test|pnpm test|bun test|manage\.py test|runtests(\.py)?|phpunit|rspec|dotnet test)$/;

/** Lines that sum a run up. */
const SUMMARY =
  /^=+ .*\b(passed|failed|errors?|skipped|deselected|xfailed|no tests ran)\b.*=+$|^Ran \d+ tests? in |^(OK|FAILED)( \(.*\))?$|^\s*(Tests?|Test Files|Test Suites|Snapshots):\s+\d|^test result: |^(ok|FAIL)\s+\S+\s+[\d.]+s|^(PASS|FAIL)$|^\s*\d+ (passing|failing|pending)\b|^collected \d+ items?/;
/** A failing test's headline. */
const FAILURE =
  /^(FAILED|ERROR) \S|^(FAIL|ERROR): \S|^_{3,} .+ _{3,}$|^--- FAIL: |^\s*(✕|×|✗|●) |^\s*FAIL\s+\S|^test \S+ \.\.\. (FAILED|ERROR)|panicked at|^---- \S+ stdout ----/;
/** What a failure says and where: pytest's `E` lines, error lines, frames with a file and line. */
const DETAIL =
  /^E\s{2,}|^\s*File ".+", line \d+|^[\w./\\-]+\.\w{1,5}:\d+(:\d+)?[: ]|\(\S+\.\w{1,5}:\d+:\d+\)|^\s*at \S|^\w*(Error|Exception)\b:|^\s*(Expected|Received|expected|actual|left|right)\b/;
/** Signs of a test run in the output itself. */
const SIGNS =
  /^=+ (test session starts|FAILURES|ERRORS|short test summary info)|^=+ .*\b(passed|failed)\b.* in [\d.]+s|^Ran \d+ tests? in |^test result: (ok|FAILED)\.|^--- FAIL: |^\s*Test (Files|Suites):\s+\d|^collected \d+ items?/;

export const testKind: OutputKind = {
  name: 'test',
  byCommand: (program) => PROGRAMS.test(program),
  byOutput: (lines) => anyLine(lines, SIGNS),
  preview(lines, budget) {
    const n = lines.length;
    const summary = matching(lines, SUMMARY).reverse();
    const failures = matching(lines, FAILURE);
    const details = matching(lines, DETAIL);
    // each failure with what it says and where: the detail lines of its section, the last ones
    // first (the assertion, the innermost frame), the first failure's before the second's
    const sections = failures.map((f, k) => {
      const end = failures[k + 1] ?? n;
      return details.filter((d) => d > f && d < end).reverse();
    });
    const before = failures.length ? details.filter((d) => d < failures[0]!).reverse() : details.slice().reverse();
    return selectLines(
      lines,
      [
        ...tailIndices(n, 1),
        ...summary,
        ...failures,
        ...headIndices(n, 2),
        ...roundRobin([...sections, before]),
        ...matching(lines, IMPORTANT),
        ...tailIndices(n, 6),
        ...headIndices(n, 6),
      ],
      budget,
    );
  },
};
