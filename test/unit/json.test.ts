/** The lazy span JSON reader: same values as JSON.parse, exact spans, clear errors. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyPatches, decodeString, get, parseLazy, reusableNodes, toValue } from '../../src/engine/json';
import { commonPrefixLength } from '../../src/engine/engine';

describe('parseLazy', () => {
  it('reads the same value JSON.parse reads, for any JSON value and indentation', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 1, 2), (v, indent) => {
        const text = JSON.stringify(v, null, indent);
        expect(toValue(text, parseLazy(text))).toEqual(JSON.parse(text));
      }),
      { numRuns: 300 },
    );
  });

  it('reads a "__proto__" key as an own property, as JSON.parse does', () => {
    const text = '[{"__proto__":""},{"a":{"__proto__":{"x":1}}}]';
    expect(toValue(text, parseLazy(text))).toEqual(JSON.parse(text));
    expect(Object.getPrototypeOf((toValue(text, parseLazy(text)) as object[])[0])).toBe(Object.prototype);
  });

  it('gives every value a span that slices back to its own JSON text', () => {
    const text = '{ "a" : [1, "two\\n", {"b": null}] , "c":true }';
    const root = parseLazy(text);
    const a = get(root, 'a')!;
    expect(text.slice(a.start, a.end)).toBe('[1, "two\\n", {"b": null}]');
    expect(a.kind).toBe('array');
    if (a.kind !== 'array') return;
    expect(decodeString(text, a.items[1] as never)).toBe('two\n');
  });

  it('marks strings with escapes so unescaped ones decode by slicing', () => {
    const root = parseLazy('["plain", "esc\\"aped", "\\u00e9"]');
    expect(root.kind).toBe('array');
    if (root.kind !== 'array') return;
    expect(root.items.map((i) => (i as { escaped: boolean }).escaped)).toEqual([false, true, true]);
  });

  it('finds the end of a string that ends in escaped backslashes', () => {
    const text = JSON.stringify(['a\\', 'b\\\\"c', '\\']);
    expect(toValue(text, parseLazy(text))).toEqual(['a\\', 'b\\\\"c', '\\']);
  });

  it('names the offset and line of malformed JSON', () => {
    expect(() => parseLazy('{"a": 1,\n "b": }')).toThrow(/malformed JSON at offset 15 \(line 2\)/);
    expect(() => parseLazy('[1, 2')).toThrow(/offset 5.*(end of input|expected , or \])/);
    expect(() => parseLazy('"open')).toThrow(/unterminated string/);
    expect(() => parseLazy('{} x')).toThrow(/unexpected text after the JSON value/);
  });

  it('refuses nesting deep enough to exhaust the stack', () => {
    expect(() => parseLazy('['.repeat(10_000) + ']'.repeat(10_000))).toThrow(/nesting deeper than/);
  });
});

describe('parsing with reuse of an earlier parse', () => {
  it('reads the same value as a fresh parse whatever changed after the shared prefix', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 8 }), fc.array(fc.jsonValue(), { maxLength: 4 }), fc.nat(), (items, more, cut) => {
        const a = JSON.stringify({ model: 'm', messages: items, n: 12 });
        const changed = [...items.slice(0, cut % (items.length + 1)), ...more];
        const b = JSON.stringify({ model: 'm', messages: changed, n: 123 });
        const reuse = { nodes: reusableNodes(parseLazy(a)), upTo: commonPrefixLength(a, b) };
        expect(toValue(b, parseLazy(b, reuse))).toEqual(JSON.parse(b));
      }),
      { numRuns: 300 },
    );
  });

  it('takes unchanged items from the earlier parse instead of parsing them again', () => {
    const a = JSON.stringify({
      messages: [
        { role: 'user', content: 'x'.repeat(100) },
        { role: 'assistant', content: 'y' },
      ],
    });
    const b = a.replace(/\]\}$/, ',{"role":"user","content":"z"}]}');
    const first = parseLazy(a);
    const second = parseLazy(b, { nodes: reusableNodes(first), upTo: commonPrefixLength(a, b) });
    const m1 = get(first, 'messages'),
      m2 = get(second, 'messages');
    expect(m1?.kind).toBe('array');
    expect(m2?.kind).toBe('array');
    if (m1?.kind !== 'array' || m2?.kind !== 'array') return;
    expect(m2.items[0], 'the first item is the very node of the earlier parse').toBe(m1.items[0]);
    expect(m2.items).toHaveLength(3);
  });
});

describe('commonPrefixLength', () => {
  it('is the length of the longest common prefix', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 9000 }), fc.string({ maxLength: 50 }), fc.string({ maxLength: 50 }), (p, x, y) => {
        const n = commonPrefixLength(p + x, p + y);
        let k = 0;
        while (k < x.length && k < y.length && x[k] === y[k]) k++;
        expect(n).toBe(p.length + k);
      }),
      { numRuns: 200 },
    );
  });
});

describe('applyPatches', () => {
  it('returns the very same text when there is nothing to patch', () => {
    const t = '{"a":1}';
    expect(applyPatches(t, [])).toBe(t);
  });
  it('replaces spans in any order and keeps everything between them', () => {
    expect(
      applyPatches('0123456789', [
        { start: 6, end: 8, text: 'x' },
        { start: 1, end: 2, text: 'yy' },
      ]),
    ).toBe('0yy2345x89');
  });
  it('refuses overlapping patches', () => {
    expect(() =>
      applyPatches('0123', [
        { start: 0, end: 2, text: '' },
        { start: 1, end: 3, text: '' },
      ]),
    ).toThrow(/overlapping/);
  });
});
