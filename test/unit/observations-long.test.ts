/**
 * Observations on the four long real mini-swe-agent text-mode sessions (test/fixtures/sessions/long,
 * 71-129 calls each) and the SWE-agent text-mode session: the readers' marks and the `auto`
 * recognition agree on every call; on every call every reduced observation reads back exact and
 * nothing outside the reduced bodies changes; and `spillway replay` now saves on these sessions.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine, MemorySink, readRequest, resultText, type ParsedRequest } from '../../src/engine';
import { replay } from '../../src/replay/replay';
import { readTranscript, requestForCall, type Transcript } from '../../src/replay/readers';
import { LONG as CORPUS_LONG, SHORT_SESSIONS } from '../support/corpus';

const LONG = join(CORPUS_LONG, 'mini-swe-agent-text');
const SWE = SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!;
if (!existsSync(LONG)) throw new Error(`the long real sessions are missing: expected them in ${LONG} (test/fixtures/sessions/long)`);
const files = readdirSync(LONG)
  .filter((f) => f.endsWith('.traj.json'))
  .sort();
const sessions = [...files.map((f) => join(LONG, f)), SWE];
const transcripts = new Map<string, Transcript>();
beforeAll(async () => {
  for (const f of sessions) transcripts.set(f, await readTranscript(f));
}, 60_000);

/** The request text outside the observations' bodies (and outside tool results, which are none here). */
function outsideBodies(text: string, req: ParsedRequest): string {
  let out = '',
    at = 0;
  for (const r of req.results) {
    const span = r.observation ?? r.content!;
    out += text.slice(at, span.start);
    at = span.end;
  }
  return out + text.slice(at);
}

describe('the four long mini-swe-agent sessions are what the fixtures README says', () => {
  it('four text-mode sessions, every observation marked and under bash', () => {
    expect(files).toHaveLength(4);
    for (const f of files) {
      const t = transcripts.get(join(LONG, f))!;
      expect(t.observations!.length).toBeGreaterThan(60);
      expect(new Set(t.observations!.map((o) => o.tool))).toEqual(new Set(['bash']));
    }
  });
});

describe.each(sessions.map((f) => [f.split('/').pop()!, f]))('%s', (_name, file) => {
  it("the reader's marks and observations: auto find the same observations, tools and bodies on every call", () => {
    const t = transcripts.get(file)!;
    let compared = 0;
    for (let k = 0; k < t.calls.length; k++) {
      const text = JSON.stringify(requestForCall(t, k));
      const marked = readRequest(text, t.wire, undefined, t.observations!);
      const auto = readRequest(text, t.wire, undefined, 'auto');
      const shape = (req: ParsedRequest) =>
        req.results.map((r) => [r.item, r.tool, r.callId, r.observation?.template, r.observation?.start, r.observation?.end]);
      expect(shape(auto), `call ${k}`).toEqual(shape(marked));
      compared += marked.results.length;
    }
    expect(compared).toBeGreaterThan(0);
  });

  it('every call: reduced observations read back exact, nothing else changes, a projection projects to itself', () => {
    const t = transcripts.get(file)!;
    const store = new MemorySink();
    // the SWE-agent session is short (outputs up to 1,368 chars): a small cap gives the engine work
    const config = file === SWE ? { defaultCap: 500 } : {};
    const engine = createEngine(config, { store });
    let reduced = 0;
    for (let k = 0; k < t.calls.length; k++) {
      const text = JSON.stringify(requestForCall(t, k));
      const p = engine.project(text, t.wire, { session: 'long', observations: t.observations! });
      const req = readRequest(text, t.wire, undefined, t.observations!);
      for (const r of p.reductions) {
        const original = req.results[r.result]!;
        expect(original.observation, `call ${k} ${r.callId}`).toBeDefined();
        expect(r.callId).toBe(`obs-${original.item}`);
        expect(store.get(r.handle)).toBe(resultText(req, original));
        expect(r.projectedChars).toBeLessThan(r.originalChars);
      }
      reduced += p.reductions.filter((r) => r.fresh).length;
      const projected = readRequest(p.request, t.wire, undefined, 'auto');
      expect(outsideBodies(p.request, projected)).toBe(outsideBodies(text, req));
      // a marker is recognised when its handle is in the store (anything else is a forged marker, text)
      const again = createEngine(config, { store }).project(p.request, t.wire);
      expect(again.request).toBe(p.request);
      expect(again.reductions).toEqual([]);
    }
    expect(reduced).toBeGreaterThan(0);
  });
});

describe('replay of psf__requests-1142, the session with the 868,167-char output', () => {
  const file = () =>
    join(
      LONG,
      files.find((f) => f.includes('requests-1142'))!,
    );

  it('the 868,167-char output is marked as an observation and is never sent whole', () => {
    const t = transcripts.get(file())!;
    const big = t.items.findIndex(
      (m) => typeof (m as { content?: unknown }).content === 'string' && (m as { content: string }).content.length === 868_167,
    );
    expect(big).toBeGreaterThan(0);
    expect(t.observations!.some((o) => o.item === big)).toBe(true);
    // the whole session as one request (what the agent would send next) gets it as a marker
    const text = JSON.stringify({ ...t.base, messages: t.items });
    const store = new MemorySink();
    const p = createEngine({}, { store }).project(text, 'openai-chat', { observations: t.observations! });
    const r = p.reductions.find((x) => x.callId === `obs-${big}`)!;
    expect(r.originalChars).toBe(868_167);
    expect(store.get(r.handle)).toBe((t.items[big] as { content: string }).content);
    expect(p.request.length).toBeLessThan(text.length - 860_000);
  });

  it('spillway replay with the default saves tokens and cost, recoverably', () => {
    const t = transcripts.get(file())!;
    const result = replay(t, { config: {} });
    const totals = result.totals;
    expect(totals.recoverable).toBe(true);
    // the default keeps reads whole while the agent uses them and clears only what its guarantee pays
    // for (docs/savings.md): it sends 94% of the tokens here (under 90% when it offloaded on arrival)
    expect(totals.projectedTokens / totals.originalTokens).toBeLessThan(0.95);
    expect(totals.cost.anthropic!.relative).toBeLessThan(0.95);
    expect(totals.cost.openai!.relative).toBeLessThan(0.95);
    expect(totals.maxProjectedTokens).toBeLessThan(totals.maxOriginalTokens);
    // observations: off is the old behaviour: nothing reduced at all
    const off = replay(t, { config: { observations: 'off' } }).totals;
    expect(off.projectedTokens).toBe(off.originalTokens);
  });
});
