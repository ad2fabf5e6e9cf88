/**
 * The method of bench/peer.ts (context-guru's, bench/peers/context-guru.md): each body's tokens
 * encoded as the whole body would be, the cached part the longest common token prefix with the
 * same strategy's previous body, and every later mention of a hidden identifier a miss.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  aimLine,
  measureSpillway,
  meterReplay,
  o200k,
  pausedLine,
  PeerMeter,
  peerWithPrelude,
  tokenize,
  tokenPrefix,
  withoutTimes,
  type Encode,
  type Tokenized,
} from '../../bench/peer';
import { readTranscript, requestForCall } from '../../src/replay/readers';

/** One token per character: prefixes and costs can be counted by hand. */
const perChar: Encode = (text) => [...text].map((c) => c.charCodeAt(0));

describe('the cached prefix', () => {
  it('is the longest common token prefix with the previous body, billed at 0.1 read and 1.25 (Anthropic) or 1 (GPT-5) for the rest', () => {
    const m = new PeerMeter(perChar);
    // raw bodies extend each other; the projection's third body changes after "fooBar <h" (9 characters)
    m.add('fooBar src/app.ts', 'fooBar <h1>', '');
    m.add('fooBar src/app.ts cd', 'fooBar <h1> cd', '');
    m.add('fooBar src/app.ts cd ef', 'fooBar <h2> cd ef', '');
    const r = m.result();
    expect(r.calls).toBe(3);
    expect(r.rawTokens).toBe(17 + 20 + 23);
    // raw: 17 new; 17 cached + 3 new; 20 cached + 3 new
    expect(r.raw.a).toBeCloseTo(17 * 1.25 + (1.7 + 3 * 1.25) + (2 + 3 * 1.25), 9); // 32.45
    expect(r.raw.o).toBeCloseTo(17 + (1.7 + 3) + (2 + 3), 9); // 26.7
    // projection: 11 new; 11 cached + 3 new; 9 cached + 8 new
    expect(r.projected.a).toBeCloseTo(11 * 1.25 + (1.1 + 3 * 1.25) + (0.9 + 8 * 1.25), 9); // 29.5
    expect(r.projected.o).toBeCloseTo(11 + (1.1 + 3) + (0.9 + 8), 9); // 24
  });

  it('counts in tokens, not characters', () => {
    expect(tokenPrefix([1, 2, 3, 4], [1, 2, 9, 4])).toBe(2);
    expect(tokenPrefix([1, 2], [1, 2, 3])).toBe(2);
    expect(tokenPrefix([], [1])).toBe(0);
  });
});

describe('misses', () => {
  it('counts an identifier of the reply found in the raw body and not in the projection, at every mention', () => {
    const m = new PeerMeter(perChar);
    const raw = 'fooBar src/app.ts';
    const projected = 'fooBar <h1>';
    // fooBar is shown, src/app.ts hidden: 2 referenced, 1 missed
    m.add(raw, projected, 'fooBar reads src/app.ts');
    // no reply: nothing referenced
    m.add(raw, projected, '');
    // src/app.ts again: missed again (no read-back remembered); src/other.ts is not in the raw body, so not referenced
    m.add(raw, projected, 'edit src/app.ts, then src/other.ts');
    expect(m.result()).toMatchObject({ referenced: 3, missed: 2 });
  });
});

describe('tokens of a body', () => {
  const check = (bodies: string[]) => {
    let prev: Tokenized | undefined;
    let reused = 0;
    for (const b of bodies) {
      const t = tokenize(b, prev);
      expect(t.tokens).toEqual(o200k(b));
      reused += prev && t.cuts.length > 1 && t.cuts[1]!.token > 0 && t.cuts[1] === prev.cuts[1] ? 1 : 0;
      prev = t;
    }
    return reused;
  };

  it('are those of the whole body when only the part after a cut is encoded again', () => {
    // digits, contractions, letters outside ASCII, spaces and an emoji on both sides of every cut
    const piece = (k: number) => `{"k${k}":"it's ${k * 12345} über 😀  x","v${k}":[${k},"a'b"],"s":"<|endoftext|> done"}`;
    const base = Array.from({ length: 3000 }, (_, k) => piece(k)).join(',');
    expect(base.length).toBeGreaterThan(3 * 65_536);
    const reused = check([base, base + ',"tail":"more"', base.slice(0, 150_000) + '"changed":1234567', base]);
    expect(reused).toBe(3);
  });

  it('are those of the whole body on the bodies of a real session', async () => {
    const t = await readTranscript(join(__dirname, '../fixtures/sessions/long/claude-code/session-share__general-tool-calls.jsonl'));
    const bodies = t.calls.slice(0, 24).map((_, k) => JSON.stringify(requestForCall(t, k)));
    expect(bodies.at(-1)!.length).toBeGreaterThan(65_536);
    expect(check(bodies)).toBeGreaterThan(0);
  });
});

describe('the aim line', () => {
  const m = (a: number, o: number, missed: number) => ({
    calls: 1,
    rawTokens: 1,
    raw: { a: 100, o: 100 },
    projected: { a, o },
    rawPaused: { a: 100, o: 100 },
    projectedPaused: { a, o },
    referenced: 100,
    missed,
    readBacks: { a: 0, o: 0 },
    replayReferenced: 100,
    replayMissed: missed,
  });
  const cg = { a: 97.3, o: 97.3, missed: 24, referenced: 4464 };

  it('holds when both costs are below the peer and misses at most the larger of 2% and its rate', () => {
    expect(aimLine('F', m(90, 90, 2), cg)).toMatch(/^\*\*F: the aim holds\.\*\*/);
    expect(aimLine('F', m(90, 98, 2), cg)).toMatch(/does not hold.*not below on GPT-5/);
    expect(aimLine('F', m(90, 90, 3), cg)).toMatch(/does not hold.*misses 3\.0% against at most 2\.0%/);
    expect(aimLine('F', m(90, 90, 3), { ...cg, missed: 150 })).toMatch(/holds/);
  });

  it('says whether Spillway is ahead on cost and misses at once: no more misses than the peer, not the 2% tolerance', () => {
    // 24 of 4,464 is 0.54%: 0.5% of the same number of identifiers is fewer
    expect(aimLine('F', m(90, 90, 0.5), cg)).toMatch(
      /Ahead on cost and misses at once: yes\*\* \(misses 0\.5% against context-guru's 0\.5%\)\.$/,
    );
    const more = aimLine('F', m(90, 90, 1.2), cg);
    expect(more).toMatch(/^\*\*F: the aim holds\.\*\*/);
    expect(more).toMatch(/Ahead on cost and misses at once: no\*\* \(misses 1\.2% against context-guru's 0\.5%: more\)\.$/);
    expect(aimLine('F', m(90, 98, 0), cg)).toMatch(
      /Ahead on cost and misses at once: no\*\* \(misses 0\.0% against context-guru's 0\.5%\)\.$/,
    );
  });
});

describe("context-guru with the agent's prelude", () => {
  const measured = (rawA: number, rawO: number) => ({
    calls: 2,
    rawTokens: 1,
    raw: { a: rawA, o: rawO },
    projected: { a: 0, o: 0 },
    rawPaused: { a: rawA, o: rawO },
    projectedPaused: { a: 0, o: 0 },
    referenced: 0,
    missed: 0,
  });

  it('adds the prelude the raw side pays to its published cost, so the ratio moves toward raw and no further', () => {
    const cg = { a: 90, o: 80, missed: 3, referenced: 100 };
    // without the prelude raw costs 1,000 (A) and 800 (O); the prelude adds 1,000 and 200
    const p = peerWithPrelude(cg, measured(1_000, 800), measured(2_000, 1_000));
    expect(p.a).toBeCloseTo(((0.9 * 1_000 + 1_000) / 2_000) * 100, 10); // 95%
    expect(p.o).toBeCloseTo(((0.8 * 800 + 200) / 1_000) * 100, 10); // 84%
    expect(p.a).toBeGreaterThan(cg.a);
    expect(p.a).toBeLessThan(100);
    expect({ missed: p.missed, referenced: p.referenced }).toEqual({ missed: 3, referenced: 100 });
  });

  it('is the published cost when the logs carry the whole prompt (no prelude added)', () => {
    const cg = { a: 104, o: 102.4, missed: 0, referenced: 1 };
    const p = peerWithPrelude(cg, measured(500, 400), measured(500, 400));
    expect(p.a).toBeCloseTo(104, 10);
    expect(p.o).toBeCloseTo(102.4, 10);
  });
});

describe('pauses billed', () => {
  it('bills a call after a pause longer than the cache lives as a full write on both sides', () => {
    const enc: Encode = (text) => Array.from(text, (ch) => ch.charCodeAt(0));
    const meter = new PeerMeter(enc);
    meter.add('a'.repeat(100), 'a'.repeat(100), '');
    meter.add('a'.repeat(200), 'a'.repeat(150), '', 10 * 60_000); // cold for Anthropic (5 minutes), warm for OpenAI (an hour)
    const m = meter.result();
    // warm: 100 read at 0.1, 100 (raw) or 50 (projection) new; paused: all written again under Anthropic
    expect(m.raw.a).toBeCloseTo(100 * 1.25 + 100 * 0.1 + 100 * 1.25, 6);
    expect(m.rawPaused.a).toBeCloseTo(100 * 1.25 + 200 * 1.25, 6);
    expect(m.projectedPaused.a).toBeCloseTo(100 * 1.25 + 150 * 1.25, 6);
    expect(m.rawPaused.o).toBeCloseTo(m.raw.o, 6);
  });

  it('gives context-guru every pause for free: its published cost over raw billed with the pauses', () => {
    const cg = { a: 90, o: 90, missed: 0, referenced: 1 };
    const base = { calls: 1, rawTokens: 1, referenced: 1, missed: 0 };
    const m = {
      ...base,
      raw: { a: 100, o: 100 },
      projected: { a: 95, o: 95 },
      rawPaused: { a: 200, o: 100 },
      projectedPaused: { a: 150, o: 85 },
    };
    // context-guru: at least 90 / 200 = 45% under Anthropic, 90% under GPT-5; Spillway 75% and 85%
    expect(pausedLine('F', m, cg)).toMatch(
      /^\*\*F, pauses billed\*\*.*costs 75\.0% \/ 85\.0% of raw.*at least 45\.0% \/ 90\.0%: not shown on Anthropic, below on GPT-5 prices/,
    );
    const better = { ...m, projectedPaused: { a: 80, o: 95 } };
    expect(pausedLine('F', better, cg)).toMatch(/: below on Anthropic, not shown on GPT-5 prices/);
    expect(pausedLine('F', { ...m, rawPaused: m.raw }, cg)).toBeUndefined();
  });
});

describe("Spillway's side, each side of the bill under its own route", () => {
  it("takes a Claude Code session's GPT-5 side from a replay routed to OpenAI, the rest from its own route", async () => {
    const t = withoutTimes(
      await readTranscript(join(__dirname, '../fixtures/sessions/dev/claude-code/M-Thisness__gitleaks-redact-72dfed17.jsonl')),
    );
    const own = meterReplay(t, {}, false, 'anthropic');
    const toOpenAI = meterReplay(t, {}, false, 'openai');
    // the engine decides otherwise when it holds the session to OpenAI's prices: the test can tell the two apart
    expect(toOpenAI.projected.o).not.toBe(own.projected.o);
    const m = measureSpillway(t);
    expect(m.projected).toEqual({ a: own.projected.a, o: toOpenAI.projected.o });
    expect(m.readBacks).toEqual({ a: own.readBacks.a, o: toOpenAI.readBacks.o });
    expect(m.raw).toEqual(own.raw);
    // misses are those of the session's own route
    expect([m.missed, m.replayMissed]).toEqual([own.missed, own.replayMissed]);
  }, 240_000);
});
