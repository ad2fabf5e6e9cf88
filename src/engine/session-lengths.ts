/**
 * Model calls per session in the development corpus (test/fixtures/sessions), one number per
 * session, sorted. The payback schedule (clear-schedule.ts) learns from them how many calls a
 * session that has made k calls can still be expected to make.
 *
 * Data, not code: regenerate with `npm run bench:tune -- --lengths` whenever the corpus changes.
 */
export const CORPUS_SESSION_LENGTHS: readonly number[] = [
  10, 18, 19, 20, 21, 31, 37, 39, 41, 54, 62, 71, 97, 102, 103, 107, 108, 113, 129, 131, 132, 138, 156, 182, 189, 230, 281,
];
