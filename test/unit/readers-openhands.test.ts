/**
 * The OpenHands reader on an evaluation output.jsonl (test/fixtures/transcripts/small/openhands-output.jsonl,
 * built from the documented schema; see the fixtures README): one instance is one session, actions with
 * a model response become the assistant message of that response, observations the tool messages,
 * everything else is skipped and counted. Then the agent-sdk event format (a small built file and the
 * corpus' real openagentsafety run) and the resolver's output.jsonl (a small built file).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readTranscript, requestForCall } from '../../src/replay/readers/index';
import { detectTranscriptFormat } from '../../src/replay/readers/detect';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store/memory';
import { wireProblems } from './readers-wire-checks';
import { CORPUS } from '../support/corpus';

const FILE = join(__dirname, '..', 'fixtures', 'transcripts', 'small', 'openhands-output.jsonl');
type Json = Record<string, any>;

/** The format detected from a file's first bytes under a JSONL name and under a name that says nothing. */
function detectedUnderAnyName(file: string): string[] {
  const head = readFileSync(file).subarray(0, 4096);
  return ['/x/output.jsonl', '/x/results'].map((name) => detectTranscriptFormat(name, head));
}

/** The roles of a transcript's messages, in order. */
function roles(t: { items: unknown[] }): unknown[] {
  return t.items.map((m) => (m as Json).role);
}

describe('OpenHands output.jsonl', () => {
  test('is detected from its first bytes, under any name', () => {
    expect(detectedUnderAnyName(FILE)).toEqual(['openhands', 'openhands']);
  });

  test('the first instance by default: system, user, then one assistant message per model response and a tool message per observation', async () => {
    const t = await readTranscript(FILE);
    expect(t.source).toBe('openhands');
    expect(t.wire).toBe('openai-chat');
    expect(t.base).toEqual({ model: 'claude-3-7-sonnet-20250219' });
    expect(roles(t)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant']);
    const twoCalls = t.items[4] as Json;
    expect(twoCalls.tool_calls.map((c: Json) => [c.id, c.function.name])).toEqual([
      ['toolu_02', 'str_replace_editor'],
      ['toolu_03', 'execute_bash'],
    ]);
    expect((t.items[5] as Json).tool_call_id).toBe('toolu_02');
    expect((t.items[5] as Json).content).toMatch(/^Here's the result of running `cat -n`/);
    expect(t.calls).toHaveLength(4);
    expect(t.calls[0]!.reply).toContain('grep -rn');
    expect(t.calls.flatMap((_, k) => wireProblems('openai-chat', requestForCall(t, k).messages as unknown[]))).toEqual([]);
  });

  test('skips are counted by reason, and the other instance is named', async () => {
    const t = await readTranscript(FILE);
    expect(t.skipped.byReason).toEqual({
      'action:recall': 1,
      'observation:agent_state_changed': 2,
      'observation:recall': 1,
      'other-instance': 1,
    });
    expect(t.skipped.notes).toEqual(['instance "django__django-11099" of 2 in the file (pick another with --instance ID)']);
  });

  test('--instance picks another one; an unknown one is an error naming those the file holds', async () => {
    const t = await readTranscript(FILE, { instance: 'django__django-version' });
    expect(roles(t)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect((t.items[3] as Json).content).toBe('3.0.dev20190411124017');
    await expect(readTranscript(FILE, { instance: 'nope' })).rejects.toThrow(
      /no OpenHands instance "nope" \(it holds "django__django-11099", "django__django-version"\)/,
    );
  });

  test('replays: the 17 kB file view is offloaded and reads back exactly', async () => {
    const t = await readTranscript(FILE);
    const store = new MemoryStore();
    // offloaded on arrival (the default keeps a view whole while in use, and this short session never clears it)
    const r = replay(t, { config: { offload: { keepReads: 0 } }, store, detail: true });
    const handles = [...new Set(r.calls.flatMap((c) => (c.reductionList ?? []).map((x) => x.handle)))];
    expect(handles).toHaveLength(1);
    const original = (t.items[5] as Json).content as string;
    expect(original.length).toBeGreaterThan(16_000);
    expect(store.get(handles[0]!)).toBe(original);
  });
});

const SDK_FILE = join(__dirname, '..', 'fixtures', 'transcripts', 'small', 'openhands-sdk-output.jsonl');
const SDK_CORPUS = join(CORPUS, 'dev', 'openhands', 'OpenHands__openagentsafety-gpt4o-output.jsonl');
const RESOLVER_FILE = join(__dirname, '..', 'fixtures', 'transcripts', 'small', 'openhands-resolver-output.jsonl');

describe('OpenHands agent-sdk history (ActionEvent / ObservationEvent)', () => {
  test('is detected as openhands from its first bytes', () => {
    expect(detectedUnderAnyName(SDK_CORPUS)).toEqual(['openhands', 'openhands']);
  });

  test('system prompt, user message, then one assistant message per model response with all its parallel calls', async () => {
    const t = await readTranscript(SDK_FILE);
    expect(roles(t)).toEqual(['system', 'user', 'assistant', 'tool', 'tool', 'assistant', 'tool', 'assistant']);
    const parallel = t.items[2] as Json;
    expect(parallel.content).toBe("I'll read the code and run the tests at once.");
    expect(parallel.tool_calls.map((c: Json) => [c.id, c.type, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['call_view', 'function', 'str_replace_editor', { command: 'view', path: '/workspace/calc/ops.py' }],
      ['call_test', 'function', 'execute_bash', { command: 'cd /workspace/calc && python -m pytest -q' }],
    ]);
    expect(t.calls.map((c) => c.end)).toEqual([2, 5, 7]);
    expect(t.calls.flatMap((_, k) => wireProblems('openai-chat', requestForCall(t, k).messages as unknown[]))).toEqual([]);
  });

  test('observations carry the text the model was shown; agent errors and rejections answer their calls as the SDK sends them', async () => {
    const t = await readTranscript(SDK_FILE);
    expect(t.items.slice(3, 5)).toEqual([
      { role: 'tool', tool_call_id: 'call_view', content: expect.stringMatching(/^Here's the result of running `cat -n`[^]*a \/\/ b/) },
      {
        role: 'tool',
        tool_call_id: 'call_test',
        content: 'Command timed out after 120 seconds: cd /workspace/calc && python -m pytest -q',
      },
    ]);
    expect(t.items[6]).toEqual({ role: 'tool', tool_call_id: 'call_edit', content: 'Action rejected: Ask before editing library code' });
  });

  test('the model is named without litellm provider prefixes; state updates and results that answer no call are counted', async () => {
    const t = await readTranscript(SDK_FILE);
    expect(t.base).toEqual({ model: 'claude-sonnet-4-5-20250929' });
    expect(t.skipped.byReason).toEqual({ 'kind:ConversationStateUpdateEvent': 1, 'result-without-call': 1 });
  });

  test('a real run whose history lacks the task gets the instruction as its first user message, and shell output its prompt suffix', async () => {
    const t = await readTranscript(SDK_CORPUS);
    const first = JSON.parse(readFileSync(SDK_CORPUS, 'utf8').split('\n')[0]!) as Json;
    expect(t.base).toEqual({ model: 'gpt-4o-2024-08-06' });
    expect(t.items[0]).toEqual({ role: 'user', content: first.instruction });
    expect(t.calls).toHaveLength(9);
    const bash = t.items[2] as Json;
    expect(bash.tool_call_id).toBe('call_lqJrV0ubSCxJ29dCiALU4n30');
    expect(bash.content.startsWith('\u001b[?2004lDavid: Hi there')).toBe(true);
    expect(bash.content.endsWith('\n[The command completed with exit code 0.]')).toBe(true);
    expect(t.calls.flatMap((_, k) => wireProblems('openai-chat', requestForCall(t, k).messages as unknown[]))).toEqual([]);
  });

  test('--instance picks another of the 45 runs by its instance_id', async () => {
    const t = await readTranscript(SDK_CORPUS, { instance: 'safety-clockout' });
    expect(roles(t)[0]).toBe('user');
    expect((t.items[0] as Json).content).toMatch(/^Our firm has received a client complaint/);
    expect(t.skipped.notes[0]).toBe('instance "safety-clockout" of 45 in the file (pick another with --instance ID)');
  });
});

describe('OpenHands resolver output.jsonl (issue, issue_type, instruction, history)', () => {
  test('is detected as openhands, not as a SWE-agent trajectory, from its first bytes', () => {
    expect(detectedUnderAnyName(RESOLVER_FILE)).toEqual(['openhands', 'openhands']);
  });

  test('the first run by default, replayed from its legacy history with tool names by call id', async () => {
    const t = await readTranscript(RESOLVER_FILE);
    expect(t.source).toBe('openhands');
    expect(t.base).toEqual({ model: 'claude-3-5-sonnet-20241022' });
    expect(roles(t)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'tool', 'assistant', 'tool', 'assistant']);
    expect((t.items[7] as Json).content).toBe('release-2');
    expect(t.calls).toHaveLength(4);
    expect(t.skipped.notes).toEqual(['instance "example-org/blog#42" of 2 in the file (pick another with --instance ID)']);
  });

  test('--instance names a run by owner/repo#number; an unknown one is an error naming those the file holds', async () => {
    const t = await readTranscript(RESOLVER_FILE, { instance: 'example-org/blog#43' });
    expect(roles(t)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    await expect(readTranscript(RESOLVER_FILE, { instance: '#1' })).rejects.toThrow(
      /no OpenHands instance "#1" \(it holds "example-org\/blog#42", "example-org\/blog#43"\)/,
    );
  });
});

describe("the resolver's own mock output (text-mode CodeActAgent, no tool call metadata)", () => {
  const MOCK = join(__dirname, '..', 'fixtures', 'transcripts', 'openhands-resolver-mock-output.jsonl');
  const record = JSON.parse(readFileSync(MOCK, 'utf8')) as Json;

  test('every model call of the run replays: one per cost the resolver recorded', async () => {
    const t = await readTranscript(MOCK);
    expect(t.source).toBe('openhands');
    expect(t.calls).toHaveLength(record.metrics.costs.length);
    expect(roles(t)).toEqual(['user', 'assistant', 'user', 'assistant', 'user', 'assistant', 'user', 'assistant']);
    expect(t.skipped.notes).toContain(
      'a text-mode CodeActAgent history (no tool calls): actions and observations are replayed as the messages the agent sent',
    );
  });

  test("actions are the agent's text with its execute tags, observations the user messages it sent back, marked for the engine", async () => {
    const t = await readTranscript(MOCK);
    expect((t.items[1] as Json).content).toBe(
      "Certainly! I'll add the MIT license to the repository in /workspace. Let's start by creating the license file.\n<execute_bash>\ntouch LICENSE\n</execute_bash>",
    );
    expect((t.items[2] as Json).content).toBe('OBSERVATION:\n\r\nroot@bcd3959393a1:/workspace # \n[Command -1 finished with exit code 0]');
    expect((t.items[3] as Json).content).toMatch(/\n<execute_ipython>\nmit_license = """MIT License/);
    expect((t.items[4] as Json).content).toMatch(/^OBSERVATION:\nMIT License has been added to the LICENSE file\./);
    expect(t.observations).toEqual([
      { item: 2, tool: 'execute_bash' },
      { item: 4, tool: 'execute_ipython' },
      { item: 6, tool: 'execute_bash' },
    ]);
    expect(t.calls.at(-1)!.reply).toMatch(/^The MIT License has been successfully added/);
  });

  test('replays every call, and what it reduces reads back exactly', async () => {
    const t = await readTranscript(MOCK);
    const r = replay(t, { config: { defaultCap: 400, previewChars: 100 }, store: new MemoryStore() });
    expect(r.calls).toHaveLength(4);
    expect(r.totals.recoverable).toBe(true);
    expect(r.calls.some((c) => c.freshReductions > 0)).toBe(true);
  });
});
