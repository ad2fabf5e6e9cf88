/**
 * Back-off on read-backs (src/engine/backoff.ts): a tool whose reduced outputs the agent reads back
 * reduces less for the rest of the session, from the call the read-back was seen in; markers
 * already sent never change. The engine finds read-backs in the requests it projects, and a host
 * tells it of others with `noteReadBack` (the replay does, from its miss check).
 */
import { describe, expect, it } from 'vitest';
import { backedOffCap, BACKOFF_CAP_FACTOR, BACKOFF_UNLIMITED_AFTER, handlesIn } from '../../src/engine/backoff';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { replay } from '../../src/replay/replay';
import type { Transcript } from '../../src/replay/readers';
import { perChar } from '../support/run';

type Msg = Record<string, unknown>;
const call = (id: string, name: string, args: Record<string, unknown>): Msg => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});
const result = (id: string, content: string): Msg => ({ role: 'tool', tool_call_id: id, content });
const request = (messages: Msg[]) => JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'go' }, ...messages] });

const out = (tag: string) => `${tag} ${'x'.repeat(3_000)}`; // 3,000+ chars: over a cap of 1,000, under 4x that
const config = {
  defaultCap: 1_000,
  previewChars: 100,
  inputs: { enabled: false },
  clear: { enabled: false },
  offload: { latestCap: 0, backoff: true },
};

/** Call 1: bash and grep outputs, both offloaded. Returns the engine and the bash output's handle. */
function firstCall(cfg: Record<string, unknown> = config) {
  const e = createEngine(cfg, { store: new MemorySink(), tokenizer: perChar });
  const msgs = [call('a', 'bash', { command: 'make' }), result('a', out('A')), call('g', 'grep', { q: 'x' }), result('g', out('G'))];
  const p = e.project(request(msgs), 'openai-chat', { session: 'S' });
  const bash = p.reductions.find((r) => r.tool === 'bash')!;
  return { e, msgs, first: p, handle: bash.handle };
}

const nextOutputs = [
  call('b', 'bash', { command: 'make test' }),
  result('b', out('B')),
  call('h', 'grep', { q: 'y' }),
  result('h', out('H')),
];
const toolsReduced = (p: { reductions: { tool: string; callId: string }[] }) =>
  p.reductions
    .filter((r) => r.callId === 'b' || r.callId === 'h')
    .map((r) => r.tool)
    .sort();

describe('backedOffCap', () => {
  it('multiplies the cap by the factor per read-back and keeps the tool whole from the last step on', () => {
    expect(backedOffCap(1_000, 0)).toBe(1_000);
    expect(backedOffCap(1_000, 1)).toBe(1_000 * BACKOFF_CAP_FACTOR);
    expect(backedOffCap(1_000, BACKOFF_UNLIMITED_AFTER)).toBe('unlimited');
  });
});

describe('handlesIn', () => {
  it('finds every handle named in an action, whatever surrounds it', () => {
    const h = 'sw_0123456789abcdef01234567';
    expect(handlesIn(`spillway read ${h} --grep foo; cat /s/${h}.txt`)).toEqual([h, h]);
  });
});

describe('back-off found in the request', () => {
  it('raises the cap of the tool the agent read back with a read tool, and only that tool', () => {
    const { e, msgs, handle } = firstCall();
    const readBack = [call('r', 'read_output', { handle }), result('r', 'the slice')];
    const p = e.project(request([...msgs, ...readBack, ...nextOutputs]), 'openai-chat', { session: 'S' });
    expect(toolsReduced(p)).toEqual(['grep']);
  });

  it('counts `spillway read HANDLE` in a shell command as a read-back', () => {
    const { e, msgs, handle } = firstCall();
    const readBack = [call('r', 'bash', { command: `spillway read ${handle} --grep A` }), result('r', 'A')];
    const p = e.project(request([...msgs, ...readBack, ...nextOutputs]), 'openai-chat', { session: 'S' });
    expect(toolsReduced(p)).toEqual(['grep']);
  });

  it('keeps the markers already sent byte for byte', () => {
    const { e, msgs, first, handle } = firstCall();
    const readBack = [call('r', 'read_output', { handle }), result('r', 'the slice')];
    const p = e.project(request([...msgs, ...readBack, ...nextOutputs]), 'openai-chat', { session: 'S' });
    const sent = (JSON.parse(first.request) as { messages: Msg[] }).messages.slice(0, 5);
    expect((JSON.parse(p.request) as { messages: Msg[] }).messages.slice(0, 5)).toEqual(sent);
  });

  it('does nothing with offload.backoff off', () => {
    const { e, msgs, handle } = firstCall({ ...config, offload: { latestCap: 0, backoff: false } });
    const readBack = [call('r', 'read_output', { handle }), result('r', 'the slice')];
    const p = e.project(request([...msgs, ...readBack, ...nextOutputs]), 'openai-chat', { session: 'S' });
    expect(toolsReduced(p)).toEqual(['bash', 'grep']);
  });
});

describe('noteReadBack', () => {
  it('backs the tool off from the session’s next call on', () => {
    const { e, msgs, handle } = firstCall();
    expect(e.noteReadBack('S', handle)).toBe(true);
    const p = e.project(request([...msgs, ...nextOutputs]), 'openai-chat', { session: 'S' });
    expect(toolsReduced(p)).toEqual(['grep']);
  });

  it('counts a handle once, and refuses handles and sessions it does not know', () => {
    const { e, handle } = firstCall();
    expect(e.noteReadBack('S', handle)).toBe(true);
    expect(e.noteReadBack('S', handle)).toBe(false);
    expect(e.noteReadBack('S', 'sw_000000000000000000000000')).toBe(false);
    expect(e.noteReadBack('T', handle)).toBe(false);
  });
});

describe('read-backs of what a clear took', () => {
  // outputs under the cap go whole, a clear takes the oldest, and the agent reads one of those back
  // (`make`, not a listing: gathered material waits for a write, clear.keepGathered)
  const small = (tag: string) => `${tag} ${'y'.repeat(600)}`;
  const clearing = {
    ...config,
    clear: { enabled: true, triggerTokens: 1_500, keep: 1, clearAtLeastTokens: 0, inUseCalls: 0, schedule: 'trigger' },
  };
  const offloaded = (p: { reductions: { tool: string; callId: string; stage: string }[] }) =>
    toolsReduced({ reductions: p.reductions.filter((r) => r.stage === 'offload') });
  function cleared() {
    const e = createEngine(clearing, { store: new MemorySink(), tokenizer: perChar });
    const msgs = [0, 1, 2].flatMap((i) => [call(`s${i}`, 'bash', { command: `make t${i}` }), result(`s${i}`, small(`S${i}`))]);
    const p = e.project(request(msgs), 'openai-chat', { session: 'S' });
    const clear = p.reductions.find((r) => r.stage === 'clear' && r.tool === 'bash')!;
    return { e, msgs, handle: clear.handle };
  }

  it('leaves the cap on arrival as it was, found in the request', () => {
    const { e, msgs, handle } = cleared();
    const readBack = [call('r', 'read_output', { handle }), result('r', 'the slice')];
    const p = e.project(request([...msgs, ...readBack, ...nextOutputs]), 'openai-chat', { session: 'S' });
    expect(offloaded(p)).toEqual(['bash', 'grep']);
  });

  it('leaves it as it was, told by noteReadBack, and still counts the read-back', () => {
    const { e, msgs, handle } = cleared();
    expect(e.noteReadBack('S', handle)).toBe(true);
    const p = e.project(request([...msgs, ...nextOutputs]), 'openai-chat', { session: 'S' });
    expect(offloaded(p)).toEqual(['bash', 'grep']);
  });
});

describe('back-off in the replay', () => {
  /** bash outputs that each hold a name the next reply uses: every offload is a miss. */
  const filler = 'plain filler line\n'.repeat(100);
  function session(): Transcript {
    const items: Msg[] = [{ role: 'user', content: 'go' }];
    const calls: Transcript['calls'] = [];
    for (let i = 0; i < 4; i++) {
      const name = `needed_name_${i}`;
      items.push(call(`c${i}`, 'bash', { command: `run ${i}` }), result(`c${i}`, `${filler}${name}\n${filler}`));
      calls.push({ end: items.length, reply: `using ${name}` });
    }
    return {
      source: 'openai-chat',
      wire: 'openai-chat',
      base: { model: 'm' },
      items,
      calls,
      skipped: { total: 0, byReason: {}, notes: [] },
    };
  }
  const run = (backoff: boolean) =>
    replay(session(), { config: { ...config, offload: { latestCap: 0, backoff } }, tokenizer: perChar }).totals.missedIds;

  it('tells the engine of the read-backs its misses imply, so later outputs of that tool stay whole', () => {
    expect(run(false)).toBe(4);
    expect(run(true)).toBe(1);
  });
});
