/**
 * The agent's prelude: what Claude Code and Codex send with every model call and do not write to
 * their logs, the system prompt (Codex: instructions) and the tool definitions, about 15k tokens a
 * call for Claude Code. A replay of their logs without it prices calls smaller than the provider
 * bills them and triggers the clear stage later than the proxy would; with it, each call is the
 * request the agent really sent.
 *
 * The prelude is captured from the installed CLIs by the agents suite (test/agents/prelude.ts) into
 * test/fixtures/agent-preludes.json, with the CLI's version; the build bundles that file. A Claude Code
 * sub-agent sends a prelude of its own (its agent's system prompt, marked `cc_is_subagent=true` in its
 * first block, and that agent's tools): a sub-agent's log (a sidechain read as the session,
 * `Transcript.subAgent`) gets that one, so the engine judges its calls as the proxy does (gather, then
 * report: src/engine/stages/gathering.ts). The replay
 * adds a field only where the transcript has none (a Codex rollout records its instructions, never
 * its tools). Raw history and projection carry the same prelude, so it is in both bills, read from
 * the provider's cache after the first call.
 */
import { z } from 'zod';
import captured from '../../test/fixtures/agent-preludes.json';
import { SpillwayError } from '../engine/types';
import type { Transcript, TranscriptFormat } from './readers';

/** The fixture's file name under test/fixtures/. */
export const AGENT_PRELUDES_FILE = 'agent-preludes.json';

/** The agents whose logs leave their prelude out, and the request fields it is made of. */
const PRELUDE_FIELDS = { 'claude-code': ['system', 'tools'], codex: ['instructions', 'tools'] } as const;
export type PreludeAgent = keyof typeof PRELUDE_FIELDS;

const Tools = z.array(z.record(z.string(), z.unknown())).min(1);
const Entry = <F extends z.ZodRawShape>(fields: F) =>
  z
    .object({
      /** the CLI's version, as its `--version` prints it */
      version: z.string().min(1),
      /** the day of the capture */
      captured: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
      /** the model the CLI asked for in that run (the scripted provider answers any) */
      model: z.string().optional(),
      fields: z.object(fields).strict(),
    })
    .strict();
const ClaudeCodeEntry = Entry({
  system: z.union([z.string().min(1), z.array(z.record(z.string(), z.unknown())).min(1)]),
  tools: Tools,
});
const AgentPreludes = z
  .object({
    about: z.string(),
    agents: z
      .object({
        'claude-code': ClaudeCodeEntry.optional(),
        /** what a general-purpose sub-agent of the same Claude Code sends */
        'claude-code-subagent': ClaudeCodeEntry.optional(),
        codex: Entry({ instructions: z.string().min(1), tools: Tools }).optional(),
      })
      .strict(),
  })
  .strict();

export type AgentPreludes = z.infer<typeof AgentPreludes>;
export interface AgentPrelude {
  version: string;
  captured: string;
  model?: string;
  fields: Record<string, unknown>;
}

/** The fixture, checked: a SpillwayError naming `where` and the first problem when it is not well-formed. */
export function parseAgentPreludes(value: unknown, where: string): AgentPreludes {
  const r = AgentPreludes.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new SpillwayError(`${where}: ${issue.path.join('.') || '(root)'}: ${issue.message}`, 'invalid-input');
  }
  return r.data;
}

let preludes: AgentPreludes | undefined;

/** The fixture's entries: an agent's, and a Claude Code sub-agent's. */
export type PreludeEntry = keyof AgentPreludes['agents'];

/**
 * The captured prelude of the agent that wrote a transcript of `source` (of its sub-agent's, with
 * `subAgent`: Claude Code only), if one was captured.
 */
export function agentPrelude(
  source: TranscriptFormat,
  subAgent = false,
): (AgentPrelude & { agent: PreludeAgent; subAgent?: true }) | undefined {
  if (source !== 'claude-code' && source !== 'codex') return undefined;
  preludes ??= parseAgentPreludes(captured, `test/fixtures/${AGENT_PRELUDES_FILE}`);
  const sub = subAgent && source === 'claude-code' ? preludes.agents['claude-code-subagent'] : undefined;
  if (sub) return { agent: source, subAgent: true, ...sub };
  const entry = preludes.agents[source];
  return entry ? { agent: source, ...entry } : undefined;
}

/** What the replay added: whose prelude (a Claude Code sub-agent's: `subAgent`), which CLI version, which request fields. */
export interface PreludeUse {
  agent: PreludeAgent;
  subAgent?: true;
  version: string;
  fields: string[];
}

/** The agents whose logs get a prelude, as people name them. */
export const PRELUDE_AGENT_NAMES: Record<PreludeAgent, string> = { 'claude-code': 'Claude Code', codex: 'Codex' };

/** Whose prelude a replay added and what it held, as people read it ("Claude Code 2.1.332 sub-agent's system prompt and tools"). */
export function preludeDescription(p: PreludeUse): string {
  const what = p.fields.map((f) => (f === 'system' ? 'system prompt' : f)).join(' and ');
  return `${PRELUDE_AGENT_NAMES[p.agent]} ${p.version}${p.subAgent ? ' sub-agent' : ''}'s ${what}`;
}

/** Items looked at for a prelude the log recorded as a message (Codex 0.169 sends its instructions as the first developer message). */
const LEADING_ITEMS = 5;
/** Characters of a prelude's text that tell it is already there. */
const SIGNATURE_CHARS = 200;

/** A text prelude field the transcript already holds in one of its first items. */
function inItems(t: Transcript, value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const signature = JSON.stringify(value.slice(0, SIGNATURE_CHARS)).slice(1, -1);
  return t.items.slice(0, LEADING_ITEMS).some((item) => JSON.stringify(item).includes(signature));
}

/**
 * `t` with its agent's prelude in every call: the captured fields the transcript's base lacks.
 * The transcript itself is not changed (a new base, the same items).
 */
export function withAgentPrelude(t: Transcript): { transcript: Transcript; prelude?: PreludeUse } {
  const p = agentPrelude(t.source, t.subAgent === true);
  if (!p) return { transcript: t };
  const added = PRELUDE_FIELDS[p.agent].filter((f) => t.base[f] === undefined && p.fields[f] !== undefined && !inItems(t, p.fields[f]));
  if (!added.length) return { transcript: t };
  const base = { ...t.base };
  for (const f of added) base[f] = p.fields[f];
  return {
    transcript: { ...t, base },
    prelude: { agent: p.agent, ...(p.subAgent ? { subAgent: true as const } : {}), version: p.version, fields: added },
  };
}
