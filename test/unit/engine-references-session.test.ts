/**
 * The references walk in a session (stages/references.ts): each call extends the walk the previous
 * call left rather than redoing it, and must find exactly what a walk over the whole request finds:
 * when the request grows, is sent again, goes back to an earlier one, has an earlier item rewritten,
 * or a result's eligibility or extra text changes.
 */
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/engine/config';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { readRequest } from '../../src/engine/formats';
import { Run, type RunEnv } from '../../src/engine/run';
import { commonPrefixLength, createSessionStore, type SessionMemory } from '../../src/engine/session';
import { referencesOf } from '../../src/engine/stages/references';
import { perChar } from '../support/run';
import { build, transcript, type Item, type ToolStep } from '../support/wire';

const env: RunEnv = {
  cfg: validateConfig({}),
  counter: perChar,
  reducers: {},
  known: () => false,
};

/** Step i: its output names `module_i.handler_i`; its call refers to the outputs of `refs`. */
const step = (i: number, refs: number[]): ToolStep => ({
  tool: 'bash',
  output: `def module_${i}.handler_${i}():\n  return config_${i}.value\n`,
  args: { cmd: refs.map((j) => `grep module_${j}.handler_${j}`).join('; ') || `ls dir_${i}` },
});

/** The steps of a session whose calls refer back to earlier outputs, some often, some never. */
function steps(n: number): ToolStep[] {
  return Array.from({ length: n }, (_, i) => step(i, i === 0 ? [] : [(i * 7) % i, i % 3 === 0 ? 0 : i - 1]));
}

const text = (items: Item[]) => JSON.stringify(build({ items }, 'openai-chat'));
const itemsOf = (s: ToolStep[]) => transcript(...s).items;

type Candidate = (i: number) => boolean;
type Extra = (i: number) => string | undefined;
const every: Candidate = () => true;

/** Projects `texts` in order as one session's calls; for each, the walk in session and the walk over the whole request. */
function walks(calls: Array<{ text: string; candidate?: Candidate; extra?: Extra }>): Array<{ session: number[][]; whole: number[][] }> {
  let memory: SessionMemory | undefined;
  return calls.map(({ text: t, candidate = every, extra }) => {
    const samePrefix = memory ? commonPrefixLength(memory.text, t) : 0;
    const run = new Run(readRequest(t, 'openai-chat'), env, memory, samePrefix);
    const session = referencesOf(run.results, candidate, extra).map((r) => [...r]);
    memory = run.remember();
    const whole = referencesOf(new Run(readRequest(t, 'openai-chat'), env).results, candidate, extra);
    return { session, whole };
  });
}

describe('references walk in a session', () => {
  it('finds, call by call of a growing session, what a walk over each whole request finds', () => {
    const s = steps(30);
    const out = walks(Array.from({ length: 30 }, (_, k) => ({ text: text(itemsOf(s.slice(0, k + 1))) })));
    for (const { session, whole } of out) expect(session).toEqual(whole);
    // the walk finds references at all (the check above is not between two empty walks)
    expect(out[29]!.whole.filter((r) => r.length > 0).length).toBeGreaterThan(10);
  });

  it('agrees when a request is sent again, or an earlier one is sent after a later one', () => {
    const s = steps(12);
    const at = (k: number) => ({ text: text(itemsOf(s.slice(0, k))) });
    for (const { session, whole } of walks([at(6), at(12), at(12), at(8), at(12), at(3)])) expect(session).toEqual(whole);
  });

  it('agrees when an earlier item is rewritten (a compacted history)', () => {
    const s = steps(14);
    const rewritten = itemsOf(s.slice(0, 14));
    // the 4th call now refers to other outputs, and the 3rd output says something else
    rewritten[6] = itemsOf([step(3, [0, 1, 2])])[0]!;
    rewritten[5] = itemsOf([{ ...s[2]!, output: 'def module_9.handler_9(): pass\n' }])[1]!;
    const calls = [{ text: text(itemsOf(s.slice(0, 12))) }, { text: text(rewritten) }, { text: text(itemsOf(s.slice(0, 14))) }];
    for (const { session, whole } of walks(calls)) expect(session).toEqual(whole);
  });

  it("agrees when a result's eligibility or its extra text changes between calls", () => {
    const s = steps(10);
    const t = (k: number) => text(itemsOf(s.slice(0, k)));
    const calls = [
      { text: t(6) },
      { text: t(8), candidate: (i: number) => i !== 1 },
      { text: t(9), candidate: (i: number) => i !== 1, extra: (i: number) => (i === 2 ? 'wrote module_7.handler_7' : undefined) },
      { text: t(10) },
    ];
    for (const { session, whole } of walks(calls)) expect(session).toEqual(whole);
  });
});

describe('result counts in a session', () => {
  it('counts a result sent again unchanged once, in the call it arrived in', () => {
    const counted: string[] = [];
    const counter = { name: 'per-char', count: (s: string) => (counted.push(s), s.length) };
    const engine = createEngine({}, { store: new MemorySink(), tokenizer: counter });
    const s = steps(8);
    const outputs = s.map((x) => x.output);
    engine.project(text(itemsOf(s.slice(0, 7))), 'openai-chat', { session: 's' });
    // the first call counts the outputs (the check below is not on a count never made)
    expect(outputs.slice(0, 7).filter((o) => counted.includes(o)).length).toBe(7);
    counted.length = 0;
    engine.project(text(itemsOf(s)), 'openai-chat', { session: 's' });
    expect(counted).toContain(outputs[7]);
    expect(outputs.slice(0, 7).filter((o) => counted.includes(o))).toEqual([]);
  });

  it('counts them again when a settings change brings another counter into the session', () => {
    const sessions = createSessionStore();
    const s = steps(8);
    const outputs = s.map((x) => x.output);
    createEngine({}, { store: new MemorySink(), tokenizer: perChar, sessions }).project(text(itemsOf(s.slice(0, 7))), 'openai-chat', {
      session: 's',
    });
    const counted: string[] = [];
    const other = { name: 'per-char-2', count: (x: string) => (counted.push(x), x.length) };
    createEngine({}, { store: new MemorySink(), tokenizer: other, sessions }).project(text(itemsOf(s)), 'openai-chat', { session: 's' });
    expect(outputs.filter((o) => counted.includes(o)).length).toBe(8);
  });
});
