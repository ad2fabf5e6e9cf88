/** Previews keep what agents refer to next, stay within budget and are deterministic. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cutBytes, head, headTail, jsonPreview, preview, smart } from '../../src/engine/preview';
import { expectStart, expectEnd } from '../support/expect';

const log =
  Array.from({ length: 500 }, (_, i) =>
    i === 250 ? 'FAILED tests/test_models.py::test_save - AssertionError: expected 3 got 4' : `PASSED tests/test_${i}.py`,
  ).join('\n') + '\n=== 1 failed, 499 passed in 12.3s ===';

describe('preview', () => {
  it('never exceeds its budget for any kind and any text', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 3000 }),
        fc.integer({ min: 1, max: 1500 }),
        fc.constantFrom('smart', 'head', 'head-tail', 'json'),
        (t, b, k) => {
          expect(preview(k as never, t, b).length).toBeLessThanOrEqual(Math.max(b, 0));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('returns the text itself when it fits', () => {
    expect(preview('smart', 'short', 100)).toBe('short');
  });

  it('smart keeps the head, the failing line and the summary at the tail', () => {
    const p = smart(log, 1200);
    expectStart(p, 'PASSED tests/test_0.py');
    expect(p).toContain('FAILED tests/test_models.py::test_save - AssertionError');
    expectEnd(p, '=== 1 failed, 499 passed in 12.3s ===');
    expect(p).toMatch(/\[… \d+ lines omitted …\]/);
  });

  it('head-tail says how much it left out', () => {
    const p = headTail(log, 600);
    expect(p).toMatch(/\[… [\d,]+ lines, [\d,]+ chars omitted …\]/);
    expectEnd(p, 'in 12.3s ===');
  });

  it('head cuts at a line break near the budget', () => {
    expect(head('aaaa\nbbbb\ncccc', 11)).toBe('aaaa\nbbbb\n');
  });

  it('never splits a surrogate pair', () => {
    const t = '😀'.repeat(100);
    const p = head(t, 11);
    expect(p).toBe('😀'.repeat(5));
  });

  it('is the same every time for the same text', () => {
    expect(smart(log, 900)).toBe(smart(log, 900));
  });
});

describe('json preview', () => {
  const rows = {
    total: 1234,
    rows: Array.from({ length: 300 }, (_, i) => ({ id: i, name: `user ${i}`, email: `u${i}@example.com`, tags: ['a', 'b'] })),
  };
  const text = JSON.stringify(rows, null, 2);

  it('stays valid JSON that shows keys, first elements and the count of the rest', () => {
    const p = jsonPreview(text, 800)!;
    expect(p.length).toBeLessThanOrEqual(800);
    const v = JSON.parse(p);
    expect(v.total).toBe(1234);
    expect(v.rows[0]).toMatchObject({ id: 0, name: 'user 0' });
    expect(v.rows[v.rows.length - 1]).toMatch(/more items, 300 in all/);
  });

  it('keeps a "__proto__" key of the output as a key', () => {
    const text = `{"__proto__":"${'x'.repeat(50)}","rows":${JSON.stringify(Array.from({ length: 100 }, (_, i) => i))}}`;
    const p = jsonPreview(text, 300)!;
    expect(Object.keys(JSON.parse(p))).toContain('__proto__');
  });

  it('is what smart previews use for JSON output', () => {
    expect(() => JSON.parse(preview('smart', text, 700))).not.toThrow();
  });

  it('gives null for text that is not JSON, and the json kind then falls back to head-tail', () => {
    expect(jsonPreview('{ not json', 100)).toBeNull();
    expect(preview('json', 'x'.repeat(500) + '\n' + 'y'.repeat(500), 200)).toMatch(/omitted/);
  });
});

describe('cutBytes', () => {
  it('cuts UTF-8 at a character boundary within the byte budget', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.integer({ min: 0, max: 400 }), (t, n) => {
        const c = cutBytes(t, n);
        expect(Buffer.byteLength(c)).toBeLessThanOrEqual(Math.max(n, 0));
        expectStart(t, c);
      }),
    );
  });
});
