/**
 * OpenHands evaluation output (`output.jsonl`): one JSON object per benchmark instance,
 * `{ instance_id, instruction, history, metrics, test_result, … }`, where `history` is the agent's
 * event stream. One instance is one session, replayed as OpenAI Chat Completions calls:
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
 * Which instance: `instance` (an `instance_id`), or the first in the file; the instances a file holds
 * are named in the note (and in the error when the one asked for is missing).
 */
import { SpillwayError } from '../../engine/types';
import { forEachRecord, type StreamOptions } from './lines';
import { SkipLog, preview } from './skip-log';
import type { Transcript } from './types';
import { computeCalls, isRecord, type Json } from './wire';

type ChatMessage = Record<string, unknown>;

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map((p) => (isRecord(p) && typeof p.text === 'string' ? p.text : '')).join('');
  return value === undefined || value === null ? '' : JSON.stringify(value);
}

/** The instance's history as chat messages. */
function openHandsItems(instance: Json, log: SkipLog): { items: ChatMessage[]; model?: string } {
  const history = Array.isArray(instance.history) ? instance.history : [];
  const items: ChatMessage[] = [];
  const responses = new Set<string>();
  let model: string | undefined;
  history.forEach((event: unknown, k: number) => {
    if (!isRecord(event)) {
      log.skip('not-an-event', `history[${k}]: not an object`);
      return;
    }
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
        items.push({
          role: 'assistant',
          content: typeof message.content === 'string' || Array.isArray(message.content) ? message.content : null,
          ...(calls.length ? { tool_calls: calls } : {}),
        });
        return;
      }
      if (action === 'system') {
        items.push({ role: 'system', content: text(args.content ?? event.message) });
        return;
      }
      if (action === 'message') {
        const content = text(args.content ?? event.message);
        if (event.source === 'user') items.push({ role: 'user', content });
        else if (event.source === 'agent') items.push({ role: 'assistant', content });
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
      items.push({ role: 'tool', tool_call_id: callId, content: text(event.content) });
      return;
    }
    log.skipNoteFirst(
      'no-action-or-observation',
      `history[${k}]: an event with neither "action" nor "observation" (skipped; further ones counted only)`,
    );
  });
  return { items, model };
}

export async function readOpenHands(path: string, opts: StreamOptions & { instance?: string } = {}): Promise<Transcript> {
  const log = new SkipLog();
  const ids: string[] = [];
  let chosen: Json | undefined;
  await forEachRecord(path, opts, log, (record, line) => {
    const id = typeof record.instance_id === 'string' || typeof record.instance_id === 'number' ? String(record.instance_id) : undefined;
    if (id === undefined || !Array.isArray(record.history)) {
      log.skip('not-an-instance', `line ${line}: a record without instance_id and history`);
      return;
    }
    ids.push(id);
    if (chosen === undefined && (opts.instance === undefined || opts.instance === id)) chosen = record;
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
  if (ids.length > 1)
    log.note(`instance ${preview(String(chosen.instance_id))} of ${ids.length} in the file (pick another with --instance ID)`);
  const { items, model } = openHandsItems(chosen, log);
  return {
    source: 'openhands',
    wire: 'openai-chat',
    base: model === undefined ? {} : { model },
    items,
    calls: computeCalls('openai-chat', items),
    skipped: log.result(),
  };
}
