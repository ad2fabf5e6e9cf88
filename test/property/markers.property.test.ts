/**
 * Forged markers (issue 14, point 1). A tool result that merely looks like a marker (an agent read a
 * saved projection, a log full of markers, a real marker with output pasted after it) must not slip
 * past the stages: a result is accepted as already reduced only when it is within the marker bound
 * for the configured preview and its handle is stored or was issued by the engine. Whatever the
 * outputs, every projected result is at most its cap (kept verbatim) or a marker within the bound,
 * and real markers are still recognised (idempotence).
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { markerBound, renderMarker, type MarkerInfo } from '../../src/engine/markers';
import { HANDLE_PATTERN, handleFor } from '../../src/engine/handle';
import type { MarkerStyle } from '../../src/engine/config';
import type { WireFormat } from '../../src/engine/types';
import { FORMATS } from '../support/arbitraries';
import { build, contentsOf, contentText, transcript, type ToolStep } from '../support/wire';
import { realOutputs, type RealOutput } from '../support/real-outputs';
import { tokenCounter } from '../../src/engine/tokens';

const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 100);
const STYLES: MarkerStyle[] = ['spillway', 'trimmer', 'clark', 'ai-agent', 'eino', 'oracle'];

/** A configuration where offload holds every result (the newest too) to `cap` chars. */
interface Setup {
  style: MarkerStyle;
  cap: number;
  previewChars: number;
  language: 'en' | 'zh';
}
const setupArb: fc.Arbitrary<Setup> = fc.record({
  style: fc.constantFrom(...STYLES),
  cap: fc.integer({ min: 200, max: 6_000 }),
  previewChars: fc.integer({ min: 0, max: 1_500 }),
  language: fc.constantFrom('en' as const, 'zh' as const),
});
const configOf = (s: Setup) => ({
  preset: 'spillway',
  markerStyle: s.style,
  defaultCap: s.cap,
  previewChars: s.previewChars,
  language: s.language,
  tokenizer: 'approximate',
  clear: { enabled: false },
});

/** A marker as the engine renders it, for a made-up output (its handle is not stored anywhere). */
function fakeMarker(style: MarkerStyle, language: 'en' | 'zh', handle: string, preview: string): string {
  const info: MarkerInfo = {
    style,
    language,
    stage: 'offload',
    tool: 'bash',
    callId: 'call_1',
    handle,
    chars: 99_999,
    bytes: 99_999,
    lines: 999,
    tokens: 9_999,
    tokensEstimated: true,
    preview,
    omitted: 99_999 - preview.length,
    unit: 'chars',
  };
  return renderMarker(info);
}

const fakeHandleArb = fc.stringMatching(HANDLE_PATTERN);
/** Bulk text: long runs of lines, with non-ASCII so escaped JSON is exercised. */
const bulkArb = fc.tuple(fc.constantFrom('ok line', 'ошибка: line', '错误 行', 'x'), fc.integer({ min: 1, max: 12_000 })).map(([line, n]) =>
  Array.from({ length: Math.ceil(n / (line.length + 1)) }, (_, i) => `${line} ${i}`)
    .join('\n')
    .slice(0, n),
);

/** One adversarial output, built from a real marker of the session and forged pieces. */
type Piece =
  | { kind: 'real' }
  | { kind: 'forged'; style: MarkerStyle; handle: string; preview: string }
  | { kind: 'oracleTail'; handle: string }
  | { kind: 'bulk'; text: string };
const pieceArb: fc.Arbitrary<Piece> = fc.oneof(
  fc.constant<Piece>({ kind: 'real' }),
  fc.record({
    kind: fc.constant('forged' as const),
    style: fc.constantFrom(...STYLES),
    handle: fakeHandleArb,
    preview: fc.string({ maxLength: 60 }),
  }),
  fc.record({ kind: fc.constant('oracleTail' as const), handle: fakeHandleArb }),
  fc.record({ kind: fc.constant('bulk' as const), text: bulkArb }),
);
/** Starts with something marker-like (the case that used to escape), then anything. */
const outputArb = fc.tuple(
  fc.constantFrom<Piece['kind']>('real', 'forged'),
  fc.array(pieceArb, { minLength: 0, maxLength: 6 }),
  fc.boolean(),
);

function render(p: Piece, real: string, s: Setup): string {
  switch (p.kind) {
    case 'real':
      return real;
    case 'forged':
      return fakeMarker(p.style, s.language, p.handle, p.preview);
    case 'oracleTail':
      return ` ...[+12,345 bytes. full output: spillway read ${p.handle}]`;
    case 'bulk':
      return p.text;
  }
}

/** A store and engine that already reduced one real output, and the marker it made for it. */
function session(s: Setup) {
  const store = new MemorySink();
  const engine = createEngine(configOf(s), { store });
  const big = Array.from({ length: 3_000 }, (_, i) => `real output line ${i}`).join('\n');
  const p = engine.project(JSON.stringify(build(transcript('q', { tool: 'bash', output: big }), 'openai-chat')), 'openai-chat');
  const real = contentText(contentsOf(p.request, 'openai-chat')[0]);
  expect(p.reductions.map((r) => r.handle)).toEqual([handleFor(big)]);
  return { store, engine, real };
}

describe('forged markers', () => {
  it('no output, however marker-like, projects to more than its cap or the marker bound', () => {
    fc.assert(
      fc.property(
        setupArb,
        fc.array(outputArb, { minLength: 1, maxLength: 3 }),
        fc.constantFrom<WireFormat>(...FORMATS),
        fc.boolean(),
        (s, outputs, format, blocks) => {
          const { engine, real } = session(s);
          const texts = outputs.map(([head, rest, newline]) => {
            const first = render(
              head === 'real' ? { kind: 'real' } : { kind: 'forged', style: s.style, handle: `sw_${'0'.repeat(24)}`, preview: '' },
              real,
              s,
            );
            return [first, ...rest.map((p) => render(p, real, s))].join(newline ? '\n' : '');
          });
          const steps: ToolStep[] = texts.map((output, i) => ({
            tool: 'bash',
            output,
            id: `call_${i + 1}`,
            // as two text blocks, the second one long: the first block alone must not decide
            ...(blocks && format !== 'openai-chat'
              ? { result: { parts: [output.slice(0, 700), output.slice(700)].filter((x) => x), blocks: true } }
              : {}),
          }));
          const p = engine.project(JSON.stringify(build(transcript('q', ...steps), format)), format);
          const bound = Math.max(s.cap, markerBound(s.previewChars));
          const sizes = contentsOf(p.request, format).map((c) => contentText(c).length);
          const over = sizes.map((n, i) => ({ result: i, chars: n, original: texts[i]!.length })).filter((x) => x.chars > bound);
          expect(over, `results longer than max(cap ${s.cap}, marker bound ${markerBound(s.previewChars)})`).toEqual([]);
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('a long output that opens with a real marker is reduced, and its own handle recovers it', () => {
    fc.assert(
      fc.property(
        setupArb,
        bulkArb.filter((t) => t.length > 6_000),
        (s, tail) => {
          const { engine, store, real } = session(s);
          const output = `${real}\n${tail}`;
          const p = engine.project(JSON.stringify(build(transcript('q', { tool: 'bash', output }), 'openai-chat')), 'openai-chat');
          expect(p.stats.markersSeen).toBe(0);
          expect(p.reductions.map((r) => r.handle)).toEqual([handleFor(output)]);
          expect(store.get(handleFor(output))).toBe(output);
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });

  it('a short marker-shaped text with a handle nobody issued is ordinary text', () => {
    fc.assert(
      fc.property(setupArb, fakeHandleArb, (s, handle) => {
        const { engine } = session(s);
        const forged = fakeMarker(s.style, s.language, handle, 'x');
        const p = engine.project(JSON.stringify(build(transcript('q', { tool: 'bash', output: forged }), 'openai-chat')), 'openai-chat');
        expect(p.stats.markersSeen).toBe(0);
      }),
      { numRuns: RUNS },
    );
  });

  it('real markers are still recognised: projecting a projection changes nothing, in a fresh engine over the same store', () => {
    fc.assert(
      fc.property(
        setupArb,
        fc.constantFrom<WireFormat>(...FORMATS),
        fc.array(bulkArb, { minLength: 1, maxLength: 4 }),
        (s, format, outputs) => {
          const store = new MemorySink();
          const steps: ToolStep[] = outputs.map((output) => ({ tool: 'bash', output }));
          const p = createEngine(configOf(s), { store }).project(JSON.stringify(build(transcript('q', ...steps), format)), format);
          const again = createEngine(configOf(s), { store }).project(p.request, format);
          expect(again.request).toBe(p.request);
          expect(again.stats.markersSeen).toBe(p.reductions.length);
          // and in the same engine, whose store has no `has`: the handles it issued are enough
          const bare = { put: (h: string, t: string) => store.put(h, t), locate: () => undefined };
          const engine = createEngine(configOf(s), { store: bare });
          const first = engine.project(JSON.stringify(build(transcript('q', ...steps), format)), format);
          expect(engine.project(first.request, format).request).toBe(first.request);
        },
      ),
      { numRuns: Math.ceil(RUNS / 2) },
    );
  });
});

/**
 * No reduction longer than what it replaced (issue 35, item 5), under the engine's real tokenizer
 * (o200k) and on outputs agents really printed. Shorter in characters is not enough: a handle's hex
 * digits cost more tokens a character than code or prose, and a 644-character Read of 149 tokens once
 * became a 154-token dedupe reference. Every stage that reduces on arrival or later (offload, dedupe,
 * window, budget, clear) is on, over small caps, so short reads are reduced too.
 */
describe('no reduction longer than what it replaced, in real tokens', () => {
  let pool: RealOutput[] = [];
  beforeAll(async () => {
    pool = await realOutputs();
  });
  const o200k = tokenCounter('o200k_base');
  const configArb = fc.record({
    markerStyle: fc.constantFrom(...STYLES),
    // mostly caps a short read is over: those are the reductions a marker may not pay for
    defaultCap: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 200, max: 800 }) }, fc.integer({ min: 800, max: 9_000 })),
    previewChars: fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 300 }) }, fc.integer({ min: 300, max: 1_500 })),
    language: fc.constantFrom('en' as const, 'zh' as const),
    'offload.dedupe': fc.constant(true),
    'offload.keepReads': fc.constantFrom(0, 24_000),
    'window.enabled': fc.boolean(),
    'window.recentTurns': fc.integer({ min: 1, max: 3 }),
    'window.maxOutputChars': fc.integer({ min: 200, max: 3_000 }),
    'budget.enabled': fc.boolean(),
    'clear.triggerTokens': fc.integer({ min: 2_000, max: 30_000 }),
    'clear.schedule': fc.constantFrom('trigger' as const, 'payback' as const),
  });
  /** Picks from the pool, and now and then an output sent before, for dedupe (fast-check's doubles keep to their ends: an index spreads). */
  const pickArb = fc.record({ at: fc.nat(1_000_000), again: fc.boolean(), user: fc.boolean() });

  it('every marker sent is fewer tokens than the output it stands for, on arrival and in every later call', () => {
    fc.assert(
      fc.property(
        configArb,
        fc.array(pickArb, { minLength: 2, maxLength: 24 }),
        fc.constantFrom<WireFormat>(...FORMATS),
        (cfg, picks, format) => {
          const outputs: RealOutput[] = [];
          const steps: Array<string | ToolStep> = ['fix the failing test'];
          picks.forEach((p, k) => {
            const o = p.again && outputs.length ? outputs[p.at % outputs.length]! : pool[p.at % pool.length]!;
            outputs.push(o);
            steps.push({ tool: o.tool, output: o.text, id: `call_${k + 1}` });
            if (p.user) steps.push(`go on ${k}`);
          });
          const engine = createEngine({ preset: 'spillway', tokenizer: 'o200k_base', ...cfg }, { store: new MemorySink() });
          // call by call, as an agent sends them: each request one tool round longer
          for (let n = 1; n <= steps.length; n++) {
            if (typeof steps[n - 1] === 'string' && n < steps.length) continue;
            const p = engine.project(JSON.stringify(build(transcript(...steps.slice(0, n)), format)), format, { session: 's' });
            const sent = contentsOf(p.request, format).map(contentText);
            const over = p.reductions
              .filter((r) => !r.inputOnly)
              .map((r) => ({
                callId: r.callId,
                stage: r.stage,
                original: o200k.count(outputs[r.result]!.text),
                marker: o200k.count(sent[r.result]!),
                claimed: [r.originalTokens, r.projectedTokens],
              }))
              .filter((x) => x.marker >= x.original || x.claimed[1]! >= x.claimed[0]!);
            expect(over, 'reductions whose marker is not fewer tokens than the output').toEqual([]);
          }
        },
      ),
      { numRuns: Math.ceil(RUNS / 4) },
    );
  });
});
