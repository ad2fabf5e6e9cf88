/**
 * Readers for the four wire formats (gemini.ts holds the Gemini API's), and `--format auto` detection.
 *
 * Each reader walks the lazy tree of a request and fills the shared item model (model.ts). Readers
 * are lenient about what they do not understand: unknown item types and fields are left alone (they
 * pass through untouched) rather than rejected, because agents and providers add fields all the
 * time and Spillway must never be the reason a call fails.
 */
import { decodeString, get, getString, parseLazy, type JObject, type JValue, type ParseReuse } from '../json';
import { SpillwayError, WIRE_FORMATS, type WireFormat } from '../types';
import {
  CallMap,
  candidateNames,
  embeddedOutput,
  textPartsOf,
  UNKNOWN_TOOL,
  type ItemKind,
  type ParsedRequest,
  type ToolResult,
} from './model';
import {
  actionOf,
  observationCallId,
  observationSpan,
  toolForObservation,
  type ObservationOption,
  type ObservationSpan,
} from './observations';
import { readGemini } from './gemini';

export * from './model';
export * from './observations';

export type FormatOption = WireFormat | 'auto';

export function isWireFormat(value: string): value is WireFormat {
  return (WIRE_FORMATS as readonly string[]).includes(value);
}

/**
 * Parses a request body and reads it in the given (or detected) format. `observations` says which
 * user messages carry a command's output (observations.ts): `off` (the default here) none, `auto`
 * those that match a known agent's template after an action, or a reader's explicit marks.
 */
export function readRequest(
  text: string,
  format: FormatOption = 'auto',
  reuse?: ParseReuse,
  observations: ObservationOption = 'off',
): ParsedRequest {
  const root = parseLazy(text, reuse);
  if (root.kind !== 'object') {
    throw new SpillwayError(
      `the request must be a JSON object, got ${root.kind === 'array' ? 'an array' : `a ${root.kind}`}`,
      'bad-request',
    );
  }
  const fmt = format === 'auto' ? detectFormat(text, root) : format;
  let req: ParsedRequest;
  switch (fmt) {
    case 'openai-chat':
      req = readChat(text, root);
      break;
    case 'openai-responses':
      req = readResponses(text, root);
      break;
    case 'anthropic-messages':
      req = readAnthropic(text, root);
      break;
    case 'gemini':
      req = readGemini(text, root);
      break;
  }
  if (observations !== 'off') markObservations(req, observations);
  return req;
}

/** The content node of a user or assistant message in the OpenAI and Anthropic formats (Gemini's has `parts`: no observations there). */
function contentOf(req: ParsedRequest, i: number): JValue | undefined {
  const it = req.items[i];
  if (req.format === 'openai-responses' && it?.kind === 'string') return it;
  return get(it, 'content');
}

/**
 * The command of the text-mode action an observation answers: the last fenced block of the
 * assistant message before it (previews use it to tell a test run from a file read). Undefined for
 * a result that is not an observation, or when that message has no action.
 */
export function observationCommand(req: ParsedRequest, r: ToolResult): string | undefined {
  if (!r.observation) return undefined;
  const callItems = new Set([...req.calls.values()].map((c) => c.item));
  const action = actionMessageText(req, r.item - 1, callItems);
  return action === undefined ? undefined : actionOf(action)?.command;
}

/** The text of an assistant message without tool calls (a text-mode action), or undefined. */
function actionMessageText(req: ParsedRequest, i: number, callItems: ReadonlySet<number>): string | undefined {
  if (i < 0 || req.kinds[i] !== 'assistant' || callItems.has(i)) return undefined;
  if (req.format === 'openai-responses') {
    const type = getString(req.text, req.items[i], 'type');
    if ((type !== undefined && type !== 'message') || getString(req.text, req.items[i], 'role') !== 'assistant') return undefined;
  }
  const parts = textPartsOf(req.text, contentOf(req, i));
  return parts.length ? parts.map((p) => decodeString(req.text, p)).join('\n') : undefined;
}

/**
 * Turns the user messages that are observations into tool results whose content is the body span
 * of the message's text. Observations keep their place among the results (item order); each one's
 * call id is `obs-<item>`, stable as the conversation grows.
 */
function markObservations(req: ParsedRequest, option: ObservationOption): void {
  const found: ToolResult[] = [];
  const add = (i: number, tool: string, span: ObservationSpan) => {
    found.push({
      n: 0,
      item: i,
      callId: observationCallId(i),
      tool,
      names: candidateNames(tool),
      content: span.string,
      textParts: [span.string],
      isError: false,
      observation: span,
    });
    req.kinds[i] = 'tool';
  };
  if (option === 'auto') {
    const callItems = new Set([...req.calls.values()].map((c) => c.item));
    for (let i = 1; i < req.items.length; i++) {
      if (req.kinds[i] !== 'user') continue;
      let span: ObservationSpan | undefined;
      for (const part of textPartsOf(req.text, contentOf(req, i))) {
        span = observationSpan(req.text, part);
        if (span) break;
      }
      if (!span) continue;
      const action = actionMessageText(req, i - 1, callItems);
      const command = action === undefined ? undefined : actionOf(action);
      if (!command) continue;
      add(i, toolForObservation(span.template, command.command), span);
    }
  } else if (option !== 'off') {
    for (const mark of option) {
      const i = mark.item;
      if (!Number.isInteger(i) || i < 0 || i >= req.items.length || req.kinds[i] !== 'user') continue;
      const parts = textPartsOf(req.text, contentOf(req, i));
      let span: ObservationSpan | undefined;
      for (const part of parts) {
        span = observationSpan(req.text, part);
        if (span) break;
      }
      span ??= parts[0] ? observationSpan(req.text, parts[0], true) : undefined;
      if (span) add(i, mark.tool, span);
    }
  }
  if (!found.length) return;
  const all = [...req.results, ...found].sort((a, b) => a.item - b.item);
  all.forEach((r, n) => {
    r.n = n;
  });
  req.results = all;
}

const ANTHROPIC_BLOCKS = new Set([
  'tool_use',
  'tool_result',
  'thinking',
  'redacted_thinking',
  'server_tool_use',
  'mcp_tool_use',
  'mcp_tool_result',
  'document',
]);
/**
 * Roles only Chat Completions has. `system` is not one: Anthropic Messages takes `role: "system"`
 * items inside `messages` too (Claude Code sends its environment notes that way), so a system item
 * says nothing about the format and the other items decide.
 */
const CHAT_ROLES = new Set(['developer', 'tool', 'function']);

/**
 * Tells the format from the request's shape. `contents` (and neither `messages` nor `input`) means
 * the Gemini API; `input` means Responses; `messages` means Chat
 * Completions or Anthropic Messages, told apart by Anthropic-only traits (top-level `system`,
 * tool_use/tool_result blocks) versus Chat-only ones (tool/developer roles, `tool_calls`). A message
 * list with neither holds no tool results, so reading it as Chat changes nothing either way.
 */
export function detectFormat(text: string, root: JObject): WireFormat {
  const messages = get(root, 'messages');
  const input = get(root, 'input');
  if (!messages && !input && get(root, 'contents')?.kind === 'array') return 'gemini';
  if (!messages && input && (input.kind === 'array' || input.kind === 'string')) return 'openai-responses';
  if (messages && messages.kind === 'array') {
    if (get(root, 'anthropic_version') || get(root, 'system')) return 'anthropic-messages';
    for (const m of messages.items) {
      const role = getString(text, m, 'role');
      if (role && CHAT_ROLES.has(role)) return 'openai-chat';
      if (get(m, 'tool_calls') || get(m, 'function_call')) return 'openai-chat';
      const content = get(m, 'content');
      if (content?.kind === 'array') {
        for (const b of content.items) {
          const type = getString(text, b, 'type');
          if (type && ANTHROPIC_BLOCKS.has(type)) return 'anthropic-messages';
          if (type === 'image' && get(b, 'source')) return 'anthropic-messages';
          if (type === 'image_url' || type === 'input_audio') return 'openai-chat';
        }
      }
    }
    return 'openai-chat';
  }
  const keys =
    root.keys
      .slice(0, 8)
      .map((k) => JSON.stringify(k))
      .join(', ') || 'none';
  throw new SpillwayError(
    `cannot tell the request format: expected a top-level "messages" array (OpenAI Chat Completions or Anthropic Messages), "input" (OpenAI Responses) or "contents" (Gemini API); found keys ${keys}. Pass --format to say which.`,
    'unknown-format',
  );
}

function arrayAt(text: string, root: JObject, key: string, format: WireFormat): JValue[] {
  const v = get(root, key);
  if (v === undefined) return [];
  if (v.kind !== 'array') {
    throw new SpillwayError(`${format} request: "${key}" must be an array, got ${v.kind}`, 'bad-request');
  }
  return v.items;
}

function present(...nodes: (JValue | undefined)[]): JValue[] {
  return nodes.filter((n): n is JValue => n !== undefined);
}

/** Adds the result, naming its tool after the call it answers. */
function pushResult(
  req: ParsedRequest,
  item: number,
  callId: string,
  content: JValue | undefined,
  isError: boolean,
  fallbackName?: string,
): void {
  const call = req.calls.get(callId);
  const tool = call?.name ?? fallbackName ?? UNKNOWN_TOOL;
  const r: ToolResult = {
    n: req.results.length,
    item,
    callId,
    tool,
    names: candidateNames(tool),
    content,
    textParts: textPartsOf(req.text, content),
    isError,
    ...(call ? { call } : {}),
  };
  req.results.push(r);
}

function emptyRequest(format: WireFormat, text: string, root: JObject, items: JValue[], fixed: JValue[]): ParsedRequest {
  return { format, text, root, items, kinds: new Array<ItemKind>(items.length).fill('other'), results: [], calls: new CallMap(), fixed };
}

function readChat(text: string, root: JObject): ParsedRequest {
  const items = arrayAt(text, root, 'messages', 'openai-chat');
  const req = emptyRequest('openai-chat', text, root, items, present(get(root, 'tools'), get(root, 'functions')));
  items.forEach((m, i) => {
    const role = getString(text, m, 'role');
    if (role === 'user') req.kinds[i] = 'user';
    else if (role === 'assistant') {
      req.kinds[i] = 'assistant';
      const calls = get(m, 'tool_calls');
      if (calls?.kind === 'array') {
        for (const c of calls.items) {
          const id = getString(text, c, 'id');
          const fn = get(c, 'function') ?? get(c, 'custom');
          const name = getString(text, fn, 'name');
          if (id && name) req.calls.set(id, { id, name, item: i, input: get(fn, 'arguments') ?? get(fn, 'input') });
        }
      }
      const legacy = get(m, 'function_call');
      const legacyName = getString(text, legacy, 'name');
      if (legacyName) req.calls.set(`function#${i}`, { id: `function#${i}`, name: legacyName, item: i, input: get(legacy, 'arguments') });
    } else if (role === 'tool') {
      req.kinds[i] = 'tool';
      pushResult(req, i, getString(text, m, 'tool_call_id') ?? `#${i}`, get(m, 'content'), false);
    } else if (role === 'function') {
      // legacy function results answer the assistant message just before them
      req.kinds[i] = 'tool';
      const name = getString(text, m, 'name');
      const callId = req.calls.has(`function#${i - 1}`) ? `function#${i - 1}` : `#${i}`;
      pushResult(req, i, callId, get(m, 'content'), false, name);
    }
  });
  return req;
}

const RESPONSES_OUTPUTS = new Set(['function_call_output', 'custom_tool_call_output']);
const RESPONSES_MODEL_ITEMS = new Set([
  'function_call',
  'custom_tool_call',
  'reasoning',
  'mcp_call',
  'local_shell_call',
  'web_search_call',
  'file_search_call',
  'computer_call',
]);

function readResponses(text: string, root: JObject): ParsedRequest {
  const input = get(root, 'input');
  const items = input?.kind === 'string' ? [input] : arrayAt(text, root, 'input', 'openai-responses');
  const req = emptyRequest('openai-responses', text, root, items, present(get(root, 'instructions'), get(root, 'tools')));
  if (input?.kind === 'string') {
    req.kinds[0] = 'user';
    return req;
  }
  items.forEach((it, i) => {
    const type = getString(text, it, 'type');
    const role = getString(text, it, 'role');
    if ((type === 'message' || type === undefined) && role) {
      req.kinds[i] = role === 'user' ? 'user' : role === 'assistant' ? 'assistant' : 'other';
      return;
    }
    if (type === 'function_call' || type === 'custom_tool_call') {
      req.kinds[i] = 'assistant';
      const id = getString(text, it, 'call_id');
      const name = getString(text, it, 'name');
      const namespace = getString(text, it, 'namespace');
      if (id && name) {
        req.calls.set(id, {
          id,
          name: namespace ? `${namespace}.${name}` : name,
          item: i,
          input: get(it, 'arguments') ?? get(it, 'input'),
        });
      }
      return;
    }
    if (type && RESPONSES_OUTPUTS.has(type)) {
      req.kinds[i] = 'tool';
      pushResult(req, i, getString(text, it, 'call_id') ?? `#${i}`, get(it, 'output'), false);
      // Codex's `exec` (code mode) answers with the tool's JSON: the result is its `output` string
      if (type === 'custom_tool_call_output') {
        const r = req.results[req.results.length - 1]!;
        const found = embeddedOutput(text, r.textParts);
        if (found) {
          r.textParts = [found.part];
          r.embedded = found.embedded;
        }
      }
      return;
    }
    if (type === 'mcp_call') {
      // an MCP call carries its own output; its tool is server_label.name
      req.kinds[i] = 'assistant';
      const id = getString(text, it, 'id') ?? `#${i}`;
      const name = getString(text, it, 'name') ?? UNKNOWN_TOOL;
      const server = getString(text, it, 'server_label');
      const full = server ? `${server}.${name}` : name;
      req.calls.set(id, { id, name: full, item: i, input: get(it, 'arguments') });
      const output = get(it, 'output');
      if (output && output.kind === 'string') pushResult(req, i, id, output, get(it, 'error')?.kind === 'string');
      return;
    }
    if (type && RESPONSES_MODEL_ITEMS.has(type)) req.kinds[i] = 'assistant';
  });
  return req;
}

function readAnthropic(text: string, root: JObject): ParsedRequest {
  const items = arrayAt(text, root, 'messages', 'anthropic-messages');
  const req = emptyRequest('anthropic-messages', text, root, items, present(get(root, 'system'), get(root, 'tools')));
  items.forEach((m, i) => {
    const role = getString(text, m, 'role');
    const content = get(m, 'content');
    const blocks = content?.kind === 'array' ? content.items : [];
    if (role === 'assistant') {
      req.kinds[i] = 'assistant';
      for (const b of blocks) {
        const type = getString(text, b, 'type');
        if (type === 'tool_use' || type === 'server_tool_use' || type === 'mcp_tool_use') {
          const id = getString(text, b, 'id');
          const name = getString(text, b, 'name');
          const server = getString(text, b, 'server_name');
          if (id && name) req.calls.set(id, { id, name: server ? `${server}.${name}` : name, item: i, input: get(b, 'input') });
        }
      }
      return;
    }
    if (role !== 'user') return;
    let sawResult = false;
    for (const b of blocks) {
      const type = getString(text, b, 'type');
      if (type !== 'tool_result' && type !== 'mcp_tool_result') continue;
      sawResult = true;
      const isError = get(b, 'is_error')?.kind === 'true';
      pushResult(req, i, getString(text, b, 'tool_use_id') ?? `#${i}`, get(b, 'content'), isError);
    }
    req.kinds[i] = sawResult ? 'tool' : 'user';
  });
  return req;
}
