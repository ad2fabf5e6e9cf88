/**
 * The stages as modules (src/engine/stages/): each is a function of the request's results, the
 * ledger of decisions so far and the configuration, and returns its decisions and the writes they
 * need without changing what it was given; the engine writes the store only after every stage.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/engine/config';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { readRequest } from '../../src/engine/formats';
import { handleFor } from '../../src/engine/handle';
import { budget } from '../../src/engine/stages/budget';
import { clear } from '../../src/engine/stages/clear';
import { offload } from '../../src/engine/stages/offload';
import { recognise } from '../../src/engine/stages/recognise';
import { Draft, Results, type Decision, type Ledger } from '../../src/engine/stages/results';
import { ClearGains } from '../../src/engine/stages/clear-result';
import { window } from '../../src/engine/stages/window';
import type { OutputSink, StoredMeta } from '../../src/engine/types';
import { FileStore } from '../../src/store';
import { perChar } from '../support/run';
import { build, transcript, type ToolStep } from '../support/wire';

const tool = (name: string, output: string): ToolStep => ({ tool: name, output });
const big = (c: string) => c.repeat(2_000);

function resultsOf(config: Record<string, unknown>, ...steps: Parameters<typeof transcript>) {
  // each stage on its own: offload decides on arrival (reduce after use is the clear stage's walk)
  const cfg = validateConfig({ 'offload.afterUseCap': 0, ...config });
  const req = readRequest(JSON.stringify(build(transcript(...steps), 'openai-chat')), 'openai-chat');
  return new Results(
    req,
    cfg,
    perChar,
    recognise(req, cfg, () => false),
  );
}

/** An empty ledger, frozen so a stage that changed it would throw. */
function emptyLedger(n: number, decisions: Array<Decision | undefined> = new Array<Decision | undefined>(n).fill(undefined)): Ledger {
  return { decisions: Object.freeze(decisions), noGain: Object.freeze(new Array<boolean>(n).fill(false)), inputs: new Map() };
}

describe('a stage module', () => {
  it('offload returns a decision and the write that keeps the original, and changes nothing it was given', () => {
    const results = resultsOf({ defaultCap: 1_000, previewChars: 100 }, 'q', tool('bash', big('a')), tool('bash', 'small'));
    const ledger = emptyLedger(results.length);
    const out = offload(results, ledger, {});
    expect(out.decisions.map((d) => [d.result, d.decision.stage])).toEqual([[0, 'offload']]);
    expect(out.writes).toHaveLength(1);
    expect(out.writes[0]!.text).toBe(big('a'));
    expect(out.writes[0]!.handle).toBe(handleFor(big('a')));
    expect(out.decisions[0]!.decision.handle).toBe(out.writes[0]!.handle);
    expect(ledger.decisions).toEqual([undefined, undefined]);
  });

  it('gives the same outcome when called twice on the same input (a pure function)', () => {
    const results = resultsOf({ defaultCap: 1_000, previewChars: 100 }, 'q', tool('bash', big('a')), tool('bash', big('b')));
    const ledger = emptyLedger(results.length);
    expect(offload(results, ledger, {})).toEqual(offload(results, ledger, {}));
  });

  it('budget leaves alone a result an earlier stage decided, and the newest result', () => {
    const results = resultsOf(
      { offload: { enabled: false }, defaultCap: 1_000, previewChars: 100 },
      'q',
      tool('bash', big('a')),
      tool('bash', big('b')),
      tool('bash', big('c')),
    );
    const first = offload(resultsOf({ defaultCap: 1_000, previewChars: 100 }, 'q', tool('bash', big('a'))), emptyLedger(1), {});
    const decided = first.decisions[0]!.decision;
    const out = budget(results, emptyLedger(3, [decided, undefined, undefined]));
    expect(out.decisions.map((d) => [d.result, d.decision.stage])).toEqual([[1, 'budget']]);
  });

  it('window decides only on results older than the last recentTurns user messages', () => {
    const results = resultsOf(
      { offload: { enabled: false }, window: { enabled: true, recentTurns: 1, maxOutputChars: 500 }, previewChars: 100 },
      'q1',
      tool('bash', big('a')),
      'q2',
      tool('bash', big('b')),
    );
    const out = window(results, emptyLedger(2));
    expect(out.decisions.map((d) => [d.result, d.decision.stage])).toEqual([[0, 'window']]);
  });

  it('clear replays the calls, clearing the oldest result outside the last round at each call over the trigger', () => {
    const results = resultsOf(
      {
        offload: { enabled: false },
        // by age alone (in-use protection: engine-in-use.test.ts)
        clear: { enabled: true, triggerTokens: 5_000, keep: 1, clearAtLeastTokens: 1, schedule: 'trigger', inUseCalls: 0 },
      },
      'q',
      tool('bash', big('a')),
      tool('bash', big('b')),
      tool('bash', big('c')),
      tool('bash', big('d')),
    );
    // 6,000 tokens of results at the fourth call clears the first; the fifth (this one) the second
    const out = clear(results, emptyLedger(4));
    expect(out.decisions.map((d) => [d.result, d.decision.stage])).toEqual([
      [0, 'clear'],
      [1, 'clear'],
    ]);
    expect(out.writes.map((w) => w.text)).toEqual([big('a'), big('b')]);
  });

  it('reports a result whose marker would not be shorter as no gain, with no decision', () => {
    const results = resultsOf({ defaultCap: 10, previewChars: 100 }, 'q', tool('bash', 'x'.repeat(50)));
    const out = offload(results, emptyLedger(1), {});
    expect(out.decisions).toEqual([]);
    expect(out.noGain).toEqual([0]);
  });
});

describe('the engine', () => {
  it('writes nothing to the store when a stage fails part way', () => {
    const puts: string[] = [];
    const store: OutputSink = { put: (h) => void puts.push(h), locate: () => undefined };
    const engine = createEngine(
      { defaultCap: 1_000, previewChars: 100 },
      {
        store,
        reducers: {
          grep: () => {
            throw new Error('reducer failed');
          },
        },
      },
    );
    const body = JSON.stringify(build(transcript('q', tool('bash', big('a')), tool('grep', big('b'))), 'openai-chat'));
    expect(() => engine.project(body, 'openai-chat')).toThrow('reducer failed');
    expect(puts).toEqual([]);
  });

  it('writes each output after the decisions, in decision order', () => {
    const written = new Map<string, StoredMeta>();
    const store: OutputSink = {
      put: (h, _t, meta) => void written.set(h, meta),
      // like a file store: only what is already written is located
      locate: (h) => (written.has(h) ? `/store/${h}.txt` : undefined),
    };
    const engine = createEngine({ defaultCap: 1_000, previewChars: 100 }, { store });
    const body = JSON.stringify(build(transcript('q', tool('bash', big('a')), tool('grep', big('b'))), 'openai-chat'));
    const p = engine.project(body, 'openai-chat');
    expect([...written.keys()]).toEqual(p.reductions.map((r) => r.handle));
  });

  it('still projects the same with a memory store', () => {
    const store = new MemorySink();
    const engine = createEngine({ defaultCap: 1_000, previewChars: 100 }, { store });
    const body = JSON.stringify(build(transcript('q', tool('bash', big('a'))), 'openai-chat'));
    const p = engine.project(body, 'openai-chat');
    expect(p.reductions.map((r) => r.stage)).toEqual(['offload']);
    expect(store.get(p.reductions[0]!.handle)).toBe(big('a'));
  });

  it('names no store file in a marker: a projection is the same byte for byte whatever store it writes to, and wherever', () => {
    const dirs = [mkdtempSync(join(tmpdir(), 'spillway-stages-')), mkdtempSync(join(tmpdir(), 'spillway-stages-elsewhere-'))];
    try {
      const body = JSON.stringify(build(transcript('q', tool('bash', big('a')), tool('grep', big('b'))), 'openai-chat'));
      const project = (store: OutputSink) => createEngine({ defaultCap: 1_000, previewChars: 100 }, { store }).project(body, 'openai-chat');
      const [first, second] = dirs.map((d) => project(new FileStore(join(d, 'a/much/longer/path/to/the/store'))));
      const inMemory = project(new MemorySink());
      expect(first!.reductions).toHaveLength(2);
      expect(second!.request).toBe(first!.request);
      expect(inMemory.request).toBe(first!.request);
      for (const d of dirs) expect(first!.request).not.toContain(d);
    } finally {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('what a clear would free (ClearGains)', () => {
  it('counts a file input the clear replaces with its result, and stops counting it once inputs stop', () => {
    const args = { path: 'src/big.ts', content: 'const x = 1;\n'.repeat(200) };
    const results = resultsOf(
      { 'inputs.when': 'clear', 'inputs.minTokens': 0, defaultCap: 1_000, previewChars: 100 },
      'q',
      { tool: 'write_file', output: big('w'), args },
      tool('bash', 'ok'),
    );
    const gains = new ClearGains(new Draft(results, emptyLedger(results.length)));
    const withInput = gains.of(0);
    const input = gains.inputOf(0)!;
    expect(input).toBeDefined();
    const inputSaving = input.decision.originalTokens - input.decision.projectedTokens;
    expect(inputSaving).toBeGreaterThan(1_000);
    expect(gains.stopInputs(true)).toBe(true);
    // the result's own saving only: a plan made after the stop never counts on the input
    expect(gains.of(0)).toBe(withInput - inputSaving);
    expect(gains.stopInputs(true)).toBe(false);
    // once file inputs go on again (the bank covers their read-back again), the estimate counts the input
    expect(gains.stopInputs(false)).toBe(true);
    expect(gains.of(0)).toBe(withInput);
  });
});
