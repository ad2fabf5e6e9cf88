/**
 * Every real session of the corpus (test/fixtures/sessions) replays: its format is detected, its
 * reader finds at least one model call, and the replay projects its first calls. A file that reads
 * as zero calls would drop out of the pooled figures without anyone noticing; this is the test that
 * notices.
 */
import { relative } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readTranscript } from '../../src/replay/readers/index';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store/memory';
import { CORPUS } from '../support/corpus';
import { filesUnder } from '../support/files';

/** The sessions the corpus READMEs list (9 short and long ones, 19 in dev/, 17 in dev3/, 10 in dev4/). */
const CORPUS_SESSIONS = 55;
/**
 * Calls replayed per session: enough to run every stage on the reader's items, few enough that the
 * whole corpus (6,312 calls, minutes to replay in full) stays a unit test. The bench replays
 * every call.
 */
const REPLAYED_CALLS = 5;

const sessions = filesUnder(CORPUS)
  .filter((f) => !f.endsWith('.md'))
  .sort();

test(`the corpus holds the ${CORPUS_SESSIONS} sessions its READMEs list`, () => {
  expect(sessions).toHaveLength(CORPUS_SESSIONS);
});

describe.each(sessions.map((file) => [relative(CORPUS, file), file]))('%s', (_name, file) => {
  test('reads as at least one model call, and its first calls replay', async () => {
    const t = await readTranscript(file);
    expect(t.calls.length).toBeGreaterThan(0);
    const first = { ...t, calls: t.calls.slice(0, REPLAYED_CALLS) };
    const r = replay(first, { config: {}, store: new MemoryStore() });
    expect(r.calls).toHaveLength(first.calls.length);
    expect(r.calls.every((c) => c.originalTokens > 0)).toBe(true);
  });
});
