/**
 * Cline session files (src/replay/readers/cline.ts) on documents written here in the shape Cline
 * 3.0.65 writes (the agents suite checks the reader against the real CLI's file and the requests it
 * sent): found by `auto` (not taken for an Anthropic request body), each answer one call, the
 * prompt's `<user_input>` wrapper taken off, every string of a tool result cut as Cline cuts it, an
 * interrupted call given Cline's error result, and what is not reproduced said in a note.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript, requestForCall } from '../../src/replay/readers';
import { clineTruncateMiddle, normalizeClineInput } from '../../src/replay/readers/cline';

const dir = mkdtempSync(join(tmpdir(), 'sw-cline-'));
let n = 0;
function file(doc: unknown): string {
  const path = join(dir, `s${++n}.messages.json`);
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

const big = Array.from({ length: 600 }, (_, i) => `row ${String(i).padStart(5, '0')} of the output`).join('\n');
const model = { id: 'gpt-5', provider: 'openai-compatible' };
const T0 = Date.UTC(2026, 10, 30, 10, 0, 0);

/** Two answers with tool calls (the second a read of the same file twice) and a final one; a user message mid-way. */
function session(messages?: unknown[]): Record<string, unknown> {
  return {
    version: 1,
    updated_at: '2026-11-30T10:00:09.000Z',
    agent: 'lead',
    sessionId: '1796069880197_abcde',
    origin: { source: 'cli', mode: 'user', sessionId: '1796069880197_abcde', version: '3.0.65' },
    messages: messages ?? [
      { id: 'u1', role: 'user', content: [{ type: 'text', text: '<user_input mode="act">count the rows</user_input>' }], ts: T0 },
      {
        id: 'a1',
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Run it.' },
          { type: 'tool_use', id: 'c1', name: 'run_commands', input: { commands: ['seq 600'] } },
        ],
        ts: T0 + 1000,
        modelInfo: model,
      },
      {
        id: 'r1',
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', name: 'run_commands', content: [{ query: 'seq 600', result: big, success: true }] },
        ],
        ts: T0 + 2000,
      },
      {
        id: 'a2',
        role: 'assistant',
        content: [
          { type: 'text', text: 'Reading it twice.' },
          { type: 'tool_use', id: 'c2', name: 'read_files', input: { files: [{ path: '/w/a.py' }] } },
          { type: 'tool_use', id: 'c3', name: 'read_files', input: { files: [{ path: '/w/a.py' }] } },
        ],
        ts: T0 + 3000,
        modelInfo: model,
      },
      {
        id: 'r2',
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c2', name: 'read_files', content: 'def a():\n    return 1' },
          { type: 'text', text: '<user_input mode="act">also say hi</user_input>' },
        ],
        ts: T0 + 4000,
      },
      { id: 'a3', role: 'assistant', content: [{ type: 'text', text: 'Done: 600 rows. Hi.' }], ts: T0 + 5000, modelInfo: model },
    ],
    system_prompt: 'You are Cline.',
  };
}

describe('Cline session files', () => {
  it('are found by auto, not read as an Anthropic request body, and each answer is one call', async () => {
    const t = await readTranscript(file(session()));
    expect(t.source).toBe('cline');
    expect(t.wire).toBe('openai-chat');
    expect(t.base).toEqual({ model: 'gpt-5' });
    expect(t.calls.map((c) => c.reply)).toEqual([
      '{"commands":["seq 600"]}',
      'Reading it twice.\n{"files":[{"path":"/w/a.py"}]}\n{"files":[{"path":"/w/a.py"}]}',
      'Done: 600 rows. Hi.',
    ]);
    // a call's time is that of the last message its request holds
    expect(t.calls.map((c) => c.at)).toEqual([T0, T0 + 2000, T0 + 4000]);
  });

  it('replay the requests as Cline sends them: the system prompt first, the prompt unwrapped, the cut result, the missing one', async () => {
    const t = await readTranscript(file(session()));
    const last = requestForCall(t, 2).messages as Array<Record<string, unknown>>;
    expect(last.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'tool', 'user']);
    expect(last[0]).toEqual({ role: 'system', content: 'You are Cline.' });
    expect(last[1]).toEqual({ role: 'user', content: 'count the rows' });
    expect(last[2]).toEqual({
      role: 'assistant',
      content: null,
      reasoning_content: 'Run it.',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run_commands', arguments: '{"commands":["seq 600"]}' } }],
    });
    const cut = JSON.parse(last[3]!.content as string) as Array<{ query: string; result: string; success: boolean }>;
    expect(cut[0]!.result).toBe(clineTruncateMiddle(big, 8_000));
    expect(cut[0]!.result.length).toBeLessThanOrEqual(8_000);
    expect(cut[0]).toMatchObject({ query: 'seq 600', success: true });
    expect(last[4]).toMatchObject({ role: 'assistant', content: 'Reading it twice.' });
    // a string result goes as it is; the call that got no result gets Cline's error, before the prompt that followed
    expect(last[5]).toEqual({ role: 'tool', tool_call_id: 'c2', content: 'def a():\n    return 1' });
    expect(last[6]).toEqual({
      role: 'tool',
      tool_call_id: 'c3',
      content: JSON.stringify([{ type: 'text', text: 'Tool execution was interrupted before a result was produced. Tool: read_files.' }]),
    });
    expect(last[7]).toEqual({ role: 'user', content: 'also say hi' });
    // each call extends the one before
    expect(requestForCall(t, 1).messages).toEqual(last.slice(0, 4));
  });

  it('send a file attached to a prompt as its text, cut to 50,000 characters as Cline cuts it', async () => {
    const attached = 'a'.repeat(60_000);
    const t = await readTranscript(
      file(
        session([
          {
            role: 'user',
            content: [
              { type: 'text', text: 'read this' },
              { type: 'file', path: '/w/big.txt', content: attached },
            ],
          },
          { role: 'assistant', content: [{ type: 'text', text: 'Read.' }], modelInfo: model },
        ]),
      ),
    );
    expect(requestForCall(t, 0).messages).toEqual([
      { role: 'system', content: 'You are Cline.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'read this' },
          { type: 'text', text: clineTruncateMiddle(attached, 50_000) },
        ],
      },
    ]);
  });

  it('say in notes what Cline did that the replay does not reproduce', async () => {
    const t = await readTranscript(file(session()));
    const notes = t.skipped.notes.join('\n');
    expect(notes).toContain('Cline cut 1 tool result(s) to 8,000 characters a string');
    expect(notes).toMatch(/1 file\(s\) read more than once \("\/w\/a\.py" 2×\).*\[outdated - see the latest file content\]/);
    expect(notes).toContain('tool declarations');
  });

  it("cut a string as Cline's truncateMiddleByChars does: head and tail around the count of what it left out", () => {
    const text = 'x'.repeat(30_000);
    const out = clineTruncateMiddle(text, 8_000);
    // the marker's length is odd here: the head and the tail are one character short of the cap
    expect(out).toHaveLength(7_999);
    expect(out.startsWith('x'.repeat(3_975))).toBe(true);
    const m = /\n\n\.\.\.\[truncated (\d+) chars\]\.\.\.\n\n/.exec(out)!;
    expect(Number(m[1])).toBe(30_000 - out.replace(m[0], '').length);
    expect(clineTruncateMiddle('short', 8_000)).toBe('short');
  });

  it('take off the prompt wrapper as Cline does, and keep what it keeps', () => {
    expect(normalizeClineInput('<user_input mode="plan">look</user_input>')).toBe('look');
    expect(normalizeClineInput('<mode_notice>switched</mode_notice>\n<user_input mode="act">go</user_input>')).toBe(
      '<mode_notice>switched</mode_notice>\ngo',
    );
    expect(normalizeClineInput('<user_command slash="/review">check</user_command>')).toBe('check');
    expect(normalizeClineInput('  plain  ')).toBe('plain');
  });

  it('count what is not a message, and name the file when --format cline is given something else', async () => {
    const t = await readTranscript(file(session([...(session().messages as unknown[]), { role: 'system', content: 'x' }, 7])));
    expect(t.skipped.byReason['not-a-message']).toBe(2);
    const other = file({ messages: [{ role: 'user', content: 'hi' }], model: 'gpt-5' });
    await expect(readTranscript(other, { format: 'cline' })).rejects.toThrow(`${other}: not a Cline session`);
  });
});

describe('a Cline session longer than what detection reads', () => {
  it('is found by auto on one line too (its session id first is not taken for a Claude Code record)', async () => {
    const messages = (session().messages as Array<Record<string, unknown>>).map((m) =>
      m.id === 'r1' ? { ...m, content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'z'.repeat(100_000) }] } : m,
    );
    const path = file(session(messages));
    const t = await readTranscript(path);
    expect(t.source).toBe('cline');
    expect(t.calls).toHaveLength(3);
  });
});
