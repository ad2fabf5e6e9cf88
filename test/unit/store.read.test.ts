import { describe, expect, it } from 'vitest';
import { handleFor } from '../../src/engine/handle';
import { SpillwayError } from '../../src/engine/types';
import { boundedAnswer, parseLineRange, readText, type ReadOptions } from '../../src/store/read';

const text = ['alpha', 'error one', 'beta', 'gamma', 'delta', 'epsilon', 'error two', 'zeta'].join('\n');
const h = handleFor(text);
const read = (options?: ReadOptions, t = text) => readText(handleFor(t), t, options);

function refusal(options: unknown): SpillwayError {
  try {
    readText(h, text, options as ReadOptions);
  } catch (error) {
    expect(error).toBeInstanceOf(SpillwayError);
    return error as SpillwayError;
  }
  throw new Error(`options ${JSON.stringify(options)} were accepted`);
}

describe('whole-text reads', () => {
  it('returns the whole text when no option is given', () => {
    expect(read()).toEqual({ handle: h, text, totalChars: text.length, totalLines: 8, shown: `all 8 lines (${text.length} chars)` });
  });

  it('says the output is empty for the empty text', () => {
    const r = read({}, '');
    expect(r.text).toBe('');
    expect(r.totalLines).toBe(0);
    expect(r.shown).toBe('the whole output, which is empty');
  });

  it('formats large counts with thousands separators', () => {
    const big = Array.from({ length: 1204 }, (_, i) => `line ${i}`).join('\n');
    expect(read({ lines: '10:20' }, big).shown).toBe('lines 10–20 of 1,204');
  });
});

describe('line reads', () => {
  it('returns lines A to B inclusive with their terminators', () => {
    const r = read({ lines: '2:3' });
    expect(r.text).toBe('error one\nbeta\n');
    expect(r.shown).toBe('lines 2–3 of 8');
    expect(r.range).toEqual({ unit: 'lines', start: 2, end: 3 });
  });

  it('reads from line A to the end for "A:"', () => {
    expect(read({ lines: '7:' }).text).toBe('error two\nzeta');
  });

  it('reads from the first line for ":B"', () => {
    expect(read({ lines: ':2' }).text).toBe('alpha\nerror one\n');
  });

  it('reads one line for "N" and names it in the singular', () => {
    const r = read({ lines: '4' });
    expect(r.text).toBe('gamma\n');
    expect(r.shown).toBe('line 4 of 8');
  });

  it('accepts a [A, B] pair', () => {
    expect(read({ lines: [2, 3] }).text).toBe('error one\nbeta\n');
  });

  it('returns the last line without a newline when the text has none', () => {
    expect(read({ lines: '8:8' }).text).toBe('zeta');
  });

  it('keeps CRLF terminators as stored', () => {
    expect(read({ lines: '1:2' }, 'a\r\nb\r\nc').text).toBe('a\r\nb\r\n');
  });

  it('clamps a range that runs past the end to the lines that exist', () => {
    const r = read({ lines: '7:100' });
    expect(r.text).toBe('error two\nzeta');
    expect(r.shown).toBe('lines 7–8 of 8');
  });

  it('returns nothing, and says why, for a range that starts past the end', () => {
    const r = read({ lines: '10:20' });
    expect(r.text).toBe('');
    expect(r.shown).toBe('nothing in lines 10–20: the output has 8 lines');
    expect(r.range).toBeUndefined();
  });

  it('returns nothing for a line range of the empty text', () => {
    expect(read({ lines: '1:1' }, '').shown).toBe('nothing in line 1: the output has 0 lines');
  });

  it('cuts a line read at the last whole line that fits the limit', () => {
    const r = read({ lines: '1:8', limit: 21 });
    expect(r.text).toBe('alpha\nerror one\nbeta\n');
    expect(r.truncated).toBe(true);
    expect(r.range).toEqual({ unit: 'lines', start: 1, end: 3 });
    expect(r.shown).toBe('lines 1–3 of 8 (cut by the limit of 21 chars; asked for lines 1–8)');
  });

  it('cuts inside the first line when not even it fits the limit', () => {
    const r = read({ lines: '2', limit: 3 });
    expect(r.text).toBe('err');
    expect(r.shown).toBe('line 2 of 8, its first 3 chars (cut by the limit of 3 chars)');
  });

  it.each(['abc', '0:3', '5:2', '1-3', '1:2:3', '', ':', '-1:2', '1.5:2'])(
    'refuses the malformed range %j, naming it and the expected shape',
    (lines) => {
      const error = refusal({ lines });
      expect(error.message).toContain(`lines ${JSON.stringify(lines)} is not a line range`);
      expect(error.message).toContain('expected A:B, A:, :B or N');
    },
  );

  it('refuses a pair that is not two whole numbers', () => {
    expect(refusal({ lines: [1.5, 2] }).message).toContain('lines [1.5,2] is not a line range');
    expect(() => parseLineRange([1])).toThrow(/not a line range/);
  });
});

describe('grep reads', () => {
  it('lists matching lines with their numbers', () => {
    const r = read({ grep: 'error' });
    expect(r.text).toBe('2:error one\n7:error two');
    expect(r.matches).toBe(2);
    expect(r.shown).toBe('2 matches of /error/, 2 lines of 8');
  });

  it('shows context lines and says how much context', () => {
    const r = read({ grep: 'error', context: 1 });
    expect(r.text).toBe('1-alpha\n2:error one\n3-beta\n--\n6-epsilon\n7:error two\n8-zeta');
    expect(r.shown).toBe('2 matches of /error/ with 1 line of context, 6 lines of 8');
  });

  it('searches only the given lines when lines is given too', () => {
    const r = read({ grep: 'error', lines: '5:' });
    expect(r.text).toBe('7:error two');
    expect(r.shown).toBe('1 match of /error/ in lines 5–end, 1 line of 8');
  });

  it('says so when nothing matches', () => {
    const r = read({ grep: 'panic' });
    expect(r.text).toBe('');
    expect(r.matches).toBe(0);
    expect(r.shown).toBe('no match of /panic/ in 8 lines');
  });

  it('matches regardless of case with ignoreCase', () => {
    expect(read({ grep: 'ERROR', ignoreCase: true }).matches).toBe(2);
    expect(read({ grep: 'ERROR' }).matches).toBe(0);
  });

  it('cuts grep output at a line boundary to fit the limit', () => {
    const r = read({ grep: 'error', limit: 15 });
    expect(r.text).toBe('2:error one\n');
    expect(r.truncated).toBe(true);
    expect(r.matches).toBe(2);
    expect(r.shown).toContain('(cut by the limit of 15 chars)');
  });

  it('refuses an invalid regex, naming it and the reason', () => {
    const message = refusal({ grep: '(unclosed' }).message;
    expect(message).toContain('grep "(unclosed" is not a valid JavaScript regular expression');
    expect(message).toMatch(/Unterminated group/);
  });

  it('finds nothing in the empty text', () => {
    expect(read({ grep: '' }, '').shown).toBe('no match of /(?:)/ in 0 lines');
  });
});

describe('char reads', () => {
  it('returns limit chars from offset', () => {
    const r = read({ offset: 6, limit: 5 });
    expect(r.text).toBe('error');
    expect(r.shown).toBe(`chars 6–11 of ${text.length}`);
    expect(r.range).toEqual({ unit: 'chars', start: 6, end: 11 });
  });

  it('reads from offset to the end when no limit is given', () => {
    expect(read({ offset: text.length - 4 }).text).toBe('zeta');
  });

  it('reads from the start when only limit is given', () => {
    expect(read({ limit: 5 }).text).toBe('alpha');
  });

  it('returns nothing, and says why, for an offset past the end', () => {
    const r = read({ offset: 1000, limit: 10 });
    expect(r.text).toBe('');
    expect(r.shown).toBe(`nothing at char 1,000: the output has ${text.length} chars`);
  });

  it('never splits a surrogate pair', () => {
    expect(read({ offset: 0, limit: 2 }, 'a😀b').text).toBe('a');
  });
});

describe('option checks', () => {
  it.each([
    [{ offset: -1 }, 'offset must be a whole number ≥ 0, got -1'],
    [{ limit: -5 }, 'limit must be a whole number ≥ 0, got -5'],
    [{ limit: 2.5 }, 'limit must be a whole number ≥ 0, got 2.5'],
    [{ offset: '3' }, 'offset must be a whole number ≥ 0, got "3"'],
    [{ grep: 'x', context: -1 }, 'context must be a whole number ≥ 0, got -1'],
  ])('refuses %j', (options, message) => {
    expect(refusal(options).message).toBe(message);
  });

  it('refuses lines together with offset', () => {
    expect(refusal({ lines: '1:2', offset: 3 }).message).toMatch(/offset counts chars and cannot be combined with lines/);
  });

  it('refuses grep together with offset', () => {
    expect(refusal({ grep: 'x', offset: 3 }).message).toMatch(/cannot be combined with grep/);
  });

  it('refuses context without grep', () => {
    expect(refusal({ context: 2 }).message).toMatch(/context only applies to grep/);
  });

  it('refuses ignoreCase without grep', () => {
    expect(refusal({ ignoreCase: true }).message).toMatch(/ignoreCase only applies to grep/);
  });

  it('refuses an unknown option and lists the known ones', () => {
    expect(refusal({ line: '1:2' }).message).toBe('unknown read option "line": expected lines, grep, ignoreCase, context, offset, limit');
  });

  it('refuses options that are not an object', () => {
    expect(refusal('1:2').message).toMatch(/read options must be an object/);
  });

  it('treats options set to undefined as not given', () => {
    expect(read({ lines: undefined, grep: undefined }).text).toBe(text);
  });
});

describe("an output stored in an agent's JSON, on one line", () => {
  const rows = Array.from({ length: 40 }, (_, i) => `row ${i + 1} of the run`).join('\n') + '\n';
  const cline = JSON.stringify([{ query: 'seq 1 40', result: rows, success: true }]);
  const codex = JSON.stringify({ output: rows, metadata: { exit_code: 0 } });

  it('is read by lines and grep inside the JSON, as its preview showed them, and says so', () => {
    const lines = read({ lines: '10:11' }, cline);
    expect(lines.text).toBe('row 10 of the run\nrow 11 of the run\n');
    expect(lines.shown).toBe("lines 10–11 of 40, of the output inside Cline's JSON list");
    const grep = read({ grep: 'row 3[0-2] ' }, codex);
    expect(grep.text).toBe('30:row 30 of the run\n31:row 31 of the run\n32:row 32 of the run');
    expect(grep.shown).toMatch(/^3 matches of \/row 3\[0-2\] \/, 3 lines of 40, of the output inside Codex's JSON$/);
  });

  it('is returned as stored by a whole or a char read', () => {
    expect(read({}, cline).text).toBe(cline);
    expect(read({ offset: 0, limit: 20 }, cline).text).toBe(cline.slice(0, 20));
  });

  it('is not taken for one when it spans lines, or is JSON of another shape', () => {
    const pretty = JSON.stringify([{ query: 'q', result: 'a\nb' }], null, 1);
    expect(read({ lines: '2' }, pretty).text).toBe(pretty.split('\n')[1] + '\n');
    const other = JSON.stringify([{ query: 'q', rows: 3 }]);
    expect(read({ lines: '1' }, other).text).toBe(other);
  });
});

describe('the read tool answer', () => {
  const base = { handle: 'sw_0123456789abcdef01234567', totalChars: 50_000, totalLines: 1_000 };

  it('says which part of how much it shows', () => {
    const a = boundedAnswer({ ...base, text: 'line 10\nline 11\n', shown: 'lines 10–11 of 1,000' });
    expect(a.split('\n')[0]).toBe('[spillway sw_0123456789abcdef01234567: lines 10–11 of 1,000 of 1,000 lines, 50,000 chars]');
    expect(a).toContain('line 10\nline 11\n');
  });

  it('clips to the bound and says how to ask for the rest', () => {
    const a = boundedAnswer({ ...base, text: 'x'.repeat(20_000), shown: 'the whole output' }, 8_000);
    expect(a.length).toBeLessThan(8_400);
    expect(a).toMatch(/clipped: showing the first 8,000 of these 20,000 chars/);
  });
});
