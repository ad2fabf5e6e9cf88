import { describe, expect, it } from 'vitest';
import { countLines, cutAtLimit, grepLines, lineSpans, selectLines, sliceChars, splitsPair } from '../../src/store/slice';

describe('line model', () => {
  it('counts no lines in the empty text', () => {
    expect(countLines('')).toBe(0);
    expect(lineSpans('')).toEqual([]);
  });

  it('counts a last line that has no newline', () => {
    expect(countLines('a\nb')).toBe(2);
    expect(lineSpans('a\nb')).toEqual([
      { start: 0, end: 1, next: 2 },
      { start: 2, end: 3, next: 3 },
    ]);
  });

  it('does not count an extra empty line after a trailing newline', () => {
    expect(countLines('a\nb\n')).toBe(2);
    expect(lineSpans('a\nb\n')).toHaveLength(2);
  });

  it('counts a lone newline as one empty line', () => {
    expect(countLines('\n')).toBe(1);
    expect(lineSpans('\n')).toEqual([{ start: 0, end: 0, next: 1 }]);
  });

  it('treats the carriage return of CRLF as part of the terminator', () => {
    expect(lineSpans('ab\r\ncd\r\n')).toEqual([
      { start: 0, end: 2, next: 4 },
      { start: 4, end: 6, next: 8 },
    ]);
  });

  it('does not end a line at a lone carriage return', () => {
    expect(countLines('a\rb\nc')).toBe(2);
  });

  it('agrees between countLines and lineSpans on assorted texts', () => {
    for (const text of ['', 'x', '\n\n', 'a\r\n', '\r', 'a\n\nb', '\n\nx\n']) {
      expect(countLines(text), JSON.stringify(text)).toBe(lineSpans(text).length);
    }
  });
});

describe('selectLines', () => {
  const text = 'one\ntwo\nthree\nfour';

  it('returns the exact lines asked for, terminators included', () => {
    expect(selectLines(text, 2, 3)).toEqual({ first: 2, last: 3, text: 'two\nthree\n' });
  });

  it('gives back the whole text for lines 1 to the end', () => {
    expect(selectLines(text, 1)?.text).toBe(text);
  });

  it('keeps CRLF terminators byte for byte', () => {
    expect(selectLines('a\r\nb\r\nc\r\n', 2, 2)?.text).toBe('b\r\n');
  });

  it('clamps a range that runs past the last line', () => {
    expect(selectLines(text, 3, 99)).toEqual({ first: 3, last: 4, text: 'three\nfour' });
  });

  it('returns undefined for a range that starts past the last line', () => {
    expect(selectLines(text, 5, 9)).toBeUndefined();
  });

  it('returns undefined for any range of the empty text', () => {
    expect(selectLines('', 1)).toBeUndefined();
  });
});

describe('grepLines', () => {
  const text = ['alpha', 'error one', 'beta', 'gamma', 'delta', 'epsilon', 'error two', 'zeta'].join('\n');

  it('prefixes each matching line with its 1-based number and a colon', () => {
    expect(grepLines(text, /error/)).toEqual({ text: '2:error one\n7:error two', matches: 2, shownLines: 2 });
  });

  it('separates non-adjacent groups with -- and marks context lines with a dash', () => {
    expect(grepLines(text, /error/, 1).text).toBe(
      ['1-alpha', '2:error one', '3-beta', '--', '6-epsilon', '7:error two', '8-zeta'].join('\n'),
    );
  });

  it('merges groups whose context overlaps and prints each line once', () => {
    const r = grepLines(text, /error/, 2);
    expect(r.text).toBe(['1-alpha', '2:error one', '3-beta', '4-gamma', '5-delta', '6-epsilon', '7:error two', '8-zeta'].join('\n'));
    expect(r.shownLines).toBe(8);
  });

  it('merges groups that touch without overlapping', () => {
    const r = grepLines('m\nx\nx\nm', /m/, 1);
    expect(r.text).toBe('1:m\n2-x\n3-x\n4:m');
  });

  it('marks a match that falls inside the context of an earlier match with a colon', () => {
    expect(grepLines('a\nb\na', /a|b/, 1).text).toBe('1:a\n2:b\n3:a');
  });

  it('searches only the given line range and keeps absolute line numbers', () => {
    expect(grepLines(text, /error/, 1, { first: 5, last: 8 }).text).toBe('6-epsilon\n7:error two\n8-zeta');
  });

  it('does not show context lines outside the given range', () => {
    expect(grepLines(text, /error/, 3, { first: 2, last: 3 }).text).toBe('2:error one\n3-beta');
  });

  it('matches line content without the CRLF terminator so $ anchors at the end of the line', () => {
    expect(grepLines('foo\r\nbar\r\n', /o$/).text).toBe('1:foo');
  });

  it('returns nothing when no line matches', () => {
    expect(grepLines(text, /nope/)).toEqual({ text: '', matches: 0, shownLines: 0 });
  });

  it('never matches across lines', () => {
    expect(grepLines('a\nb', /a\nb/).matches).toBe(0);
  });

  it('refuses a global pattern, whose test() would carry state between lines', () => {
    expect(() => grepLines(text, /error/g)).toThrow(/without the g or y flag/);
  });
});

describe('sliceChars', () => {
  it('returns the window from offset of at most limit chars', () => {
    expect(sliceChars('0123456789', 2, 3)).toEqual({ start: 2, end: 5, text: '234' });
  });

  it('runs to the end when no limit is given', () => {
    expect(sliceChars('0123456789', 7)).toEqual({ start: 7, end: 10, text: '789' });
  });

  it('clamps an offset past the end to an empty window at the end', () => {
    expect(sliceChars('abc', 10, 5)).toEqual({ start: 3, end: 3, text: '' });
  });

  it('moves a start inside a surrogate pair back to the start of the pair', () => {
    expect(sliceChars('a😀b', 2, 2)).toEqual({ start: 1, end: 3, text: '😀' });
  });

  it('moves an end inside a surrogate pair back so paging on from it loses nothing', () => {
    const text = 'ab😀cd';
    const first = sliceChars(text, 0, 3);
    expect(first).toEqual({ start: 0, end: 2, text: 'ab' });
    const second = sliceChars(text, first.end, 3);
    expect(first.text + second.text).toBe('ab😀c');
  });

  it('widens a one-char window over a surrogate pair rather than returning nothing', () => {
    expect(sliceChars('😀x', 0, 1)).toEqual({ start: 0, end: 2, text: '😀' });
  });

  it('detects a position between the two halves of a pair', () => {
    expect(splitsPair('a😀', 2)).toBe(true);
    expect(splitsPair('a😀', 1)).toBe(false);
  });
});

describe('cutAtLimit', () => {
  it('leaves a text within the limit untouched', () => {
    expect(cutAtLimit('ab\ncd', 5)).toEqual({ text: 'ab\ncd', cut: false });
  });

  it('cuts after the last whole line that fits', () => {
    expect(cutAtLimit('ab\ncd\nef', 7)).toEqual({ text: 'ab\ncd\n', cut: true });
  });

  it('cuts inside the first line when no whole line fits', () => {
    expect(cutAtLimit('abcdef\ngh', 3)).toEqual({ text: 'abc', cut: true });
  });
});
