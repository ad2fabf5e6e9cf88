/**
 * The Responses WebSocket mode, through the proxy.
 *
 * Codex (and the OpenAI SDKs' `responses.connect`) open a WebSocket on `GET /v1/responses` with
 * `openai-beta: responses_websockets=…` and then send one `response.create` message per model call:
 * the same fields as a `POST /v1/responses` body, except that after the first call each message
 * carries only the new input items plus `previous_response_id`; the provider keeps the rest of the
 * conversation on its side. Server events come back as WebSocket text messages, one event each, the
 * same events as the HTTP stream (`response.created`, `response.output_text.delta`,
 * `response.completed` with `usage`, `error`, …).
 *
 * What the proxy does with it:
 *   - the upgrade is answered only once the same WebSocket is open upstream (headers, auth
 *     included, forwarded; never stored or logged), so an upstream that refuses it (401, 404, 426,
 *     …) is seen by the client exactly as the upstream answered, and the client's own fallback to
 *     HTTP works as it would without Spillway;
 *   - every `response.create` is projected before it goes upstream, with the stages that can act on
 *     arrival (offload, with dedupe and custom reducers). Items sent earlier live upstream under
 *     `previous_response_id` and cannot be changed any more, so the stages that rewrite earlier
 *     results (window, budget, clear) cannot act here, and the offload stage applies its cap at once
 *     (`offload.latestCap` would need a later rewrite). To name tools (per-tool caps) and to find
 *     repeats (dedupe) across messages, the projection sees the session's earlier calls and verbatim
 *     outputs as context, which is then cut off again: only the new items go upstream;
 *   - every other message (not JSON, another type such as `response.processed`, binary) passes
 *     unchanged, and so does a message the engine cannot read (fail open); the log says so;
 *   - server events pass back as they came, in order, byte for byte; each `response.create` becomes
 *     a turn in the recording, finished by `response.completed` (with its usage), `response.failed`,
 *     `response.incomplete` or an `error` event;
 *   - close codes and reasons travel both ways; a connection that breaks on one side is broken on
 *     the other.
 * With `refuse`, the upgrade is answered 426 with a JSON error, and clients (Codex) fall back to
 * HTTP, where every stage applies.
 *
 * Other paths that ask for a WebSocket are relayed the same way, without projection or recording.
 */
import type * as http from 'node:http';
import type { Duplex } from 'node:stream';
import { performance } from 'node:perf_hooks';
import { WebSocket, WebSocketServer, type RawData } from 'ws';
import {
  capFor,
  createEngine,
  SpillwayError,
  type Engine,
  type InputReduction,
  type ProjectionStats,
  type Reduction,
  type SpillwayConfig,
} from '../engine';
import { candidateNames } from '../engine/formats';
import { decodeString, get, getString, parseLazy, type JValue } from '../engine/json';
import { recogniseMarker } from '../engine/markers';
import type { Turn } from './recording';
import {
  CHATGPT_RESPONSES_PATH,
  RECORDED_REQUEST_HEADERS,
  SESSION_HEADER,
  isChatgptPath,
  forwardHeaders,
  responseHeaders,
  routeFor,
  safeHeaders,
  originForm,
  splitPath,
  upstreamUrl,
  type Provider,
} from './routes';
import { readOpening, sessionFromHeader } from './session';
import { mergeUsage, type TurnUsage } from './usage';
import { formatInt } from '../engine/format-number';
import { observingEngine } from './observe';

export type WebSocketMode = 'project' | 'refuse';
export const WEBSOCKET_MODES: readonly WebSocketMode[] = ['project', 'refuse'];
export const DEFAULT_WEBSOCKET_MODE: WebSocketMode = 'project';

/** Client paths whose WebSocket carries Responses `response.create` messages (the last one on the ChatGPT backend). */
export const RESPONSES_WEBSOCKET_PATHS: readonly string[] = ['/v1/responses', '/responses', CHATGPT_RESPONSES_PATH];

/**
 * Largest message relayed either way. Larger than the proxy's body limit, so a message over that
 * limit still reaches the upstream (unprojected, like an HTTP body over it) instead of closing the
 * connection; a `response.completed` event carries the whole answer.
 */
const MAX_MESSAGE_BYTES = 1024 * 1024 * 1024;
/** The upstream must answer the upgrade within this long (the HTTP path has no such limit because it streams). */
const HANDSHAKE_TIMEOUT_MS = 60_000;
/** Body of a refused upstream upgrade relayed to the client: error bodies are small. */
const MAX_REFUSAL_BODY = 1024 * 1024;
/** Bytes queued towards one side before reading from the other pauses (and resumes below LOW). */
const HIGH_WATER = 16 * 1024 * 1024;
const LOW_WATER = 1024 * 1024;
/** Events larger than this are relayed but not read for usage (the HTTP tap has the same bound). */
const MAX_EVENT_READ = 32 * 1024 * 1024;
/** Per session, the earlier verbatim outputs kept as context for dedupe: at most this many, and chars. */
const CONTEXT_OUTPUTS = 64;
const CONTEXT_CHARS = 4 * 1024 * 1024;
/** Per session, tool calls remembered by call id (for tool names), and sessions remembered. */
const CONTEXT_CALLS = 2048;
const CONTEXT_SESSIONS = 128;
/** Response ids remembered to tell which session a `previous_response_id` continues. */
const RESPONSE_IDS = 4096;
/** Outputs shorter than this are never deduped by the engine, so they are not kept as context. */
const CONTEXT_MIN_OUTPUT_CHARS = 600;
/** Close codes that may be sent in a close frame (RFC 6455 §7.4; 1005, 1006 and 1015 may not). */
const SENDABLE_CLOSE = (code: number) =>
  (code >= 1000 && code <= 1014 && code !== 1004 && code !== 1005 && code !== 1006) || (code >= 3000 && code <= 4999);
/** Handshake headers the WebSocket library sets itself on each leg. */
const HANDSHAKE_HEADERS = [
  'sec-websocket-key',
  'sec-websocket-version',
  'sec-websocket-extensions',
  'sec-websocket-protocol',
  'sec-websocket-accept',
  'content-length',
];

export interface WebSocketContext {
  mode(): WebSocketMode;
  engine(): Engine;
  /** observe mode: every message goes upstream as it came; the turn records what would have been sent */
  observe?(): boolean;
  bases: Record<Provider, URL>;
  maxBody: number;
  log(line: string): void;
  nextTurn(session: string): number;
  /**
   * Why an upgrade request must be refused (403), or undefined to let it through: the same front
   * door check as the HTTP requests (Host and Origin), since browsers may open WebSockets to loopback.
   */
  refuse?(req: http.IncomingMessage): string | undefined;
  /** records a finished turn (bodies stored off the event loop), as the HTTP path does; resolves when written */
  record(turn: Turn, original?: Buffer, projected?: Buffer): Promise<void>;
}

export interface UpgradeHandler {
  /** for the HTTP server's `upgrade` event */
  handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void;
  /** open WebSocket connections (both legs counted once) */
  readonly connections: number;
  /** closes every relayed connection (1001, going away) and waits for them to finish */
  close(): Promise<void>;
}

/** Whether a client path is the Responses WebSocket (query ignored). */
export function isResponsesWebSocketPath(path: string): boolean {
  return RESPONSES_WEBSOCKET_PATHS.includes(path);
}

/** The body of the 426 answer in `refuse` mode: an OpenAI-style error, so SDKs report it as such. */
export function refusalBody(): string {
  return JSON.stringify({
    error: {
      message:
        'spillway proxy: the Responses WebSocket mode is turned off here (spillway.proxy.websockets = refuse, or --websockets refuse); ' +
        'send POST /v1/responses over HTTP instead, where every reduction stage applies',
      type: 'spillway_proxy_error',
      param: null,
      code: 'websockets_refused',
    },
  });
}

// ---- projecting one response.create -----------------------------------------------------------

interface KnownCall {
  type: 'function_call' | 'custom_tool_call';
  name: string;
  namespace?: string;
  /** the call's arguments (or a custom tool's input) when short: the command or path a preview is chosen by */
  args?: string;
}

/**
 * Longest call arguments remembered for the context: a command or a path is far shorter; a patch or a
 * file written is not needed to choose a preview and would only hold memory.
 */
const CALL_ARGS_MAX_CHARS = 4_096;
const shortArgs = (v: unknown): { args?: string } =>
  typeof v === 'string' && v.length <= CALL_ARGS_MAX_CHARS ? { args: Buffer.from(v).toString() } : {};

/** What the proxy remembers of one session for projecting its next WebSocket messages. */
export interface SessionContext {
  calls: Map<string, KnownCall>;
  /** earlier outputs that went upstream verbatim: the raw item and its raw output value */
  outputs: { callId: string; item: string; output: string }[];
  outputChars: number;
}

export function newSessionContext(): SessionContext {
  return { calls: new Map(), outputs: [], outputChars: 0 };
}

export interface CreateProjection {
  /** the message to send upstream; the original text when nothing changed */
  text: string;
  changed: boolean;
  reductions: Reduction[];
  /** tool call inputs replaced by a marker */
  inputs: InputReduction[];
  stats: ProjectionStats;
  /** results over their cap that still go upstream verbatim (offload off, or their cap only applies later) */
  overCap: { callId: string; tool: string; chars: number }[];
  /** every stored output the message's markers point at (results and tool inputs): on disk before it is sent */
  handles: string[];
}

/** Engines restricted to the stages that act on arrival, by the engine they derive from. */
const arrivalEngines = new WeakMap<Engine, Engine>();

/**
 * The engine's configuration with only the decisions that can be made when an item arrives:
 * window, budget and clear rewrite items sent earlier, and `offload.latestCap` offloads a result on
 * the call after it arrived; over a WebSocket those items live upstream and cannot be changed.
 * Same store, so handles read back from the same place.
 */
export function arrivalEngine(engine: Engine, log?: (line: string) => void): Engine {
  let e = arrivalEngines.get(engine);
  if (!e) {
    const c = engine.config;
    const config: SpillwayConfig = {
      ...c,
      offload: { ...c.offload, latestCap: 0 },
      window: { ...c.window, enabled: false },
      budget: { ...c.budget, enabled: false },
      clear: { ...c.clear, enabled: false },
    };
    e = createEngine(config, { store: engine.store, ...(log ? { log } : {}) });
    arrivalEngines.set(engine, e);
  }
  return e;
}

const OUTPUT_TYPES = new Set(['function_call_output', 'custom_tool_call_output']);

function itemType(src: string, item: JValue): string | undefined {
  return getString(src, item, 'type');
}

/**
 * Projects one `response.create` message (its text as received) with the arrival stages. The
 * session's known calls and earlier verbatim outputs are put in front of the new input items for
 * the engine to see, and cut off again from what it returns; when the engine changed any of them
 * (its settings changed since), the message is projected alone instead. Throws a SpillwayError when
 * the message is not a request the engine can read (the caller fails open).
 */
export function projectCreate(engine: Engine, text: string, ctx: SessionContext): CreateProjection {
  const root = parseLazy(text);
  if (root.kind !== 'object') throw new SpillwayError('the message is not a JSON object', 'bad-request');
  const input = get(root, 'input');
  const items = input?.kind === 'array' ? input.items : [];
  // call ids of this message's outputs, and calls this message itself declares
  const declared = new Set<string>();
  const answered: string[] = [];
  for (const it of items) {
    const type = itemType(text, it);
    const id = getString(text, it, 'call_id');
    if (!id) continue;
    if (type === 'function_call' || type === 'custom_tool_call') declared.add(id);
    else if (type && OUTPUT_TYPES.has(type)) answered.push(id);
  }

  const context: string[] = [];
  const callItem = (id: string): string | undefined => {
    const c = ctx.calls.get(id);
    if (!c || declared.has(id)) return undefined;
    return JSON.stringify(
      c.type === 'custom_tool_call'
        ? { type: 'custom_tool_call', call_id: id, name: c.name, ...(c.namespace ? { namespace: c.namespace } : {}), input: c.args ?? '' }
        : { type: 'function_call', call_id: id, name: c.name, ...(c.namespace ? { namespace: c.namespace } : {}), arguments: c.args ?? '' },
    );
  };
  const named = new Set<string>();
  const addCall = (id: string) => {
    if (named.has(id)) return;
    named.add(id);
    const c = callItem(id);
    if (c) context.push(c);
  };
  if (answered.length) {
    for (const o of ctx.outputs) {
      addCall(o.callId);
      context.push(o.item);
    }
    for (const id of answered) addCall(id);
  }
  const contextResults = answered.length ? ctx.outputs.length : 0;

  let projected: { text: string; reductions: Reduction[]; inputs: InputReduction[]; stats: ProjectionStats; handles: string[] } | undefined;
  const handlesOf = (p: { reductions: readonly Reduction[]; inputs: readonly { handle: string }[] }) =>
    [...p.reductions, ...p.inputs].map((r) => r.handle);
  if (context.length && input?.kind === 'array' && items.length) {
    const at = input.start + 1;
    const joined = context.join(',') + ',';
    const shadow = text.slice(0, at) + joined + text.slice(at);
    const p = engine.project(shadow, 'openai-responses', { detail: true });
    if (p.request.startsWith(joined, at) && p.reductions.every((r) => r.result >= contextResults)) {
      const out = text.slice(0, at) + p.request.slice(at + joined.length);
      const d = p.detail!;
      const k = context.length;
      const sum = (a: number[]) => a.slice(0, k).reduce((x, y) => x + y, 0);
      const originalTokens = p.stats.originalTokens - sum(d.originalItemTokens);
      const projectedTokens = p.stats.projectedTokens - sum(d.projectedItemTokens);
      projected = {
        text: out,
        handles: handlesOf(p),
        reductions: p.reductions.map((r) => ({ ...r, result: r.result - contextResults })),
        // the context's items came first: an input's item counts from the message's own first item
        inputs: p.inputs.map((r) => ({ ...r, item: r.item - k })),
        stats: {
          ...p.stats,
          toolResults: p.stats.toolResults - contextResults,
          originalTokens,
          projectedTokens,
          savedTokens: originalTokens - projectedTokens,
          originalChars: text.length,
          projectedChars: out.length,
          unchanged: out === text,
        },
      };
    }
  }
  if (!projected) {
    const p = engine.project(text, 'openai-responses');
    projected = { text: p.request, reductions: p.reductions, inputs: p.inputs, stats: p.stats, handles: handlesOf(p) };
  }

  // what this message teaches about the session: its calls, and its outputs that stayed verbatim
  const reduced = new Set(projected.reductions.map((r) => r.callId));
  const overCap: CreateProjection['overCap'] = [];
  for (const it of items) {
    const type = itemType(text, it);
    const id = getString(text, it, 'call_id');
    if (!id) continue;
    if (type === 'function_call' || type === 'custom_tool_call') {
      const name = getString(text, it, 'name');
      if (name)
        remember(ctx.calls, id, {
          type,
          name,
          ...(getString(text, it, 'namespace') ? { namespace: getString(text, it, 'namespace')! } : {}),
          ...shortArgs(getString(text, it, type === 'custom_tool_call' ? 'input' : 'arguments')),
        });
      continue;
    }
    if (!type || !OUTPUT_TYPES.has(type) || reduced.has(id)) continue;
    const output = get(it, 'output');
    if (!output) continue;
    const value = output.kind === 'string' ? decodeString(text, output) : text.slice(output.start, output.end);
    if (recogniseMarker(value)) continue;
    const call = ctx.calls.get(id);
    const tool = call ? (call.namespace ? `${call.namespace}.${call.name}` : call.name) : 'unknown';
    const cap = capFor(engine.config, candidateNames(tool));
    if (cap !== 'unlimited' && value.length > cap) overCap.push({ callId: id, tool, chars: value.length });
    if (value.length < CONTEXT_MIN_OUTPUT_CHARS) continue;
    const raw = text.slice(output.start, output.end);
    if (ctx.outputs.some((o) => o.output === raw)) continue;
    const item = text.slice(it.start, it.end);
    // copies, so the context never pins a whole message in memory
    ctx.outputs.push({ callId: Buffer.from(id).toString(), item: Buffer.from(item).toString(), output: Buffer.from(raw).toString() });
    ctx.outputChars += item.length;
    while (ctx.outputs.length > CONTEXT_OUTPUTS || ctx.outputChars > CONTEXT_CHARS) ctx.outputChars -= ctx.outputs.shift()!.item.length;
  }
  return {
    text: projected.text,
    changed: !projected.stats.unchanged,
    reductions: projected.reductions,
    inputs: projected.inputs,
    stats: projected.stats,
    overCap,
    handles: projected.handles,
  };
}

function remember<K, V>(map: Map<K, V>, key: K, value: V, max = CONTEXT_CALLS): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) map.delete(map.keys().next().value!);
}

// ---- the relay --------------------------------------------------------------------------------

interface PendingTurn {
  session: string;
  turn: number;
  time: string;
  started: number;
  model?: string;
  originalBytes: number;
  projectedBytes: number;
  reductions: Reduction[];
  inputs?: InputReduction[];
  stats?: ProjectionStats;
  failOpen?: string;
  unprojected?: string;
  previousResponseId?: string;
  responseId?: string;
  original?: Buffer;
  projected?: Buffer;
  observed?: true;
}

/**
 * The type of a JSON event: read from its first bytes when the event starts with it (as providers
 * write them), so deltas are never parsed; otherwise from the parsed event.
 */
function eventType(data: Buffer): string | undefined {
  const m = /^\s*\{\s*"type"\s*:\s*"([^"\\]{1,80})"/.exec(data.subarray(0, 256).toString('utf8'));
  if (m) return m[1];
  if (data.length > MAX_EVENT_READ) return undefined;
  try {
    const e = JSON.parse(data.toString('utf8')) as unknown;
    return isObj(e) && typeof e.type === 'string' ? e.type : undefined;
  } catch {
    return undefined;
  }
}

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function closeWith(ws: WebSocket, code: number, reason: Buffer): void {
  if (ws.readyState === WebSocket.CLOSED) return;
  if (ws.readyState === WebSocket.CONNECTING) {
    ws.terminate();
    return;
  }
  if (SENDABLE_CLOSE(code)) ws.close(code, reason);
  else if (code === 1005) ws.close();
  else ws.terminate();
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}

/** Writes a plain HTTP answer on a socket whose upgrade is not going to happen. */
function answerSocket(socket: Duplex, status: number, statusText: string, headers: string[], body: Buffer): void {
  if (socket.destroyed) return;
  const lines = [`HTTP/1.1 ${status} ${statusText}`];
  for (let i = 0; i < headers.length; i += 2) {
    const name = headers[i]!.toLowerCase();
    if (name === 'content-length' || name === 'transfer-encoding' || name === 'connection') continue;
    lines.push(`${headers[i]}: ${headers[i + 1]}`);
  }
  lines.push(`Content-Length: ${body.length}`, 'Connection: close', '', '');
  socket.end(Buffer.concat([Buffer.from(lines.join('\r\n'), 'latin1'), body]));
}

function jsonError(socket: Duplex, status: number, statusText: string, message: string, code: string | null = null): void {
  const body = JSON.stringify({ error: { message, type: 'spillway_proxy_error', param: null, code } });
  answerSocket(socket, status, statusText, ['Content-Type', 'application/json'], Buffer.from(body));
}

export function createUpgradeHandler(ctx: WebSocketContext): UpgradeHandler {
  const { log } = ctx;
  // the client leg: no compression (loopback), protocols as the upstream chose them
  const upstreamProtocol = new WeakMap<http.IncomingMessage, string>();
  const upstreamHeaders = new WeakMap<http.IncomingMessage, string[]>();
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: MAX_MESSAGE_BYTES,
    clientTracking: false,
    handleProtocols: (_protocols, req) => upstreamProtocol.get(req) ?? false,
  });
  wss.on('headers', (headers, req) => {
    const extra = upstreamHeaders.get(req);
    if (extra) for (let i = 0; i < extra.length; i += 2) headers.push(`${extra[i]}: ${extra[i + 1]}`);
  });
  const live = new Set<{ client?: WebSocket; upstream: WebSocket; done: Promise<void> }>();
  const sessionOfResponse = new Map<string, string>();
  const contexts = new Map<string, SessionContext>();
  let connections = 0;
  let closing = false;

  const contextOf = (session: string): SessionContext => {
    let c = contexts.get(session);
    if (!c) c = newSessionContext();
    remember(contexts, session, c, CONTEXT_SESSIONS);
    return c;
  };

  function handle(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => {
      /* reported by the relay or irrelevant once the socket is gone */
    });
    const url = originForm(req.url);
    const { path } = splitPath(url);
    const method = req.method ?? 'GET';
    if (closing) {
      jsonError(socket, 503, 'Service Unavailable', 'spillway proxy: closing');
      return;
    }
    const refused = ctx.refuse?.(req);
    if (refused) {
      log(`proxy: 403 on a WebSocket upgrade of ${path}: ${refused}`);
      jsonError(socket, 403, 'Forbidden', refused, 'forbidden');
      return;
    }
    if ((req.headers.upgrade ?? '').toLowerCase() !== 'websocket' || method !== 'GET') {
      jsonError(
        socket,
        400,
        'Bad Request',
        `spillway proxy: only WebSocket upgrades on GET are relayed, got ${JSON.stringify(req.headers.upgrade ?? '')} on ${method}; ` +
          'send the request without an Upgrade header (curl: --http1.1)',
      );
      return;
    }
    const responses = isResponsesWebSocketPath(path);
    if (responses && ctx.mode() === 'refuse') {
      log(`proxy: refused a WebSocket upgrade on ${path} (websockets: refuse); the client should fall back to HTTP`);
      answerSocket(socket, 426, 'Upgrade Required', ['Content-Type', 'application/json'], Buffer.from(refusalBody()));
      return;
    }
    const provider: Provider = responses
      ? isChatgptPath(path) || req.headers['chatgpt-account-id'] !== undefined
        ? 'chatgpt'
        : 'openai'
      : routeFor(method, path, req.headers).provider;
    const target = upstreamUrl(ctx.bases[provider], provider, url);
    target.protocol = target.protocol === 'https:' ? 'wss:' : 'ws:';
    const where = `${target.origin}${target.pathname}`;
    const headers = forwardHeaders(req.rawHeaders, HANDSHAKE_HEADERS);
    const offered = (req.headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const header = req.headers[SESSION_HEADER];
    const namedSession = typeof header === 'string' && header.trim() !== '' ? sessionFromHeader(header) : undefined;

    const upstream = new WebSocket(target, offered, {
      headers: headers as Record<string, string>,
      perMessageDeflate: true,
      maxPayload: MAX_MESSAGE_BYTES,
      handshakeTimeout: HANDSHAKE_TIMEOUT_MS,
      followRedirects: false,
    });
    let settled = false;
    // errors after the first are reported by the relay (or do not matter once the attempt failed)
    upstream.on('error', () => {});
    const onSocketGone = () => {
      if (!settled) {
        settled = true;
        upstream.terminate();
      }
    };
    socket.once('close', onSocketGone);

    upstream.once('unexpected-response', (_r, res) => {
      settled = true;
      socket.off('close', onSocketGone);
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (b: Buffer) => {
        if (size < MAX_REFUSAL_BODY) {
          chunks.push(b);
          size += b.length;
        }
      });
      const finish = () => {
        log(`proxy: the upstream ${where} answered the WebSocket upgrade with ${res.statusCode}; passed on to the client`);
        answerSocket(
          socket,
          res.statusCode ?? 502,
          res.statusMessage ?? '',
          responseHeaders(res.rawHeaders),
          Buffer.concat(chunks).subarray(0, MAX_REFUSAL_BODY),
        );
        upstream.terminate();
      };
      res.once('end', finish);
      res.once('error', finish);
    });
    upstream.once('error', (e: Error) => {
      if (settled) return;
      settled = true;
      socket.off('close', onSocketGone);
      const why = `the upstream ${where} could not be reached for a WebSocket: ${(e as NodeJS.ErrnoException).code ?? e.message}`;
      log(`proxy: ${why}`);
      jsonError(socket, 502, 'Bad Gateway', `spillway proxy: ${why}`);
    });
    upstream.once('upgrade', (res) => {
      // the upstream's own headers (request id, model, Codex's turn state) reach the client too
      const keep = responseHeaders(res.rawHeaders);
      const pairs: string[] = [];
      for (let i = 0; i < keep.length; i += 2)
        if (!HANDSHAKE_HEADERS.includes(keep[i]!.toLowerCase()) && keep[i]!.toLowerCase() !== 'upgrade') pairs.push(keep[i]!, keep[i + 1]!);
      upstreamHeaders.set(req, pairs);
    });
    upstream.once('open', () => {
      if (settled) {
        upstream.terminate();
        return;
      }
      settled = true;
      socket.off('close', onSocketGone);
      if (upstream.protocol) upstreamProtocol.set(req, upstream.protocol);
      wss.handleUpgrade(req, socket, head, (client) => {
        relay(client, upstream, { path, responses, namedSession, recorded: safeHeaders(req.headers, RECORDED_REQUEST_HEADERS), where });
      });
    });
  }

  function relay(
    client: WebSocket,
    upstream: WebSocket,
    info: { path: string; responses: boolean; namedSession?: string; recorded: Record<string, string>; where: string },
  ): void {
    connections++;
    let resolveDone!: () => void;
    const entry = {
      client,
      upstream,
      done: new Promise<void>((r) => {
        resolveDone = r;
      }),
    };
    live.add(entry);
    const pending: PendingTurn[] = [];
    // turns are written one after the other, so the recording keeps the connection's order
    let recording: Promise<void> = Promise.resolve();
    const loggedTypes = new Set<string>();
    let lastSession: string | undefined = info.namedSession;

    // backpressure: stop reading one side while the other has too much queued
    const send = (to: WebSocket, from: WebSocket, data: Buffer, binary: boolean) => {
      if (to.readyState !== WebSocket.OPEN) return;
      to.send(data, { binary }, () => {
        if (from.isPaused && to.bufferedAmount < LOW_WATER) from.resume();
      });
      if (to.bufferedAmount > HIGH_WATER && !from.isPaused) from.pause();
    };

    const finishTurn = (t: PendingTurn, status: number, extra: { usage?: TurnUsage; error?: string } = {}) => {
      const turn: Turn = {
        v: 1,
        session: t.session,
        turn: t.turn,
        time: t.time,
        path: info.path,
        format: 'openai-responses',
        ...(t.model !== undefined ? { model: t.model } : {}),
        originalBytes: t.originalBytes,
        projectedBytes: t.projectedBytes,
        ...(t.stats ? { originalTokens: t.stats.originalTokens, projectedTokens: t.stats.projectedTokens } : {}),
        reductions: t.reductions,
        ...(t.inputs?.length ? { inputs: t.inputs } : {}),
        ...(t.stats ? { stats: t.stats } : {}),
        ...(extra.usage ? { usage: extra.usage } : {}),
        status,
        durationMs: Math.round((performance.now() - t.started) * 10) / 10,
        ...(t.failOpen ? { failOpen: t.failOpen } : {}),
        ...(extra.error ? { error: extra.error } : {}),
        headers: info.recorded,
        transport: 'websocket',
        ...(t.previousResponseId ? { previousResponseId: t.previousResponseId } : {}),
        ...(t.responseId ? { responseId: t.responseId } : {}),
        ...(t.unprojected ? { unprojected: t.unprojected } : {}),
        ...(t.observed ? { observed: t.observed } : {}),
      };
      recording = recording.then(() => ctx.record(turn, t.original, t.projected));
    };

    // Messages go upstream in the order they came. A projected message waits until the outputs its
    // markers point at are on disk (durable before sent), and holds back the messages behind it.
    let held: Promise<void> | undefined;
    const sendInOrder = (out: Buffer | Promise<Buffer>, binary: boolean) => {
      if (!held && Buffer.isBuffer(out)) {
        send(upstream, client, out, binary);
        return;
      }
      const mine = (held ?? Promise.resolve())
        .then(() => out)
        .then((b) => send(upstream, client, b, binary))
        .catch((e: unknown) => log(`proxy: WebSocket ${info.path}: could not relay a message upstream: ${(e as Error).message}`));
      held = mine;
      void mine.then(() => {
        if (held === mine) held = undefined;
      });
    };

    const onCreate = (data: Buffer, text: string, root: JValue): Buffer | Promise<Buffer> => {
      let arrival: Engine | undefined;
      let observed = false;
      const started = performance.now();
      const time = new Date().toISOString();
      const prevNode = get(root, 'previous_response_id');
      const previousResponseId = prevNode?.kind === 'string' ? decodeString(text, prevNode) : undefined;
      let session = info.namedSession ?? (previousResponseId ? sessionOfResponse.get(previousResponseId) : undefined);
      let model: string | undefined;
      let failOpen: string | undefined;
      let unprojected: string | undefined;
      let result: CreateProjection | undefined;
      try {
        const opening = readOpening(text, 'openai-responses');
        model = opening.model;
        // a continuation whose first call the proxy did not see keeps the connection's session
        session ??= previousResponseId ? (lastSession ?? opening.session) : opening.session;
        if (data.length > ctx.maxBody) {
          failOpen = `the message is over ${ctx.maxBody} bytes: forwarded unchanged`;
        } else {
          observed = ctx.observe?.() === true;
          arrival = arrivalEngine(observed ? observingEngine(ctx.engine()) : ctx.engine(), log);
          result = projectCreate(arrival, text, contextOf(session));
        }
      } catch (e) {
        failOpen =
          e instanceof SpillwayError ? `the engine cannot read the message: ${e.message}` : `engine error: ${(e as Error).message}`;
      }
      session ??= lastSession ?? 's_unreadable';
      lastSession = session;
      const turn = ctx.nextTurn(session);
      if (failOpen)
        log(
          `proxy: fail open on WebSocket ${info.path} response.create (session ${session}, turn ${turn}): ${failOpen}; forwarding the original message`,
        );
      if (result?.overCap.length) {
        const list = result.overCap.map((o) => `${o.tool} ${o.callId} (${formatInt(o.chars)} chars)`).join(', ');
        unprojected =
          `${result.overCap.length} result${result.overCap.length === 1 ? '' : 's'} over ${result.overCap.length === 1 ? 'its' : 'their'} cap went upstream verbatim: ${list}; ` +
          'over a WebSocket only the offload stage can act (items live upstream once sent), and it did not reduce them; ' +
          'set spillway.proxy.websockets to refuse (or --websockets refuse) so this client uses HTTP, where every stage applies';
        log(`proxy: WebSocket ${info.path} (session ${session}, turn ${turn}): ${unprojected}`);
      }
      const wouldSend = result?.changed ? Buffer.from(result.text, 'utf8') : data;
      // observe mode: the message goes exactly as it came; the turn keeps what would have gone
      const out = observed ? data : wouldSend;
      const t: PendingTurn = {
        session,
        turn,
        time,
        started,
        ...(model !== undefined ? { model } : {}),
        originalBytes: data.length,
        projectedBytes: wouldSend.length,
        reductions: result?.reductions ?? [],
        ...(result?.inputs.length ? { inputs: result.inputs } : {}),
        ...(result ? { stats: result.stats } : {}),
        ...(failOpen ? { failOpen } : {}),
        ...(unprojected ? { unprojected } : {}),
        ...(previousResponseId ? { previousResponseId } : {}),
        ...(data.length <= ctx.maxBody ? { original: data } : {}),
        ...(result?.changed ? { projected: wouldSend } : {}),
        ...(observed ? { observed: true as const } : {}),
      };
      pending.push(t);
      const store = arrival?.store;
      if (observed || !result?.changed || !result.handles.length || !store?.written) return out;
      return store.written(result.handles).then(
        () => out,
        (e: unknown) => {
          // fail open: the original message goes, and the turn says why
          t.failOpen = `the store could not write this message's outputs: ${(e as Error).message}`;
          t.projectedBytes = data.length;
          t.reductions = [];
          delete t.inputs;
          delete t.projected;
          delete t.stats;
          log(
            `proxy: fail open on WebSocket ${info.path} response.create (session ${t.session}, turn ${t.turn}): ${t.failOpen}; forwarding the original message`,
          );
          return data;
        },
      );
    };

    client.on('message', (raw, isBinary) => {
      const data = toBuffer(raw);
      if (isBinary || !info.responses) {
        sendInOrder(data, isBinary);
        return;
      }
      let out: Buffer | Promise<Buffer> = data;
      const first = data.subarray(0, 64).toString('utf8').trimStart();
      let root: JValue | undefined;
      let text: string | undefined;
      if (first.startsWith('{')) {
        text = data.toString('utf8');
        try {
          root = parseLazy(text);
        } catch {
          root = undefined;
        }
      }
      if (!root || root.kind !== 'object') {
        log(`proxy: a WebSocket message on ${info.path} is not a JSON object; forwarded unchanged (${data.length} bytes)`);
      } else {
        const type = getString(text!, root, 'type');
        if (type === 'response.create') {
          try {
            out = onCreate(data, text!, root);
          } catch (e) {
            log(`proxy: internal error projecting a WebSocket message on ${info.path}: ${(e as Error).message}; forwarded unchanged`);
            out = data;
          }
        } else if (!loggedTypes.has(type ?? '(none)')) {
          loggedTypes.add(type ?? '(none)');
          log(`proxy: WebSocket ${info.path}: ${type ? `"${type}"` : 'untyped'} messages are not projected; forwarded unchanged`);
        }
      }
      sendInOrder(out, false);
    });

    upstream.on('message', (raw, isBinary) => {
      const data = toBuffer(raw);
      send(client, upstream, data, isBinary);
      if (isBinary || !info.responses) return;
      try {
        observe(data);
      } catch (e) {
        log(`proxy: could not read a WebSocket event: ${(e as Error).message}`);
      }
    });

    /** Reads the events that matter for recording; the client already has them. */
    const observe = (data: Buffer) => {
      const type = eventType(data);
      if (!type || data.length > MAX_EVENT_READ) return;
      const ends = type === 'response.completed' || type === 'response.failed' || type === 'response.incomplete' || type === 'error';
      if (!ends && type !== 'response.created' && type !== 'response.output_item.done') return;
      const event = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      const current = pending[0];
      const response = isObj(event.response) ? event.response : undefined;
      const id = typeof response?.id === 'string' ? response.id : undefined;
      if (id && current) {
        current.responseId = id;
        remember(sessionOfResponse, id, current.session, RESPONSE_IDS);
      }
      if (type === 'response.output_item.done' && isObj(event.item) && current) {
        const item = event.item;
        if (
          (item.type === 'function_call' || item.type === 'custom_tool_call') &&
          typeof item.call_id === 'string' &&
          typeof item.name === 'string'
        ) {
          remember(contextOf(current.session).calls, item.call_id, {
            type: item.type,
            name: item.name,
            ...(typeof item.namespace === 'string' ? { namespace: item.namespace } : {}),
            ...shortArgs(item.type === 'custom_tool_call' ? item.input : item.arguments),
          });
        }
        return;
      }
      if (!ends) return;
      if (!current) {
        if (type === 'error') log(`proxy: WebSocket ${info.path}: the upstream sent an error event outside a turn; passed on`);
        return;
      }
      pending.shift();
      const usage: TurnUsage = {};
      if (response && isObj(response.usage)) mergeUsage(usage, response.usage);
      const hasUsage = Object.keys(usage).length > 0;
      let error: string | undefined;
      let status = 101;
      if (type === 'error') {
        const err = isObj(event.error) ? event.error : event;
        error = `error event: ${typeof err.message === 'string' ? err.message : JSON.stringify(err).slice(0, 200)}`;
        if (typeof event.status === 'number') status = event.status;
      } else if (type === 'response.failed') {
        const err = response && isObj(response.error) ? response.error : undefined;
        error = `response.failed${err && typeof err.message === 'string' ? `: ${err.message}` : ''}`;
      } else if (type === 'response.incomplete') {
        const d = response && isObj(response.incomplete_details) ? response.incomplete_details : undefined;
        error = `response.incomplete${d && typeof d.reason === 'string' ? `: ${d.reason}` : ''}`;
      }
      finishTurn(current, status, { ...(hasUsage ? { usage } : {}), ...(error ? { error } : {}) });
    };

    let ended = false;
    const end = (why: string) => {
      if (ended) return;
      ended = true;
      for (const t of pending.splice(0)) finishTurn(t, 101, { error: why });
      connections--;
      void recording.then(() => {
        live.delete(entry);
        resolveDone();
      });
    };
    client.on('close', (code, reason) => {
      // messages still waiting for their outputs to be on disk go first
      if (held) void held.then(() => closeWith(upstream, code, reason));
      else closeWith(upstream, code, reason);
      end(
        `the client closed the WebSocket (${code}${reason.length ? ` ${reason.toString('utf8').slice(0, 120)}` : ''}) before the response completed`,
      );
    });
    upstream.on('close', (code, reason) => {
      closeWith(client, code, reason);
      end(
        `the upstream closed the WebSocket (${code}${reason.length ? ` ${reason.toString('utf8').slice(0, 120)}` : ''}) before the response completed`,
      );
    });
    client.on('error', (e) => log(`proxy: WebSocket ${info.path}: client connection error: ${e.message}`));
    upstream.on('error', (e) => log(`proxy: WebSocket ${info.path}: upstream ${info.where} connection error: ${e.message}`));
  }

  return {
    handle,
    get connections() {
      return connections;
    },
    async close() {
      closing = true;
      for (const c of live) {
        c.client?.close(1001, 'spillway proxy closing');
        c.upstream.close(1001, 'spillway proxy closing');
      }
      const all = Promise.all([...live].map((c) => c.done));
      const timer = new Promise<void>((r) => setTimeout(r, 2000).unref());
      await Promise.race([all, timer]);
      for (const c of live) {
        c.client?.terminate();
        c.upstream.terminate();
      }
      await Promise.race([Promise.all([...live].map((c) => c.done)), new Promise<void>((r) => setTimeout(r, 500).unref())]);
      wss.close();
    },
  };
}
