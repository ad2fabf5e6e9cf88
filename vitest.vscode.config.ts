// The real-VS-Code suite (`npm run test:vscode`): code-server + Chromium, one test file at a time.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/vscode/**/*.test.ts'],
    globalSetup: ['test/vscode/global-setup.ts'],
    testTimeout: 60_000,
    // a file's beforeAll starts a VS Code (harness.ts launch): on a loaded 2-core machine activation
    // alone may take 150 s, so the hook gets that plus the install and the page load
    hookTimeout: 300_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['verbose', './test/vscode/summary-reporter.ts'],
  },
});
