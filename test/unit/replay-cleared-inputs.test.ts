/**
 * `spillway replay` on a session in which the clear stage replaces a Write's input together with its
 * result (`inputs.when: clear`, the default): the call that made the clear counts the input among its
 * fresh inputs, every later call lists it (carried over), and an identifier the agent then uses from
 * what it wrote is a miss of a file input, read back from the file, as one replaced on arrival is.
 */
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { replayRecords } from '../../src/extension/inspector/replaySource';
import { ReductionCollector } from '../../src/cli/replay-summary';

const call = (id: string, name: string, args: unknown) => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});
const filler = (n: number) => Array.from({ length: n }, (_, i) => `row ${i} ${'x'.repeat(60)}`).join('\n');
const written = `${filler(30)}\ndef gammaFunction():\n    pass\n${filler(30)}`;
const reply = 'Now call gammaFunction.';
const t: Transcript = {
  source: 'openai-chat',
  wire: 'openai-chat',
  base: { model: 'm' },
  items: [
    { role: 'user', content: 'task' },
    call('w', 'Write', { file_path: '/w/g.py', content: written }),
    { role: 'tool', tool_call_id: 'w', content: 'File written.' },
    call('b', 'sh', { command: 'ls' }),
    { role: 'tool', tool_call_id: 'b', content: filler(8) },
    call('c', 'sh', { command: 'ls -la' }),
    { role: 'tool', tool_call_id: 'c', content: filler(8) },
    call('d', 'sh', { command: 'ls -R' }),
    { role: 'tool', tool_call_id: 'd', content: filler(8) },
    { role: 'assistant', content: reply },
  ],
  calls: [
    { end: 1, reply: '' },
    { end: 3, reply: '' },
    { end: 5, reply: '' },
    { end: 7, reply: '' },
    { end: 9, reply },
  ],
  skipped: { total: 0, byReason: {}, notes: [] },
};
const config = {
  tokenizer: 'approximate',
  inputs: { when: 'clear', minTokens: 0, keepRounds: 0 },
  clear: { enabled: true, triggerTokens: 1_200, keep: 1, clearAtLeastTokens: 1, schedule: 'trigger', inUseCalls: 0, staleFirst: false },
};

describe('replay: a file input a clear replaced', () => {
  const collector = new ReductionCollector();
  const r = replay(t, { config, detail: true, onProjection: (k, c) => collector.add(k, c.projection) });
  const at = r.calls.findIndex((c) => c.freshInputs > 0);
  const last = r.calls.at(-1)!;

  it('is a fresh input of the call that made the clear only, and listed in every later call', () => {
    expect(at).toBeGreaterThan(0);
    expect(at).toBeLessThan(r.calls.length - 1);
    expect(r.calls.map((c) => c.freshInputs)).toEqual(r.calls.map((_, k) => (k === at ? 1 : 0)));
    const input = r.calls[at]!.inputList![0]!;
    expect(input).toMatchObject({ tool: 'Write', callId: 'w', by: 'clear', fresh: true });
    expect(input.originalChars).toBeGreaterThan(written.length);
    expect(input.projectedTokens).toBeLessThan(input.originalTokens);
    // the clear of its result points at the same handle, and is not counted as an input again
    expect(r.calls[at]!.reductionList!.find((x) => x.callId === 'w')).toMatchObject({ stage: 'clear', inputHandle: input.handle });
    for (const c of r.calls.slice(at + 1)) expect(c.inputList).toEqual([{ ...input, fresh: false }]);
    for (const c of r.calls.slice(0, at)) expect(c.inputList).toEqual([]);
    expect(r.totals.recoverable).toBe(true);
  });

  it('hides what the agent wrote as a file input does: the miss is the input, read back once', () => {
    const input = r.calls[at]!.inputList![0]!;
    expect(last.missed).toEqual([
      expect.objectContaining({ id: 'gammaFunction', cause: 'input', tool: 'Write', handle: input.handle, since: at }),
    ]);
    expect(last.readBacks.map((b) => [b.cause, b.handle, b.ids])).toEqual([['input', input.handle, ['gammaFunction']]]);
    expect(r.totals.missCauses).toEqual({ input: { ids: 1, readBacks: 1 } });
  });

  it("is counted once in the summary's file inputs and with the call's clear", () => {
    const input = r.calls[at]!.inputList![0]!;
    const saved = input.originalTokens - input.projectedTokens;
    expect(collector.inputs.get('Write')).toEqual({ saved: saved * (r.calls.length - at), inputs: 1 });
    const clear = collector.clears.find((c) => c.call === at)!;
    expect(clear.inputs).toBe(1);
    expect(clear.freed).toBeGreaterThanOrEqual(saved);
    // the Write's own result, sent as it was, is not a result reduced
    expect(collector.tools.has('Write')).toBe(false);
  });

  it("the inspector's turn lists it under its inputs, with its sizes, and counts it in that turn only", () => {
    const records = replayRecords(r);
    expect(records.map((x) => x.summary.inputs ?? 0)).toEqual(r.calls.map((_, k) => (k === at ? 1 : 0)));
    const input = r.calls[at]!.inputList![0]!;
    expect(records[at]!.inputs).toEqual([input]);
    expect(records[at]!.summary.freshSaved).toBeGreaterThanOrEqual(input.originalTokens - input.projectedTokens);
  });
});
