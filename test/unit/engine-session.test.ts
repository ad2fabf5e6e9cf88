/**
 * Sessions: decisions made in one call are reused in the later calls of the same conversation.
 * Sessions live inside one engine instance (createEngine), keyed by name.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { build, contentsOf, contentText, transcript, type Step } from '../support/wire';

const big = 'line of build output\n'.repeat(100); // 2,100 chars
const call1: Step[] = ['q', { tool: 'bash', output: big, id: 'a' }];
const call2: Step[] = [...call1, 'next', { tool: 'bash', output: 'small', id: 'b' }];
const text = (steps: Step[]) => JSON.stringify(build(transcript(...steps), 'openai-chat'));
const engine = (cap = 1_000) =>
  createEngine({ defaultCap: cap, previewChars: 200, clear: { enabled: false } }, { store: new MemorySink() });

describe('sessions', () => {
  it('carry a decision made in one call to the next call, marked as not fresh', () => {
    const e = engine();
    expect(e.project(text(call1), 'auto', { session: 'S' }).reductions[0]!.fresh).toBe(true);
    const second = e.project(text(call2), 'auto', { session: 'S' });
    expect(second.reductions.map((r) => [r.callId, r.fresh])).toEqual([['a', false]]);
  });

  it('project a carried decision byte for byte as the call that made it', () => {
    const e = engine();
    const first = e.project(text(call1), 'auto', { session: 'S' });
    const second = e.project(text(call2), 'auto', { session: 'S' });
    expect(contentsOf(second.request, 'openai-chat')[0]).toBe(contentsOf(first.request, 'openai-chat')[0]);
  });

  it('without a session every call decides afresh', () => {
    const e = engine();
    e.project(text(call1));
    expect(e.project(text(call2)).reductions.map((r) => r.fresh)).toEqual([true]);
  });

  it('keep sessions apart by name', () => {
    const e = engine();
    e.project(text(call1), 'auto', { session: 'S' });
    expect(e.project(text(call2), 'auto', { session: 'T' }).reductions.map((r) => r.fresh)).toEqual([true]);
  });

  it('forget a session on endSession', () => {
    const e = engine();
    e.project(text(call1), 'auto', { session: 'S' });
    e.endSession('S');
    expect(e.project(text(call2), 'auto', { session: 'S' }).reductions.map((r) => r.fresh)).toEqual([true]);
  });

  it('reuse a decision only for the same content: a changed result under the same call id is decided again', () => {
    const e = engine();
    e.project(text(call1), 'auto', { session: 'S' });
    const changed: Step[] = ['q', { tool: 'bash', output: big + 'more', id: 'a' }, 'next'];
    const p = e.project(text(changed), 'auto', { session: 'S' });
    expect(p.reductions.map((r) => [r.callId, r.fresh, r.originalChars])).toEqual([['a', true, big.length + 4]]);
  });

  it('remember at most 256 sessions, forgetting the least recently used first', () => {
    const e = engine();
    for (let i = 0; i <= 256; i++) e.project(text(call1), 'auto', { session: `s${i}` });
    // (each call below remembers its own session again, so the survivor is asked first)
    expect(e.project(text(call2), 'auto', { session: 's1' }).reductions.map((r) => r.fresh)).toEqual([false]);
    expect(e.project(text(call2), 'auto', { session: 's0' }).reductions.map((r) => r.fresh)).toEqual([true]);
  });

  it('count a call as use: a session used again is not the next one forgotten', () => {
    const e = engine();
    for (let i = 0; i < 256; i++) e.project(text(call1), 'auto', { session: `s${i}` });
    e.project(text(call1), 'auto', { session: 's0' });
    e.project(text(call1), 'auto', { session: 'new' });
    expect(e.project(text(call2), 'auto', { session: 's0' }).reductions.map((r) => r.fresh)).toEqual([false]);
    expect(e.project(text(call2), 'auto', { session: 's1' }).reductions.map((r) => r.fresh)).toEqual([true]);
  });

  it('live in one engine: a new engine with a higher cap does not know the session and keeps the result verbatim', () => {
    engine(1_000).project(text(call1), 'auto', { session: 'S' });
    const p = engine(10_000).project(text(call2), 'auto', { session: 'S' });
    expect(p.reductions).toEqual([]);
    expect(contentText(contentsOf(p.request, 'openai-chat')[0])).toBe(big);
  });

  it("keep a decision when the engine's configuration changes in between: reduced under cap 1,000, still reduced the same way under 10,000", () => {
    // the only way the module API allows a configuration change within one engine (and so within
    // one session) is changing `engine.config` in place
    const e = engine(1_000);
    const first = e.project(text(call1), 'auto', { session: 'S' });
    e.config.defaultCap = 10_000;
    const second = e.project(text(call2), 'auto', { session: 'S' });
    expect(second.reductions.map((r) => [r.callId, r.fresh])).toEqual([['a', false]]);
    expect(contentsOf(second.request, 'openai-chat')[0]).toBe(contentsOf(first.request, 'openai-chat')[0]);
    // a fresh call of another session follows the new cap
    expect(e.project(text(call2)).reductions).toEqual([]);
  });
});
