// vitest globalSetup for the browser suite: Debian's Chromium must be there before the bundle is
// driven in it (scripts/install-system-deps.sh installs it when run as root, and says what is
// missing otherwise).
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export default function setup(): void {
  const script = join(resolve(__dirname, '../..'), 'scripts/install-system-deps.sh');
  const r = spawnSync('bash', [script], { stdio: 'inherit', timeout: 15 * 60_000 });
  if (r.status !== 0)
    throw new Error(`${script} failed (${r.error?.message ?? `exit ${r.status}`}): the browser suite needs Debian's chromium`);
}
