/**
 * The one item model every wire format is read into.
 *
 * A format reader locates, in the original request text, the items of the conversation, the tool
 * calls (id → name, where the input is) and the tool results (where their text is). Stages decide
 * on this model only; the reader's patch functions turn decisions back into edits of the original
 * text, so whatever the engine does not change (unknown fields, key order, images, cache_control,
 * is_error, whitespace) stays exactly as it was.
 */
import { decodeString, get, parseLazy, type JObject, type JString, type JValue, type Patch } from '../json';
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
  /**
   * Set when the result's text is a JSON object with a string `output` (Codex's `exec` tool answers
   * `{"exit_code":0,…,"output":"…"}`): the result is that string. `textParts[0]` is the text part
   * that holds the JSON; a reduction replaces only the `output` string inside it, so the JSON still
   * parses and its other fields (exit code, wall time) and the item's other parts stay as they were.
   */
  embedded?: EmbeddedOutput;
}

/** The `output` string inside a text part that is a JSON object (see ToolResult.embedded). */
export interface EmbeddedOutput {
  /** the decoded text of the part: the JSON object */
  json: string;
  /** the `output` string node, offsets in `json` */
  output: JString;
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
  if (r.embedded) return decodeString(r.embedded.json, r.embedded.output);
  if (r.textParts.length === 1) return decodeString(req.text, r.textParts[0]!);
  return r.textParts.map((p) => decodeString(req.text, p)).join('\n');
}

/**
 * Where a single-string result sits as a JSON string: the text it is in and the string's offsets
 * (quotes included), for finding a marker without decoding the result. Undefined for a result
 * spread over several text parts.
 */
export function resultString(req: ParsedRequest, r: ToolResult): { src: string; start: number; end: number } | undefined {
  const o = r.observation;
  if (o) return { src: req.text, start: o.start - 1, end: o.end + 1 };
  if (r.embedded) return { src: r.embedded.json, start: r.embedded.output.start, end: r.embedded.output.end };
  const first = r.textParts[0];
  return first && { src: req.text, start: first.start, end: first.end };
}

/**
 * The `output` string of the last text part that is a JSON object with one (Codex's `exec` answers
 * put the tool's JSON after a header part). Only parts whose raw text starts with `{` are parsed.
 */
export function embeddedOutput(text: string, parts: readonly JString[]): { part: JString; embedded: EmbeddedOutput } | undefined {
  for (let k = parts.length - 1; k >= 0; k--) {
    const part = parts[k]!;
    if (text.charCodeAt(part.start + 1) !== OPEN_BRACE) continue;
    const json = decodeString(text, part);
    let root: JValue;
    try {
      root = parseLazy(json);
    } catch {
      continue; // text that only starts like JSON
    }
    const output = get(root, 'output');
    if (output?.kind === 'string') return { part, embedded: { json, output } };
  }
  return undefined;
}

const OPEN_BRACE = 123;

/** Upper bound of the result's text length without decoding it. */
export function resultRawLength(r: ToolResult): number {
  if (r.observation) return r.observation.end - r.observation.start;
  if (r.embedded) return r.embedded.output.end - r.embedded.output.start - 2;
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
  // an embedded output: only the `output` string of the part's JSON changes, the part is that JSON again
  const e = r.embedded;
  if (e) {
    const part = r.textParts[0]!;
    const json = e.json.slice(0, e.output.start) + JSON.stringify(replacement) + e.json.slice(e.output.end);
    return { start: part.start, end: part.end, text: JSON.stringify(json) };
  }
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
