/**
 * The pi coding agent's session files: two hand-written ones (test/fixtures/transcripts/small/pi-*.jsonl:
 * every entry type and message role, a model switch, a tree with branches) and the corpus' two real
 * sessions (test/fixtures/sessions/dev3/pi/). The reader turns pi's messages into the requests pi's
 * providers sent (packages/ai/src/providers in badlogic/pi-mono).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { detectTranscriptFormat } from '../../src/replay/readers/detect';
import { readTranscript, requestForCall, type Transcript } from '../../src/replay/readers/index';
import { splitConcatenated } from '../../src/replay/readers/lines';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store/memory';
import { CORPUS } from '../support/corpus';
import { wireProblems } from './readers-wire-checks';

const small = (name: string) => join(__dirname, '..', 'fixtures', 'transcripts', 'small', name);
const PI_SESSION = join(CORPUS, 'dev3', 'pi', 'badlogic__pi-session-20251217.jsonl');
const PI_COMPACT = join(CORPUS, 'dev3', 'pi', 'badlogic__pi-compact.jsonl');
type Json = Record<string, any>;

/**
 * What a provider would reject in any call's request. pi sends a user message after tool results as
 * a message of its own, which the Messages API accepts (it joins consecutive turns of one role), so
 * a repeated role is not a problem here.
 */
function problems(t: Transcript): string[] {
  const key = t.wire === 'openai-responses' ? 'input' : 'messages';
  return t.calls.flatMap((_, k) =>
    wireProblems(t.wire, requestForCall(t, k)[key] as unknown[])
      .filter((p) => !/repeats role user/.test(p))
      .map((p) => `call ${k}: ${p}`),
  );
}

describe('detection', () => {
  test.each([small('pi-records.jsonl'), small('pi-tree.jsonl'), PI_SESSION, PI_COMPACT])('%s is pi under any name', (file) => {
    const head = readFileSync(file).subarray(0, 64 * 1024);
    expect(['/x/s.jsonl', '/x/session'].map((name) => detectTranscriptFormat(name, head))).toEqual(['pi', 'pi']);
  });
});

describe('pi-records.jsonl (every message role, a model switch)', () => {
  const read = () => readTranscript(small('pi-records.jsonl'));

  test('is replayed as Anthropic Messages for the model that made most calls', async () => {
    const t = await read();
    expect(t.source).toBe('pi');
    expect(t.wire).toBe('anthropic-messages');
    expect(t.base).toEqual({ model: 'claude-sonnet-4-5' });
    expect(t.skipped.notes).toContain(
      'the session called 2 models (claude-sonnet-4-5 via anthropic-messages: 5 calls; gpt-5.1-codex via openai-codex-responses: 1 calls); ' +
        "every call is replayed as claude-sonnet-4-5's, in anthropic-messages",
    );
  });

  test('an answer keeps its signed thinking, text and tool calls; its results go back in one user message, an image as a block', async () => {
    const t = await read();
    expect(t.items[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Read the file and run the build.', signature: 'sig-1' },
        { type: 'text', text: 'Reading it.' },
        { type: 'tool_use', id: 'toolu_read1', name: 'read', input: { path: 'src/app.ts' } },
        { type: 'tool_use', id: 'toolu_bash1', name: 'bash', input: { command: 'npm run build' } },
      ],
    });
    expect(t.items[2]).toEqual({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_read1', content: 'export const port = 8123;\nlisten(port);', is_error: false },
        {
          type: 'tool_result',
          tool_use_id: 'toolu_bash1',
          content: [
            { type: 'text', text: "src/app.ts(2,1): error TS2304: Cannot find name 'listen'." },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
          is_error: true,
        },
      ],
    });
  });

  test('an aborted answer the provider billed is a call but not history; one it never answered is skipped', async () => {
    const t = await read();
    expect(t.calls.map((c) => c.end)).toEqual([1, 3, 5, 8, 10, 13]);
    expect(t.calls[1]!.reply).toBe('{"path":"src/listen.ts"}');
    expect(JSON.stringify(t.items)).not.toContain('toolu_half');
    expect(t.skipped.byReason['assistant:aborted']).toBe(1);
  });

  test("the user's ! command is user text as pi words it; one excluded with !! is left out", async () => {
    const t = await read();
    expect(t.items[3]).toEqual({ role: 'user', content: [{ type: 'text', text: 'Ran `git status --short`\n```\n M src/app.ts\n```' }] });
    expect(JSON.stringify(t.items)).not.toContain('.secret');
    expect(t.skipped.byReason['bashExecution:excluded']).toBe(1);
  });

  test('two records written back to back on one line are both read', async () => {
    const t = await read();
    expect((t.items[5] as Json).content[0]).toMatchObject({ type: 'tool_use', id: 'toolu_edit1' });
    expect((t.items[6] as Json).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_edit1' });
    expect(t.skipped.notes).toContain('line 12: 2 records written back to back on one line (each is read)');
  });

  test("another model's answer: its thinking becomes text, its call id is made valid for Anthropic, and its result follows", async () => {
    const t = await read();
    expect(t.items[8]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Build again.' },
        { type: 'tool_use', id: 'call_b2_fc_b2', name: 'bash', input: { command: 'npm run build' } },
      ],
    });
    expect((t.items[9] as Json).content[0].tool_use_id).toBe('call_b2_fc_b2');
  });

  test("a tool call left without a result gets pi's error result before the next user message", async () => {
    const t = await read();
    expect(t.items[11]).toEqual({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: 'toolu_t1', content: 'No result provided', is_error: true }],
    });
    expect((t.items[12] as Json).content[0].text).toBe('Stop, that is enough.');
  });

  test('settings, the compaction and unknown entries are skipped and counted; every request is valid', async () => {
    const t = await read();
    expect(t.skipped.byReason).toEqual({
      'assistant:aborted': 1,
      'bashExecution:excluded': 1,
      compaction: 1,
      model_change: 1,
      thinking_level_change: 1,
      'unknown:future_entry': 1,
    });
    expect(t.skipped.notes).toContain(
      'line 13: compaction (pi summarised the history here; later calls are replayed with the full history)',
    );
    expect(problems(t)).toEqual([]);
  });
});

describe('pi-tree.jsonl (version 3: entries form a tree)', () => {
  test('the branch that ends at the last entry is replayed, with the branch summary and the custom message as user text', async () => {
    const t = await readTranscript(small('pi-tree.jsonl'));
    const texts = t.items.map((m) => {
      const c = (m as Json).content;
      return typeof c === 'string' ? c : (c as Json[]).map((b) => b.text ?? b.type).join('|');
    });
    expect(texts).toEqual([
      'List the tests.',
      'tool_use',
      'tool_result',
      'Two: app.test.ts and server.test.ts.',
      'The following is a summary of a branch that this conversation came back from:\n\n<summary>\nRan test/app.test.ts: 1 failed (expected 8123).</summary>',
      'Remember: port 8123.',
      'Run server.test.ts instead.',
      'tool_use',
      'tool_result',
      'server.test.ts passes.',
    ]);
    expect(t.calls.map((c) => c.end)).toEqual([1, 3, 7, 9]);
    expect(t.skipped.byReason).toEqual({ 'other-branch': 3, label: 1, session_info: 1 });
    expect(problems(t)).toEqual([]);
  });
});

describe('the corpus sessions', () => {
  test('session-20251217: every answer of claude-opus-4-5 is a call, in Anthropic Messages, and every request is valid', async () => {
    const t = await readTranscript(PI_SESSION);
    expect(t.wire).toBe('anthropic-messages');
    expect(t.base).toEqual({ model: 'claude-opus-4-5' });
    // 219 answers, of which 6 aborted before the provider answered; line 440 holds two records
    expect(t.calls).toHaveLength(214);
    expect(t.skipped.byReason).toEqual({ 'assistant:aborted': 6, thinking_level_change: 8, compaction: 1 });
    expect(problems(t)).toEqual([]);
  });

  test('session-20251217: replays with reductions that read back exactly, priced as Claude', async () => {
    const t = await readTranscript(PI_SESSION);
    // reads offloaded on arrival, so the first 30 calls carry reductions to read back (the default keeps them whole while in use)
    const config = { 'offload.keepReads': 0, 'inputs.when': 'arrival' };
    const r = replay({ ...t, calls: t.calls.slice(0, 30) }, { config, store: new MemoryStore() });
    expect(r.model).toBe('claude-opus-4-5');
    expect(r.family).toBe('anthropic');
    expect(r.totals.recoverable).toBe(true);
    expect(r.calls.some((c) => c.freshReductions > 0)).toBe(true);
    expect(r.totals.projectedTokens).toBeLessThan(r.totals.originalTokens);
  });
});

describe('splitConcatenated', () => {
  test('splits whole objects written back to back, braces in strings included', () => {
    expect(splitConcatenated('{"a":"}{"}{"b":[1,{"c":2}]}')).toEqual([{ a: '}{' }, { b: [1, { c: 2 }] }]);
    expect(splitConcatenated('{"a":"\\"}"} {"b":1}')).toEqual([{ a: '"}' }, { b: 1 }]);
  });

  test('is undefined for one object, a cut-off object or text between objects', () => {
    expect(splitConcatenated('{"a":1}')).toBeUndefined();
    expect(splitConcatenated('{"a":1}{"b":')).toBeUndefined();
    expect(splitConcatenated('{"a":1},{"b":2}')).toBeUndefined();
  });
});
