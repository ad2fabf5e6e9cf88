/**
 * The references walk kept in a session (stages/references.ts) finds, at every call, exactly what a
 * walk over the whole request finds, whatever the session does between calls: grow by a few steps,
 * send a request again, go back to an earlier one, rewrite an earlier output or call (a compacted
 * history), change which results are scanned and the extra text scanned with them, or switch
 * whether a name refers to the latest result that holds it only (`clear.inUseLatest`).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/engine/config';
import { readRequest } from '../../src/engine/formats';
import { Run, type RunEnv } from '../../src/engine/run';
import { commonPrefixLength, type SessionMemory } from '../../src/engine/session';
import { referencesOf } from '../../src/engine/stages/references';
import { FORMATS } from '../support/arbitraries';
import { perChar } from '../support/run';
import { build, transcript, type ToolStep } from '../support/wire';

const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 100);
const env: RunEnv = { cfg: validateConfig({}), counter: perChar, reducers: {}, known: () => false };

/** A name only output j holds. */
const name = (j: number) => `module_${j}.handler_${j}`;

const stepArb = fc.record({
  // outputs it refers to (as offsets back from itself), and names of its own output
  refs: fc.array(fc.integer({ min: 1, max: 6 }), { maxLength: 3 }),
  names: fc.array(fc.integer({ min: 0, max: 14 }), { minLength: 1, maxLength: 3 }),
});
const callArb = fc.record({
  steps: fc.integer({ min: 1, max: 14 }),
  // an earlier step rewritten in this request: its output names others, or its call refers to others
  rewrite: fc.option(fc.record({ step: fc.nat(), names: fc.array(fc.integer({ min: 0, max: 14 }), { maxLength: 2 }) }), { nil: undefined }),
  skipped: fc.array(fc.nat({ max: 14 }), { maxLength: 3 }),
  extra: fc.array(fc.tuple(fc.nat({ max: 14 }), fc.integer({ min: 0, max: 14 })), { maxLength: 2 }),
});
const sessionArb = fc.record({
  format: fc.constantFrom(...FORMATS),
  steps: fc.array(stepArb, { minLength: 14, maxLength: 14 }),
  calls: fc.array(callArb, { minLength: 1, maxLength: 8 }),
});

function toolStep(i: number, refs: number[], names: number[]): ToolStep {
  return {
    tool: 'bash',
    output: `${names.map(name).join(' and ')} in out_${i}.log\n`,
    args: { cmd: refs.length ? refs.map((j) => `grep ${name(j)}`).join('; ') : `ls dir_${i}` },
  };
}

describe('references walk in a session, as a property', () => {
  it('finds at every call what a walk over the whole request finds', () => {
    fc.assert(
      // with clear.inUseLatest on, off, or switched between calls (the walk then starts over)
      fc.property(sessionArb, fc.boolean(), fc.boolean(), ({ format, steps, calls }, on, switched) => {
        let memory: SessionMemory | undefined;
        for (const [c, call] of calls.entries()) {
          const latest = switched ? (c % 2 === 0) === on : on;
          const all = steps.map((s, i) =>
            toolStep(
              i,
              s.refs.map((back) => i - back).filter((j) => j >= 0),
              s.names,
            ),
          );
          const r = call.rewrite;
          if (r) {
            const k = r.step % call.steps;
            all[k] = toolStep(k, r.names.slice(0, 1), r.names);
          }
          const text = JSON.stringify(build(transcript(...all.slice(0, call.steps)), format));
          const candidate = (i: number) => !call.skipped.includes(i);
          const extra = (i: number) => {
            const e = call.extra.find(([at]) => at === i);
            return e ? `wrote ${name(e[1])}` : undefined;
          };
          const samePrefix = memory ? commonPrefixLength(memory.text, text) : 0;
          const run = new Run(readRequest(text, format), env, memory, samePrefix);
          const session = referencesOf(run.results, candidate, extra, latest).map((x) => [...x]);
          memory = run.remember();
          const whole = referencesOf(new Run(readRequest(text, format), env).results, candidate, extra, latest);
          expect(session).toEqual(whole);
        }
      }),
      { numRuns: RUNS },
    );
  });
});
