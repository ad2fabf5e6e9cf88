/**
 * Gemini CLI's saved chats (src/replay/readers/gemini-cli.ts): the real one in
 * test/fixtures/transcripts/gemini-cli/ (made by running Gemini CLI 0.61.0 against the scripted
 * provider; see that folder's README), and small hand-written logs for rewinds, checkpoints, the
 * older one-document format and the CLI's own messages.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript, requestForCall } from '../../src/replay/readers';
import { readRequest } from '../../src/engine/formats';
import { replay } from '../../src/replay/replay';

const FIXTURE = resolve(__dirname, '..', 'fixtures', 'transcripts', 'gemini-cli', 'session-2026-11-27T04-17-251dda79.jsonl');
const dir = mkdtempSync(join(tmpdir(), 'sw-gemini-cli-'));
const file = (name: string, lines: unknown[]) => {
  const path = join(dir, name);
  writeFileSync(path, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
  return path;
};
const META = {
  sessionId: 's1',
  projectHash: 'abc',
  startTime: '2026-11-27T00:00:00.000Z',
  lastUpdated: '2026-11-27T00:00:00.000Z',
  kind: 'main',
};
const call = (id: string, name: string, output: string) => ({
  id,
  name,
  args: { command: name },
  status: 'success',
  result: [{ functionResponse: { id, name, response: { output } } }],
});

describe('Gemini CLI chats: the real session', () => {
  it('is detected and read as Gemini API contents: the session context, the prompt, three shell rounds and the answer', async () => {
    const t = await readTranscript(FIXTURE);
    expect([t.source, t.wire, t.base]).toEqual(['gemini-cli', 'gemini', { model: 'gemini-3.8-flash' }]);
    expect(
      t.items.map((c: any) => `${c.role}:${c.parts.map((p: any) => Object.keys(p).find((k) => k !== 'thoughtSignature')).join('+')}`),
    ).toEqual([
      'user:text',
      'user:text',
      'model:functionCall',
      'user:functionResponse',
      'model:functionCall',
      'user:functionResponse',
      'model:functionCall',
      'user:functionResponse',
      'model:text',
    ]);
    expect(t.calls.map((c) => c.end)).toEqual([2, 4, 6, 8]);
    expect(t.calls[3]!.reply).toBe('Read notes.txt, listed 400 lines; missing.txt does not exist.');
    // 0.61 writes the responses twice (in the call's result and as a user message): read once
    expect(t.skipped.byReason).toEqual({ 'function-responses-again': 3 });
  });

  it('gives requests the engine reads: each response named after its call, the output as its text', async () => {
    const t = await readTranscript(FIXTURE);
    const req = readRequest(JSON.stringify(requestForCall(t, 3)), 'auto');
    expect(req.format).toBe('gemini');
    expect(req.results.map((r) => r.tool)).toEqual(['run_shell_command', 'run_shell_command', 'run_shell_command']);
    expect(req.results[1]!.content?.kind).toBe('string');
  });

  it('replays: the 400-line listing is offloaded by the first call that carries it', async () => {
    const r = replay(await readTranscript(FIXTURE), { config: {}, detail: true });
    expect(r.calls).toHaveLength(4);
    const fresh = r.calls.map((c) => (c.reductionList ?? []).filter((x) => x.fresh).map((x) => `${x.tool} ${x.stage}`));
    expect(fresh).toEqual([[], [], ['run_shell_command offload'], []]);
  });
});

describe('Gemini CLI chats: the log', () => {
  it('keeps the last version of a message in the place of its first, and reads the results of older versions (no user response message)', async () => {
    const t = await readTranscript(
      file('session-older.jsonl', [
        META,
        { id: 'u1', timestamp: 't', type: 'user', content: [{ text: 'list files' }] },
        { id: 'g1', timestamp: 't', type: 'gemini', content: '', model: 'gemini-2.5-pro' },
        { $set: { lastUpdated: 't' } },
        {
          id: 'g1',
          timestamp: 't',
          type: 'gemini',
          content: 'Listing.',
          model: 'gemini-2.5-pro',
          toolCalls: [call('c1', 'run_shell_command', 'a\nb')],
        },
        { id: 'i1', timestamp: 't', type: 'info', content: 'Switched model' },
        { id: 'g2', timestamp: 't', type: 'gemini', content: 'Two files.', model: 'gemini-2.5-pro' },
      ]),
    );
    expect(t.items).toEqual([
      { role: 'user', parts: [{ text: 'list files' }] },
      {
        role: 'model',
        parts: [{ text: 'Listing.' }, { functionCall: { id: 'c1', name: 'run_shell_command', args: { command: 'run_shell_command' } } }],
      },
      { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'run_shell_command', response: { output: 'a\nb' } } }] },
      { role: 'model', parts: [{ text: 'Two files.' }] },
    ]);
    expect(t.skipped.byReason).toEqual({ info: 1 });
  });

  it('drops what a rewind dropped, and starts again from a $set checkpoint of messages', async () => {
    const t = await readTranscript(
      file('session-rewound.jsonl', [
        META,
        { $set: { messages: [{ id: 'ctx', timestamp: 't', type: 'user', content: [{ text: 'context' }] }] } },
        { id: 'u1', timestamp: 't', type: 'user', content: 'first try' },
        { id: 'g1', timestamp: 't', type: 'gemini', content: 'answer one' },
        { $rewindTo: 'u1' },
        { id: 'u2', timestamp: 't', type: 'user', content: 'second try' },
        { id: 'g2', timestamp: 't', type: 'gemini', content: 'answer two' },
      ]),
    );
    expect(t.items.map((c: any) => c.parts[0].text)).toEqual(['context', 'second try', 'answer two']);
    expect(t.skipped.notes.join('\n')).toMatch(/rewound to "u1" \(2 message\(s\) dropped/);
  });

  it('reads an older session-*.json document (the whole record at once)', async () => {
    const path = join(dir, 'session-legacy.json');
    writeFileSync(
      path,
      JSON.stringify({
        ...META,
        messages: [
          { id: 'u1', timestamp: 't', type: 'user', content: 'hi' },
          { id: 'g1', timestamp: 't', type: 'gemini', content: 'hello', model: 'gemini-2.5-flash' },
        ],
      }),
    );
    const t = await readTranscript(path);
    expect([t.source, t.items.length, t.calls.length, t.base]).toEqual(['gemini-cli', 2, 1, { model: 'gemini-2.5-flash' }]);
  });
});
