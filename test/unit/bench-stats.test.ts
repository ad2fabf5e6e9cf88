import { describe, expect, it } from 'vitest';
import { median } from '../../bench/stats';

describe('bench median', () => {
  it('takes the middle of an odd count, the upper middle of an even one, without sorting its input', () => {
    const xs = [3, 1, 2];
    expect(median(xs)).toBe(2);
    expect(xs).toEqual([3, 1, 2]);
    expect(median([4, 1, 3, 2])).toBe(3);
    expect(median([7])).toBe(7);
  });

  it('sorts numerically, not as strings', () => {
    expect(median([10, 9, 100])).toBe(10);
  });

  it('refuses no values', () => {
    expect(() => median([])).toThrow('median of no values');
  });
});
