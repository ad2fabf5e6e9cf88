/**
 * Qwen Code chat logs (src/replay/readers/qwen-code.ts) on logs written here in the shape 0.24.4
 * writes (the agents suite checks the reader against the real CLI's log and the requests it sent):
 * found by `auto` (not taken for Claude Code, whose records look alike), the branch that ends at the
 * last record replayed through the system records between, each answer one call, thoughts left out.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readTranscript, requestForCall } from '../../src/replay/readers';
import { sessionName } from '../../src/replay/session-title';

const dir = mkdtempSync(join(tmpdir(), 'sw-qwen-'));
let n = 0;
const rec = (uuid: string, parentUuid: string | null, type: string, extra: Record<string, unknown>, second: number) =>
  JSON.stringify({
    uuid,
    parentUuid,
    sessionId: 's1',
    timestamp: `2026-11-30T10:00:${String(second).padStart(2, '0')}.000Z`,
    type,
    provenance: type === 'system' ? 'system' : type === 'user' ? 'real_user' : 'model',
    cwd: '/w/shop',
    version: '0.24.4',
    ...extra,
  });
const user = (text: string) => ({ message: { role: 'user', parts: [{ text }] } });
const model = (parts: unknown[]) => ({ model: 'qwen3-coder-plus', message: { role: 'model', parts } });
const result = (id: string, output: unknown) => ({
  message: { role: 'user', parts: [{ functionResponse: { id, name: 'run_shell_command', response: output } }] },
});
const telemetry = { subtype: 'ui_telemetry', systemPayload: {} };
const call = (id: string, command: string) => ({ functionCall: { id, name: 'run_shell_command', args: { command } } });

function file(lines: string[]): string {
  const path = join(dir, `c${++n}.jsonl`);
  writeFileSync(path, lines.join('\n') + '\n');
  return path;
}

/** A prompt, an answer with a thought and a call, its result (through a telemetry record), a failed call, the answer. */
function log(): string[] {
  return [
    rec('u1', null, 'user', user('Count the cart lines'), 0),
    rec('s1', 'u1', 'system', telemetry, 1),
    rec(
      'a1',
      's1',
      'assistant',
      model([{ text: 'Thinking it over', thought: true }, { text: 'Counting.' }, call('c1', 'wc -l cart.ts')]),
      1,
    ),
    rec('s2', 'a1', 'system', telemetry, 2),
    rec('r1', 's2', 'tool_result', result('c1', { output: '12 cart.ts' }), 2),
    rec('a2', 'r1', 'assistant', model([call('c2', 'cat missing.ts')]), 3),
    rec('r2', 'a2', 'tool_result', result('c2', { error: 'cat: missing.ts: No such file' }), 4),
    rec('a3', 'r2', 'assistant', model([{ text: 'Twelve lines.' }]), 5),
  ];
}

describe('Qwen Code chat logs', () => {
  it('are found by auto and replay each answer as a call, as Qwen Code sends it', async () => {
    const t = await readTranscript(file(log()));
    expect(t.source).toBe('qwen-code');
    expect(t.base).toEqual({ model: 'qwen3-coder-plus' });
    expect(t.calls.map((c) => c.reply)).toEqual([
      'Counting.\n{"command":"wc -l cart.ts"}',
      '{"command":"cat missing.ts"}',
      'Twelve lines.',
    ]);
    expect(t.calls.map((c) => c.at)).toEqual([0, 2, 4].map((s) => Date.parse(`2026-11-30T10:00:0${s}.000Z`)));
    expect(requestForCall(t, 2).messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Count the cart lines' }] },
      {
        role: 'assistant',
        content: 'Counting.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run_shell_command', arguments: '{"command":"wc -l cart.ts"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: [{ type: 'text', text: '12 cart.ts' }] },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c2', type: 'function', function: { name: 'run_shell_command', arguments: '{"command":"cat missing.ts"}' } }],
      },
      { role: 'tool', tool_call_id: 'c2', content: [{ type: 'text', text: 'cat: missing.ts: No such file' }] },
    ]);
    expect(t.skipped.byReason).toEqual({ 'system:ui_telemetry': 2 });
    expect(t.skipped.notes.join('\n')).toMatch(
      /1 thought part\(s\)[\s\S]*system prompt, its tool declarations and <system-reminder> parts/,
    );
  });

  it('replay the branch that ends at the last record: an answer retried from an earlier point leaves the first try out', async () => {
    const lines = log();
    // a retry of the second answer, from the first result
    lines.push(rec('a2b', 'r1', 'assistant', model([{ text: 'Twelve, retried.' }]), 6));
    const t = await readTranscript(file(lines));
    expect(t.calls.map((c) => c.reply)).toEqual(['Counting.\n{"command":"wc -l cart.ts"}', 'Twelve, retried.']);
    expect(t.skipped.notes.join('\n')).toContain('3 conversation record(s) on other branches');
  });

  it('are found when the first line is longer than what detection reads, and named by their first prompt', async () => {
    const lines = log();
    lines[0] = rec('u1', null, 'user', user(`Count the cart lines ${'x'.repeat(70_000)}`), 0);
    const path = file(lines);
    expect((await readTranscript(path)).source).toBe('qwen-code');
    expect(sessionName(file(log()))).toMatch(/^Count the cart lines · shop · /);
  });
});
