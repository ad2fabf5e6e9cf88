/**
 * The engine's properties (DESIGN.md, "The pipeline"), checked with fast-check over generated
 * requests in all four wire formats, serialised with varied whitespace and escaping, under the
 * shipped presets and random valid configurations.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink, type Projection } from '../../src/engine/engine';
import { HEADER_BUDGET } from '../../src/engine/markers';
import { readRequest } from '../../src/engine/formats';
import { get, parseLazy } from '../../src/engine/json';
import type { WireFormat } from '../../src/engine/types';
import {
  allResults,
  configArb,
  FORMATS,
  neutralConfigArb,
  sessionCalls,
  smallTranscriptArb,
  styleArb,
  transcriptArb,
  type ConfigInput,
} from '../support/arbitraries';
import {
  build,
  callsByResult,
  collapsed,
  inputsByResult,
  itemsOf,
  locateResults,
  originalText,
  projectedMarker,
  serialize,
  type Extra,
  type Style,
  type Transcript,
} from '../support/wire';
import { PRESET_NAMES } from '../../src/engine/config';

/** Runs per property; raise with SPILLWAY_PROP_RUNS for a longer hunt. */
const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 150);
const SESSION_RUNS = Math.ceil((RUNS * 2) / 3);
const formatArb = fc.constantFrom(...FORMATS);
/** auto-detection and an explicit format both read the same request */
const formatOptionArb = fc.boolean();

/**
 * What a marker may add beyond the preview and HEADER_BUDGET: the trimmer style appends "\n" and
 * "..." around its preview (as the OpenAI trimmer does), every other style at most a "\n" between
 * header and preview, and the oracle style's tail (` ...[+N bytes. full output: spillway read
 * sw_…]`, under 80 chars) is far inside the header budget it does not use.
 */
const MARKER_SLACK = 4;

function requestText(t: Transcript, format: WireFormat, style: Style): string {
  return serialize(build(t, format), style);
}

function engineFor(config: ConfigInput, store = new MemorySink()) {
  return { engine: createEngine(config, { store }), store };
}

function projectText(config: ConfigInput, text: string, format: WireFormat, explicit: boolean) {
  const { engine, store } = engineFor(config);
  const p = engine.project(text, explicit ? format : 'auto');
  return { p, store, engine };
}

const params = { numRuns: RUNS };

describe('identity', () => {
  it('a configuration no result reaches projects every request to itself, byte for byte', () => {
    fc.assert(
      fc.property(neutralConfigArb, transcriptArb(), formatArb, styleArb, formatOptionArb, (config, t, format, style, explicit) => {
        const text = requestText(t, format, style);
        const { p } = projectText(config, text, format, explicit);
        expect(p.request).toBe(text);
        expect(p.reductions).toEqual([]);
        expect(p.stats.unchanged).toBe(true);
      }),
      params,
    );
  });

  it('every preset leaves a request whose outputs are all small byte for byte', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...PRESET_NAMES),
        smallTranscriptArb(),
        formatArb,
        styleArb,
        formatOptionArb,
        (preset, t, format, style, explicit) => {
          const text = requestText(t, format, style);
          const { p } = projectText({ preset }, text, format, explicit);
          expect(p.request).toBe(text);
          expect(p.stats.unchanged).toBe(true);
        },
      ),
      params,
    );
  });

  it('a request passed as an object comes back as the same object when nothing is reduced', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PRESET_NAMES), smallTranscriptArb(), formatArb, (preset, t, format) => {
        const request = build(t, format);
        const { engine } = engineFor({ preset });
        expect(engine.project(request, format).request).toBe(request);
      }),
      { numRuns: 60 },
    );
  });
});

describe('idempotence', () => {
  it('projecting a projection changes nothing and recognises every marker', () => {
    fc.assert(
      fc.property(configArb, transcriptArb(), formatArb, styleArb, formatOptionArb, (config, t, format, style, explicit) => {
        const text = requestText(t, format, style);
        const { p, store } = projectText(config, text, format, explicit);
        // a fresh engine over the same store: markers are recognised by their stored handles
        const again = engineFor(config, store).engine.project(p.request, explicit ? format : 'auto');
        expect(again.request).toBe(p.request);
        expect(again.reductions.filter((r) => r.fresh)).toEqual([]);
        expect(again.stats.markersSeen).toBe(p.reductions.length);
      }),
      params,
    );
  });

  it('a projection re-serialised in another style projects to the same value with no fresh reductions', () => {
    fc.assert(
      fc.property(configArb, transcriptArb(), formatArb, styleArb, styleArb, (config, t, format, style1, style2) => {
        const { p, store } = projectText(config, requestText(t, format, style1), format, true);
        const reserialised = serialize(JSON.parse(p.request), style2);
        const again = engineFor(config, store).engine.project(reserialised, format);
        expect(again.reductions.filter((r) => r.fresh)).toEqual([]);
        expect(again.stats.markersSeen).toBe(p.reductions.length);
        expect(JSON.parse(again.request)).toEqual(JSON.parse(p.request));
      }),
      params,
    );
  });
});

describe('recoverability', () => {
  it('the store holds the original text of every reduced result under its handle', () => {
    fc.assert(
      fc.property(configArb, transcriptArb(), formatArb, styleArb, (config, t, format, style) => {
        const { p, store } = projectText(config, requestText(t, format, style), format, true);
        const results = allResults(t);
        for (const r of p.reductions) {
          const original = originalText(results[r.result]!);
          expect(store.get(r.handle)).toBe(original);
          expect(r.originalChars).toBe(original.length);
        }
      }),
      params,
    );
  });

  it('a cleared tool input is stored and its replacement names the handle that reads it back', () => {
    const clearing = configArb.map((c) => ({
      ...c,
      clear: {
        enabled: true,
        triggerTokens: 300,
        keep: 1,
        keepUnit: 'results',
        clearAtLeastTokens: 'all',
        excludeTools: [],
        clearToolInputs: true,
      },
      tokenizer: 'approximate',
    }));
    fc.assert(
      fc.property(clearing, transcriptArb({ minRounds: 2 }), formatArb, styleArb, (config, t, format, style) => {
        const { p, store } = projectText(config, requestText(t, format, style), format, true);
        const calls = callsByResult(t);
        const inputs = inputsByResult(JSON.parse(p.request) as Extra, format);
        for (const r of p.reductions.filter((x) => x.inputCleared)) {
          const loc = inputs[r.result]!;
          const replaced = JSON.stringify(loc.holder[loc.key]);
          const handle = /spillway read (sw_[0-9a-f]{24})/.exec(replaced)?.[1];
          expect(handle).toBeDefined();
          const stored = store.get(handle!)!;
          const call = calls[r.result]!;
          if (format === 'anthropic-messages' || format === 'gemini') expect(JSON.parse(stored)).toEqual(call.args);
          else if (call.custom && format === 'openai-responses') expect(stored).toBe(String(call.args.input ?? JSON.stringify(call.args)));
          else expect(stored).toBe(JSON.stringify(call.args));
        }
      }),
      { numRuns: 100 },
    );
  });
});

/** The projected content of each result, as JSON text, by ordinal. */
function projectedContents(request: string, format: WireFormat): string[] {
  return locateResults(JSON.parse(request) as Extra, format).map((l) => JSON.stringify(l.holder[l.key]));
}

/** End offset of the last message-level item in a request text. */
function endOfItems(text: string, format: WireFormat): number {
  const root = parseLazy(text);
  const list = get(root, format === 'openai-responses' ? 'input' : format === 'gemini' ? 'contents' : 'messages');
  if (!list || list.kind !== 'array' || list.items.length === 0) return 0;
  return list.items[list.items.length - 1]!.end;
}

describe('stickiness', () => {
  const check = (config: ConfigInput, t: Transcript, format: WireFormat, style: Style, session: boolean) => {
    const calls = sessionCalls(t);
    const shared = engineFor(config).engine;
    let prev: { text: string; p: Projection<string> } | undefined;
    for (const call of calls) {
      const text = requestText(call, format, style);
      const p = session ? shared.project(text, format, { session: 'S' }) : engineFor(config).engine.project(text, format);
      if (prev) {
        const before = projectedContents(prev.p.request, format);
        const now = projectedContents(p.request, format);
        for (const r of prev.p.reductions) {
          if (now[r.result] === before[r.result]) continue;
          // the only allowed change: the clear stage clearing it in this call
          const here = p.reductions.find((x) => x.result === r.result);
          expect({ result: r.result, was: r.stage, now: here && { stage: here.stage, fresh: here.fresh } }).toEqual({
            result: r.result,
            was: r.stage,
            now: { stage: 'clear', fresh: true },
          });
        }
        const cfg = shared.config;
        const cleared = [...prev.p.reductions, ...p.reductions].some((r) => r.stage === 'clear');
        // window, budget and offload.latestCap (latest round verbatim, offloaded one call later)
        // rewrite earlier items by design; without them and without a clear, the prefix holds
        if (!cfg.window.enabled && !cfg.budget.enabled && cfg.offload.latestCap === 0 && !cleared) {
          const end = endOfItems(prev.p.request, format);
          expect(p.request.slice(0, end)).toBe(prev.p.request.slice(0, end));
          const a = itemsOf(JSON.parse(prev.p.request) as Extra, format);
          const b = itemsOf(JSON.parse(p.request) as Extra, format).slice(0, a.length);
          expect(b).toEqual(a);
        }
      }
      prev = { text, p };
    }
  };

  it('within a session, a result reduced in one call is projected the same way in the next unless clear fires', () => {
    fc.assert(
      fc.property(configArb, transcriptArb({ minRounds: 2 }), formatArb, styleArb, (config, t, format, style) => {
        check(config, t, format, style, true);
      }),
      { numRuns: SESSION_RUNS },
    );
  });

  /**
   * KNOWN BUG (reported, not fixed here): without a session every call decides from scratch, and
   * window, budget and clear decisions depend on where the newest result and the last user
   * messages are, which moves from call to call. With two of those stages on, a result reduced in
   * call k can come back differently in call k+1:
   * - budget + clear: in call k the newest result is exempt from budget and gets cleared; in call
   *   k+1 budget clips it first, the context no longer crosses the trigger, it stays clipped;
   * - window + budget: budget clips a result in call k; in call k+1 the window has moved past it
   *   and, running first, trims it instead (a "trimmed" marker replaces the "clipped" one);
   * - window + clear: the same, with clear's replay not replaying the window.
   * - offload.latestCap + dedupe: in call k a latest-round copy of an earlier output stays under
   *   latestCap and becomes a dedupe reference; in call k+1 both copies are over the normal cap and
   *   the reference turns into an offload marker.
   * Configurations with at most one of window, budget and clear, and latestCap 0, are checked here;
   * the session property above covers every combination.
   */
  const replayableConfigArb = configArb.filter((c) => {
    const cfg = createEngine(c).config;
    return [cfg.window.enabled, cfg.budget.enabled, cfg.clear.enabled].filter(Boolean).length <= 1 && cfg.offload.latestCap === 0;
  });

  it('without a session, a fresh engine per call projects earlier reductions the same way unless clear fires', () => {
    fc.assert(
      fc.property(replayableConfigArb, transcriptArb({ minRounds: 2 }), formatArb, styleArb, (config, t, format, style) => {
        check(config, t, format, style, false);
      }),
      { numRuns: SESSION_RUNS },
    );
  });
});

describe('bounded markers', () => {
  it('every marker is at most the preview plus HEADER_BUDGET, and every reduction shortens its result', () => {
    fc.assert(
      fc.property(configArb, transcriptArb(), formatArb, styleArb, (config, t, format, style) => {
        const { p, engine } = projectText(config, requestText(t, format, style), format, true);
        const contents = locateResults(JSON.parse(p.request) as Extra, format);
        for (const r of p.reductions) {
          const marker = projectedMarker(contents[r.result]!.holder[contents[r.result]!.key])!;
          expect(marker).toBeDefined();
          expect(marker.length).toBe(r.projectedChars);
          expect(marker.length).toBeLessThanOrEqual(engine.config.previewChars + HEADER_BUDGET + MARKER_SLACK);
          expect(r.projectedChars).toBeLessThan(r.originalChars);
          expect(marker).toContain(r.handle);
        }
      }),
      params,
    );
  });
});

/** Replaces reduced results' content and cleared inputs by placeholders, the same way on both sides. */
function masked(request: Extra, format: WireFormat, p: Projection<string>): Extra {
  const copy = JSON.parse(JSON.stringify(request)) as Extra;
  const results = locateResults(copy, format);
  const inputs = inputsByResult(copy, format);
  for (const r of p.reductions) {
    const loc = results[r.result]!;
    loc.holder[loc.key] = collapsed(loc.holder[loc.key], '<reduced>');
    if (r.inputCleared) {
      const i = inputs[r.result]!;
      i.holder[i.key] = '<cleared input>';
    }
  }
  return copy;
}

describe('format fidelity', () => {
  it('everything but reduced contents and cleared inputs is deep-equal, key order included', () => {
    fc.assert(
      fc.property(configArb, transcriptArb(), formatArb, styleArb, (config, t, format, style) => {
        const text = requestText(t, format, style);
        const { p } = projectText(config, text, format, true);
        const original = JSON.parse(text) as Extra;
        const projected = JSON.parse(p.request) as Extra;
        // JSON.stringify keeps key order, so equal strings mean equal values and equal key order
        expect(JSON.stringify(masked(projected, format, p))).toBe(JSON.stringify(masked(original, format, p)));
        // a reduced result keeps its non-text parts (images) and its first text part's other fields
        const before = locateResults(original, format);
        const after = locateResults(projected, format);
        for (const r of p.reductions) {
          const marker = projectedMarker(after[r.result]!.holder[after[r.result]!.key])!;
          expect(after[r.result]!.holder[after[r.result]!.key]).toEqual(collapsed(before[r.result]!.holder[before[r.result]!.key], marker));
        }
      }),
      params,
    );
  });

  it('the projection differs from the request only inside the spans of reduced contents and cleared inputs', () => {
    fc.assert(
      fc.property(configArb, transcriptArb(), formatArb, styleArb, (config, t, format, style) => {
        const text = requestText(t, format, style);
        const { p } = projectText(config, text, format, true);
        const segments = (s: string) => {
          const req = readRequest(s, format);
          const spans: Array<[number, number]> = [];
          for (const r of p.reductions) {
            const c = req.results[r.result]!.content!;
            spans.push([c.start, c.end]);
            const input = r.inputCleared ? req.results[r.result]!.call?.input : undefined;
            if (input) spans.push([input.start, input.end]);
          }
          spans.sort((a, b) => a[0] - b[0]);
          const out: string[] = [];
          let at = 0;
          for (const [a, b] of spans) {
            out.push(s.slice(at, a));
            at = b;
          }
          out.push(s.slice(at));
          return out;
        };
        expect(segments(p.request)).toEqual(segments(text));
      }),
      params,
    );
  });
});
