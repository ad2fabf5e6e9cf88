/**
 * What the `spillway` preset adds beyond the seed systems: identical outputs referenced instead of
 * repeated, stale results cleared first, and the latest round kept readable up to offload.latestCap.
 */
import { describe, expect, it } from 'vitest';
import { body, call, contents, result } from '../support/chat';
import { createEngine, isReference, MemorySink } from '../../src/engine';

const text = (n: number, seed: string) =>
  Array.from({ length: Math.ceil(n / 20) }, (_, i) => `${seed} line ${String(i).padStart(6)}`)
    .join('\n')
    .slice(0, n);

describe('dedupe (offload.dedupe)', () => {
  it('replaces a repeated output by a reference to the first copy, which stays verbatim', () => {
    const out = text(3_000, 'same');
    const store = new MemorySink();
    const p = createEngine({}, { store }).project(
      body([call('a', 'bash', { cmd: 'ls' }), result('a', out), call('b', 'bash', { cmd: 'ls' }), result('b', out)]),
    );
    const [, , first, , second] = contents(p.request);
    expect(first).toBe(out);
    // one line that says what it repeats: no preview (the first copy is above), and never called one
    expect(second).toMatch(
      /^\[spillway: bash output identical to the bash output of call a above · 2,549 chars · [\d,]+ tokens · read it back: spillway read sw_[0-9a-f]+\]$/,
    );
    expect(second).not.toContain('preview');
    expect(p.reductions).toHaveLength(1);
    expect(p.reductions[0]).toMatchObject({ callId: 'b', stage: 'offload', reason: 'identical to the output of call a' });
    expect(store.get(p.reductions[0]!.handle)).toBe(out);
  });

  it('tells a reference from a preview (isReference), so the inspector does not call it a preview', () => {
    const out = text(3_000, 'same');
    const big = text(20_000, 'big');
    const p = createEngine({}).project(
      body([call('a', 'bash', {}), result('a', out), call('b', 'bash', {}), result('b', out), call('c', 'bash', {}), result('c', big)]),
    );
    expect(p.reductions.map((r) => [r.callId, isReference(r)])).toEqual([
      ['b', true],
      ['c', false],
    ]);
  });

  it('leaves short repeated outputs alone', () => {
    const out = text(300, 'short');
    const p = createEngine({}).project(body([call('a', 'bash', {}), result('a', out), call('b', 'bash', {}), result('b', out)]));
    expect(p.reductions).toHaveLength(0);
  });

  it('is off in the seed presets', () => {
    const out = text(3_000, 'same');
    const p = createEngine({ preset: 'oracle-offload', defaultCap: 100_000 }).project(
      body([call('a', 'bash', {}), result('a', out), call('b', 'bash', {}), result('b', out)]),
    );
    expect(p.reductions).toHaveLength(0);
  });

  it('keeps the projection a prefix of the next call: the reference is decided on arrival', () => {
    const out = text(3_000, 'same');
    const engine = createEngine({});
    const m = [call('a', 'bash', {}), result('a', out), call('b', 'bash', {}), result('b', out)];
    const p1 = engine.project(body(m));
    const p2 = engine.project(body([...m, call('c', 'bash', {}), result('c', 'ok')]));
    expect(contents(p2.request).slice(0, 5)).toEqual(contents(p1.request));
  });
});

describe('stale results first (clear.staleFirst)', () => {
  // the order a clear takes results in; whether it may fire at all (the payback schedule) is tested in engine-clear-schedule.test.ts
  const cfg = {
    defaultCap: 'unlimited',
    // by age alone: what in-use protection leaves is tested in engine-in-use.test.ts
    clear: { triggerTokens: 3_000, clearAtLeastTokens: 500, keep: 1, schedule: 'trigger', inUseCalls: 0 },
  } as const;
  const history = [
    call('r1', 'read_file', { path: 'src/a.ts' }),
    result('r1', text(4_000, 'first read of a')),
    call('r2', 'read_file', { path: 'src/b.ts' }),
    result('r2', text(4_000, 'read of b')),
    call('e1', 'edit_file', { path: 'src/a.ts' }),
    result('e1', 'edited'),
    call('r3', 'bash', { cmd: 'npm test' }),
    result('r3', text(1_000, 'tests')),
  ];

  it('clears the copy of a file that was used again later before older results', () => {
    const p = createEngine(cfg).project(body(history));
    const cleared = p.reductions.filter((r) => r.stage === 'clear').map((r) => r.callId);
    expect(cleared[0]).toBe('r1');
    expect(p.reductions.find((r) => r.callId === 'r1')!.reason).toMatch(/stale/);
  });

  it('clears strictly oldest first when turned off', () => {
    const p = createEngine({ ...cfg, clear: { ...cfg.clear, staleFirst: false } }).project(
      body([call('x', 'bash', {}), result('x', text(3_000, 'old')), ...history]),
    );
    expect(p.reductions.filter((r) => r.stage === 'clear')[0]!.callId).toBe('x');
  });
});

describe('latest round cap (offload.latestCap)', () => {
  const big = text(20_000, 'big');
  const cfg = { defaultCap: 8_000, offload: { latestCap: 40_000 }, clear: { enabled: false } };

  it('keeps a result of the latest round verbatim up to latestCap', () => {
    const p = createEngine(cfg).project(body([call('a', 'bash', {}), result('a', big)]));
    expect(p.reductions).toHaveLength(0);
  });

  it('offloads it to the normal cap once a later round exists, and stores it', () => {
    const store = new MemorySink();
    const p = createEngine(cfg, { store }).project(
      body([call('a', 'bash', {}), result('a', big), call('b', 'bash', {}), result('b', 'ok')]),
    );
    expect(p.reductions.map((r) => r.callId)).toEqual(['a']);
    expect(store.get(p.reductions[0]!.handle)).toBe(big);
  });

  it('still offloads a latest result over latestCap at once', () => {
    const p = createEngine(cfg).project(body([call('a', 'bash', {}), result('a', text(50_000, 'huge'))]));
    expect(p.reductions[0]!.reason).toMatch(/cap of 40,000 for the latest round/);
  });

  it('applies the cap at once with latestCap 0 (the default)', () => {
    const p = createEngine({ defaultCap: 8_000 }).project(body([call('a', 'bash', {}), result('a', big)]));
    expect(p.reductions).toHaveLength(1);
  });
});

describe('sessions across a configuration change', () => {
  it('keep a reduction made under the old cap when a new engine shares the session store', async () => {
    const { createSessionStore } = await import('../../src/engine');
    const sessions = createSessionStore();
    const out = text(5_000, 'log');
    const m = [call('a', 'bash', {}), result('a', out)];
    const before = createEngine({ defaultCap: 1_000, clear: { enabled: false } }, { sessions }).project(body(m), 'auto', { session: 's' });
    expect(before.reductions).toHaveLength(1);
    const after = createEngine({ defaultCap: 100_000, clear: { enabled: false } }, { sessions }).project(
      body([...m, call('b', 'bash', {}), result('b', 'ok')]),
      'auto',
      { session: 's' },
    );
    expect(contents(after.request)[2]).toBe(contents(before.request)[2]);
    expect(after.reductions[0]).toMatchObject({ callId: 'a', fresh: false });
    // without the shared store the new engine decides afresh under its own cap
    const fresh = createEngine({ defaultCap: 100_000, clear: { enabled: false } }).project(
      body([...m, call('b', 'bash', {}), result('b', 'ok')]),
      'auto',
      { session: 's' },
    );
    expect(fresh.reductions).toHaveLength(0);
  });
});
