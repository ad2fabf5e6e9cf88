/**
 * The benchmark of where the default leaves the oracle's saving (bench/whole.ts): its buckets on a
 * session, and its table.
 */
import { describe, expect, it } from 'vitest';
import type { Transcript } from '../../src/replay/readers';
import { commandSession } from '../support/command-session';
import { measureSession, wholeTable, type Bucket } from '../../bench/whole';

const CALLS = 12;

/** Call k runs command c<k>; its 6,000-character output, which names `name_k`, arrives in call k + 1; the last reply quotes `name_1`. */
const session = (): Transcript =>
  commandSession(
    CALLS,
    (k) => `name_${k} is here\n` + 'filler line of output\n'.repeat(280),
    (k) => (k === CALLS - 1 ? 'done: see name_1' : `run c${k}`),
  );

describe('bench:whole', () => {
  it('puts every result of every call in one bucket, with what the oracle keeps of it', () => {
    const buckets = new Map<string, Bucket>();
    measureSession(session(), 'test-agent', buckets);
    const all = [...buckets.values()];
    // the 11 outputs the session's requests hold (c11's arrives after its last call) are each counted
    expect(all.reduce((a, b) => a + b.results, 0)).toBeGreaterThanOrEqual(CALLS - 1);
    // call k holds the outputs of calls 0..k-2: what is sent is at most that, whole
    const outputChars = (session().items[2] as { content: string }).content.length;
    const sent = all.reduce((a, b) => a + b.sent, 0);
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThanOrEqual((outputChars * (CALLS - 1) * (CALLS - 2)) / 2);
    // the oracle keeps only the line of name_1, in the calls that hold c1's output
    const oracle = all.reduce((a, b) => a + b.oracle, 0);
    expect(oracle).toBe('name_1 is here'.length * (CALLS - 2));
    for (const b of all) expect([...b.byAgent.keys()]).toEqual(['test-agent']);
    expect(all.every((b) => b.name === 'reduced on arrival' || b.name === 'cleared' || b.name.startsWith('whole: '))).toBe(true);
  });

  it('lists reductions first, then what is sent whole by gap, with each one’s share of the gap sent whole', () => {
    const b = (name: string, sent: number, oracle: number): Bucket => ({
      name,
      results: 1,
      sent,
      oracle,
      byAgent: new Map([['pi', sent - oracle]]),
    });
    const table = wholeTable([b('whole: small', 2e6, 1e6), b('cleared', 1e6, 5e6), b('whole: large', 4e6, 1e6)]);
    const rows = table
      .split('\n')
      .slice(2)
      .map((l) => l.split('|')[1]!.trim());
    expect(rows).toEqual(['cleared', 'whole: large', 'whole: small', '**all**']);
    expect(table).toContain('| whole: large | 1 | 4.0 | 1.0 | 3.0 | 75.0% | pi 3.0 |');
    expect(table).toContain('| whole: small | 1 | 2.0 | 1.0 | 1.0 | 25.0% | pi 1.0 |');
    expect(table).toContain('| **all** | – | 7.0 | 7.0 | 0.0 | – | – |');
  });
});
