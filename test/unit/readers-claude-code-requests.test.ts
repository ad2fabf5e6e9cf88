/**
 * Claude Code logs that record their requests (2.1.332 and later: src/replay/readers/claude-code-requests.ts).
 * The real logs in test/fixtures/transcripts/claude-code-2.1.332/ were written by the CLI installed
 * from npm in the agents suite's sub-agent run (which checks the rebuild against what the CLI really
 * sent); the edge cases are built here, each record hashed as Claude Code hashes it.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readRequest } from '../../src/engine/formats';
import { isSubAgent } from '../../src/engine/stages/gathering';
import { billingHeader, messageHash } from '../../src/replay/readers/claude-code-requests';
import { readTranscript, requestForCall } from '../../src/replay/readers/index';

const REAL = join(__dirname, '..', 'fixtures', 'transcripts', 'claude-code-2.1.332');
const MAIN = join(REAL, 'c4e61cd1-9f94-4f74-95d4-247c8a84db17.jsonl');
const SUB = join(REAL, 'c4e61cd1-9f94-4f74-95d4-247c8a84db17', 'subagents', 'agent-a16c7d7e30e0b4e34.jsonl');

type Json = Record<string, any>;
const roles = (items: unknown[]) => items.map((m) => (m as Json).role[0]).join('');

describe('a real 2.1.332 log, replayed as sent', () => {
  test('the main conversation: three calls, the log’s own system prompt and tools behind the billing header, the sub-agent’s report as sent', async () => {
    const t = await readTranscript(MAIN);
    expect(t.calls.map((c) => c.end)).toEqual([2, 4, 6]);
    // a prompt with reminders, the environment as a system message, Agent call and its result,
    // "Waiting for the sub-agent.", the report as a notification, the final answer
    expect(roles(t.items)).toBe('usauaua');
    const system = t.base.system as Json[];
    expect(system[0]).toEqual({ type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.332.36a; cc_entrypoint=sdk-cli;' });
    expect((t.base.tools as Json[]).map((x) => x.name)).toContain('Agent');
    expect(t.base.model).toBe('claude-opus-5-5');
    expect(JSON.stringify(t.items[5])).toContain('SUB-REPORT: three outputs read.');
    expect(t.skipped.byReason).not.toHaveProperty('attachment');
    expect(Object.keys(t.skipped.byReason).filter((r) => r.startsWith('unknown:'))).toEqual([]);
    expect(t.skipped.notes).toContain(
      'the log records its requests (Claude Code 2.1.332 and later): every call is replayed as sent, with its own system prompt and tools',
    );
    // dated when each request was sent (the api-request records), not when its last record was written
    const sent = readFileSync(MAIN, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Json)
      .filter((r) => r.type === 'api-request')
      .map((r) => r.timestamp);
    expect(t.calls.map((c) => new Date(c.at!).toISOString())).toEqual(sent);
    expect(isSubAgent(readRequest(JSON.stringify(requestForCall(t, 0)), 'anthropic-messages'))).toBe(false);
  });

  test('the sub-agent’s log: four calls, its own system prompt, known as a sub-agent’s by the engine', async () => {
    const t = await readTranscript(SUB);
    expect(t.calls).toHaveLength(4);
    // the prompt with reminders, the deferred tools as a system message, three commands (the agent
    // listing as a system message after the first result), the report
    expect(roles(t.items)).toBe('usausauaua');
    const system = t.base.system as Json[];
    expect(system[0]!.text).toMatch(/^x-anthropic-billing-header: cc_version=2\.1\.332\.334; cc_entrypoint=sdk-cli; cc_is_subagent=true;$/);
    expect(system.map((b) => b.text).join('\n')).toContain('You are an agent for Claude Code');
    for (let k = 0; k < t.calls.length; k++)
      expect(isSubAgent(readRequest(JSON.stringify(requestForCall(t, k)), 'anthropic-messages')), `call ${k + 1}`).toBe(true);
    // the three 25 kB outputs are tool results the engine can reduce
    const results = t.items.flatMap((m) => ((m as Json).role === 'user' && Array.isArray((m as Json).content) ? (m as Json).content : []));
    expect(results.filter((b: Json) => b.type === 'tool_result' && String(b.content).length > 25_000)).toHaveLength(3);
  });
});

test('the billing header is the one Claude Code 2.1.332 writes for the prompts the agents suite saw', () => {
  // as the scripted provider received them (test/fixtures/agent-preludes.json holds the first)
  expect(billingHeader('2.1.332', 'sdk-cli', 'Run the twelve shell commands you are asked for, then report.', false)).toBe(
    'x-anthropic-billing-header: cc_version=2.1.332.bf1; cc_entrypoint=sdk-cli;',
  );
  expect(billingHeader('2.1.332', 'cli', 'hi', true)).toMatch(
    /^x-anthropic-billing-header: cc_version=2\.1\.332\.[0-9a-f]{3}; cc_entrypoint=cli; cc_is_subagent=true;$/,
  );
});

/** Builds a log in the 2.1.332 shape: records in order, each request naming its messages by hash. */
class Log {
  readonly lines: Json[] = [];
  private n = 0;
  private readonly sent = new Map<string, string[]>();

  constructor() {
    this.lines.push({
      type: 'api-request-shape',
      shapeHash: 'shape-1',
      version: '2.1.332',
      shape: { system: [{ type: 'text', text: 'You are Claude Code.' }], tools: [{ name: 'Bash', input_schema: {} }] },
    });
  }

  user(content: unknown, extra: Json = {}): Json {
    const message = { role: 'user', content };
    this.lines.push({ type: 'user', uuid: `u${++this.n}`, entrypoint: 'cli', timestamp: '2026-11-30T10:00:00.000Z', message, ...extra });
    return message;
  }

  assistant(request: string, content: Json[], blockIndex = 0): Json {
    const message = { id: `msg_${request}`, role: 'assistant', model: 'claude-x', content };
    this.lines.push({
      type: 'assistant',
      uuid: `a${++this.n}`,
      requestRef: request,
      apiBlockIndex: blockIndex,
      timestamp: '2026-11-30T10:00:01.000Z',
      message,
    });
    return { role: 'assistant', content };
  }

  blob(message: Json): Json {
    this.lines.push({ type: 'api-request-blob', hash: messageHash(message as never), message });
    return message;
  }

  request(id: string, messages: Json[], opts: { base?: string; keep?: number; source?: string; at?: string; shape?: string } = {}): void {
    const tail = messages.map((m) => messageHash(m as never));
    const keep = opts.keep ?? (opts.base ? this.sent.get(opts.base)!.length : 0);
    this.sent.set(id, [...(opts.base ? this.sent.get(opts.base)!.slice(0, keep) : []), ...tail]);
    this.lines.push({
      type: 'api-request',
      id,
      version: '2.1.332',
      querySource: opts.source ?? 'repl_main_thread',
      shapeHash: opts.shape ?? 'shape-1',
      timestamp: opts.at ?? '2026-11-30T10:00:00.500Z',
      params: { model: 'claude-x' },
      ...(opts.base ? { base: opts.base } : {}),
      keep,
      tail,
    });
  }

  write(): string {
    const file = join(mkdtempSync(join(tmpdir(), 'sw-cc-requests-')), 'session.jsonl');
    writeFileSync(file, this.lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    return file;
  }
}

const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'Bash', input: { command: `echo ${id}` } });
const toolResult = (id: string) => [{ type: 'tool_result', tool_use_id: id, content: `out ${id}` }];

describe('edge cases of the request records', () => {
  test('a retried request is one call, dated when it was sent again; a side request is left out; the last answer is merged from its blocks', async () => {
    const log = new Log();
    const prompt = log.user('list the files');
    const notice = log.blob({ role: 'system', content: [{ type: 'text', text: 'Today is Monday.' }] });
    log.request('r1', [prompt, notice], { at: '2026-11-30T10:00:00.100Z' });
    log.request('r1b', [prompt, notice], { at: '2026-11-30T10:00:02.000Z' }); // the retry
    log.request('title', [log.blob({ role: 'user', content: 'Name this session.' })], { source: 'generate_session_title' });
    const a1 = log.assistant('r1b', [toolUse('t1')]);
    const r1 = log.user(toolResult('t1'));
    log.request('r2', [a1, r1], { base: 'r1b', at: '2026-11-30T10:00:03.000Z' });
    log.assistant('r2', [{ type: 'thinking', thinking: 'done', signature: 's' }], 0);
    log.assistant('r2', [{ type: 'text', text: 'Two files.' }], 1);
    const t = await readTranscript(log.write());
    expect(roles(t.items)).toBe('usaua');
    expect(t.items[4]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'done', signature: 's' },
        { type: 'text', text: 'Two files.' },
      ],
    });
    expect(t.calls.map((c) => [c.end, new Date(c.at!).toISOString()])).toEqual([
      [2, '2026-11-30T10:00:02.000Z'],
      [4, '2026-11-30T10:00:03.000Z'],
    ]);
    expect(t.skipped.notes).toContain('1 side request(s) (not `repl_main_thread`) left out of the conversation');
    expect((t.base.system as Json[])[0]!.text).toBe(billingHeader('2.1.332', 'cli', 'list the files', false));
    expect((t.base.system as Json[])[1]).toEqual({ type: 'text', text: 'You are Claude Code.' });
  });

  test('a last request without its answer is still a call', async () => {
    const log = new Log();
    const prompt = log.user('go');
    log.request('r1', [prompt]);
    const t = await readTranscript(log.write());
    expect(t.calls.map((c) => c.end)).toEqual([1]);
  });

  test('a history rewritten (a compaction) is read from the conversation records, with a note saying why', async () => {
    const log = new Log();
    const prompt = log.user('go');
    log.request('r1', [prompt]);
    const a1 = log.assistant('r1', [toolUse('t1')]);
    const r1 = log.user(toolResult('t1'));
    log.request('r2', [a1, r1], { base: 'r1' });
    log.assistant('r2', [toolUse('t2')]);
    const summary = log.user('Summary of the work so far.', { isCompactSummary: true });
    log.request('r3', [summary], { base: 'r2', keep: 0 });
    log.assistant('r3', [{ type: 'text', text: 'ok' }]);
    const t = await readTranscript(log.write());
    expect(t.skipped.notes).toContain(
      'the log records its requests, but its calls are replayed from the conversation records: request 3 does not extend the one before it (the history was rewritten, as a compaction does)',
    );
    // the records, as before: the full history, no system prompt from the log
    expect(t.base.system).toBeUndefined();
    expect(roles(t.items)).toBe('uauaua');
  });

  test('a request naming a message the log does not hold falls back to the records', async () => {
    const log = new Log();
    const prompt = log.user('go');
    log.request('r1', [prompt, { role: 'system', content: 'never written as a blob' }]);
    log.assistant('r1', [{ type: 'text', text: 'ok' }]);
    const t = await readTranscript(log.write());
    expect(t.skipped.notes.some((n) => /request 1 names a message \([0-9a-f]{12}…\) the log does not hold/.test(n))).toBe(true);
    expect(roles(t.items)).toBe('ua');
  });

  test('several request shapes: replayed with the one most calls were sent with, and a note', async () => {
    const log = new Log();
    log.lines.push({ type: 'api-request-shape', shapeHash: 'shape-2', shape: { system: 'Other prompt.', tools: [] } });
    const prompt = log.user('go');
    log.request('r1', [prompt], { shape: 'shape-2' });
    const a1 = log.assistant('r1', [toolUse('t1')]);
    const r1 = log.user(toolResult('t1'));
    log.request('r2', [a1, r1], { base: 'r1' });
    const a2 = log.assistant('r2', [toolUse('t2')]);
    const r2 = log.user(toolResult('t2'));
    log.request('r3', [a2, r2], { base: 'r2' });
    const t = await readTranscript(log.write());
    expect((t.base.system as Json[])[1]).toEqual({ type: 'text', text: 'You are Claude Code.' });
    expect(t.skipped.notes).toContain(
      '2 request shapes (system prompt and tools) in the log: every call replayed with the one 2 of 3 calls were sent with',
    );
  });
});
