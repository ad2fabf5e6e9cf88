/**
 * Qwen Code's chats (`~/.qwen/projects/<cwd, / as ->/chats/<session>.jsonl`) as the requests it
 * sent through an OpenAI-compatible provider.
 *
 * The file is one record a line, each `{uuid, parentUuid, sessionId, timestamp, type, cwd, version}`
 * (0.24), with the conversation in Gemini's own form:
 * - `user`: `message.parts` with the prompt's text;
 * - `assistant`: `message.parts` (`role: "model"`) with the answer's text, its thoughts
 *   (`thought: true`) and its `functionCall`s (`id`, `name`, `args`); `model` names the model;
 * - `tool_result`: `message.parts` with a `functionResponse` per call (`id`, `response.output`);
 * - `system`: telemetry and snapshots, which send nothing: counted and skipped.
 *
 * The records form a tree (`parentUuid`): the branch that ends at the last record is the
 * conversation, as Qwen Code resumes it. Each answer is a call, whose request is everything before
 * it, written as Qwen Code 0.24.4 sends it in Chat Completions: a prompt as text parts, an answer's
 * text (`null` beside tool calls) with its tool calls (`arguments` the JSON of `args`), each result
 * a `tool` message of one text part. The agents suite checks this against what the real CLI sent.
 *
 * Not in the file, so left out (a note says so): the system prompt, the `<system-reminder>` parts
 * Qwen Code puts before the first prompt (its skills, the working folder's listing, the date, the
 * tools it defers), and the tool declarations. Thoughts are left out too (counted).
 */
import type { StreamOptions } from './lines';
import { forEachRecord } from './lines';
import { SkipLog, preview } from './skip-log';
import type { Transcript } from './types';
import { computeCalls, isRecord, mostAnsweringModel, parseTime, type Json } from './wire';

const QWEN_TYPES: ReadonlySet<string> = new Set(['user', 'assistant', 'tool_result', 'system']);

/** A record of Qwen Code's chat log: Claude Code's record shape with a Gemini `message` (`parts`). */
export function isQwenCodeRecord(record: Json): boolean {
  return (
    typeof record.uuid === 'string' &&
    typeof record.type === 'string' &&
    QWEN_TYPES.has(record.type) &&
    (record.type === 'system' ? record.provenance === 'system' : isRecord(record.message) && Array.isArray(record.message.parts))
  );
}

interface Entry {
  type: string;
  parts: Json[];
  model?: string;
  time?: number;
}

/** A function response's text: its output, else its error, else the whole response as JSON. */
function responseText(response: unknown): string {
  if (isRecord(response)) {
    if (typeof response.output === 'string') return response.output;
    if (typeof response.error === 'string') return response.error;
  }
  return JSON.stringify(response ?? null);
}

/** Reads a Qwen Code chat log (see the module comment). */
export async function readQwenCode(path: string, opts: StreamOptions = {}): Promise<Transcript> {
  const log = new SkipLog();
  const entries = new Map<string, Entry>();
  // every record's parent, system records' too: a conversation record's parent is often one
  const parents = new Map<string, string | undefined>();
  let last: string | undefined;
  await forEachRecord(path, opts, log, (r, line) => {
    if (!isQwenCodeRecord(r)) {
      log.skipNoteFirst(`unknown:${String(r.type)}`, `line ${line}: not a Qwen Code chat record (${preview(JSON.stringify(r))})`);
      return;
    }
    const type = r.type as string;
    parents.set(r.uuid as string, typeof r.parentUuid === 'string' ? r.parentUuid : undefined);
    if (type === 'system') {
      log.skip(`system:${typeof r.subtype === 'string' ? r.subtype : '?'}`);
      return;
    }
    const message = r.message as Json;
    const time = parseTime(r.timestamp);
    entries.set(r.uuid as string, {
      type,
      parts: (message.parts as unknown[]).filter(isRecord),
      ...(typeof r.model === 'string' ? { model: r.model } : {}),
      ...(time !== undefined ? { time } : {}),
    });
    last = r.uuid as string;
  });
  // the branch that ends at the last conversation record, through the system records between
  const chain: Entry[] = [];
  const seen = new Set<string>();
  for (let id = last; id !== undefined && !seen.has(id); id = parents.get(id)) {
    seen.add(id);
    const e = entries.get(id);
    if (e) chain.push(e);
  }
  chain.reverse();
  const off = entries.size - chain.length;
  if (off > 0) log.note(`${off} conversation record(s) on other branches (a rewind, a retry) are left out`);
  const items: Json[] = [];
  const times: (number | undefined)[] = [];
  const models: string[] = [];
  let thoughts = 0;
  for (const e of chain) {
    if (e.type === 'user') {
      const texts = e.parts.filter((p) => typeof p.text === 'string').map((p) => ({ type: 'text', text: p.text as string }));
      if (texts.length) {
        items.push({ role: 'user', content: texts });
        times.push(e.time);
      }
    } else if (e.type === 'assistant') {
      if (e.model) models.push(e.model);
      let text = '';
      const calls: Json[] = [];
      for (const p of e.parts) {
        if (p.thought === true) thoughts += 1;
        else if (typeof p.text === 'string') text += p.text;
        else if (isRecord(p.functionCall)) {
          const c = p.functionCall;
          calls.push({
            id: typeof c.id === 'string' ? c.id : '',
            type: 'function',
            function: { name: typeof c.name === 'string' ? c.name : '', arguments: JSON.stringify(c.args ?? {}) },
          });
        }
      }
      items.push({ role: 'assistant', content: calls.length ? text || null : text, ...(calls.length ? { tool_calls: calls } : {}) });
      times.push(e.time);
    } else {
      for (const p of e.parts) {
        if (!isRecord(p.functionResponse)) continue;
        const f = p.functionResponse;
        items.push({
          role: 'tool',
          tool_call_id: typeof f.id === 'string' ? f.id : '',
          content: [{ type: 'text', text: responseText(f.response) }],
        });
        times.push(e.time);
      }
    }
  }
  const model = mostAnsweringModel(models, log);
  if (thoughts) log.note(`${thoughts} thought part(s) of the answers are left out`);
  log.note(
    "Qwen Code sends its system prompt, its tool declarations and <system-reminder> parts before the first prompt (skills, the folder's listing, the date); they are not in the chat log, so calls replay without them",
  );
  return {
    source: 'qwen-code',
    wire: 'openai-chat',
    base: model ? { model } : {},
    items,
    calls: computeCalls('openai-chat', items, false, times),
    skipped: log.result(),
  };
}
