/**
 * Where agents keep their sessions on disk, and which of them belong to a workspace folder, for
 * Spillway: Browse Agent Sessions. No `vscode` here, so it is unit-tested on a fake home folder.
 *
 * - Claude Code: `~/.claude/projects/<cwd with every / (and every other character that is not a
 *   letter or digit) replaced by ->/<session>.jsonl`; the sub-agents a session started keep their own
 *   transcripts in `<session>/subagents/*.jsonl` next to it, listed right under their parent.
 * - Codex CLI: `~/.codex/sessions/<yyyy>/<mm>/<dd>/rollout-*.jsonl`, one file per session, whose
 *   first record (`session_meta`) names the `cwd` it ran in.
 * - Gemini CLI: `~/.gemini/tmp/<project>/chats/session-*.jsonl` (older versions `session-*.json`),
 *   under `$GEMINI_CLI_HOME` instead of the home folder when that is set. `<project>` is a short name
 *   (0.5x on) whose `.project_root` file holds the folder it stands for (and `~/.gemini/projects.json`
 *   maps folder to name), or, in older versions, the SHA-256 of the folder's path.
 * - GitHub Copilot's CLI: `~/.copilot/session-state/<session>/events.jsonl`, whose first record
 *   (`session.start`) names the `cwd` it ran in (`data.context.cwd`). A sub-agent (its `task` tool)
 *   writes its conversation into the same log, after a `subagent.started` event naming the call: each
 *   is listed under the session, by that call's id (`instance`).
 * - Qwen Code: `~/.qwen/projects/<cwd with every character that is not a letter or digit replaced by
 *   ->/chats/<session>.jsonl`, whose records name the `cwd` (checked).
 * - pi coding agent: `~/.pi/agent/sessions/--<cwd, its first / left out and every / \\ : replaced by
 *   ->--/*.jsonl` (`$PI_CODING_AGENT_DIR` in place of `~/.pi/agent` when set), whose `session` header
 *   names the `cwd` (checked: two folders can encode alike).
 * - Continue (its CLI and its VS Code extension): `~/.continue/sessions/<session>.json`
 *   (`$CONTINUE_GLOBAL_DIR` in place of `~/.continue`), whose `workspaceDirectory` (a path, or from
 *   the extension a `file://` URI) names the folder; `sessions.json` there is its index, not a session.
 * - Cline (its CLI, and its VS Code extension since it runs on Cline's SDK):
 *   `~/.cline/data/sessions/<session>/<session>.messages.json` (`$CLINE_DATA_DIR`, else
 *   `$CLINE_DIR/data`, in place of `~/.cline/data` when set), beside the session's manifest
 *   `<session>.json`, which names the `cwd` it ran in (and `workspace_root`). Other `*.messages.json`
 *   files of the folder are the conversations of agents it started, listed under it.
 * - GitHub Copilot's chat in VS Code (agent, ask and edit modes): `<VS Code's workspace storage for
 *   the open folder>/chatSessions/<session>.jsonl` (1.106 on; `.json` before), all of them the
 *   folder's; one that never sent a prompt (no `requestId`) is not listed.
 * - Cline's extension before its SDK, Roo Code and Kilo Code before 7: `<VS Code's global storage>/<extension
 *   id>/tasks/<task>/api_conversation_history.json` (`saoudrizwan.claude-dev`,
 *   `rooveterinaryinc.roo-cline`, `kilocode.kilo-code`), whose first message's environment details
 *   name the folder (`# Current Workspace Directory (<path>) Files`, `Working` in Cline's).
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import { join, resolve } from 'node:path';
import { supersededByChatLog } from '../../replay/readers/copilot-chat';
import { clineTaskFolder, continueFolder } from '../../replay/session-title';

export interface AgentSessionFile {
  agent:
    | 'claude-code'
    | 'codex'
    | 'gemini-cli'
    | 'copilot-cli'
    | 'copilot-chat'
    | 'cline'
    | 'cline-extension'
    | 'roo-code'
    | 'kilo-code'
    | 'pi'
    | 'qwen-code'
    | 'continue'
    | 'opencode';
  file: string;
  bytes: number;
  /** ISO 8601 modification time */
  modified: string;
  /** for a sub-agent's transcript, the file of the session that started it */
  parent?: string;
  /**
   * a sub-agent written into its parent's file (Copilot's CLI), replayed with `--instance`: the id
   * of the call that started it (`file` is then the parent's)
   */
  instance?: string;
  /** the sub-agent's name, as the log gives it (an OpenCode session's title) */
  name?: string;
  /**
   * an OpenCode session (in OpenCode's database), or Kilo Code 7's (agent `kilo-code`, in Kilo's): its
   * id; `file` is where its export is written when picked (opencodeSessions.ts)
   */
  opencodeId?: string;
}

/** Bytes read from the start of a Codex rollout or a Copilot CLI log to find the line naming its cwd. */
const META_HEAD_BYTES = 64 * 1024;
/** Folders visited under ~/.codex/sessions at most (years × months × days stay far below). */
const MAX_DIRS = 20_000;

/** The folder names Claude Code may have used for `cwd` (it replaced `/`, and in newer versions every non-alphanumeric). */
export function claudeProjectNames(cwd: string): string[] {
  const abs = resolve(cwd);
  return [...new Set([abs.replace(/[\\/]/g, '-'), abs.replace(/[^A-Za-z0-9]/g, '-')])];
}

function stat(file: string): { bytes: number; modified: string } | undefined {
  try {
    const s = fs.statSync(file);
    return s.isFile() ? { bytes: s.size, modified: s.mtime.toISOString() } : undefined;
  } catch {
    return undefined;
  }
}

/** The names in a folder; none when it does not exist or cannot be read (an agent never ran there). */
function namesIn(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function claudeSessions(home: string, cwd: string): AgentSessionFile[] {
  const out: AgentSessionFile[] = [];
  for (const name of claudeProjectNames(cwd)) {
    const dir = join(home, '.claude', 'projects', name);
    for (const n of namesIn(dir)) {
      if (!n.endsWith('.jsonl')) continue;
      const file = join(dir, n);
      const s = stat(file);
      if (!s) continue;
      out.push({ agent: 'claude-code', file, ...s });
      const subDir = join(dir, n.slice(0, -'.jsonl'.length), 'subagents');
      for (const sub of namesIn(subDir).sort()) {
        if (!sub.endsWith('.jsonl')) continue;
        const subFile = join(subDir, sub);
        const ss = stat(subFile);
        if (ss) out.push({ agent: 'claude-code', file: subFile, ...ss, parent: file });
      }
    }
  }
  return out;
}

/** The first `bytes` of a file as text; '' when it cannot be read. */
function head(file: string, bytes = META_HEAD_BYTES): string {
  try {
    const fd = fs.openSync(file, 'r');
    try {
      const buf = Buffer.alloc(bytes);
      const n = fs.readSync(fd, buf, 0, bytes, 0);
      return buf.subarray(0, n).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    return '';
  }
}

/** The cwd the first lines of a log name, as `pick` finds it in one record. */
function cwdOf(file: string, pick: (record: Record<string, unknown>) => unknown): string | undefined {
  for (const line of head(file).split('\n').slice(0, 20)) {
    try {
      const cwd = pick(JSON.parse(line) as Record<string, unknown>);
      if (typeof cwd === 'string') return cwd;
    } catch {
      /* a cut-off line at the end of the head */
    }
  }
  return undefined;
}

function codexSessions(home: string, cwd: string): AgentSessionFile[] {
  const root = join(home, '.codex', 'sessions');
  const want = resolve(cwd);
  const out: AgentSessionFile[] = [];
  const stack = [root];
  let visited = 0;
  while (stack.length && visited++ < MAX_DIRS) {
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile() && /^rollout-.*\.jsonl$/.test(e.name)) {
        const c = cwdOf(p, (r) => (r.type === 'session_meta' ? (r.payload as { cwd?: unknown } | undefined)?.cwd : undefined));
        if (c === undefined || resolve(c) !== want) continue;
        const s = stat(p);
        if (s) out.push({ agent: 'codex', file: p, ...s });
      }
    }
  }
  return out;
}

/** The `~/.gemini/tmp` folders that hold a folder's Gemini CLI chats (see the module comment). */
function geminiProjectDirs(geminiHome: string, cwd: string): string[] {
  const want = resolve(cwd);
  const tmp = join(geminiHome, '.gemini', 'tmp');
  const names = namesIn(tmp);
  const hash = createHash('sha256').update(want).digest('hex');
  return names
    .filter((n) => {
      if (n === hash) return true;
      try {
        return resolve(fs.readFileSync(join(tmp, n, '.project_root'), 'utf8').trim()) === want;
      } catch {
        return false;
      }
    })
    .map((n) => join(tmp, n, 'chats'));
}

function geminiSessions(geminiHome: string, cwd: string): AgentSessionFile[] {
  const out: AgentSessionFile[] = [];
  for (const dir of geminiProjectDirs(geminiHome, cwd)) {
    for (const n of namesIn(dir)) {
      if (!/^session-.*\.jsonl?$/.test(n)) continue;
      const file = join(dir, n);
      const s = stat(file);
      if (s) out.push({ agent: 'gemini-cli', file, ...s });
    }
  }
  return out;
}

function copilotSessions(home: string, cwd: string): AgentSessionFile[] {
  const root = join(home, '.copilot', 'session-state');
  const want = resolve(cwd);
  const out: AgentSessionFile[] = [];
  for (const n of namesIn(root)) {
    const file = join(root, n, 'events.jsonl');
    const s = stat(file);
    if (!s) continue;
    const c = cwdOf(file, (r) =>
      r.type === 'session.start' ? (r.data as { context?: { cwd?: unknown } } | undefined)?.context?.cwd : undefined,
    );
    if (c === undefined || resolve(c) !== want) continue;
    out.push({ agent: 'copilot-cli', file, ...s });
    for (const sub of copilotSubAgents(file)) out.push({ agent: 'copilot-cli', file, ...s, parent: file, ...sub });
  }
  return out;
}

/** Logs read whole for their sub-agents at most; a larger one is listed without them. */
const MAX_SUBAGENT_SCAN_BYTES = 256 * 1024 * 1024;

/** The sub-agents a Copilot CLI log holds: each `subagent.started` event's call id and agent name. */
function copilotSubAgents(file: string): Array<{ instance: string; name?: string }> {
  let text: string;
  try {
    if (fs.statSync(file).size > MAX_SUBAGENT_SCAN_BYTES) return [];
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  const out: Array<{ instance: string; name?: string }> = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"subagent.started"')) continue;
    try {
      const r = JSON.parse(line) as { type?: unknown; data?: { toolCallId?: unknown; agentDisplayName?: unknown; agentName?: unknown } };
      const id = r.data?.toolCallId;
      if (r.type !== 'subagent.started' || typeof id !== 'string' || out.some((o) => o.instance === id)) continue;
      const name = typeof r.data?.agentDisplayName === 'string' ? r.data.agentDisplayName : r.data?.agentName;
      out.push({ instance: id, ...(typeof name === 'string' ? { name } : {}) });
    } catch {
      /* a line cut short */
    }
  }
  return out;
}

function qwenSessions(home: string, cwd: string): AgentSessionFile[] {
  const want = resolve(cwd);
  const out: AgentSessionFile[] = [];
  for (const name of claudeProjectNames(cwd)) {
    const dir = join(home, '.qwen', 'projects', name, 'chats');
    for (const n of namesIn(dir)) {
      if (!n.endsWith('.jsonl')) continue;
      const file = join(dir, n);
      const s = stat(file);
      if (!s) continue;
      const c = cwdOf(file, (r) => r.cwd);
      if (c !== undefined && resolve(c) === want) out.push({ agent: 'qwen-code', file, ...s });
    }
  }
  return out;
}

/** Where pi keeps its sessions and settings: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
export function piAgentDir(home: string, env: Record<string, string | undefined> = {}): string {
  return env.PI_CODING_AGENT_DIR ? env.PI_CODING_AGENT_DIR.replace(/^~(?=$|[\\/])/, home) : join(home, '.pi', 'agent');
}

function piSessions(agentDir: string, cwd: string): AgentSessionFile[] {
  const want = resolve(cwd);
  const dir = join(agentDir, 'sessions', `--${want.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`);
  const out: AgentSessionFile[] = [];
  for (const n of namesIn(dir)) {
    if (!n.endsWith('.jsonl')) continue;
    const file = join(dir, n);
    const s = stat(file);
    if (!s) continue;
    const c = cwdOf(file, (r) => (r.type === 'session' ? r.cwd : undefined));
    if (c !== undefined && resolve(c) === want) out.push({ agent: 'pi', file, ...s });
  }
  return out;
}

/** Where Cline keeps its data: `$CLINE_DATA_DIR`, else `$CLINE_DIR/data`, else `~/.cline/data`. */
export function clineDataDir(home: string, env: Record<string, string | undefined> = {}): string {
  return env.CLINE_DATA_DIR || (env.CLINE_DIR ? join(env.CLINE_DIR, 'data') : join(home, '.cline', 'data'));
}

function clineSessions(dataDir: string, cwd: string): AgentSessionFile[] {
  const root = join(dataDir, 'sessions');
  const want = resolve(cwd);
  const out: AgentSessionFile[] = [];
  for (const n of namesIn(root)) {
    let manifest: { cwd?: unknown; workspace_root?: unknown };
    try {
      manifest = JSON.parse(fs.readFileSync(join(root, n, `${n}.json`), 'utf8')) as typeof manifest;
    } catch {
      continue; // no manifest (yet), or not Cline's
    }
    const dirs = [manifest.cwd, manifest.workspace_root].filter((d): d is string => typeof d === 'string');
    if (!dirs.some((d) => resolve(d) === want)) continue;
    const file = join(root, n, `${n}.messages.json`);
    const s = stat(file);
    if (!s) continue;
    out.push({ agent: 'cline', file, ...s });
    for (const o of namesIn(join(root, n)).sort()) {
      const sub = join(root, n, o);
      if (!o.endsWith('.messages.json') || sub === file) continue;
      const ss = stat(sub);
      if (ss) out.push({ agent: 'cline', file: sub, ...ss, parent: file });
    }
  }
  return out;
}

/** The Cline-family extensions by the folder their global storage has, and how they are listed. */
const CLINE_FAMILY: readonly (readonly [string, AgentSessionFile['agent']])[] = [
  ['saoudrizwan.claude-dev', 'cline-extension'],
  ['rooveterinaryinc.roo-cline', 'roo-code'],
  ['kilocode.kilo-code', 'kilo-code'],
];
/**
 * Bytes read from the start of a Cline-family task history to find the folder its first message
 * names, when the usual head does not hold it (files attached to the first prompt come before it).
 */
const TASK_HEAD_BYTES = 256 * 1024;

/** A folder path as compared across platforms: separators alike, no trailing one; a Windows path without case. */
function samePath(a: string, b: string): boolean {
  const norm = (p: string) => {
    const q = p.replace(/\\/g, '/').replace(/\/+$/, '');
    return /^[A-Za-z]:\//.test(q) ? q.toLowerCase() : q;
  };
  return norm(a) === norm(b);
}

/**
 * The task histories of Cline's extension before its SDK, Roo Code and Kilo Code under VS Code's
 * global storage folder `globalStorage` whose first message names `cwd` as the folder it ran in.
 */
function clineTaskSessions(globalStorage: string, cwd: string): AgentSessionFile[] {
  const want = resolve(cwd);
  const out: AgentSessionFile[] = [];
  for (const [id, agent] of CLINE_FAMILY) {
    const root = join(globalStorage, id, 'tasks');
    for (const n of namesIn(root)) {
      const file = join(root, n, 'api_conversation_history.json');
      const s = stat(file);
      if (!s) continue;
      // most tasks name it in the first few kilobytes: the longer head only for the others
      const folder = clineTaskFolder(head(file)) ?? (s.bytes > META_HEAD_BYTES ? clineTaskFolder(head(file, TASK_HEAD_BYTES)) : undefined);
      if (folder !== undefined && (samePath(folder, want) || samePath(folder, cwd))) out.push({ agent, file, ...s });
    }
  }
  return out;
}

/**
 * The chat sessions of Copilot in VS Code kept in `workspaceStorage`, the open folder's own storage
 * folder (where VS Code gives every extension its `storageUri`). A session's log and its older whole
 * file may both be there after VS Code converted it: the log is listed.
 */
function copilotChatSessions(workspaceStorage: string): AgentSessionFile[] {
  const root = join(workspaceStorage, 'chatSessions');
  const names = namesIn(root);
  const logs = new Set(names.filter((n) => n.endsWith('.jsonl')));
  const out: AgentSessionFile[] = [];
  for (const n of names) {
    const listed = logs.has(n) || (n.endsWith('.json') && !supersededByChatLog(n, (log) => logs.has(log)));
    if (!listed) continue;
    const file = join(root, n);
    const s = stat(file);
    // a chat opened and never sent holds no request
    if (!s || (s.bytes <= META_HEAD_BYTES && !head(file).includes('"requestId"'))) continue;
    out.push({ agent: 'copilot-chat', file, ...s });
  }
  return out;
}

/** Where Continue keeps its data: `$CONTINUE_GLOBAL_DIR`, else `~/.continue`. */
export function continueDir(home: string, env: Record<string, string | undefined> = {}): string {
  return env.CONTINUE_GLOBAL_DIR || join(home, '.continue');
}

function continueSessions(globalDir: string, cwd: string): AgentSessionFile[] {
  const root = join(globalDir, 'sessions');
  const want = resolve(cwd);
  const out: AgentSessionFile[] = [];
  for (const n of namesIn(root)) {
    if (!n.endsWith('.json') || n === 'sessions.json') continue;
    const file = join(root, n);
    const s = stat(file);
    if (!s) continue;
    // the session's id, title and folder come before its history
    const folder = continueFolder(head(file, 4096));
    if (folder !== undefined && resolve(folder) === want) out.push({ agent: 'continue', file, ...s });
  }
  return out;
}

const newestFirst = (a: AgentSessionFile, b: AgentSessionFile): number =>
  b.modified.localeCompare(a.modified) || a.file.localeCompare(b.file);

/**
 * The Claude Code, Codex, Gemini CLI, Copilot CLI, Copilot chat, Cline, Roo Code, Kilo Code, pi, Qwen Code and Continue sessions of a workspace folder (OpenCode's:
 * opencodeSessions.ts), newest first,
 * each followed by its sub-agents (newest first). `geminiHome` is where Gemini CLI keeps `.gemini`
 * (`$GEMINI_CLI_HOME`, else `home`); `clineData` where Cline keeps its data (clineDataDir); `piDir` pi's
 * agent folder (piAgentDir); `continueGlobal` Continue's (continueDir); `globalStorage` VS Code's
 * global storage folder, where Cline's extension before its SDK, Roo Code and Kilo Code keep their
 * tasks (none looked for when absent); `workspaceStorage` the open folder's own storage folder,
 * where Copilot's chat keeps its sessions (none looked for when absent).
 */
export function agentSessions(
  home: string,
  cwd: string,
  geminiHome = home,
  clineData = clineDataDir(home),
  piDir = piAgentDir(home),
  continueGlobal = continueDir(home),
  globalStorage?: string,
  workspaceStorage?: string,
): AgentSessionFile[] {
  const all = [
    ...claudeSessions(home, cwd),
    ...codexSessions(home, cwd),
    ...geminiSessions(geminiHome, cwd),
    ...copilotSessions(home, cwd),
    ...clineSessions(clineData, cwd),
    ...piSessions(piDir, cwd),
    ...qwenSessions(home, cwd),
    ...continueSessions(continueGlobal, cwd),
    ...(globalStorage !== undefined ? clineTaskSessions(globalStorage, cwd) : []),
    ...(workspaceStorage !== undefined ? copilotChatSessions(workspaceStorage) : []),
  ];
  const children = new Map<string, AgentSessionFile[]>();
  for (const f of all) if (f.parent !== undefined) children.set(f.parent, [...(children.get(f.parent) ?? []), f]);
  const out: AgentSessionFile[] = [];
  for (const f of all.filter((x) => x.parent === undefined).sort(newestFirst)) {
    out.push(f, ...(children.get(f.file) ?? []).sort(newestFirst));
  }
  return out;
}
