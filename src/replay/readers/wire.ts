/**
 * Per-wire-format knowledge the readers share: which items are model output (a call boundary sits
 * before each run of them), what text a reply holds, and how to tell the OpenAI and Anthropic formats apart when
 * a file does not say (a Gemini API `contents` list is told by its `parts`).
 */
import type { WireFormat } from '../../engine/types';
import type { SkipLog } from './skip-log';
import type { TranscriptCall } from './types';

export type Json = Record<string, unknown>;

export function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Responses item types the model produces (everything else in `input` is sent to it). */
const RESPONSES_OUTPUT_TYPES: ReadonlySet<string> = new Set([
  'reasoning',
  'function_call',
  'custom_tool_call',
  'local_shell_call',
  'web_search_call',
  'file_search_call',
  'computer_call',
  'image_generation_call',
  'code_interpreter_call',
  'mcp_call',
  'mcp_list_tools',
  'mcp_approval_request',
]);

/** Responses input item types: the model's own output items and the results and answers sent back. */
export const RESPONSES_INPUT_TYPES: ReadonlySet<string> = new Set([
  ...RESPONSES_OUTPUT_TYPES,
  'message',
  'function_call_output',
  'custom_tool_call_output',
  'local_shell_call_output',
  'computer_call_output',
  'mcp_approval_response',
]);

/** Responses item types that mark a list as Responses input (no Chat or Anthropic item has them). */
const RESPONSES_ONLY_TYPES: ReadonlySet<string> = new Set([...RESPONSES_INPUT_TYPES, 'item_reference']);

/** Whether an item is the model's (an assistant message, a Responses output item, a Gemini `model` turn). */
export function isModelOutput(wire: WireFormat, item: unknown): boolean {
  if (!isRecord(item)) return false;
  if (wire === 'gemini') return item.role === 'model';
  if (wire !== 'openai-responses') return item.role === 'assistant';
  const type = item.type;
  if (typeof type === 'string' && RESPONSES_OUTPUT_TYPES.has(type)) return true;
  return (type === 'message' || type === undefined) && item.role === 'assistant';
}

function textOf(content: unknown, blockTypes: ReadonlySet<string>): string[] {
  if (typeof content === 'string') return [content];
  if (!Array.isArray(content)) return [];
  const out: string[] = [];
  for (const part of content) {
    if (isRecord(part) && typeof part.type === 'string' && blockTypes.has(part.type) && typeof part.text === 'string') {
      out.push(part.text);
    }
  }
  return out;
}

const CHAT_TEXT = new Set(['text']);
const ANTHROPIC_TEXT = new Set(['text']);
const RESPONSES_TEXT = new Set(['output_text', 'text', 'input_text']);

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value ?? null));

/** The text an agent's model wrote in one output item: assistant text plus tool call arguments/inputs. */
export function replyParts(wire: WireFormat, item: unknown): string[] {
  if (!isRecord(item)) return [];
  if (wire === 'gemini') {
    const out: string[] = [];
    for (const part of Array.isArray(item.parts) ? item.parts : []) {
      if (!isRecord(part) || part.thought === true) continue;
      if (typeof part.text === 'string') out.push(part.text);
      else if (isRecord(part.functionCall) && 'args' in part.functionCall) out.push(asText(part.functionCall.args));
    }
    return out;
  }
  if (wire === 'anthropic-messages') {
    if (!Array.isArray(item.content)) return textOf(item.content, ANTHROPIC_TEXT);
    const out: string[] = [];
    for (const block of item.content) {
      if (!isRecord(block)) continue;
      if (block.type === 'text' && typeof block.text === 'string') out.push(block.text);
      else if ((block.type === 'tool_use' || block.type === 'server_tool_use') && 'input' in block) out.push(asText(block.input));
    }
    return out;
  }
  if (wire === 'openai-chat') {
    const out = textOf(item.content, CHAT_TEXT);
    if (Array.isArray(item.tool_calls)) {
      for (const call of item.tool_calls) {
        if (isRecord(call) && isRecord(call.function) && 'arguments' in call.function) out.push(asText(call.function.arguments));
      }
    }
    if (isRecord(item.function_call) && 'arguments' in item.function_call) out.push(asText(item.function_call.arguments));
    return out;
  }
  switch (item.type) {
    case 'function_call':
      return 'arguments' in item ? [asText(item.arguments)] : [];
    case 'custom_tool_call':
      return 'input' in item ? [asText(item.input)] : [];
    case 'local_shell_call':
      return 'action' in item ? [asText(item.action)] : [];
    case 'reasoning':
      return [];
    default:
      return item.role === 'assistant' ? textOf(item.content, RESPONSES_TEXT) : [];
  }
}

/** An ISO 8601 date and time, with or without a zone (`2026-01-01T05:03:58.880Z`, `2025-10-30T03:50:30.915175`). */
const ISO_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * A record's time as ms since the epoch, or undefined when it has none or it is not a valid time
 * (never a guess). Accepted: an ISO 8601 string (a time without a zone, as OpenHands writes its
 * machine's local time, is read as UTC: the gaps between a file's times are right, the absolute time
 * may be off by that machine's offset) or a number of ms since the epoch (pi). A time before 2000 is
 * not a log's (a placeholder, or seconds taken for ms) and is rejected too.
 */
export function parseTime(value: unknown): number | undefined {
  const t = timeOf(value);
  return t !== undefined && t >= EARLIEST_LOG_TIME ? t : undefined;
}

/** No agent wrote a log before 2000: an earlier time is a placeholder or seconds read as ms. */
const EARLIEST_LOG_TIME = Date.UTC(2000, 0, 1);

function timeOf(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = ISO_TIME.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const ms = frac ? Math.round(Number(`0${frac}`) * 1000) : 0;
  const utc = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  const date = new Date(utc);
  // Date.UTC rolls 2026-02-31 over to March: such a date is invalid, not a guess
  if (date.getUTCMonth() !== Number(mo) - 1 || date.getUTCDate() !== Number(d) || Number(h) > 23 || Number(mi) > 59 || Number(s) > 60)
    return undefined;
  let offset = 0;
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2))) * 60_000;
  }
  return utc - offset;
}

/**
 * One call before each run of model output that follows at least one input item; its reply is that
 * run's text. A run at the very start has no request before it and is not a call. With
 * `callAtEnd`, the whole list is one more call (its reply unknown): a saved request body is the
 * input of a call whose answer is not in the file. `times[i]`, when given, is the time of the last
 * record that went into item i; a call's `at` is that of the last item of its request (the tool
 * result or user message it answers), absent when that item has none.
 */
export function computeCalls(
  wire: WireFormat,
  items: readonly unknown[],
  callAtEnd = false,
  times?: readonly (number | undefined)[],
): TranscriptCall[] {
  const calls: TranscriptCall[] = [];
  let i = 0;
  while (i < items.length) {
    if (!isModelOutput(wire, items[i])) {
      i += 1;
      continue;
    }
    const start = i;
    const parts: string[] = [];
    while (i < items.length && isModelOutput(wire, items[i])) {
      parts.push(...replyParts(wire, items[i]));
      i += 1;
    }
    if (start > 0) {
      const at = times?.[start - 1];
      calls.push({ end: start, reply: parts.filter((p) => p !== '').join('\n'), ...(at !== undefined ? { at } : {}) });
    }
  }
  if (callAtEnd && items.length > 0 && calls.at(-1)?.end !== items.length) {
    const at = times?.[items.length - 1];
    calls.push({ end: items.length, reply: '', ...(at !== undefined ? { at } : {}) });
  }
  return calls;
}

/** The calls made before the item list was `items` long: those whose answer is among those items. */
export function callsBefore(calls: readonly TranscriptCall[], items: number): number {
  let n = 0;
  while (n < calls.length && calls[n]!.end < items) n++;
  return n;
}

const ANTHROPIC_BLOCKS = new Set([
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'document',
  'server_tool_use',
  'web_search_tool_result',
]);
const CHAT_PARTS = new Set(['image_url', 'input_audio', 'refusal', 'file']);

/**
 * Tells an item list's wire format by its shape, or undefined when nothing decides it (plain
 * user/assistant text is valid in both Chat and Anthropic).
 */
export function classifyItems(items: readonly unknown[]): WireFormat | undefined {
  let sawChat = false;
  let sawAnthropic = false;
  for (const item of items) {
    if (!isRecord(item)) continue;
    if (typeof item.type === 'string' && RESPONSES_ONLY_TYPES.has(item.type)) return 'openai-responses';
    if (item.role === 'system' || item.role === 'developer' || item.role === 'tool' || item.role === 'function') sawChat = true;
    if ('tool_calls' in item || 'tool_call_id' in item || 'function_call' in item) sawChat = true;
    if (Array.isArray(item.content)) {
      for (const part of item.content) {
        if (!isRecord(part) || typeof part.type !== 'string') continue;
        if (part.type === 'input_text' || part.type === 'output_text') return 'openai-responses';
        if (ANTHROPIC_BLOCKS.has(part.type)) sawAnthropic = true;
        if (CHAT_PARTS.has(part.type)) sawChat = true;
        if (part.type === 'image' && isRecord(part.source)) sawAnthropic = true;
      }
    }
  }
  if (sawAnthropic && !sawChat) return 'anthropic-messages';
  if (sawChat && !sawAnthropic) return 'openai-chat';
  return undefined;
}

/**
 * The model most of a session's answers name (`models`: each answer's, in order), which prices the
 * replay; a note names every model and its answers when there were several. Undefined for none.
 */
export function mostAnsweringModel(models: readonly string[], log: SkipLog): string | undefined {
  const counts = new Map<string, number>();
  for (const m of models) counts.set(m, (counts.get(m) ?? 0) + 1);
  const model = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (counts.size > 1) log.note(`the session called ${[...counts].map(([m, n]) => `${m} (${n})`).join(', ')}: replayed as ${model}`);
  return model;
}
