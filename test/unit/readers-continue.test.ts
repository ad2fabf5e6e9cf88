/**
 * Continue sessions (src/replay/readers/continue.ts) on documents written here in the shape
 * Continue's CLI 1.5.47 writes (the agents suite checks the reader against the real CLI's session and
 * the requests it sent): found by `auto` (not taken for a SWE-agent trajectory, which also has a
 * `history`), each answer one call, context items before a prompt, each call's outputs joined as one
 * tool message, `Tool cancelled` for a call without output, Responses for the models Continue sends
 * there and Chat Completions for the others, with notes.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectTranscriptFormat, readTranscript, requestForCall } from '../../src/replay/readers';
import { CONTINUE_CANCELLED } from '../../src/replay/readers/continue';

const dir = mkdtempSync(join(tmpdir(), 'sw-continue-'));
let n = 0;
function file(doc: unknown, space?: number): string {
  const path = join(dir, `s${++n}.json`);
  writeFileSync(path, JSON.stringify(doc, null, space));
  return path;
}

const big = Array.from({ length: 600 }, (_, i) => `row ${String(i).padStart(5, '0')} of the output`).join('\n');
const call = (id: string, command: string) => ({
  id,
  type: 'function',
  function: { name: 'Bash', arguments: JSON.stringify({ command }) },
});

function session(model = 'gpt-5', history?: unknown[]): Record<string, unknown> {
  const usage = { completion_tokens: 20, prompt_tokens: 100, model };
  return {
    sessionId: '9ebba267-1169-4b67-9b94-9bcd98749198',
    title: 'Untitled Session',
    workspaceDirectory: '/w',
    history: history ?? [
      { message: { role: 'user', content: 'count the rows' }, contextItems: [{ name: 'notes.md', content: 'the rows are in data/' }] },
      {
        message: { role: 'assistant', content: '', toolCalls: [call('c1', 'seq 600'), call('c2', 'sleep 99')], usage },
        contextItems: [],
        toolCallStates: [
          { toolCallId: 'c1', status: 'done', output: [{ content: big.slice(0, 100) }, { content: big.slice(100) }] },
          { toolCallId: 'c2', status: 'canceled' },
        ],
      },
      { message: { role: 'assistant', content: '600 rows.', usage }, contextItems: [] },
      { message: { role: 'user', content: 'once more' }, contextItems: [] },
      { message: { role: 'thinking', content: 'Same as before.' }, contextItems: [] },
      { message: { role: 'assistant', content: 'Still 600.', usage }, contextItems: [] },
    ],
    usage: { totalCost: 0.001 },
  };
}

describe('Continue sessions', () => {
  it('are found by auto, small or longer than the detection head, and not taken for a SWE-agent trajectory', async () => {
    expect((await readTranscript(file(session()))).source).toBe('continue');
    const long = session();
    (long.history as unknown[]).push({ message: { role: 'user', content: 'x'.repeat(80_000) }, contextItems: [] });
    const path = file(long, 2);
    expect(detectTranscriptFormat(path, Buffer.from(JSON.stringify(long, null, 2).slice(0, 65_536)))).toBe('continue');
    expect((await readTranscript(path)).source).toBe('continue');
  });

  it('replays a gpt-5 session as Responses input, as Continue converts its history', async () => {
    const t = await readTranscript(file(session()));
    expect(t.wire).toBe('openai-responses');
    expect(t.base).toEqual({ model: 'gpt-5' });
    expect(t.calls.map((c) => c.reply)).toEqual(['', '600 rows.', 'Still 600.']);
    expect(requestForCall(t, 2).input).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: '<context name="notes.md">\nthe rows are in data/\n</context>\n\ncount the rows' }],
      },
      { type: 'function_call', call_id: 'c1', name: 'Bash', arguments: '{"command":"seq 600"}' },
      { type: 'function_call', call_id: 'c2', name: 'Bash', arguments: '{"command":"sleep 99"}' },
      { type: 'function_call_output', call_id: 'c1', output: `${big.slice(0, 100)}\n${big.slice(100)}` },
      { type: 'function_call_output', call_id: 'c2', output: CONTINUE_CANCELLED },
      {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: '600 rows.', annotations: [] }],
        id: 'msg_0000',
        status: 'completed',
      },
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'once more' }] },
    ]);
    // the thinking message opens the last answer: its call ends before it
    expect(t.calls[2]!.end).toBe(7);
    expect(t.skipped.notes.join('\n')).toContain('system prompt and tool declarations');
  });

  it('replays another model in Chat Completions, noting a Claude model behind a router', async () => {
    const t = await readTranscript(file(session('openrouter/anthropic/claude-sonnet-4-5')));
    expect(t.wire).toBe('openai-chat');
    expect(requestForCall(t, 1).messages).toEqual([
      { role: 'user', content: '<context name="notes.md">\nthe rows are in data/\n</context>\n\ncount the rows' },
      { role: 'assistant', content: '', tool_calls: [call('c1', 'seq 600'), call('c2', 'sleep 99')] },
      { role: 'tool', content: `${big.slice(0, 100)}\n${big.slice(100)}`, tool_call_id: 'c1' },
      { role: 'tool', content: CONTINUE_CANCELLED, tool_call_id: 'c2' },
    ]);
    expect(t.skipped.notes.join('\n')).toContain("behind another provider's name");
    expect((await readTranscript(file(session('deepseek-chat')))).skipped.notes.join('\n')).not.toContain('Claude');
  });

  it("replays a Claude model as Messages, as Continue's Anthropic adapter converts its history", async () => {
    const t = await readTranscript(file(session('claude-sonnet-4-5')));
    expect(t.wire).toBe('anthropic-messages');
    expect(t.calls).toHaveLength(3);
    const first = {
      role: 'user',
      content: [{ type: 'text', text: '<context name="notes.md">\nthe rows are in data/\n</context>\n\ncount the rows' }],
    };
    // the answer's empty text is left out, its calls are tool_use blocks with their arguments parsed;
    // both outputs (the second cancelled) are one user message of tool_result blocks
    const uses = {
      role: 'assistant',
      content: [
        { type: 'tool_use', id: 'c1', name: 'Bash', input: { command: 'seq 600' } },
        { type: 'tool_use', id: 'c2', name: 'Bash', input: { command: 'sleep 99' } },
      ],
    };
    const results = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'c1', content: `${big.slice(0, 100)}\n${big.slice(100)}` },
        { type: 'tool_result', tool_use_id: 'c2', content: CONTINUE_CANCELLED },
      ],
    };
    expect(requestForCall(t, 0)).toEqual({ model: 'claude-sonnet-4-5', messages: [first] });
    expect(requestForCall(t, 1).messages).toEqual([first, uses, results]);
    // the thinking message opens the third answer's call: it is not in that call's request
    expect(requestForCall(t, 2).messages).toEqual([
      first,
      uses,
      results,
      { role: 'assistant', content: [{ type: 'text', text: '600 rows.' }] },
      { role: 'user', content: [{ type: 'text', text: 'once more' }] },
    ]);
    expect(t.skipped.notes.join('\n')).toContain('the last two user text blocks of each call');
  });

  it('gives the Messages a system message in the history holds, images as data, and tool arguments that are not JSON as {}', async () => {
    const usage = { model: 'claude-haiku-4-5' };
    const t = await readTranscript(
      file(
        session('claude-haiku-4-5', [
          { message: { role: 'system', content: 'Be brief.' }, contextItems: [] },
          {
            message: {
              role: 'user',
              content: [
                { type: 'text', text: 'go' },
                { type: 'text', text: '' },
                { type: 'imageUrl', imageUrl: { url: 'data:image/png;base64,iVBORw0K' } },
                { type: 'imageUrl', imageUrl: { url: 'data:image/jpg;base64,/9j/4AAQ' } },
                { type: 'imageUrl', imageUrl: { url: 'https://example.com/a.png' } },
              ],
            },
            contextItems: [],
          },
          {
            message: {
              role: 'assistant',
              content: 'Running.',
              toolCalls: [{ id: 'c9', type: 'function', function: { name: 'Bash', arguments: '{"command": ' } }],
              usage,
            },
            contextItems: [],
            toolCallStates: [{ toolCallId: 'c9', status: 'done', output: [{ content: 'ok' }] }],
          },
          { message: { role: 'assistant', content: 'Done.', usage }, contextItems: [] },
        ]),
      ),
    );
    expect(t.wire).toBe('anthropic-messages');
    expect(requestForCall(t, 1)).toEqual({
      model: 'claude-haiku-4-5',
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [
        // images as base64 data, PNG, GIF and WebP named as they are and any other type as JPEG; an image by address left out
        {
          role: 'user',
          content: [
            { type: 'text', text: 'go' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0K' } },
            { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Running.' },
            { type: 'tool_use', id: 'c9', name: 'Bash', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c9', content: 'ok' }] },
      ],
    });
  });

  it('names what is wrong with a document that is not a session, and counts items it cannot read', async () => {
    await expect(readTranscript(file({ sessionId: 's', history: 'none' }), { format: 'continue' })).rejects.toThrow(
      /not a Continue session/,
    );
    const t = await readTranscript(
      file(
        session('gpt-4.1', [
          { message: { role: 'user', content: 'hi' } },
          'junk',
          { message: { role: 'assistant', content: 'hello', usage: { model: 'gpt-4.1' } } },
        ]),
      ),
      { format: 'continue' },
    );
    expect(t.calls).toHaveLength(1);
    expect(t.skipped.byReason).toEqual({ 'not-an-item': 1 });
  });
});
