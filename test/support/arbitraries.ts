/**
 * fast-check arbitraries for engine requests: realistic transcripts (user turns, assistant tool
 * calls, tool results of varied size and shape), unknown fields at every level, the four wire
 * formats, serialisation styles, and engine configurations (presets and random valid ones).
 */
import fc from 'fast-check';
import { PRESET_NAMES, MARKER_STYLES, PREVIEW_KINDS, type PresetName } from '../../src/engine/config';
import type { WireFormat } from '../../src/engine/types';
import type { Call, Extras, Item, ResultSpec, Style, Transcript } from './wire';

export const FORMATS: readonly WireFormat[] = ['openai-chat', 'openai-responses', 'anthropic-messages', 'gemini'];

/** Tool names, namespaced ones included (`server.tool`, `mcp__server__tool`). */
const TOOL_NAMES = [
  'bash',
  'read_file',
  'grep',
  'search',
  'execute_code',
  'run_sql',
  'fs.read_file',
  'github.search_issues',
  'mcp__fs__read_file',
  'mcp__github__search_issues',
  'outil_é',
];

/** Characters that stress encoding: quotes, escapes, controls, non-ASCII, astral, line separators. */
const char = fc.oneof(
  { weight: 10, arbitrary: fc.constantFrom('a', 'e', 'r', 's', 't', 'o', ' ', ' ', '0', '7', '/', '.', ':', '_', '-') },
  { weight: 2, arbitrary: fc.constantFrom('\n', '\n', '\t', '\r\n') },
  { weight: 2, arbitrary: fc.constantFrom('"', '\\', '\u0000', '\u001f', '\u007f', '\u2028', '\u2029', '<', '>', '&', "'") },
  { weight: 3, arbitrary: fc.constantFrom('é', 'ü', 'ß', 'ñ', '中', '文', '字', 'я', 'λ', '→', '—', '😀', '🚀', '𝔘', 'e\u0301') },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 2 }) },
);

export const smallText = fc.string({ unit: char, maxLength: 120 });

const logLine = fc.oneof(
  fc.constantFrom(
    'PASS src/app.test.ts (12 tests)',
    'FAIL src/engine/engine.test.ts',
    'Error: expected 3 to equal 4',
    '    at Object.<anonymous> (src/engine/engine.ts:211:17)',
    'warning: unused variable `x` at lib.rs:42:9',
    'Traceback (most recent call last):',
    '  File "main.py", line 12, in <module>',
    'drwxr-xr-x  5 user staff  160 Nov 21 09:12 src',
    '',
    '✓ 42 passed, ✗ 1 failed',
    'npm ERR! code ELIFECYCLE',
    '中文日志：构建完成 😀',
    'SELECT * FROM cargo_items WHERE id = 7;',
  ),
  fc.string({ unit: char, maxLength: 80 }),
);

const linesText = fc.array(logLine, { maxLength: 40 }).map((ls) => ls.join('\n'));

const row = fc.record({
  id: fc.nat(100_000),
  name: fc.string({ unit: char, maxLength: 16 }),
  path: fc.constantFrom('src/a.ts', 'lib/b.rs', 'docs/ü.md'),
  ok: fc.boolean(),
});
const jsonText = fc
  .tuple(fc.array(row, { maxLength: 30 }), fc.constantFrom(0, 2))
  .map(([rows, indent]) => JSON.stringify({ rows, count: rows.length }, null, indent));

/** 1 to 60 KB: a few seed lines (or JSON rows) repeated to the size. */
const bigText = fc
  .tuple(fc.integer({ min: 1_000, max: 60_000 }), fc.array(logLine, { minLength: 1, maxLength: 6 }), fc.boolean())
  .map(([size, seed, json]) => {
    if (json) {
      const rows: unknown[] = [];
      let n = 2;
      for (let i = 0; n < size; i++) {
        const r = { i, line: seed[i % seed.length] };
        rows.push(r);
        n += JSON.stringify(r).length + 1;
      }
      return JSON.stringify(rows);
    }
    const out: string[] = [];
    let n = 0;
    for (let i = 0; n < size; i++) {
      const l = `${i}: ${seed[i % seed.length]}`;
      out.push(l);
      n += l.length + 1;
    }
    return out.join('\n');
  });

const outputText = fc.oneof(
  { weight: 8, arbitrary: smallText },
  { weight: 3, arbitrary: linesText },
  { weight: 1, arbitrary: jsonText },
  { weight: 3, arbitrary: bigText },
);

/** Unknown-field values; objects with fixed safe keys (no `__proto__`). */
const extraValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.string({ unit: char, maxLength: 12 }),
  fc.array(fc.oneof(fc.integer(), fc.string({ maxLength: 4 })), { maxLength: 3 }),
  fc.record({ nested: fc.string({ maxLength: 6 }), n: fc.integer() }, { requiredKeys: [] }),
);
const extraKeys = ['x_meta', 'x_trace_id', 'zz_vendor', 'aa_first', 'x_ünï'];
const extraRecord = fc.dictionary(fc.constantFrom(...extraKeys), extraValue, { maxKeys: 2 });
const extrasArb: fc.Arbitrary<Extras | undefined> = fc.option(
  fc.record({ before: extraRecord, after: extraRecord }, { requiredKeys: [] }),
  { freq: 3 },
);

const argsArb = fc.oneof(
  fc.record({ cmd: smallText }),
  fc.record({ path: fc.constantFrom('src/a.ts', 'ü/中.md', 'C:\\tmp\\x'), offset: fc.nat(1000) }),
  fc.record({ input: smallText }),
  fc.record({ query: smallText, limit: fc.nat(50), flags: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }) }),
  // a write: the kind of input clear.clearToolInputs exists for
  fc.record({
    path: fc.constantFrom('src/big.ts', 'notes/ü.md'),
    content: fc.oneof(
      linesText,
      bigText.map((s) => s.slice(0, 4_000)),
    ),
  }),
);

const resultShape = fc.record({
  text: outputText,
  split: fc.nat(3),
  blocks: fc.boolean(),
  image: fc.boolean(),
  isError: fc.boolean(),
  cacheControl: fc.boolean(),
  extras: extrasArb,
  partExtras: extrasArb,
});

const callShape = fc.record({
  name: fc.constantFrom(...TOOL_NAMES),
  args: argsArb,
  custom: fc.boolean(),
  extras: extrasArb,
  result: resultShape,
  /** sometimes the same output as an earlier result (the agent read the same file again) */
  repeat: fc.option(fc.nat(20), { freq: 4 }),
});

const roundShape = fc.record({
  user: fc.option(smallText, { freq: 4 }),
  userExtras: extrasArb,
  assistantText: fc.option(smallText, { freq: 2 }),
  assistantExtras: extrasArb,
  calls: fc.array(callShape, { maxLength: 3 }),
  resultsExtras: extrasArb,
});

/** Splits a text into up to `n + 1` parts at line breaks (so joining with "\n" restores it). */
function splitParts(text: string, n: number): string[] {
  if (n === 0) return [text];
  const lines = text.split('\n');
  if (lines.length < 2) return [text];
  const k = Math.min(n + 1, lines.length);
  const per = Math.ceil(lines.length / k);
  const parts: string[] = [];
  for (let i = 0; i < lines.length; i += per) parts.push(lines.slice(i, i + per).join('\n'));
  return parts;
}

export interface TranscriptOptions {
  maxRounds?: number;
  minRounds?: number;
}

/**
 * A transcript that ends where a model call would be made: after tool results or a user message.
 * Call ids are unique; results answer the calls of their round, in order.
 */
export function transcriptArb(opts: TranscriptOptions = {}): fc.Arbitrary<Transcript> {
  return fc
    .record({
      system: fc.option(smallText, { freq: 3, nil: undefined }),
      first: smallText,
      rounds: fc.array(roundShape, { minLength: opts.minRounds ?? 1, maxLength: opts.maxRounds ?? 6 }),
      extras: extrasArb,
      // 'per-turn' numbers calls within each turn (call_0, call_1, … again every turn), as some agents do
      idStyle: fc.constantFrom('call_', 'toolu_01', 'fc-', 'per-turn'),
    })
    .map(({ system, first, rounds, extras, idStyle }) => {
      const items: Item[] = [{ kind: 'user', text: first }];
      const earlier: string[] = [];
      let prevHadCalls = true;
      rounds.forEach((rd, ri) => {
        if (rd.user !== null || !prevHadCalls) items.push({ kind: 'user', text: rd.user ?? 'go on', extras: rd.userExtras });
        const calls: Call[] = rd.calls.map((c, j) => ({
          id: idStyle === 'per-turn' ? `call_${j}` : `${idStyle}${ri}_${j}`,
          name: c.name,
          args: c.args,
          custom: c.custom,
          extras: c.extras,
        }));
        items.push({
          kind: 'assistant',
          ...(rd.assistantText !== null ? { text: rd.assistantText } : {}),
          calls,
          extras: rd.assistantExtras,
        });
        if (calls.length) {
          const results: ResultSpec[] = rd.calls.map((c, j) => {
            const text = c.repeat !== null && earlier.length ? earlier[c.repeat % earlier.length]! : c.result.text;
            earlier.push(text);
            return {
              callId: calls[j]!.id,
              parts: c.result.blocks || c.result.image ? splitParts(text, c.result.split) : [text],
              blocks: c.result.blocks,
              image: c.result.image,
              isError: c.result.isError,
              cacheControl: c.result.cacheControl,
              extras: c.result.extras,
              partExtras: c.result.partExtras,
            };
          });
          items.push({ kind: 'results', results, extras: rd.resultsExtras });
        }
        prevHadCalls = calls.length > 0;
      });
      if (!prevHadCalls) items.push({ kind: 'user', text: 'and now?' });
      return { ...(system !== undefined ? { system } : {}), items, extras };
    });
}

/** A transcript whose outputs are all small (at most 120 UTF-16 units: under every preset's limits). */
export function smallTranscriptArb(): fc.Arbitrary<Transcript> {
  return transcriptArb().map((t) => ({
    ...t,
    items: t.items.map((it) =>
      it.kind !== 'results'
        ? it
        : {
            ...it,
            results: it.results.map((r) => {
              const text = r.parts.join('\n');
              return text.length <= 120 ? r : { ...r, parts: [text.slice(0, 100).replace(/[\ud800-\udbff]$/, '')] };
            }),
          },
    ),
  }));
}

export const styleArb: fc.Arbitrary<Style> = fc.record({
  indent: fc.constantFrom(0 as const, 1 as const, 2 as const),
  python: fc.boolean(),
});

/** The calls of a session: call k holds the transcript's items up to (not including) the k-th assistant item. */
export function sessionCalls(t: Transcript): Transcript[] {
  const calls: Transcript[] = [];
  t.items.forEach((it, i) => {
    if (it.kind === 'assistant' && i > 0) calls.push({ ...t, items: t.items.slice(0, i) });
  });
  calls.push(t);
  return calls;
}

export function allResults(t: Transcript): ResultSpec[] {
  return t.items.flatMap((it) => (it.kind === 'results' ? it.results : []));
}

// ---- configurations -----------------------------------------------------------------------------

const capArb = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 50, max: 20_000 }) },
  { weight: 1, arbitrary: fc.constant('unlimited' as const) },
);
const capKeys = ['bash', 'read_file', 'tool', 'fs.read_file', 'mcp__*', '*_file', 'github.*', 'search*', 'grep'];
const toolSubset = fc.subarray(['bash', 'read_file', 'search', 'mcp__*', 'github.*', 'search_issues'], { maxLength: 3 });

/** Any valid configuration, as the nested object a `--config` file would hold. */
const randomConfigArb = fc.record({
  preset: fc.constantFrom(...PRESET_NAMES),
  defaultCap: capArb,
  capUnit: fc.constantFrom('chars' as const, 'bytes' as const),
  toolCaps: fc.dictionary(fc.constantFrom(...capKeys), capArb, { maxKeys: 3 }),
  previewChars: fc.integer({ min: 0, max: 2_000 }),
  preview: fc.constantFrom(...PREVIEW_KINDS),
  markerStyle: fc.constantFrom(...MARKER_STYLES),
  language: fc.constantFrom('en' as const, 'zh' as const),
  tokenizer: fc.constantFrom('approximate' as const, 'approximate' as const, 'approximate' as const, 'o200k_base' as const),
  offload: fc.record({
    enabled: fc.boolean(),
    dedupe: fc.boolean(),
    latestCap: fc.oneof(fc.constant(0), fc.integer({ min: 500, max: 20_000 })),
    keepReads: fc.oneof(fc.constant(0), fc.integer({ min: 500, max: 60_000 })),
    keepEarlyReads: fc.oneof(fc.constant(0), fc.integer({ min: 500, max: 100_000 })),
    earlyCalls: fc.integer({ min: 0, max: 20 }),
  }),
  inputs: fc.record({
    enabled: fc.boolean(),
    when: fc.constantFrom('arrival' as const, 'clear' as const),
    minTokens: fc.constantFrom(0, 2_000),
  }),
  window: fc.record({
    enabled: fc.boolean(),
    recentTurns: fc.integer({ min: 1, max: 4 }),
    maxOutputChars: fc.integer({ min: 20, max: 5_000 }),
    tools: toolSubset,
  }),
  budget: fc.record({ enabled: fc.boolean() }),
  clear: fc.record({
    enabled: fc.boolean(),
    triggerTokens: fc.integer({ min: 100, max: 20_000 }),
    keep: fc.integer({ min: 0, max: 4 }),
    keepUnit: fc.constantFrom('results' as const, 'rounds' as const),
    clearAtLeastTokens: fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.constant('all' as const)),
    excludeTools: toolSubset,
    clearToolInputs: fc.boolean(),
    staleFirst: fc.boolean(),
    inUseCalls: fc.integer({ min: 0, max: 6 }),
    inUseLatest: fc.boolean(),
    keepGathered: fc.boolean(),
  }),
});

export type ConfigInput = Record<string, unknown>;

/** Random configurations that make one later stage (window, budget, clear) likely to fire. */
const stageFocusedConfigArb: fc.Arbitrary<ConfigInput> = fc.oneof(
  fc.tuple(randomConfigArb, fc.integer({ min: 20, max: 400 })).map(([c, max]) => ({
    ...c,
    offload: { enabled: false },
    window: { ...c.window, enabled: true, recentTurns: 1, maxOutputChars: max },
  })),
  fc.tuple(randomConfigArb, fc.integer({ min: 50, max: 2_000 })).map(([c, cap]) => ({ ...c, budget: { enabled: true }, defaultCap: cap })),
  fc
    .tuple(randomConfigArb, fc.integer({ min: 100, max: 3_000 }))
    .map(([c, trigger]) => ({ ...c, tokenizer: 'approximate', clear: { ...c.clear, enabled: true, triggerTokens: trigger } })),
) as fc.Arbitrary<ConfigInput>;

/** The six presets as they ship, random valid configurations, and stage-focused ones. */
export const configArb: fc.Arbitrary<ConfigInput> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom<PresetName>(...PRESET_NAMES).map((preset) => ({ preset }) as ConfigInput) },
  { weight: 2, arbitrary: randomConfigArb as fc.Arbitrary<ConfigInput> },
  { weight: 2, arbitrary: stageFocusedConfigArb },
);

/** A configuration whose limits nothing reaches: huge caps, window and clear off. Styles stay random. */
export const neutralConfigArb: fc.Arbitrary<ConfigInput> = randomConfigArb.map((c) => ({
  ...c,
  defaultCap: 'unlimited',
  toolCaps: Object.fromEntries(Object.keys(c.toolCaps).map((k) => [k, 1_000_000_000])),
  offload: { ...c.offload, dedupe: false },
  window: { ...c.window, enabled: false },
  clear: { ...c.clear, enabled: false },
}));
