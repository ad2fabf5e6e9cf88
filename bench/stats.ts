/** Small statistics the benchmarks share. */

/** The median of `xs` (the upper one of an even count), from a sorted copy; `xs` must not be empty. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) throw new Error('median of no values');
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}
