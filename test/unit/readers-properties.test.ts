/**
 * Properties of the transcript readers, checked on generated input: line splitting does not depend
 * on where chunk boundaries fall; any Claude Code session, however its messages are split over
 * lines and interleaved with noise, becomes well-formed Anthropic requests; and any Copilot CLI
 * session, sub-agents written into it, becomes well-formed requests of its wire format holding the
 * main conversation only, each sub-agent replaying on its own; and any Cline session, calls left
 * without a result and prompts sent beside results included, becomes well-formed Chat Completions
 * requests, every string of a result at most Cline's 8,000 characters; and any Qwen Code chat,
 * telemetry records and retried answers interleaved, replays its last branch as well-formed requests;
 * and any OpenCode export, on any provider, failed calls and unfinished tools included, gives one
 * call per answered message, each request well-formed in the provider's wire and extending the last;
 * and any Continue session, thinking and cancelled calls included, likewise for either model family.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readClaudeCode } from '../../src/replay/readers/claude-code';
import { readLines } from '../../src/replay/readers/lines';
import { requestForCall } from '../../src/replay/readers/types';
import { anthropicProblems, toolResults, wireProblems } from './readers-wire-checks';
import { readTranscript } from '../../src/replay/readers';

let dir: string;
let counter = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'spillway-readers-prop-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
const tempFile = (content: string | Buffer) => {
  const path = join(dir, `f${counter++}`);
  writeFileSync(path, content);
  return path;
};

describe('line splitting', () => {
  test('lines come back the same wherever the chunk boundaries fall', async () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !s.includes('\n') && !s.includes('\r'));
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 1, max: 9 }),
        async (lines, crlf, finalNewline, chunkBytes) => {
          const text = lines.join(crlf ? '\r\n' : '\n') + (finalNewline ? '\n' : '');
          const got: string[] = [];
          for await (const l of readLines(tempFile(text), { chunkBytes })) got.push(l.text);
          // a text ending in '\n' has no empty last line; one that does not still yields its last line
          const expected = finalNewline || lines.at(-1) !== '' ? lines : lines.slice(0, -1);
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });
});

interface Turn {
  blocks: ('text' | 'tool')[];
  /** log the first tool's result before the message's next block (parallel tool calls) */
  interleave: boolean;
  /** the user writes something after the results */
  userText: boolean;
}

const turnArb: fc.Arbitrary<Turn> = fc
  .record({
    blocks: fc.array(fc.constantFrom<'text' | 'tool'>('text', 'tool'), { minLength: 1, maxLength: 4 }),
    interleave: fc.boolean(),
    userText: fc.boolean(),
  })
  .map((t) => ({ ...t, userText: t.userText || !t.blocks.includes('tool') }));

const NOISE = [
  '{"type":"system","subtype":"informational","content":"hook","uuid":"NOISE"}',
  '{"type":"file-history-snapshot","messageId":"m","snapshot":{}}',
  '{"type":"user","isSidechain":true,"uuid":"NOISE","message":{"role":"user","content":"sub-agent"}}',
  '{"type":"assistant","isSidechain":true,"uuid":"NOISE","message":{"id":"side","role":"assistant","content":[{"type":"text","text":"x"}]}}',
  '{"type":"user","message":{"role":"user","content":[{"type":"tool_res',
];

function sessionLines(turns: Turn[]): string[] {
  let uuid = 0;
  const line = (type: 'user' | 'assistant', content: unknown, id?: string) =>
    JSON.stringify({
      type,
      uuid: `r${uuid++}`,
      isSidechain: false,
      message: type === 'user' ? { role: 'user', content } : { id, role: 'assistant', model: 'm', content },
    });
  const out = [line('user', 'Start')];
  turns.forEach((turn, i) => {
    const pending: string[] = [];
    turn.blocks.forEach((kind, j) => {
      const block =
        kind === 'text'
          ? { type: 'text', text: `t${i}.${j}` }
          : { type: 'tool_use', id: `toolu_${i}_${j}`, name: `Tool${j}`, input: { n: j } };
      out.push(line('assistant', [block], `msg_${i}`));
      if (kind === 'tool') {
        const result = line('user', [{ type: 'tool_result', tool_use_id: `toolu_${i}_${j}`, content: `out ${i}.${j}` }]);
        if (turn.interleave && pending.length === 0 && j < turn.blocks.length - 1) out.push(result);
        else pending.push(result);
      }
    });
    out.push(...pending);
    if (turn.userText) out.push(line('user', `next ${i}`));
  });
  return out;
}

describe('Claude Code sessions', () => {
  test('any session split over lines and mixed with noise gives one call per assistant message and well-formed requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(turnArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom(...NOISE)), { maxLength: 5 }),
        async (turns, noise) => {
          const lines = sessionLines(turns);
          // noise goes anywhere after the first line and before the last one
          for (const [at, text] of noise) lines.splice(1 + (at % (lines.length - 1)), 0, text);
          const t = await readClaudeCode(tempFile(lines.join('\n') + '\n'));
          expect(t.calls).toHaveLength(turns.length);
          const tools = turns.reduce((n, turn) => n + turn.blocks.filter((b) => b === 'tool').length, 0);
          expect(toolResults(t.wire, t.items).filter((r) => r.name !== undefined)).toHaveLength(tools);
          for (let k = 0; k < t.calls.length; k++) {
            expect(anthropicProblems(requestForCall(t, k).messages as unknown[])).toEqual([]);
          }
          expect(t.skipped.total).toBe(noise.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});

/** One answer of a generated Copilot CLI session: its tool calls (each answered), and whether a sub-agent runs inside it. */
interface CopilotTurn {
  tools: number;
  text: boolean;
  /** a sub-agent started by this turn's first tool call writes its own turns into the log */
  sub: boolean;
}

const copilotTurnArb: fc.Arbitrary<CopilotTurn> = fc
  .record({ tools: fc.integer({ min: 0, max: 3 }), text: fc.boolean(), sub: fc.boolean() })
  .map((t) => ({ ...t, text: t.text || t.tools === 0, sub: t.sub && t.tools > 0 }));

/** A Copilot CLI events.jsonl, as 1.0.102 writes it (see readers/copilot-cli.ts), with sub-agents interleaved. */
function copilotLines(turns: CopilotTurn[], endpoint: string): string[] {
  let n = 0;
  const ev = (type: string, data: Record<string, unknown>) =>
    JSON.stringify({ type, data, id: `e${n++}`, timestamp: '2026-11-30T10:00:00Z' });
  const out = [
    ev('session.start', { producer: 'copilot-agent', selectedModel: 'gpt-5' }),
    ev('user.message', { content: 'go', transformedContent: 'go' }),
    ev('system.message', { content: 'MAIN SYSTEM' }),
  ];
  turns.forEach((turn, i) => {
    const ids = Array.from({ length: turn.tools }, (_, j) => `c${i}_${j}`);
    out.push(ev('assistant.turn_start', { turnId: String(i) }));
    out.push(ev('session.usage_record', { usage: { apiEndpoint: endpoint } }));
    out.push(
      ev('assistant.message', {
        content: turn.text ? `answer ${i}` : '',
        toolRequests: ids.map((id) => ({ toolCallId: id, name: 'bash', arguments: { command: `echo ${id}` } })),
      }),
    );
    ids.forEach((id, j) => {
      out.push(ev('tool.execution_start', { toolCallId: id, toolName: 'bash' }));
      if (j === 0 && turn.sub) {
        const sub = { parentToolCallId: id };
        out.push(ev('subagent.started', { toolCallId: id, agentName: 'general-purpose' }));
        out.push(ev('user.message', { content: `SUB PROMPT ${id}`, transformedContent: `SUB PROMPT ${id}` }));
        out.push(ev('system.message', { content: 'SUB SYSTEM' }));
        out.push(ev('assistant.turn_start', { turnId: '0', ...sub }));
        out.push(ev('assistant.message', { content: '', toolRequests: [{ toolCallId: `s${id}`, name: 'bash', arguments: {} }], ...sub }));
        out.push(ev('tool.execution_complete', { toolCallId: `s${id}`, result: { content: `SUB OUTPUT ${id}` }, ...sub }));
        out.push(ev('assistant.message', { content: `SUB REPORT ${id}`, toolRequests: [], ...sub }));
        out.push(ev('subagent.completed', { toolCallId: id }));
      }
      out.push(ev('tool.execution_complete', { toolCallId: id, success: true, result: { content: `out ${id}` } }));
    });
    out.push(ev('assistant.turn_end', { turnId: String(i) }));
    // an answer without tool calls ends the interaction: the next one answers a new prompt
    if (turn.tools === 0 && i < turns.length - 1) out.push(ev('user.message', { content: `next ${i}`, transformedContent: `next ${i}` }));
  });
  return out;
}

describe('GitHub Copilot CLI sessions', () => {
  test('any session, sub-agents interleaved, gives one call per main answer and well-formed requests without a sub-agent word', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(copilotTurnArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('/chat/completions', '/responses', '/v1/messages'),
        async (turns, endpoint) => {
          const t = await readTranscript(tempFile(copilotLines(turns, endpoint).join('\n') + '\n'), { format: 'copilot-cli' });
          expect(t.calls).toHaveLength(turns.length);
          const tools = turns.reduce((s, turn) => s + turn.tools, 0);
          expect(toolResults(t.wire, t.items).filter((r) => r.name !== undefined)).toHaveLength(tools);
          for (let k = 0; k < t.calls.length; k++) {
            const r = requestForCall(t, k);
            const items = (r.messages ?? r.input) as unknown[];
            expect(wireProblems(t.wire, items), `call ${k}`).toEqual([]);
            expect(JSON.stringify(r)).not.toMatch(/SUB (PROMPT|SYSTEM|OUTPUT|REPORT)/);
          }
          // and each sub-agent replays on its own, its prompt first and its one tool result
          for (const [i, turn] of turns.entries()) {
            if (!turn.sub) continue;
            const s = await readTranscript(tempFile(copilotLines(turns, endpoint).join('\n') + '\n'), {
              format: 'copilot-cli',
              instance: `c${i}_0`,
            });
            expect(s.calls).toHaveLength(2);
            const last = JSON.stringify(requestForCall(s, 1));
            expect(last).toContain(`SUB PROMPT c${i}_0`);
            expect(last).toContain(`SUB OUTPUT c${i}_0`);
            expect(last).not.toMatch(/MAIN SYSTEM|answer \d|out c/);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});

/** A Cline answer: its tool calls (some never answered: interrupted), then what the user message after it holds. */
const clineTurnArb = fc.record({
  text: fc.constantFrom('', 'Looking.', '<user_input mode="act">odd</user_input>'),
  thinking: fc.boolean(),
  calls: fc.array(
    fc.record({
      answered: fc.boolean(),
      shape: fc.constantFrom('string', 'list', 'blocks'),
      chars: fc.integer({ min: 0, max: 20_000 }),
    }),
    { maxLength: 3 },
  ),
  prompt: fc.constantFrom(undefined, 'also this', '<user_input mode="plan">plan it</user_input>'),
});

function clineSession(turns: Array<typeof clineTurnArb extends fc.Arbitrary<infer T> ? T : never>): unknown {
  const messages: unknown[] = [{ role: 'user', content: [{ type: 'text', text: '<user_input mode="act">start</user_input>' }] }];
  turns.forEach((turn, i) => {
    const calls = turn.calls.map((c, j) => ({ ...c, id: `c${i}_${j}` }));
    messages.push({
      role: 'assistant',
      content: [
        ...(turn.thinking ? [{ type: 'thinking', thinking: `think ${i}` }] : []),
        ...(turn.text ? [{ type: 'text', text: turn.text }] : []),
        ...calls.map((c) => ({ type: 'tool_use', id: c.id, name: 'run_commands', input: { commands: [`cmd ${c.id}`] } })),
      ],
      modelInfo: { id: 'gpt-5', provider: 'openai-compatible' },
    });
    const body = (c: { id: string; chars: number }) => `out ${c.id} ` + 'y'.repeat(c.chars);
    const results = calls
      .filter((c) => c.answered)
      .map((c) => ({
        type: 'tool_result',
        tool_use_id: c.id,
        name: 'run_commands',
        content:
          c.shape === 'string'
            ? body(c)
            : c.shape === 'list'
              ? [{ query: `cmd ${c.id}`, result: body(c), success: true }]
              : [{ type: 'text', text: body(c) }],
      }));
    // a user message follows every answer but perhaps the last (Cline sends none between two answers)
    const prompt = turn.prompt ?? (results.length === 0 && i < turns.length - 1 ? 'go on' : undefined);
    const content = [...results, ...(prompt ? [{ type: 'text', text: prompt }] : [])];
    if (content.length) messages.push({ role: 'user', content });
  });
  return {
    version: 1,
    agent: 'lead',
    sessionId: 's',
    origin: { source: 'cli', version: '3.0.65' },
    messages,
    system_prompt: 'You are Cline.',
  };
}

/** Every string a value holds. */
const strings = (v: unknown): string[] =>
  typeof v === 'string' ? [v] : Array.isArray(v) ? v.flatMap(strings) : v && typeof v === 'object' ? Object.values(v).flatMap(strings) : [];

describe('Cline sessions', () => {
  test('any session gives one call per answer and well-formed requests, every result string cut to 8,000 characters', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(clineTurnArb, { minLength: 1, maxLength: 6 }), async (turns) => {
        const t = await readTranscript(tempFile(JSON.stringify(clineSession(turns))));
        expect(t.source).toBe('cline');
        expect(t.calls).toHaveLength(turns.length);
        const tools = turns.reduce((s, turn) => s + turn.calls.length, 0);
        for (let k = 0; k < t.calls.length; k++) {
          const messages = requestForCall(t, k).messages as Array<Record<string, unknown>>;
          expect(wireProblems(t.wire, messages), `call ${k}`).toEqual([]);
          expect(messages[0]).toEqual({ role: 'system', content: 'You are Cline.' });
          // a prompt goes without its wrapper; an answer's text as the model wrote it
          expect(JSON.stringify(messages.filter((m) => m.role === 'user'))).not.toContain('<user_input');
        }
        // every call got a result (Cline's error for those that got none), each string of it at most 8,000 characters
        const results = toolResults(t.wire, t.items);
        const last = turns.at(-1)!;
        const lastAnswered = last.prompt !== undefined || last.calls.some((c) => c.answered);
        expect(results).toHaveLength(tools - (lastAnswered ? 0 : last.calls.length));
        for (const item of t.items as Array<Record<string, unknown>>) {
          if (item.role !== 'tool') continue;
          const text = item.content as string;
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* a string result */
          }
          for (const str of strings(parsed)) expect(str.length).toBeLessThanOrEqual(8_000);
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** A Qwen Code answer: its tool calls (each answered), whether telemetry records sit between, whether a first try was retried. */
const qwenTurnArb = fc.record({
  calls: fc.integer({ min: 0, max: 3 }),
  telemetry: fc.boolean(),
  retried: fc.boolean(),
  text: fc.constantFrom('', 'Looking.'),
});

function qwenLines(turns: Array<typeof qwenTurnArb extends fc.Arbitrary<infer T> ? T : never>): string[] {
  const lines: string[] = [];
  let n = 0;
  let parent: string | null = null;
  const push = (type: string, extra: Record<string, unknown>): string => {
    const uuid = `r${++n}`;
    lines.push(
      JSON.stringify({ uuid, parentUuid: parent, sessionId: 's', timestamp: '2026-11-30T10:00:00.000Z', type, cwd: '/w', ...extra }),
    );
    parent = uuid;
    return uuid;
  };
  const telemetry = { provenance: 'system', subtype: 'ui_telemetry', systemPayload: {} };
  push('user', { message: { role: 'user', parts: [{ text: 'start' }] } });
  turns.forEach((turn, i) => {
    if (turn.retried) {
      // a first try that was thrown away: the retry hangs from the same parent
      const from = parent;
      push('assistant', { model: 'qwen3', message: { role: 'model', parts: [{ text: `DISCARDED ${i}` }] } });
      parent = from;
    }
    const ids = Array.from({ length: turn.calls }, (_, j) => `c${i}_${j}`);
    const parts = [
      ...(turn.text ? [{ text: turn.text }] : []),
      ...ids.map((id) => ({ functionCall: { id, name: 'run_shell_command', args: { command: `cmd ${id}` } } })),
    ];
    push('assistant', { model: 'qwen3', message: { role: 'model', parts: parts.length ? parts : [{ text: 'done' }] } });
    if (turn.telemetry) push('system', telemetry);
    if (ids.length)
      push('tool_result', {
        message: {
          role: 'user',
          parts: ids.map((id) => ({ functionResponse: { id, name: 'run_shell_command', response: { output: `out ${id}` } } })),
        },
      });
    else push('user', { message: { role: 'user', parts: [{ text: `go on ${i}` }] } });
  });
  return lines;
}

describe('Qwen Code chat logs', () => {
  test('any chat, telemetry and retries interleaved, gives one call per kept answer and well-formed requests', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(qwenTurnArb, { minLength: 1, maxLength: 6 }), async (turns) => {
        const t = await readTranscript(tempFile(qwenLines(turns).join('\n') + '\n'));
        expect(t.source).toBe('qwen-code');
        expect(t.calls).toHaveLength(turns.length);
        expect(toolResults(t.wire, t.items)).toHaveLength(turns.reduce((s, turn) => s + turn.calls, 0));
        for (let k = 0; k < t.calls.length; k++) {
          const messages = requestForCall(t, k).messages as unknown[];
          expect(wireProblems(t.wire, messages), `call ${k}`).toEqual([]);
          expect(JSON.stringify(messages)).not.toContain('DISCARDED');
        }
      }),
      { numRuns: 60 },
    );
  });
});

/** An OpenCode assistant message: its text, its tools (how each ended), whether the call failed, whether a prompt follows. */
const openCodeTurnArb = fc.record({
  text: fc.constantFrom('', 'Looking.'),
  tools: fc.array(fc.constantFrom('completed', 'error', 'running', 'pruned'), { maxLength: 3 }),
  failed: fc.boolean(),
  prompt: fc.boolean(),
});

function openCodeExport(turns: Array<typeof openCodeTurnArb extends fc.Arbitrary<infer T> ? T : never>, provider: string): unknown {
  const messages: unknown[] = [];
  let t = Date.UTC(2026, 10, 30);
  const user = (text: string) =>
    messages.push({ info: { role: 'user', id: `u${messages.length}`, time: { created: ++t } }, parts: [{ type: 'text', text }] });
  user('start');
  turns.forEach((turn, i) => {
    const parts: unknown[] = [{ type: 'step-start' }];
    if (turn.text || turn.tools.length === 0) parts.push({ type: 'text', text: turn.text || 'done' });
    turn.tools.forEach((status, j) => {
      const state =
        status === 'completed'
          ? { status, output: `out ${i}.${j}` }
          : status === 'pruned'
            ? { status: 'completed', output: `old ${i}.${j}`, time: { start: t, end: t, compacted: t + 9 } }
            : status === 'error'
              ? { status, error: `failed ${i}.${j}` }
              : { status };
      parts.push({ type: 'tool', tool: 'bash', callID: `c${i}_${j}`, state: { input: { command: `cmd ${i}.${j}` }, ...state } });
    });
    const info = { role: 'assistant', id: `a${i}`, providerID: provider, modelID: 'm', time: { created: ++t } };
    messages.push({ info: turn.failed ? { ...info, error: { name: 'APIError' } } : info, parts });
    // OpenCode's loop stops at an answer without tool calls: only a prompt starts the next
    if (turn.prompt || (turn.tools.length === 0 && !turn.failed)) user(`go on ${i}`);
  });
  return { info: { id: 'ses_p', directory: '/w', version: '1.18.33' }, messages };
}

describe('OpenCode exports', () => {
  test("any export gives one call per answered message, each request well-formed in its provider's wire and extending the last", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(openCodeTurnArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('anthropic', 'openai', 'openrouter'),
        async (turns, provider) => {
          const t = await readTranscript(tempFile(JSON.stringify(openCodeExport(turns, provider))));
          expect(t.source).toBe('opencode');
          const answered = turns.filter((turn) => !turn.failed);
          expect(t.calls).toHaveLength(answered.length);
          expect(toolResults(t.wire, t.items)).toHaveLength(answered.reduce((s, turn) => s + turn.tools.length, 0));
          for (let k = 0; k < t.calls.length; k++) {
            if (k > 0) expect(t.calls[k]!.end).toBeGreaterThan(t.calls[k - 1]!.end);
            const req = requestForCall(t, k);
            expect(wireProblems(t.wire, (req.messages ?? req.input) as unknown[]), `call ${k}`).toEqual([]);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

/** A Continue answer: whether thinking comes first, its text, its calls (with output or cancelled), whether a prompt follows. */
const continueTurnArb = fc.record({
  thinking: fc.boolean(),
  text: fc.constantFrom('', 'Looking.'),
  calls: fc.array(fc.boolean(), { maxLength: 3 }),
  prompt: fc.boolean(),
});

function continueSession(turns: Array<typeof continueTurnArb extends fc.Arbitrary<infer T> ? T : never>, model: string): unknown {
  const history: unknown[] = [{ message: { role: 'user', content: 'start' }, contextItems: [{ name: 'a.md', content: 'ctx' }] }];
  turns.forEach((turn, i) => {
    if (turn.thinking) history.push({ message: { role: 'thinking', content: `think ${i}` }, contextItems: [] });
    const ids = turn.calls.map((_, j) => `c${i}_${j}`);
    history.push({
      message: {
        role: 'assistant',
        content: ids.length ? turn.text : turn.text || 'done',
        ...(ids.length
          ? { toolCalls: ids.map((id) => ({ id, type: 'function', function: { name: 'Bash', arguments: `{"command":"${id}"}` } })) }
          : {}),
        usage: { model },
      },
      contextItems: [],
      ...(ids.length
        ? {
            toolCallStates: ids.map((id, j) => ({
              toolCallId: id,
              status: 'done',
              ...(turn.calls[j] ? { output: [{ content: `out ${id}` }] } : {}),
            })),
          }
        : {}),
    });
    // Continue's loop stops at an answer without tool calls: only a prompt starts the next
    if (turn.prompt || ids.length === 0) history.push({ message: { role: 'user', content: `go on ${i}` }, contextItems: [] });
  });
  return { sessionId: 'p', title: 'Untitled Session', workspaceDirectory: '/w', history };
}

describe('Continue sessions', () => {
  test('any session gives one call per answer, each request well-formed and extending the last, for either model family', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(continueTurnArb, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('gpt-5', 'claude-sonnet-4-5'),
        async (turns, model) => {
          const t = await readTranscript(tempFile(JSON.stringify(continueSession(turns, model))));
          expect(t.source).toBe('continue');
          expect(t.calls).toHaveLength(turns.length);
          expect(toolResults(t.wire, t.items)).toHaveLength(turns.reduce((s, turn) => s + turn.calls.length, 0));
          for (let k = 0; k < t.calls.length; k++) {
            if (k > 0) expect(t.calls[k]!.end).toBeGreaterThan(t.calls[k - 1]!.end);
            const req = requestForCall(t, k);
            expect(wireProblems(t.wire, (req.messages ?? req.input) as unknown[]), `call ${k}`).toEqual([]);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});
