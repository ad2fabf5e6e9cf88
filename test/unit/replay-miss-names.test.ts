import { describe, expect, it } from 'vitest';
import { replay } from '../../src/replay/replay';
import { wroteAround } from '../../src/replay/misses';
import { ReductionCollector, sessionSummary } from '../../src/cli/replay-summary';
import type { Transcript } from '../../src/replay/readers';

// A test log offloaded with no preview; the agent's next reply names a test in it, so the projection missed it.
const lines = Array.from({ length: 100 }, (_, i) =>
  i === 50 ? '--- FAIL: TestRenderMarkdownTables (0.01s)' : `ok line ${i} ${'x'.repeat(40)}`,
);
const COMMAND = 'cd /Users/randlee/Documents/github/claude-history-worktrees/feature/phase10-html-quality && go test ./pkg/export/... -v';
const REPLY = `The export tests fail: TestRenderMarkdownTables does not close the table row. I will fix the renderer in html.go and run them again.`;
const t: Transcript = {
  source: 'openai-chat',
  wire: 'openai-chat',
  base: { model: 'm' },
  items: [
    { role: 'user', content: 'q'.repeat(4400) },
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_go', type: 'function', function: { name: 'Bash', arguments: JSON.stringify({ command: COMMAND }) } }],
    },
    { role: 'tool', tool_call_id: 'call_go', content: lines.join('\n') },
    { role: 'assistant', content: REPLY },
  ],
  calls: [
    { end: 1, reply: '' },
    { end: 3, reply: REPLY },
  ],
  skipped: { total: 0, byReason: {}, notes: [] },
};
const r = replay(t, { config: { tokenizer: 'approximate', defaultCap: 1000, previewChars: 0, clear: { enabled: false } } });
const miss = r.calls[1]!.missed.find((m) => m.id === 'TestRenderMarkdownTables')!;

describe('a miss names the output that held it and what the agent wrote', () => {
  it('names the output by the command that made it, not by its handle or call id', () => {
    expect(miss).toMatchObject({
      handle: expect.stringMatching(/^sw_/),
      tool: 'Bash',
      callId: 'call_go',
      source: '$ go test ./pkg/export/... -v',
    });
  });

  it('keeps what the agent wrote around the identifier, on one line', () => {
    expect(miss.wrote).toBe('The export tests fail: TestRenderMarkdownTables does not close the table row. I will fix the renderer in ht…');
  });

  it("prints both in `spillway replay`'s worst turns, within 100 columns, numbered from 1", () => {
    const out = sessionSummary('s.jsonl', r, new ReductionCollector());
    const worst = out.slice(out.indexOf('worst turns for misses')).split('\n');
    expect(worst[1]).toMatch(/^ {2}turn 2: \d+ of \d+ identifiers missed/);
    expect(worst).toContainEqual(
      expect.stringMatching(/^ {4}\d+ Bash \$ go test \.\/pkg\/export\/\.\.\. -v, offloaded on arrival in turn 2: /),
    );
    const wrote = worst.find((l) => l.startsWith('      the agent wrote: "'))!;
    expect(wrote).toContain('TestRenderMarkdownTables');
    for (const line of out.split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(out).not.toContain('call_go');
  });
});

describe('what the agent wrote around an identifier', () => {
  it('is cut to 60 characters each side, blanks and escaped newlines made one space', () => {
    const reply = `${'a'.repeat(100)}\nsee\\nfoo.ts:12 here\n${'b'.repeat(100)}`;
    const w = wroteAround(reply, 'foo.ts:12')!;
    expect(w.startsWith('…')).toBe(true);
    expect(w.endsWith('…')).toBe(true);
    expect(w).toContain('see foo.ts:12 here');
    expect(w).not.toContain('\n');
  });

  it('is undefined when the reply does not hold the identifier', () => {
    expect(wroteAround('nothing here', 'foo')).toBeUndefined();
  });
});
