/**
 * Transcript readers against hand-written fixtures (test/fixtures/transcripts/small/): one file per
 * record type and per kind of broken input, so each behaviour is pinned on the smallest input.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readTranscript, requestForCall, type Transcript } from '../../src/replay/readers/index';
import { toolResults, wireProblems } from './readers-wire-checks';
import { expectSome } from '../support/expect';
import { LONG_CLAUDE_CODE } from '../support/corpus';

const small = (name: string) => join(__dirname, '..', 'fixtures', 'transcripts', 'small', name);
type Json = Record<string, any>;

function allRequestsValid(t: Transcript): string[] {
  const key = t.wire === 'openai-responses' ? 'input' : 'messages';
  return t.calls.flatMap((_, k) => wireProblems(t.wire, requestForCall(t, k)[key] as unknown[]).map((p) => `call ${k}: ${p}`));
}

describe('Claude Code records', () => {
  const read = () => readTranscript(small('claude-code-records.jsonl'));

  test('lines sharing a message id merge into one assistant message, thinking block kept as it is', async () => {
    const t = await read();
    expect(t.items[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'I should run ls.', signature: 'sig1' },
        { type: 'text', text: 'Listing src/ now.' },
        { type: 'tool_use', id: 'toolu_ls', name: 'Bash', input: { command: 'ls src/' } },
      ],
    });
  });

  test('tool results come from message.content and the toolUseResult copy is ignored', async () => {
    const t = await read();
    expect(t.items[2]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_ls', content: 'main.ts\nutil.ts', is_error: false }],
    });
    expect(JSON.stringify(t.items)).not.toContain('stdout');
  });

  test('summary, file-history-snapshot and system records are counted by type without notes', async () => {
    const t = await read();
    expect(t.skipped.byReason).toMatchObject({ summary: 1, 'file-history-snapshot': 1, system: 1 });
    expect(
      t.skipped.notes.filter((n) => /summary|snapshot|system/.test(n)),
      'elements that should not be there',
    ).toEqual([]);
  });

  test('an assistant line Claude Code wrote itself is skipped, counted and noted with its line', async () => {
    const t = await read();
    expect(t.skipped.byReason.synthetic).toBe(1);
    expect(t.skipped.notes).toContain('line 9: assistant line written by Claude Code, not the model');
    expect(JSON.stringify(t.items)).not.toContain('API Error');
  });

  test('consecutive user lines merge into one message so roles alternate', async () => {
    const t = await read();
    expect(t.items[4]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'Thanks' },
        { type: 'text', text: 'Now open util.ts' },
      ],
    });
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('there is one call per assistant message, its reply the text and tool input', async () => {
    const t = await read();
    // every record of the fixture is dated 2025-01-01T00:00:00Z: each call is sent then
    const at = Date.UTC(2025, 0, 1);
    expect(t.calls).toEqual([
      { end: 1, reply: 'Listing src/ now.\n{"command":"ls src/"}', at },
      { end: 3, reply: 'src/ holds main.ts and util.ts.', at },
      { end: 5, reply: '{"file_path":"src/util.ts"}', at },
      { end: 7, reply: 'util.ts exports x.', at },
    ]);
    expect(t.base).toEqual({ model: 'claude-sonnet-4-5' });
  });

  test('sub-agent (sidechain) lines are skipped and counted, and the Task result stays paired', async () => {
    const t = await readTranscript(small('claude-code-sidechain.jsonl'));
    expect(t.skipped).toEqual({ total: 4, byReason: { sidechain: 4 }, notes: [] });
    expect(t.items).toHaveLength(4);
    expect(toolResults(t.wire, t.items)).toEqual([{ id: 'toolu_task', name: 'Task' }]);
    expect(t.base).toEqual({ model: 'claude-sonnet-4-5' });
  });

  test("a sub-agent's own agent-*.jsonl log is read as a session of its sidechain records", async () => {
    const t = await readTranscript(small('agent-a1b2.jsonl'));
    expect(t.source).toBe('claude-code');
    expect(t.calls.map((c) => c.reply)).toEqual(['{"command":"ls src | wc -l"}', 'src/ holds 12 files.']);
    expect(t.skipped.total).toBe(0);
    expect(t.skipped.notes).toEqual(['sub-agent log (agent-*.jsonl): its sidechain records are read as the session']);
  });

  test('a file whose user/assistant records are all sidechain records is a sub-agent session, whatever its name', async () => {
    const { copyFileSync, mkdtempSync, mkdirSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = join(mkdtempSync(join(tmpdir(), 'sw-subagent-')), 'subagents');
    mkdirSync(dir);
    const renamed = join(dir, 'task-7.jsonl');
    copyFileSync(small('agent-a1b2.jsonl'), renamed);
    const t = await readTranscript(renamed);
    expect(t.calls.map((c) => c.reply)).toEqual(['{"command":"ls src | wc -l"}', 'src/ holds 12 files.']);
    expect(t.skipped.total).toBe(0);
    expect(t.skipped.notes).toEqual([
      'sub-agent transcript (every user/assistant record is a sidechain record): its sidechain records are read as the session',
    ]);
  });

  test('a main session with some sidechain records still skips them', async () => {
    const t = await readTranscript(small('claude-code-sidechain.jsonl'));
    expect(t.skipped.byReason.sidechain).toBe(4);
    expect(t.skipped.notes).toEqual([]);
  });

  test('a result logged between two tool_use lines of one message does not split the message', async () => {
    const t = await readTranscript(small('claude-code-interleaved.jsonl'));
    expect(t.items.map((m) => (m as Json).role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect((t.items[1] as Json).content.map((b: Json) => b.id)).toEqual(['toolu_a', 'toolu_b']);
    expect((t.items[2] as Json).content.map((b: Json) => b.tool_use_id)).toEqual(['toolu_a', 'toolu_b']);
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('a prompt that rewinds the session is noted with its line and replayed in file order', async () => {
    const t = await readTranscript(small('claude-code-rewound.jsonl'));
    expect(t.skipped.notes).toEqual([
      'line 5: continues from an earlier record (the session was rewound or branched); replayed in file order',
    ]);
    expect(t.calls.map((c) => c.reply)).toEqual(['Haiku one', 'Haiku two', 'Haiku three']);
  });

  test("a resumed session's copy of its history (new uuids, same times and content) is read once", async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const rec = (uuid: string, parent: string | null, type: 'user' | 'assistant', timestamp: string, message: object) =>
      JSON.stringify({ type, uuid, parentUuid: parent, sessionId: 's', timestamp, isSidechain: false, message });
    const ask = { role: 'user', content: 'count the files' };
    const answer = { id: 'msg_1', role: 'assistant', model: 'claude-x', content: [{ type: 'text', text: 'twelve' }] };
    const lines = [
      rec('a', null, 'user', '2026-01-01T00:00:00.000Z', ask),
      rec('b', 'a', 'assistant', '2026-01-01T00:00:01.000Z', answer),
      // the resumed session: the same two records under new uuids, then something new
      rec('c', null, 'user', '2026-01-01T00:00:00.000Z', ask),
      rec('d', 'c', 'assistant', '2026-01-01T00:00:01.000Z', answer),
      rec('e', 'd', 'user', '2026-01-01T00:05:00.000Z', { role: 'user', content: 'and the tests?' }),
      rec('f', 'e', 'assistant', '2026-01-01T00:05:01.000Z', {
        id: 'msg_2',
        role: 'assistant',
        model: 'claude-x',
        content: [{ type: 'text', text: 'four' }],
      }),
    ];
    const file = join(mkdtempSync(join(tmpdir(), 'spillway-resumed-')), 'resumed.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const t = await readTranscript(file);
    expect(t.calls.map((c) => c.reply)).toEqual(['twelve', 'four']);
    expect(t.skipped.byReason['resumed-copy']).toBe(2);
    // the same genuine question asked again later (another time) is not a copy
    const again = [
      ...lines,
      rec('g', 'f', 'user', '2026-01-01T00:09:00.000Z', ask),
      rec('h', 'g', 'assistant', '2026-01-01T00:09:01.000Z', { ...answer, id: 'msg_3' }),
    ];
    writeFileSync(file, again.join('\n') + '\n');
    expect((await readTranscript(file)).calls).toHaveLength(3);
  });

  test('the long real Claude Code session is 54 model calls, not its history read twice', async () => {
    const t = await readTranscript(LONG_CLAUDE_CODE);
    expect(t.calls).toHaveLength(54);
    expect(t.skipped.byReason['resumed-copy']).toBe(171);
  });

  test('tool results pointing back to the line of their call are not taken for a rewind', async () => {
    const t = await readTranscript(small('claude-code-parallel-results.jsonl'));
    expect(t.skipped.notes).toEqual([]);
    expect(t.items).toHaveLength(4);
    expect(allRequestsValid(t)).toEqual([]);
  });
});

describe('broken JSONL input', () => {
  test('a truncated last line is counted and noted, and everything before it is read', async () => {
    const t = await readTranscript(small('claude-code-truncated-last-line.jsonl'));
    expect(t.skipped.byReason).toEqual({ 'truncated-last-line': 1 });
    expect(t.skipped.notes).toHaveLength(1);
    expect(t.skipped.notes[0]).toMatch(/^line 5: not valid JSON \(truncated last line: .+\)$/);
    expect(t.calls.map((c) => c.end)).toEqual([1, 3]);
  });

  test('an invalid line in the middle is counted and noted, and reading goes on after it', async () => {
    const t = await readTranscript(small('claude-code-invalid-middle-line.jsonl'));
    expect(t.skipped.byReason).toEqual({ 'invalid-json': 1 });
    expect(t.skipped.notes).toHaveLength(1);
    expect(t.skipped.notes[0]).toMatch(/^line 3: not valid JSON \(.+\)$/);
    expect(t.calls).toHaveLength(2);
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('unknown record types are counted by type and noted once, at their first line', async () => {
    const t = await readTranscript(small('claude-code-unknown-type.jsonl'));
    expect(t.skipped.byReason).toEqual({ 'unknown:hologram': 2, 'unknown:teleport': 1 });
    expect(t.skipped.total).toBe(3);
    expect(t.skipped.notes).toEqual([
      'line 2: unknown record type "hologram" (skipped; further ones counted only)',
      'line 6: unknown record type "teleport" (skipped; further ones counted only)',
    ]);
    expect(t.calls).toHaveLength(2);
  });

  test('a Codex log cut mid-line keeps the calls before the cut', async () => {
    const t = await readTranscript(small('codex-truncated-last-line.jsonl'));
    expect(t.skipped.byReason).toEqual({ 'truncated-last-line': 1 });
    expect(t.skipped.notes[0]).toMatch(/^line 4: not valid JSON \(truncated last line/);
    expect(t.calls).toEqual([{ end: 1, reply: 'hello', at: Date.parse('2025-10-21T20:00:00.000Z') }]);
    expect(t.base).toEqual({ instructions: 'Be brief.' });
  });
});

describe('Codex records', () => {
  const read = () => readTranscript(small('codex-records.jsonl'));

  test('base_instructions become instructions and the model comes from turn_context', async () => {
    const t = await read();
    expect(t.base).toEqual({ model: 'gpt-5-codex', instructions: 'You are Codex, a coding agent.' });
  });

  test('response items are kept in order; each run of model output is one call', async () => {
    const t = await read();
    expect(t.items.map((i) => (i as Json).type)).toEqual([
      'message',
      'reasoning',
      'function_call',
      'function_call_output',
      'custom_tool_call',
      'custom_tool_call_output',
      'message',
      'message',
    ]);
    const at = Date.parse('2025-10-21T20:00:00.000Z');
    expect(t.calls).toEqual([
      { end: 1, reply: '{"command":["npm","test"]}', at },
      { end: 4, reply: '*** Begin Patch\n*** Update File: src/a.ts\n-1\n+2\n*** End Patch', at },
      { end: 6, reply: 'Fixed src/a.ts; tests pass.', at },
    ]);
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('event_msg, turn_context and ghost snapshots are counted without notes', async () => {
    const t = await read();
    expect(t.skipped.byReason).toMatchObject({ event_msg: 2, turn_context: 1, 'response_item:ghost_snapshot': 1 });
  });

  test('a compaction is counted and noted with its line', async () => {
    const t = await read();
    expect(t.skipped.byReason.compacted).toBe(1);
    expectSome(t.skipped.notes, (n) => n.startsWith('line 12: compacted'));
  });

  test('unknown line types and unknown response item types are counted and noted with their line', async () => {
    const t = await read();
    expect(t.skipped.byReason).toMatchObject({ 'unknown:hologram': 1, 'unknown:response_item:telepathy': 1 });
    expect(t.skipped.notes).toContain('line 13: unknown record type "hologram" (skipped; further ones counted only)');
    expect(t.skipped.notes).toContain('line 14: unknown response_item type "telepathy" (skipped; further ones counted only)');
    expect(t.skipped.total).toBe(7);
  });
});

describe('older Codex rollouts', () => {
  test('a rollout of bare items is detected and read, state lines counted', async () => {
    const t = await readTranscript(small('codex-legacy.jsonl'));
    expect([t.source, t.base]).toEqual(['codex', { instructions: 'Legacy instructions.' }]);
    expect(t.items.map((i) => (i as Json).type)).toEqual(['message', 'reasoning', 'function_call', 'function_call_output', 'message']);
    expect(t.calls).toEqual([
      { end: 1, reply: '{"command":["ls"]}' },
      { end: 4, reply: 'The folder holds a.txt.' },
    ]);
    expect(t.skipped).toEqual({ total: 3, byReason: { state: 3 }, notes: [] });
  });
});

describe('SWE-agent and mini-swe-agent', () => {
  test('text-mode SWE-agent observations stay user messages, marked with the tool the action names', async () => {
    const t = await readTranscript(small('swe-agent-text.traj'));
    expect(toolResults(t.wire, t.items)).toEqual([]);
    expect(t.observations).toEqual([
      { item: 4, tool: 'open' },
      { item: 6, tool: 'python3' },
      { item: 8, tool: 'submit' },
    ]);
    expect(t.items[4]).toEqual({ role: 'user', content: '[File: src/app.py (3 lines total)]\n1:import sys\n2:main(\n3:)' });
    expect((t.items[5] as Json).tool_calls).toBeUndefined();
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('SWE-agent user entries that do not follow an action stay user messages', async () => {
    const t = await readTranscript(small('swe-agent-text.traj'));
    expect(t.items.slice(0, 3).map((m) => (m as Json).role)).toEqual(['system', 'user', 'user']);
    expect((t.items[2] as Json).content).toContain('crash on start');
  });

  test('a SWE-agent text reply is the model text, without the action repeated', async () => {
    const t = await readTranscript(small('swe-agent-text.traj'));
    expect(t.calls.map((c) => c.reply)).toEqual([
      'Let me open the file.\n```\nopen src/app.py\n```',
      'Run it.\n```\npython3 src/app.py --check\n```',
      'Submit.\n```\nsubmit\n```',
      'Done.',
    ]);
    expect(t.base).toEqual({ model: 'gpt-4o' });
  });

  test('SWE-agent tool_call_ids saved as a Python list, a JSON list string or a list all pair', async () => {
    const t = await readTranscript(small('swe-agent-function-calling.traj'));
    expect(toolResults(t.wire, t.items)).toEqual([
      { id: 'call_view', name: 'str_replace_editor' },
      { id: 'call_test', name: 'bash' },
      { id: 'call_submit', name: 'submit' },
    ]);
    expect(t.calls.map((c) => c.end)).toEqual([2, 4, 6, 8]);
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('SWE-agent block content with cache_control is kept as it is', async () => {
    const t = await readTranscript(small('swe-agent-function-calling.traj'));
    expect(t.items[1]).toEqual({
      role: 'user',
      content: [{ type: 'text', text: '<uploaded_files>/repo</uploaded_files> Fix the bug.', cache_control: { type: 'ephemeral' } }],
    });
  });

  test('text-mode mini-swe-agent keeps observations as user messages', async () => {
    const t = await readTranscript(small('mini-swe-agent-text.traj.json'));
    expect(t.items.map((m) => (m as Json).role)).toEqual(['system', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect((t.items[3] as Json).content).toMatch(/^<returncode>0<\/returncode>/);
  });

  test('text-mode mini-swe-agent marks each user message after a one-action reply as a bash observation', async () => {
    const t = await readTranscript(small('mini-swe-agent-text.traj.json'));
    expect(t.observations).toEqual([
      { item: 3, tool: 'bash' },
      { item: 5, tool: 'bash' },
    ]);
  });

  test('mini-swe-agent messages lose their extra field and the exit message is counted', async () => {
    const t = await readTranscript(small('mini-swe-agent-text.traj.json'));
    expect(
      t.items.filter((m) => 'extra' in (m as Json)),
      'elements that should not be there',
    ).toEqual([]);
    expect(t.skipped).toEqual({ total: 1, byReason: { exit: 1 }, notes: [] });
  });

  test('text-mode mini-swe-agent has one call per assistant message, its reply the full text', async () => {
    const t = await readTranscript(small('mini-swe-agent-text.traj.json'));
    expect([t.source, t.wire, t.base]).toEqual(['openai-chat', 'openai-chat', { model: 'anthropic/claude-sonnet-4-5' }]);
    expect(t.calls.map((c) => c.end)).toEqual([2, 4, 6]);
    expect(t.calls[0]!.reply).toBe("THOUGHT: find it.\n\n```bash\ngrep -n 'def count' -r src/\n```");
  });
});

describe('API request bodies', () => {
  test('a Chat Completions body has a call before each assistant message and one at the end', async () => {
    const t = await readTranscript(small('chat-request.json'));
    expect([t.source, t.wire]).toEqual(['openai-chat', 'openai-chat']);
    expect(t.calls).toEqual([
      { end: 2, reply: '{"path":"README.md"}' },
      { end: 4, reply: 'README.md describes a demo project.' },
      { end: 6, reply: '' },
    ]);
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('the fields of a request body other than the item list become base', async () => {
    const t = await readTranscript(small('chat-request.json'));
    expect(Object.keys(t.base)).toEqual(['model', 'temperature', 'tools']);
  });

  test('the last call of a request body is the request itself', async () => {
    const t = await readTranscript(small('chat-request.json'));
    const original = JSON.parse(readFileSync(small('chat-request.json'), 'utf8'));
    expect(requestForCall(t, t.calls.length - 1)).toEqual(original);
  });

  test('an Anthropic Messages body is recognised by its blocks and keeps system in base', async () => {
    const t = await readTranscript(small('anthropic-request.json'));
    expect([t.source, t.wire]).toEqual(['anthropic-messages', 'anthropic-messages']);
    expect(t.base).toMatchObject({ system: 'You are a coding agent.', max_tokens: 1024 });
    expect(t.calls.map((c) => c.end)).toEqual([1, 3, 5]);
    expect(t.calls[0]!.reply).toBe('Reading it.\n{"path":"README.md"}');
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('a Responses body puts each run of output items in one call and sends input', async () => {
    const t = await readTranscript(small('responses-request.json'));
    expect([t.source, t.wire]).toEqual(['openai-responses', 'openai-responses']);
    expect(t.calls.map((c) => c.end)).toEqual([1, 4, 6]);
    expect(Object.keys(requestForCall(t, 0))).toEqual(['model', 'instructions', 'store', 'input']);
    expect(allRequestsValid(t)).toEqual([]);
  });

  test('a bare Chat message list is read with an empty base, and no call after the answer it ends with', async () => {
    const t = await readTranscript(small('message-list.json'));
    expect([t.source, t.base]).toEqual(['openai-chat', {}]);
    // a finished conversation: no request followed its last answer (a body ending so is a prefill, and a call)
    expect(t.calls.map((c) => c.end)).toEqual([1, 3]);
    expect(toolResults(t.wire, t.items)).toEqual([{ id: 'call_ls', name: 'bash' }]);
  });

  test('a bare Responses input list is recognised by its item types', async () => {
    const t = await readTranscript(small('responses-input-list.json'));
    expect(t.source).toBe('openai-responses');
    expect(t.calls.map((c) => c.end)).toEqual([1, 3]);
  });

  test('a body read with an explicit format it does not match is refused with the file name', async () => {
    await expect(readTranscript(small('chat-request.json'), { format: 'openai-responses' })).rejects.toThrow(
      /chat-request\.json: does not hold a request in the openai-responses format \(a Responses request needs an "input" list or string; found top-level keys \[model, temperature, tools, messages\]\)/,
    );
  });
});

describe('requestForCall', () => {
  test('shares the transcript items instead of copying them', async () => {
    const t = await readTranscript(small('chat-request.json'));
    const messages = requestForCall(t, 1).messages as unknown[];
    expect(messages).toHaveLength(4);
    expect(messages[3]).toBe(t.items[3]);
  });

  test('puts the base fields next to the items', async () => {
    const t = await readTranscript(small('codex-records.jsonl'));
    const request = requestForCall(t, 0);
    expect(request).toEqual({ model: 'gpt-5-codex', instructions: 'You are Codex, a coding agent.', input: [t.items[0]] });
  });

  test('refuses a call number the transcript does not have', async () => {
    const t = await readTranscript(small('chat-request.json'));
    expect(() => requestForCall(t, 3)).toThrow(RangeError);
    expect(() => requestForCall(t, -1)).toThrow(/call -1 does not exist: the transcript has 3 call\(s\)/);
  });
});

describe('unreadable files', () => {
  test('an empty file is refused with its name, whatever the format', async () => {
    await expect(readTranscript(small('empty.jsonl'))).rejects.toThrow(/empty\.jsonl: the file is empty/);
    await expect(readTranscript(small('empty.jsonl'), { format: 'claude-code' })).rejects.toThrow(/empty\.jsonl: the file is empty/);
  });

  test('a text file is refused with its name, what it starts with and the supported formats', async () => {
    const err = await readTranscript(small('unknown-format.txt')).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toMatch(
      /^Cannot tell the transcript format of .*unknown-format\.txt: it is neither JSON nor JSONL \(it starts with "This is a plain text file/,
    );
    for (const format of ['claude-code', 'codex', 'swe-agent', 'openai-chat', 'anthropic-messages', 'openai-responses']) {
      expect((err as Error).message).toContain(format);
    }
  });

  test('a JSON document of no known shape is refused naming its top-level keys', async () => {
    await expect(readTranscript(small('unknown-format.json'))).rejects.toThrow(
      /unknown-format\.json: it is a JSON object with top-level keys \[title, rows\]/,
    );
  });

  test('a JSONL file of unknown records is refused naming what its first record holds', async () => {
    await expect(readTranscript(small('unknown-records.jsonl'))).rejects.toThrow(
      /unknown-records\.jsonl: its first record has no "type" and keys \[event, at\]/,
    );
  });

  test('a missing file is refused with its name', async () => {
    await expect(readTranscript(small('no-such-file.jsonl'))).rejects.toThrow(/no-such-file\.jsonl: no such file/);
  });

  test('an unknown format option is refused', async () => {
    await expect(readTranscript(small('chat-request.json'), { format: 'yaml' as never })).rejects.toThrow(
      /unknown transcript format "yaml"/,
    );
  });
});
