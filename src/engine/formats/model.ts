/**
 * The one item model every wire format is read into.
 *
 * A format reader locates, in the original request text, the items of the conversation, the tool
 * calls (id → name, where the input is) and the tool results (where their text is). Stages decide
 * on this model only; the reader's patch functions turn decisions back into edits of the original
 * text, so whatever the engine does not change (unknown fields, key order, images, cache_control,
 * is_error, whitespace) stays exactly as it was.
 */
import { decodeString, type JObject, type JString, type JValue, type Patch } from '../json';
import type { WireFormat } from '../types';
import { decodeRaw, type ObservationSpan } from './observations';

export type ItemKind = 'user' | 'assistant' | 'tool' | 'other';

export interface ToolCall {
  id: string;
  /** the name the cap lookup tries first: qualified (`server.tool`) when the format says so */
  name: string;
  item: number;
  /** the input node: a JSON-encoded string (chat, responses) or an object (anthropic) */
  input?: JValue;
}

export interface ToolResult {
  /** ordinal among the request's tool results */
  n: number;
  /** index of the item (message / input item) that holds it */
  item: number;
  callId: string;
  tool: string;
  /** names tried, in order, when looking up a cap: qualified, then bare */
  names: string[];
  /** the node a reduction replaces; undefined when the result has no content to reduce */
  content?: JValue;
  /** the text strings of the content, in order */
  textParts: JString[];
  isError: boolean;
  /** the call this result answers, as read where the result is (a call id can recur later) */
  call?: ToolCall;
  /**
   * Set when the result is an observation: a command's output inside a user message (text-mode
   * agents). `content` and `textParts[0]` are then the message's string and the reduction replaces
   * only this span of it.
   */
  observation?: ObservationSpan;
}

/**
 * Calls by id that also keeps every call in request order, duplicates included: a resumed session
 * can carry the same tool_use id twice, and each copy's input must be seen (file inputs).
 */
export class CallMap extends Map<string, ToolCall> {
  readonly all: ToolCall[] = [];
  override set(id: string, call: ToolCall): this {
    this.all?.push(call);
    return super.set(id, call);
  }
}

export interface ParsedRequest {
  format: WireFormat;
  text: string;
  root: JObject;
  items: JValue[];
  kinds: ItemKind[];
  results: ToolResult[];
  calls: Map<string, ToolCall>;
  /** request parts sent with every call besides the items: system prompt, instructions, tools */
  fixed: JValue[];
}

/** The text of a result as the engine sees, stores and restores it: its text parts joined. */
export function resultText(req: ParsedRequest, r: ToolResult): string {
  const o = r.observation;
  if (o) return decodeRaw(req.text, o.start, o.end, o.string.escaped);
  if (r.textParts.length === 1) return decodeString(req.text, r.textParts[0]!);
  return r.textParts.map((p) => decodeString(req.text, p)).join('\n');
}

/** Upper bound of the result's text length without decoding it. */
export function resultRawLength(r: ToolResult): number {
  if (r.observation) return r.observation.end - r.observation.start;
  let n = Math.max(0, r.textParts.length - 1);
  for (const p of r.textParts) n += p.end - p.start - 2;
  return n;
}

const TEXT_PART_TYPES = new Set(['text', 'input_text', 'output_text']);

/** True for `{type: "text"|"input_text"|"output_text", text: "..."}` content parts. */
function isTextPart(text: string, node: JValue): node is JObject {
  if (node.kind !== 'object') return false;
  const t = node.keys.lastIndexOf('type');
  const x = node.keys.lastIndexOf('text');
  if (t < 0 || x < 0) return false;
  const tv = node.values[t]!,
    xv = node.values[x]!;
  return tv.kind === 'string' && xv.kind === 'string' && TEXT_PART_TYPES.has(decodeString(text, tv));
}

/** The text strings of a content value: a string, or an array of parts. */
export function textPartsOf(text: string, content: JValue | undefined): JString[] {
  if (!content) return [];
  if (content.kind === 'string') return [content];
  if (content.kind !== 'array') return [];
  const out: JString[] = [];
  for (const part of content.items) {
    if (isTextPart(text, part)) out.push(part.values[part.keys.lastIndexOf('text')] as JString);
  }
  return out;
}

/**
 * The edit that makes a result's content read `replacement`. A string content becomes the new
 * string; an array keeps every non-text part (images, documents) byte for byte, turns the first
 * text part into the replacement (keeping that part's other fields) and drops the other text parts,
 * whose text the replacement stands for.
 */
export function contentPatch(req: ParsedRequest, r: ToolResult, replacement: string): Patch {
  const o = r.observation;
  // an observation: only its body's bytes change, the template and the rest of the message stay
  if (o) return { start: o.start, end: o.end, text: JSON.stringify(replacement).slice(1, -1) };
  const content = r.content!;
  const encoded = JSON.stringify(replacement);
  if (content.kind === 'string') return { start: content.start, end: content.end, text: encoded };
  if (content.kind !== 'array') throw new Error('internal: content is neither string nor array');
  const t = req.text;
  const kept: string[] = [];
  let replaced = false;
  for (const part of content.items) {
    if (isTextPart(t, part)) {
      if (replaced) continue;
      replaced = true;
      const s = part.values[part.keys.lastIndexOf('text')] as JString;
      kept.push(t.slice(part.start, s.start) + encoded + t.slice(s.end, part.end));
    } else {
      kept.push(t.slice(part.start, part.end));
    }
  }
  return { start: content.start, end: content.end, text: `[${kept.join(',')}]` };
}

/**
 * Names tried for a tool when looking up its cap, most specific first: the full name, then the
 * bare tool for `server.tool` and `mcp__server__tool` (so a cap on `read_file` covers an MCP
 * server's `mcp__fs__read_file` unless that one has its own).
 */
export function candidateNames(name: string, namespace?: string): string[] {
  const names: string[] = [];
  const add = (n: string | undefined) => {
    if (n && !names.includes(n)) names.push(n);
  };
  if (namespace) add(`${namespace}.${name}`);
  add(name);
  const mcp = /^mcp__(.+?)__(.+)$/.exec(name);
  if (mcp) add(mcp[2]);
  const dot = name.lastIndexOf('.');
  if (dot > 0 && dot < name.length - 1) add(name.slice(dot + 1));
  return names;
}

export const UNKNOWN_TOOL = 'unknown_tool';
