/**
 * OpenCode exports (src/replay/readers/opencode.ts) on documents written here in the shape
 * `opencode export` (1.18.33) prints (the agents suite checks the reader against the real CLI's
 * export and the requests it sent): found by `auto` (not taken for a mini-swe-agent trajectory,
 * which also has `info` and `messages`), each answered assistant message one call, each provider's
 * wire, OpenCode's texts for cleared, failed and interrupted tools, errored calls left out, and what
 * is not reproduced said in a note.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectTranscriptFormat, readTranscript, requestForCall } from '../../src/replay/readers';
import { OPENCODE_CLEARED, OPENCODE_INTERRUPTED } from '../../src/replay/readers/opencode';

const dir = mkdtempSync(join(tmpdir(), 'sw-opencode-'));
let n = 0;
function file(doc: unknown, space?: number): string {
  const path = join(dir, `export-${++n}.json`);
  writeFileSync(path, JSON.stringify(doc, null, space));
  return path;
}

const T0 = Date.UTC(2026, 10, 30, 10, 0, 0);
const big = Array.from({ length: 600 }, (_, i) => `row ${String(i).padStart(5, '0')} of the output`).join('\n');

function user(id: string, text: string, at: number, extra: unknown[] = []): unknown {
  return {
    info: { role: 'user', id, sessionID: 'ses_1', time: { created: at }, model: { providerID: 'anthropic', modelID: 'claude-sonnet-4-5' } },
    parts: [{ type: 'text', text, id: `${id}-p` }, ...extra],
  };
}

function assistant(id: string, parts: unknown[], at: number, info: Record<string, unknown> = {}): unknown {
  return {
    info: {
      role: 'assistant',
      id,
      sessionID: 'ses_1',
      providerID: 'anthropic',
      modelID: 'claude-sonnet-4-5',
      time: { created: at },
      ...info,
    },
    parts: [{ type: 'step-start' }, ...parts, { type: 'step-finish', reason: 'tool-calls' }],
  };
}

function tool(callID: string, command: string, state: Record<string, unknown>): unknown {
  return { type: 'tool', tool: 'bash', callID, state: { input: { command }, time: { start: T0, end: T0 }, ...state } };
}

/** A prompt, two calls running a command each (the first output later pruned), a final answer, a second prompt and its answer. */
function session(messages?: unknown[], provider = 'anthropic'): Record<string, unknown> {
  const doc = {
    info: { id: 'ses_1', slug: 'calm-lake', projectID: 'global', directory: '/w', title: 'rows', version: '1.18.33' },
    messages: messages ?? [
      user('m1', 'count the rows', T0),
      assistant(
        'm2',
        [
          { type: 'text', text: 'Running it.' },
          tool('c1', 'seq 600', { status: 'completed', output: big, time: { start: T0, end: T0, compacted: T0 + 9 } }),
        ],
        T0 + 1000,
      ),
      assistant(
        'm3',
        [
          tool('c2', 'cat nope', { status: 'error', error: 'cat: nope: No such file or directory' }),
          tool('c3', 'sleep 99', { status: 'running' }),
        ],
        T0 + 2000,
      ),
      assistant('m4', [], T0 + 2500, { error: { name: 'APIError', data: { message: 'overloaded' } } }),
      assistant('m5', [{ type: 'text', text: '600 rows.' }], T0 + 3000),
      user('m6', 'once more', T0 + 4000),
      assistant('m7', [{ type: 'text', text: 'Still 600.' }], T0 + 5000),
    ],
  };
  if (provider === 'anthropic') return doc;
  return JSON.parse(JSON.stringify(doc).replaceAll('"providerID":"anthropic"', `"providerID":"${provider}"`)) as Record<string, unknown>;
}

describe('OpenCode exports', () => {
  it('are found by auto, as a small document and as one longer than the detection head, not as a mini-swe-agent trajectory', async () => {
    const t = await readTranscript(file(session()));
    expect(t.source).toBe('opencode');
    const long = session();
    (long.messages as unknown[]).push(user('m8', 'x'.repeat(80_000), T0 + 6000));
    const path = file(long, 2);
    expect(detectTranscriptFormat(path, Buffer.from(JSON.stringify(long, null, 2).slice(0, 65_536)))).toBe('opencode');
    expect((await readTranscript(path)).source).toBe('opencode');
  });

  it('replays each answered assistant message as a call, in Anthropic Messages for the anthropic provider', async () => {
    const t = await readTranscript(file(session()));
    expect(t.wire).toBe('anthropic-messages');
    expect(t.base).toEqual({ model: 'claude-sonnet-4-5' });
    // the errored call (m4) is no call: four answered calls
    expect(t.calls.map((c) => c.reply)).toEqual(['Running it.', '', '600 rows.', 'Still 600.']);
    expect(t.calls.map((c) => c.at)).toEqual([T0 + 1000, T0 + 2000, T0 + 3000, T0 + 5000]);
    expect(requestForCall(t, 0).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'count the rows' }] }]);
    const last = requestForCall(t, 3).messages as unknown[];
    expect(last).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'count the rows' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running it.' },
          { type: 'tool_use', id: 'c1', name: 'bash', input: { command: 'seq 600' } },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: big }] },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'c2', name: 'bash', input: { command: 'cat nope' } },
          { type: 'tool_use', id: 'c3', name: 'bash', input: { command: 'sleep 99' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c2', content: 'cat: nope: No such file or directory', is_error: true },
          { type: 'tool_result', tool_use_id: 'c3', content: OPENCODE_INTERRUPTED, is_error: true },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: '600 rows.' }] },
      { role: 'user', content: [{ type: 'text', text: 'once more' }] },
    ]);
    // calls extend each other
    for (let k = 1; k < t.calls.length; k++) expect(t.calls[k]!.end).toBeGreaterThan(t.calls[k - 1]!.end);
    expect(t.skipped.byReason).toEqual({ error: 1 });
    const notes = t.skipped.notes.join('\n');
    expect(notes).toContain(`pruning cleared 1 old tool output(s)`);
    expect(notes).toContain(OPENCODE_CLEARED);
    expect(notes).toContain('1 tool call(s) never finished');
    expect(notes).toContain('system prompt and tool declarations');
  });

  it('writes Responses input for the openai provider, and Chat Completions for another, with a note', async () => {
    const r = await readTranscript(file(session(undefined, 'openai')));
    expect(r.wire).toBe('openai-responses');
    expect((requestForCall(r, 3).input as unknown[]).slice(0, 5)).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'count the rows' }] },
      { role: 'assistant', content: [{ type: 'output_text', text: 'Running it.' }] },
      { type: 'function_call', call_id: 'c1', name: 'bash', arguments: '{"command":"seq 600"}' },
      { type: 'function_call_output', call_id: 'c1', output: big },
      { type: 'function_call', call_id: 'c2', name: 'bash', arguments: '{"command":"cat nope"}' },
    ]);
    const c = await readTranscript(file(session(undefined, 'openrouter')));
    expect(c.wire).toBe('openai-chat');
    expect((requestForCall(c, 1).messages as unknown[]).slice(1)).toEqual([
      {
        role: 'assistant',
        content: 'Running it.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"seq 600"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: big },
    ]);
    expect(c.skipped.notes.join('\n')).toContain('replayed as Chat Completions');
  });

  it("sends Anthropic thinking with its signature, and another model's reasoning as text", async () => {
    const t = await readTranscript(
      file(
        session([
          user('m1', 'think', T0),
          assistant(
            'm2',
            [
              { type: 'reasoning', text: 'hmm', metadata: { anthropic: { signature: 'sig' } } },
              { type: 'text', text: '' },
              tool('c1', 'ls', { status: 'completed', output: 'a' }),
            ],
            T0 + 1,
          ),
          assistant(
            'm3',
            [
              { type: 'reasoning', text: 'other model thought' },
              { type: 'text', text: 'done' },
            ],
            T0 + 2,
            { modelID: 'claude-haiku-4-5' },
          ),
          assistant('m4', [{ type: 'text', text: 'again' }], T0 + 3),
          assistant('m5', [{ type: 'text', text: 'and again' }], T0 + 4),
        ]),
      ),
    );
    const msgs = requestForCall(t, 2).messages as Array<{ role: string; content: unknown }>;
    expect(msgs[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'hmm', signature: 'sig' },
        { type: 'text', text: ' ' },
        { type: 'tool_use', id: 'c1', name: 'bash', input: { command: 'ls' } },
      ],
    });
    expect(msgs[3]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'other model thought' },
        { type: 'text', text: 'done' },
      ],
    });
    expect(t.skipped.notes.join('\n')).toContain('claude-haiku-4-5 (1)');
  });

  it('lists a compaction with the calls before it and the summary it continued from', async () => {
    const t = await readTranscript(
      file(
        session([
          user('m1', 'count the rows', T0),
          assistant('m2', [tool('c1', 'seq 600', { status: 'completed', output: big })], T0 + 1),
          user('m3', '', T0 + 2, [{ type: 'compaction', auto: true }]),
          assistant('m4', [{ type: 'text', text: 'We counted rows.' }], T0 + 3, { summary: true }),
          assistant('m5', [{ type: 'text', text: 'Done.' }], T0 + 4),
        ]),
      ),
    );
    expect(t.compactions).toEqual([{ calls: 1, line: 3, trigger: 'auto', model: 'claude-sonnet-4-5', summary: 'We counted rows.' }]);
    expect((requestForCall(t, 1).messages as unknown[]).at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: big },
        { type: 'text', text: 'What did we do so far?' },
      ],
    });
    expect(t.skipped.notes.join('\n')).toContain('compacted the session 1 time(s)');
  });

  it("a Kilo export (Kilo's CLI 7, OpenCode's fork) gets the environment details Kilo sends after each prompt", async () => {
    const doc = session([
      user('m1', 'count the rows', T0 + 431),
      assistant('m2', [{ type: 'text', text: '600 rows.' }], T0 + 1000, { path: { cwd: '/w/app', root: '/w' } }),
      user('m3', 'once more', T0 + 4000),
      assistant('m4', [{ type: 'text', text: 'Still 600.' }], T0 + 5000, { path: { cwd: '/w/app', root: '/w' } }),
    ]);
    const plain = await readTranscript(file(doc));
    expect(requestForCall(plain, 0).messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'count the rows' }] }]);
    (doc.info as Record<string, unknown>).version = '7.7.7';
    const t = await readTranscript(file(doc));
    const env = (time: string) =>
      `\n\n<environment_details>\nMessage time: ${time}\nWorking directory: /w/app\nWorkspace root folder: /w\n</environment_details>`;
    // as the real kilo 7.7.7 sent it (the agents suite): the prompt's time to the second, each prompt its own
    expect(requestForCall(t, 0).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'count the rows' },
          { type: 'text', text: env('2026-11-30T10:00:00Z') },
        ],
      },
    ]);
    expect((requestForCall(t, 1).messages as { content: unknown }[])[2]!.content).toEqual([
      { type: 'text', text: 'once more' },
      { type: 'text', text: env('2026-11-30T10:00:04Z') },
    ]);
  });

  it('names the file and what is wrong for a document that is not an export, and counts messages it cannot read', async () => {
    await expect(
      readTranscript(file({ info: { id: 'ses_1', directory: '/w' }, messages: [{ role: 'user' }] }), { format: 'opencode' }),
    ).rejects.toThrow(/not an OpenCode export/);
    const t = await readTranscript(
      file(
        session([
          user('m1', 'hi', T0),
          { info: { role: 'system' }, parts: [] },
          assistant('m2', [{ type: 'text', text: 'hello' }], T0 + 1),
        ]),
      ),
    );
    expect(t.calls).toHaveLength(1);
    expect(t.skipped.byReason).toEqual({ 'not-a-message': 1 });
  });
});
