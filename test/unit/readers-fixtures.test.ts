/**
 * Transcript readers against the four real agent sessions in test/fixtures/sessions/ (see the
 * README there for where each comes from). Expected counts and ids were read off the files.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, test } from 'vitest';
import { detectTranscriptFormat, readTranscript, requestForCall, type Transcript } from '../../src/replay/readers/index';
import { toolResults, wireProblems } from './readers-wire-checks';
import { failing } from '../support/expect';
import { SHORT_SESSIONS } from '../support/corpus';

const CLAUDE = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;
const CODEX = SHORT_SESSIONS['ai-sessions__codex-pomodor-timer.jsonl']!;
const MINI = SHORT_SESSIONS['mini-swe-agent__deepseek_bench1__django__django-14752.traj.json']!;
const SWE = SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!;

type Json = Record<string, any>;

function itemsOf(t: Transcript, k: number): unknown[] {
  return requestForCall(t, k)[t.wire === 'openai-responses' ? 'input' : 'messages'] as unknown[];
}

/** The checks every reader's output must pass, whatever the source. */
function sharedBehaviour(name: string, load: () => Transcript) {
  describe(`${name}: shared behaviour`, () => {
    test('call boundaries are strictly increasing and inside the item list', () => {
      const t = load();
      const ends = t.calls.map((c) => c.end);
      expect(
        failing(ends, (e, i) => e > 0 && e <= t.items.length && (i === 0 || e > ends[i - 1]!)),
        'elements that break the rule',
      ).toEqual([]);
    });

    test('every call request is well-formed wire format', () => {
      const t = load();
      const problems = t.calls.flatMap((_, k) => wireProblems(t.wire, itemsOf(t, k)).map((p) => `call ${k}: ${p}`));
      expect(problems).toEqual([]);
    });

    test('every tool result (or observation) answers an earlier call that has a name', () => {
      const t = load();
      // text-mode observations are named by the tool their reader marked them with
      const results = [...toolResults(t.wire, t.items), ...(t.observations ?? []).map((o) => ({ name: o.tool }))];
      expect(results.length).toBeGreaterThan(0);
      expect(results.filter((r) => r.name === undefined || r.name === '')).toEqual([]);
    });

    test('every reply is non-empty', () => {
      const t = load();
      expect(t.calls.filter((c) => c.reply.trim() === '').map((c) => c.end)).toEqual([]);
    });

    test('auto detection picks the same format as the file is', () => {
      const t = load();
      const path = { 'claude-code': CLAUDE, codex: CODEX, 'openai-chat': MINI, 'swe-agent': SWE }[t.source as string]!;
      expect(detectTranscriptFormat(path, readFileSync(path).subarray(0, 64 * 1024))).toBe(t.source);
    });
  });
}

describe('Claude Code session (claude-code-viewer mock data)', () => {
  let t: Transcript;
  beforeAll(async () => {
    t = await readTranscript(CLAUDE);
  });
  sharedBehaviour('claude-code', () => t);

  test('it is read as Anthropic Messages with the model of the main session', () => {
    expect([t.source, t.wire]).toEqual(['claude-code', 'anthropic-messages']);
    expect(t.base).toEqual({ model: 'claude-sonnet-4-20250514' });
  });

  test('the 10 assistant API messages of the main session become 10 calls', () => {
    expect(t.calls).toHaveLength(10);
    expect(t.items).toHaveLength(20);
    expect(t.calls.map((c) => c.end)).toEqual([1, 3, 5, 7, 9, 11, 13, 15, 17, 19]);
  });

  test('the 22 sub-agent lines are skipped and counted as sidechain', () => {
    expect(t.skipped).toEqual({ total: 22, byReason: { sidechain: 22 }, notes: [] });
  });

  test('assistant lines sharing a message id become one message with all their blocks', () => {
    const second = t.items[3] as Json; // lines 6-8, message msg_014fJ8dncc8t7mNss9o1poH3
    expect(second.content.map((b: Json) => [b.type, b.name, b.id])).toEqual([
      ['tool_use', 'Glob', 'toolu_01SpA34ZjSpRT7kiHgsgMTfP'],
      ['tool_use', 'Glob', 'toolu_019e174mUeo44VHBnbQcApEG'],
      ['tool_use', 'TodoWrite', 'toolu_01Jo3zVz1Y26af7Dk8A9GMcS'],
    ]);
  });

  test('tool results logged apart around a sub-agent run are merged into one user message', () => {
    const results = (t.items[6] as Json).content; // lines 15, 23 and 24
    expect(results.map((b: Json) => b.tool_use_id)).toEqual([
      'toolu_018t5jce2ZNoGr2ADsHGQife',
      'toolu_014YF9TXhDRR7BnpasNJ7gjC',
      'toolu_01Jb8RgAYYgwyup2DrEuucy7',
    ]);
  });

  test('the two opening user lines are merged into one user message', () => {
    const first = t.items[0] as Json;
    expect(first.role).toBe('user');
    expect(first.content[0].text).toContain('<command-name>/orchestrator</command-name>');
    expect(first.content[1].text).toContain('Split complex tasks into independent subtasks');
  });

  test('all 13 tool results of the main session are kept, and none of the toolUseResult copies', () => {
    expect(toolResults(t.wire, t.items)).toHaveLength(13);
    expect(JSON.stringify(t.items)).not.toContain('toolUseResult');
  });

  test('messages hold only role and content', () => {
    expect(
      failing(
        t.items,
        (m) =>
          Object.keys(m as Json)
            .sort()
            .join() === 'content,role',
      ),
      'elements that break the rule',
    ).toEqual([]);
  });

  test('the first reply is the text and TodoWrite input of the first assistant message', () => {
    expect(t.calls[0]!.reply).toMatch(/^I'll help you update the CLAUDE.md file/);
    expect(t.calls[0]!.reply).toContain('"todos"');
  });
});

describe('Codex rollout (ai-sessions pomodoro example)', () => {
  let t: Transcript;
  beforeAll(async () => {
    t = await readTranscript(CODEX);
  });
  sharedBehaviour('codex', () => t);

  test('it is read as Responses input with the model from turn_context', () => {
    expect([t.source, t.wire]).toEqual(['codex', 'openai-responses']);
    // session_meta.instructions is null in this CLI version: no instructions to carry
    expect(t.base).toEqual({ model: 'gpt-5-codex' });
  });

  test('all 63 response items are kept in order and become 21 calls', () => {
    expect(t.items).toHaveLength(63);
    expect(t.calls).toHaveLength(21);
    expect(t.calls.slice(0, 4).map((c) => c.end)).toEqual([2, 5, 8, 11]);
  });

  test('event_msg and turn_context lines are counted, not turned into items', () => {
    expect(t.skipped).toEqual({ total: 89, byReason: { event_msg: 68, turn_context: 21 }, notes: [] });
  });

  test('response items are the payloads themselves', () => {
    const firstLine = readFileSync(CODEX, 'utf8').split('\n')[9]!; // line 10: the first function_call
    expect(t.items[3]).toEqual(JSON.parse(firstLine).payload);
    expect(t.items[3]).toMatchObject({ type: 'function_call', name: 'shell', call_id: 'call_Xadcaju55OrZk0cmKRlq1xCw' });
  });

  test('apply_patch calls keep their custom_tool_call shape and pair with their outputs', () => {
    expect(t.items[12]).toMatchObject({ type: 'custom_tool_call', name: 'apply_patch', call_id: 'call_IuOr38b4Q12e6e9iqEbAcu3F' });
    expect(t.items[13]).toMatchObject({ type: 'custom_tool_call_output', call_id: 'call_IuOr38b4Q12e6e9iqEbAcu3F' });
    expect(toolResults(t.wire, t.items)).toHaveLength(18);
  });

  test('a model call with no reasoning item (line 103) is still one call', () => {
    expect(t.calls[13]).toMatchObject({ end: 41 });
    expect(t.items[41]).toMatchObject({ type: 'custom_tool_call', call_id: 'call_kMoi2Jlxr8VhewZgTAiRutWt' });
  });

  test('replies hold tool arguments, patch inputs and final assistant text', () => {
    expect(t.calls[0]!.reply).toContain('"command":["zsh","-lc","ls"]');
    expect(t.calls[3]!.reply).toMatch(/^\*\*\* Begin Patch\n\*\*\* Add File: index.html/);
    expect(t.calls[20]!.reply).toMatch(/^Added a dedicated pause control/);
  });
});

describe('mini-swe-agent trajectory (tool-call mode)', () => {
  let t: Transcript;
  beforeAll(async () => {
    t = await readTranscript(MINI);
  });
  sharedBehaviour('openai-chat', () => t);

  test('it is read as Chat Completions with the model from info.config', () => {
    expect([t.source, t.wire]).toEqual(['openai-chat', 'openai-chat']);
    expect(t.base).toEqual({ model: 'deepseek/deepseek-chat' });
  });

  test('31 API calls, one before each assistant message', () => {
    expect(t.calls).toHaveLength(31);
    expect(t.calls.map((c) => c.end)).toEqual(Array.from({ length: 31 }, (_, k) => 2 + 2 * k));
  });

  test('the closing exit message is skipped and counted', () => {
    expect(t.items).toHaveLength(63);
    expect(t.skipped).toEqual({ total: 1, byReason: { exit: 1 }, notes: [] });
  });

  test('extra is dropped from messages and every other field is kept', () => {
    const original = JSON.parse(readFileSync(MINI, 'utf8')).messages[2];
    const { extra, ...rest } = original;
    expect(extra).toBeDefined();
    expect(t.items[2]).toEqual(rest);
    expect(t.items[2]).toHaveProperty('provider_specific_fields');
  });

  test('30 tool results pair with their bash calls by id', () => {
    const results = toolResults(t.wire, t.items);
    expect(results).toHaveLength(30);
    expect(results[0]).toEqual({ id: 'call_00_9ZSwNwRjFxvwMIvlqQPpvOuX', name: 'bash' });
  });

  test('a reply holds the assistant text and the command arguments', () => {
    expect(t.calls[0]!.reply).toContain('exploring the codebase');
    expect(t.calls[0]!.reply).toContain('grep -i autocomplete');
  });
});

describe('SWE-agent trajectory (text actions)', () => {
  let t: Transcript;
  beforeAll(async () => {
    t = await readTranscript(SWE);
  });
  sharedBehaviour('swe-agent', () => t);

  test('it is read as Chat Completions, one call per assistant entry of history', () => {
    expect([t.source, t.wire]).toEqual(['swe-agent', 'openai-chat']);
    expect(t.items).toHaveLength(37);
    expect(t.calls).toHaveLength(18);
    expect(t.skipped.total).toBe(0);
  });

  test('each observation stays the user message SWE-agent sent, marked as the output of its action', () => {
    expect(t.items[2]).not.toHaveProperty('tool_calls');
    expect(t.items[3]).toMatchObject({ role: 'user' });
    expect((t.items[3] as Json).content).toMatch(/^release: ELF 64-bit LSB executable/);
    expect(t.observations![0]).toEqual({ item: 3, tool: 'file' });
  });

  test('the 17 observations are marked with the tools decompile, edit, python, submit...', () => {
    expect(toolResults(t.wire, t.items)).toEqual([]);
    expect(t.observations!.map((o) => o.tool)).toEqual([
      'file',
      'decompile',
      'decompile',
      'decompile',
      'create',
      'edit',
      'python',
      'create',
      'edit',
      'edit',
      'python',
      'create',
      'edit',
      'python',
      'submit',
      'edit',
      'python',
    ]);
    expect(
      t.observations!.every((o) => (t.items[o.item] as Json).role === 'user' && (t.items[o.item - 1] as Json).role === 'assistant'),
    ).toBe(true);
  });

  test('the last assistant entry, with no observation after it, is not marked', () => {
    expect(t.observations!.some((o) => o.item >= 36)).toBe(false);
    expect(t.items[36]).not.toHaveProperty('tool_calls');
    expect(t.calls[17]!.reply).toContain("submit '125379498'");
  });

  test('SWE-agent bookkeeping fields stay out of the messages', () => {
    const keys = new Set(t.items.flatMap((m) => Object.keys(m as Json)));
    expect([...keys].sort()).toEqual(['content', 'role']);
  });
});
