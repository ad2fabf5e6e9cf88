// Prints one closing line for the real-VS-Code suite: how many tests passed, failed and were
// skipped, and how long the run took, so `npm run test:vscode | tail -1` is the verdict.
import type { Reporter, TestModule } from 'vitest/node';

export default class SummaryReporter implements Reporter {
  private started = Date.now();

  onTestRunStart(): void {
    this.started = Date.now();
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const m of modules) {
      let failedHere = 0;
      for (const t of m.children.allTests()) {
        const state = t.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else skipped++;
      }
      // a file whose setup failed (VS Code did not start) counts as a failure even with no failed test
      if (m.state() === 'failed' && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    failed += errors.length;
    const seconds = ((Date.now() - this.started) / 1000).toFixed(0);
    process.stdout.write(`\ntest:vscode: ${passed} passed, ${failed} failed, ${skipped} skipped (${modules.length} files, ${seconds} s)\n`);
  }
}
