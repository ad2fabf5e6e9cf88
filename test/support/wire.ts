/**
 * Test support for the engine: one abstract transcript model, builders that turn it into requests
 * in the four wire formats (with unknown fields wherever the format allows them), a serializer that
 * writes them with varied whitespace (JSON.stringify indents, or Python's `", "`/`": "` separators
 * with non-ASCII escaped as \uXXXX), and helpers that locate tool results and tool inputs in a parsed
 * request the way the formats define them (independently of the engine's reader).
 */
import type { WireFormat } from '../../src/engine/types';

export type Extra = Record<string, unknown>;
/** Unknown fields put before and after the fields a format defines (so key order is exercised). */
export interface Extras {
  before?: Extra;
  after?: Extra;
}

export interface Call {
  id: string;
  name: string;
  args: Record<string, unknown>;
  /** Responses only: a custom_tool_call (free-form string input) instead of a function_call */
  custom?: boolean;
  extras?: Extras;
}

export interface ResultSpec {
  callId: string;
  /** the result's text parts; a string content holds them joined by "\n" */
  parts: string[];
  /** content as an array of text parts (chat, responses, anthropic) instead of one string */
  blocks?: boolean;
  /** an image part after the text parts (anthropic, responses) */
  image?: boolean;
  isError?: boolean;
  cacheControl?: boolean;
  extras?: Extras;
  /** extras on the text parts, when `blocks` */
  partExtras?: Extras;
}

export type Item =
  | { kind: 'user'; text: string; extras?: Extras }
  | { kind: 'assistant'; text?: string; calls: Call[]; extras?: Extras }
  | { kind: 'results'; results: ResultSpec[]; extras?: Extras };

export interface Transcript {
  system?: string;
  items: Item[];
  extras?: Extras;
}

/** What the store must hold for a result: its text parts joined by "\n". */
export function originalText(r: ResultSpec): string {
  return r.parts.join('\n');
}

function obj(core: Extra, extras?: Extras): Extra {
  return { ...(extras?.before ?? {}), ...core, ...(extras?.after ?? {}) };
}

const IMAGE_ANTHROPIC = {
  type: 'image',
  source: {
    type: 'base64',
    media_type: 'image/png',
    data: 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  },
};
const IMAGE_RESPONSES = { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' };

function toChat(t: Transcript): Extra {
  const messages: Extra[] = [];
  if (t.system !== undefined) messages.push({ role: 'system', content: t.system });
  for (const it of t.items) {
    if (it.kind === 'user') messages.push(obj({ role: 'user', content: it.text }, it.extras));
    else if (it.kind === 'assistant') {
      const core: Extra = { role: 'assistant', content: it.text ?? null };
      if (it.calls.length) {
        core.tool_calls = it.calls.map((c) =>
          obj({ id: c.id, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.args) } }, c.extras),
        );
      }
      messages.push(obj(core, it.extras));
    } else {
      for (const r of it.results) {
        const content = r.blocks ? r.parts.map((p) => obj({ type: 'text', text: p }, r.partExtras)) : originalText(r);
        messages.push(obj({ role: 'tool', tool_call_id: r.callId, content }, r.extras));
      }
    }
  }
  return obj({ model: 'gpt-4o', messages }, t.extras);
}

function toResponses(t: Transcript): Extra {
  const input: Extra[] = [];
  const calls = new Map<string, Call>();
  for (const it of t.items) {
    if (it.kind === 'user') input.push(obj({ type: 'message', role: 'user', content: [{ type: 'input_text', text: it.text }] }, it.extras));
    else if (it.kind === 'assistant') {
      if (it.text !== undefined)
        input.push(obj({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: it.text }] }, it.extras));
      for (const c of it.calls) {
        calls.set(c.id, c);
        input.push(
          c.custom
            ? obj(
                { type: 'custom_tool_call', call_id: c.id, name: c.name, input: String(c.args.input ?? JSON.stringify(c.args)) },
                c.extras,
              )
            : obj({ type: 'function_call', call_id: c.id, name: c.name, arguments: JSON.stringify(c.args) }, c.extras),
        );
      }
    } else {
      for (const r of it.results) {
        const custom = calls.get(r.callId)?.custom;
        let output: unknown = originalText(r);
        if (r.blocks || r.image) {
          const parts: unknown[] = r.parts.map((p) => obj({ type: 'input_text', text: p }, r.partExtras));
          if (r.image) parts.push(IMAGE_RESPONSES);
          output = parts;
        }
        input.push(obj({ type: custom ? 'custom_tool_call_output' : 'function_call_output', call_id: r.callId, output }, r.extras));
      }
    }
  }
  const core: Extra = { model: 'gpt-5' };
  if (t.system !== undefined) core.instructions = t.system;
  core.input = input;
  return obj(core, t.extras);
}

function toAnthropic(t: Transcript): Extra {
  const messages: Extra[] = [];
  for (const it of t.items) {
    if (it.kind === 'user') messages.push(obj({ role: 'user', content: [{ type: 'text', text: it.text }] }, it.extras));
    else if (it.kind === 'assistant') {
      const content: Extra[] = [];
      if (it.text !== undefined) content.push({ type: 'text', text: it.text });
      for (const c of it.calls) content.push(obj({ type: 'tool_use', id: c.id, name: c.name, input: c.args }, c.extras));
      messages.push(obj({ role: 'assistant', content }, it.extras));
    } else {
      const content = it.results.map((r) => {
        const core: Extra = { type: 'tool_result', tool_use_id: r.callId };
        if (r.blocks || r.image) {
          const blocks: unknown[] = r.parts.map((p) => obj({ type: 'text', text: p }, r.partExtras));
          if (r.image) blocks.push(IMAGE_ANTHROPIC);
          core.content = blocks;
        } else core.content = originalText(r);
        if (r.isError) core.is_error = true;
        if (r.cacheControl) core.cache_control = { type: 'ephemeral' };
        return obj(core, r.extras);
      });
      messages.push(obj({ role: 'user', content }, it.extras));
    }
  }
  const core: Extra = { model: 'claude-sonnet-4-5', max_tokens: 4096 };
  // a system prompt (and so detection by `system`) is the common case; without one, tool_use
  // blocks identify the format
  if (t.system !== undefined) core.system = [{ type: 'text', text: t.system, cache_control: { type: 'ephemeral' } }];
  core.messages = messages;
  return obj(core, t.extras);
}

/**
 * Gemini API `contents`. Calls whose id starts `fc-` are sent without one and answered with it (as
 * Gemini CLI does: the model gave no id, the agent made one up); `call_N` ids (numbered per turn)
 * are on neither side (matched by order and name); others on both. `isError` puts the text under
 * `error`; parts (`blocks`) are joined into the one `output` string; an image goes in the response's
 * nested `parts`.
 */
function toGemini(t: Transcript): Extra {
  const contents: Extra[] = [];
  const sendsId = (id: string) => !id.startsWith('fc-') && !/^call_\d+$/.test(id);
  const names = new Map<string, string>();
  for (const it of t.items) {
    if (it.kind === 'assistant') for (const c of it.calls) names.set(c.id, c.name);
    if (it.kind === 'user') contents.push(obj({ role: 'user', parts: [{ text: it.text }] }, it.extras));
    else if (it.kind === 'assistant') {
      const parts: Extra[] = [];
      if (it.text !== undefined) parts.push({ text: it.text });
      for (const c of it.calls)
        parts.push({ functionCall: obj({ ...(sendsId(c.id) ? { id: c.id } : {}), name: c.name, args: c.args }, c.extras) });
      if (!parts.length) parts.push({ text: '' });
      contents.push(obj({ role: 'model', parts }, it.extras));
    } else {
      const parts = it.results.map((r) => {
        const response = obj({ [r.isError ? 'error' : 'output']: originalText(r) }, r.partExtras);
        const core: Extra = {
          ...(/^call_\d+$/.test(r.callId) ? {} : { id: r.callId }),
          name: names.get(r.callId) ?? 'unknown_tool',
          response,
        };
        if (r.image) core.parts = [{ inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }];
        return { functionResponse: obj(core, r.extras) };
      });
      contents.push(obj({ role: 'user', parts }, it.extras));
    }
  }
  const core: Extra = { contents };
  if (t.system !== undefined) core.systemInstruction = { role: 'user', parts: [{ text: t.system }] };
  core.generationConfig = { temperature: 0 };
  return obj(core, t.extras);
}

export function build(t: Transcript, format: WireFormat): Extra {
  return format === 'openai-chat'
    ? toChat(t)
    : format === 'openai-responses'
      ? toResponses(t)
      : format === 'gemini'
        ? toGemini(t)
        : toAnthropic(t);
}

// ---- serialisation ----------------------------------------------------------------------------

export interface Style {
  indent: 0 | 1 | 2;
  python: boolean;
}

/** JSON.stringify's string escaping, then (Python's ensure_ascii) DEL and every non-ASCII UTF-16 unit as \uXXXX. */
function str(s: string, python: boolean): string {
  const j = JSON.stringify(s);
  return python ? j.replace(/[\u007f-\uffff]/g, (c) => '\\u' + c.charCodeAt(0).toString(16).padStart(4, '0')) : j;
}

/**
 * Serialises like `JSON.stringify(v, null, indent)`, or like Python's
 * `json.dumps(v, indent=indent or None)` (ensure_ascii, `", "` and `": "` without indent). Checked
 * against Python's output: identical except floats with exponents (JavaScript writes `1e-9` and
 * `0.000001`, Python `1e-09` and `1e-06`), which the engine never rewrites either way.
 */
export function serialize(v: unknown, style: Style): string {
  if (!style.python) return JSON.stringify(v, null, style.indent);
  const { indent } = style;
  const walk = (x: unknown, depth: number): string => {
    if (x === null) return 'null';
    if (typeof x === 'string') return str(x, true);
    if (typeof x === 'number' || typeof x === 'boolean') return JSON.stringify(x);
    const pad = (d: number) => (indent ? '\n' + ' '.repeat(indent * d) : '');
    const sep = indent ? ',' : ', ';
    if (Array.isArray(x)) {
      if (x.length === 0) return '[]';
      return '[' + x.map((e) => pad(depth + 1) + walk(e, depth + 1)).join(sep) + pad(depth) + ']';
    }
    const entries = Object.entries(x as Extra).filter(([, e]) => e !== undefined);
    if (entries.length === 0) return '{}';
    return '{' + entries.map(([k, e]) => pad(depth + 1) + str(k, true) + ': ' + walk(e, depth + 1)).join(sep) + pad(depth) + '}';
  };
  return walk(v, 0);
}

// ---- reading a parsed request back (independent of the engine's readers) --------------------

export interface ResultLoc {
  /** the object holding the result's content, and the key of the content in it */
  holder: Extra;
  key: string;
  callId: string;
}

export interface InputLoc {
  holder: Extra;
  key: string;
  callId: string;
}

/** The tool results of a parsed request, in document order, as each format defines them. */
export function locateResults(req: Extra, format: WireFormat): ResultLoc[] {
  const out: ResultLoc[] = [];
  if (format === 'gemini') {
    for (const c of (req.contents as Extra[]) ?? []) {
      if (c.role !== 'user' || !Array.isArray(c.parts)) continue;
      for (const p of c.parts as Extra[]) {
        const fr = p.functionResponse as Extra | undefined;
        if (!fr) continue;
        const response = fr.response as Extra;
        out.push({ holder: response, key: 'output' in response ? 'output' : 'error', callId: String(fr.id) });
      }
    }
  } else if (format === 'openai-chat') {
    for (const m of (req.messages as Extra[]) ?? [])
      if (m.role === 'tool') out.push({ holder: m, key: 'content', callId: String(m.tool_call_id) });
  } else if (format === 'openai-responses') {
    for (const it of (req.input as Extra[]) ?? []) {
      if (it.type === 'function_call_output' || it.type === 'custom_tool_call_output')
        out.push({ holder: it, key: 'output', callId: String(it.call_id) });
    }
  } else {
    for (const m of (req.messages as Extra[]) ?? []) {
      if (m.role !== 'user' || !Array.isArray(m.content)) continue;
      for (const b of m.content as Extra[])
        if (b.type === 'tool_result') out.push({ holder: b, key: 'content', callId: String(b.tool_use_id) });
    }
  }
  return out;
}

/**
 * For each tool result (in document order), where the input of the call it answers sits: the
 * nearest earlier call with its id, since agents that number calls per turn reuse ids.
 */
export function inputsByResult(req: Extra, format: WireFormat): Array<InputLoc | undefined> {
  const latest = new Map<string, InputLoc>();
  const out: Array<InputLoc | undefined> = [];
  const items = itemsOf(req, format) as Extra[];
  // gemini: a response answers the call of the model content before it at its own position
  let open: InputLoc[] = [];
  for (const it of items) {
    if (format === 'gemini') {
      const parts = (it.parts as Extra[] | undefined) ?? [];
      if (it.role === 'model') {
        open = [];
        parts.forEach((p, k) => {
          const fc = p.functionCall as Extra | undefined;
          if (fc) open.push({ holder: fc, key: 'args', callId: String(fc.id ?? k) });
        });
      } else parts.forEach((p, k) => p.functionResponse && out.push(open[k]));
    } else if (format === 'openai-chat') {
      for (const c of (it.tool_calls as Extra[] | undefined) ?? [])
        latest.set(String(c.id), { holder: c.function as Extra, key: 'arguments', callId: String(c.id) });
      if (it.role === 'tool') out.push(latest.get(String(it.tool_call_id)));
    } else if (format === 'openai-responses') {
      if (it.type === 'function_call') latest.set(String(it.call_id), { holder: it, key: 'arguments', callId: String(it.call_id) });
      if (it.type === 'custom_tool_call') latest.set(String(it.call_id), { holder: it, key: 'input', callId: String(it.call_id) });
      if (it.type === 'function_call_output' || it.type === 'custom_tool_call_output') out.push(latest.get(String(it.call_id)));
    } else if (Array.isArray(it.content)) {
      for (const b of it.content as Extra[]) {
        if (it.role === 'assistant' && b.type === 'tool_use') latest.set(String(b.id), { holder: b, key: 'input', callId: String(b.id) });
        if (it.role === 'user' && b.type === 'tool_result') out.push(latest.get(String(b.tool_use_id)));
      }
    }
  }
  return out;
}

/** For each tool result of a transcript, in order, the call it answers (the nearest earlier one with its id). */
export function callsByResult(t: Transcript): Array<Call | undefined> {
  const latest = new Map<string, Call>();
  const out: Array<Call | undefined> = [];
  for (const it of t.items) {
    if (it.kind === 'assistant') for (const c of it.calls) latest.set(c.id, c);
    if (it.kind === 'results') for (const r of it.results) out.push(latest.get(r.callId));
  }
  return out;
}

const TEXT_TYPES = new Set(['text', 'input_text', 'output_text']);
const isTextPart = (p: unknown): p is Extra =>
  !!p && typeof p === 'object' && !Array.isArray(p) && TEXT_TYPES.has(String((p as Extra).type)) && typeof (p as Extra).text === 'string';

/** The text of a result content value as the engine must see it: its text parts joined by "\n". */
export function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .filter(isTextPart)
      .map((p) => p.text as string)
      .join('\n');
  return '';
}

/**
 * What a reduced result's content must look like, given the original content: a string becomes
 * the marker; an array keeps its non-text parts in place, its first text part (all fields, in
 * order) with the marker as text, and drops the other text parts. The marker is a placeholder.
 */
export function collapsed(content: unknown, marker: string): unknown {
  if (typeof content === 'string') return marker;
  if (!Array.isArray(content)) return content;
  let done = false;
  const out: unknown[] = [];
  for (const p of content) {
    if (!isTextPart(p)) {
      out.push(p);
      continue;
    }
    if (done) continue;
    done = true;
    out.push({ ...p, text: marker });
  }
  return out;
}

/** The marker text of a projected content value: a string, or the first text part's text. */
export function projectedMarker(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const parts = content.filter(isTextPart);
    return parts.length === 1 ? (parts[0]!.text as string) : undefined;
  }
  return undefined;
}

/** The message-level items of a parsed request. */
export function itemsOf(req: Extra, format: WireFormat): unknown[] {
  return ((format === 'openai-responses' ? req.input : format === 'gemini' ? req.contents : req.messages) as unknown[]) ?? [];
}

// ---- compact transcripts for example-based tests ---------------------------------------------

export interface ToolStep {
  tool: string;
  output: string;
  id?: string;
  args?: Record<string, unknown>;
  /** Responses: a custom_tool_call, whose input is `args.input` as a plain string */
  custom?: boolean;
  /** result options: parts instead of one string, image, is_error, cache_control */
  result?: Partial<Omit<ResultSpec, 'callId'>>;
}
/** A user message (string), one tool round (a call and its result), or parallel calls in one round. */
export type Step = string | ToolStep | ToolStep[];

/** Builds a transcript; call ids default to call_1, call_2, … in order. */
export function transcript(...steps: Step[]): Transcript {
  const items: Item[] = [];
  let n = 0;
  for (const s of steps) {
    if (typeof s === 'string') {
      items.push({ kind: 'user', text: s });
      continue;
    }
    const group = Array.isArray(s) ? s : [s];
    const ids = group.map((g) => g.id ?? `call_${++n}`);
    items.push({
      kind: 'assistant',
      calls: group.map((g, i) => ({ id: ids[i]!, name: g.tool, args: g.args ?? { n: i }, ...(g.custom ? { custom: true } : {}) })),
    });
    items.push({ kind: 'results', results: group.map((g, i) => ({ callId: ids[i]!, parts: [g.output], ...g.result })) });
  }
  return { items };
}

/** The projected content values of a projection's tool results, in order. */
export function contentsOf(request: string, format: WireFormat): unknown[] {
  return locateResults(JSON.parse(request) as Extra, format).map((l) => l.holder[l.key]);
}
