import { defineConfig } from 'vitest/config';

// The real-agent suite (test/agents/): installs Claude Code, Codex, OpenCode, Kilo's CLI, Qwen Code, pi and Gemini CLI from npm on first use into
// ~/.cache/spillway/agents, then runs each through `spillway proxy` (dist/cli.js). One file at a time.
export default defineConfig({
  test: {
    include: ['test/agents/**/*.test.ts'],
    globalSetup: ['test/setup/tmp.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 15 * 60_000,
  },
});
