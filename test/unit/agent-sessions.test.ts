/**
 * Browse Agent Sessions' file finder on a fake home folder: Claude Code sessions, their sub-agents'
 * transcripts (`<session>/subagents/*.jsonl`) listed right under the session that started them,
 * Gemini CLI chats, Copilot CLI logs, Copilot chat sessions in VS Code, Cline sessions and Continue sessions.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { agentSessions, claudeProjectNames, clineDataDir, continueDir, piAgentDir } from '../../src/extension/inspector/agentSessions';
import { sessionName } from '../../src/replay/session-title';

function fakeHome(): { home: string; cwd: string; project: string } {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const cwd = '/work/demo';
  const project = join(home, '.claude', 'projects', claudeProjectNames(cwd)[0]!);
  mkdirSync(project, { recursive: true });
  return { home, cwd, project };
}

function write(file: string, minutesAgo: number): void {
  writeFileSync(file, '{"type":"user","message":{"role":"user","content":"hi"}}\n');
  const t = new Date(Date.now() - minutesAgo * 60_000);
  utimesSync(file, t, t);
}

test("a session's sub-agent transcripts are listed right after it, with the parent named", () => {
  const { home, cwd, project } = fakeHome();
  write(join(project, 'old.jsonl'), 30);
  write(join(project, 'new.jsonl'), 5);
  mkdirSync(join(project, 'old', 'subagents'), { recursive: true });
  write(join(project, 'old', 'subagents', 'agent-b.jsonl'), 1);
  write(join(project, 'old', 'subagents', 'agent-a.jsonl'), 2);
  writeFileSync(join(project, 'old', 'subagents', 'notes.txt'), 'not a transcript');
  const found = agentSessions(home, cwd);
  expect(found.map((f) => [f.file.slice(project.length + 1), f.parent?.slice(project.length + 1)])).toEqual([
    ['new.jsonl', undefined],
    ['old.jsonl', undefined],
    ['old/subagents/agent-b.jsonl', 'old.jsonl'],
    ['old/subagents/agent-a.jsonl', 'old.jsonl'],
  ]);
});

test('a session without a subagents folder lists alone', () => {
  const { home, cwd, project } = fakeHome();
  write(join(project, 's.jsonl'), 1);
  expect(agentSessions(home, cwd).map((f) => f.parent)).toEqual([undefined]);
});

test("Gemini CLI chats of the folder are found by the project's .project_root (0.5x on) or its path's hash (older), not another folder's", () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const cwd = '/work/demo';
  const named = join(home, '.gemini', 'tmp', 'demo', 'chats');
  const hashed = join(home, '.gemini', 'tmp', createHash('sha256').update(cwd).digest('hex'), 'chats');
  const other = join(home, '.gemini', 'tmp', 'elsewhere', 'chats');
  for (const d of [named, hashed, other]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, '.gemini', 'tmp', 'demo', '.project_root'), `${cwd}\n`);
  writeFileSync(join(home, '.gemini', 'tmp', 'elsewhere', '.project_root'), '/work/other');
  write(join(named, 'session-2026-11-27T04-17-aaaa.jsonl'), 1);
  write(join(hashed, 'session-2025-06-01T10-00-bbbb.json'), 60);
  write(join(named, 'notes.txt'), 2);
  write(join(other, 'session-2026-11-27T04-18-cccc.jsonl'), 1);
  const found = agentSessions(join(home, 'no-such-home'), cwd, home);
  expect(found.map((f) => [f.agent, f.file.slice(home.length + 1)])).toEqual([
    ['gemini-cli', join('.gemini', 'tmp', 'demo', 'chats', 'session-2026-11-27T04-17-aaaa.jsonl')],
    ['gemini-cli', join('.gemini', 'tmp', createHash('sha256').update(cwd).digest('hex'), 'chats', 'session-2025-06-01T10-00-bbbb.json')],
  ]);
});

test("Copilot CLI sessions of the folder are found by the cwd their first event names, not another folder's", () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const cwd = '/work/demo';
  const start = (dir: string) =>
    JSON.stringify({
      type: 'session.start',
      data: { producer: 'copilot-agent', context: { cwd: dir } },
      id: 'e1',
      timestamp: '2026-11-30T10:00:00Z',
    });
  for (const [id, dir] of [
    ['a1', cwd],
    ['b2', '/work/other'],
  ]) {
    mkdirSync(join(home, '.copilot', 'session-state', id!), { recursive: true });
    writeFileSync(join(home, '.copilot', 'session-state', id!, 'events.jsonl'), `${start(dir!)}\n`);
  }
  mkdirSync(join(home, '.copilot', 'session-state', 'c3'), { recursive: true }); // no log yet
  expect(agentSessions(home, cwd).map((f) => [f.agent, f.file.slice(home.length + 1)])).toEqual([
    ['copilot-cli', join('.copilot', 'session-state', 'a1', 'events.jsonl')],
  ]);
});

test("a Copilot CLI sub-agent, written into its parent's log, is listed under it by the task call that started it", () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const cwd = '/work/demo';
  const dir = join(home, '.copilot', 'session-state', 'a1');
  mkdirSync(dir, { recursive: true });
  const ev = (type: string, data: Record<string, unknown>) => JSON.stringify({ type, data, id: type, timestamp: '2026-11-30T10:00:00Z' });
  const file = join(dir, 'events.jsonl');
  writeFileSync(
    file,
    [
      ev('session.start', { producer: 'copilot-agent', context: { cwd } }),
      ev('subagent.started', { toolCallId: 'call_task_1', agentName: 'task', agentDisplayName: 'Task Agent' }),
      ev('user.message', { content: 'count the rows', parentToolCallId: 'call_task_1' }),
      ev('subagent.started', { toolCallId: 'call_task_2', agentName: 'explore' }),
      ev('subagent.started', { toolCallId: 'call_task_2', agentName: 'explore' }), // written twice: listed once
      '{"type":"subagent.started","data":{"toolCallId"', // a line cut short
    ].join('\n') + '\n',
  );
  expect(agentSessions(home, cwd).map((f) => [f.file === file, f.parent === file, f.instance, f.name])).toEqual([
    [true, false, undefined, undefined],
    [true, true, 'call_task_1', 'Task Agent'],
    [true, true, 'call_task_2', 'explore'],
  ]);
});

test('Cline sessions of the folder are found by the cwd their manifest names, the conversations of agents they started under them', () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const cwd = '/work/demo';
  const root = join(home, '.cline', 'data', 'sessions');
  const session = (id: string, dir: string, at: number) => {
    mkdirSync(join(root, id), { recursive: true });
    writeFileSync(join(root, id, `${id}.json`), JSON.stringify({ version: 1, session_id: id, cwd: dir, workspace_root: dir }));
    writeFileSync(join(root, id, `${id}.messages.json`), JSON.stringify({ sessionId: id, messages: [] }));
    utimesSync(join(root, id, `${id}.messages.json`), at, at);
  };
  session('100_aaaaa', cwd, 1_000);
  session('200_bbbbb', cwd, 2_000);
  session('300_ccccc', '/work/other', 3_000);
  writeFileSync(join(root, '100_aaaaa', 'agent_x.messages.json'), '{}');
  mkdirSync(join(root, '400_ddddd'), { recursive: true }); // no manifest yet
  expect(agentSessions(home, cwd).map((f) => [f.agent, f.file.slice(root.length + 1), f.parent?.slice(root.length + 1)])).toEqual([
    ['cline', join('200_bbbbb', '200_bbbbb.messages.json'), undefined],
    ['cline', join('100_aaaaa', '100_aaaaa.messages.json'), undefined],
    ['cline', join('100_aaaaa', 'agent_x.messages.json'), join('100_aaaaa', '100_aaaaa.messages.json')],
  ]);
  // CLINE_DATA_DIR, else CLINE_DIR/data, in place of ~/.cline/data
  expect(clineDataDir('/h', { CLINE_DATA_DIR: '/d', CLINE_DIR: '/c' })).toBe('/d');
  expect(clineDataDir('/h', { CLINE_DIR: '/c' })).toBe(join('/c', 'data'));
  expect(clineDataDir('/h')).toBe(join('/h', '.cline', 'data'));
});

test("pi sessions of the folder are found in pi's folder for it (its path encoded as pi 0.73 does), by the cwd their header names", () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const cwd = '/work/demo';
  // pi: `--${cwd without its first /, every / \ : as -}--`; /work-demo encodes alike, its header tells them apart
  const dir = join(home, '.pi', 'agent', 'sessions', '--work-demo--');
  mkdirSync(dir, { recursive: true });
  const header = (c: string) => `${JSON.stringify({ type: 'session', version: 3, id: 'x', timestamp: '2026-11-30T10:00:00Z', cwd: c })}\n`;
  writeFileSync(join(dir, '2026-11-30T10-00-00-000Z_aaaa.jsonl'), header(cwd));
  writeFileSync(join(dir, '2026-11-30T11-00-00-000Z_bbbb.jsonl'), header('/work-demo'));
  writeFileSync(join(dir, 'notes.txt'), 'x');
  expect(agentSessions(home, cwd).map((f) => [f.agent, f.file.slice(dir.length + 1)])).toEqual([
    ['pi', '2026-11-30T10-00-00-000Z_aaaa.jsonl'],
  ]);
  expect(piAgentDir('/h', { PI_CODING_AGENT_DIR: '~/pi' })).toBe(join('/h', 'pi'));
  expect(piAgentDir('/h', { PI_CODING_AGENT_DIR: '/p' })).toBe('/p');
  expect(piAgentDir('/h')).toBe(join('/h', '.pi', 'agent'));
});

test('Qwen Code chats of the folder are found in its project folder, by the cwd their records name', () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const cwd = '/work/demo';
  const chats = join(home, '.qwen', 'projects', '-work-demo', 'chats');
  mkdirSync(chats, { recursive: true });
  const record = (c: string) =>
    `${JSON.stringify({ uuid: 'u', parentUuid: null, type: 'user', cwd: c, message: { role: 'user', parts: [{ text: 'hi' }] } })}\n`;
  writeFileSync(join(chats, 'aaaa.jsonl'), record(cwd));
  writeFileSync(join(chats, 'bbbb.jsonl'), record('/work-demo'));
  expect(agentSessions(home, cwd).map((f) => [f.agent, f.file.slice(chats.length + 1)])).toEqual([['qwen-code', 'aaaa.jsonl']]);
});

test('Continue sessions of the folder are found by their workspaceDirectory, a path (its CLI) or a file:// URI (its extension), not the index', () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const cwd = '/work/my demo';
  const dir = join(home, '.continue', 'sessions');
  mkdirSync(dir, { recursive: true });
  const doc = (id: string, folder: string, title: string) =>
    JSON.stringify(
      {
        sessionId: id,
        title,
        workspaceDirectory: folder,
        history: [{ message: { role: 'user', content: 'Total the "cart"' }, contextItems: [] }],
      },
      null,
      2,
    );
  writeFileSync(join(dir, 'cli.json'), doc('cli', cwd, 'Untitled Session'));
  writeFileSync(join(dir, 'ext.json'), doc('ext', 'file:///work/my%20demo', 'Cart totals'));
  writeFileSync(join(dir, 'other.json'), doc('other', '/work/other', 'Elsewhere'));
  writeFileSync(join(dir, 'sessions.json'), JSON.stringify([{ sessionId: 'cli', workspaceDirectory: cwd }]));
  utimesSync(join(dir, 'cli.json'), new Date('2026-01-02'), new Date('2026-01-02'));
  utimesSync(join(dir, 'ext.json'), new Date('2026-01-01'), new Date('2026-01-01'));
  const found = agentSessions(home, cwd);
  expect(found.map((f) => [f.agent, f.file.slice(dir.length + 1)])).toEqual([
    ['continue', 'cli.json'],
    ['continue', 'ext.json'],
  ]);
  // named by Continue's title, or by the first prompt when Continue left it untitled
  expect(sessionName(join(dir, 'cli.json'))).toBe('Total the "cart" · my demo');
  expect(sessionName(join(dir, 'ext.json'))).toBe('Cart totals · my demo');
  expect(continueDir(home, { CONTINUE_GLOBAL_DIR: '/elsewhere' })).toBe('/elsewhere');
  expect(agentSessions(home, cwd, home, clineDataDir(home), piAgentDir(home), '/nowhere')).toEqual([]);
});

test("Cline, Roo Code and Kilo Code tasks of the folder are found in VS Code's global storage by the folder their first message names", () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const storage = join(home, 'globalStorage');
  const cwd = '/work/my demo';
  const task = (ext: string, id: string, folder: string, heading: string, minutesAgo: number, attached = '') => {
    const dir = join(storage, ext, 'tasks', id);
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'api_conversation_history.json');
    const env = `<environment_details>\n# ${heading} Directory (${folder}) Files\nsrc/\n</environment_details>`;
    writeFileSync(
      file,
      JSON.stringify([
        {
          role: 'user',
          content: [
            { type: 'text', text: `<task>\nFix the "cart" total\n</task>` },
            ...(attached ? [{ type: 'text', text: attached }] : []),
            { type: 'text', text: env },
          ],
          ts: 1764000000000,
        },
      ]),
    );
    const t = new Date(Date.now() - minutesAgo * 60_000);
    utimesSync(file, t, t);
    return file;
  };
  const roo = task('rooveterinaryinc.roo-cline', 't1', cwd, 'Current Workspace', 5);
  // a file attached to the first prompt puts the environment details 100 KB in
  const kilo = task(
    'kilocode.kilo-code',
    't2',
    `${cwd}/`,
    'Current Workspace',
    10,
    `<file_content path="a.md">\n${'x'.repeat(100_000)}\n</file_content>`,
  );
  const cline = task('saoudrizwan.claude-dev', 't3', cwd, 'Current Working', 1);
  task('rooveterinaryinc.roo-cline', 't4', '/work/other', 'Current Workspace', 2);
  // a Windows folder, JSON-escaped in the file, is the same folder whatever its case
  const win = task('rooveterinaryinc.roo-cline', 't5', 'C:\\Apps\\Demo', 'Current Workspace', 3);
  expect(agentSessions(home, cwd, home, clineDataDir(home), piAgentDir(home), continueDir(home), storage)).toEqual([
    expect.objectContaining({ agent: 'cline-extension', file: cline }),
    expect.objectContaining({ agent: 'roo-code', file: roo }),
    expect.objectContaining({ agent: 'kilo-code', file: kilo }),
  ]);
  expect(agentSessions(home, 'c:\\apps\\demo', home, clineDataDir(home), piAgentDir(home), continueDir(home), storage)).toEqual([
    expect.objectContaining({ agent: 'roo-code', file: win }),
  ]);
  // without VS Code's global storage, none is looked for
  expect(agentSessions(home, cwd)).toEqual([]);
  expect(sessionName(roo)).toMatch(/^Fix the "cart" total · /);
});

test("Copilot's chat sessions are found in the folder's own workspace storage: the log over the older file, none never sent", () => {
  const home = mkdtempSync(join(tmpdir(), 'sw-home-'));
  const ws = join(home, 'workspaceStorage');
  const dir = join(ws, 'chatSessions');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(ws, 'workspace.json'), JSON.stringify({ folder: 'file:///work/my%20demo' }));
  const session = (name: string, requests: unknown[], minutesAgo: number) => {
    const file = join(dir, name);
    const v = { version: 3, sessionId: name.replace(/\.jsonl?$/, ''), creationDate: 1795000000000, requests };
    writeFileSync(file, name.endsWith('.jsonl') ? `${JSON.stringify({ kind: 0, v })}\n` : JSON.stringify(v));
    const t = new Date(Date.now() - minutesAgo * 60_000);
    utimesSync(file, t, t);
    return file;
  };
  const asked = [{ requestId: 'request_1', message: { text: 'Fix the "cart" total' }, timestamp: 1795000000000 }];
  const log = session('a.jsonl', asked, 1);
  // VS Code converted it: the older whole file beside the log is the same session
  session('a.json', asked, 30);
  const older = session('b.json', asked, 20);
  session('c.jsonl', [], 2);
  const cwd = '/work/my demo';
  expect(agentSessions(home, cwd, home, clineDataDir(home), piAgentDir(home), continueDir(home), undefined, ws)).toEqual([
    expect.objectContaining({ agent: 'copilot-chat', file: log }),
    expect.objectContaining({ agent: 'copilot-chat', file: older }),
  ]);
  // without the folder's workspace storage (no folder open), none is looked for
  expect(agentSessions(home, cwd)).toEqual([]);
  expect(sessionName(log)).toMatch(/^Fix the "cart" total · my demo · /);
});
