/**
 * The real VS Codes the project installs (code-server from npm, each into the cache outside the
 * clone, keyed by version) and which one `npm start` runs: the newest, so the demo shows every
 * feature Spillway has. One place reads the versions, from the install scripts' own lines, for
 * the test harness (harness.ts) and for scripts/start.mjs (which bundles this file).
 *
 * - scripts/install-code-server.sh: code-server 4.100.3 (VS Code 1.100) on the Node that runs us.
 * - scripts/install-code-server-chat.sh: code-server 4.139.1 (VS Code 1.139) on Node 24 from npm.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CodeServer {
  /** code-server's version, e.g. "4.139.1" */
  version: string;
  /** where it is (or will be) installed: CACHE/code-server-VERSION */
  dir: string;
  /** its entry point, run with `node` */
  entry: string;
  /** the Node it runs on: this process's, or the one its install script puts in the cache */
  node: string;
  /** the install script (idempotent: a `.complete` marker in `dir`) and its arguments */
  install: { script: string; args: string[] };
}

/** The version a script sets with `NAME=${ENV:-VERSION}` or `NAME=VERSION`. */
function scriptVersion(text: string, name: string, file: string): string {
  const m = new RegExp(`^${name}=(?:\\$\\{\\w+:-)?([0-9][\\w.-]*)\\}?`, 'm').exec(text);
  if (!m) throw new Error(`${file}: no ${name}= line with a version`);
  return m[1]!;
}

/** The code-servers the project's install scripts install, oldest first as the scripts list them. */
export function codeServers(root: string, cache: string, thisNode = process.execPath): CodeServer[] {
  const base = join(root, 'scripts/install-code-server.sh');
  const chat = join(root, 'scripts/install-code-server-chat.sh');
  const baseVersion = scriptVersion(readFileSync(base, 'utf8'), 'version', base);
  const chatText = readFileSync(chat, 'utf8');
  const chatVersion = scriptVersion(chatText, 'cs_version', chat);
  const nodeVersion = scriptVersion(chatText, 'node_version', chat);
  const at = (version: string) => {
    const dir = join(cache, `code-server-${version}`);
    return { version, dir, entry: join(dir, 'node_modules/code-server/out/node/entry.js') };
  };
  return [
    { ...at(baseVersion), node: thisNode, install: { script: base, args: [join(cache, `code-server-${baseVersion}`)] } },
    { ...at(chatVersion), node: join(cache, `node-${nodeVersion}`, 'bin/node'), install: { script: chat, args: [] } },
  ];
}

/** Compares dotted versions numerically (4.99 < 4.100). */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map((p) => parseInt(p, 10) || 0);
  const pb = b.split('.').map((p) => parseInt(p, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The code-server `npm start` runs: the newest the project installs, or the one `wanted` names
 * (SPILLWAY_CODE_SERVER, e.g. 4.100.3 to see the demo on the older VS Code).
 */
export function pickCodeServer(list: readonly CodeServer[], wanted?: string): CodeServer {
  if (list.length === 0) throw new Error('no code-server to run');
  if (wanted) {
    const found = list.find((c) => c.version === wanted);
    if (!found)
      throw new Error(`SPILLWAY_CODE_SERVER=${wanted}: the project installs code-server ${list.map((c) => c.version).join(' or ')}`);
    return found;
  }
  return [...list].sort((a, b) => compareVersions(b.version, a.version))[0]!;
}

/** Whether its install finished (the install scripts write the markers last). */
export function isInstalled(c: CodeServer): boolean {
  return existsSync(join(c.dir, '.complete')) && existsSync(c.node);
}

/** The VS Code version inside an installed code-server (its bundled VS Code's package.json), e.g. "1.139.1". */
export function vscodeVersion(c: CodeServer): string | undefined {
  try {
    const pkg = JSON.parse(readFileSync(join(c.dir, 'node_modules/code-server/lib/vscode/package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : undefined;
  } catch {
    return undefined;
  }
}
