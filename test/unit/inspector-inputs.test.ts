/**
 * File inputs in the inspector: a Write's content or a heredoc's body replaced by a marker is counted
 * in the turn that replaced it (`inputs`, and its tokens in `freshSaved`) and listed in the turn's
 * details, whichever source the turn came from: the host's projections, a replay, a proxy recording.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createEngine, type InputReduction, type Reduction } from '../../src/engine';
import { readSession } from '../../src/proxy/recording';
import { newSessionContext, projectCreate } from '../../src/proxy/websocket';
import { recordedTurn } from '../support/turns';
import { replay } from '../../src/replay/replay';
import { readTranscript } from '../../src/replay/readers';
import { parseConfig } from '../../src/engine';
import { projectedRecords, withInputStage } from '../../src/extension/pure/records';
import { apiTranscript } from '../../src/replay/readers/api';
import { freshFigures } from '../../src/extension/inspector/session';
import { ApiSession } from '../../src/extension/inspector/apiSource';
import { proxyRecord } from '../../src/extension/inspector/proxySource';
import { replayRecords } from '../../src/extension/inspector/replaySource';
import { SessionArchive } from '../../src/extension/inspector/archive';
import { TurnDetail, TurnSummary } from '../../src/protocol';
import { MemoryStore } from '../../src/store';
import { perChar } from '../support/run';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-inspector-inputs-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const HANDLE = 'sw_0123456789abcdef01234567';
const input = (over: Partial<InputReduction> = {}): InputReduction => ({
  callId: 'toolu_w',
  tool: 'Write',
  item: 1,
  by: 'arrival',
  reason: 'file input of 2,400 chars; the file holds it',
  originalChars: 2_400,
  projectedChars: 160,
  originalTokens: 600,
  projectedTokens: 40,
  handle: HANDLE,
  fresh: true,
  ...over,
});
const reduction = (over: Partial<Reduction> = {}): Reduction => ({
  result: 0,
  callId: 'toolu_b',
  tool: 'Bash',
  stage: 'offload',
  reason: 'over the cap',
  originalChars: 40_000,
  projectedChars: 2_000,
  originalTokens: 10_000,
  projectedTokens: 500,
  handle: 'sw_fedcba9876543210fedcba98',
  fresh: true,
  ...over,
});

const content = Array.from({ length: 80 }, (_, i) => `export const value_${i} = compute(${i});`).join('\n');
/** An Anthropic conversation with a long first message, then one Write call and its result. */
const conversation = {
  model: 'claude-opus-4-5',
  max_tokens: 100,
  messages: [
    { role: 'user', content: `Write the module.\n${'x'.repeat(3_000)}` },
    { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: '/repo/v.ts', content } }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_w', content: 'File created' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    { role: 'user', content: 'Now run it.' },
  ],
};
const config = { inputs: { when: 'arrival', minTokens: 1_000 } };

describe("a turn's figures count the file inputs it replaced", () => {
  it('counts fresh inputs apart from previews and clears, and adds their saved tokens to freshSaved', () => {
    const f = freshFigures([reduction(), reduction({ stage: 'clear', fresh: false })], [input(), input({ fresh: false, callId: 'old' })]);
    expect(f).toEqual({ previews: 1, clears: 0, inputs: 1, freshSaved: 9_500 + 560 });
  });

  it('counts no inputs when a turn only carries replacements decided earlier', () => {
    expect(freshFigures([], [input({ fresh: false })])).toEqual({ previews: 0, clears: 0, inputs: 0, freshSaved: 0 });
  });

  it('validates a summary with an inputs count and refuses a fractional one', () => {
    const s = { index: 0, originalTokens: 1, projectedTokens: 1, cacheStable: false, reductions: 0, tools: [], missed: 0 };
    expect(TurnSummary.parse({ ...s, inputs: 2 }).inputs).toBe(2);
    expect(TurnSummary.safeParse({ ...s, inputs: 1.5 }).success).toBe(false);
  });
});

describe('a proxied turn with file inputs', () => {
  const turn = recordedTurn;

  it('shows the inputs in its summary and its details', () => {
    const rec = proxyRecord(turn({ inputs: [input()] }), 0);
    expect(rec.summary.inputs).toBe(1);
    expect(rec.summary.freshSaved).toBe(560);
    expect(rec.inputs).toEqual([input()]);
  });

  it('reads back a recording made before inputs were recorded, and drops a damaged inputs list but not its turn', () => {
    const file = join(root, 'old.jsonl');
    const { inputs: _none, ...old } = turn();
    fs.writeFileSync(
      file,
      [old, turn({ turn: 2, inputs: [input()] }), { ...turn({ turn: 3 }), inputs: [{ handle: 'not a handle' }] }]
        .map((t) => JSON.stringify(t))
        .join('\n') + '\n',
    );
    const read = readSession(file);
    expect(read.map((t) => t.turn)).toEqual([1, 2, 3]);
    expect(read[0]!.inputs).toBeUndefined();
    expect(read[1]!.inputs).toEqual([input()]);
    expect(read[2]!.inputs).toBeUndefined();
    expect(proxyRecord(read[0]!, 0).summary.inputs).toBe(0);
  });
});

describe('a proxied turn with a file input a clear replaced', () => {
  it('keeps what replaced each input, reads one recorded before inputs said so as replaced on arrival, and counts a clear that replaced only an input as that input', () => {
    const file = join(root, 'by.jsonl');
    const { by: _by, ...unsaid } = input({ handle: 'sw_00000000000000000000beef' });
    const cleared = input({ by: 'clear', callId: 'toolu_c' });
    const inputOnly = reduction({
      callId: 'toolu_c',
      stage: 'clear',
      originalTokens: 3,
      projectedTokens: 3,
      inputOnly: true,
      inputCleared: true,
    });
    fs.writeFileSync(
      file,
      [
        recordedTurn({ inputs: [unsaid] as never }),
        recordedTurn({ turn: 2, inputs: [cleared], reductions: [inputOnly] }),
        { ...recordedTurn({ turn: 3 }), inputs: [{ ...cleared, by: 'later' }] },
      ]
        .map((t) => JSON.stringify(t))
        .join('\n') + '\n',
    );
    const read = readSession(file);
    expect(read[0]!.inputs).toEqual([{ ...unsaid, by: 'arrival' }]);
    expect(read[1]!.inputs).toEqual([cleared]);
    expect(read[2]!.inputs).toBeUndefined();
    const rec = proxyRecord(read[1]!, 1);
    expect(rec.summary).toMatchObject({ inputs: 1, clears: 0, freshSaved: 560 });
  });
});

describe('a session made through the API', () => {
  it('lists the Write input replaced in its turn, with tool, call id, reason and handle, finds it, and keeps it in the archive', () => {
    const store = new MemoryStore();
    const engine = createEngine(config, { store, tokenizer: perChar });
    const ctx = { store: () => store, config: () => engine.config };
    const session = new ApiSession(ctx as never, 'demo');
    const text = JSON.stringify(conversation);
    const rec = session.add(text, engine.project(text, 'anthropic-messages'));
    expect(rec.summary.inputs).toBe(1);
    const detail = TurnDetail.parse(session.detail(0));
    expect(detail.inputs).toHaveLength(1);
    const [i] = detail.inputs!;
    expect(i).toMatchObject({ tool: 'Write', callId: 'toolu_w', fresh: true });
    expect(i!.reason).not.toBe('');
    expect(JSON.parse(store.get(i!.handle))).toEqual({ file_path: '/repo/v.ts', content });
    // shown as the file's text, named by the file (the store keeps the input as it was sent)
    expect(session.text(i!.handle, 'original', 0, 100_000).text).toBe(content);
    expect(i!.source).toBe('/repo/v.ts');
    // what the model was sent in that turn: the marker, kept with the turn
    expect(session.text(i!.handle, 'projected', 0, 100_000, { turn: 0, callId: 'toolu_w' }).text).toContain(i!.handle);
    // what the agent wrote is searchable in the turn that replaced it
    const found = session.search('value_17 = compute', 10);
    expect(found).toMatchObject({ turns: [0], truncated: false });
    // and the search says where: the input's original, the match at its place in the snippet
    expect(found.matches).toEqual([
      expect.objectContaining({ turn: 0, tool: 'Write', callId: 'toolu_w', handle: i!.handle, where: 'original' }),
    ]);
    const [m] = found.matches!;
    expect(m!.snippet.slice(m!.at, m!.at + m!.length)).toBe('value_17 = compute');

    const archive = new SessionArchive(() => join(root, 'archive'));
    archive.begin({ v: 1, origin: 'api', name: 'demo', title: 'demo', detail: '', created: new Date().toISOString() });
    archive.append('api', 'demo', { summary: rec.summary, reductions: [...rec.reductions], missed: [], inputs: [...rec.inputs!] });
    archive.append('api', 'demo', { summary: rec.summary, reductions: [], missed: [], inputs: [{ broken: true }] as never });
    const [kept] = archive.read('api');
    expect(kept!.turns.map((t) => t.inputs?.length)).toEqual([1, undefined]);
  });
});

describe('a turn made through the API whose clear replaced a file input', () => {
  it('lists the input under its inputs, by the clear, and not its result as a clear that saved nothing', () => {
    const store = new MemoryStore();
    const engine = createEngine(
      {
        offload: { enabled: false },
        inputs: { when: 'clear' },
        clear: { triggerTokens: 1_000, keep: 1, clearAtLeastTokens: 0, schedule: 'trigger', inUseCalls: 0 },
      },
      { store, tokenizer: perChar },
    );
    const session = new ApiSession({ store: () => store, config: () => engine.config } as never, 'cleared');
    const text = JSON.stringify({
      model: 'claude-x',
      max_tokens: 100,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'write it, then run it' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_w', name: 'Write', input: { file_path: '/repo/v.ts', content } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_w', content: 'File created' }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_b', name: 'Bash', input: { command: 'ls' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_b', content: 'ok' }] },
      ],
    });
    const p = engine.project(text, 'anthropic-messages');
    expect(p.reductions.find((r) => r.callId === 'toolu_w')).toMatchObject({ stage: 'clear', inputOnly: true });
    const rec = session.add(text, p);
    expect(rec.summary).toMatchObject({ inputs: 1, clears: 0 });
    const detail = TurnDetail.parse(session.detail(0));
    expect(detail.results).toEqual([]);
    expect(detail.inputs).toEqual([
      expect.objectContaining({ tool: 'Write', callId: 'toolu_w', by: 'clear', fresh: true, handle: p.inputs[0]!.handle }),
    ]);
    expect(detail.inputs![0]!.originalChars).toBeGreaterThan(content.length);
    expect(session.text(p.inputs[0]!.handle, 'original', 0, 100_000).text).toBe(content);
  });
});

describe('a replayed session', () => {
  it('carries each call’s fresh inputs into the replay records and the turn summaries', () => {
    const result = replay(apiTranscript(conversation, 'conversation.json', 'anthropic-messages'), {
      config,
      tokenizer: perChar,
      detail: true,
    });
    expect(result.calls.map((c) => c.freshInputs)).toEqual(result.calls.map((c) => (c.inputList ?? []).filter((r) => r.fresh).length));
    const fresh = result.calls.reduce((a, c) => a + c.freshInputs, 0);
    expect(fresh).toBe(1);
    const records = replayRecords(result);
    expect(records.reduce((a, r) => a + (r.summary.inputs ?? 0), 0)).toBe(1);
    const at = records.findIndex((r) => (r.summary.inputs ?? 0) > 0);
    expect(records[at]!.inputs![0]).toMatchObject({ tool: 'Write', callId: 'toolu_w', fresh: true });
    expect(records[at]!.summary.freshSaved).toBeGreaterThan(0);
  });
});

describe('a turn of the Responses WebSocket mode', () => {
  it("records the file input it replaced at its place in the message's own items, not the context's", () => {
    const engine = createEngine(config, { store: new MemoryStore(), tokenizer: perChar });
    const ctx = newSessionContext();
    const message = (input: unknown[]) => JSON.stringify({ type: 'response.create', model: 'gpt-5', input });
    // the first message teaches the session a call and its output, which later messages carry as context
    projectCreate(
      engine,
      message([
        { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{"command":"ls"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'file '.repeat(200) },
      ]),
      ctx,
    );
    const args = JSON.stringify({ file_path: '/repo/v.ts', content });
    const p = projectCreate(
      engine,
      message([
        { role: 'user', content: `Write it.\n${'x'.repeat(3_000)}` },
        { type: 'function_call', call_id: 'w1', name: 'Write', arguments: args },
        { type: 'function_call_output', call_id: 'w1', output: 'File created' },
      ]),
      ctx,
    );
    expect(p.inputs).toHaveLength(1);
    expect(p.inputs[0]).toMatchObject({ tool: 'Write', callId: 'w1', item: 1, fresh: true });
    expect(p.text).toContain(p.inputs[0]!.handle);
    expect(p.handles).toContain(p.inputs[0]!.handle);
  });
});

describe('a file input a clear replaced (inputs.when: clear, the default)', () => {
  // the npm start demo session: with a 4-call in-use window and a 20,000-token trigger (the default's
  // clear until 2026-11-30) its one clear also replaces an Edit's input; the default's 8-call window
  // keeps that input in use up to the clear
  const file = join(__dirname, '../fixtures/sessions/dev3/claude-code/randlee__claude-history-subagent-a5e7369.jsonl');

  it('is recorded as a file input with its own handle and the marker the clear sent for it', async () => {
    const store = new MemoryStore();
    const recorded: { handle: string; input?: boolean; marker: string; stage: string; reason: string; clearHandle: string }[] = [];
    // every call's inputs list each input a clear replaced once, under the handle its result's clear points at
    const listed: number[] = [];
    replay(await readTranscript(file), {
      config: parseConfig({ clear: { inUseCalls: 4, inUseLatest: false, triggerTokens: 20_000 } }).config,
      store,
      detail: true,
      onProjection: (i, { request, projection }) => {
        for (const r of projection.reductions)
          if (r.inputHandle) listed.push(projection.inputs.filter((x) => x.handle === r.inputHandle && x.by === 'clear').length);
        const cleared = projection.inputs.filter((r) => r.fresh && r.by === 'clear');
        if (cleared.length === 0) return;
        const records = projectedRecords(
          JSON.parse(request) as unknown,
          JSON.parse(projection.request) as unknown,
          [...projection.reductions, ...withInputStage(projection.inputs)],
          '',
          { turn: i },
          (r) => r.fresh === true,
        );
        for (const c of cleared) {
          const r = records.find((x) => x.handle === c.handle)!;
          recorded.push({
            handle: r.handle,
            input: r.input,
            marker: r.markers[0]!.text,
            stage: r.markers[0]!.stage,
            reason: r.markers[0]!.reason,
            clearHandle: projection.reductions.find((x) => x.inputHandle === c.handle)!.handle,
          });
        }
      },
    });
    expect(recorded.length).toBeGreaterThan(0);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((n) => n === 1)).toBe(true);
    for (const r of recorded) {
      expect(r.input).toBe(true);
      expect(r.stage).toBe('input');
      expect(r.reason).toContain('by a clear');
      expect(r.handle).not.toBe(r.clearHandle);
      expect(r.marker).toContain(r.handle);
      // the stored output is the input as the agent sent it
      expect(store.get(r.handle).length).toBeGreaterThan(0);
    }
  });
});

describe("a record of a result a clear sent as it was (only its call's file input replaced)", () => {
  const note = 'The file /src/a.py has been updated.';
  const reduction = {
    handle: HANDLE,
    tool: 'Edit',
    callId: 'call_e',
    reason: 'cleared; its file input replaced',
    stage: 'clear',
    inputOnly: true,
    fresh: true,
  };
  it.each([
    [
      'Anthropic Messages',
      { messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_e', content: [{ type: 'text', text: note }] }] }] },
    ],
    ['Chat Completions', { messages: [{ role: 'tool', tool_call_id: 'call_e', content: note }] }],
    [
      'Responses',
      {
        input: [
          { type: 'function_call', call_id: 'call_e', name: 'Edit', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_e', output: note },
        ],
      },
    ],
  ])('is written, with the result as it was sent for its marker (%s)', (_, projected) => {
    const [record] = projectedRecords(projected, projected, [reduction], '');
    expect(record).toMatchObject({ handle: HANDLE, tool: 'Edit', callId: 'call_e' });
    expect(record!.markers.map((m) => m.text)).toEqual([note]);
  });
});
