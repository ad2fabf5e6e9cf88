/**
 * Installs the real agents from npm, as their users install them, on first use: each pinned package
 * into `~/.cache/spillway/agents/<name>-<version>` (outside the clone, keyed by version), once. A
 * completion marker is written last, after the install and its checks, so a cut-off install is
 * redone, never half-used. Gemini CLI is plain JavaScript; Claude Code and Codex ship their native binary as an npm optional dependency
 * (`@openai/codex-linux-x64`, `@anthropic-ai/claude-code-linux-x64`); the check below proves every
 * package came from the npm registry and the binary runs without downloading anything else.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CACHE_DIR = process.env.SPILLWAY_CACHE ?? join(homedir(), '.cache', 'spillway');

export interface AgentPackage {
  /** npm package name */
  pkg: string;
  version: string;
  /** the bin inside node_modules/.bin */
  bin: string;
  /** what `<bin> --version` prints, to prove the binary runs */
  versionText: RegExp;
  /** ships a native binary as an optional dependency (checked to be among the packages installed); default true */
  native?: boolean;
}

/** Pinned: the versions issue 11 was reported against. */
export const CLAUDE_CODE: AgentPackage = {
  pkg: '@anthropic-ai/claude-code',
  version: '2.1.330',
  bin: 'claude',
  versionText: /^2\.1\.330 \(Claude Code\)/,
};
export const CODEX: AgentPackage = { pkg: '@openai/codex', version: '0.169.0', bin: 'codex', versionText: /^codex-cli 0\.169\.0/ };
/** Gemini CLI is JavaScript only (it runs on the Node that runs it): no native package. The version issue 29 was reported against. */
export const GEMINI_CLI: AgentPackage = {
  pkg: '@google/gemini-cli',
  version: '0.61.0',
  bin: 'gemini',
  versionText: /^0\.61\.0$/,
  native: false,
};

const MARKER = '.spillway-complete';
const REGISTRY = /^https:\/\/registry\.npmjs\.org\//;

function agentDir(a: AgentPackage): string {
  return join(CACHE_DIR, 'agents', `${a.pkg.replace(/^@[^/]+\//, '')}-${a.version}`);
}

function agentBin(a: AgentPackage): string {
  return join(agentDir(a), 'node_modules', '.bin', a.bin);
}

function run(cmd: string, args: string[], cwd: string, timeoutMs: number): string {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' },
  });
  if (r.error || r.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} failed in ${cwd} (status ${r.status}${r.error ? `, ${r.error.message}` : ''}):\n${(r.stderr ?? '').slice(-2000)}`,
    );
  }
  return r.stdout;
}

/**
 * Every package installed came from registry.npmjs.org (no other download site): the lock file names
 * each with its registry integrity hash, and a `resolved` URL, when npm writes one, is the registry's
 * (npm leaves it out for the registry it was told to use, which the install below sets explicitly).
 * Returns the packages actually installed.
 */
function checkFromRegistry(dir: string): string[] {
  const lock = JSON.parse(readFileSync(join(dir, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { resolved?: string; integrity?: string }>;
  };
  const found: string[] = [];
  for (const [path, info] of Object.entries(lock.packages)) {
    if (path === '' || !existsSync(join(dir, path))) continue;
    if (info.resolved !== undefined && !REGISTRY.test(info.resolved))
      throw new Error(`${dir}: ${path} was fetched from ${info.resolved}, not the npm registry`);
    if (!info.integrity?.startsWith('sha512-')) throw new Error(`${dir}: ${path} has no registry integrity hash`);
    found.push(path);
  }
  return found;
}

/** Installs `a` if it is not installed yet; returns the path of its bin. Idempotent. */
export function ensureAgent(a: AgentPackage): string {
  const dir = agentDir(a);
  if (existsSync(join(dir, MARKER))) return agentBin(a);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, 'package.json'), JSON.stringify({ private: true, dependencies: { [a.pkg]: a.version } }, null, 2));
  run('npm', ['install', '--no-audit', '--no-fund', '--registry=https://registry.npmjs.org/'], tmp, 10 * 60_000);
  const packages = checkFromRegistry(tmp);
  if (a.native !== false && !packages.some((p) => /linux-x64|darwin|win32|linux-arm64/.test(p)))
    throw new Error(`${a.pkg}@${a.version}: no native binary package among ${packages.join(', ')}`);
  const out = run(join(tmp, 'node_modules', '.bin', a.bin), ['--version'], tmp, 60_000).trim();
  if (!a.versionText.test(out)) throw new Error(`${a.pkg}@${a.version}: --version printed ${JSON.stringify(out)}`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  writeFileSync(join(dir, MARKER), `${a.pkg}@${a.version} installed ${new Date().toISOString()}\n`);
  return agentBin(a);
}
