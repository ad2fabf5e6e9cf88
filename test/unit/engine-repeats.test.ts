/**
 * Repeats with changes (src/engine/repeats.ts, offload.dedupe): an output that mostly repeats an
 * earlier verbatim one arrives as that one's line ranges plus the lines that differ. Nothing may be
 * left out: the earlier output and the body give back every line, in order.
 */
import { describe, expect, it } from 'vitest';
import { body, call, contents, result } from '../support/chat';
import fc from 'fast-check';
import { createEngine, isReference, MemorySink } from '../../src/engine';
import { encodeRepeat } from '../../src/engine/repeats';

const RANGE = /^\[= lines? (\d+)(?:–(\d+))? of that output(?:, numbered from (\d+) here)?\]$/;
const NUMBER = /^ *(\d+)(→|\t)/;

/** What a reader of the body rebuilds: ranges taken from `earlier` (by its own line numbers when numbered). */
function rebuild(earlier: string, body: string, numbered: boolean): string[] {
  const a = earlier.split('\n');
  const indexOf = (n: number) => (numbered ? a.findIndex((l) => Number(NUMBER.exec(l)?.[1]) === n) : n - 1);
  const out: string[] = [];
  for (const line of body.split('\n')) {
    const m = RANGE.exec(line);
    if (!m) {
      out.push(line);
      continue;
    }
    const from = indexOf(Number(m[1]));
    const to = m[2] === undefined ? from : indexOf(Number(m[2]));
    expect(from).toBeGreaterThanOrEqual(0);
    expect(to).toBeGreaterThanOrEqual(from);
    out.push(...a.slice(from, to + 1));
  }
  return numbered ? out.map((l) => l.replace(NUMBER, '$2')) : out;
}

const lines = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed} ${i} const value_${i} = compute(${i}, "${seed}");`);
const numberedRead = (ls: string[]) => ls.map((l, i) => `${String(i + 1).padStart(6)}→${l}`).join('\n');

describe('encodeRepeat', () => {
  it('writes a re-read after an edit as ranges of the first read and the changed lines', () => {
    const before = lines(200, 'f');
    const after = [...before.slice(0, 80), 'a new line the edit added', ...before.slice(80, 150), ...before.slice(152)];
    const rep = encodeRepeat(before.join('\n'), after.join('\n'), 0)!;
    expect(rep.body.split('\n')).toEqual([
      '[= lines 1–80 of that output]',
      'a new line the edit added',
      '[= lines 81–150 of that output]',
      '[= lines 153–200 of that output]',
    ]);
    expect(rep.literalLines).toBe(1);
    expect(rebuild(before.join('\n'), rep.body, false)).toEqual(after);
  });

  it("matches a read tool's numbered lines without their numbers and says where a shifted run starts", () => {
    const before = lines(120, 'g');
    const after = [...before.slice(0, 10), 'inserted one', 'inserted two', ...before.slice(10)];
    const rep = encodeRepeat(numberedRead(before), numberedRead(after), 0)!;
    expect(rep.body.split('\n')).toEqual([
      '[= lines 1–10 of that output]',
      '    11→inserted one',
      '    12→inserted two',
      '[= lines 11–120 of that output, numbered from 13 here]',
    ]);
    expect(rebuild(numberedRead(before), rep.body, true)).toEqual(
      numberedRead(after)
        .split('\n')
        .map((l) => l.replace(NUMBER, '$2')),
    );
  });

  it('names a part read of a numbered file by the numbers the earlier read printed', () => {
    const file = lines(300, 'h');
    const whole = numberedRead(file);
    const part = file
      .slice(99, 160)
      .map((l, i) => `${String(i + 100).padStart(6)}→${l}`)
      .join('\n');
    expect(encodeRepeat(whole, part, 0)!.body).toBe('[= lines 100–160 of that output]');
  });

  it('gives up when too little of the new output is in the earlier one', () => {
    const a = lines(100, 'x').join('\n');
    const b = [...lines(30, 'x'), ...lines(70, 'y')].join('\n');
    expect(encodeRepeat(a, b, 0.6 * b.length)).toBeUndefined();
    expect(encodeRepeat(a, b, 0)).toBeDefined();
  });

  it('loses no line, whatever the edits (property)', () => {
    const pool = Array.from({ length: 40 }, (_, i) => `line ${i % 25} ${'x'.repeat(i % 7)}`);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 39 }), { minLength: 1, maxLength: 120 }),
        fc.array(fc.integer({ min: 0, max: 39 }), { minLength: 1, maxLength: 120 }),
        (ia, ib) => {
          const a = ia.map((k) => pool[k]!).join('\n');
          const b = ib.map((k) => pool[k]!).join('\n');
          const rep = encodeRepeat(a, b, 0);
          if (rep) expect(rebuild(a, rep.body, false)).toEqual(b.split('\n'));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('repeats in the offload stage (offload.dedupe)', () => {
  const first = lines(150, 'src').join('\n');
  const edited = [...lines(150, 'src').slice(0, 60), 'export const added = true;', ...lines(150, 'src').slice(60)].join('\n');
  const session = [
    call('a', 'read', { path: 'src/a.ts' }),
    result('a', first),
    call('b', 'edit', { path: 'src/a.ts' }),
    result('b', 'Edited.'),
  ];

  it('sends a re-read that arrives after an edit as a reference with the changed lines; the first read stays verbatim', () => {
    const store = new MemorySink();
    const p = createEngine({}, { store }).project(body([...session, call('c', 'read', { path: 'src/a.ts' }), result('c', edited)]));
    const out = contents(p.request);
    expect(out[2]).toBe(first);
    const marker = out[6] as string;
    const [header, ...rest] = marker.split('\n');
    expect(header).toMatch(
      /^\[spillway: read output repeats the read output of call a above; below, its line ranges and the lines that differ · [\d,]+ chars · [\d,]+ tokens · read it back: spillway read sw_[0-9a-f]+\]$/,
    );
    expect(rest).toEqual(['[= lines 1–60 of that output]', 'export const added = true;', '[= lines 61–150 of that output]']);
    expect(p.reductions).toHaveLength(1);
    const r = p.reductions[0]!;
    expect(r).toMatchObject({ callId: 'c', stage: 'offload', reason: 'repeats the output of call a, with changes' });
    expect(isReference(r)).toBe(true);
    expect(r.projectedTokens).toBeLessThan(r.originalTokens);
    expect(store.get(r.handle)).toBe(edited);
  });

  it('sends a read repeated unchanged as a reference, also when it is a read kept whole over its cap', () => {
    // a Claude Code session re-read a 9,000-character file twice after failed edits: kept whole as
    // a read the agent asked for, each copy went out in full (windows-admin, 2026-11-29)
    const file = lines(400, 'kept').join('\n');
    const engine = createEngine({});
    const req = body([
      call('a', 'read', { path: 'src/k.ts' }),
      result('a', file),
      call('b', 'edit', { path: 'src/k.ts' }),
      result('b', 'File has been unexpectedly modified. Read it again before attempting to write it.'),
      call('c', 'read', { path: 'src/k.ts' }),
      result('c', file),
    ]);
    const p = engine.project(req);
    const out = contents(p.request);
    expect(file.length).toBeGreaterThan(8_000);
    expect(out[2]).toBe(file);
    expect(p.reductions.map((r) => [r.callId, r.reason, isReference(r)])).toEqual([['c', 'identical to the output of call a', true]]);
    expect(out[6]).toMatch(/^\[spillway: read output identical to the read output of call a above/);
    expect(p.reductions[0]!.projectedTokens * 50).toBeLessThan(p.reductions[0]!.originalTokens);
  });

  it('keeps each projection a prefix of the next in a session, and a fresh engine decides the same', () => {
    const engine = createEngine({});
    const m = [...session, call('c', 'read', { path: 'src/a.ts' }), result('c', edited)];
    const p1 = engine.project(body(m));
    const later = [...m, call('d', 'bash', { cmd: 'ls' }), result('d', 'ok')];
    const p2 = engine.project(body(later));
    expect(contents(p2.request).slice(0, 7)).toEqual(contents(p1.request));
    // an engine without the session (a restart) finds the same reference in the same place
    expect(createEngine({}).project(body(later)).request).toBe(p2.request);
  });

  it('sends a large change whole: the body is bounded like a preview (previewChars)', () => {
    const changed = [...lines(150, 'src').slice(0, 60), ...lines(40, 'new'), ...lines(150, 'src').slice(60)].join('\n');
    const req = body([...session, call('c', 'read', { path: 'src/a.ts' }), result('c', changed)]);
    expect(createEngine({}).project(req).reductions).toHaveLength(0);
    expect(createEngine({ previewChars: 4_000 }).project(req).reductions).toHaveLength(1);
  });

  it('is off in the seed presets and with offload.dedupe off', () => {
    const req = body([...session, call('c', 'read', { path: 'src/a.ts' }), result('c', edited)]);
    expect(createEngine({ preset: 'oracle-offload', defaultCap: 100_000 }).project(req).reductions).toHaveLength(0);
    expect(createEngine({ offload: { dedupe: false } }).project(req).reductions).toHaveLength(0);
  });

  it('leaves an output alone when the earlier copy is itself reduced', () => {
    const big = lines(1_200, 'big').join('\n');
    const bigEdited = [...lines(1_200, 'big').slice(0, 500), 'changed', ...lines(1_200, 'big').slice(500)].join('\n');
    const p = createEngine({ toolCaps: { bash: 4_000 } }).project(
      body([call('a', 'bash', { cmd: 'make' }), result('a', big), call('b', 'bash', { cmd: 'make' }), result('b', bigEdited)]),
    );
    // the first is offloaded with a preview, so the second cannot stand on it: it is offloaded too
    expect(p.reductions.map((r) => [r.callId, isReference(r)])).toEqual([
      ['a', false],
      ['b', false],
    ]);
  });
});

describe('repeats through the engine (property)', () => {
  it('lose no line, send fewer tokens, and stay within a marker’s bound', () => {
    const base = lines(120, 'p');
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ at: fc.integer({ min: 0, max: 119 }), del: fc.integer({ min: 0, max: 3 }), add: fc.integer({ min: 0, max: 3 }) }),
          {
            maxLength: 6,
          },
        ),
        (edits) => {
          const next = base.slice();
          edits.forEach((e, k) =>
            next.splice(Math.min(e.at, next.length), e.del, ...Array.from({ length: e.add }, (_, n) => `edit ${k}.${n} added this`)),
          );
          const first = base.join('\n');
          const again = next.join('\n');
          const store = new MemorySink();
          const p = createEngine({}, { store }).project(
            body([...[call('a', 'read', { path: 'f' }), result('a', first)], call('c', 'read', { path: 'f' }), result('c', again)]),
          );
          const out = contents(p.request);
          expect(out[2]).toBe(first);
          if (again === first) return; // an identical output is a one-line reference (engine-spillway-default.test.ts)
          const r = p.reductions.find((x) => x.callId === 'c');
          if (!r) return expect(out[4]).toBe(again);
          expect(r.reason).toBe('repeats the output of call a, with changes');
          expect(store.get(r.handle)).toBe(again);
          expect(r.projectedTokens).toBeLessThan(r.originalTokens);
          const marker = out[4] as string;
          expect(marker.length).toBeLessThanOrEqual(1_200 + 480 + 4);
          expect(rebuild(first, marker.slice(marker.indexOf('\n') + 1), false)).toEqual(next);
        },
      ),
      { numRuns: 150 },
    );
  });
});
