/**
 * OpenCode's sessions for Browse Agent Sessions (src/extension/inspector/opencodeSessions.ts): the
 * binary found on the PATH or in the installer's folder, the list `opencode session list --format
 * json` prints read for the open folder (bad output named), and an export written owner-only by a
 * rename. A stand-in `opencode` script answers here; the agents suite runs the real one.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  exportOpenCodeSession,
  kiloBinary,
  openCodeBinary,
  openCodeExportPath,
  openCodeSessions,
  parseOpenCodeList,
} from '../../src/extension/inspector/opencodeSessions';

const dir = mkdtempSync(join(tmpdir(), 'sw-opencode-sessions-'));

/** A stand-in `opencode` in `bin`: `session list` prints `list`, `export <id>` a line on stderr and the export on stdout. */
function standIn(bin: string, list: string, exitCode = 0, name = 'opencode'): string {
  mkdirSync(bin, { recursive: true });
  const file = join(bin, name);
  const doc = JSON.stringify({ info: { id: 'ses_a1', directory: '/w', title: 'T' }, messages: [] });
  writeFileSync(
    file,
    `#!/bin/sh\nif [ "$1" = session ]; then printf '%s' '${list}'; exit ${exitCode}; fi\nif [ "$1" = export ]; then echo "Exporting session: $2" >&2; printf '%s' '${doc}'; exit 0; fi\necho "no such command" >&2; exit 1\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

const listed = (entries: unknown[]) => JSON.stringify(entries);

describe("OpenCode's sessions for Browse Agent Sessions", () => {
  it('finds opencode on the PATH, else in ~/.opencode/bin, else none', () => {
    const home = join(dir, 'home1');
    expect(openCodeBinary({ PATH: join(dir, 'nowhere') }, home)).toBeUndefined();
    const installed = standIn(join(home, '.opencode/bin'), '[]');
    expect(openCodeBinary({ PATH: join(dir, 'nowhere') }, home)).toBe(installed);
    const onPath = standIn(join(dir, 'path1'), '[]');
    expect(openCodeBinary({ PATH: join(dir, 'path1') }, home)).toBe(onPath);
  });

  it("finds Kilo's kilo on the PATH, else in ~/.kilo/bin (its installer's), else the one the Kilo Code extension ships, and names it when it fails", async () => {
    const home = join(dir, 'home-kilo');
    const ext = join(dir, 'kilocode.kilo-code-7.7.7');
    expect(kiloBinary({ PATH: join(dir, 'nowhere') }, home, [ext])).toBeUndefined();
    const shipped = standIn(join(ext, 'bin'), '[]', 0, 'kilo');
    expect(kiloBinary({ PATH: join(dir, 'nowhere') }, home, [ext])).toBe(shipped);
    const installed = standIn(join(home, '.kilo/bin'), '[]', 0, 'kilo');
    expect(kiloBinary({ PATH: join(dir, 'nowhere') }, home, [ext])).toBe(installed);
    const onPath = standIn(join(dir, 'path-kilo'), 'boom', 2, 'kilo');
    expect(kiloBinary({ PATH: join(dir, 'path-kilo') }, home, [ext])).toBe(onPath);
    await expect(openCodeSessions(onPath, dir, {})).rejects.toThrow(/`kilo session list` failed/);
  });

  it("keeps the folder's sessions, newest first, and names what is wrong with a list it cannot read", () => {
    const list = listed([
      { id: 'ses_old', title: 'Old', updated: 1_000, created: 500, projectId: 'p', directory: '/w/' },
      { id: 'ses_other', title: 'Elsewhere', updated: 3_000, directory: '/elsewhere' },
      { id: 'ses_new', title: 'New', updated: 2_000, directory: '/w' },
    ]);
    expect(parseOpenCodeList(list, '/w')).toEqual([
      { id: 'ses_new', title: 'New', modified: new Date(2_000).toISOString(), directory: '/w' },
      { id: 'ses_old', title: 'Old', modified: new Date(1_000).toISOString(), directory: '/w/' },
    ]);
    expect(parseOpenCodeList('', '/w')).toEqual([]);
    expect(() => parseOpenCodeList('Session ID  Title', '/w')).toThrow(/did not print JSON/);
    expect(() => parseOpenCodeList(listed([{ title: 'no id' }]), '/w')).toThrow(/at \[0\.id\]/);
  });

  it('lists through the binary, and says what it printed when it fails', async () => {
    const ok = standIn(join(dir, 'path2'), listed([{ id: 'ses_a1', title: 'T', updated: 5, directory: dir }]));
    expect((await openCodeSessions(ok, dir, {})).map((s) => s.id)).toEqual(['ses_a1']);
    const failing = standIn(join(dir, 'path3'), 'boom', 3);
    await expect(openCodeSessions(failing, dir, {})).rejects.toThrow(/`opencode session list` failed/);
  });

  it('writes an export owner-only, by a rename, where the list said it would be', async () => {
    const bin = standIn(join(dir, 'path4'), '[]');
    const out = join(dir, 'exports');
    const file = await exportOpenCodeSession(bin, 'ses_a1', dir, out, {});
    expect(file).toBe(openCodeExportPath(out, 'ses_a1'));
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ info: { id: 'ses_a1' } });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(out).mode & 0o777).toBe(0o700);
    expect(readdirSync(out)).toEqual(['ses_a1.json']);
    expect(() => openCodeExportPath(out, '../x')).toThrow(/not an OpenCode session id/);
  });
});
