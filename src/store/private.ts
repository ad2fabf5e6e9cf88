/**
 * Owner-only permissions for everything Spillway keeps on disk.
 *
 * Tool outputs hold whatever an agent printed: `.env` files, tokens in logs, private code. The
 * store, its index, the proxy's recordings (`sessions/`), the projected records and the inspector's
 * archive are therefore created owner-only on POSIX (files PRIVATE_FILE_MODE, folders
 * PRIVATE_DIR_MODE), and a store written by an older version (0644 files, 0755 folders, readable by
 * every local user) is tightened when it is opened (`tightenPrivate`), with one log line saying so.
 *
 * Windows has no POSIX modes: files inherit the ACLs of the per-user profile folders they live in
 * (VS Code's storage under %APPDATA%), which already keep other users out, so nothing is changed there.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** rw for the owner only: other local users must not read tool outputs. */
export const PRIVATE_FILE_MODE = 0o600;
/** rwx for the owner only: a folder others can list leaks handles, tool names and sizes. */
export const PRIVATE_DIR_MODE = 0o700;
/** Permission bits that give group or others any access: what tightening removes. */
const SHARED_BITS = 0o077;
/** The walk yields to the event loop after this many entries, so a large store never stalls the editor. */
const TIGHTEN_SLICE = 256;

/** POSIX modes mean something here (everywhere but Windows, which keeps its profile ACLs). */
const POSIX_MODES = process.platform !== 'win32';

/** Creates `dir` (and missing parents) owner-only. */
export function mkdirPrivate(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** `mkdirPrivate`, asynchronously. */
export async function mkdirPrivateAsync(dir: string): Promise<void> {
  await fs.promises.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

export interface Tightened {
  files: number;
  folders: number;
}

/**
 * Removes group and other access from each of `roots` and everything under it (files to 0600,
 * folders to 0700, or tighter when they already are), asynchronously and in slices. Missing roots
 * are skipped; symbolic links are not followed. Resolves with how many entries were changed, and
 * logs one line when any was. Never throws: a file it cannot change is reported in that line.
 */
export async function tightenPrivate(roots: readonly string[], log: (line: string) => void = () => {}): Promise<Tightened> {
  const done: Tightened = { files: 0, folders: 0 };
  if (!POSIX_MODES) return done;
  const failed: string[] = [];
  let seen = 0;
  const visit = async (entry: string): Promise<void> => {
    if (++seen % TIGHTEN_SLICE === 0) await new Promise<void>((r) => setImmediate(r));
    const st = await fs.promises.lstat(entry).catch(() => undefined);
    if (!st || st.isSymbolicLink()) return;
    const dir = st.isDirectory();
    if ((st.mode & SHARED_BITS) !== 0) {
      const mode = (st.mode & 0o777 & ~SHARED_BITS) | (dir ? PRIVATE_DIR_MODE : 0);
      try {
        await fs.promises.chmod(entry, mode);
        if (dir) done.folders++;
        else done.files++;
      } catch (e) {
        failed.push(`${entry} (${(e as Error).message})`);
      }
    }
    if (!dir) return;
    const names = await fs.promises.readdir(entry).catch(() => [] as string[]);
    for (const name of names) await visit(path.join(entry, name));
  };
  for (const root of roots) await visit(path.resolve(root));
  if (done.files + done.folders > 0 || failed.length) {
    log(
      `made Spillway's files private to their owner: ${done.files} file(s) set to 0600 and ${done.folders} folder(s) to 0700 ` +
        `under ${roots.join(', ')}` +
        (failed.length ? `; could not change ${failed.length}: ${failed.slice(0, 3).join(', ')}${failed.length > 3 ? ', …' : ''}` : ''),
    );
  }
  return done;
}
