/**
 * When each call was sent (TranscriptCall.at), as every reader of a format with times dates it: the
 * last record of the request (Claude Code, Codex, OpenHands, Gemini CLI) or the answer's own time
 * (pi). A missing or invalid time leaves the call undated; it is never guessed from its neighbours.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { readTranscript } from '../../src/replay/readers/index';
import { parseTime } from '../../src/replay/readers/wire';

const dir = mkdtempSync(join(tmpdir(), 'spillway-times-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Writes records as a JSONL file and reads it back as a transcript. */
async function readLines(name: string, records: unknown[], format?: 'openhands') {
  const path = join(dir, name);
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return readTranscript(path, format ? { format } : {});
}

const T = (iso: string) => Date.parse(iso);

describe('parseTime', () => {
  test('reads ISO times with a zone, without one (as UTC) and ms since the epoch', () => {
    expect(parseTime('2026-01-01T05:03:58.880Z')).toBe(Date.UTC(2026, 0, 1, 5, 3, 58, 880));
    expect(parseTime('2026-01-01T07:03:58+02:00')).toBe(Date.UTC(2026, 0, 1, 5, 3, 58));
    // OpenHands: microseconds, no zone
    expect(parseTime('2025-10-30T03:50:30.915175')).toBe(Date.UTC(2025, 9, 30, 3, 50, 30, 915));
    expect(parseTime(1766536349362)).toBe(1766536349362);
  });

  test('rejects what is not a valid time instead of guessing', () => {
    for (const bad of ['2026-02-31T00:00:00Z', '2026-01-01T25:00:00Z', 'yesterday', '', '2026-01-01', null, undefined, {}, NaN, Infinity])
      expect(parseTime(bad), String(bad)).toBeUndefined();
    // a placeholder, or seconds taken for ms: no agent logged before 2000
    expect(parseTime(1)).toBeUndefined();
    expect(parseTime(1766536349)).toBeUndefined();
  });
});

describe('Claude Code', () => {
  const rec = (type: string, uuid: string, timestamp: unknown, message: unknown) => ({
    type,
    uuid,
    isSidechain: false,
    sessionId: 's',
    ...(timestamp === undefined ? {} : { timestamp }),
    message,
  });
  const assistant = (uuid: string, ts: string, id: string, content: unknown) =>
    rec('assistant', uuid, ts, { id, role: 'assistant', model: 'claude-sonnet-4-5', content: [content] });
  const result = (uuid: string, ts: unknown, id: string) =>
    rec('user', uuid, ts, { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'ok' }] });

  test('a call is dated by the last record of its request; a bad or missing time leaves it undated', async () => {
    const t = await readLines('claude.jsonl', [
      rec('user', 'u1', '2026-01-01T10:00:00.000Z', { role: 'user', content: 'Run both' }),
      assistant('a1', '2026-01-01T10:00:05.000Z', 'm1', { type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'a' } }),
      assistant('a2', '2026-01-01T10:00:06.000Z', 'm1', { type: 'tool_use', id: 't2', name: 'Bash', input: { command: 'b' } }),
      // two results, one user message: the call is sent after the second
      result('u2', '2026-01-01T10:00:07.000Z', 't1'),
      result('u3', '2026-01-01T10:07:00.000Z', 't2'),
      assistant('a3', '2026-01-01T10:07:04.000Z', 'm2', { type: 'tool_use', id: 't3', name: 'Bash', input: { command: 'c' } }),
      // the last record of the next request has an invalid time
      result('u4', '2026-13-01T10:08:00.000Z', 't3'),
      assistant('a4', '2026-01-01T10:08:03.000Z', 'm3', { type: 'tool_use', id: 't4', name: 'Bash', input: { command: 'd' } }),
      // and the one after has none at all
      result('u5', undefined, 't4'),
      assistant('a5', '2026-01-01T10:09:03.000Z', 'm4', { type: 'text', text: 'done' }),
    ]);
    expect(t.calls.map((c) => c.at)).toEqual([T('2026-01-01T10:00:00.000Z'), T('2026-01-01T10:07:00.000Z'), undefined, undefined]);
  });
});

describe('Codex', () => {
  const line = (timestamp: unknown, payload: unknown) => ({
    ...(timestamp === undefined ? {} : { timestamp }),
    type: 'response_item',
    payload,
  });
  test("a call is dated by the line of its request's last item; old rollouts without times stay undated", async () => {
    const t = await readLines('rollout-times.jsonl', [
      { timestamp: '2025-10-21T20:00:00.000Z', type: 'session_meta', payload: { id: 's', base_instructions: { text: 'Be brief.' } } },
      line('2025-10-21T20:00:01.000Z', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'test' }] }),
      line('2025-10-21T20:00:04.000Z', { type: 'function_call', name: 'shell', arguments: '{"command":["ls"]}', call_id: 'c1' }),
      line('2025-10-21T21:30:00.000Z', { type: 'function_call_output', call_id: 'c1', output: 'a.ts' }),
      line('2025-10-21T21:30:05.000Z', { type: 'function_call', name: 'shell', arguments: '{"command":["cat"]}', call_id: 'c2' }),
      line('not a time', { type: 'function_call_output', call_id: 'c2', output: 'x' }),
      line('2025-10-21T21:31:00.000Z', { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'done' }] }),
    ]);
    expect(t.calls.map((c) => c.at)).toEqual([T('2025-10-21T20:00:01.000Z'), T('2025-10-21T21:30:00.000Z'), undefined]);
  });
});

describe('pi', () => {
  const msg = (message: Record<string, unknown>) => ({ type: 'message', timestamp: '2025-12-24T00:40:00.000Z', message });
  const answer = (timestamp: unknown, content: unknown[]) => ({
    role: 'assistant',
    content,
    api: 'anthropic-messages',
    provider: 'anthropic',
    model: 'claude-opus-4-5',
    usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
    stopReason: 'toolUse',
    ...(timestamp === undefined ? {} : { timestamp }),
  });
  const call = (id: string) => ({ type: 'toolCall', id, name: 'bash', arguments: { command: 'ls' } });
  const result = (id: string) => ({
    role: 'toolResult',
    toolCallId: id,
    toolName: 'bash',
    content: [{ type: 'text', text: 'ok' }],
    timestamp: 1766536355582,
  });

  test("a call is dated by its answer's own timestamp, which pi sets as it starts the request", async () => {
    const t = await readLines('pi-times.jsonl', [
      { type: 'session', id: 's', timestamp: '2025-12-24T00:32:27.967Z', cwd: '/w' },
      msg({ role: 'user', content: [{ type: 'text', text: 'go' }], timestamp: 1766536349359 }),
      msg(answer(1766536349362, [call('t1')])),
      msg(result('t1')),
      // an answer whose timestamp is not a number of ms (an ISO string is not pi's format) or is missing
      msg(answer('soon', [call('t2')])),
      msg(result('t2')),
      msg(answer(undefined, [call('t3')])),
      msg(result('t3')),
      msg(answer(1766536949362, [{ type: 'text', text: 'done' }])),
    ]);
    expect(t.calls.map((c) => c.at)).toEqual([1766536349362, undefined, undefined, 1766536949362]);
  });
});

describe('OpenHands', () => {
  test('a call is dated by the last event of its request; times without a zone are read as UTC', async () => {
    const call = (id: string, ts: string, response: string) => ({
      id: Number(id.slice(1)),
      timestamp: ts,
      source: 'agent',
      action: 'run',
      args: { command: 'ls' },
      tool_call_metadata: {
        tool_call_id: id,
        model_response: {
          id: response,
          model: 'gpt-4o',
          choices: [
            {
              message: {
                role: 'assistant',
                content: null,
                tool_calls: [{ id, type: 'function', function: { name: 'execute_bash', arguments: '{"command":"ls"}' } }],
              },
            },
          ],
        },
      },
    });
    const obs = (id: string, ts: string) => ({
      timestamp: ts,
      source: 'agent',
      observation: 'run',
      content: 'ok',
      tool_call_metadata: { tool_call_id: id },
    });
    const t = await readLines(
      'output.jsonl',
      [
        {
          instance_id: 'i1',
          instruction: 'fix it',
          history: [
            { id: 0, timestamp: '2025-04-18T10:00:00.000000', source: 'user', action: 'message', args: { content: 'fix it' } },
            call('c1', '2025-04-18T10:00:10.000000', 'r1'),
            obs('c1', '2025-04-18T10:00:12.500000'),
            call('c2', '2025-04-18T10:00:20.000000', 'r2'),
            obs('c2', 'April 18th'),
            call('c3', '2025-04-18T10:00:30.000000', 'r3'),
          ],
        },
      ],
      'openhands',
    );
    expect(t.calls.map((c) => c.at)).toEqual([Date.UTC(2025, 3, 18, 10, 0, 0), Date.UTC(2025, 3, 18, 10, 0, 12, 500), undefined]);
  });
});

describe('Gemini CLI', () => {
  test('a call is dated by its user message, or by the latest tool call whose result it sends', async () => {
    const t = await readLines('session-2026-01-01T10-00-abcd.jsonl', [
      { sessionId: 's', projectHash: 'h', startTime: '2026-01-01T10:00:00.000Z', lastUpdated: '2026-01-01T10:00:00.000Z', kind: 'main' },
      { id: 'u1', timestamp: '2026-01-01T10:00:00.000Z', type: 'user', content: [{ text: 'list' }] },
      {
        id: 'g1',
        timestamp: '2026-01-01T10:00:02.000Z',
        type: 'gemini',
        content: '',
        model: 'gemini-2.5-pro',
        toolCalls: [
          {
            id: 'x1',
            name: 'ls',
            args: {},
            timestamp: '2026-01-01T10:00:03.000Z',
            result: [{ functionResponse: { id: 'x1', name: 'ls', response: { output: 'a' } } }],
          },
          {
            id: 'x2',
            name: 'ls',
            args: {},
            timestamp: '2026-01-01T10:06:00.000Z',
            result: [{ functionResponse: { id: 'x2', name: 'ls', response: { output: 'b' } } }],
          },
        ],
      },
      {
        id: 'g2',
        timestamp: '2026-01-01T10:06:01.000Z',
        type: 'gemini',
        content: '',
        model: 'gemini-2.5-pro',
        toolCalls: [
          // one call of the two has a broken time: the request's time is unknown, not the other's
          {
            id: 'x3',
            name: 'ls',
            args: {},
            timestamp: '2026-01-01T10:06:02.000Z',
            result: [{ functionResponse: { id: 'x3', name: 'ls', response: { output: 'c' } } }],
          },
          {
            id: 'x4',
            name: 'ls',
            args: {},
            timestamp: 'later',
            result: [{ functionResponse: { id: 'x4', name: 'ls', response: { output: 'd' } } }],
          },
        ],
      },
      { id: 'g3', timestamp: '2026-01-01T10:06:05.000Z', type: 'gemini', content: 'done', model: 'gemini-2.5-pro' },
    ]);
    expect(t.calls.map((c) => c.at)).toEqual([T('2026-01-01T10:00:00.000Z'), T('2026-01-01T10:06:00.000Z'), undefined]);
  });
});

describe('formats without times', () => {
  test('a saved request body has no times: its call stays undated', async () => {
    const t = await readTranscript(join(__dirname, '..', 'fixtures', 'transcripts', 'small', 'chat-request.json'));
    expect(t.calls.length).toBeGreaterThan(0);
    expect(t.calls.every((c) => c.at === undefined)).toBe(true);
  });
});
