/**
 * SWE-agent trajectories (`.traj`) as OpenAI Chat Completions.
 *
 * `history[]` is the chat SWE-agent sent to its model. Function-calling runs already hold
 * `tool_calls` and role `tool` entries (whose `tool_call_ids` is a list, sometimes saved as a
 * stringified Python list such as "['call_1']"). Text-mode runs put each observation in a
 * role `user` entry, and that is how it was sent: the entry stays a user message, byte for byte,
 * and is marked as an observation (`Transcript.observations`) so the engine reduces the command
 * output inside it like a tool result, under the first word of the action (`open`, `edit`,
 * `python3`, `submit`; `bash` when the action is empty) and the call id `obs-<item>`. Entries are
 * reduced to the fields SWE-agent itself sends (role, content, tool_calls, tool_call_id,
 * cache_control); `thought`, `action`, `agent`, `message_type` stay out of the request.
 */
import { firstWord, MINI_SWE_AGENT_TOOL, type ObservationMark } from '../../engine/formats/observations';
import { SpillwayError } from '../../engine/types';
import { SkipLog, preview } from './skip-log';
import type { Transcript } from './types';
import { computeCalls, isRecord, replyParts, type Json } from './wire';

const PLAIN_ROLES: ReadonlySet<string> = new Set(['system', 'user', 'developer']);

/** ['call_1', 'call_2'] | "['call_1']" | '["call_1"]' | 'call_1' → the ids. */
function parseToolCallIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  if (typeof value !== 'string') return [];
  const trimmed = value.trim();
  if (!trimmed.startsWith('[')) return trimmed === '' ? [] : [trimmed];
  try {
    const parsed: unknown = JSON.parse(trimmed);
    if (Array.isArray(parsed)) return parsed.filter((v): v is string => typeof v === 'string');
  } catch {
    // a Python repr: fall through to pick out the quoted strings
  }
  return [...trimmed.matchAll(/'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1] ?? m[2] ?? '');
}

/** The tool name of a text-mode action: its first word (`open`, `edit`, `python3`, `submit`), else `bash`. */
function actionName(action: string): string {
  return firstWord(action) || MINI_SWE_AGENT_TOOL;
}

function modelOf(doc: Json): string | undefined {
  let config: unknown = doc.replay_config;
  if (typeof config === 'string') {
    try {
      config = JSON.parse(config);
    } catch {
      return undefined;
    }
  }
  if (!isRecord(config) || !isRecord(config.agent) || !isRecord(config.agent.model)) return undefined;
  const name = config.agent.model.name ?? config.agent.model.model_name;
  return typeof name === 'string' ? name : undefined;
}

export function sweAgentTranscript(doc: unknown, path: string): Transcript {
  if (!isRecord(doc) || !Array.isArray(doc.history)) {
    throw new SpillwayError(`${path}: not a SWE-agent trajectory (no "history" list)`, 'invalid-input');
  }
  const log = new SkipLog();
  const items: Json[] = [];
  /** a text-mode assistant entry whose observation may come next */
  let awaiting: { message: Json; action: string } | undefined;
  const observations: ObservationMark[] = [];
  /** text-mode assistant messages, with their action */
  const actions = new Map<Json, string>();

  doc.history.forEach((entry: unknown, index: number) => {
    if (!isRecord(entry)) {
      log.skip('not-an-object', `history[${index}]: not an object`);
      return;
    }
    const role = entry.role;
    const keepCache = (message: Json): Json => {
      if ('cache_control' in entry) message.cache_control = entry.cache_control;
      return message;
    };
    if (role === 'assistant') {
      const message: Json = { role: 'assistant', content: entry.content };
      if (Array.isArray(entry.tool_calls) && entry.tool_calls.length > 0) {
        message.tool_calls = entry.tool_calls;
        awaiting = undefined;
      } else {
        awaiting = typeof entry.action === 'string' ? { message, action: entry.action } : undefined;
        if (awaiting) actions.set(message, awaiting.action);
      }
      items.push(keepCache(message));
      return;
    }
    if (role === 'tool') {
      awaiting = undefined;
      const ids = parseToolCallIds(entry.tool_call_ids ?? entry.tool_call_id);
      const [id] = ids;
      if (id === undefined) {
        log.skip('tool-without-id', `history[${index}]: tool entry without a tool call id`);
        return;
      }
      if (ids.length > 1)
        log.note(`history[${index}]: one observation for ${ids.length} tool calls; answered as ${id} (as SWE-agent does)`);
      items.push(keepCache({ role: 'tool', content: entry.content, tool_call_id: id }));
      return;
    }
    if (typeof role === 'string' && PLAIN_ROLES.has(role)) {
      const observation = role === 'user' && awaiting !== undefined && (entry.message_type ?? 'observation') === 'observation';
      if (observation && awaiting) observations.push({ item: items.length, tool: actionName(awaiting.action) });
      items.push(keepCache({ role, content: entry.content }));
      awaiting = undefined;
      return;
    }
    const name = typeof role === 'string' ? role : '(no role)';
    log.skipNoteFirst(`unknown:role:${name}`, `history[${index}]: unknown role ${preview(name)} (skipped; further ones counted only)`);
  });

  const model = modelOf(doc);
  const calls = computeCalls('openai-chat', items).map((call) => {
    // A text-mode reply is the model's text, which normally holds the action in a code block; the
    // synthetic call's arguments would only repeat it.
    const message = items[call.end];
    const action = message === undefined ? undefined : actions.get(message);
    if (action === undefined || message === undefined) return call;
    const text = typeof message.content === 'string' ? message.content : replyParts('openai-chat', { content: message.content }).join('\n');
    return { end: call.end, reply: text.includes(action.trim()) ? text : [text, action].filter((p) => p !== '').join('\n') };
  });
  return {
    source: 'swe-agent',
    wire: 'openai-chat',
    base: model === undefined ? {} : { model },
    items,
    calls,
    observations,
    skipped: log.result(),
  };
}
