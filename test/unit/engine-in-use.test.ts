/**
 * Results in use (stages/in-use.ts, references.ts): the clear stage leaves alone what the agent
 * received or referred to in its last `clear.inUseCalls` calls, and the offload stage leaves a
 * requested read whole (`offload.keepReads`) for the clear stage to reduce once it is out of use.
 * Tokens are counted one per character, so each round is a 10,000-token result.
 */
import { describe, expect, it } from 'vitest';
import { perChar, project, triggerClear } from '../support/run';
import { transcript, type ToolStep } from '../support/wire';
import { distinctive, tokensOf } from '../../src/engine/stages/references';
import { requestedRead } from '../../src/engine/previews';
import { createEngine } from '../../src/engine';
import { referencedCall } from '../../src/engine/markers';

/** A 10,000-char output that holds one name only it has: `module_N.handler_N`. */
const out = (i: number) => `def module_${i}.handler_${i}():\n` + `${i % 10}`.repeat(10_000 - 30) + '\n';
const step = (i: number, args: Record<string, unknown> = { n: i }): ToolStep => ({ tool: 'bash', output: out(i), args });
const clear = (inUseCalls: number) => ({
  offload: { enabled: false },
  clear: triggerClear({ staleFirst: false, inUseCalls }),
});
const cleared = (r: ReturnType<typeof project>) => r.p.reductions.filter((x) => x.stage === 'clear').map((x) => x.result);

describe('references', () => {
  it('counts only tokens an agent could not write from its own knowledge', () => {
    expect(distinctive('module_0.handler_0')).toBe(true);
    expect(distinctive('src/app/main.ts')).toBe(true);
    expect(distinctive('parseConfig')).toBe(true);
    expect(distinctive('E0425x')).toBe(true);
    expect(distinctive('return')).toBe(false);
    expect(distinctive('a.b')).toBe(false);
    expect(distinctive('12345')).toBe(false);
  });

  it('reads a text into its distinctive tokens, trailing punctuation off', () => {
    expect([...tokensOf('see src/app/main.ts. Then call parseConfig, not the function.')].sort()).toEqual([
      'parseConfig',
      'src/app/main.ts',
    ]);
  });
});

describe('clear stage: results in use', () => {
  it('clears the oldest result when nothing refers to it (inUseCalls 0 and 2 agree)', () => {
    const t = transcript('q', step(0), step(1), step(2), step(3), step(4));
    expect(cleared(project(clear(0), t, 'openai-chat', { tokenizer: perChar }))).toEqual([0]);
    expect(cleared(project(clear(2), t, 'openai-chat', { tokenizer: perChar }))).toEqual([0]);
  });

  it('leaves the oldest result alone while the agent refers to it, and clears the next oldest instead', () => {
    const t = transcript('q', step(0), step(1), step(2), step(3), step(4, { path: 'module_0.handler_0' }));
    expect(cleared(project(clear(0), t, 'openai-chat', { tokenizer: perChar }))).toEqual([0]);
    expect(cleared(project(clear(2), t, 'openai-chat', { tokenizer: perChar }))).toEqual([1]);
  });

  it('clears a result again once the agent has not referred to it for inUseCalls calls', () => {
    // referred to in the second round, three calls before the request is over the trigger
    const t = transcript('q', step(0), step(1, { path: 'module_0.handler_0' }), step(2), step(3), step(4));
    expect(cleared(project(clear(2), t, 'openai-chat', { tokenizer: perChar }))).toEqual([0]);
    // with five calls every result was received within them: nothing is out of use, nothing is cleared
    expect(cleared(project(clear(5), t, 'openai-chat', { tokenizer: perChar }))).toEqual([]);
  });

  it('with clear.inUseLatest, a name several outputs show keeps only the latest of them in use', () => {
    // outputs 0 and 1 both print the path the agent then names; 0 alone holds module_0.handler_0
    const shared = (i: number): ToolStep => ({ tool: 'bash', output: 'src/app/common.py\n' + out(i), args: { n: i } });
    const latest = (on: boolean) => ({ ...clear(2), clear: { ...clear(2).clear, inUseLatest: on } });
    const t = transcript('q', shared(0), shared(1), step(2), step(3), step(4, { path: 'src/app/common.py' }));
    // every output that shows the path is in use: the clear takes the oldest other one
    expect(cleared(project(latest(false), t, 'openai-chat', { tokenizer: perChar }))).toEqual([2]);
    // only the latest that shows it is: the older copy is cleared
    expect(cleared(project(latest(true), t, 'openai-chat', { tokenizer: perChar }))).toEqual([0]);
    // a name only the older output holds still keeps it in use
    const own = transcript('q', shared(0), shared(1), step(2), step(3), step(4, { path: 'module_0.handler_0' }));
    expect(cleared(project(latest(true), own, 'openai-chat', { tokenizer: perChar }))).toEqual([1]);
  });

  it('is sticky: the same request projected again in its session decides the same', () => {
    const t = transcript('q', step(0), step(1), step(2), step(3), step(4, { path: 'module_0.handler_0' }));
    const a = project(clear(2), t, 'openai-chat', { tokenizer: perChar });
    const b = project(clear(2), t, 'openai-chat', { tokenizer: perChar });
    expect(b.p.request).toBe(a.p.request);
  });
});

describe('offload stage: requested reads', () => {
  it('knows a read by its tool or its command', () => {
    expect(requestedRead({ tool: 'Read' })).toBe(true);
    expect(requestedRead({ tool: 'Bash', command: 'sed -n 1,200p src/a.py' })).toBe(true);
    expect(requestedRead({ tool: 'Bash', command: 'cat src/a.py' })).toBe(true);
    expect(requestedRead({ tool: 'shell', command: 'git show HEAD~1' })).toBe(true);
    expect(requestedRead({ tool: 'WebFetch' })).toBe(true);
    expect(requestedRead({ tool: 'Bash', command: 'pytest -x' })).toBe(false);
    expect(requestedRead({ tool: 'Grep' })).toBe(false);
    // files read in a loop (Codex, SproutSeeds/coda): the loop's body reads
    expect(requestedRead({ tool: 'shell', command: 'for f in specs/contracts/*.md; do echo "--- $f"; cat "$f"; echo; done' })).toBe(true);
    expect(requestedRead({ tool: 'shell', command: 'for t in tests/*.py; do pytest -x "$t"; done' })).toBe(false);
  });

  it('leaves a read over its cap whole up to keepReads, and offloads it past that', () => {
    const read = (chars: number): ToolStep => ({ tool: 'Read', output: 'x'.repeat(chars), args: { file_path: '/a.py' } });
    const cfg = (keepReads: number, clearOn = true) => ({
      defaultCap: 8_000,
      offload: { keepReads },
      clear: { enabled: clearOn, triggerTokens: 10_000_000 },
      inputs: { enabled: false },
    });
    const offloaded = (r: ReturnType<typeof project>) => r.p.reductions.filter((x) => x.stage === 'offload').length;
    expect(offloaded(project(cfg(0), transcript('q', read(20_000)), 'anthropic-messages', { tokenizer: perChar }))).toBe(1);
    expect(offloaded(project(cfg(40_000), transcript('q', read(20_000)), 'anthropic-messages', { tokenizer: perChar }))).toBe(0);
    expect(offloaded(project(cfg(40_000), transcript('q', read(60_000)), 'anthropic-messages', { tokenizer: perChar }))).toBe(1);
    // without a clear stage nothing would reduce it later (the Responses WebSocket route): offloaded on arrival
    expect(offloaded(project(cfg(40_000, false), transcript('q', read(20_000)), 'anthropic-messages', { tokenizer: perChar }))).toBe(1);
    // a command's output is not a read: offloaded as before
    const run: ToolStep = { tool: 'Bash', output: 'y'.repeat(20_000), args: { command: 'pytest -x' } };
    expect(offloaded(project(cfg(40_000), transcript('q', run), 'anthropic-messages', { tokenizer: perChar }))).toBe(1);
  });

  it('says why a read over its cap went whole: kept while in use, up to keepReads (the inspector shows it instead of "under its cap")', () => {
    const read: ToolStep = { tool: 'Read', output: 'x'.repeat(13_947), args: { file_path: '/style.css' } };
    const small: ToolStep = { tool: 'Read', output: 'y'.repeat(2_000), args: { file_path: '/b.css' } };
    const cfg = {
      defaultCap: 8_000,
      offload: { keepReads: 24_000 },
      clear: { enabled: true, triggerTokens: 10_000_000 },
      inputs: { enabled: false },
    };
    const r = project(cfg, transcript('q', read, small), 'anthropic-messages', { tokenizer: perChar }, { detail: true });
    expect(r.p.reductions).toEqual([]);
    // only the result over its cap is listed; the one under it is whole because it fits
    expect(r.p.detail!.keptWhole).toEqual([
      {
        result: 0,
        callId: 'call_1',
        tool: 'Read',
        reason:
          "13,947 chars, over Read's cap of 8,000; kept whole while in use: a read the agent asked for stays whole up to 24,000 chars (offload.keepReads) and is cleared once no longer used",
        why: 'kept whole while in use: a read the agent asked for stays whole up to 24,000 chars (offload.keepReads) and is cleared once no longer used',
      },
    ]);
  });

  it('lists no result as kept whole once a stage reduced it', () => {
    const read: ToolStep = { tool: 'Read', output: 'x'.repeat(30_000), args: { file_path: '/a.py' } };
    const cfg = {
      defaultCap: 8_000,
      offload: { keepReads: 24_000 },
      clear: { enabled: true, triggerTokens: 10_000_000 },
      inputs: { enabled: false },
    };
    const r = project(cfg, transcript('q', read), 'anthropic-messages', { tokenizer: perChar }, { detail: true });
    expect(r.p.reductions.map((x) => x.stage)).toEqual(['offload']);
    expect(r.p.detail!.keptWhole).toEqual([]);
  });

  it('leaves a larger read whole early in a session: up to keepEarlyReads in the first earlyCalls calls', () => {
    const read = (n: number, chars: number): ToolStep => ({ tool: 'Read', output: `${n}`.repeat(chars), args: { file_path: `/f${n}.py` } });
    const cfg = (keepEarlyReads: number) => ({
      defaultCap: 8_000,
      offload: { keepReads: 24_000, keepEarlyReads, earlyCalls: 2 },
      clear: { enabled: true, triggerTokens: 10_000_000 },
      inputs: { enabled: false },
    });
    // three reads of 40,000 characters, each in its own call: results arrive in calls 1, 2 and 3
    const t = transcript('q', read(1, 40_000), read(2, 40_000), read(3, 40_000));
    const offloaded = (over: number) =>
      project(cfg(over), t, 'anthropic-messages', { tokenizer: perChar })
        .p.reductions.filter((x) => x.stage === 'offload')
        .map((x) => x.callId);
    expect(offloaded(0)).toEqual(['call_1', 'call_2', 'call_3']);
    // the read that arrives in call 1 is early; those of calls 2 and 3 are not
    expect(offloaded(64_000)).toEqual(['call_2', 'call_3']);
    // past keepEarlyReads even an early read is offloaded on arrival
    expect(offloaded(30_000)).toEqual(['call_1', 'call_2', 'call_3']);
  });
});

describe('clear stage: file inputs replaced once the agent is past them (inputs.when: clear)', () => {
  /** a Write of 5,000 chars that defines `writer_mod.make_thing`, then rounds of 10,000-token outputs */
  const body = 'def writer_mod.make_thing():\n' + 'w'.repeat(5_000);
  const write: ToolStep = { tool: 'Write', output: 'File created', args: { file_path: '/src/writer.py', content: body } };
  const cfg = (inUseCalls: number) => ({
    ...clear(inUseCalls),
    inputs: { enabled: true, when: 'clear', minTokens: 0, keepRounds: 0 },
  });

  it("replaces the input with its call's result, keeps the result, and stores the input whole", () => {
    const t = transcript('q', write, step(1), step(2), step(3), step(4));
    const r = project(cfg(2), t, 'anthropic-messages', { tokenizer: perChar });
    const d = r.p.reductions.find((x) => x.callId === 'call_1');
    expect(d?.stage).toBe('clear');
    expect(d?.inputCleared).toBe(true);
    expect(r.p.request).not.toContain('w'.repeat(100));
    expect(r.p.request).toContain('File created');
    expect(r.p.request).toContain('/src/writer.py');
    const stored = r.store.get(d!.inputHandle!);
    expect(JSON.parse(stored!)).toEqual({ file_path: '/src/writer.py', content: body });
  });

  it('leaves the input whole on arrival, and while the agent refers to what it wrote', () => {
    const t = transcript('q', write, step(1), step(2), step(3), step(4, { path: 'writer_mod.make_thing' }));
    const r = project(cfg(2), t, 'anthropic-messages', { tokenizer: perChar });
    expect(r.p.reductions.find((x) => x.callId === 'call_1')).toBeUndefined();
    expect(r.p.request).toContain('w'.repeat(5_000));
    expect(r.p.inputs).toEqual([]);
  });
});

describe('clear stage: results a later output repeats', () => {
  // the fifth output repeats the first with 4,000 characters added: the offload stage sends it as a
  // reference to the first plus those lines (engine-repeats.test.ts), so the model reads the first again
  const added = Array.from({ length: 100 }, (_, k) => `a line the second run added, number ${String(k).padStart(3)}`).join('\n');
  const repeat: ToolStep = { tool: 'bash', output: added + '\n' + out(0), args: { n: 'again' } };
  const withRepeats = (dedupe: boolean) => ({
    defaultCap: 100_000,
    // (a repeat's body is bounded like a preview: room for the 4,000 new characters)
    previewChars: 5_000,
    offload: { enabled: true, dedupe, keepReads: 0 },
    // over the trigger only in the last call (four 10,000-token outputs, then the repeat's 4,000 new characters)
    clear: triggerClear({ staleFirst: false, inUseCalls: 2, triggerTokens: 42_000 }),
  });

  it('leaves alone the output a recent reference stands on, and clears the next oldest instead', () => {
    const t = transcript('q', step(0), step(1), step(2), step(3), repeat);
    const r = project(withRepeats(true), t, 'openai-chat', { tokenizer: perChar });
    expect(r.p.reductions.find((x) => x.stage === 'offload')).toMatchObject({
      result: 4,
      reason: expect.stringMatching(/^repeats the output of call /),
    });
    expect(cleared(r)).toEqual([1]);
    // without the reference the first output is out of use and goes first
    expect(cleared(project(withRepeats(false), t, 'openai-chat', { tokenizer: perChar }))[0]).toBe(0);
  });
});

describe('clear stage: a reference in a projection projected again', () => {
  it('keeps the output it points at in use, as for a reference it made itself (referencedCall)', () => {
    // the fifth output repeats the first with 4,000 characters added: a reference to it carrying
    // those lines (no clear in this projection)
    const added = Array.from({ length: 100 }, (_, k) => `a line the second run added, number ${String(k).padStart(3)}`).join('\n');
    const steps = [step(0), step(1), step(2), step(3), { tool: 'bash', output: added + '\n' + out(0), args: { n: 'again' } }];
    const offloadOnly = {
      defaultCap: 100_000,
      previewChars: 5_000,
      offload: { enabled: true, dedupe: true, keepReads: 0 },
      clear: { enabled: false },
    };
    const first = project(offloadOnly, transcript('q', ...steps), 'openai-chat', { tokenizer: perChar });
    expect(first.p.reductions.map((x) => [x.result, x.reason.replace(/call \S+, /, 'call …, ')])).toEqual([
      [4, 'repeats the output of call …, with changes'],
    ]);
    // that projection projected again with a clear over the trigger in its last call only: the
    // reference is now a marker the engine recognises, and the output it points at is in use through it
    const clearing = { ...offloadOnly, clear: triggerClear({ staleFirst: false, inUseCalls: 2, triggerTokens: 42_000 }) };
    const again = createEngine(clearing, { store: first.store, tokenizer: perChar }).project(first.p.request, 'openai-chat');
    const clearedAgain = again.reductions.filter((x) => x.stage === 'clear').map((x) => x.result);
    expect(clearedAgain).toEqual([1]);
  });

  it('reads the call a reference marker names, in either language, and nothing from other markers', () => {
    const h = 'sw_0123456789abcdef01234567';
    expect(
      referencedCall(
        `[spillway: Read output identical to the Read output of call toolu_01 above · 644 chars · 149 tokens · read it back: spillway read ${h}]`,
      ),
    ).toBe('toolu_01');
    expect(
      referencedCall(
        `[spillway: read output repeats the read output of call c7 above; below, its line ranges and the lines that differ · 9 chars · 3 tokens · read it back: spillway read ${h}]\n[= lines 1–3 of that output]`,
      ),
    ).toBe('c7');
    expect(
      referencedCall(`[spillway: Read 输出与上方调用 toolu_02 的 Read 输出相同 · 644 字符 · 149 tokens · 读取：spillway read ${h}]`),
    ).toBe('toolu_02');
    expect(referencedCall(`[spillway: bash output cleared · 9 chars · 3 tokens · read it back: spillway read ${h}]`)).toBeUndefined();
    expect(referencedCall('the output of call x above, as a tool printed it')).toBeUndefined();
  });
});

describe('clear stage: a reference in a seed marker style', () => {
  it('does not keep the output it repeats in use, so a projection projected again decides the same', () => {
    // fast-check's counterexample (test/property/engine.property.test.ts, idempotence): the second
    // search answers as the first did, so it becomes a reference to it, whose eino-style marker names
    // only a handle; projected again, that marker cannot say what it repeats
    const output = Array.from({ length: 22 }, (_, k) => `${3 * k}: \n${3 * k + 1}: \n${3 * k + 2}: PASS src/app.test.ts (12 tests)`).join(
      '\n',
    );
    const t = transcript(
      '',
      { tool: 'mcp__github__search_issues', output, args: { path: 'src/a.ts', offset: 0 } },
      { tool: 'github.search_issues', output, args: { path: 'src/big.ts', content: '' } },
    );
    // an answer with no call, then the user's next question
    t.items.push({ kind: 'assistant', calls: [] }, { kind: 'user', text: 'and now?' });
    const config = {
      markerStyle: 'eino',
      defaultCap: 50,
      previewChars: 0,
      toolCaps: { 'search*': 1001 },
      offload: { enabled: true, dedupe: true, latestCap: 500, keepReads: 0, keepEarlyReads: 0, earlyCalls: 0 },
      inputs: { enabled: false },
      clear: {
        enabled: true,
        triggerTokens: 100,
        keep: 0,
        keepUnit: 'results',
        clearAtLeastTokens: 'all',
        excludeTools: [],
        staleFirst: false,
        inUseCalls: 2,
      },
    };
    const first = project(config, t, 'openai-chat', { tokenizer: 'approximate' });
    expect(first.p.reductions.find((x) => x.stage === 'offload')).toMatchObject({
      result: 1,
      reason: expect.stringMatching(/^identical to the output of call /),
    });
    const again = createEngine(config, { store: first.store, tokenizer: 'approximate' }).project(first.p.request, 'openai-chat');
    expect(again.reductions.filter((x) => x.fresh)).toEqual([]);
    expect(again.request).toBe(first.p.request);
  });
});
