/**
 * Assertions that say what failed. `expect(text.startsWith(p)).toBe(true)` reports only "expected
 * false to be true"; these report the text's actual start (or end), the elements that break a
 * rule, or the list that held no match.
 */
import { expect } from 'vitest';

const shown = (v: unknown, max = 600) => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > max ? `${s.slice(0, max)}…` : s;
};

/** `text` starts with `prefix`; on failure the message shows how it does start. */
export function expectStart(text: string, prefix: string, message?: string): void {
  expect(text.slice(0, prefix.length), message ?? `start of ${shown(text, 200)}`).toBe(prefix);
}

/** `text` ends with `suffix`; on failure the message shows how it does end. */
export function expectEnd(text: string, suffix: string, message?: string): void {
  expect(text.slice(Math.max(0, text.length - suffix.length)), message ?? `end of …${shown(text.slice(-200))}`).toBe(suffix);
}

/** Some element of `items` satisfies `predicate`; on failure the message lists the elements. */
export function expectSome<T>(items: readonly T[], predicate: (item: T, index: number) => unknown, message?: string): void {
  expect(
    items.some((x, i) => predicate(x, i)),
    `${message ? `${message}: ` : ''}no element matches among ${items.length}: ${shown(items)}`,
  ).toBe(true);
}

/** The elements of `items` that do not satisfy `predicate` (assert it is [] to see the offenders). */
export function failing<T>(items: readonly T[], predicate: (item: T, index: number, all: readonly T[]) => unknown): T[] {
  return items.filter((x, i, a) => !predicate(x, i, a));
}
