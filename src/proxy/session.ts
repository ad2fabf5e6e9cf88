/**
 * Which session a call belongs to.
 *
 * A session groups the calls of one conversation, so the engine keeps its decisions sticky across
 * them (the projected prefix stays byte-stable and the provider's prompt cache keeps hitting) and
 * the recording shows them as successive turns. An agent that knows its conversation can say so
 * with the `x-spillway-session` header; otherwise the session is a fingerprint of the conversation's
 * opening, which every later call of that conversation resends unchanged: the format, the system
 * prompt (or instructions, or Gemini's systemInstruction) and the first user message (content). Only their text counts, not their JSON
 * layout or `cache_control` marks, because agents move cache breakpoints from call to call.
 */
import { createHash } from 'node:crypto';
import type { WireFormat } from '../engine';
import { decodeString, get, parseLazy, type JValue } from '../engine/json';

/** Keys whose values say how to cache or identify a block, not what the conversation says. */
const IGNORED_KEYS = new Set(['cache_control']);
/** A session id as given by the header is used as a file name when it has this shape. */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
const FINGERPRINT_HEX = 16;

export interface Opening {
  session: string;
  model?: string;
}

/** The session a header value names: the value itself when it is file-name safe, else a hash of it. */
export function sessionFromHeader(value: string): string {
  const v = value.trim();
  if (SAFE_ID.test(v)) return v;
  return 'h_' + createHash('sha256').update(v, 'utf8').digest('hex').slice(0, FINGERPRINT_HEX);
}

function texts(src: string, node: JValue | undefined, out: string[]): void {
  if (!node) return;
  switch (node.kind) {
    case 'string':
      out.push(decodeString(src, node));
      return;
    case 'array':
      for (const n of node.items) texts(src, n, out);
      return;
    case 'object':
      node.keys.forEach((k, i) => {
        if (!IGNORED_KEYS.has(k)) texts(src, node.values[i], out);
      });
      return;
    default:
      return;
  }
}

function role(src: string, node: JValue): string | undefined {
  const r = get(node, 'role');
  return r?.kind === 'string' ? decodeString(src, r) : undefined;
}

/**
 * Reads the conversation's opening and model from a request body. Throws (a SpillwayError) when
 * the body is not JSON; the caller then fails open.
 */
export function readOpening(src: string, format: WireFormat): Opening {
  const root = parseLazy(src);
  const modelNode = get(root, 'model');
  const model = modelNode?.kind === 'string' ? decodeString(src, modelNode) : undefined;
  const system: string[] = [];
  const first: string[] = [];
  const list = (node: JValue | undefined): JValue[] => (node?.kind === 'array' ? node.items : []);
  if (format === 'gemini') {
    texts(src, get(root, 'systemInstruction') ?? get(root, 'system_instruction'), system);
    const c = list(get(root, 'contents')).find((x) => {
      const r = role(src, x);
      return r === undefined || r === 'user';
    });
    if (c) texts(src, get(c, 'parts'), first);
  } else if (format === 'anthropic-messages') {
    texts(src, get(root, 'system'), system);
    const m = list(get(root, 'messages')).find((x) => role(src, x) === 'user');
    if (m) texts(src, get(m, 'content'), first);
  } else {
    const items = format === 'openai-chat' ? list(get(root, 'messages')) : list(get(root, 'input'));
    if (format === 'openai-responses') {
      texts(src, get(root, 'instructions'), system);
      const input = get(root, 'input');
      if (input?.kind === 'string') first.push(decodeString(src, input));
    }
    for (const m of items) {
      const r = role(src, m);
      if (r === 'system' || r === 'developer') {
        texts(src, get(m, 'content'), system);
        continue;
      }
      if (r === 'user') {
        texts(src, get(m, 'content'), first);
        break;
      }
    }
  }
  const h = createHash('sha256');
  h.update(format);
  for (const part of [system, first]) {
    h.update('\u0000');
    for (const t of part) h.update(t.length + ':').update(t, 'utf8');
  }
  return { session: 's_' + h.digest('hex').slice(0, FINGERPRINT_HEX), ...(model !== undefined ? { model } : {}) };
}
