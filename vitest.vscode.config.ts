// The real-VS-Code suite (`npm run test:vscode`): code-server + Chromium, one test file at a time.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/vscode/**/*.test.ts'],
    globalSetup: ['test/vscode/global-setup.ts', 'test/setup/tmp.ts'],
    // a test that reloads the window waits for the extension host to start again, which on a loaded 2-core
    // machine took over 60 s ("still has the session made through the API after the reload")
    testTimeout: 180_000,
    // a file's beforeAll starts a VS Code (harness.ts launch): on a loaded 2-core machine code-server may
    // take 150 s to listen and Spillway 150 s to activate, so the hook gets both plus the install and the page
    hookTimeout: 420_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['verbose', './test/vscode/summary-reporter.ts'],
  },
});
