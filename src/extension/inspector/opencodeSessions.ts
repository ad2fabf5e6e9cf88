/**
 * OpenCode's sessions, and Kilo's (its fork: Kilo's CLI and the Kilo Code extension from 7 on, which
 * runs that CLI and shares its database), for Spillway: Browse Agent Sessions. OpenCode (1.18) keeps them in a SQLite
 * database the extension host cannot open (no `node:sqlite` before Node 22.5), so Spillway asks
 * OpenCode itself: `opencode session list --format json` in the workspace folder lists them (each
 * with the `directory` it ran in, checked against the folder), and `opencode export <id>` prints the
 * one picked, which is written to Spillway's own storage (owner-only, temp file then rename) and
 * replayed like any transcript (src/replay/readers/opencode.ts). No `vscode` here.
 *
 * The binary: `opencode` on the PATH, else where OpenCode's installer puts it (`~/.opencode/bin`);
 * `kilo` on the PATH, else `~/.kilo/bin`, else the one the Kilo Code extension ships (`bin/kilo`).
 * Kilo's CLI takes the same commands and prints the same JSON (7.7).
 * No binary, or one that fails, lists nothing and says why; it never stops the other agents' list.
 */
import { execFile } from 'node:child_process';
import { renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, delimiter, join, resolve } from 'node:path';
import { z } from 'zod';
import { mkdirPrivate, PRIVATE_FILE_MODE } from '../../store/private';

/** How long OpenCode may take to list or export (it starts a Bun binary and opens its database). */
const OPENCODE_TIMEOUT_MS = 60_000;
/** The largest export read back from OpenCode. */
const MAX_EXPORT_BYTES = 512 * 1024 * 1024;

/** One session as `opencode session list --format json` gives it (1.18.33). */
const listedSession = z.object({
  id: z.string().min(1),
  title: z.string().optional(),
  updated: z.number().optional(),
  created: z.number().optional(),
  directory: z.string().optional(),
});

export interface OpenCodeSession {
  id: string;
  title?: string;
  /** ISO 8601: when OpenCode last wrote to it */
  modified: string;
  directory: string;
}

/** The first of `dirs` that holds the binary `name` (`name.exe` on Windows). */
function binaryIn(dirs: readonly string[], name: string): string | undefined {
  for (const dir of dirs) {
    const bin = join(dir, process.platform === 'win32' ? `${name}.exe` : name);
    try {
      if (statSync(bin).isFile()) return bin;
    } catch {
      /* not there */
    }
  }
  return undefined;
}

/** The `opencode` binary: on the PATH, else in the installer's `~/.opencode/bin`; undefined when there is none. */
export function openCodeBinary(env: NodeJS.ProcessEnv, home: string): string | undefined {
  return binaryIn([...(env.PATH ?? '').split(delimiter).filter(Boolean), join(home, '.opencode', 'bin')], 'opencode');
}

/**
 * The `kilo` binary (Kilo's CLI, OpenCode's fork): on the PATH, else in `extensionDirs`, the folders
 * of the Kilo Code extension (7 on), which ships it as `bin/kilo` and runs it as its server, over the
 * same database; undefined when there is none.
 */
export function kiloBinary(env: NodeJS.ProcessEnv, home: string, extensionDirs: readonly string[] = []): string | undefined {
  return binaryIn(
    [...(env.PATH ?? '').split(delimiter).filter(Boolean), join(home, '.kilo', 'bin'), ...extensionDirs.map((d) => join(d, 'bin'))],
    'kilo',
  );
}

/** The CLI a binary is, as its messages name it (`opencode`, `kilo`). */
const cliName = (bin: string) => basename(bin).replace(/\.exe$/i, '');

function run(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, maxBuffer = 16 * 1024 * 1024): Promise<string> {
  return new Promise((res, rej) => {
    execFile(bin, args, { cwd, env, timeout: OPENCODE_TIMEOUT_MS, maxBuffer, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) {
        const why = (stderr || err.message).trim().split('\n').slice(-3).join(' ').slice(0, 400);
        rej(new Error(`\`${cliName(bin)} ${args[0]}${args[1] ? ` ${args[1]}` : ''}\` failed: ${why}`));
      } else res(stdout);
    });
  });
}

/**
 * The sessions `list` (the JSON `opencode session list --format json` printed) holds for `folder`:
 * those whose `directory` is the folder, newest first. Throws an Error naming what was wrong.
 */
export function parseOpenCodeList(list: string, folder: string, cli = 'opencode'): OpenCodeSession[] {
  let json: unknown;
  try {
    json = JSON.parse(list.trim() === '' ? '[]' : list);
  } catch {
    throw new Error(`\`${cli} session list --format json\` did not print JSON (it printed ${JSON.stringify(list.slice(0, 80))})`);
  }
  const parsed = z.array(listedSession).safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`\`${cli} session list --format json\` printed an unexpected list: at [${issue.path.join('.')}] ${issue.message}`);
  }
  const want = resolve(folder);
  return parsed.data
    .filter((s) => s.directory !== undefined && resolve(s.directory) === want)
    .map((s) => ({
      id: s.id,
      ...(s.title ? { title: s.title } : {}),
      modified: new Date(s.updated ?? s.created ?? 0).toISOString(),
      directory: s.directory!,
    }))
    .sort((a, b) => b.modified.localeCompare(a.modified));
}

/** OpenCode's sessions of `folder`, as OpenCode lists them (see the module comment). */
export async function openCodeSessions(bin: string, folder: string, env: NodeJS.ProcessEnv): Promise<OpenCodeSession[]> {
  return parseOpenCodeList(await run(bin, ['session', 'list', '--format', 'json'], folder, env), folder, cliName(bin));
}

/** Where the export of session `id` is kept under `dir`. */
export function openCodeExportPath(dir: string, id: string): string {
  if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new Error(`not an OpenCode session id: ${JSON.stringify(id)}`);
  return join(dir, `${id}.json`);
}

/**
 * Exports session `id` with `opencode export` into `dir` (created owner-only), written to a temp
 * file and renamed, readable by its owner only; returns its path.
 */
export async function exportOpenCodeSession(bin: string, id: string, folder: string, dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const dest = openCodeExportPath(dir, id);
  const text = await run(bin, ['export', id], folder, env, MAX_EXPORT_BYTES);
  const start = text.indexOf('{');
  if (start < 0) throw new Error(`\`${cliName(bin)} export ${id}\` printed no session (it printed ${JSON.stringify(text.slice(0, 80))})`);
  mkdirPrivate(dir);
  const tmp = `${dest}.${process.pid}.tmp`;
  writeFileSync(tmp, text.slice(start), { mode: PRIVATE_FILE_MODE });
  renameSync(tmp, dest);
  return dest;
}
