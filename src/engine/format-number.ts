/**
 * Thousands separators for the numbers in markers and reasons. `toLocaleString` costs microseconds
 * per call through ICU, which adds up to a visible share of a projection over thousands of results.
 */
export function formatInt(n: number): string {
  const s = String(Math.trunc(n));
  return s.length <= 3 ? s : s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
