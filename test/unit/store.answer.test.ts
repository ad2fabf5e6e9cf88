/**
 * `readAnswer`: `spillway read` held to a cap for models, with the options that read the next part.
 */
import { describe, expect, it } from 'vitest';
import { handleFor } from '../../src/engine/handle';
import { answerText, readAnswer } from '../../src/store';

const text = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join('');
const handle = handleFor(text);
const get = () => text;

describe('readAnswer', () => {
  it('cuts a lines read at the cap on a line boundary and names the lines that follow', () => {
    const a = readAnswer(handle, { lines: '2:9' }, get, 14);
    expect(a.text).toBe('line 2\nline 3\n');
    expect(a.next).toEqual({ lines: '4:9' });
  });

  it('names the rest of an open-ended lines read as open-ended', () => {
    expect(readAnswer(handle, { lines: '3:' }, get, 7).next).toEqual({ lines: '4:' });
  });

  it('gives no line-shaped next when even one line is over the cap', () => {
    const a = readAnswer(handle, { lines: '1' }, get, 3);
    expect(a.text).toBe('lin');
    expect(a.next).toBeUndefined();
  });

  it('pages on from a char window with the page size asked for', () => {
    expect(readAnswer(handle, { offset: 5, limit: 10 }, get, 40).next).toEqual({ offset: 15, limit: 10 });
  });

  it('gives no next when the read reaches the end', () => {
    expect(readAnswer(handle, {}, get, 1000).next).toBeUndefined();
  });

  it('refuses a limit over the cap before reading the output', () => {
    const never = () => {
      throw new Error('read the store');
    };
    expect(() => readAnswer(handle, { offset: 0, limit: 41 }, never, 40)).toThrow(/limit 41 is over the cap of 40 chars per answer/);
  });

  it('heads the text with which part of how much it is and where the next part starts', () => {
    const a = readAnswer(handle, {}, get, 20);
    expect(answerText(a)).toBe(`[spillway ${handle}: chars 0–20 of 71; next: offset 20, limit 20]\n${text.slice(0, 20)}`);
  });
});
