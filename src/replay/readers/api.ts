/**
 * Single JSON documents in one of the wire formats: a saved request body (Chat Completions
 * `messages`, Anthropic Messages `messages`, Responses `input`), a bare item list, or a
 * mini-swe-agent trajectory (`.traj.json`, whose `messages` are Chat Completions).
 *
 * A request body holds a whole conversation, so replaying it as one call would hide how the
 * session grew: there is a call before each run of assistant output (its reply is that output)
 * and one at the end, the request itself (a bare list that ends with the model's answer has none:
 * it is a finished conversation, and no request followed that answer). Items are kept exactly as
 * they are.
 */
import { MINI_SWE_AGENT_TOOL, type ObservationMark } from '../../engine/formats/observations';
import { SpillwayError, type WireFormat } from '../../engine/types';
import { SkipLog, preview } from './skip-log';
import { itemsKey, type Transcript, type TranscriptFormat } from './types';
import { classifyItems, computeCalls, isModelOutput, isRecord, type Json } from './wire';

const CHAT_ROLES: ReadonlySet<string> = new Set(['system', 'developer', 'user', 'assistant', 'tool', 'function']);

export function isMiniSweAgent(doc: unknown): doc is Json & { messages: unknown[] } {
  return isRecord(doc) && Array.isArray(doc.messages) && (typeof doc.trajectory_format === 'string' || isRecord(doc.info));
}

/**
 * The blocks mini-swe-agent takes as its action, as its own action_regex finds them: ```bash (1.x,
 * `r"```bash\s*\n(.*?)\n```"`) and ```mswea_bash_command (2.x text mode). Other fences (```python
 * in the model's reasoning) are not actions.
 */
const MINI_ACTION_FENCE = /```(?:bash|mswea_bash_command)\s*\n[\s\S]*?\n```/g;

/** The number of actions in a mini-swe-agent text-mode reply (it runs one only when there is exactly one). */
function miniSweAgentActions(content: unknown): number {
  if (typeof content !== 'string') return 0;
  return content.match(MINI_ACTION_FENCE)?.length ?? 0;
}

/**
 * mini-swe-agent: drops the `extra` field (raw provider responses, duplicated outputs: not sent to
 * the model) and the closing role `exit` message; everything else is kept. Text-mode runs keep
 * their observations as user messages, as they were sent, and mark them: by mini-swe-agent's own
 * rule a reply with exactly one bash block is run and the next user message is its output
 * (returncode and output, or the timeout message); a reply with none or several gets a format
 * error instead, which is not an observation. Observations are reduced under the tool `bash`.
 */
export function miniSweAgentTranscript(doc: Json & { messages: unknown[] }): Transcript {
  const log = new SkipLog();
  const items: unknown[] = [];
  const observations: ObservationMark[] = [];
  doc.messages.forEach((message: unknown, index: number) => {
    if (!isRecord(message)) {
      log.skip('not-an-object', `messages[${index}]: not an object`);
      return;
    }
    const role = typeof message.role === 'string' ? message.role : '(no role)';
    if (role === 'exit') {
      log.skip('exit');
      return;
    }
    if (!CHAT_ROLES.has(role)) {
      log.skipNoteFirst(`unknown:role:${role}`, `messages[${index}]: unknown role ${preview(role)} (skipped; further ones counted only)`);
      return;
    }
    const previous = items.at(-1);
    if (
      role === 'user' &&
      isRecord(previous) &&
      previous.role === 'assistant' &&
      !Array.isArray(previous.tool_calls) &&
      miniSweAgentActions(previous.content) === 1
    ) {
      observations.push({ item: items.length, tool: MINI_SWE_AGENT_TOOL });
    }
    if ('extra' in message) {
      const { extra: _extra, ...rest } = message;
      items.push(rest);
    } else {
      items.push(message);
    }
  });
  const info = isRecord(doc.info) ? doc.info : {};
  const config = isRecord(info.config) && isRecord(info.config.model) ? info.config.model : {};
  const model = typeof config.model_name === 'string' ? config.model_name : undefined;
  return {
    source: 'openai-chat',
    wire: 'openai-chat',
    base: model === undefined ? {} : { model },
    items,
    calls: computeCalls('openai-chat', items),
    ...(observations.length ? { observations } : {}),
    skipped: log.result(),
  };
}

/** Which wire format an API document is in, when the caller did not say. */
export function classifyApiDocument(doc: unknown): WireFormat | undefined {
  if (Array.isArray(doc)) {
    const wire = classifyItems(doc);
    if (wire !== undefined) return wire;
    return doc.length > 0 && doc.every((m) => isRecord(m) && typeof m.role === 'string') ? 'openai-chat' : undefined;
  }
  if (!isRecord(doc)) return undefined;
  if ((Array.isArray(doc.input) || typeof doc.input === 'string') && !Array.isArray(doc.messages)) return 'openai-responses';
  if (Array.isArray(doc.contents) && !Array.isArray(doc.messages)) return 'gemini';
  if (Array.isArray(doc.messages)) {
    return classifyItems(doc.messages) ?? ('system' in doc ? 'anthropic-messages' : 'openai-chat');
  }
  return undefined;
}

const FORMAT_HINT: Record<WireFormat, string> = {
  'openai-chat': 'a Chat Completions request needs a "messages" list',
  'anthropic-messages': 'a Messages request needs a "messages" list',
  'openai-responses': 'a Responses request needs an "input" list or string',
  gemini: 'a Gemini API request needs a "contents" list',
};

export function apiTranscript(doc: unknown, path: string, wire: WireFormat): Transcript {
  const log = new SkipLog();
  let base: Record<string, unknown> = {};
  let items: unknown[];
  const key = itemsKey(wire);
  if (Array.isArray(doc)) {
    items = doc;
  } else if (isRecord(doc) && Array.isArray(doc[key])) {
    const { [key]: list, ...rest } = doc;
    items = list as unknown[];
    base = rest;
  } else if (isRecord(doc) && key === 'input' && typeof doc.input === 'string') {
    const { input, ...rest } = doc;
    items = [{ role: 'user', content: input }];
    base = rest;
    log.note('"input" is a string: replayed as one user message');
  } else {
    const seen = isRecord(doc) ? `top-level keys [${Object.keys(doc).slice(0, 12).join(', ')}]` : `a JSON ${typeof doc}`;
    throw new SpillwayError(
      `${path}: does not hold a request in the ${wire} format (${FORMAT_HINT[wire]}; found ${seen})`,
      'invalid-input',
    );
  }
  return {
    source: wire satisfies TranscriptFormat,
    wire,
    base,
    items,
    // a body is a request even when it ends with the model's words (a prefill); a bare list that ends
    // with them is a finished conversation: no request followed its last answer
    calls: computeCalls(wire, items, !Array.isArray(doc) || !isModelOutput(wire, items.at(-1))),
    skipped: log.result(),
  };
}
