// Builds dist/ once before the suites that run the bundled CLI, so `npx vitest run` alone works.
import { execFileSync } from 'node:child_process';

export default function setup(): void {
  execFileSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' });
}
