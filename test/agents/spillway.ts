/**
 * What every real-agent test does with Spillway and the agent as processes: start `spillway proxy`
 * (the built dist/cli.js) on a free port and wait for its "listening on" line, run the agent's CLI
 * with a bound on its time, read what the proxy recorded, and read a stored output back with
 * `spillway read`.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { listSessions, readSession, type Turn } from '../../src/proxy/recording';
import type { TruncatedByAgent } from '../../src/engine/types';

export const ROOT = resolve(__dirname, '..', '..');
export const CLI = join(ROOT, 'dist', 'cli.js');
/** How long an agent's run may take before it is killed (with everything it started). */
export const AGENT_TIMEOUT_MS = 240_000;

export interface Proxy {
  url: string;
  child: ChildProcess;
  out: () => string;
  store: string;
  sessions: string;
  close(): Promise<void>;
}

/**
 * Starts `spillway proxy --port 0` with its store and recordings under `root` and the given flags
 * (the upstreams, `--answer-reads`, ...); resolves with its URL once it prints it, within 15 s.
 */
export async function startProxy(root: string, flags: string[]): Promise<Proxy> {
  const store = join(root, 'store');
  const sessions = join(root, 'sessions');
  const child = spawn(process.execPath, [CLI, 'proxy', '--port', '0', '--store', store, '--sessions', sessions, ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const url = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`spillway proxy printed no "listening on" line within 15 s:\n${out}`)), 15_000);
    child.stdout!.on('data', () => {
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        res(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`spillway proxy exited with ${code}:\n${out}`));
    });
  });
  return {
    url,
    child,
    out: () => out,
    store,
    sessions,
    close: () =>
      new Promise<void>((res) => {
        if (child.exitCode !== null) return res();
        child.once('exit', () => res());
        child.kill('SIGTERM');
        setTimeout(() => {
          child.kill('SIGKILL');
          res();
        }, 5_000);
      }),
  };
}

/** The turns the proxy recorded, every session's, in file order (after `close`, which waits for them). */
export function recordedTurns(proxy: Proxy): Turn[] {
  return listSessions(proxy.sessions).flatMap((s) => readSession(s.file));
}

/**
 * The outputs the proxy reported the agent had truncated itself, one per call: a side request (an
 * agent's own checks) may carry the same new result again.
 */
export function truncatedByCall(turns: readonly Turn[]): Map<string, TruncatedByAgent> {
  return new Map(turns.flatMap((t) => t.stats?.truncatedByAgent ?? []).map((t) => [t.callId, t]));
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs `bin args` in its own process group, killed with the group after AGENT_TIMEOUT_MS. */
export function runAgent(bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<Run> {
  const started = Date.now();
  return new Promise((res) => {
    const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => {
      stdout += d;
    });
    child.stderr!.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => {
      stderr += `\n[test] killed after ${AGENT_TIMEOUT_MS / 1000} s`;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        /* gone */
      }
    }, AGENT_TIMEOUT_MS);
    child.once('exit', (code) => {
      clearTimeout(timer);
      res({ code, stdout, stderr, ms: Date.now() - started });
    });
  });
}

/** What `spillway read HANDLE` prints from the store. */
export function spillwayRead(handle: string, store: string): string {
  return execFileSync(process.execPath, [CLI, 'read', handle, '--store', store], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}
