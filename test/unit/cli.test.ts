/**
 * The `spillway` CLI as a user runs it: the bundled dist/cli.js in a child process. Bad input of
 * every kind exits 2 with one line naming what was wrong, never a stack trace.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';
import { CORPUS, LONG_CLAUDE_CODE, SHORT_SESSIONS } from '../support/corpus';

const CLI = join(__dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'spillway-cli-'));
const store = join(dir, 'store');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], input?: string) {
  const r = spawnSync(process.execPath, [CLI, ...args], { input, encoding: 'utf8', env: { ...process.env, SPILLWAY_STORE: store } });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

function expectOneLineError(r: ReturnType<typeof run>, pattern: RegExp) {
  expect(r.code).toBe(2);
  expect(r.out).toBe('');
  const lines = r.err.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^spillway: /);
  expect(lines[0]).toMatch(pattern);
  expect(r.err).not.toMatch(/\n\s+at /);
}

const bigOutput = Array.from({ length: 2000 }, (_, i) => `line ${i}: ${i === 1500 ? 'ERROR something broke in src/app.ts:42' : 'ok'}`).join(
  '\n',
);
const chat = JSON.stringify(
  {
    model: 'gpt-x',
    messages: [
      { role: 'user', content: 'run the tests' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'bash', arguments: '{"cmd":"npm test"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: bigOutput },
    ],
  },
  null,
  2,
);

describe('spillway project', () => {
  it('writes the request unchanged, byte for byte, when nothing is over a limit', () => {
    const small = '{ "messages" : [ {"role":"user","content":"hi \\u00e9"} ], "x": 1.50 }';
    const r = run(['project'], small);
    expect(r.code).toBe(0);
    expect(r.out).toBe(small);
  });

  it('offloads a large tool result, stores it, and writes a report', () => {
    const report = join(dir, 'report.json');
    const r = run(['project', '--store', store, '--report', report], chat);
    expect(r.code).toBe(0);
    const projected = JSON.parse(r.out);
    expect(projected.messages[2].content).toMatch(/^\[spillway: bash output offloaded/);
    const rep = JSON.parse(readFileSync(report, 'utf8'));
    expect(rep.reductions).toHaveLength(1);
    expect(Object.keys(rep.reductions[0]).sort()).toEqual(
      ['callId', 'handle', 'originalChars', 'originalTokens', 'projectedChars', 'projectedTokens', 'reason', 'stage', 'tool'].sort(),
    );
    expect(rep.reductions[0]).toMatchObject({ callId: 'call_1', tool: 'bash', stage: 'offload', originalChars: bigOutput.length });
    expect(rep.stats.projectedTokens).toBeLessThan(rep.stats.originalTokens);
    const back = run(['read', rep.reductions[0].handle, '--store', store]);
    expect(back.code).toBe(0);
    expect(back.out).toBe(bigOutput);
  });

  it("lists in the report the file input a clear replaced with its call's result, by: clear", () => {
    const content = 'print("written")\n'.repeat(400);
    const call = (id: string, name: string, args: unknown) => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
    });
    const request = JSON.stringify({
      model: 'gpt-x',
      messages: [
        { role: 'user', content: 'write it, then run it' },
        call('w', 'Write', { file_path: '/repo/w.py', content }),
        { role: 'tool', tool_call_id: 'w', content: 'File created' },
        call('b', 'bash', { cmd: 'python w.py' }),
        { role: 'tool', tool_call_id: 'b', content: 'ran\n'.repeat(2_000) },
        call('c', 'bash', { cmd: 'ls' }),
        { role: 'tool', tool_call_id: 'c', content: 'ok' },
      ],
    });
    const cfg = join(dir, 'clear-inputs.json');
    writeFileSync(
      cfg,
      JSON.stringify({
        offload: { enabled: false },
        inputs: { when: 'clear' },
        clear: { triggerTokens: 1_000, keep: 1, clearAtLeastTokens: 0, schedule: 'trigger', inUseCalls: 0 },
      }),
    );
    const report = join(dir, 'report-inputs.json');
    const r = run(['project', '--config', cfg, '--store', store, '--report', report], request);
    expect(r.code).toBe(0);
    const rep = JSON.parse(readFileSync(report, 'utf8'));
    expect(rep.inputs).toHaveLength(1);
    expect(rep.inputs[0]).toMatchObject({ callId: 'w', tool: 'Write', by: 'clear' });
    expect(rep.inputs[0].reason).toContain('by a clear');
    expect(rep.inputs[0].projectedTokens).toBeLessThan(rep.inputs[0].originalTokens);
    expect(JSON.parse(run(['read', rep.inputs[0].handle, '--store', store]).out)).toEqual({ file_path: '/repo/w.py', content });
  });

  it('applies a preset and a config file together, the file overriding the preset', () => {
    const cfg = join(dir, 'cfg.json');
    writeFileSync(cfg, JSON.stringify({ preset: 'clark-budget', defaultCap: 100, budget: { enabled: false }, offload: { enabled: true } }));
    const r = run(['project', '--config', cfg, '--store', store], chat);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).messages[2].content).toMatch(/^\[tool_result_budget: clipped bash result of/);
  });

  it('refuses input that is not JSON, naming the offset', () => {
    expectOneLineError(run(['project'], '{"messages": [1, 2'), /standard input: malformed JSON at offset \d+/);
  });
  it('refuses empty input', () => {
    expectOneLineError(run(['project'], ''), /standard input is empty/);
  });
  it('refuses a request whose format it cannot tell', () => {
    expectOneLineError(run(['project'], '{"prompt":"hi"}'), /cannot tell the request format.*"prompt"/);
  });
  it('refuses an unknown format name', () => {
    expectOneLineError(run(['project', '--format', 'cohere'], chat), /unknown --format cohere/);
  });
  it('refuses an unknown flag', () => {
    expectOneLineError(run(['project', '--verbose'], chat), /unknown flag --verbose/);
  });
  it('refuses a flag without its value', () => {
    expectOneLineError(run(['project', '--config'], chat), /--config needs a value/);
  });
  it('refuses an unknown preset', () => {
    expectOneLineError(run(['project', '--preset', 'nope'], chat), /unknown --preset nope/);
  });
  it('refuses a config file that does not exist', () => {
    expectOneLineError(run(['project', '--config', join(dir, 'missing.json')], chat), /cannot read --config .*missing\.json: ENOENT/);
  });
  it('refuses a config file that is not JSON', () => {
    const f = join(dir, 'bad.json');
    writeFileSync(f, '{ nope');
    expectOneLineError(run(['project', '--config', f], chat), /--config .*bad\.json is not valid JSON/);
  });
  it('refuses a config value out of bounds, naming the key', () => {
    const f = join(dir, 'bounds.json');
    writeFileSync(f, JSON.stringify({ window: { recentTurns: 0 } }));
    expectOneLineError(run(['project', '--config', f], chat), /--config .*bounds\.json: window\.recentTurns: .*>=1.*got 0/);
  });
  it('refuses an unknown config key, naming it', () => {
    const f = join(dir, 'unknown.json');
    writeFileSync(f, JSON.stringify({ defaultcap: 10 }));
    expectOneLineError(run(['project', '--config', f], chat), /defaultcap: unknown setting/);
  });
  it('refuses a wrongly typed messages field, naming it', () => {
    expectOneLineError(run(['project', '--format', 'openai-chat'], '{"messages": {"role": "user"}}'), /"messages" must be an array/);
  });
  it('refuses a positional argument', () => {
    expectOneLineError(run(['project', 'request.json'], chat), /unexpected argument "request\.json"/);
  });
});

describe('spillway read', () => {
  const text = Array.from({ length: 30 }, (_, i) => `row ${i + 1}${i === 19 ? ' needle' : ''}`).join('\n');
  let handle = '';
  it('prints a stored output whole, by lines, by grep with context, and by offset and limit', () => {
    const big = JSON.stringify({
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c9', type: 'function', function: { name: 'cat', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c9', content: text },
      ],
    });
    const cfg = join(dir, 'tiny.json');
    writeFileSync(cfg, JSON.stringify({ defaultCap: 10, previewChars: 0 }));
    const p = run(['project', '--config', cfg, '--store', store, '--report', join(dir, 'r2.json')], big);
    expect(p.code).toBe(0);
    handle = JSON.parse(readFileSync(join(dir, 'r2.json'), 'utf8')).reductions[0].handle;
    expect(run(['read', handle, '--store', store]).out).toBe(text);
    expect(run(['read', handle, '--store', store, '--lines', '2:3']).out).toBe('row 2\nrow 3\n');
    const g = run(['read', handle, '--store', store, '--grep', 'needle', '--context', '1']).out;
    expect(g).toContain('20');
    expect(g).toContain('row 20 needle');
    expect(g).toContain('row 19');
    expect(g).toContain('row 21');
    expect(g).not.toContain('row 18');
    expect(run(['read', handle, '--store', store, '--offset', '4', '--limit', '3']).out).toBe('1\nr');
    const meta = JSON.parse(run(['read', handle, '--store', store, '--lines', '1:1', '--json']).out);
    expect(meta).toMatchObject({ handle, totalLines: 30 });
  });
  it('refuses a missing handle argument', () => {
    expectOneLineError(run(['read']), /missing HANDLE/);
  });
  it('refuses a handle that tries to leave the store', () => {
    expectOneLineError(run(['read', '../../etc/passwd', '--store', store]), /not a Spillway handle/);
  });
  it('refuses a handle with slashes', () => {
    expectOneLineError(run(['read', 'sw_0123/../../x', '--store', store]), /not a Spillway handle/);
  });
  it('says when a handle is not in the store', () => {
    expectOneLineError(
      run(['read', 'sw_0123456789abcdef01234567', '--store', store]),
      /no stored output with handle sw_0123456789abcdef01234567/,
    );
  });
  it('refuses a malformed line range', () => {
    expectOneLineError(run(['read', 'sw_0123456789abcdef01234567', '--store', store, '--lines', 'a-b']), /lines/);
  });
  it('refuses a bad regular expression', () => {
    expectOneLineError(run(['read', handle || 'sw_0123456789abcdef01234567', '--store', store, '--grep', '(']), /grep|regular expression/i);
  });
  it('refuses a negative offset', () => {
    expectOneLineError(run(['read', 'sw_0123456789abcdef01234567', '--offset', '-1']), /--offset must be at least 0/);
  });
});

describe('spillway replay', () => {
  it('replays a real Claude Code session and prints per-call figures and totals as JSON with --json', () => {
    const r = run([
      'replay',
      SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!,
      '--preset',
      'oracle-offload',
      '--json',
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out);
    expect(out.format).toBe('claude-code');
    expect(out).toMatchObject({ model: 'claude-sonnet-4-20250514', family: 'anthropic' });
    expect(out.calls[0]).toHaveProperty('missedIdsBefore');
    expect(out.totals).toHaveProperty('missedIdsBefore');
    expect(out.totals).toHaveProperty('referencedIdsBefore');
    expect(out.calls).toHaveLength(10);
    expect(Object.keys(out.calls[0])).toEqual(
      expect.arrayContaining([
        'index',
        'originalTokens',
        'projectedTokens',
        'reductions',
        'cachedPrefixTokens',
        'cacheStable',
        'referencedIds',
        'missedIds',
        'missed',
      ]),
    );
    expect(out.totals).toMatchObject({ calls: 10, recoverable: true });
    expect(out.totals.projectedTokens).toBeLessThan(out.totals.originalTokens);
    expect(out.totals.skippedRecords).toBeGreaterThan(0);
    expect(out.totals.cost.anthropic.relative).toBeGreaterThan(0);
    // cost with read-backs: the projection's cost plus what its misses cost to read back, per call and in total
    expect(Object.keys(out.calls[0].cost)).toEqual(['anthropic', 'openai', 'openai-4o', 'deepseek', 'gemini']);
    expect(Object.keys(out.calls[0].cost.openai)).toEqual(['raw', 'projected', 'readBack']);
    const withReads = out.calls.reduce(
      (a: number, c: { cost: { anthropic: { projected: number; readBack: number } } }) =>
        a + c.cost.anthropic.projected + c.cost.anthropic.readBack,
      0,
    );
    expect(out.totals.costWithReadBacks.anthropic.projected).toBeCloseTo(withReads, 6);
    expect(out.totals.costWithReadBacks.openai.relative).toBeGreaterThanOrEqual(out.totals.cost.openai.relative);
    // what hid each miss, per call: its cause and tool, and the read-backs the call's misses imply
    const missed = out.calls.flatMap((c: { missed: { cause: string }[] }) => c.missed);
    expect(missed.length).toBe(out.totals.missedIds);
    expect(missed.length).toBeGreaterThan(0);
    for (const m of missed) expect(m).toMatchObject({ cause: 'offload', tool: expect.any(String), handle: expect.stringMatching(/^sw_/) });
    const reads = out.calls.flatMap((c: { readBacks: { cause: string; ids: string[] }[] }) => c.readBacks);
    expect(reads.length).toBe(out.totals.readBacks);
    expect(out.totals.missCauses).toEqual({ offload: { ids: out.totals.missedIds, readBacks: out.totals.readBacks } });
  });
  it('says how many calls found the cache cold after a pause, in the summary and per call in --json', () => {
    // the long Claude Code session pauses over 5 minutes six times, once over an hour
    const text = run(['replay', LONG_CLAUDE_CODE]);
    expect(text.code).toBe(0);
    expect(text.out).toMatch(/^cache cold after a pause: 6 calls \(anthropic, over 5 min\), 1 \(openai, openai-4o, over 1 h\)$/m);
    const out = JSON.parse(run(['replay', LONG_CLAUDE_CODE, '--json']).out);
    expect(out.totals.coldCalls).toEqual({ anthropic: 6, openai: 1, 'openai-4o': 1, deepseek: 0, gemini: 0 });
    const cold = out.calls.filter((c: { coldFor?: string[] }) => c.coldFor?.includes('anthropic'));
    expect(cold).toHaveLength(6);
    for (const c of cold) expect(c.gapMs).toBeGreaterThan(5 * 60_000);
  }, 60_000);

  it('adds the oracle and the floor to the totals with --limits, in the units of the calls raw cost', () => {
    const f = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;
    const out = JSON.parse(run(['replay', f, '--json', '--limits']).out);
    const raw = (p: string) => out.calls.reduce((a: number, c: { cost: Record<string, { raw: number }> }) => a + c.cost[p]!.raw, 0);
    for (const p of ['anthropic', 'openai']) {
      expect(out.totals.limits.oracle[p]).toBeLessThan(raw(p));
      expect(out.totals.limits.floor[p]).toBeLessThanOrEqual(out.totals.limits.oracle[p]);
    }
    expect(out.totals.limits.oracleMisses).toBe(0);
    expect(JSON.parse(run(['replay', f, '--json']).out).totals).not.toHaveProperty('limits');
  });

  it("reports the share of the oracle's saving kept first among the limit lines of the summary with --limits", () => {
    const f = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;
    const r = run(['replay', f, '--limits']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^the limit: .*\n {2}share of the oracle's saving kept, with read-backs: anthropic .*\n {2}oracle \(of raw\): /m);
    for (const line of r.out.split('\n')) expect(line.length).toBeLessThanOrEqual(100);
  });

  it('is deterministic', () => {
    const f = SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!;
    expect(run(['replay', f, '--preset', 'oracle-offload']).out).toBe(run(['replay', f, '--preset', 'oracle-offload']).out);
  });

  it('prints a summary for people by default, every line within 100 columns', () => {
    const f = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;
    const r = run(['replay', f, '--preset', 'oracle-offload']);
    expect(r.code).toBe(0);
    expect(r.err).toBe(''); // not a terminal: no progress
    expect(() => JSON.parse(r.out)).toThrow();
    const lines = r.out.trimEnd().split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(100);
    const json = JSON.parse(run(['replay', f, '--preset', 'oracle-offload', '--json']).out);
    expect(r.out).toContain(`${json.totals.calls} turns (model calls, numbered from 1)`);
    expect(r.out).toMatch(/miss rate .*; previous definition /);
    // one cost line per price model, the session's own marked, with and without read-backs
    for (const name of Object.keys(json.totals.cost))
      expect(r.out).toMatch(new RegExp(`^${name}( \\*)? +\\S+ +\\S+ +[−+±][\\d.]+% +\\S+ +[−+±][\\d.]+%$`, 'm'));
    expect(r.out).toMatch(/^anthropic \*/m);
    expect(r.out).toMatch(/^\* claude-sonnet-4-20250514: input \$[\d.]+ raw → \$[\d.]+ sent/m);
    expect(r.out).toMatch(/tokens saved by tool|nothing was reduced/);
    expect(r.out).toMatch(/turns with clears|no clears/);
    // the misses by cause, and the worst calls with what hid their identifiers
    expect(r.out).toMatch(new RegExp(`^  offloaded on arrival +${json.totals.missedIds} +100\\.0% +${json.totals.readBacks}$`, 'm'));
    const worst = [...json.calls].sort((a, b) => b.missedIds - a.missedIds)[0];
    // numbered from 1 as the inspector numbers turns; --json's index counts from 0
    expect(r.out).toContain(`  turn ${worst.index + 1}: ${worst.missedIds} of ${worst.referencedIds} identifiers missed`);
    expect(r.out).toMatch(/^ {4}\d+ \w+( .+)?, offloaded on arrival in turn \d+: /m);
  });

  it('replays every session under a folder: a row each, the pooled row, files in no format counted and Markdown ignored', () => {
    // long enough that the first line must cut the folder to stay within 100 columns
    const folder = join(dir, 'sessions', 'a-folder-whose-name-alone-is-longer-than-the-first-line-has-room-for');
    mkdirSync(join(folder, 'nested'), { recursive: true });
    const a = SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!;
    const b = SHORT_SESSIONS['mini-swe-agent__deepseek_bench1__django__django-14752.traj.json']!;
    copyFileSync(a, join(folder, 'katy.traj'));
    copyFileSync(b, join(folder, 'nested', 'django.traj.json'));
    writeFileSync(join(folder, 'README.md'), '# sessions\n');
    writeFileSync(join(folder, 'notes.txt'), 'just some notes\n');
    const r = run(['replay', folder]);
    expect(r.code).toBe(0);
    for (const line of r.out.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(r.out).toMatch(/2 sessions replayed, 1 file\(s\) in no transcript format skipped/);
    expect(r.out).toMatch(/^katy +18 /m);
    expect(r.out).toMatch(/^django-14752|^django +31 /m);
    expect(r.out).toMatch(/^pooled \(2\) +49 /m);
    // the pooled figures are the sums of the sessions' own, as the benchmark pools them
    const json = JSON.parse(run(['replay', folder, '--json']).out);
    expect(json.sessions.map((s: { file: string }) => s.file)).toEqual(['katy.traj', join('nested', 'django.traj.json')]);
    expect(json.skippedFiles).toEqual(['notes.txt']);
    const one = (f: string) => JSON.parse(run(['replay', f, '--json']).out).totals;
    const [ta, tb] = [one(a), one(b)];
    expect(json.pooled.calls).toBe(ta.calls + tb.calls);
    expect(json.pooled.cost.anthropic.raw).toBeCloseTo(ta.cost.anthropic.raw + tb.cost.anthropic.raw, 6);
    expect(json.pooled.missedIdsBefore).toBe(ta.missedIdsBefore + tb.missedIdsBefore);
    expect(json.pooled.readBacks).toBe(ta.readBacks + tb.readBacks);
    expect(json.worstCalls).toEqual([]);
  });

  it('replays a Copilot chat session VS Code kept twice (its old .json beside the .jsonl log) once, from the log', () => {
    const chats = join(dir, 'workspaceStorage', 'ws1', 'chatSessions');
    mkdirSync(chats, { recursive: true });
    const small = (name: string) => join(__dirname, '..', 'fixtures', 'transcripts', 'small', name);
    copyFileSync(small('copilot-chat-session.jsonl'), join(chats, 'one.jsonl'));
    copyFileSync(small('copilot-chat-session.json'), join(chats, 'one.json'));
    // a session only the old document holds is still replayed
    copyFileSync(small('copilot-chat-session.json'), join(chats, 'two.json'));
    const json = JSON.parse(run(['replay', chats, '--json']).out);
    expect(json.sessions.map((s: { file: string }) => s.file)).toEqual(['one.jsonl', 'two.json']);
    expect(json.supersededFiles).toEqual(['one.json']);
    expect(json.pooled.calls).toBe(2 * json.sessions[0].totals.calls);
    const r = run(['replay', chats]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/2 sessions replayed, 1 older Copilot chat file\(s\) left out for their \.jsonl log/);
  });

  it('follows symbolic links in a folder: to a session (once), to a folder of sessions, never round a loop; a broken one is passed over', () => {
    const small = (name: string) => join(__dirname, '..', 'fixtures', 'transcripts', 'small', name);
    const elsewhere = join(dir, 'linked-elsewhere');
    mkdirSync(join(elsewhere, 'more'), { recursive: true });
    copyFileSync(small('copilot-chat-session.jsonl'), join(elsewhere, 'one.jsonl'));
    copyFileSync(small('cline-task-roo.json'), join(elsewhere, 'more', 'two.json'));
    const folder = join(dir, 'links');
    mkdirSync(folder, { recursive: true });
    symlinkSync(join(elsewhere, 'one.jsonl'), join(folder, 'a.jsonl'));
    symlinkSync(join(elsewhere, 'more'), join(folder, 'b'));
    // a link back up the tree, a second link to a session already linked, and one to nothing
    symlinkSync(folder, join(folder, 'b', 'up'));
    symlinkSync(join(elsewhere, 'one.jsonl'), join(folder, 'again.jsonl'));
    symlinkSync(join(elsewhere, 'gone.jsonl'), join(folder, 'c.jsonl'));
    const json = JSON.parse(run(['replay', folder, '--json']).out);
    expect(json.sessions.map((s: { file: string }) => s.file)).toEqual(['a.jsonl', join('b', 'two.json')]);
    expect(json.skippedFiles).toEqual([]);
  });

  it("names each task of a Cline-family tasks folder by its task's folder, since every task's file is named alike", () => {
    const folder = join(dir, 'roo-tasks');
    for (const id of ['task-a', 'task-b']) {
      mkdirSync(join(folder, 'tasks', id), { recursive: true });
      copyFileSync(
        join(__dirname, '..', 'fixtures', 'transcripts', 'small', 'cline-task-roo.json'),
        join(folder, 'tasks', id, 'api_conversation_history.json'),
      );
      writeFileSync(
        join(folder, 'tasks', id, 'ui_messages.json'),
        JSON.stringify([{ ts: 1764000000000, type: 'say', say: 'text', text: 'hi' }]),
      );
    }
    const r = run(['replay', folder]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/2 sessions replayed, 2 file\(s\) in no transcript format skipped/);
    expect(r.out).toMatch(/^task-a +3 /m);
    expect(r.out).toMatch(/^task-b +3 /m);
  });

  it("a folder's summary and JSON break the pooled misses down by cause and name the worst calls of all its sessions", () => {
    const folder = join(dir, 'sessions-with-misses');
    mkdirSync(folder, { recursive: true });
    // a Claude Code research sub-agent (19 calls): since the engine counts Codex's encrypted reasoning as
    // billed (not at all), the Codex pomodoro session no longer grows enough to clear
    copyFileSync(join(CORPUS, 'dev/claude-code/M-Thisness__subagent-cosmic-research-ae346a8.jsonl'), join(folder, 'research.jsonl'));
    copyFileSync(SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!, join(folder, 'katy.traj'));
    // the default leaves these short sessions' outputs whole while in use and misses nothing in them:
    // offloads on arrival and clears by age make the misses whose summary this test reads
    const config = join(dir, 'misses-config.json');
    writeFileSync(
      config,
      JSON.stringify({ 'offload.keepReads': 0, 'clear.inUseCalls': 0, 'inputs.when': 'arrival', 'clear.schedule': 'trigger' }),
    );
    const json = JSON.parse(run(['replay', folder, '--json', '--config', config]).out);
    const single = JSON.parse(run(['replay', join(folder, 'research.jsonl'), '--json', '--config', config]).out);
    expect(json.pooled.missCauses).toEqual(single.totals.missCauses);
    expect(json.pooled.missedIds).toBeGreaterThan(0);
    expect(json.worstCalls[0]).toMatchObject({ file: 'research.jsonl', missedIds: expect.any(Number), missed: expect.any(Array) });
    const r = run(['replay', folder, '--config', config]);
    for (const line of r.out.trimEnd().split('\n')) expect(line.length, line).toBeLessThanOrEqual(100);
    expect(r.out).toContain('misses by cause');
    expect(r.out).toMatch(new RegExp(`^  research, turn ${json.worstCalls[0].index + 1}: ${json.worstCalls[0].missedIds} of `, 'm'));
  });

  it("adds Claude Code's system prompt and tools to every call by default, says so, and leaves them out with --agent-prelude off", () => {
    const f = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;
    const on = JSON.parse(run(['replay', f, '--json']).out);
    const off = JSON.parse(run(['replay', f, '--json', '--agent-prelude', 'off']).out);
    expect(on.prelude).toMatchObject({ agent: 'claude-code', version: expect.any(String), fields: ['system', 'tools'] });
    expect(on.prelude.tokens).toBeGreaterThan(5_000);
    expect(off.prelude).toBeNull();
    // the same prelude in raw history and projection: both bills grow
    expect(on.totals.cost.anthropic.raw).toBeGreaterThan(off.totals.cost.anthropic.raw);
    expect(on.totals.cost.anthropic.projected).toBeGreaterThan(off.totals.cost.anthropic.projected);
    expect(run(['replay', f]).out).toMatch(
      new RegExp(
        `^agent prelude: Claude Code ${on.prelude.version.replace(/\./g, '\\.')}'s system prompt and tools, [\\d.]+k tokens a call`,
        'm',
      ),
    );
    expect(run(['replay', f, '--agent-prelude', 'off']).out).toMatch(
      /^agent prelude off: calls without Claude Code's system prompt and tools/m,
    );
    expectOneLineError(run(['replay', f, '--agent-prelude', 'maybe']), /--agent-prelude is on or off, not "maybe"/);
  });

  it('--each-route takes each other provider’s columns from a replay routed there, and --provider routes the whole replay', () => {
    const f = join(__dirname, '../fixtures/sessions/dev/claude-code/M-Thisness__windows-admin-e5821007.jsonl');
    // the clear settings under which the Anthropic projection was dearer at GPT-5's prices (the
    // default until 2026-12-01; the default since makes it cheaper there, so the case needs these)
    const cfg = join(dir, 'each-route.json');
    writeFileSync(cfg, JSON.stringify({ 'clear.inUseCalls': 8, 'clear.triggerTokens': 30_000 }));
    const c = ['--config', cfg];
    const own = JSON.parse(run(['replay', f, '--json', ...c]).out);
    const each = JSON.parse(run(['replay', f, '--json', '--each-route', ...c]).out);
    const routed = JSON.parse(run(['replay', f, '--json', '--provider', 'openai', ...c]).out);
    expect(own.totals.routedAs).toBeUndefined();
    expect(each.totals.routedAs.openai).toEqual({
      provider: 'openai',
      missedIds: routed.totals.missedIds,
      referencedIds: routed.totals.referencedIds,
    });
    expect(each.totals.cost.openai).toEqual(routed.totals.cost.openai);
    expect(each.totals.cost.anthropic).toEqual(own.totals.cost.anthropic);
    // the projection made for Anthropic is dearer than raw at GPT-5's prices; routed there, it is not
    expect(own.totals.cost.openai.relative).toBeGreaterThan(1);
    expect(each.totals.cost.openai.relative).toBeLessThanOrEqual(1);
    const human = run(['replay', f, '--each-route', ...c]).out;
    expect(human).toMatch(/^openai †/m);
    expect(human).toMatch(/^† replayed as if sent to its provider/m);
    expect(run(['replay', f, ...c]).out).toMatch(/^other rows price the projection made for anthropic \(\*\)/m);
    expectOneLineError(run(['replay', f, '--provider', 'bedrock']), /--provider is one of anthropic, openai, openai-4o, not "bedrock"/);
  });

  it('refuses a folder with no transcript in it, and --instance with a folder', () => {
    const empty = join(dir, 'no-sessions');
    mkdirSync(empty, { recursive: true });
    writeFileSync(join(empty, 'notes.txt'), 'nothing here\n');
    expectOneLineError(run(['replay', empty]), /no-sessions holds no transcript \(1 file/);
    expectOneLineError(
      run(['replay', dir, '--instance', 'x']),
      /--instance picks one OpenHands instance or Copilot CLI sub-agent of one file/,
    );
  });
  it('refuses a missing transcript argument', () => {
    expectOneLineError(run(['replay']), /missing TRANSCRIPT or DIR/);
  });
  it('refuses a transcript that does not exist', () => {
    expectOneLineError(run(['replay', join(dir, 'nope.jsonl')]), /nope\.jsonl/);
  });
  it('refuses an unknown transcript format', () => {
    expectOneLineError(
      run(['replay', SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!, '--format', 'cohere']),
      /unknown --format cohere/,
    );
  });
  it('refuses a file in no known format, naming it', () => {
    const f = join(dir, 'notes.txt');
    writeFileSync(f, 'just some notes\n');
    expectOneLineError(run(['replay', f]), /notes\.txt/);
  });
});

describe('spillway itself', () => {
  it('refuses an unknown command', () => {
    expectOneLineError(run(['squash']), /unknown command "squash"/);
  });
  it('prints usage with --help', () => {
    const r = run(['--help']);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/spillway project/);
  });
});

describe('the CLI keeps its promises (issue 14, point 6)', () => {
  const handleOf = (text: string) => HANDLE_IN_TEXT.exec(text)![0];
  const stored = () => handleOf(run(['project', '--store', store], chat).out);

  it('a --report in a folder that does not exist is status 2 and one line, and nothing is written to stdout', () => {
    expectOneLineError(
      run(['project', '--store', store, '--report', '/nonexistent/dir/r.json'], chat),
      /cannot write --report \/nonexistent\/dir\/r\.json: the folder \/nonexistent\/dir does not exist/,
    );
  });

  it('a --report path that is a folder is status 2 and one line', () => {
    expectOneLineError(run(['project', '--store', store, '--report', dir], chat), /cannot write --report .*EISDIR/);
  });

  it.each(['project', 'read', 'replay', 'proxy'])("%s --help prints that command's usage and status 0", (command) => {
    const r = run([command, '--help']);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
    expect(r.out).toContain(`spillway ${command} `);
    for (const other of ['project', 'read', 'replay', 'proxy'].filter((c) => c !== command))
      expect(r.out).not.toContain(`spillway ${other} `);
  });

  it('--format that the body contradicts is status 2, naming the format the body proves', () => {
    expectOneLineError(
      run(['project', '--format', 'anthropic-messages'], chat),
      /--format anthropic-messages does not match the request: it is openai-chat \(a message has "tool_calls"\)/,
    );
    const anthropic = JSON.stringify({ model: 'c', system: 's', messages: [{ role: 'user', content: 'hi' }] });
    expectOneLineError(run(['project', '--format', 'openai-chat'], anthropic), /it is anthropic-messages \(it has a top-level "system"\)/);
    expectOneLineError(run(['project', '--format', 'openai-chat'], JSON.stringify({ model: 'm', input: 'hi' })), /it is openai-responses/);
  });

  it('--format on a body that fits more than one format is accepted', () => {
    const plain = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(run(['project', '--format', 'anthropic-messages'], plain)).toMatchObject({ code: 0, out: plain });
  });

  it('replay --format that reads 0 calls from a file is status 2, with the skipped count and a hint', () => {
    expectOneLineError(
      run(['replay', SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!, '--format', 'codex']),
      /gave 0 calls as codex \(368 record\(s\) skipped.*try --format auto/,
    );
  });

  it('read --lines starting past the end is status 2, naming the line count', () => {
    expectOneLineError(
      run(['read', stored(), '--store', store, '--lines', '5000:6000']),
      /--lines 5000:6000 starts past the end: sw_[0-9a-f]{24} has 2000 line\(s\)/,
    );
  });

  it('read --lines that only ends past the end reads to the end', () => {
    const r = run(['read', stored(), '--store', store, '--lines', '1999:5000']);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toBe('line 1998: ok\nline 1999: ok');
  });

  it('read --grep with no match prints nothing, one line on stderr, and status 3', () => {
    const r = run(['read', stored(), '--store', store, '--grep', 'no such text']);
    expect(r.code).toBe(3);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/^spillway: read: --grep "no such text" matched no line of sw_[0-9a-f]{24} \(2000 line\(s\)\)\n$/);
  });

  it('read --grep with a match is status 0', () => {
    expect(run(['read', stored(), '--store', store, '--grep', 'ERROR'])).toMatchObject({ code: 0, err: '' });
  });

  it('a store that is a file is named as the store, not as standard input', () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    expectOneLineError(run(['project', '--store', file], chat), new RegExp(`project: the store ${file} is not a folder`));
    expectOneLineError(
      run(['read', 'sw_0123456789abcdef01234567', '--store', file]),
      new RegExp(`read: the store ${file} is not a folder`),
    );
  });

  it('a store that cannot be written is named, not blamed on standard input', () => {
    const file = join(dir, 'blocker');
    writeFileSync(file, 'x');
    const r = run(['project', '--store', join(file, 'store')], chat);
    expectOneLineError(r, /could not store output sw_[0-9a-f]{24} in .*blocker\/store/);
    expect(r.err).not.toMatch(/standard input/);
  });

  it('the usage lists every flag docs/cli.md documents for each command', () => {
    const page = readFileSync(join(__dirname, '../../docs/cli.md'), 'utf8');
    const block = /```sh\n([\s\S]*?)```/.exec(page)![1]!;
    const documented = new Map<string, Set<string>>();
    let command = '';
    for (const line of block.split('\n')) {
      const m = /^spillway (\w+)/.exec(line);
      if (m) command = m[1]!;
      for (const f of line.matchAll(/--[a-z][a-z-]*/g)) {
        if (!documented.has(command)) documented.set(command, new Set());
        documented.get(command)!.add(f[0]);
      }
    }
    expect([...documented.keys()].sort()).toEqual(['project', 'proxy', 'read', 'replay']);
    for (const [cmd, flags] of documented) {
      const usage = run([cmd, '--help']).out;
      const missing = [...flags].filter((f) => !usage.includes(f));
      expect(missing, `flags of ${cmd} in docs/cli.md but not in its usage`).toEqual([]);
    }
  });

  it('mcp with an extra argument exits 2 with one line naming it', () => {
    expectOneLineError(run(['mcp', 'extra']), /mcp: unexpected argument "extra"/);
  });

  it('mcp on a store that is a file says so before serving anything', () => {
    const file = join(dir, 'not-a-folder');
    writeFileSync(file, 'x');
    expectOneLineError(run(['mcp', '--store', file]), /mcp: the store .* is not a folder/);
  });
});
