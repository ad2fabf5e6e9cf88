/**
 * GitHub Copilot's CLI sessions (`~/.copilot/session-state/<id>/events.jsonl`) as the requests it
 * sent, in the wire format of the provider it called.
 *
 * The file is a log of events (`{type, data, id, timestamp, parentId}`), 1.0.102 writing these:
 * - `session.start` (`data.selectedModel`, `data.context.cwd`, `data.producer: "copilot-agent"`);
 * - `system.message` (`data.content`: the system prompt, as sent), `user.message`
 *   (`data.transformedContent`: the prompt as the model got it, with Copilot's own additions;
 *   `data.content`: as typed);
 * - per model call, `session.usage_record` (`data.usage`: the model, `apiEndpoint`
 *   (`/chat/completions`, `/responses`, Anthropic's `/v1/messages`), `providerType`, tokens) and
 *   then `assistant.message` (`data.content`, `data.toolRequests` with `toolCallId`, `name`,
 *   `arguments`);
 * - `tool.execution_complete` (`data.toolCallId`, `data.result.content`: what the model got back,
 *   Copilot's `<shellId: …>` line and its own saved-output note included; `data.error.message` for a
 *   tool that failed);
 * - `assistant.turn_start` / `_end`, `tool.execution_start`, `session.shutdown` and the like, which
 *   send nothing: counted by type and skipped, as any event this reader does not know yet;
 * - a sub-agent's conversation (its `task` tool), in the same log: `subagent.started` (the `task`
 *   call id), the sub-agent's prompt and system prompt, then its turns, answers and tool results,
 *   each naming that call (`parentToolCallId`), until `subagent.completed`. They are the sub-agent's
 *   calls, not the main conversation's: left out, and a note names each sub-agent and its calls;
 *   `instance` (that `task` call id) replays one sub-agent's conversation instead.
 *
 * Calls: each `assistant.message` is one call, whose request is everything before it. The wire
 * format is the one most usage records name (`apiEndpoint`, then `providerType`), else the model's
 * family. The items are written as 1.0.102 sends them: the system prompt first (the log has it after
 * the first prompt), an answer's `refusal: null` (Chat Completions), a function call's `fc_` id and
 * `completed` status (Responses), text as blocks (Anthropic, whose system prompt it splits into two
 * blocks at a cache breakpoint: here one text). The tool declarations are not in the file, so calls
 * replay without them. A call's time (`at`) is that of the last event its request holds.
 */
import { SpillwayError, type WireFormat } from '../../engine/types';
import { forEachRecord, type StreamOptions } from './lines';
import { SkipLog, preview } from './skip-log';
import type { Transcript, TranscriptCall } from './types';
import { isRecord, parseTime, type Json } from './wire';

/** What Copilot's CLI writes as the producer of its session (`session.start`). */
const COPILOT_PRODUCER = 'copilot-agent';

/** True for a record of Copilot's CLI's event log (the session's first line tells: its producer). */
export function isCopilotCliRecord(record: Json): boolean {
  return record.type === 'session.start' && isRecord(record.data) && record.data.producer === COPILOT_PRODUCER;
}

/** Events that send nothing to the model: counted, without a note. */
const SILENT_EVENTS: ReadonlySet<string> = new Set([
  'assistant.turn_start',
  'assistant.turn_end',
  'tool.execution_start',
  'session.shutdown',
  'session.model_change',
  'subagent.configured',
  'subagent.completed',
  'subagent.failed',
]);

/** A tool call of an answer: its input as given, and as the JSON text the OpenAI formats send. */
interface ToolCall {
  id: string;
  name: string;
  input: unknown;
  args: string;
}

/** One thing the model was sent, before it is written in a wire format, with the time of the event it came from. */
type Entry = (
  | { kind: 'system'; text: string }
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; calls: ToolCall[] }
  | { kind: 'result'; id: string; text: string }
) & { time?: number };

function wireOfUsage(u: Json): WireFormat | undefined {
  const endpoint = typeof u.apiEndpoint === 'string' ? u.apiEndpoint : '';
  if (endpoint.endsWith('/chat/completions')) return 'openai-chat';
  if (endpoint.endsWith('/responses')) return 'openai-responses';
  if (endpoint.endsWith('/messages') || u.providerType === 'anthropic') return 'anthropic-messages';
  return undefined;
}

/** The text a tool result sent: its content, or the error a failed tool reported. */
function resultText(data: Json): string {
  const r = isRecord(data.result) ? data.result : {};
  if (typeof r.content === 'string') return r.content;
  const e = isRecord(data.error) ? data.error : {};
  return typeof e.message === 'string' ? e.message : '';
}

class Session {
  readonly entries: Entry[] = [];
  readonly calls: Array<{ entries: number; reply: string }> = [];
  model: string | undefined;
  readonly wires = new Map<WireFormat, number>();
  /** sub-agents started (their `task` call ids) whose prompt and system prompt have not come yet */
  private readonly awaitingPrompt: string[] = [];
  /** each sub-agent, by its `task` call id: the calls it made, and its name as Copilot shows it (`agentDisplayName`, else its agent) */
  readonly subAgents = new Map<string, { calls: number; name?: string }>();

  /** `instance`: the `task` call id of the sub-agent to replay instead of the main conversation */
  constructor(
    private readonly log: SkipLog,
    private readonly instance?: string,
  ) {}

  /**
   * Whether an event is a sub-agent's: it names the `task` call that started it
   * (`parentToolCallId`), or it is the prompt or system prompt written right after `subagent.started`,
   * which name none.
   */
  private subAgentOf(type: string, data: Json): string | undefined {
    if (typeof data.parentToolCallId === 'string') {
      const at = this.awaitingPrompt.indexOf(data.parentToolCallId);
      if (at !== -1 && type === 'assistant.turn_start') this.awaitingPrompt.splice(at, 1);
      return data.parentToolCallId;
    }
    if ((type === 'user.message' || type === 'system.message') && this.awaitingPrompt.length)
      return this.awaitingPrompt[this.awaitingPrompt.length - 1];
    return undefined;
  }

  private push(e: Entry): void {
    // the log writes the system prompt after the first prompt; Copilot sends it first
    const at = e.kind === 'system' && this.calls.length === 0 ? this.entries.findIndex((x) => x.kind !== 'system') : -1;
    if (at !== -1) this.entries.splice(at, 0, e);
    else this.entries.push(e);
  }

  record(r: Json, line: number): void {
    const type = typeof r.type === 'string' ? r.type : '';
    const data = isRecord(r.data) ? r.data : {};
    const time = parseTime(r.timestamp);
    if (type === 'subagent.started' && typeof data.toolCallId === 'string') {
      this.awaitingPrompt.push(data.toolCallId);
      const name = typeof data.agentDisplayName === 'string' ? data.agentDisplayName : data.agentName;
      this.subAgents.set(data.toolCallId, { calls: 0, ...(typeof name === 'string' ? { name } : {}) });
      this.log.skip(type);
      return;
    }
    // the session's own events: whichever conversation is replayed
    if (type === 'session.start') {
      if (typeof data.selectedModel === 'string') this.model = data.selectedModel;
      return;
    }
    if (type === 'session.usage_record') {
      const u = isRecord(data.usage) ? data.usage : {};
      const wire = wireOfUsage(u);
      if (wire) this.wires.set(wire, (this.wires.get(wire) ?? 0) + 1);
      if (typeof u.model === 'string') this.model = u.model;
      this.log.skip(type);
      return;
    }
    const sub = this.subAgentOf(type, data);
    const started = sub === undefined ? undefined : this.subAgents.get(sub);
    if (started && type === 'assistant.message') started.calls++;
    // the conversation replayed: the main one, or the sub-agent asked for
    if (sub !== this.instance) {
      this.log.skip(sub === undefined ? 'main-conversation' : 'sub-agent');
      return;
    }
    switch (type) {
      case 'system.message':
      case 'user.message': {
        const text = type === 'user.message' && typeof data.transformedContent === 'string' ? data.transformedContent : data.content;
        if (typeof text !== 'string') {
          this.log.skip('no-content', `line ${line}: a ${type} without its text`);
          return;
        }
        this.push(type === 'system.message' ? { kind: 'system', text, time } : { kind: 'user', text, time });
        return;
      }
      case 'assistant.message': {
        const requests = Array.isArray(data.toolRequests) ? data.toolRequests.filter(isRecord) : [];
        const calls = requests.map((t): ToolCall => {
          const input = t.arguments ?? {};
          return {
            id: String(t.toolCallId ?? ''),
            name: String(t.name ?? ''),
            input,
            args: typeof input === 'string' ? input : JSON.stringify(input),
          };
        });
        const text = typeof data.content === 'string' ? data.content : '';
        const reply = [text, ...calls.map((c) => c.args)].filter(Boolean).join('\n');
        this.calls.push({ entries: this.entries.length, reply });
        this.push({ kind: 'assistant', text, calls, time });
        return;
      }
      case 'tool.execution_complete':
        if (typeof data.toolCallId !== 'string') {
          this.log.skip('no-call-id', `line ${line}: a tool result without its call id`);
          return;
        }
        this.push({ kind: 'result', id: data.toolCallId, text: resultText(data), time });
        return;
      default:
        if (SILENT_EVENTS.has(type)) this.log.skip(type);
        else
          this.log.skipNoteFirst(
            type || 'no-type',
            `line ${line}: ${type ? `a ${preview(type)} event` : 'an event without a type'}, which sends nothing this reader knows of`,
          );
    }
  }

  /** The wire format most calls went out in, else the model's family. */
  wire(): WireFormat {
    let best: WireFormat | undefined;
    for (const [w, n] of this.wires) if (best === undefined || n > this.wires.get(best)!) best = w;
    return best ?? (/claude/i.test(this.model ?? '') ? 'anthropic-messages' : 'openai-chat');
  }
}

/** The entries as `wire` items; `at[i]` is the number of items entry `i` starts at. */
function toItems(entries: readonly Entry[], wire: WireFormat): { base: Json; items: unknown[]; at: number[] } {
  const base: Json = {};
  const items: unknown[] = [];
  const at: number[] = [];
  const system: string[] = [];
  for (const e of entries) {
    at.push(items.length);
    if (e.kind === 'system') {
      if (wire === 'openai-chat') items.push({ role: 'system', content: e.text });
      else system.push(e.text);
    } else if (e.kind === 'user') {
      if (wire === 'openai-responses') items.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: e.text }] });
      else if (wire === 'anthropic-messages') items.push({ role: 'user', content: [{ type: 'text', text: e.text }] });
      else items.push({ role: 'user', content: e.text });
    } else if (e.kind === 'assistant') {
      if (wire === 'openai-chat') {
        items.push({
          role: 'assistant',
          content: e.text || null,
          refusal: null,
          ...(e.calls.length
            ? {
                tool_calls: e.calls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.name, arguments: c.args },
                })),
              }
            : {}),
        });
      } else if (wire === 'anthropic-messages') {
        const content = [
          ...(e.text ? [{ type: 'text', text: e.text }] : []),
          ...e.calls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input })),
        ];
        items.push({ role: 'assistant', content });
      } else {
        if (e.text) items.push({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: e.text }] });
        for (const c of e.calls)
          items.push({
            type: 'function_call',
            id: `fc_${c.id}`,
            name: c.name,
            arguments: c.args,
            call_id: c.id,
            status: 'completed',
          });
      }
    } else if (wire === 'openai-chat') items.push({ role: 'tool', tool_call_id: e.id, content: e.text });
    else if (wire === 'openai-responses') items.push({ type: 'function_call_output', call_id: e.id, output: e.text });
    else {
      // Anthropic: the results of one answer go back as one user message
      const last = items[items.length - 1] as Json | undefined;
      const block = { type: 'tool_result', tool_use_id: e.id, content: e.text };
      const merge = last?.role === 'user' && Array.isArray(last.content) && (last.content as Json[]).every((b) => b.type === 'tool_result');
      if (merge) {
        (last.content as Json[]).push(block);
        at[at.length - 1] = items.length - 1;
      } else items.push({ role: 'user', content: [block] });
    }
  }
  if (system.length) base[wire === 'anthropic-messages' ? 'system' : 'instructions'] = system.join('\n\n');
  return { base, items, at };
}

/**
 * Reads a Copilot CLI `events.jsonl`: the main conversation, or with `instance` (the `task` call id a
 * note names) that sub-agent's conversation.
 */
export async function readCopilotCli(path: string, opts: StreamOptions & { instance?: string } = {}): Promise<Transcript> {
  const log = new SkipLog();
  const session = new Session(log, opts.instance);
  await forEachRecord(path, opts, log, (record, line) => session.record(record, line));
  if (opts.instance !== undefined && !session.subAgents.has(opts.instance)) {
    const known = [...session.subAgents.keys()];
    throw new SpillwayError(
      `${path}: no sub-agent started by task call ${preview(opts.instance)}; ${known.length ? `its sub-agents: ${known.join(', ')}` : 'the session started none'}`,
      'invalid-input',
    );
  }
  const wire = session.wire();
  const { base, items, at } = toItems(session.entries, wire);
  for (const [id, { calls, name }] of session.subAgents) {
    if (id === opts.instance) continue;
    log.note(
      `sub-agent ${id}${name ? ` (${name})` : ''}, started by the task tool, made ${calls} call(s) written in the same log: left out (--instance ${id} replays it)`,
    );
  }
  if (opts.instance !== undefined) log.note(`the sub-agent started by task call ${opts.instance} is replayed, not the main conversation`);
  if (session.model) base.model = session.model;
  const calls: TranscriptCall[] = session.calls.map((c) => {
    let time: number | undefined;
    for (let i = c.entries - 1; i >= 0 && time === undefined; i--) time = session.entries[i]!.time;
    return { end: c.entries < at.length ? at[c.entries]! : items.length, reply: c.reply, ...(time !== undefined ? { at: time } : {}) };
  });
  return { source: 'copilot-cli', wire, base, items, calls, skipped: log.result() };
}
