import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/property/**/*.test.ts', 'test/webview/**/*.test.tsx', 'test/proxy/**/*.test.ts'],
    testTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/setup/build.ts', 'test/setup/tmp.ts'],
  },
});
