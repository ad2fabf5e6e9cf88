/**
 * Which client requests the proxy projects, where each one goes upstream, and which headers travel.
 *
 * Path mapping mirrors how the providers' own SDKs build URLs, so an upstream is configured exactly
 * as one would configure the SDK's base URL:
 *   - OpenAI's base URL includes the API version (`https://api.openai.com/v1`) and the SDK appends
 *     `/chat/completions`. Agents are told `OPENAI_BASE_URL=http://127.0.0.1:PORT/v1`, so the proxy
 *     sees `/v1/chat/completions`: the leading `/v1` is the client's copy of the version segment and is
 *     replaced by the upstream base path. `/v1/X?q` -> `<openai base path>/X?q`; a client path without
 *     `/v1` (a base URL set without it) is appended as it is.
 *   - Anthropic's base URL has no version (`https://api.anthropic.com`) and the SDK posts
 *     `/v1/messages`. Agents are told `ANTHROPIC_BASE_URL=http://127.0.0.1:PORT`, so the client path
 *     is appended unchanged: `/v1/messages?beta=true` -> `<anthropic base path>/v1/messages?beta=true`.
 *     Clients on the Vercel AI SDK (OpenCode, …) read the same variable but take it as a base that
 *     includes the version (theirs defaults to `https://api.anthropic.com/v1`), so given Spillway's they
 *     post `/messages`: a `/messages…` path gets the `/v1` they left out.
 *   - The Gemini API's base URL has no version either (`https://generativelanguage.googleapis.com`) and
 *     the SDK (`@google/genai`, which Gemini CLI uses) posts `/v1beta/models/<model>:generateContent`
 *     and `…:streamGenerateContent?alt=sse`. Agents are told `GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:PORT`
 *     and the client path is appended unchanged, `?alt=sse` and a `?key=` included: the key is
 *     forwarded in the URL as it came and never recorded (a turn keeps the path without its query).
 * A base path prefix (a gateway at `http://host/openai/v1`, `http://host/anthropic`) is kept, and the
 * client's query string is passed on byte for byte (after the base URL's own query, if it has one).
 *
 *   - The ChatGPT backend (Codex signed in with ChatGPT) is served under `/backend-api/`, as on
 *     chatgpt.com: its base URL is `https://chatgpt.com/backend-api`, Codex is told
 *     `http://127.0.0.1:PORT/backend-api/codex`, and `/backend-api/X?q` -> `<chatgpt base path>/X?q`.
 *
 *     A request on the OpenAI paths that carries ChatGPT's `chatgpt-account-id` header is Codex
 *     signed in with ChatGPT routed by `openai_base_url` (an API-key client never sends it): it goes
 *     to the ChatGPT backend as that base URL would on chatgpt.com, `/v1/X` -> `<chatgpt base>/codex/X`.
 *
 * Which upstream a pass-through request goes to: the ChatGPT backend for every path under
 * `/backend-api/` (and ChatGPT-signed requests, above); Gemini for `/v1beta/…` and `/v1alpha/…`, a
 * `models/<model>:<method>` path, and any request that carries Google's key (`x-goog-api-key`, or `key=`
 * in the query); Anthropic for `/v1/messages…`, `/messages…`, `/v1/complete` and `/api/…` (Claude Code's
 * own endpoints on its base URL: the `HEAD /api/hello` preflight, which carries no header of Anthropic's
 * when Claude Code signs in with a subscription token, and `/api/oauth/…`; OpenAI's API has no `/api/`
 * path), and for any request that carries Anthropic's own headers (`anthropic-version`, `anthropic-beta`,
 * `x-api-key`); OpenAI for everything else.
 */
import type { WireFormat } from '../engine';

export type Provider = 'openai' | 'anthropic' | 'chatgpt' | 'gemini';

export const DEFAULT_OPENAI_UPSTREAM = 'https://api.openai.com/v1';
export const DEFAULT_ANTHROPIC_UPSTREAM = 'https://api.anthropic.com';
export const DEFAULT_CHATGPT_UPSTREAM = 'https://chatgpt.com/backend-api';
export const DEFAULT_GEMINI_UPSTREAM = 'https://generativelanguage.googleapis.com';

/** The client path prefix of the ChatGPT backend, as chatgpt.com serves it. */
const CHATGPT_PREFIX = '/backend-api';
/** Codex's model calls on the ChatGPT backend (POST, and its WebSocket). */
export const CHATGPT_RESPONSES_PATH = '/backend-api/codex/responses';

export interface Route {
  provider: Provider;
  /** set for the paths the engine projects; pass-through requests have none */
  format?: WireFormat;
  /** whether the call is a model call, recorded as a turn (count_tokens is projected, not recorded) */
  record: boolean;
  /** the model a Gemini API path names (`models/<model>:generateContent`) */
  model?: string;
}

/**
 * A Gemini API model call: `/<version>/models/<model>:<method>` (tuned models too), the version
 * `v1`, `v1beta` or `v1alpha`. generateContent and streamGenerateContent are turns; countTokens is
 * projected (it counts what the model would be sent) but not recorded.
 */
const GEMINI_CALL = /^\/v1(?:beta|alpha)?\/((?:tuned)?[mM]odels\/[^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
const GEMINI_VERSION = /^\/v1(?:beta|alpha)(?:\/|$)|^\/v1\/(?:tuned)?[mM]odels\/[^/]+:/;

/** POST paths the engine projects (exact match, query ignored). */
const PROJECTED: Record<string, Route> = {
  '/v1/chat/completions': { provider: 'openai', format: 'openai-chat', record: true },
  '/chat/completions': { provider: 'openai', format: 'openai-chat', record: true },
  '/v1/responses': { provider: 'openai', format: 'openai-responses', record: true },
  '/responses': { provider: 'openai', format: 'openai-responses', record: true },
  '/v1/messages': { provider: 'anthropic', format: 'anthropic-messages', record: true },
  '/v1/messages/count_tokens': { provider: 'anthropic', format: 'anthropic-messages', record: false },
  [CHATGPT_RESPONSES_PATH]: { provider: 'chatgpt', format: 'openai-responses', record: true },
  '/messages': { provider: 'anthropic', format: 'anthropic-messages', record: true },
  '/messages/count_tokens': { provider: 'anthropic', format: 'anthropic-messages', record: false },
};

/** A path of an AI SDK client given Spillway's Anthropic base URL, which lacks the `/v1` such clients expect. */
const UNVERSIONED_MESSAGES = /^\/messages(\/|$)/;

/** The header Codex sends with its ChatGPT sign-in; no API-key client sends it. */
const CHATGPT_ACCOUNT_HEADER = 'chatgpt-account-id';

/** True for a path the ChatGPT backend serves (`/backend-api` and below). */
export function isChatgptPath(path: string): boolean {
  return path === CHATGPT_PREFIX || path.startsWith(`${CHATGPT_PREFIX}/`);
}

export function splitPath(url: string): { path: string; query: string } {
  const q = url.indexOf('?');
  return q < 0 ? { path: url, query: '' } : { path: url.slice(0, q), query: url.slice(q + 1) };
}

/**
 * The request target in origin form (`/path?query`). A client that uses the proxy as a forward proxy
 * sends absolute-form targets (`http://host/path`): keep their path and query, drop the rest.
 */
export function originForm(target: string | undefined): string {
  const url = target ?? '/';
  if (!/^https?:\/\//i.test(url)) return url;
  try {
    const u = new URL(url);
    return u.pathname + u.search;
  } catch {
    return '/';
  }
}

export function routeFor(method: string, path: string, headers: Record<string, string | string[] | undefined>, query = ''): Route {
  if (headers[CHATGPT_ACCOUNT_HEADER] !== undefined && !isChatgptPath(path) && !isAnthropicPath(path)) {
    const r = method === 'POST' ? PROJECTED[path] : undefined;
    return r?.format === 'openai-responses' ? { ...r, provider: 'chatgpt' } : { provider: 'chatgpt', record: false };
  }
  if (method === 'POST') {
    const r = PROJECTED[path];
    if (r) return r;
    const g = GEMINI_CALL.exec(path);
    if (g) {
      const model = decodeModel(g[1]!.replace(/^(?:tuned)?[mM]odels\//, ''));
      return { provider: 'gemini', format: 'gemini', record: g[2] !== 'countTokens', ...(model ? { model } : {}) };
    }
  }
  if (isChatgptPath(path)) return { provider: 'chatgpt', record: false };
  if (GEMINI_VERSION.test(path) || headers['x-goog-api-key'] !== undefined || /(?:^|&)key=/.test(query))
    return { provider: 'gemini', record: false };
  const anthropic =
    isAnthropicPath(path) ||
    path.startsWith('/api/') ||
    headers['anthropic-version'] !== undefined ||
    headers['anthropic-beta'] !== undefined ||
    headers['x-api-key'] !== undefined;
  return { provider: anthropic ? 'anthropic' : 'openai', record: false };
}

function isAnthropicPath(path: string): boolean {
  return path === '/v1/complete' || path.startsWith('/v1/messages') || UNVERSIONED_MESSAGES.test(path);
}

function decodeModel(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw);
  } catch {
    return undefined;
  }
}

/** Checks an upstream base URL: http or https, no credentials, no fragment. */
export function parseUpstream(value: string, what: string): URL {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new Error(`${what} must be an absolute http(s) URL, got ${JSON.stringify(value)}`);
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new Error(`${what} must be an http or https URL, got ${JSON.stringify(value)}`);
  if (u.username || u.password) throw new Error(`${what} must not carry credentials in the URL`);
  if (u.hash) throw new Error(`${what} must not have a #fragment`);
  return u;
}

/** The upstream URL for a client request (see the module comment for the rule). */
export function upstreamUrl(base: URL, provider: Provider, clientUrl: string): URL {
  const { path, query } = splitPath(clientUrl);
  let rest = path;
  if (provider === 'openai' && (path === '/v1' || path.startsWith('/v1/'))) rest = path.slice(3);
  if (provider === 'chatgpt') {
    if (isChatgptPath(path)) rest = path.slice(CHATGPT_PREFIX.length);
    // a ChatGPT-signed request on the OpenAI paths: where openai_base_url = <chatgpt>/backend-api/codex sends it
    else rest = '/codex' + (path === '/v1' || path.startsWith('/v1/') ? path.slice(3) : path);
  }
  if (provider === 'anthropic' && UNVERSIONED_MESSAGES.test(path)) rest = '/v1' + path;
  const basePath = base.pathname.replace(/\/+$/, '');
  const joined = basePath + rest || '/';
  const baseQuery = base.search.replace(/^\?/, '');
  const q = [baseQuery, query].filter((s) => s !== '').join('&');
  // built as one string, so the client's own encoding of path and query survives as sent
  return new URL(base.origin + joined + (q ? '?' + q : ''));
}

/** Hop-by-hop headers (RFC 9110 §7.6.1) and others that describe one connection, not the message. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-authorization',
  'proxy-authenticate',
]);

/** The header agents may send to name their session; consumed by the proxy, never forwarded. */
export const SESSION_HEADER = 'x-spillway-session';

export type OutgoingHeaders = Record<string, string | string[]>;

/**
 * Request headers to send upstream: everything the client sent (auth included, original casing,
 * repeated headers kept) except hop-by-hop headers, headers the `Connection` header names, `host`
 * (set from the upstream URL), `expect` (the proxy answers 100-continue itself), the session header
 * and the framing headers the caller recomputes (`content-length`, and `content-encoding` when the
 * body is sent decoded).
 */
export function forwardHeaders(rawHeaders: readonly string[], drop: readonly string[] = []): OutgoingHeaders {
  const named = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'connection') {
      for (const t of rawHeaders[i + 1]!.split(',')) named.add(t.trim().toLowerCase());
    }
  }
  const skip = new Set(['host', 'expect', SESSION_HEADER, ...drop]);
  const out: OutgoingHeaders = {};
  const casing = new Map<string, string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!;
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower) || skip.has(lower)) continue;
    const key = casing.get(lower) ?? name;
    casing.set(lower, key);
    const value = rawHeaders[i + 1]!;
    const prev = out[key];
    out[key] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
  }
  return out;
}

/** Response headers to relay to the client, as a raw list (order, casing and repeats kept). */
export function responseHeaders(rawHeaders: readonly string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'connection') {
      for (const t of rawHeaders[i + 1]!.split(',')) named.add(t.trim().toLowerCase());
    }
  }
  const out: string[] = [];
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const lower = rawHeaders[i]!.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out.push(rawHeaders[i]!, rawHeaders[i + 1]!);
  }
  return out;
}

/**
 * Request headers a recording may keep: none of them can carry a credential. Everything else
 * (authorization, x-api-key, api-key, cookie, openai-organization, openai-project, any custom
 * header a gateway might use for auth) is left out, so the allow-list, not a deny-list, decides.
 */
export const RECORDED_REQUEST_HEADERS: readonly string[] = [
  'content-type',
  'content-encoding',
  'accept',
  'user-agent',
  'anthropic-version',
  'anthropic-beta',
  'openai-beta',
  'originator',
  'x-stainless-lang',
  'x-stainless-package-version',
  'x-stainless-os',
  'x-stainless-arch',
  'x-stainless-runtime',
  'x-stainless-runtime-version',
  'x-stainless-retry-count',
  'x-stainless-timeout',
];

export function safeHeaders(headers: Record<string, string | string[] | undefined>, allow: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of allow) {
    const v = headers[name];
    if (v !== undefined) out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}
