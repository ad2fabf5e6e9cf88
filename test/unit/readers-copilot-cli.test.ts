/**
 * GitHub Copilot's CLI session logs (src/replay/readers/copilot-cli.ts) on a log written here in
 * the shape 1.0.102 writes (the agents suite checks the reader against the real CLI's own log and
 * the requests it sent): found by `auto`, replayed in the wire format the usage records name, each
 * answer one call, the system prompt first, a failed tool's error as its result, and events that
 * send nothing counted.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript, requestForCall } from '../../src/replay/readers';

let n = 0;
const ev = (type: string, data: Record<string, unknown>, second: number) =>
  JSON.stringify({ type, data, id: `e${++n}`, timestamp: `2026-11-30T10:00:${String(second).padStart(2, '0')}.000Z`, parentId: null });

/** A session of two answers: one with two tool calls (one failed), then the final text. */
function log(endpoint: string, providerType = 'openai'): string {
  const usage = (s: number) =>
    ev('session.usage_record', { usage: { model: 'gpt-5', apiEndpoint: endpoint, providerType, inputTokens: 10 } }, s);
  const lines = [
    ev(
      'session.start',
      { sessionId: 's1', producer: 'copilot-agent', copilotVersion: '1.0.102', selectedModel: 'gpt-5', context: { cwd: '/w' } },
      0,
    ),
    ev('user.message', { content: 'count the rows', transformedContent: '<current_datetime>now</current_datetime>\n\ncount the rows' }, 1),
    ev('system.message', { role: 'system', content: 'You are a terminal assistant.' }, 1),
    ev('assistant.turn_start', { turnId: '0' }, 2),
    usage(3),
    ev(
      'assistant.message',
      {
        content: 'Running both.',
        toolRequests: [
          { toolCallId: 'c1', name: 'bash', arguments: { command: 'wc -l a.txt', description: 'count' } },
          { toolCallId: 'c2', name: 'view', arguments: { path: '/w/missing.txt' } },
        ],
      },
      4,
    ),
    ev('tool.execution_start', { toolCallId: 'c1', toolName: 'bash' }, 4),
    ev(
      'tool.execution_complete',
      { toolCallId: 'c1', success: true, result: { content: '12 a.txt\n<shellId: 0 completed with exit code 0>' } },
      5,
    ),
    ev('tool.execution_complete', { toolCallId: 'c2', success: false, error: { message: 'Path does not exist' } }, 6),
    ev('assistant.turn_end', { turnId: '0' }, 6),
    usage(7),
    ev('assistant.message', { content: 'a.txt has 12 rows.', toolRequests: [] }, 8),
    ev('session.shutdown', { shutdownType: 'routine' }, 9),
    ev('session.brand_new_event', {}, 9),
  ];
  return logFile(lines);
}

/** `lines` written as an events.jsonl of its own. */
function logFile(lines: string[]): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sw-copilot-')), 'events.jsonl');
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

describe("GitHub Copilot's CLI session logs", () => {
  it('replay in Chat Completions, the system prompt first, each answer one call', async () => {
    const t = await readTranscript(log('/chat/completions'));
    expect(t.source).toBe('copilot-cli');
    expect(t.wire).toBe('openai-chat');
    expect(t.calls.map((c) => [c.end, c.reply])).toEqual([
      [2, 'Running both.\n{"command":"wc -l a.txt","description":"count"}\n{"path":"/w/missing.txt"}'],
      [5, 'a.txt has 12 rows.'],
    ]);
    expect(requestForCall(t, 1)).toEqual({
      model: 'gpt-5',
      messages: [
        { role: 'system', content: 'You are a terminal assistant.' },
        { role: 'user', content: '<current_datetime>now</current_datetime>\n\ncount the rows' },
        {
          role: 'assistant',
          content: 'Running both.',
          refusal: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'bash', arguments: '{"command":"wc -l a.txt","description":"count"}' } },
            { id: 'c2', type: 'function', function: { name: 'view', arguments: '{"path":"/w/missing.txt"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '12 a.txt\n<shellId: 0 completed with exit code 0>' },
        { role: 'tool', tool_call_id: 'c2', content: 'Path does not exist' },
      ],
    });
    // a call's time is its request's last event
    expect(t.calls.map((c) => c.at)).toEqual([Date.parse('2026-11-30T10:00:01Z'), Date.parse('2026-11-30T10:00:06Z')]);
    // what sends nothing is counted; only an event this reader does not know gets a note
    expect(t.skipped.byReason['session.brand_new_event']).toBe(1);
    expect(t.skipped.byReason['assistant.turn_start']).toBe(1);
    expect(t.skipped.notes).toEqual(['line 14: a "session.brand_new_event" event, which sends nothing this reader knows of']);
  });

  it('replay in the Anthropic format when the usage records say so: the results of one answer in one user message', async () => {
    const t = await readTranscript(log('/v1/messages', 'anthropic'));
    expect(t.wire).toBe('anthropic-messages');
    const r = requestForCall(t, 1);
    expect(r.system).toBe('You are a terminal assistant.');
    expect(r.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: '<current_datetime>now</current_datetime>\n\ncount the rows' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running both.' },
          { type: 'tool_use', id: 'c1', name: 'bash', input: { command: 'wc -l a.txt', description: 'count' } },
          { type: 'tool_use', id: 'c2', name: 'view', input: { path: '/w/missing.txt' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: '12 a.txt\n<shellId: 0 completed with exit code 0>' },
          { type: 'tool_result', tool_use_id: 'c2', content: 'Path does not exist' },
        ],
      },
    ]);
    expect(t.calls.map((c) => c.end)).toEqual([1, 3]);
  });

  it('replay in the Responses format, with the ids and status Copilot gives a function call', async () => {
    const t = await readTranscript(log('/responses'));
    expect(t.wire).toBe('openai-responses');
    const r = requestForCall(t, 1);
    expect(r.instructions).toBe('You are a terminal assistant.');
    expect((r.input as unknown[]).slice(2, 4)).toEqual([
      {
        type: 'function_call',
        id: 'fc_c1',
        name: 'bash',
        arguments: '{"command":"wc -l a.txt","description":"count"}',
        call_id: 'c1',
        status: 'completed',
      },
      { type: 'function_call', id: 'fc_c2', name: 'view', arguments: '{"path":"/w/missing.txt"}', call_id: 'c2', status: 'completed' },
    ]);
    expect(t.calls.map((c) => c.end)).toEqual([1, 6]);
  });

  it("leave a sub-agent's conversation out of the main one it is written into, and say so", async () => {
    const sub = { parentToolCallId: 't1' };
    const lines = [
      ev('session.start', { producer: 'copilot-agent', selectedModel: 'claude-sonnet-4.5' }, 0),
      ev('user.message', { content: 'delegate', transformedContent: 'delegate' }, 1),
      ev('system.message', { content: 'main system' }, 1),
      ev('session.usage_record', { usage: { apiEndpoint: '/v1/messages', providerType: 'anthropic' } }, 2),
      ev('assistant.message', { content: '', toolRequests: [{ toolCallId: 't1', name: 'task', arguments: { prompt: 'SUB: count' } }] }, 2),
      ev('tool.execution_start', { toolCallId: 't1', toolName: 'task' }, 2),
      ev('subagent.started', { toolCallId: 't1', agentName: 'general-purpose' }, 3),
      ev('user.message', { content: 'SUB: count', transformedContent: 'SUB: count' }, 3),
      ev('system.message', { content: 'As a sub-agent…' }, 3),
      ev('assistant.turn_start', { turnId: '0', ...sub }, 4),
      ev(
        'assistant.message',
        { content: '', toolRequests: [{ toolCallId: 'b1', name: 'bash', arguments: { command: 'wc -l a' } }], ...sub },
        4,
      ),
      ev('tool.execution_complete', { toolCallId: 'b1', result: { content: '12 a' }, ...sub }, 5),
      ev('assistant.message', { content: 'SUB-REPORT: 12', toolRequests: [], ...sub }, 6),
      ev('tool.execution_complete', { toolCallId: 't1', result: { content: 'SUB-REPORT: 12' } }, 7),
      ev('subagent.completed', { toolCallId: 't1' }, 7),
      ev('assistant.message', { content: 'Twelve.', toolRequests: [] }, 8),
    ];
    const file = logFile(lines);
    const t = await readTranscript(file);
    expect(t.calls.map((c) => c.reply)).toEqual(['{"prompt":"SUB: count"}', 'Twelve.']);
    expect(requestForCall(t, 1)).toEqual({
      model: 'claude-sonnet-4.5',
      system: 'main system',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'delegate' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'task', input: { prompt: 'SUB: count' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: 'SUB-REPORT: 12' }] },
      ],
    });
    expect(t.skipped.byReason['sub-agent']).toBe(6);
    expect(t.skipped.notes).toContain(
      'sub-agent t1 (general-purpose), started by the task tool, made 2 call(s) written in the same log: left out (--instance t1 replays it)',
    );

    // the sub-agent's own conversation, by its task call id
    const s = await readTranscript(file, { instance: 't1' });
    expect(s.calls.map((c) => c.reply)).toEqual(['{"command":"wc -l a"}', 'SUB-REPORT: 12']);
    expect(requestForCall(s, 1)).toEqual({
      model: 'claude-sonnet-4.5',
      system: 'As a sub-agent…',
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'SUB: count' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'b1', name: 'bash', input: { command: 'wc -l a' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'b1', content: '12 a' }] },
      ],
    });
    expect(s.skipped.notes).toContain('the sub-agent started by task call t1 is replayed, not the main conversation');
    await expect(readTranscript(file, { instance: 't9' })).rejects.toThrow(/no sub-agent started by task call "t9"; its sub-agents: t1/);
  });
});
