/**
 * Task histories of Cline's extension before its SDK, Roo Code and Kilo Code
 * (src/replay/readers/cline-task.ts), on hand-written files in the shapes their source writes
 * (`ApiMessage` of Roo Code's task-persistence, `ClineStorageMessage` of Cline's): found by `auto`,
 * sent as `{role, content}` without the extension's own fields, reasoning left out, dated by `ts`.
 * These extensions run only inside VS Code, so no agents-suite test runs them.
 */
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectTranscriptFormat, readTranscript, requestForCall, type Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { sessionName } from '../../src/replay/session-title';
import { toolResults, wireProblems } from './readers-wire-checks';

const small = (name: string) => join(__dirname, '..', 'fixtures', 'transcripts', 'small', name);
const T = 1764000000000;

function allRequestsValid(t: Transcript): string[] {
  return t.calls.flatMap((_, k) => wireProblems(t.wire, requestForCall(t, k).messages as unknown[]).map((p) => `call ${k}: ${p}`));
}

describe('Cline-family task histories', () => {
  it('are found by auto, and a bare Messages list without the extension fields is not one', async () => {
    for (const f of ['cline-task-roo.json', 'cline-task-cline.json', 'cline-task-xml.json'])
      expect((await readTranscript(small(f))).source).toBe('cline-task');
    expect(detectTranscriptFormat('api_conversation_history.json', JSON.stringify([{ role: 'user', content: 'hi', ts: T }]))).toBe(
      'cline-task',
    );
    const bare = JSON.stringify([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'ls', input: {} }] },
    ]);
    expect(detectTranscriptFormat('list.json', bare)).toBe('anthropic-messages');
  });

  it("Roo Code: each message as it is sent, without the extension's fields, its reasoning left out and counted", async () => {
    const t = await readTranscript(small('cline-task-roo.json'));
    expect(t.wire).toBe('anthropic-messages');
    expect(t.base).toEqual({});
    for (const item of t.items) expect(Object.keys(item as object).sort()).toEqual(['content', 'role']);
    expect(t.items[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading the test.' },
        { type: 'tool_use', id: 'call_read', name: 'read_file', input: { path: 'test_calc.py' } },
      ],
    });
    // the standalone reasoning entry and the reasoning block of the first answer
    expect(t.skipped.byReason).toEqual({ reasoning: 2 });
    expect(t.skipped.notes.join('\n')).toContain('1 message(s) were condensed or cut by the extension');
    expect(toolResults(t.wire, t.items).map((r) => r.name)).toEqual(['read_file', 'apply_diff']);
    expect(allRequestsValid(t)).toEqual([]);
  });

  it('a call before each answer, dated by the message it answers; none after the last answer', async () => {
    const t = await readTranscript(small('cline-task-roo.json'));
    expect(t.calls.map((c) => c.end)).toEqual([1, 3, 5]);
    // the condensed tool result and the summary after it are one user turn, as Roo Code merges them
    expect(t.items[4]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'call_fix', content: 'Changes applied to calc.py.' },
        { type: 'text', text: 'Summary of the conversation so far: calc.add was fixed.' },
      ],
    });
    expect(t.calls.map((c) => c.at)).toEqual([T, T + 5000, T + 10000 + 20 * 60000 + 500]);
    expect(t.calls[2]!.reply).toBe('Done: add returns a + b.\n{"result":"Fixed add in calc.py"}');
    // the twenty minutes before the last call find Anthropic's cache gone
    const r = replay(t, { config: { tokenizer: 'approximate' } });
    expect(r.totals.coldCalls?.anthropic).toBe(1);
  });

  it("Cline: the model its answers name prices the replay; an unsigned thinking block and the blocks' own fields are not sent", async () => {
    const t = await readTranscript(small('cline-task-cline.json'));
    expect(t.base).toEqual({ model: 'claude-sonnet-4-5' });
    expect(t.items[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Listing.' },
        { type: 'tool_use', id: 'toolu_ls', name: 'execute_command', input: { command: 'ls' } },
      ],
    });
    expect(t.skipped.byReason).toEqual({ 'unsigned-thinking': 1 });
    // it ends with a tool result: the request that sent it is a call, its answer not in the file
    expect(t.calls.map((c) => c.end)).toEqual([1, 3]);
    expect(t.calls[1]!.reply).toBe('');
    expect(allRequestsValid(t)).toEqual([]);
  });

  it("results Cline kept as text after their calls are sent as those calls' tool results, first in the message", async () => {
    const t = await readTranscript(small('cline-task-text-results.json'));
    expect(t.base).toEqual({ model: 'claude_4_5_opus' });
    const logged = JSON.parse(readFileSync(small('cline-task-text-results.json'), 'utf8')) as { content: { text: string }[] }[];
    // the build's output (first in the file) goes second: tool results follow the order of the calls
    expect(t.items[4]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'tooluse_read', content: logged[4]!.content[1]!.text },
        { type: 'tool_result', tool_use_id: 'tooluse_run', content: logged[4]!.content[0]!.text },
        logged[4]!.content[2],
      ],
    });
    // `[subagents]` names no call: it answers the one call left open (use_subagents)
    expect(toolResults(t.wire, t.items).map((r) => r.name)).toEqual([
      'use_subagents',
      'read_file',
      'execute_command',
      'ask_followup_question',
    ]);
    expect(t.skipped.notes.join('\n')).toContain('4 tool result(s) were kept as text after their calls');
    expect(allRequestsValid(t)).toEqual([]);
    // and the engine reduces them (as text they were the user's words, never reduced)
    const r = replay(t, { config: { tokenizer: 'approximate', defaultCap: 40, previewChars: 0, offload: { keepReads: 0 } } });
    expect(r.totals.projectedTokens).toBeLessThan(r.totals.originalTokens);
  });

  it('tool calls written as XML text: no tool result, and a note says nothing is reduced', async () => {
    const t = await readTranscript(small('cline-task-xml.json'));
    expect(toolResults(t.wire, t.items)).toEqual([]);
    expect(t.skipped.notes.join('\n')).toContain("2 answer(s) call tools in XML text (the extensions' older protocol)");
  });

  it('a file that is not such a history is refused with its path when the format is forced', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-cline-task-'));
    const file = join(dir, 'chat.json');
    writeFileSync(file, JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }));
    await expect(readTranscript(file, { format: 'cline-task' })).rejects.toThrow(
      `${file}: not a Cline, Roo Code or Kilo Code task history`,
    );
  });

  it('is named by its task and its first time', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sw-cline-task-'));
    const file = join(dir, 'api_conversation_history.json');
    copyFileSync(small('cline-task-roo.json'), file);
    expect(sessionName(file)).toBe('Fix the failing test in calc.py · Nov 24, 2025');
  });
});
