// Gives the run its own temporary folder and removes it at the end: tests make their folders with
// mkdtemp under os.tmpdir(), which reads TMPDIR, and the workers inherit it. A test that forgets to
// remove what it made leaves nothing behind on the machine (before this, a day of runs left hundreds).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'spillway-test-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
  };
}
