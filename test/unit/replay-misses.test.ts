/**
 * What hid each missed identifier (src/replay/misses.ts): the attribution on its own, the sums by
 * cause, and a replayed session in which an offload on arrival, a file input and a clear each hide
 * one identifier the agent then uses.
 */
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../src/replay/readers';
import { attributeMiss, causesInOrder, missCauseTotals, poolMissCauses, type HeldBy, type MissLookups } from '../../src/replay/misses';
import { poolReplays, replay } from '../../src/replay/replay';
import { replayRecords } from '../../src/extension/inspector/replaySource';

describe('attributeMiss', () => {
  const texts: Record<string, string> = { sw_a: 'alpha beta', sw_b: 'beta gamma', sw_w: '{"content":"delta"}' };
  const look = (since: Record<string, number>, arrived: Record<number, number>): MissLookups => ({
    storedText: (h) => texts[h.handle] ?? '',
    since: (h) => since[`${h.stage ?? 'input'}:${h.handle}`],
    arrived: (result) => arrived[result],
  });
  const held: HeldBy[] = [
    { handle: 'sw_a', tool: 'Read', stage: 'offload', result: 0 },
    { handle: 'sw_b', tool: 'Bash', stage: 'clear', result: 1 },
    { handle: 'sw_w', tool: 'Write' },
  ];

  it('names the first reduction whose stored output holds the identifier: its stage, tool, handle and calls', () => {
    const l = look({ 'offload:sw_a': 2, 'clear:sw_b': 7 }, { 0: 2, 1: 3 });
    expect(attributeMiss('beta', held, l)).toEqual({ id: 'beta', handle: 'sw_a', cause: 'offload', tool: 'Read', since: 2, arrived: 2 });
    expect(attributeMiss('gamma', held, l)).toEqual({ id: 'gamma', handle: 'sw_b', cause: 'clear', tool: 'Bash', since: 7, arrived: 3 });
  });

  it('an offload made after the call the result arrived in is an offload after use', () => {
    const l = look({ 'offload:sw_a': 4 }, { 0: 3 });
    expect(attributeMiss('alpha', held, l).cause).toBe('offload-after-use');
  });

  it('a file input is named as one, without an arrival; an identifier no output holds is unheld', () => {
    const l = look({ 'input:sw_w': 5 }, {});
    expect(attributeMiss('delta', held, l)).toEqual({ id: 'delta', handle: 'sw_w', cause: 'input', tool: 'Write', since: 5 });
    expect(attributeMiss('epsilon', held, l)).toEqual({ id: 'epsilon', cause: 'unheld' });
  });
});

describe('sums by cause', () => {
  const calls = [
    {
      missed: [{ cause: 'clear' as const }, { cause: 'clear' as const }, { cause: 'input' as const }],
      readBacks: [{ cause: 'clear' as const }, { cause: 'input' as const }],
    },
    { missed: [{ cause: 'offload' as const }], readBacks: [{ cause: 'offload' as const }] },
    { missed: [], readBacks: [] },
  ];

  it("a session's calls: identifiers and read-backs per cause", () => {
    expect(missCauseTotals(calls)).toEqual({
      clear: { ids: 2, readBacks: 1 },
      input: { ids: 1, readBacks: 1 },
      offload: { ids: 1, readBacks: 1 },
    });
  });

  it('several sessions: summed per cause; a session without the figures adds nothing', () => {
    expect(poolMissCauses([missCauseTotals(calls), { clear: { ids: 3, readBacks: 2 } }, undefined])).toEqual({
      clear: { ids: 5, readBacks: 3 },
      input: { ids: 1, readBacks: 1 },
      offload: { ids: 1, readBacks: 1 },
    });
  });

  it('are listed in a fixed order with their words, causes that hid nothing left out', () => {
    expect(causesInOrder(missCauseTotals(calls)).map((c) => [c.label, c.ids])).toEqual([
      ['offloaded on arrival', 1],
      ['cleared', 2],
      ['file input replaced by a marker', 1],
    ]);
  });
});

describe('a replayed session: an offload on arrival, a file input and a clear each hide what the agent then uses', () => {
  const call = (id: string, name: string, args: unknown) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  });
  const filler = (n: number) => Array.from({ length: n }, (_, i) => `row ${i} ${'x'.repeat(60)}`).join('\n');
  const big = `${filler(40)}\nalphaFunction is defined here\n${filler(40)}`;
  const written = `${filler(30)}\ndef gammaFunction():\n    pass\n${filler(30)}`;
  const reply = 'Use alphaFunction, betaFunction and gammaFunction.';
  const t: Transcript = {
    source: 'openai-chat',
    wire: 'openai-chat',
    base: { model: 'm' },
    items: [
      { role: 'user', content: 'task' },
      call('a', 'cat', { path: 'big.py' }),
      { role: 'tool', tool_call_id: 'a', content: big },
      call('w', 'Write', { file_path: '/w/g.py', content: written }),
      { role: 'tool', tool_call_id: 'w', content: 'File written.' },
      call('b', 'sh', { command: 'cat beta.py' }),
      { role: 'tool', tool_call_id: 'b', content: `betaFunction lives here\n${filler(8)}` },
      call('c', 'sh', { command: 'ls' }),
      { role: 'tool', tool_call_id: 'c', content: filler(8) },
      call('d', 'sh', { command: 'ls -la' }),
      { role: 'tool', tool_call_id: 'd', content: filler(8) },
      { role: 'assistant', content: reply },
    ],
    calls: [
      { end: 1, reply: '' },
      { end: 3, reply: '' },
      { end: 5, reply: '' },
      { end: 7, reply: '' },
      { end: 9, reply: '' },
      { end: 11, reply },
    ],
    skipped: { total: 0, byReason: {}, notes: [] },
  };
  const config = {
    tokenizer: 'approximate',
    defaultCap: 1000,
    previewChars: 0,
    // each mechanism as it acts on arrival or by age: the read offloaded on arrival, the file input
    // replaced on arrival, the clear by age alone
    offload: { keepReads: 0 },
    inputs: { when: 'arrival', minTokens: 0, keepRounds: 0 },
    // the clear stage leaves `cat` alone, so its result stays offloaded (a clear takes over an offloaded result's marker)
    clear: {
      enabled: true,
      triggerTokens: 300,
      keep: 1,
      clearAtLeastTokens: 1,
      schedule: 'trigger',
      excludeTools: ['cat'],
      inUseCalls: 0,
      keepGathered: false,
    },
  };
  const r = replay(t, { config });
  const last = r.calls.at(-1)!;

  it('each missed identifier names its cause, tool, and the calls of its reduction and arrival', () => {
    const by = Object.fromEntries(last.missed.map((m) => [m.id, m]));
    expect(by.alphaFunction).toMatchObject({ cause: 'offload', tool: 'cat', since: 1, arrived: 1 });
    expect(by.gammaFunction).toMatchObject({ cause: 'input', tool: 'Write' });
    expect(by.betaFunction).toMatchObject({ cause: 'clear', tool: 'sh', arrived: 3 });
    expect(by.betaFunction!.since).toBeGreaterThan(3);
  });

  it('one read-back per stored output, with its cause and identifiers; the totals count both by cause', () => {
    expect(last.readBacks.map((b) => [b.cause, b.ids])).toEqual(
      expect.arrayContaining([
        ['offload', ['alphaFunction']],
        ['clear', ['betaFunction']],
        ['input', ['gammaFunction']],
      ]),
    );
    expect(last.readBacks.every((b) => b.tokens > 0 && b.handle?.startsWith('sw_'))).toBe(true);
    expect(r.totals.missCauses).toEqual({
      offload: { ids: 1, readBacks: 1 },
      clear: { ids: 1, readBacks: 1 },
      input: { ids: 1, readBacks: 1 },
    });
    expect(r.totals.readBacks).toBe(3);
    expect(poolReplays([r, r]).missCauses).toEqual({
      offload: { ids: 2, readBacks: 2 },
      clear: { ids: 2, readBacks: 2 },
      input: { ids: 2, readBacks: 2 },
    });
  });

  it("the inspector's turn keeps each miss's cause, tool and turn, and the read-backs they cost", () => {
    const turn = replayRecords(r).at(-1)!;
    expect(turn.readBacks).toBe(3);
    expect(turn.missed.map((m) => [m.id, m.cause, m.tool])).toEqual(
      expect.arrayContaining([
        ['alphaFunction', 'offload', 'cat'],
        ['betaFunction', 'clear', 'sh'],
        ['gammaFunction', 'input', 'Write'],
      ]),
    );
  });
});
