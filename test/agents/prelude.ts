/**
 * The prelude of a real agent's requests (its system prompt or instructions and its tool
 * definitions) as the scripted provider received them, kept in test/fixtures/agent-preludes.json for
 * the replay to add to that agent's logs, which do not hold it (src/replay/prelude.ts).
 *
 * With `SPILLWAY_CAPTURE_PRELUDES=1` the agents suite writes what the installed agent sent into the
 * fixture (its version and the day with it); without, it checks that the fixture is well-formed and
 * was captured from the version the suite pins, so a new pin says to capture again.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { AGENT_PRELUDES_FILE, parseAgentPreludes, type AgentPrelude, type PreludeAgent, type PreludeEntry } from '../../src/replay/prelude';

export const CAPTURE = process.env.SPILLWAY_CAPTURE_PRELUDES === '1';
/** What the run's temporary folder is written as in the fixture. */
const SCRATCH = '/tmp/spillway-agent-run';
const FILE = join(__dirname, '..', 'fixtures', AGENT_PRELUDES_FILE);

/** The request fields each agent's logs leave out, by wire format. */
const FIELDS = { 'claude-code': ['system', 'tools'], codex: ['instructions', 'tools'] } as const;

/**
 * Codex's base instructions: the `instructions` field up to 0.6x (what the corpus' rollouts were sent
 * with), the first developer message of the input since (0.169: "You are a coding agent running in
 * the Codex CLI…"). The replay sends them as `instructions`, which bills the same text.
 */
function codexInstructions(request: Record<string, unknown>): string | undefined {
  if (typeof request.instructions === 'string') return request.instructions;
  const first = Array.isArray(request.input) ? (request.input[0] as { role?: string; content?: { text?: string }[] }) : undefined;
  const text = first?.role === 'developer' ? first.content?.map((c) => c.text ?? '').join('') : undefined;
  return text?.startsWith('You are') ? text : undefined;
}

/**
 * Captures `agent`'s prelude from `request` (the body of one of its calls) into the fixture's `entry`
 * (the agent's own, or `claude-code-subagent` from a sub-agent's call), or checks that entry.
 * `scratch` is the run's temporary folder: paths under it are written as SCRATCH, so a capture
 * differs from the last one only where the agent does.
 */
export function captureOrCheckPrelude(
  agent: PreludeAgent,
  version: string,
  request: Record<string, unknown>,
  scratch: string,
  entryName: PreludeEntry = agent,
): void {
  const current = parseAgentPreludes(JSON.parse(readFileSync(FILE, 'utf8')), FILE);
  if (!CAPTURE) {
    const entry = current.agents[entryName];
    expect(
      entry,
      `${AGENT_PRELUDES_FILE} has no ${entryName} prelude: run the agents suite with SPILLWAY_CAPTURE_PRELUDES=1`,
    ).toBeDefined();
    expect(entry!.version, `${agent} is pinned at ${version}: capture its prelude again (SPILLWAY_CAPTURE_PRELUDES=1)`).toBe(version);
    return;
  }
  const fields: Record<string, unknown> = {};
  const sent = agent === 'codex' ? { ...request, instructions: codexInstructions(request) } : request;
  for (const key of FIELDS[agent]) {
    expect(sent[key], `${agent} sent no ${key} (its request has ${Object.keys(request).join(', ')})`).toBeDefined();
    // the run's folder, and the same path as Claude Code names a project folder after it
    const text = JSON.stringify(sent[key])
      .split(scratch)
      .join(SCRATCH)
      .split(scratch.replace(/[^a-zA-Z0-9]/g, '-'))
      .join(SCRATCH.replace(/[^a-zA-Z0-9]/g, '-'));
    fields[key] = JSON.parse(text);
  }
  const entry: AgentPrelude = {
    version,
    captured: new Date().toISOString().slice(0, 10),
    ...(typeof request.model === 'string' ? { model: request.model } : {}),
    fields,
  };
  const next = { ...current, agents: { ...current.agents, [entryName]: entry } };
  parseAgentPreludes(next, FILE);
  writeFileSync(FILE, `${JSON.stringify(next, null, 2)}\n`);
}
