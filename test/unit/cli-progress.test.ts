/** Progress of a long replay on stderr: only on a terminal, only after a second, one line rewritten, cleared at the end. */
import { describe, expect, it } from 'vitest';
import { PROGRESS_AFTER_MS, progressLine } from '../../src/cli/progress';

function fake(isTTY: boolean) {
  const written: string[] = [];
  let t = 0;
  return { stream: { isTTY, write: (s: string) => written.push(s) }, written, clock: { now: () => t, advance: (ms: number) => (t += ms) } };
}

describe('progress line', () => {
  it('shows nothing during the first second', () => {
    const f = fake(true);
    const p = progressLine(f.stream, f.clock.now);
    f.clock.advance(PROGRESS_AFTER_MS - 1);
    p.update('call 1 of 9');
    p.done();
    expect(f.written).toEqual([]);
  });

  it('rewrites one line in place after a second and clears it when done', () => {
    const f = fake(true);
    const p = progressLine(f.stream, f.clock.now);
    f.clock.advance(PROGRESS_AFTER_MS);
    p.update('call 5 of 9');
    f.clock.advance(500);
    p.update('call 9 of 9');
    p.done();
    expect(f.written).toEqual(['\rcall 5 of 9\x1b[K', '\rcall 9 of 9\x1b[K', '\r\x1b[K']);
  });

  it('redraws at most every tenth of a second', () => {
    const f = fake(true);
    const p = progressLine(f.stream, f.clock.now);
    f.clock.advance(PROGRESS_AFTER_MS);
    for (let k = 0; k < 50; k++) p.update(`call ${k}`);
    expect(f.written).toHaveLength(1);
  });

  it('writes nothing when stderr is not a terminal', () => {
    const f = fake(false);
    const p = progressLine(f.stream, f.clock.now);
    f.clock.advance(10 * PROGRESS_AFTER_MS);
    p.update('call 1 of 9');
    p.done();
    expect(f.written).toEqual([]);
  });
});
