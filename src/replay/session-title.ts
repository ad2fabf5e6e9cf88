/**
 * A session on disk named by what it was: the agent's own title for it (Claude Code's `summary`
 * records, Codex's thread name, pi's session name, Cline's title in its manifest), else the first
 * thing the user asked (Copilot's CLI: its first `user.message`; Qwen Code: its first `user`
 * record's parts), then the
 * project it ran in (the working directory's last segment) and the day it started:
 * `Fix the HTML export's quality issues · claude-history · Feb 2, 2026`. File names and UUIDs
 * (`randlee__claude-history-subagent-a5e7369.jsonl`, `rollout-2025-…-019ab73e….jsonl`) tell a person
 * nothing, and sessions of one project share their prefix.
 *
 * A Cline session (`<id>.messages.json`) says it in its manifest beside it (`<id>.json`: `cwd`,
 * `started_at`, `prompt`, `metadata.title`), which is read instead; an OpenCode export in the
 * session info it starts with (`title`, `directory`, `time.created`); a Continue session in its
 * first fields (`title`, unless untitled, `workspaceDirectory`, the first user message); a chat session
 * of Copilot in VS Code in its `customTitle` (the last it set), its first request's text, its
 * `creationDate`, and the folder its workspace's `workspace.json` names.
 *
 * Only the head and the tail of a file are read (a log can be hundreds of megabytes): the working
 * directory, the start and the first prompt are in the first records; an agent writes its title late
 * (a Codex rename, a pi `/name`) or first (Claude Code's summaries of a resumed session). Best effort:
 * a file in no known shape, or unreadable, is named by its file name.
 */
import { closeSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONTINUE_SESSION_HEAD } from './readers/continue';
import { COPILOT_CHAT_LOG_HEAD, COPILOT_CHAT_SESSION_HEAD } from './readers/copilot-chat';
import { OPENCODE_EXPORT_HEAD } from './readers/opencode';

/** Bytes read from each end of a session file. */
const END_BYTES = 256 * 1024;
/** Longest title or prompt kept in a name; the rest is elided. */
const MAX_WHAT = 80;

/** What a session file says about itself. */
export interface SessionAbout {
  /** the agent's own title for the session */
  title?: string;
  /** the first thing the user asked, on one line */
  prompt?: string;
  /** the working directory */
  cwd?: string;
  /** when it started (ISO 8601) */
  start?: string;
}

function ends(file: string): { head: string; tail: string } {
  const fd = openSync(file, 'r');
  try {
    const size = fstatSync(fd).size;
    const read = (at: number, n: number) => {
      const buf = Buffer.alloc(n);
      return buf.subarray(0, readSync(fd, buf, 0, n, at)).toString('utf8');
    };
    const head = read(0, Math.min(size, END_BYTES));
    return { head, tail: size > END_BYTES ? read(Math.max(END_BYTES, size - END_BYTES), Math.min(END_BYTES, size - END_BYTES)) : '' };
  } finally {
    closeSync(fd);
  }
}

/** The JSON records of some JSONL text; lines cut at either end, or not JSON, are skipped. */
function records(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (v && typeof v === 'object' && !Array.isArray(v)) out.push(v as Record<string, unknown>);
    } catch {
      /* a line cut by the end of what was read */
    }
  }
  return out;
}

const obj = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v : undefined);

/** The text a user message holds: its string content, or its text parts (not tool results). */
function userText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const parts = content.map(obj).filter((p) => p && (p.type === 'text' || p.type === 'input_text') && typeof p.text === 'string');
  return parts.length ? parts.map((p) => p!.text as string).join('\n') : undefined;
}

/** Gemini-form parts (Qwen Code's log) as text parts: `[{text}]` → `[{type: 'text', text}]`. */
function geminiParts(parts: unknown): unknown {
  return Array.isArray(parts)
    ? parts.map(obj).flatMap((p) => (p && typeof p.text === 'string' ? [{ type: 'text', text: p.text }] : []))
    : undefined;
}

/** Text an agent puts in the user's turn that the user did not write (Claude Code's command echoes, Codex's environment). */
const NOT_ASKED = /^\s*<(command-|local-command|environment_context|user_instructions|system-reminder)|^\s*Caveat: /;

/**
 * What a session file says about itself, read from its ends (see the module comment); `{}` when it is
 * in no shape known here or cannot be read.
 */
export function sessionAbout(file: string): SessionAbout {
  if (file.endsWith('.messages.json')) return clineAbout(file);
  if (file.endsWith('api_conversation_history.json')) return clineTaskAbout(file);
  let text: { head: string; tail: string };
  try {
    text = ends(file);
  } catch {
    return {};
  }
  if (OPENCODE_EXPORT_HEAD.test(text.head)) return openCodeAbout(text.head);
  if (CONTINUE_SESSION_HEAD.test(text.head)) return continueAbout(text.head);
  if (COPILOT_CHAT_LOG_HEAD.test(text.head) || COPILOT_CHAT_SESSION_HEAD.test(text.head)) return copilotChatAbout(file, text);
  const about: SessionAbout = {};
  const head = records(text.head);
  const all = [...head, ...records(text.tail)];
  for (const r of head) {
    const payload = obj(r.payload);
    // Copilot's CLI: the working directory in its `session.start` event's data
    const data = obj(r.data);
    about.cwd ??= str(r.cwd) ?? str(payload?.cwd) ?? str(obj(data?.context)?.cwd);
    about.start ??= str(r.timestamp) ?? str(payload?.timestamp);
    if (about.prompt) continue;
    if (r.type === 'user.message' && str(data?.content)) {
      about.prompt = str(data?.content);
      continue;
    }
    // Claude Code (`type: user`), pi (`type: message`, role user), Codex's own record of what the user typed
    const message = obj(r.message);
    const asked =
      (r.type === 'user' || (r.type === 'message' && message?.role === 'user')) && !r.isMeta
        ? userText(message?.content ?? geminiParts(message?.parts))
        : r.type === 'event_msg' && payload?.type === 'user_message'
          ? str(payload.message)
          : undefined;
    if (asked && !NOT_ASKED.test(asked)) about.prompt = asked;
  }
  // the agent's title: the last it wrote wins (a rename), a Claude Code summary the first of the file
  for (const r of all) {
    const payload = obj(r.payload);
    const title =
      r.type === 'summary'
        ? str(r.summary)
        : r.type === 'session_info'
          ? str(r.name)
          : r.type === 'event_msg' && payload?.type === 'thread_name_updated'
            ? str(payload.thread_name)
            : undefined;
    if (title && !(r.type === 'summary' && about.title)) about.title = title;
  }
  return about;
}

/** An OpenCode export's session info (`title`, `directory`, `time.created`), which comes before its messages; `{}` when it cannot be read. */
function openCodeAbout(head: string): SessionAbout {
  const end = head.search(/,\s*"messages"\s*:/);
  let info: Record<string, unknown> | undefined;
  try {
    info = obj(obj(JSON.parse(`${end < 0 ? head : head.slice(0, end)}}`))?.info);
  } catch {
    return {};
  }
  const about: SessionAbout = {};
  const title = str(info?.title);
  const cwd = str(info?.directory);
  const created = obj(info?.time)?.created;
  if (title) about.title = title;
  if (cwd) about.cwd = cwd;
  if (typeof created === 'number' && Number.isFinite(created)) about.start = new Date(created).toISOString();
  return about;
}

/** Continue's title for a session it has not named. */
const CONTINUE_UNTITLED = 'Untitled Session';

/** A JSON string's text as the file holds it between its quotes, decoded; undefined when it is not one (cut by a head). */
function decoded(raw: string): string | undefined {
  try {
    return JSON.parse(`"${raw}"`) as string;
  } catch {
    return undefined;
  }
}

/** A JSON string field of the head of a document, decoded; the first, or (`after`) the first after that pattern. */
function field(head: string, name: string, after = ''): string | undefined {
  const m = new RegExp(`${after}"${name}"\\s*:\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(head);
  return m ? decoded(m[1]!) : undefined;
}

/** The folder a Cline-family task ran in, as its first message's environment details name it (JSON-escaped in the file). */
const TASK_FOLDER = /# Current (?:Workspace|Working) Directory \(((?:[^)"\\]|\\.)+)\) Files/;

/**
 * The folder a Cline, Roo Code or Kilo Code task ran in, from the head of its
 * `api_conversation_history.json`; undefined when it names none. Browse Agent Sessions lists a task by it.
 */
export function clineTaskFolder(head: string): string | undefined {
  const m = TASK_FOLDER.exec(head);
  return m ? decoded(m[1]!) : undefined;
}

/**
 * The folder a Continue session ran in, from the head of its file: its `workspaceDirectory`, a path
 * (its CLI) or a `file://` URI (its VS Code extension); undefined when it names none. Browse Agent
 * Sessions lists a session by it.
 */
export function continueFolder(head: string): string | undefined {
  const dir = field(head, 'workspaceDirectory');
  if (dir === undefined || !dir.startsWith('file:')) return dir;
  try {
    return fileURLToPath(dir);
  } catch {
    return undefined;
  }
}

/** A Continue session's title (unless Continue left it untitled), folder and first prompt, from its head. */
function continueAbout(head: string): SessionAbout {
  const about: SessionAbout = {};
  const title = field(head, 'title');
  const cwd = continueFolder(head);
  const prompt = field(head, 'content', '"role"\\s*:\\s*"user"\\s*,\\s*');
  if (title && title !== CONTINUE_UNTITLED) about.title = title;
  if (cwd) about.cwd = cwd;
  if (prompt) about.prompt = prompt;
  return about;
}

/** A title Copilot's chat session sets: in the session (`"customTitle": …`) or, in its log, as a change (`"k":["customTitle"],"v": …`). */
const CHAT_TITLE = /"customTitle"\s*:\s*"((?:[^"\\]|\\.)*)"|\["customTitle"\]\s*,\s*"v"\s*:\s*"((?:[^"\\]|\\.)*)"/g;

/**
 * A chat session of Copilot in VS Code: its title (the last it set, a rename), its first prompt, when
 * it was created, and the folder its workspace's `workspace.json` (beside `chatSessions/`) names.
 */
function copilotChatAbout(file: string, text: { head: string; tail: string }): SessionAbout {
  const about: SessionAbout = {};
  const lastTitle = (t: string) =>
    [...t.matchAll(CHAT_TITLE)]
      .map((m) => decoded(m[1] ?? m[2]!))
      .filter((x) => x !== undefined)
      .pop();
  const title = lastTitle(text.tail) ?? lastTitle(text.head);
  if (title) about.title = title;
  const prompt = field(text.head, 'text', '"message"\\s*:\\s*\\{\\s*');
  if (prompt) about.prompt = prompt;
  const created = /"creationDate"\s*:\s*(\d{12,14})/.exec(text.head);
  if (created) about.start = new Date(Number(created[1])).toISOString();
  try {
    const folder = str(obj(JSON.parse(readFileSync(join(dirname(dirname(file)), 'workspace.json'), 'utf8')))?.folder);
    if (folder?.startsWith('file:')) about.cwd = fileURLToPath(folder);
  } catch {
    // no workspace.json beside it (a copied file, a multi-root workspace): no folder
  }
  return about;
}

/** A Cline session's manifest (`<id>.json` beside `<id>.messages.json`); `{}` when there is none. */
function clineAbout(file: string): SessionAbout {
  let m: Record<string, unknown> | undefined;
  try {
    m = obj(JSON.parse(readFileSync(`${file.slice(0, -'.messages.json'.length)}.json`, 'utf8')));
  } catch {
    return {};
  }
  const about: SessionAbout = {};
  const title = str(obj(m?.metadata)?.title);
  const prompt = str(m?.prompt);
  const cwd = str(m?.cwd) ?? str(m?.workspace_root);
  const start = str(m?.started_at);
  if (title && title !== prompt) about.title = title;
  if (prompt) about.prompt = prompt;
  if (cwd) about.cwd = cwd;
  if (start) about.start = start;
  return about;
}

/** A Cline, Roo Code or Kilo Code task: the task its first message states (`<task>…</task>`), and when. */
function clineTaskAbout(file: string): SessionAbout {
  let head: string;
  try {
    head = ends(file).head;
  } catch {
    return {};
  }
  const about: SessionAbout = {};
  const task = /"text"\s*:\s*"<task>((?:[^"\\]|\\.)*?)<\/task>/.exec(head);
  const prompt = task ? decoded(task[1]!)?.trim() : undefined;
  if (prompt) about.prompt = prompt;
  const ts = /"ts"\s*:\s*(\d{12,14})/.exec(head);
  if (ts) about.start = new Date(Number(ts[1])).toISOString();
  return about;
}

/** Lines of a prompt that only say where to work (`Working in worktree: /path`, `Branch: x`), not what to do. */
const WHERE_LINE = /^\s*(?:[*#>-]\s*)*(?:\*\*)?(?:working in|worktree|path|branch|cwd|directory|repo(?:sitory)?)\b[^:\n]*:/i;

/** A title or prompt on one line: Markdown marks and where-to-work lines left out, blanks collapsed, cut to MAX_WHAT. */
function oneLine(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() && !WHERE_LINE.test(l));
  const line = (lines.length ? lines : text.split('\n'))
    .join(' ')
    .replace(/\*\*|__|`|^#+\s*/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > MAX_WHAT ? `${line.slice(0, MAX_WHAT - 1)}…` : line;
}

/** The day a session started, as people write it (`Feb 2, 2026`), in the local time zone. */
function dayOf(start: string | undefined): string | undefined {
  if (!start) return undefined;
  const d = new Date(start);
  return Number.isNaN(d.getTime()) ? undefined : d.toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric' });
}

/**
 * A session's name: what it was (its title, else its first prompt), the project and the day it
 * started, `·` between them; the file's name when the file says none of them.
 */
export function sessionName(file: string, about: SessionAbout = sessionAbout(file)): string {
  const what = about.title ?? about.prompt;
  const project = about.cwd
    ?.replace(/[\\/]+$/, '')
    .split(/[\\/]/)
    .pop();
  const parts = [what ? oneLine(what) : undefined, project, dayOf(about.start)].filter(Boolean);
  return what || project ? parts.join(' · ') : basename(file);
}
