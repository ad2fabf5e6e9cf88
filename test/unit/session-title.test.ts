import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sessionAbout, sessionName } from '../../src/replay/session-title';

const CORPUS = join(__dirname, '../fixtures/sessions');
const day = (iso: string) => new Date(iso).toLocaleDateString('en-US', { month: 'short', day: 'numeric', year: 'numeric' });
const dir = mkdtempSync(join(tmpdir(), 'spillway-session-title-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const write = (name: string, records: unknown[]) => {
  const file = join(dir, name);
  writeFileSync(file, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
};

describe('a session is named by what it was, its project and its day', () => {
  it('tells the two demo sub-agent sessions apart by their task, not by their shared file-name prefix', () => {
    const a = sessionName(join(CORPUS, 'dev3/claude-code/randlee__claude-history-subagent-a5e7369.jsonl'));
    const b = sessionName(join(CORPUS, 'dev3/claude-code/randlee__claude-history-subagent-aabf2dd.jsonl'));
    // the "Working in worktree: /Users/…" line says where, not what: left out
    expect(a).toMatch(/^Fix the following HTML export quality issues: Task 1: Increase viewable area wi… · claude-history · /);
    expect(b).toMatch(/^Fix the following HTML export quality issues: Task 1: Add collapse\/expand contr… · claude-history · /);
    expect(a).not.toContain('randlee__');
  });

  it("uses Claude Code's own summary of the session when it wrote one", () => {
    const file = join(CORPUS, 'dev3/claude-code/randlee__claude-history-simple-session.jsonl');
    const about = sessionAbout(file);
    expect(about.title).toBe('Phase 7 & 8 Completion, Phase 9 Planning');
    expect(sessionName(file)).toBe(`Phase 7 & 8 Completion, Phase 9 Planning · claude-history · ${day(about.start!)}`);
  });

  it('names a Codex rollout by what the user typed, not its environment context, with its cwd and day', () => {
    const file = join(CORPUS, 'dev/codex/AcidicSoil__sample-rollout-019a93b9.jsonl');
    expect(sessionAbout(file)).toMatchObject({ cwd: '/home/user/projects/temp/chatbot-ui', start: '2025-11-17T21:30:28.664Z' });
    expect(sessionName(file)).toMatch(/^finish up the users work by rigging up the chatbot-ui .*… · chatbot-ui · /);
  });

  it('names a Copilot CLI session (every one of them events.jsonl) by its first prompt as typed, its cwd and day', () => {
    const file = write('events.jsonl', [
      {
        type: 'session.start',
        data: { producer: 'copilot-agent', context: { cwd: '/w/shop' } },
        id: 'a',
        timestamp: '2026-11-30T17:47:34.754Z',
      },
      {
        type: 'user.message',
        data: { content: 'Fix the cart total', transformedContent: '<current_datetime>…</current_datetime>\n\nFix the cart total' },
        id: 'b',
        timestamp: '2026-11-30T17:47:34.955Z',
      },
    ]);
    expect(sessionName(file)).toBe(`Fix the cart total · shop · ${day('2026-11-30T17:47:34.754Z')}`);
  });

  it('names a Cline session by its manifest beside it: its prompt, or the title Cline gave it, its cwd and day', () => {
    const file = join(dir, '1796069880197_cbyvn.messages.json');
    writeFileSync(file, JSON.stringify({ sessionId: '1796069880197_cbyvn', messages: [] }));
    const manifest = {
      session_id: '1796069880197_cbyvn',
      cwd: '/w/shop',
      started_at: '2026-11-30T20:18:00.203Z',
      prompt: 'Fix the cart total',
    };
    writeFileSync(join(dir, '1796069880197_cbyvn.json'), JSON.stringify({ ...manifest, metadata: { title: 'Fix the cart total' } }));
    expect(sessionName(file)).toBe(`Fix the cart total · shop · ${day('2026-11-30T20:18:00.203Z')}`);
    writeFileSync(join(dir, '1796069880197_cbyvn.json'), JSON.stringify({ ...manifest, metadata: { title: 'Cart total fixed' } }));
    expect(sessionName(file)).toBe(`Cart total fixed · shop · ${day('2026-11-30T20:18:00.203Z')}`);
  });

  it("names a pi session by its first prompt, or by the name given with pi's /name", () => {
    expect(sessionName(join(CORPUS, 'dev3/pi/badlogic__pi-compact.jsonl'))).toBe(
      `https://github.com/badlogic/pi-mono/issues/288 · pi-mono · ${day('2025-12-24T00:32:27.967Z')}`,
    );
    const named = write('pi.jsonl', [
      { type: 'session', id: 's', timestamp: '2025-12-24T00:32:27.967Z', cwd: '/w/pi-mono' },
      { type: 'message', timestamp: 'x', message: { role: 'user', content: [{ type: 'text', text: 'look at issue 288' }] } },
      { type: 'session_info', id: 'i', name: 'Fix compaction' },
    ]);
    expect(sessionName(named)).toBe(`Fix compaction · pi-mono · ${day('2025-12-24T00:32:27.967Z')}`);
  });

  it("takes a Codex thread's latest name", () => {
    const file = write('rollout.jsonl', [
      {
        timestamp: '2025-11-24T19:02:01.000Z',
        type: 'session_meta',
        payload: { id: 'x', timestamp: '2025-11-24T19:02:00.977Z', cwd: '/w/butler' },
      },
      { timestamp: 't', type: 'event_msg', payload: { type: 'user_message', message: 'run the specs' } },
      { timestamp: 't', type: 'event_msg', payload: { type: 'thread_name_updated', thread_id: 'x', thread_name: 'Specs' } },
      { timestamp: 't', type: 'event_msg', payload: { type: 'thread_name_updated', thread_id: 'x', thread_name: 'Run the butler specs' } },
    ]);
    expect(sessionName(file)).toBe(`Run the butler specs · butler · ${day('2025-11-24T19:02:00.977Z')}`);
  });

  it('leaves out what the agent put in the user turn (command echoes, caveats)', () => {
    const file = write('claude.jsonl', [
      { type: 'user', cwd: '/w/app', timestamp: '2026-01-01T10:00:00Z', message: { role: 'user', content: 'Caveat: the messages below…' } },
      { type: 'user', cwd: '/w/app', timestamp: 't', message: { role: 'user', content: '<command-name>/clear</command-name>' } },
      {
        type: 'user',
        cwd: '/w/app',
        timestamp: 't',
        message: { role: 'user', content: [{ type: 'text', text: 'Add a **dark mode**\n\nto the app' }] },
      },
    ]);
    expect(sessionName(file)).toBe(`Add a dark mode to the app · app · ${day('2026-01-01T10:00:00Z')}`);
  });

  it('names an OpenCode export by the title OpenCode gave the session, its directory and day, however long its messages', () => {
    const file = join(dir, 'ses_abc.json');
    const created = Date.UTC(2026, 10, 30, 9);
    const info = {
      id: 'ses_abc',
      slug: 'calm-lake',
      projectID: 'p',
      directory: '/home/u/shop',
      title: 'Total the cart',
      time: { created },
    };
    const messages = [{ info: { role: 'user', id: 'm1' }, parts: [{ type: 'text', text: 'x'.repeat(400_000) }] }];
    writeFileSync(file, JSON.stringify({ info, messages }, null, 2));
    expect(sessionAbout(file)).toEqual({ title: 'Total the cart', cwd: '/home/u/shop', start: new Date(created).toISOString() });
    expect(sessionName(file)).toBe(`Total the cart · shop · ${day(new Date(created).toISOString())}`);
  });

  it('is the file name when the file says nothing of itself', () => {
    expect(sessionName(write('trajectory.json', [{ foo: 1 }]))).toBe('trajectory.json');
    expect(sessionName(join(dir, 'missing.jsonl'))).toBe('missing.jsonl');
  });
});
