// vitest globalSetup for the real-VS-Code suite: install code-server once, build and package once.
import { cleanRuns, prepare } from './harness';

export default async function setup(): Promise<void> {
  const started = Date.now();
  cleanRuns(0);
  await prepare();
  process.stderr.write(`[harness] code-server ready, extension built and packaged in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}
