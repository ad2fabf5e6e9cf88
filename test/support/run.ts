/** Runs the engine on a compact transcript and returns what example-based tests look at. */
import { createEngine, MemorySink, type EngineOptions, type ProjectOptions } from '../../src/engine/engine';
import type { TokenCounter } from '../../src/engine/tokens';
import type { WireFormat } from '../../src/engine/types';
import { build, contentsOf, contentText, type Transcript } from './wire';

/** Counts one token per character, so sizes in tests read directly as tokens. */
export const perChar: TokenCounter = { name: 'per-char', count: (s: string) => s.length };

/**
 * The clear stage by its trigger alone, as the clear tests take it: over 45,000 tokens the oldest
 * results go, none kept and no minimum freed, no payback schedule (engine-clear-schedule.test.ts)
 * and no in-use protection (engine-in-use.test.ts, engine-gathering.test.ts) unless `over` sets them.
 */
export function triggerClear(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    enabled: true,
    triggerTokens: 45_000,
    keep: 0,
    keepUnit: 'results',
    clearAtLeastTokens: 0,
    excludeTools: [],
    clearToolInputs: false,
    schedule: 'trigger',
    inUseCalls: 0,
    keepGathered: false,
    ...over,
  };
}

export function project(
  config: Record<string, unknown>,
  t: Transcript,
  format: WireFormat = 'openai-chat',
  options: EngineOptions = {},
  opts: ProjectOptions = {},
) {
  const store = new MemorySink();
  const engine = createEngine(config, { store, ...options });
  const text = JSON.stringify(build(t, format));
  const p = engine.project(text, format, opts);
  const contents = contentsOf(p.request, format);
  return { p, store, engine, text, contents, texts: contents.map(contentText), parsed: JSON.parse(p.request) as Record<string, unknown> };
}
