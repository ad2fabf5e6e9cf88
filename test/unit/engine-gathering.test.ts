/**
 * Gather, then report (stages/gathering.ts, `clear.keepGathered`): the clear stage leaves alone what
 * the agent gathered (searches, reads, fetches, listings) until the agent has written from it.
 * Tokens are counted one per character, so sizes read as tokens.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newTokenCounter } from '../../src/engine';
import { callKind, isSubAgent, REPORT_MIN_CHARS } from '../../src/engine/stages/gathering';
import { readRequest } from '../../src/engine/formats';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store';
import { perChar, project, triggerClear } from '../support/run';
import { build, transcript, type Step, type ToolStep, type Transcript } from '../support/wire';

/** Claude Code 2.1.330's first system block of a sub-agent request, as captured through a scripted provider. */
const SUB_AGENT_SYSTEM = 'x-anthropic-billing-header: cc_version=2.1.330.806; cc_entrypoint=sdk-cli; cc_is_subagent=true;';
/** The same block of the main agent's requests. */
const MAIN_SYSTEM = 'x-anthropic-billing-header: cc_version=2.1.330.e62; cc_entrypoint=sdk-cli;';

/** A web search's answer: 3,000 characters, with a URL and a title only it holds. */
const search = (i: number): ToolStep => ({
  tool: 'WebSearch',
  args: { query: `cosmic applet topic ${i}` },
  output:
    `Web search results for query: "cosmic applet topic ${i}"\n\nLinks: [{"title":"Applet guide part_${i}","url":"https://example.org/guide/page_${i}.html"}]\n` +
    `${i % 10}`.repeat(3_000 - 150),
});
/** A test run's output of `chars` characters. */
const testRun = (i: number, chars = 3_000): ToolStep => ({
  tool: 'Bash',
  args: { command: `pytest -x tests/t${i}.py` },
  output: `${i % 10}`.repeat(chars),
});
const write: ToolStep = {
  tool: 'Write',
  args: { file_path: '/w/report.md', content: 'short' },
  output: 'File created successfully at: /w/report.md',
};

/** The transcript of `steps` with a system prompt (Anthropic Messages: the system prompt is not an item). */
const withSystem = (system: string, ...steps: Step[]): Transcript => ({ ...transcript(...steps), system });

/** Trigger-only clears from 20,000 tokens, the in-use window of 4 calls, offload off: only the clear decides. */
const config = (keepGathered: boolean) => ({
  offload: { enabled: false },
  inputs: { enabled: false },
  clear: triggerClear({ staleFirst: false, inUseCalls: 4, triggerTokens: 20_000, keepGathered }),
});
const clearedIds = (t: Transcript, keepGathered: boolean) =>
  project(config(keepGathered), t, 'anthropic-messages', { tokenizer: perChar })
    .p.reductions.filter((x) => x.stage === 'clear')
    .map((x) => x.callId);

describe('what a call does, for gather then report', () => {
  it('knows gathering calls by their tool or their command', () => {
    for (const hint of [
      { tool: 'WebSearch' },
      { tool: 'WebFetch' },
      { tool: 'Read' },
      { tool: 'Grep' },
      { tool: 'Glob' },
      { tool: 'Bash', command: 'rg -n parseConfig src' },
      { tool: 'Bash', command: 'find /usr/share -name "*cosmic*" 2>/dev/null | head -20' },
      { tool: 'Bash', command: 'strings /usr/bin/cosmic-applets | grep -i cosmic' },
      { tool: 'Bash', command: 'git log --oneline -5' },
      { tool: 'shell', command: 'sed -n 1,200p src/a.py' },
      { tool: 'shell', command: 'for f in specs/contracts/*.md; do echo "--- $f"; cat "$f"; echo; done' },
      { tool: 'Bash', command: 'pacman -Qi cosmic-panel' },
      { tool: 'str_replace_editor', command: 'view' },
      { tool: 'mcp__spillway__read_output' },
    ])
      expect(callKind(hint), JSON.stringify(hint)).toBe('gather');
  });

  it('knows writes: file tools, heredocs, redirects, sed -i, patches and reports', () => {
    for (const hint of [
      { tool: 'Write' },
      { tool: 'Edit' },
      { tool: 'apply_patch' },
      { tool: 'edit' },
      { tool: 'str_replace_editor', command: 'create' },
      { tool: 'ReportFindings' },
      { tool: 'bash', command: "cat > reproduce.py << 'EOF'\nprint(1)\nEOF" },
      { tool: 'Bash', command: 'grep -n foo src/a.py > /tmp/hits.txt' },
      { tool: 'bash', command: "sed -i 's/a/b/' src/a.py" },
      { tool: 'Bash' }, // a shell command too long to read
    ])
      expect(callKind(hint), JSON.stringify(hint)).toBe('write');
  });

  it('counts anything else a shell runs as acting, and planning tools as neither', () => {
    expect(callKind({ tool: 'Bash', command: 'pytest -x' })).toBe('act');
    expect(callKind({ tool: 'Bash', command: 'python reproduce.py' })).toBe('act');
    expect(callKind({ tool: 'Bash', command: 'grep -c x a.txt 2>/dev/null' })).toBe('gather');
    expect(callKind({ tool: 'TodoWrite' })).toBe('neutral');
    expect(callKind({ tool: 'BashOutput' })).toBe('neutral');
  });

  it('recognises a Claude Code sub-agent by its system prompt, and not the main agent', () => {
    const req = (system: string) =>
      readRequest(JSON.stringify(build(withSystem(system, 'q', search(1)), 'anthropic-messages')), 'anthropic-messages');
    expect(isSubAgent(req(SUB_AGENT_SYSTEM))).toBe(true);
    expect(isSubAgent(req("You are an agent for Claude Code, Anthropic's official CLI for Claude. Given the user's message, …"))).toBe(
      true,
    );
    expect(isSubAgent(req(MAIN_SYSTEM))).toBe(false);
  });
});

describe('clear stage: gathered material is kept until the agent has written from it', () => {
  // fifteen searches, then the call that writes the report from them (the request ends with the last search)
  const searches = Array.from({ length: 15 }, (_, i) => search(i + 1));

  it('takes no search result of a session that has only searched so far', () => {
    const t = withSystem(MAIN_SYSTEM, 'research cosmic applets', ...searches);
    // without the rule the in-use window lets the clear take the first searches, which the report will cite
    expect(clearedIds(t, false).length).toBeGreaterThan(0);
    expect(clearedIds(t, true)).toEqual([]);
  });

  it('takes no search result of a sub-agent before its report, though it also ran a test', () => {
    const t = withSystem(SUB_AGENT_SYSTEM, 'research cosmic applets', ...searches.slice(0, 7), testRun(1), ...searches.slice(7));
    expect(clearedIds(t, true).filter((id) => id !== 'call_8')).toEqual([]);
  });

  it('takes the searches once a session that is not a sub-agent has acted after them', () => {
    // seven searches, then test runs: the session has moved on, the in-use window decides again
    const runs = Array.from({ length: 8 }, (_, i) => testRun(i, 4_000));
    const t = withSystem(MAIN_SYSTEM, 'fix the applet', ...searches.slice(0, 7), ...runs);
    expect(clearedIds(t, true)).toContain('call_1');
  });

  it('takes the searches once the agent has written from them', () => {
    const runs = Array.from({ length: 8 }, (_, i) => testRun(i, 4_000));
    const sub = withSystem(SUB_AGENT_SYSTEM, 'research and write it down', ...searches.slice(0, 7), write, ...runs);
    expect(clearedIds(sub, true)).toContain('call_1');
    // a report in the agent's text counts as writing too
    const report = withSystem(SUB_AGENT_SYSTEM, 'research', ...searches.slice(0, 7));
    report.items.push(
      { kind: 'assistant', text: 'Findings: '.padEnd(REPORT_MIN_CHARS, '.'), calls: [] },
      { kind: 'user', text: 'now check the tests' },
    );
    const after = transcript(...runs);
    const t: Transcript = { ...report, items: [...report.items, ...after.items.map((x) => renumber(x, 100))] };
    expect(clearedIds(t, true)).toContain('call_1');
  });

  it('keeps the searches through the run of writes that follows them, and takes them after it', () => {
    // twelve searches, then six writes in a row (a report written one file at a time), then test runs
    const writes = Array.from({ length: 6 }, () => write);
    const runs = Array.from({ length: 8 }, (_, i) => testRun(i, 4_000));
    const main = (...after: Step[]) => withSystem(MAIN_SYSTEM, 'research and write it down', ...searches.slice(0, 12), ...after);
    // without the rule the clear takes the first searches while the agent writes from them
    expect(clearedIds(main(...writes), false)).toContain('call_1');
    // with it nothing is taken while the run of writes goes on, the reply still to come included
    expect(clearedIds(main(...writes), true)).toEqual([]);
    // a test run ends the run: the session has moved on, and the in-use window decides again
    expect(clearedIds(main(...writes, ...runs), true)).toContain('call_1');
    // the same for a sub-agent, whose test runs do not end a gathering: a write, then a search ends the run
    const sub = (...after: Step[]) => withSystem(SUB_AGENT_SYSTEM, 'research and write it down', ...searches.slice(0, 12), ...after);
    expect(clearedIds(sub(...writes), true)).toEqual([]);
    expect(clearedIds(sub(...writes, search(20), ...runs), true)).toContain('call_1');
  });

  it('decides the same when the same request is projected again (sticky)', () => {
    const t = withSystem(MAIN_SYSTEM, 'research', ...searches);
    const a = project(config(true), t, 'anthropic-messages', { tokenizer: perChar });
    const b = project(config(true), t, 'anthropic-messages', { tokenizer: perChar });
    expect(b.p.request).toBe(a.p.request);
  });
});

/** An item with its call ids moved by `by` (so a second transcript's ids do not collide with the first's). */
function renumber(item: Transcript['items'][number], by: number): Transcript['items'][number] {
  const id = (s: string) => s.replace(/\d+$/, (d) => String(Number(d) + by));
  if (item.kind === 'assistant') return { ...item, calls: item.calls.map((c) => ({ ...c, id: id(c.id) })) };
  if (item.kind === 'results') return { ...item, results: item.results.map((r) => ({ ...r, callId: id(r.callId) })) };
  return item;
}

describe('the corpus sub-agent sessions replay with no more misses', () => {
  const SESSIONS = join(__dirname, '../fixtures/sessions');
  const SUB_AGENTS = [
    'dev/claude-code/M-Thisness__subagent-cosmic-research-ae346a8.jsonl',
    ...['a00c619', 'a41f3dc', 'a52c2b7', 'a5e7369', 'a70e460', 'aabf2dd', 'abae753', 'ad2309b'].map(
      (id) => `dev3/claude-code/randlee__claude-history-subagent-${id}.jsonl`,
    ),
  ];
  const counter = newTokenCounter('o200k_base');
  for (const file of SUB_AGENTS)
    it(`${file.replace(/^.*\//, '')}: misses with the rule are no more than without it`, async () => {
      const t = await readTranscript(join(SESSIONS, file));
      const missed = (keepGathered: boolean) =>
        replay(t, { config: { preset: 'spillway', 'clear.keepGathered': keepGathered }, tokenizer: counter, store: new MemoryStore() })
          .totals.missedIds;
      expect(missed(true)).toBeLessThanOrEqual(missed(false));
    }, 120_000);
});
