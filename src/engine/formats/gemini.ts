/**
 * The Gemini API's request format (`generateContent` / `streamGenerateContent` bodies): a
 * `contents` list of `{role, parts}`, where a `model` content's parts hold `functionCall`s and a
 * `user` content's parts hold the `functionResponse`s that answer them.
 *
 * What makes it unlike the other three: a call's `id` is optional. The model may send calls without
 * one, and an agent may still put an id of its own on the response (Gemini CLI answers with
 * `functionResponse.id` set to the id it made up, while the `functionCall` in its history has none).
 * So a response is matched to its call by id when a call carries that id, else to the first call
 * still unanswered with the response's name, else to the first call still unanswered, among the calls
 * of the model contents since the last responses. Calls without an id get `fc#<item>.<k>`, responses
 * that name none `fr#<item>.<k>`: both are positions, stable as the conversation grows.
 *
 * Where a result's text is: `functionResponse.response.output` (what Gemini CLI and the API's own
 * documentation use), or `response.error` for a failed call (read as an error), or, for a tool that
 * answered with MCP-style content, `response.content` (a string or a list of `{type: "text"}`
 * parts). A response with none of these (an arbitrary object) is left alone: there is no text to
 * reduce. Only that string's bytes are patched, so `id`, `name`, nested `parts` (inline images) and
 * every other field stay byte for byte.
 *
 * Observations (command output in user text) are not looked for here: no text-mode agent speaks this
 * format.
 */
import { get, getString, type JObject, type JValue } from '../json';
import { SpillwayError } from '../types';
import { CallMap, candidateNames, textPartsOf, UNKNOWN_TOOL, type ItemKind, type ParsedRequest, type ToolCall } from './model';

/** The camelCase name the SDKs send, or the proto's snake_case name (the REST API accepts both). */
function field(obj: JValue | undefined, camel: string, snake: string): JValue | undefined {
  return get(obj, camel) ?? get(obj, snake);
}

/** The node holding a response's text, and whether it reports an error; undefined when it has none. */
function responseContent(text: string, response: JValue | undefined): { content: JValue; isError: boolean } | undefined {
  if (response?.kind !== 'object') return undefined;
  const output = get(response, 'output');
  if (output?.kind === 'string') return { content: output, isError: false };
  const error = get(response, 'error');
  if (error?.kind === 'string') return { content: error, isError: true };
  const content = get(response, 'content');
  if (content && textPartsOf(text, content).length) return { content, isError: get(response, 'isError')?.kind === 'true' };
  return undefined;
}

export function readGemini(text: string, root: JObject): ParsedRequest {
  const list = get(root, 'contents');
  if (list !== undefined && list.kind !== 'array')
    throw new SpillwayError(`gemini request: "contents" must be an array, got ${list.kind}`, 'bad-request');
  const items = list?.kind === 'array' ? list.items : [];
  const fixed = [field(root, 'systemInstruction', 'system_instruction'), get(root, 'tools'), field(root, 'toolConfig', 'tool_config')];
  const req: ParsedRequest = {
    format: 'gemini',
    text,
    root,
    items,
    kinds: new Array<ItemKind>(items.length).fill('other'),
    results: [],
    calls: new CallMap(),
    fixed: fixed.filter((n): n is JValue => n !== undefined),
  };
  // calls of the model contents since the last responses, not yet answered
  let open: ToolCall[] = [];
  let afterResponses = false;
  items.forEach((content, i) => {
    const role = getString(text, content, 'role');
    const parts = get(content, 'parts');
    const list = parts?.kind === 'array' ? parts.items : [];
    if (role === 'model') {
      req.kinds[i] = 'assistant';
      if (afterResponses) open = [];
      afterResponses = false;
      let k = 0;
      for (const part of list) {
        const fc = field(part, 'functionCall', 'function_call');
        if (fc?.kind !== 'object') continue;
        const name = getString(text, fc, 'name');
        const id = getString(text, fc, 'id') ?? `fc#${i}.${k}`;
        k++;
        if (!name) continue;
        const args = get(fc, 'args');
        const call: ToolCall = { id, name, item: i, ...(args ? { input: args } : {}) };
        req.calls.set(id, call);
        open.push(call);
      }
      return;
    }
    // "user" (or no role: the API takes it as the user's) and the old "function" role
    if (role !== undefined && role !== 'user' && role !== 'function') return;
    let k = 0;
    let answered = false;
    for (const part of list) {
      const fr = field(part, 'functionResponse', 'function_response');
      if (fr?.kind !== 'object') continue;
      answered = true;
      const id = getString(text, fr, 'id');
      const name = getString(text, fr, 'name');
      let call = id !== undefined ? open.find((c) => c.id === id) : undefined;
      call ??= open.find((c) => c.name === name) ?? open[0];
      // an id no open call carries, but some earlier call does (a response sent again later)
      if (!call && id !== undefined) call = req.calls.get(id);
      if (call) open = open.filter((c) => c !== call);
      const callId = id ?? call?.id ?? `fr#${i}.${k}`;
      k++;
      const tool = call?.name ?? name ?? UNKNOWN_TOOL;
      const found = responseContent(text, get(fr, 'response'));
      req.results.push({
        n: req.results.length,
        item: i,
        callId,
        tool,
        names: candidateNames(tool),
        ...(found ? { content: found.content } : {}),
        textParts: found ? textPartsOf(text, found.content) : [],
        isError: found?.isError ?? false,
        ...(call ? { call } : {}),
      });
    }
    req.kinds[i] = answered ? 'tool' : 'user';
    afterResponses ||= answered;
  });
  return req;
}
