/**
 * OpenHands outputs, one JSON object per line and one session per object, in three shapes:
 *   - an evaluation `output.jsonl`: `{ instance_id, instruction, history, metrics, test_result, … }`;
 *   - the resolver's `output.jsonl` (`openhands.resolver`): `{ issue, issue_type, instruction,
 *     base_commit, git_patch, history, metrics, success, … }`, named by its issue (`owner/repo#number`);
 *   - either of them with an agent-sdk history (events named by `kind`), read by ./openhands-sdk.
 * A legacy history (CodeActAgent, `action` / `observation` events) is replayed as OpenAI Chat
 * Completions calls:
 *   - the system action and user messages become system and user messages;
 *   - the agent's actions that carry `tool_call_metadata.model_response` (the raw OpenAI-format LLM
 *     response) become the assistant message of that response, with its tool calls exactly as the
 *     model returned them (one message per response, however many actions it produced); an agent
 *     message without tool call metadata becomes an assistant text message;
 *   - observations that answer a tool call (`tool_call_metadata.tool_call_id`) become `tool` messages
 *     with the observation's `content`, the text the model was shown.
 * Everything else (recall, agent state changes, observations that answer no call, events without an
 * action or observation) is skipped and counted, like the other readers' skips.
 *
 * A call's time (`at`) is the `timestamp` of the last event of its request (the observation or
 * message it answers). OpenHands writes its machine's local time without a zone: it is read as UTC,
 * so the gaps between calls are right and the absolute time may be off by that machine's offset.
 *
 * Which instance: `instance` (an `instance_id`, or the resolver's `owner/repo#number`), or the first
 * in the file; the instances a file holds are named in the note (and in the error when the one asked
 * for is missing).
 */
import type { ObservationMark } from '../../engine/formats/observations';
import { SpillwayError } from '../../engine/types';
import { forEachRecord, type StreamOptions } from './lines';
import { isSdkHistory, sdkItems } from './openhands-sdk';
import { SkipLog, preview } from './skip-log';
import type { Transcript } from './types';
import { computeCalls, isRecord, parseTime, type Json } from './wire';

type ChatMessage = Record<string, unknown>;

/** Chat messages and, per message, the time of the last event that went into it (undefined: none valid). */
interface Items {
  items: ChatMessage[];
  times: (number | undefined)[];
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

/**
 * CodeActAgent before function calling (OpenHands 0.9 and earlier, mid 2024; the resolver's own mock
 * output is one): no event carries tool call metadata, and the agent wrote its actions as text that
 * it sent back to the model as assistant messages (`action_to_str`), the observations as user
 * messages that start `OBSERVATION:` (`get_observation_message`), two messages of one role in a row
 * joined into one. Each returns the message text, or undefined for an event the agent did not send.
 */
const TEXT_ACTIONS: Record<string, (a: Json) => string> = {
  run: (a) => `${text(a.thought)}\n<execute_bash>\n${text(a.command)}\n</execute_bash>`,
  run_ipython: (a) => `${text(a.thought)}\n<execute_ipython>\n${text(a.code)}\n</execute_ipython>`,
  browse_interactive: (a) => `${text(a.thought)}\n<execute_browse>\n${text(a.browser_actions)}\n</execute_browse>`,
  delegate: (a) => `${text(a.thought)}\n<execute_browse>\n${text(isRecord(a.inputs) ? a.inputs.task : '')}\n</execute_browse>`,
};
/** The tool each text action stands for, under which the engine reduces its observation. */
const TEXT_TOOLS: Record<string, string> = { run: 'execute_bash', run_ipython: 'execute_ipython', delegate: 'execute_browse' };
const TEXT_OBSERVATIONS: Record<string, (o: Json) => string> = {
  run: (o) =>
    `OBSERVATION:\n${text(o.content)}\n[Command ${String(o.command_id ?? -1)} finished with exit code ${String(o.exit_code ?? 0)}]`,
  run_ipython: (o) => `OBSERVATION:\n${text(o.content)}`,
  delegate: (o) => `OBSERVATION:\n${JSON.stringify(o.outputs ?? {})}`,
  error: (o) => `OBSERVATION:\n${text(o.content)}\n[Error occurred in processing last action]`,
};

/** A text-mode CodeActAgent history (no event has tool call metadata) as chat messages, observations marked. */
function textModeItems(history: readonly unknown[], instruction: unknown, log: SkipLog): Items & { observations: ObservationMark[] } {
  const items: ChatMessage[] = [];
  const times: (number | undefined)[] = [];
  const observations: ObservationMark[] = [];
  let sawMessage = false;
  let lastTool = 'execute_bash';
  let at: number | undefined;
  const push = (role: 'user' | 'assistant', content: string): boolean => {
    const last = items.at(-1);
    if (last?.role === role && typeof last.content === 'string') {
      last.content = `${last.content}\n${content}`;
      times[items.length - 1] = at;
      return false;
    }
    items.push({ role, content });
    times.push(at);
    return true;
  };
  history.forEach((event: unknown, k: number) => {
    if (!isRecord(event)) return void log.skip('not-an-event', `history[${k}]: not an object`);
    at = parseTime(event.timestamp);
    // the event's fields are under `args` / `extras` in the event format, at the top in the memory format
    const a: Json = { ...event, ...(isRecord(event.args) ? event.args : {}), ...(isRecord(event.extras) ? event.extras : {}) };
    if (typeof event.action === 'string') {
      const action = event.action;
      if (action === 'message') {
        const content = text(a.content ?? event.message);
        // the memory format drops `source`: the task is the first message (the instruction)
        const fromUser = event.source === 'user' || (event.source === undefined && (!sawMessage || content === instruction));
        sawMessage = true;
        push(fromUser ? 'user' : 'assistant', content);
        return;
      }
      if (action === 'system') {
        items.push({ role: 'system', content: text(a.content ?? event.message) });
        times.push(at);
        return;
      }
      if (action === 'finish' && event.source !== 'user') {
        if (text(a.thought) !== '') push('assistant', text(a.thought));
        else log.skip('action:finish');
        return;
      }
      const toText = TEXT_ACTIONS[action];
      if (!toText) return void log.skip(`action:${action}`);
      lastTool = TEXT_TOOLS[action] ?? lastTool;
      push('assistant', toText(a));
      return;
    }
    if (typeof event.observation === 'string') {
      const toText = TEXT_OBSERVATIONS[event.observation];
      if (!toText) return void log.skip(`observation:${event.observation}`);
      if (push('user', toText(a))) observations.push({ item: items.length - 1, tool: TEXT_TOOLS[event.observation] ?? lastTool });
      return;
    }
    log.skipNoteFirst(
      'no-action-or-observation',
      `history[${k}]: an event with neither "action" nor "observation" (skipped; further ones counted only)`,
    );
  });
  return { items, times, observations };
}

/** A legacy (CodeActAgent) history as chat messages, with the model named by its responses. */
function legacyItems(history: readonly unknown[], log: SkipLog): Items & { model?: string } {
  const items: ChatMessage[] = [];
  const times: (number | undefined)[] = [];
  const responses = new Set<string>();
  let model: string | undefined;
  history.forEach((event: unknown, k: number) => {
    if (!isRecord(event)) {
      log.skip('not-an-event', `history[${k}]: not an object`);
      return;
    }
    const push = (message: ChatMessage): void => {
      items.push(message);
      times.push(parseTime(event.timestamp));
    };
    const meta = isRecord(event.tool_call_metadata) ? event.tool_call_metadata : undefined;
    const args = isRecord(event.args) ? event.args : {};
    if (typeof event.action === 'string') {
      const action = event.action;
      const response = meta && isRecord(meta.model_response) ? meta.model_response : undefined;
      if (response) {
        const id = typeof response.id === 'string' ? response.id : `history[${k}]`;
        if (responses.has(id)) return; // another action of a response already read
        responses.add(id);
        const choice = Array.isArray(response.choices) && isRecord(response.choices[0]) ? response.choices[0] : undefined;
        const message = choice && isRecord(choice.message) ? choice.message : undefined;
        if (!message) {
          log.skip('no-model-message', `history[${k}]: model_response without choices[0].message`);
          return;
        }
        if (model === undefined && typeof response.model === 'string') model = response.model;
        const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
        push({
          role: 'assistant',
          content: typeof message.content === 'string' || Array.isArray(message.content) ? message.content : null,
          ...(calls.length ? { tool_calls: calls } : {}),
        });
        return;
      }
      if (action === 'system') {
        push({ role: 'system', content: text(args.content ?? event.message) });
        return;
      }
      if (action === 'message') {
        const content = text(args.content ?? event.message);
        if (event.source === 'user') push({ role: 'user', content });
        else if (event.source === 'agent') push({ role: 'assistant', content });
        else log.skip(`message:${String(event.source)}`);
        return;
      }
      log.skip(`action:${action}`);
      return;
    }
    if (typeof event.observation === 'string') {
      const callId = meta && typeof meta.tool_call_id === 'string' ? meta.tool_call_id : undefined;
      if (!callId) {
        log.skip(`observation:${event.observation}`);
        return;
      }
      push({ role: 'tool', tool_call_id: callId, content: text(event.content) });
      return;
    }
    log.skipNoteFirst(
      'no-action-or-observation',
      `history[${k}]: an event with neither "action" nor "observation" (skipped; further ones counted only)`,
    );
  });
  return { items, times, model };
}

/**
 * The name a record is picked by: its `instance_id` (evaluation output), or its issue as
 * `owner/repo#number` (resolver output); undefined when the record is neither.
 */
function instanceId(record: Json): string | undefined {
  if (!Array.isArray(record.history)) return undefined;
  const id = record.instance_id;
  if (typeof id === 'string' || typeof id === 'number') return String(id);
  const issue = isRecord(record.issue) ? record.issue : undefined;
  if (!issue || typeof record.issue_type !== 'string') return undefined;
  const repo = typeof issue.owner === 'string' && typeof issue.repo === 'string' ? `${issue.owner}/${issue.repo}` : '';
  return typeof issue.number === 'number' || typeof issue.number === 'string' ? `${repo}#${issue.number}` : `${repo}#?`;
}

/**
 * The model an agent-sdk record ran, from its `metadata.llm.model`, without the provider prefixes
 * litellm routes by (`litellm_proxy/neulab/gpt-4o-2024-08-06` is `gpt-4o-2024-08-06` to the provider).
 */
function sdkModel(record: Json): string | undefined {
  const metadata = isRecord(record.metadata) ? record.metadata : undefined;
  const llm = metadata && isRecord(metadata.llm) ? metadata.llm : undefined;
  const model = llm?.model;
  return typeof model === 'string' && model !== '' ? model.slice(model.lastIndexOf('/') + 1) : undefined;
}

/** One instance's history as chat messages and the model it ran, in whichever event format it holds. */
function instanceItems(instance: Json, log: SkipLog): Items & { model?: string; observations?: ObservationMark[] } {
  const history: unknown[] = Array.isArray(instance.history) ? instance.history : [];
  if (!isSdkHistory(history)) {
    const textMode = history.length > 0 && !history.some((e) => isRecord(e) && isRecord(e.tool_call_metadata));
    if (textMode) {
      log.note('a text-mode CodeActAgent history (no tool calls): actions and observations are replayed as the messages the agent sent');
      return textModeItems(history, instance.instruction, log);
    }
    return legacyItems(history, log);
  }
  const model = sdkModel(instance);
  return { ...sdkItems(history, instance.instruction, log), ...(model === undefined ? {} : { model }) };
}

export async function readOpenHands(path: string, opts: StreamOptions & { instance?: string } = {}): Promise<Transcript> {
  const log = new SkipLog();
  const ids: string[] = [];
  let chosen: { id: string; record: Json } | undefined;
  await forEachRecord(path, opts, log, (record, line) => {
    const id = instanceId(record);
    if (id === undefined) {
      log.skip('not-an-instance', `line ${line}: a record without history and instance_id or issue`);
      return;
    }
    ids.push(id);
    if (chosen === undefined && (opts.instance === undefined || opts.instance === id)) chosen = { id, record };
    else log.skip('other-instance');
  });
  if (!chosen) {
    const known = ids.length
      ? `it holds ${ids
          .slice(0, 10)
          .map((i) => preview(i))
          .join(', ')}${ids.length > 10 ? ` and ${ids.length - 10} more` : ''}`
      : 'it holds no instance';
    throw new SpillwayError(
      `${path}: no OpenHands instance ${opts.instance !== undefined ? preview(opts.instance) : ''} (${known})`.replace(
        'instance  (',
        'instance (',
      ),
      'invalid-input',
    );
  }
  if (ids.length > 1) log.note(`instance ${preview(chosen.id)} of ${ids.length} in the file (pick another with --instance ID)`);
  const { items, times, model, observations } = instanceItems(chosen.record, log);
  return {
    source: 'openhands',
    wire: 'openai-chat',
    base: model === undefined ? {} : { model },
    items,
    calls: computeCalls('openai-chat', items, false, times),
    ...(observations?.length ? { observations } : {}),
    skipped: log.result(),
  };
}
