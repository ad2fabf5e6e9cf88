/**
 * The agent's prelude (src/replay/prelude.ts): the captured system prompt and tools of Claude Code and
 * Codex (test/fixtures/agent-preludes.json, written by the agents suite) are well-formed, are added to
 * every call of those agents' logs and only where the log lacks them, and are billed in raw history and
 * projection alike.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLAUDE_CODE, CODEX } from '../agents/install';
import { agentPrelude, AGENT_PRELUDES_FILE, parseAgentPreludes, withAgentPrelude } from '../../src/replay/prelude';
import { readTranscript, requestForCall, type Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { replayDetail } from '../../src/extension/inspector/replaySource';
import { isSubAgent } from '../../src/engine/stages/gathering';
import { readRequest } from '../../src/engine/formats';
import { ReductionCollector, sessionSummary } from '../../src/cli/replay-summary';
import { CORPUS, SHORT_SESSIONS } from '../support/corpus';

const FILE = join(__dirname, '..', 'fixtures', AGENT_PRELUDES_FILE);
const CLAUDE_SESSION = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;
const CODEX_SESSION = SHORT_SESSIONS['ai-sessions__codex-pomodor-timer.jsonl']!;
/** a Claude Code sub-agent's transcript: every user and assistant record a sidechain record */
const SUB_AGENT_SESSION = join(CORPUS, 'dev3/claude-code/randlee__claude-history-subagent-a00c619.jsonl');

describe('the captured preludes', () => {
  const preludes = parseAgentPreludes(JSON.parse(readFileSync(FILE, 'utf8')), FILE);

  it('are well-formed and were captured from the versions the agents suite pins', () => {
    expect(preludes.agents['claude-code']?.version).toBe(CLAUDE_CODE.version);
    expect(preludes.agents.codex?.version).toBe(CODEX.version);
  });

  it("hold Claude Code's system prompt with its Bash tool, and Codex's instructions with its shell tool", () => {
    const cc = preludes.agents['claude-code']!.fields;
    expect(JSON.stringify(cc.system)).toContain('You are');
    expect(cc.tools.map((t) => t.name)).toContain('Bash');
    const codex = preludes.agents.codex!.fields;
    expect(codex.instructions).toMatch(/^You are a coding agent running in the Codex CLI/);
    expect(codex.tools.map((t) => t.name)).toContain('exec_command');
  });

  it("hold a Claude Code sub-agent's own: its first block marked as a sub-agent's, fewer tools than the main agent's, the same version", () => {
    const sub = preludes.agents['claude-code-subagent']!;
    expect(sub.version).toBe(CLAUDE_CODE.version);
    const system = sub.fields.system as { text: string }[];
    expect(system[0]!.text).toMatch(/cc_is_subagent=true;$/);
    expect(JSON.stringify(preludes.agents['claude-code']!.fields.system)).not.toContain('cc_is_subagent');
    expect(sub.fields.tools.map((t) => t.name)).toContain('Bash');
    expect(sub.fields.tools.length).toBeLessThan(preludes.agents['claude-code']!.fields.tools.length);
  });

  it('hold nothing of the run that captured them: no temporary folder, no key', () => {
    const text = readFileSync(FILE, 'utf8');
    expect(text).not.toMatch(/sw-agents-[A-Za-z0-9]{6}/);
    expect(text).not.toMatch(/sk-(ant|proj)-/);
  });

  it('a malformed file is an error naming the file and the field', () => {
    expect(() => parseAgentPreludes({ about: '', agents: { codex: { version: '1', captured: 'today', fields: {} } } }, 'x.json')).toThrow(
      /^x\.json: agents\.codex\.captured: /,
    );
  });
});

describe('replays with the prelude', () => {
  it("adds Claude Code's system prompt and tools to every call of a Claude Code log, which holds neither", async () => {
    const t = await readTranscript(CLAUDE_SESSION);
    expect(t.base.system).toBeUndefined();
    const { transcript, prelude } = withAgentPrelude(t);
    expect(prelude).toEqual({ agent: 'claude-code', version: CLAUDE_CODE.version, fields: ['system', 'tools'] });
    const p = agentPrelude('claude-code')!;
    for (const k of [0, transcript.calls.length - 1]) {
      const req = requestForCall(transcript, k);
      expect(req.system).toEqual(p.fields.system);
      expect(req.tools).toEqual(p.fields.tools);
    }
    expect(transcript.items).toBe(t.items);
    expect(t.base.system).toBeUndefined();
  });

  it("gives a sub-agent's transcript the sub-agent's prelude, so the engine judges its calls as a sub-agent's, as the proxy does", async () => {
    const t = await readTranscript(SUB_AGENT_SESSION);
    expect(t.subAgent).toBe(true);
    const { transcript, prelude } = withAgentPrelude(t);
    expect(prelude).toEqual({ agent: 'claude-code', subAgent: true, version: CLAUDE_CODE.version, fields: ['system', 'tools'] });
    const req = requestForCall(transcript, transcript.calls.length - 1);
    expect(req.system).toEqual(agentPrelude('claude-code', true)!.fields.system);
    expect(isSubAgent(readRequest(JSON.stringify(req), 'anthropic-messages'))).toBe(true);
    // the main conversation's log is not one
    const main = withAgentPrelude(await readTranscript(CLAUDE_SESSION));
    expect(main.transcript.subAgent).toBeUndefined();
    expect(main.prelude?.subAgent).toBeUndefined();
    expect(isSubAgent(readRequest(JSON.stringify(requestForCall(main.transcript, 0)), 'anthropic-messages'))).toBe(false);
    // and the summary and the inspector say whose prelude it was
    const r = replay(t, { config: { tokenizer: 'approximate' } });
    expect(sessionSummary('a.jsonl', r, new ReductionCollector())).toMatch(
      /^agent prelude: Claude Code [\d.]+ sub-agent's system prompt and tools, [\d.]+k tokens a call$/m,
    );
    expect(replayDetail(r, 'a.jsonl')).toMatch(
      /· with Claude Code [\d.]+ sub-agent's system prompt and tools \([\d.]+k tokens a call\) · a\.jsonl$/,
    );
  });

  it("adds Codex's instructions only where the rollout lacks them, and never to other agents' transcripts", async () => {
    const t = await readTranscript(CODEX_SESSION);
    expect(withAgentPrelude(t).prelude?.fields).toEqual(t.base.instructions === undefined ? ['instructions', 'tools'] : ['tools']);
    const withOwn: Transcript = { ...t, base: { ...t.base, instructions: 'my own' } };
    expect(withAgentPrelude(withOwn).prelude?.fields).toEqual(['tools']);
    // a rollout that recorded the instructions as its first developer message (Codex 0.169)
    const recorded: Transcript = {
      ...t,
      base: {},
      items: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: agentPrelude('codex')!.fields.instructions }] },
        ...t.items,
      ],
    };
    expect(withAgentPrelude(recorded).prelude?.fields).toEqual(['tools']);
    const chat: Transcript = { ...t, source: 'openai-responses' };
    expect(withAgentPrelude(chat).prelude).toBeUndefined();
  });

  it('bills the prelude in raw history and projection alike: both cost more, and the replay says it was used', async () => {
    const t = await readTranscript(CLAUDE_SESSION);
    const config = { tokenizer: 'approximate' } as const;
    const on = replay(t, { config });
    const off = replay(t, { config, prelude: false });
    expect(off.prelude).toBeUndefined();
    expect(on.prelude).toMatchObject({ agent: 'claude-code', version: CLAUDE_CODE.version });
    expect(on.prelude!.tokens).toBeGreaterThan(5_000);
    const a = on.totals.cost.anthropic!,
      b = off.totals.cost.anthropic!;
    expect(a.raw).toBeGreaterThan(b.raw);
    expect(a.projected).toBeGreaterThan(b.projected);
    // the same tokens in both requests of every call
    on.calls.forEach((c, k) => {
      expect(c.originalTokens - off.calls[k]!.originalTokens).toBe(c.projectedTokens - off.calls[k]!.projectedTokens);
    });
    // cached after the first call: what it adds to raw history is mostly cache reads
    expect(a.raw - b.raw).toBeLessThan(on.prelude!.tokens * (1.25 + 0.1 * (on.calls.length - 1)) + 1);
  });
});

describe('the inspector', () => {
  it("says in a replayed session's detail line which prelude its calls carried", async () => {
    const t = await readTranscript(CLAUDE_SESSION);
    const config = { tokenizer: 'approximate' } as const;
    expect(replayDetail(replay(t, { config }), 'x.jsonl')).toMatch(
      new RegExp(
        `· with Claude Code ${CLAUDE_CODE.version.replace(/\./g, '\\.')}'s system prompt and tools \\([\\d.]+k tokens a call\\) · x\\.jsonl$`,
      ),
    );
    expect(replayDetail(replay(t, { config, prelude: false }), 'x.jsonl')).toMatch(
      /· without the agent's system prompt and tools · x\.jsonl$/,
    );
  });
});
