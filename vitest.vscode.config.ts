// The real-VS-Code suite (`npm run test:vscode`): code-server + Chromium, one test file at a time.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/vscode/**/*.test.ts'],
    globalSetup: ['test/vscode/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    fileParallelism: false,
    reporters: ['verbose', './test/vscode/summary-reporter.ts'],
  },
});
