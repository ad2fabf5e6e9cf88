/**
 * The history of an OpenHands agent-sdk run (OpenHands V1, `openhands.sdk`), as chat messages.
 *
 * The SDK replaced the legacy `action` / `observation` events with typed events named by `kind`, and
 * its evaluation `output.jsonl` (the OpenHands/benchmarks harness) stores them in `history`. Each
 * event that the SDK sends to the model maps to one message the way its `to_llm_message` builds it:
 *   - `SystemPromptEvent`: the system message (`system_prompt.text`);
 *   - `MessageEvent`: the `llm_message` as it is (a user or an assistant text message);
 *   - `ActionEvent`: one tool call (`tool_call`: id, name, arguments) with the action's `thought`
 *     as text; consecutive actions of one model response (`llm_response_id`, parallel tool calls)
 *     become one assistant message with all their calls, as the SDK batches them for the model;
 *   - `ObservationEvent`: the `tool` message answering `tool_call_id`, with the text the model was
 *     shown (the observation's `content`, or in older SDK versions its `output` between the shell
 *     prompt's `metadata.prefix` and `metadata.suffix`, a finish `message`, an `error`), followed by
 *     any `extended_content`;
 *   - `AgentErrorEvent` and `UserRejectObservation`: the `tool` message the SDK sends for them
 *     (the error; "Action rejected: " and the reason).
 * A run whose history starts without a user message (the harness sends the task and leaves it out
 * of the stored history) gets the record's `instruction` as its first user message. Other events
 * (state updates, condensations, pauses) and results that answer no known call are skipped and
 * counted by kind.
 */
import type { SkipLog } from './skip-log';
import { isRecord, parseTime, type Json } from './wire';

type ChatMessage = Record<string, unknown>;

/** Event kinds only the agent-sdk writes: one of them in a history tells the SDK format from the legacy one. */
const SDK_EVENT_KINDS: ReadonlySet<string> = new Set([
  'SystemPromptEvent',
  'MessageEvent',
  'ActionEvent',
  'ObservationEvent',
  'AgentErrorEvent',
  'UserRejectObservation',
]);

/** True when `history` holds agent-sdk events (`kind`: `ActionEvent`, `ObservationEvent`, …). */
export function isSdkHistory(history: readonly unknown[]): boolean {
  return history.some((e) => isRecord(e) && typeof e.kind === 'string' && SDK_EVENT_KINDS.has(e.kind));
}

/** The text of an SDK content list (`[{ type: 'text', text }]`), a string, or '' for anything else. */
function contentText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (!Array.isArray(value)) return '';
  return value.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The text the model was shown for one observation object, whichever SDK version wrote it. */
function observationText(observation: Json): string {
  const content = contentText(observation.content);
  if (content !== '') return content;
  const output = str(observation.output);
  if (output !== undefined) {
    const meta = isRecord(observation.metadata) ? observation.metadata : {};
    return `${str(meta.prefix) ?? ''}${output}${str(meta.suffix) ?? ''}`;
  }
  return str(observation.message) ?? str(observation.error) ?? '';
}

/** The OpenAI tool call of an `ActionEvent`, or undefined when it has none the model could have written. */
function toolCallOf(event: Json): Json | undefined {
  const call = isRecord(event.tool_call) ? event.tool_call : undefined;
  const id = str(call?.id) ?? str(event.tool_call_id);
  const name = str(call?.name) ?? str(event.tool_name);
  if (id === undefined || name === undefined) return undefined;
  const args = call?.arguments;
  return { id, type: 'function', function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) } };
}

/** The chat messages of one SDK history; `instruction` is the record's task, sent first when the history lacks it. */
export function sdkItems(
  history: readonly unknown[],
  instruction: unknown,
  log: SkipLog,
): { items: ChatMessage[]; times: (number | undefined)[] } {
  const items: ChatMessage[] = [];
  /** per message, its event's time (undefined: the event had none valid, or the message is the record's task) */
  const times: (number | undefined)[] = [];
  const calls = new Set<string>();
  /** the response id of the last assistant message, when it was built from actions */
  let openResponse: string | undefined;
  let at: number | undefined;
  const push = (message: ChatMessage, response?: string, time = at): void => {
    items.push(message);
    times.push(time);
    openResponse = response;
  };
  const answer = (event: Json, k: number, content: string): void => {
    const id = str(event.tool_call_id);
    if (id === undefined || !calls.has(id)) {
      log.skipNoteFirst('result-without-call', `history[${k}]: a ${String(event.kind)} that answers no earlier tool call (skipped)`);
      return;
    }
    push({ role: 'tool', tool_call_id: id, content });
  };
  const startsWithUser = (): boolean => items.some((m) => m.role === 'user');

  history.forEach((event: unknown, k: number) => {
    if (!isRecord(event) || typeof event.kind !== 'string') {
      log.skipNoteFirst('not-an-sdk-event', `history[${k}]: not an agent-sdk event (no "kind")`);
      return;
    }
    at = parseTime(event.timestamp);
    switch (event.kind) {
      case 'SystemPromptEvent': {
        const prompt = isRecord(event.system_prompt) ? event.system_prompt.text : event.system_prompt;
        push({ role: 'system', content: contentText(prompt) });
        return;
      }
      case 'MessageEvent': {
        const message = isRecord(event.llm_message) ? event.llm_message : undefined;
        const role = message?.role;
        if (role !== 'user' && role !== 'assistant') {
          log.skip(`MessageEvent:${String(role)}`);
          return;
        }
        push({ role, content: contentText(message?.content) });
        return;
      }
      case 'ActionEvent': {
        const call = toolCallOf(event);
        if (!call) {
          log.skipNoteFirst('action-without-tool-call', `history[${k}]: an ActionEvent without tool_call id and name (skipped)`);
          return;
        }
        if (!startsWithUser() && typeof instruction === 'string') push({ role: 'user', content: instruction }, undefined, undefined);
        calls.add(call.id as string);
        const response = str(event.llm_response_id);
        const last = items.at(-1);
        if (response !== undefined && response === openResponse && last && Array.isArray(last.tool_calls)) {
          last.tool_calls.push(call);
          return;
        }
        const thought = contentText(event.thought);
        push({ role: 'assistant', content: thought === '' ? null : thought, tool_calls: [call] }, response);
        return;
      }
      case 'ObservationEvent': {
        const observation = isRecord(event.observation) ? event.observation : {};
        const extended = contentText(event.extended_content);
        answer(event, k, observationText(observation) + extended);
        return;
      }
      case 'AgentErrorEvent':
        answer(event, k, str(event.error) ?? '');
        return;
      case 'UserRejectObservation':
        answer(event, k, `Action rejected: ${str(event.rejection_reason) ?? 'User rejected the action'}`);
        return;
      default:
        log.skip(`kind:${event.kind}`);
    }
  });
  return { items, times };
}
