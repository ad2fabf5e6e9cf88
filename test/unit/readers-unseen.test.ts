/**
 * The sessions unlike the corpus (test/fixtures/unseen/, bench/unseen.ts): each is the blob its
 * README names, byte for byte, and each reads as model calls whose first ones replay. A file that read
 * as zero calls would drop out of the figure judged on them without anyone noticing.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readTranscript } from '../../src/replay/readers/index';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store/memory';
import { sourcesOf } from '../../bench/heldout';
import { UNSEEN } from '../support/corpus';
import { filesUnder } from '../support/files';

const SESSIONS = 15;
const sessions = filesUnder(UNSEEN)
  .filter((f) => !f.endsWith('.md'))
  .sort();
/** The README's rows: local path → its cells. */
const rows = new Map(
  readFileSync(`${UNSEEN}/README.md`, 'utf8')
    .split('\n')
    .map((l) => l.split('|').map((c) => c.trim()))
    .filter((c) => c.length > 8 && /\.jsonl$/.test(c[1]!))
    .map((c) => [c[1]!, c] as const),
);
/** `git hash-object` of a file's bytes. */
const blob = (bytes: Buffer) =>
  createHash('sha1')
    .update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`), bytes]))
    .digest('hex');

test(`the set holds the ${SESSIONS} sessions its README lists, each with a source`, () => {
  expect(sessions).toHaveLength(SESSIONS);
  expect([...rows.keys()].sort()).toEqual(sessions.map((f) => relative(UNSEEN, f)));
  expect([...sourcesOf(UNSEEN).keys()].sort()).toEqual(sessions.map((f) => relative(UNSEEN, f)));
});

describe.each(sessions.map((file) => [relative(UNSEEN, file), file]))('%s', (name, file) => {
  test('is the blob its README names, and reads as model calls whose first ones replay', async () => {
    const bytes = readFileSync(file);
    const row = rows.get(name)!;
    expect(blob(bytes)).toBe(row[7]);
    expect(bytes.length).toBe(Number(row[6]));
    const t = await readTranscript(file);
    expect(t.calls.length).toBeGreaterThan(0);
    const first = { ...t, calls: t.calls.slice(0, 5) };
    const r = replay(first, { config: {}, store: new MemoryStore() });
    expect(r.calls).toHaveLength(first.calls.length);
  });
});
