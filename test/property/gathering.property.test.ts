/**
 * Gather, then report (src/engine/stages/gathering.ts) as a property: a request decides every earlier
 * call of its session as that call decided itself. Each call sees only the replies before it; a later
 * request knows more (a write that ended a gathering, the end of a run of writes), and must not
 * release, at an earlier call, a result that call kept in use: the clear stage walks the session's
 * calls again at every request, and a call decided otherwise there is a clear the session never made
 * (measured on the corpus: two sessions cleared twice in a row, docs/log/2026-11-30-writing-runs.md).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/engine/config';
import { readRequest } from '../../src/engine/formats';
import { Run, type RunEnv } from '../../src/engine/run';
import { callCheckpoints } from '../../src/engine/calls';
import { gatheredUntil } from '../../src/engine/stages/gathering';
import { FORMATS, sessionCalls } from '../support/arbitraries';
import { perChar } from '../support/run';
import { build, transcript, type ToolStep } from '../support/wire';

const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 100);
const env: RunEnv = { cfg: validateConfig({}), counter: perChar, reducers: {}, known: () => false };

/** What one step's call does: gathers, writes, acts, or only plans. */
const STEPS: Record<'gather' | 'write' | 'act' | 'plan', (i: number) => ToolStep> = {
  gather: (i) => ({ tool: 'Grep', args: { pattern: `name_${i}` }, output: `src/a_${i}.ts:${i}: name_${i}` }),
  write: (i) => ({ tool: 'Edit', args: { file_path: `/w/f_${i}.ts`, old_string: 'a', new_string: 'b' }, output: 'ok' }),
  act: (i) => ({ tool: 'Bash', args: { command: `pytest tests/t_${i}.py` }, output: `${i} passed` }),
  plan: (i) => ({ tool: 'TodoWrite', args: { todos: [`step ${i}`] }, output: 'ok' }),
};

/** The request's own call (its last) and, per result (by call id), the last call through which it keeps it as gathered. */
function gatheredView(text: string, format: (typeof FORMATS)[number]): { call: number; until: Map<string, number> } {
  const results = new Run(readRequest(text, format), env).results;
  const checkpoints = callCheckpoints(results.req.kinds);
  const until = gatheredUntil(results, checkpoints, () => true);
  return { call: checkpoints.length - 1, until: new Map(results.list.map((r, i) => [r.callId, until[i]!])) };
}

describe('gather, then report, as a property', () => {
  it('a later request keeps a gathered result in use at every call that kept it', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...FORMATS),
        fc.array(fc.constantFrom('gather' as const, 'write' as const, 'act' as const, 'plan' as const), { minLength: 2, maxLength: 14 }),
        (format, kinds) => {
          const t = transcript(...kinds.map((k, i) => STEPS[k](i)));
          const calls = sessionCalls(t).map((c) => JSON.stringify(build(c, format)));
          const views = calls.map((text) => gatheredView(text, format));
          // each request's own call: what it decided for itself, and every later request must agree
          views.forEach(({ call, until: own }, k) => {
            for (const [id, until] of own) {
              if (until < call) continue; // released before this call: nothing to keep
              for (const later of views.slice(k + 1))
                expect({ id, call, kept: later.until.get(id)! >= call }).toEqual({ id, call, kept: true });
            }
          });
        },
      ),
      { numRuns: RUNS },
    );
  });
});
