/**
 * Model calls per session in the development corpus (test/fixtures/sessions), one number per
 * session, sorted. The payback schedule (clear-schedule.ts) learns from them how many calls a
 * session that has made k calls can still be expected to make.
 *
 * Data, not code: regenerate with `npm run bench:tune -- --lengths` whenever the corpus changes.
 */
export const CORPUS_SESSION_LENGTHS: readonly number[] = [
  4, 9, 10, 13, 14, 15, 18, 19, 20, 21, 29, 31, 31, 31, 34, 35, 37, 39, 39, 41, 43, 54, 56, 62, 64, 64, 69, 71, 71, 80, 80, 97, 102, 102,
  103, 107, 108, 113, 129, 131, 132, 138, 156, 161, 182, 189, 189, 214, 230, 281, 380, 439, 456, 471, 498,
];
