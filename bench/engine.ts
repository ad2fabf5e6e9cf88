/**
 * Engine speed against the floor: projection time over `JSON.parse` time of the same body, taken
 * side by side in one run (the machine is noisy; only ratios are claims), and the time to project
 * call k+1 of a long session when call k was already projected.
 */
import { performance } from 'node:perf_hooks';
import { createEngine, MemorySink, newTokenCounter, type TokenizerName } from '../src/engine';
import { chatRequest, generateSession, requestOfSize } from './generate';
import { median } from './stats';

function time(fn: () => void, runs: number): number {
  const xs: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    xs.push(performance.now() - t);
  }
  return median(xs);
}

export interface SizeRow {
  body: string;
  bytes: number;
  tokenizer: TokenizerName;
  parseMs: number;
  coldMs: number;
  warmMs: number;
  coldRatio: number;
  warmRatio: number;
  reductions: number;
}

/** Cold: a fresh engine and token cache; warm: the same engine projecting the same body again in its session. */
export function sizeBench(bytes: number, label: string, tokenizer: TokenizerName, runs: number): SizeRow {
  const body = requestOfSize(bytes);
  const parseMs = time(() => JSON.parse(body), runs);
  let reductions = 0;
  const coldMs = time(
    () => {
      const e = createEngine({}, { store: new MemorySink(), tokenizer: newTokenCounter(tokenizer) });
      reductions = e.project(body, 'openai-chat').reductions.length;
    },
    Math.max(1, Math.floor(runs / 2)),
  );
  const warm = createEngine({}, { store: new MemorySink(), tokenizer: newTokenCounter(tokenizer) });
  warm.project(body, 'openai-chat', { session: 's' });
  const warmMs = time(() => warm.project(body, 'openai-chat', { session: 's' }), runs);
  return {
    body: label,
    bytes: body.length,
    tokenizer,
    parseMs,
    coldMs,
    warmMs,
    coldRatio: coldMs / parseMs,
    warmRatio: warmMs / parseMs,
    reductions,
  };
}

export interface IncrementalRow {
  calls: number;
  lastBodyBytes: number;
  tokenizer: TokenizerName;
  medianCallMs: number;
  p90CallMs: number;
  medianParseMs: number;
  ratio: number;
}

/** Projects every call of an n-call session in order; reports the last tenth of the calls. */
export function incrementalBench(calls: number, tokenizer: TokenizerName): IncrementalRow {
  const s = generateSession(calls, 30_000_000, 3, 60_000);
  const e = createEngine({}, { store: new MemorySink(), tokenizer: newTokenCounter(tokenizer) });
  const callMs: number[] = [],
    parseMs: number[] = [];
  let last = '';
  for (let k = 0; k < s.ends.length; k++) {
    const body = chatRequest(s.messages.slice(0, s.ends[k]));
    const t0 = performance.now();
    e.project(body, 'openai-chat', { session: 'bench' });
    const t1 = performance.now();
    if (k >= s.ends.length - Math.ceil(calls / 10)) {
      callMs.push(t1 - t0);
      const t2 = performance.now();
      JSON.parse(body);
      parseMs.push(performance.now() - t2);
    }
    last = body;
  }
  const sorted = [...callMs].sort((a, b) => a - b);
  return {
    calls,
    lastBodyBytes: last.length,
    tokenizer,
    medianCallMs: median(callMs),
    p90CallMs: sorted[Math.floor(sorted.length * 0.9)]!,
    medianParseMs: median(parseMs),
    ratio: median(callMs) / median(parseMs),
  };
}
