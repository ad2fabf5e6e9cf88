// The inspector's built webview bundle in real Chromium (`npm run test:browser`, which builds first).
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/browser/**/*.test.ts'],
    // each test serves synthetic sessions of up to 10,000 turns from this process: beside the VS Code suite and
    // two CPU hogs on the 2-core machine, four tests took over 60 s (unloaded: under 17 s)
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
    globalSetup: ['test/setup/system-deps.ts', 'test/setup/tmp.ts'],
  },
});
