/**
 * The OpenHands reader on an evaluation output.jsonl (test/fixtures/transcripts/small/openhands-output.jsonl,
 * built from the documented schema; see the fixtures README): one instance is one session, actions with
 * a model response become the assistant message of that response, observations the tool messages,
 * everything else is skipped and counted.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readTranscript, requestForCall } from '../../src/replay/readers/index';
import { detectTranscriptFormat } from '../../src/replay/readers/detect';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store/memory';
import { wireProblems } from './readers-wire-checks';

const FILE = join(__dirname, '..', 'fixtures', 'transcripts', 'small', 'openhands-output.jsonl');
type Json = Record<string, any>;

describe('OpenHands output.jsonl', () => {
  test('is detected from its first bytes, under any name', () => {
    const head = readFileSync(FILE).subarray(0, 4096);
    expect(detectTranscriptFormat('/x/output.jsonl', head)).toBe('openhands');
    expect(detectTranscriptFormat('/x/results', head)).toBe('openhands');
  });

  test('the first instance by default: system, user, then one assistant message per model response and a tool message per observation', async () => {
    const t = await readTranscript(FILE);
    expect(t.source).toBe('openhands');
    expect(t.wire).toBe('openai-chat');
    expect(t.base).toEqual({ model: 'claude-3-7-sonnet-20250219' });
    expect(t.items.map((m) => (m as Json).role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
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
    expect(t.items.map((m) => (m as Json).role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect((t.items[3] as Json).content).toBe('3.0.dev20190411124017');
    await expect(readTranscript(FILE, { instance: 'nope' })).rejects.toThrow(
      /no OpenHands instance "nope" \(it holds "django__django-11099", "django__django-version"\)/,
    );
  });

  test('replays: the 17 kB file view is offloaded and reads back exactly', async () => {
    const t = await readTranscript(FILE);
    const store = new MemoryStore();
    const r = replay(t, { config: {}, store, detail: true });
    const handles = [...new Set(r.calls.flatMap((c) => (c.reductionList ?? []).map((x) => x.handle)))];
    expect(handles).toHaveLength(1);
    const original = (t.items[5] as Json).content as string;
    expect(original.length).toBeGreaterThan(16_000);
    expect(store.get(handles[0]!)).toBe(original);
  });
});
