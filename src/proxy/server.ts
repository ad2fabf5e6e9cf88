/**
 * The local proxy: agents point their base URL at it, and every model call passes through the
 * engine on its way to the provider.
 *
 * It sits between an agent and its provider, so its first duty is to be invisible: requests go
 * upstream with their headers (auth included) and the projected body; responses come back with the
 * upstream's status, headers and bytes, streamed as they arrive with backpressure; a client that
 * hangs up aborts the upstream call, and an upstream that breaks off mid-response is passed on by
 * breaking off the client's response the same way. Its second duty is to fail open: when the engine
 * cannot read a body or throws, the original bytes go upstream unchanged and the log says why.
 * Spillway must never be the reason a call fails.
 *
 * Only the paths in routes.ts are projected; everything else (any method) is passed through as a
 * byte stream. WebSocket upgrades go to websocket.ts: the Responses WebSocket mode is projected
 * message by message (or refused with 426), other paths are relayed. Each projected model call becomes a turn in the recording (recording.ts), with the
 * usage the provider reported in its response (usage.ts).
 *
 * Binds 127.0.0.1 only: the proxy forwards whatever credentials its clients send and must never be
 * reachable from another machine.
 */
import { EventEmitter } from 'node:events';
import * as http from 'node:http';
import * as https from 'node:https';
import { performance } from 'node:perf_hooks';
import type { Duplex, Readable } from 'node:stream';
import {
  createEngine,
  SpillwayError,
  whenStored,
  type Engine,
  type HeldGroup,
  type InputReduction,
  type ProjectionStats,
  type Reduction,
  type WireFormat,
} from '../engine';
import { FileStore } from '../store';
import { tightenPrivate } from '../store/private';
import { collectBody, decodeBody, DEFAULT_MAX_BODY_BYTES } from './body';
import { agentEnvironmentLines, type Shell } from './env';
import { refuseForeignRequest } from './guard';
import { defaultSessionsDir, MAX_ERROR_BODY_BYTES, Recorder, upstreamErrorMessage, type Turn } from './recording';
import {
  DEFAULT_ANTHROPIC_UPSTREAM,
  DEFAULT_CHATGPT_UPSTREAM,
  DEFAULT_GEMINI_UPSTREAM,
  DEFAULT_OPENAI_UPSTREAM,
  RECORDED_REQUEST_HEADERS,
  SESSION_HEADER,
  forwardHeaders,
  parseUpstream,
  responseHeaders,
  routeFor,
  safeHeaders,
  originForm,
  splitPath,
  upstreamUrl,
  type OutgoingHeaders,
  type Provider,
  type Route,
} from './routes';
import { readOpening, sessionFromHeader } from './session';
import { UsageTap, type TurnUsage } from './usage';
import { createUpgradeHandler, DEFAULT_WEBSOCKET_MODE, type WebSocketMode } from './websocket';
import { answerReads as runAnswerReads, sendResult } from './answerReads';
import { withReadTool, type Reader } from './readLoop';
import type { ReadOptions } from '../store/read';
import { formatInt } from '../engine/format-number';
import { observingEngine, type ProxyMode } from './observe';

/** The port `spillway proxy` and the extension use unless told otherwise. */
export const DEFAULT_PROXY_PORT = 8417;
export const PROXY_HOST = '127.0.0.1';
/** Session of calls whose body could not be read (so no fingerprint) and that named none. */
export const UNREADABLE_SESSION = 's_unreadable';

export interface ProxyOptions {
  /** port on 127.0.0.1; 0 picks a free one (default DEFAULT_PROXY_PORT) */
  port?: number;
  /** base URLs as the providers' SDKs take them (see routes.ts) */
  openaiUpstream?: string;
  anthropicUpstream?: string;
  /** the ChatGPT backend, served under `/backend-api/` (Codex signed in with ChatGPT) */
  chatgptUpstream?: string;
  /** the Gemini API's base URL (default `https://generativelanguage.googleapis.com`) */
  geminiUpstream?: string;
  /** the engine to project with; without one, one is made from `config` and `storeDir` */
  engine?: Engine;
  /** engine configuration (as `createEngine` takes it), when no engine is given */
  config?: unknown;
  /** folder of the output store, when no engine is given (without either, outputs stay in memory) */
  storeDir?: string;
  /**
   * Flush each new stored output to disk before renaming it in (default false). The store's writes
   * are atomic either way (temp file, then rename), so a crash never leaves a partial output; the
   * flush only adds safety against a power cut, and it runs synchronously while a request is being
   * projected: the first call of a resumed session with hundreds of big outputs would stall every
   * other stream through the proxy for seconds.
   */
  durableStore?: boolean;
  /**
   * Recordings folder; defaults to `<storeDir>/../sessions` when a storeDir is given. `false`, or
   * neither, records nothing (turn events are still emitted).
   */
  sessionsDir?: string | false;
  /** keep the request and projection bodies of each turn (default true) */
  recordBodies?: boolean;
  /** bodies larger than this stream upstream unchanged, unprojected (default 200 MB) */
  maxBodyBytes?: number;
  /** one line per problem (fail open, upstream errors) and per recorded turn; never holds secrets */
  log?: (line: string) => void;
  /**
   * The Responses WebSocket mode (`GET /v1/responses` upgrades): `project` (default) relays it and
   * projects each `response.create`; `refuse` answers 426 so clients fall back to HTTP (websocket.ts).
   */
  websockets?: WebSocketMode;
  /**
   * `project` (default) sends each model call projected; `observe` forwards every request byte for
   * byte and records what Spillway would have sent (the turn's `observed`), so a session can be
   * measured before anything is changed. It can be switched while the proxy runs (`setMode`).
   */
  mode?: ProxyMode;
  /**
   * Answer the model's read-backs here (answerReads.ts): the read tool is added to each request
   * before it is projected, and answers holding only calls to it are answered from the store within
   * the same request (default false: the agent reads back by its own means; never in observe mode).
   */
  answerReads?: boolean;
  /** how read-backs are read (default: the engine's store) */
  read?: Reader;
}

export interface RunningProxy {
  readonly port: number;
  /** `http://127.0.0.1:PORT` */
  readonly url: string;
  /** the engine calls are projected with (replace it with `setEngine` when settings change) */
  readonly engine: Engine;
  /** projects later calls with another engine (calls in flight finish with the one they started with) */
  setEngine(engine: Engine): void;
  /** how WebSocket upgrades on /v1/responses are answered (later upgrades; open connections stay) */
  readonly websockets: WebSocketMode;
  setWebsockets(mode: WebSocketMode): void;
  /** project or observe (later calls; a call in flight finishes as it started) */
  readonly mode: ProxyMode;
  setMode(mode: ProxyMode): void;
  /** whether later calls get their read-backs answered by the proxy */
  readonly answerReads: boolean;
  setAnswerReads(on: boolean): void;
  readonly openaiUpstream: string;
  readonly anthropicUpstream: string;
  readonly chatgptUpstream: string;
  readonly geminiUpstream: string;
  /** where turns are recorded, when they are */
  readonly sessionsDir?: string;
  readonly recorder?: Recorder;
  /** the lines that point agents at this proxy (`export OPENAI_BASE_URL=…`) */
  environment(shell?: Shell): string[];
  on(event: 'turn', listener: (turn: Turn) => void): RunningProxy;
  off(event: 'turn', listener: (turn: Turn) => void): RunningProxy;
  /** stops listening, cuts open connections (aborting their upstream calls), waits for recordings */
  close(): Promise<void>;
}

interface Exchange {
  req: http.IncomingMessage;
  res: http.ServerResponse;
  route: Route;
  target: URL;
  abort: AbortController;
}

interface Outcome {
  status: number;
  usage?: TurnUsage;
  error?: string;
  /** an error status's message, as the upstream wrote it */
  upstreamMessage?: string;
}

type Body = { bytes: Buffer } | { stream: Readable; head: Buffer[] };

interface Prepared {
  session?: string;
  model?: string;
  failOpen?: string;
  /** the request's UTF-8 bytes, for the recording (absent when it could not be decoded) */
  originalBytes?: Buffer;
  /** the projection's bytes, when it differs from the request (in observe mode: what would have been sent) */
  projected?: Buffer;
  observed?: true;
  stats?: ProjectionStats;
  reductions: Reduction[];
  /** tool call inputs the projection replaced by a marker */
  inputs?: InputReduction[];
  /** the results sent whole, grouped by why the clear stage left them so */
  held?: HeldGroup[];
  /** the read tool was added before projecting (answer-reads): the proxy answers the model's read-backs */
  readTool?: boolean;
}

export async function startProxy(options: ProxyOptions = {}): Promise<RunningProxy> {
  const log = options.log ?? (() => {});
  const openaiUpstream = options.openaiUpstream ?? DEFAULT_OPENAI_UPSTREAM;
  const anthropicUpstream = options.anthropicUpstream ?? DEFAULT_ANTHROPIC_UPSTREAM;
  const chatgptUpstream = options.chatgptUpstream ?? DEFAULT_CHATGPT_UPSTREAM;
  const geminiUpstream = options.geminiUpstream ?? DEFAULT_GEMINI_UPSTREAM;
  let bases: Record<Provider, URL>;
  try {
    bases = {
      openai: parseUpstream(openaiUpstream, 'the OpenAI upstream'),
      anthropic: parseUpstream(anthropicUpstream, 'the Anthropic upstream'),
      chatgpt: parseUpstream(chatgptUpstream, 'the ChatGPT upstream'),
      gemini: parseUpstream(geminiUpstream, 'the Gemini upstream'),
    };
  } catch (e) {
    throw new SpillwayError((e as Error).message, 'usage');
  }
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  let engine =
    options.engine ??
    createEngine(options.config ?? {}, {
      ...(options.storeDir ? { store: new FileStore(options.storeDir, { durable: options.durableStore ?? false }) } : {}),
      log,
    });
  const sessionsDir =
    options.sessionsDir === false
      ? undefined
      : (options.sessionsDir ?? (options.storeDir ? defaultSessionsDir(options.storeDir) : undefined));
  // owner-only before anything is written: a store or recordings an older version left readable by others are tightened
  await tightenPrivate([...(options.storeDir ? [options.storeDir] : []), ...(sessionsDir ? [sessionsDir] : [])], log);
  const recorder = sessionsDir ? new Recorder(sessionsDir, { bodies: options.recordBodies ?? true }) : undefined;
  const memoryTurns = new Map<string, number>();
  const nextTurn = (session: string): number => {
    if (recorder) return recorder.nextTurn(session);
    const n = (memoryTurns.get(session) ?? 0) + 1;
    memoryTurns.set(session, n);
    return n;
  };

  const events = new EventEmitter();
  const agents = {
    'http:': new http.Agent({ keepAlive: true, noDelay: true } as http.AgentOptions),
    'https:': new https.Agent({ keepAlive: true, noDelay: true } as https.AgentOptions),
  };
  const pending = new Set<Promise<void>>();
  let websockets: WebSocketMode = options.websockets ?? DEFAULT_WEBSOCKET_MODE;
  let mode: ProxyMode = options.mode ?? 'project';
  let answering = options.answerReads ?? false;
  const read: Reader =
    options.read ??
    ((handle: string, readOptions: ReadOptions) => {
      const store = engine.store as { read?: Reader };
      if (typeof store.read !== 'function') throw new Error('this proxy has no store to read from');
      return store.read.call(engine.store, handle, readOptions);
    });

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      // a bug in the proxy: say so, and do not leave the client hanging
      log(`proxy: internal error on ${req.method} ${splitPath(req.url ?? '/').path}: ${(e as Error).stack ?? e}`);
      if (!res.headersSent) sendError(res, 'openai', 500, `spillway proxy internal error: ${(e as Error).message}`);
      else res.destroy();
    });
  });

  // WebSocket upgrades: the Responses WebSocket mode (projected), other paths relayed as they are
  const upgrades = createUpgradeHandler({
    mode: () => websockets,
    engine: () => engine,
    observe: () => mode === 'observe',
    bases,
    maxBody,
    log,
    nextTurn,
    record: (turn, original, projected) => record(turn, original, projected),
    // the same front door as plain requests: a foreign Host (DNS rebinding) or any Origin is refused
    refuse: (req) => refuseForeignRequest(req.headers, (server.address() as { port: number }).port),
  });
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    try {
      upgrades.handle(req, socket, head);
    } catch (e) {
      log(`proxy: internal error on a WebSocket upgrade of ${splitPath(req.url ?? '/').path}: ${(e as Error).stack ?? e}`);
      socket.destroy();
    }
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = performance.now();
    const time = new Date().toISOString();
    const url = originForm(req.url);
    const { path, query } = splitPath(url);
    const method = req.method ?? 'GET';
    const route = routeFor(method, path, req.headers, query);
    const refused = refuseForeignRequest(req.headers, (server.address() as { port: number }).port);
    if (refused) {
      log(`proxy: 403 on ${method} ${path}: ${refused}`);
      req.resume();
      sendError(res, route.provider, 403, refused, 'permission_error');
      return;
    }
    const ex: Exchange = { req, res, route, target: upstreamUrl(bases[route.provider], route.provider, url), abort: new AbortController() };
    res.on('close', () => {
      if (!res.writableFinished) ex.abort.abort();
    });
    const header = req.headers[SESSION_HEADER];
    const namedSession = typeof header === 'string' && header.trim() !== '' ? sessionFromHeader(header) : undefined;

    if (!route.format) {
      await forward(ex, forwardHeaders(req.rawHeaders), { stream: req, head: [] });
      return;
    }

    const collected = await collectBody(req, maxBody);
    if (collected.kind === 'aborted') return;
    if (collected.kind === 'over') {
      let bytes = collected.head.reduce((n, b) => n + b.length, 0);
      req.on('data', (b: Buffer) => {
        bytes += b.length;
      });
      const reason = `the body is over ${maxBody} bytes: streamed upstream unchanged`;
      log(`proxy: fail open on ${method} ${path}: ${reason}`);
      const outcome = await forward(ex, forwardHeaders(req.rawHeaders), { stream: req, head: collected.head });
      if (route.record) {
        const session = namedSession ?? UNREADABLE_SESSION;
        record({
          v: 1,
          session,
          turn: nextTurn(session),
          time,
          path,
          format: route.format,
          originalBytes: bytes,
          projectedBytes: bytes,
          reductions: [],
          ...result(outcome, started),
          failOpen: reason,
          headers: safeHeaders(req.headers, RECORDED_REQUEST_HEADERS),
        });
      }
      return;
    }

    const body = collected.body;
    const prepared = await prepare(body, req, route.format, namedSession);
    // the Gemini API names the model in the path, not the body
    prepared.model ??= route.model;
    const { failOpen, originalBytes, model, projected, stats, reductions, inputs, held, observed, readTool } = prepared;
    const session = prepared.session ?? UNREADABLE_SESSION;
    const turn = route.record ? nextTurn(session) : 0;
    if (failOpen)
      log(
        `proxy: fail open on ${method} ${path} (session ${session}${turn ? `, turn ${turn}` : ''}): ${failOpen}; forwarding the original bytes`,
      );

    // a changed body goes as plain UTF-8 (a decoded gzip/br body is not compressed again); an
    // unchanged one goes as the original bytes, encoding and all
    // observe mode: the request goes exactly as it came, whatever Spillway would have sent
    const sent = observed ? undefined : projected;
    const headers = forwardHeaders(req.rawHeaders, sent ? ['content-length', 'content-encoding'] : ['content-length']);
    const out = sent ?? body;
    let readRounds: number | undefined;
    let outcome: Outcome | undefined;
    if (readTool && sent) {
      const answered = await answerReadsFor(ex, headers, sent, route.format, `${session}${turn ? `#${turn}` : ''}`);
      if (answered) ({ outcome, readRounds } = answered);
      else {
        // fail open: the agent's own request, as it sent it
        const original = forwardHeaders(req.rawHeaders, ['content-length']);
        original['content-length'] = String(body.length);
        outcome = await forward(ex, original, { bytes: body });
      }
    }
    headers['content-length'] = String(out.length);
    outcome ??= await forward(ex, headers, { bytes: out });

    if (!route.record) return;
    record(
      {
        v: 1,
        session,
        turn,
        time,
        path,
        format: route.format,
        ...(model !== undefined ? { model } : {}),
        originalBytes: body.length,
        projectedBytes: observed ? (projected ?? body).length : out.length,
        ...(stats ? { originalTokens: stats.originalTokens, projectedTokens: stats.projectedTokens } : {}),
        reductions,
        ...(inputs?.length ? { inputs } : {}),
        ...(held?.length ? { held } : {}),
        ...(stats ? { stats } : {}),
        ...result(outcome, started),
        ...(failOpen ? { failOpen } : {}),
        ...(readRounds ? { readRounds } : {}),
        headers: safeHeaders(req.headers, RECORDED_REQUEST_HEADERS),
        ...(observed ? { observed } : {}),
      },
      originalBytes,
      projected,
    );
  }

  /**
   * Decodes the body and runs the engine on it. Returns only what the rest of the exchange needs,
   * so the decoded text (as large as the body) is garbage once the projection is encoded.
   */
  async function prepare(body: Buffer, req: http.IncomingMessage, format: WireFormat, namedSession: string | undefined): Promise<Prepared> {
    const decoded = await decodeBody(body, req.headers['content-encoding'] as string | undefined, maxBody);
    if ('failOpen' in decoded) return { failOpen: decoded.failOpen, session: namedSession, reductions: [] };
    let session = namedSession;
    let model: string | undefined;
    // the engine in force now projects and stores this call, even if settings swap it meanwhile
    const observing = mode === 'observe';
    const current = observing ? observingEngine(engine) : engine;
    try {
      const opening = readOpening(decoded.text, format);
      session ??= opening.session;
      model = opening.model;
      // answer-reads: the tool goes in before the engine runs, so the projection (and the markers) know the way back
      const withTool = answering && !observing ? addReadTool(decoded.text, format) : undefined;
      // the time it is sent: a call after a pause finds the provider's cache cold (the guarantee charges it so)
      // `held`: why the clear stage left each result whole, for the inspector (no cost beyond the noise: npm run bench:held)
      const projection = current.project(withTool ?? decoded.text, format, { session, at: Date.now(), held: true });
      // durable before sent: nothing goes upstream until the outputs its markers point at are on disk
      const stored = await whenStored(current.store, projection).then(
        () => undefined,
        (e: unknown) => (e as Error).message,
      );
      if (stored !== undefined)
        return {
          failOpen: `the store could not write this call's outputs: ${stored}`,
          session,
          model,
          originalBytes: decoded.bytes,
          reductions: [],
        };
      return {
        ...(withTool !== undefined ? { readTool: true } : {}),
        session,
        model,
        originalBytes: decoded.bytes,
        stats: projection.stats,
        reductions: projection.reductions,
        ...(projection.inputs.length ? { inputs: projection.inputs } : {}),
        ...(projection.held?.length ? { held: projection.held } : {}),
        ...(projection.stats.unchanged && withTool === undefined ? {} : { projected: Buffer.from(projection.request, 'utf8') }),
        ...(observing ? { observed: true as const } : {}),
      };
    } catch (e) {
      const failOpen =
        e instanceof SpillwayError ? `the engine cannot read the body: ${e.message}` : `engine error: ${(e as Error).message}`;
      return { failOpen, session, model, originalBytes: decoded.bytes, reductions: [] };
    }
  }

  /**
   * The read-back loop for one call (answerReads.ts). Undefined when it failed before the client got
   * a byte: the caller then forwards the agent's original request (fail open).
   */
  async function answerReadsFor(
    ex: Exchange,
    headers: OutgoingHeaders,
    bytes: Buffer,
    format: WireFormat,
    call: string,
  ): Promise<{ outcome: Outcome; readRounds?: number } | undefined> {
    let answered: Awaited<ReturnType<typeof runAnswerReads>>;
    try {
      answered = await runAnswerReads({
        format,
        body: bytes.toString('utf8'),
        target: ex.target,
        method: ex.req.method ?? 'POST',
        headers,
        agent: agents[ex.target.protocol as 'http:' | 'https:'],
        signal: ex.abort.signal,
        read,
        log,
      });
    } catch (e) {
      if (ex.abort.signal.aborted) return { outcome: { status: 0, error: 'the client closed the connection' } };
      log(`proxy: answer-reads failed on ${call} (${describeError(e)}); forwarding the original request`);
      return undefined;
    }
    sendResult(ex.res, answered);
    return {
      outcome: { status: answered.status, ...(answered.usage ? { usage: answered.usage } : {}) },
      ...(answered.rounds > 1 ? { readRounds: answered.rounds - 1 } : {}),
    };
  }

  function result(o: Outcome, started: number): Pick<Turn, 'status' | 'durationMs' | 'usage' | 'error' | 'upstreamMessage'> {
    return {
      status: o.status,
      durationMs: Math.round((performance.now() - started) * 10) / 10,
      ...(o.usage ? { usage: o.usage } : {}),
      ...(o.error ? { error: o.error } : {}),
      ...(o.upstreamMessage ? { upstreamMessage: o.upstreamMessage } : {}),
    };
  }

  /**
   * Stores the bodies (off the event loop) and appends the turn, once the response is out; never
   * throws. `original` is the request's UTF-8 bytes (inflated if it came compressed); `projected`
   * is given only when it differs.
   */
  function record(turn: Turn, original?: Buffer, projected?: Buffer): Promise<void> {
    const work = (async () => {
      try {
        if (recorder && original) {
          const requestRef = await recorder.putBody(original);
          const projectionRef = projected ? await recorder.putBody(projected) : requestRef;
          if (requestRef) {
            turn.requestRef = requestRef;
            turn.projectionRef = projectionRef;
          }
        }
        recorder?.append(turn);
      } catch (e) {
        log(`proxy: could not record turn ${turn.turn} of session ${turn.session}: ${(e as Error).message}`);
      }
      log(describeTurn(turn));
      try {
        events.emit('turn', turn);
      } catch (e) {
        log(`proxy: a turn listener threw: ${(e as Error).message}`);
      }
    })();
    pending.add(work);
    void work.then(() => pending.delete(work));
    return work;
  }

  /**
   * Sends the request upstream and relays the response. Resolves when the exchange is over, however
   * it ended; never rejects.
   */
  function forward(ex: Exchange, headers: OutgoingHeaders, body: Body, retried = false): Promise<Outcome> {
    const { req, res, target, abort, route } = ex;
    return new Promise<Outcome>((resolve) => {
      if (abort.signal.aborted) {
        resolve({ status: 0, error: 'the client closed the connection' });
        return;
      }
      let settled = false;
      const done = (o: Outcome) => {
        if (!settled) {
          settled = true;
          resolve(o);
        }
      };
      const mod = target.protocol === 'https:' ? https : http;
      const upReq = mod.request(target, {
        method: req.method,
        headers,
        agent: agents[target.protocol as 'http:' | 'https:'],
        signal: abort.signal,
      });
      let responded = false;

      upReq.on('response', (upRes) => {
        responded = true;
        const status = upRes.statusCode ?? 502;
        const tap = route.record
          ? new UsageTap(upRes.headers['content-type'], upRes.headers['content-encoding'] as string | undefined)
          : undefined;
        let broken: string | undefined;
        upRes.on('error', (e) => {
          broken ??= describeError(e);
        });
        upRes.on('aborted', () => {
          broken ??= 'aborted';
        });
        if (tap) upRes.on('data', (chunk: Buffer) => tap.write(chunk));
        // an error status: keep the start of its body, so the recording says what the upstream said
        const errorBody: Buffer[] = [];
        let errorBytes = 0;
        if (route.record && status >= 400)
          upRes.on('data', (chunk: Buffer) => {
            if (errorBytes >= MAX_ERROR_BODY_BYTES) return;
            errorBody.push(chunk);
            errorBytes += chunk.length;
          });
        const said = (): Pick<Outcome, 'upstreamMessage'> => {
          const m = errorBody.length
            ? upstreamErrorMessage(Buffer.concat(errorBody), upRes.headers['content-encoding'] as string | undefined)
            : undefined;
          return m ? { upstreamMessage: m } : {};
        };
        try {
          res.writeHead(status, upRes.statusMessage, responseHeaders(upRes.rawHeaders));
        } catch (e) {
          log(`proxy: could not relay the upstream's response headers: ${(e as Error).message}`);
          upRes.destroy();
          res.destroy();
          done({ status, error: 'bad upstream response headers' });
          return;
        }
        upRes.pipe(res);
        upRes.on('close', () => {
          const finish = (error?: string) => {
            if (!tap) {
              done({ status, ...(error ? { error } : {}), ...said() });
              return;
            }
            void tap.finish().then(
              (usage) => done({ status, ...(usage ? { usage } : {}), ...(error ? { error } : {}), ...said() }),
              () => done({ status, ...said() }),
            );
          };
          if (upRes.complete && !broken) {
            finish();
            return;
          }
          if (abort.signal.aborted) {
            finish('the client closed the connection');
            return;
          }
          // the upstream broke off mid-response: break off the client's response the same way
          const why = `the upstream closed the connection mid-response (${broken ?? 'closed'})`;
          log(`proxy: ${req.method} ${target.pathname}: ${why}`);
          res.destroy();
          finish(why);
        });
      });

      upReq.on('error', (e: NodeJS.ErrnoException) => {
        if (responded) return; // the response's own events report it
        if (abort.signal.aborted) {
          done({ status: 0, error: 'the client closed the connection' });
          return;
        }
        // a kept-alive connection the upstream had just closed: send once more on a fresh one
        if (!retried && upReq.reusedSocket && e.code === 'ECONNRESET' && 'bytes' in body) {
          void forward(ex, headers, body, true).then(done);
          return;
        }
        const why = `the upstream ${target.origin} could not be reached: ${describeError(e)}`;
        log(`proxy: ${req.method} ${target.pathname}: ${why}`);
        if (!res.headersSent) sendError(res, route.provider, 502, `spillway proxy: ${why}`);
        else res.destroy();
        done({ status: 0, error: why });
      });

      if ('bytes' in body) {
        upReq.end(body.bytes);
      } else {
        for (const chunk of body.head) upReq.write(chunk);
        body.stream.pipe(upReq);
      }
    });
  }

  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      const port = options.port ?? DEFAULT_PROXY_PORT;
      if (e.code === 'EADDRINUSE') reject(new SpillwayError(`port ${port} on ${PROXY_HOST} is already in use; pick another port`, 'usage'));
      else if (e.code === 'EACCES') reject(new SpillwayError(`not allowed to listen on port ${port} on ${PROXY_HOST}`, 'usage'));
      else reject(e);
    };
    server.once('error', onError);
    server.listen(options.port ?? DEFAULT_PROXY_PORT, PROXY_HOST, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (e) => log(`proxy: server error: ${e.message}`));
  const port = (server.address() as { port: number }).port;
  const url = `http://${PROXY_HOST}:${port}`;
  let closing: Promise<void> | undefined;

  const running: RunningProxy = {
    port,
    url,
    openaiUpstream,
    anthropicUpstream,
    chatgptUpstream,
    geminiUpstream,
    recorder,
    get engine() {
      return engine;
    },
    setEngine(next) {
      engine = next;
    },
    get websockets() {
      return websockets;
    },
    setWebsockets(next) {
      websockets = next;
    },
    get mode() {
      return mode;
    },
    setMode(next) {
      mode = next;
    },
    get answerReads() {
      return answering;
    },
    setAnswerReads(on) {
      answering = on;
    },
    ...(sessionsDir ? { sessionsDir } : {}),
    environment: (shell) => agentEnvironmentLines(url, shell),
    on(event, listener) {
      events.on(event, listener);
      return running;
    },
    off(event, listener) {
      events.off(event, listener);
      return running;
    },
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await upgrades.close();
        await closed;
        while (pending.size) await Promise.all([...pending]);
        agents['http:'].destroy();
        agents['https:'].destroy();
      })();
      return closing;
    },
  };
  return running;
}

/** The body as JSON text with the read tool added (readLoop.ts), or undefined when it is not a JSON object or already offers the tool. */
function addReadTool(text: string, format: WireFormat): string | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined; // the engine says what it cannot read
  }
  const withTool =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? withReadTool(format, body as Record<string, unknown>) : undefined;
  return withTool ? JSON.stringify(withTool) : undefined;
}

function describeError(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  return err.code ? `${err.code}${err.message && !err.message.includes(err.code) ? ` (${err.message})` : ''}` : (err.message ?? String(e));
}

/** An error in the provider's own shape (the ChatGPT backend answers in OpenAI's), so the agent's SDK reports it as it would the provider's. */
function sendError(res: http.ServerResponse, provider: Provider, status: number, message: string, type?: 'permission_error'): void {
  const body =
    provider === 'anthropic'
      ? { type: 'error', error: { type: type ?? 'api_error', message } }
      : provider === 'gemini'
        ? {
            error: {
              code: status,
              message,
              status: type === 'permission_error' ? 'PERMISSION_DENIED' : status === 502 ? 'UNAVAILABLE' : 'INTERNAL',
            },
          }
        : { error: { message, type: 'spillway_proxy_error', param: null, code: type === 'permission_error' ? 'forbidden' : null } };
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function describeTurn(t: Turn): string {
  const parts = [
    `turn ${t.session}#${t.turn} ${t.path}${t.transport === 'websocket' ? ' (WebSocket)' : ''} ${t.status || t.error || 'no response'} in ${Math.round(t.durationMs)} ms`,
  ];
  if (t.failOpen) parts.push(`failed open (${t.failOpen})`);
  if (t.readRounds) parts.push(`${t.readRounds} read-back round(s) answered by the proxy`);
  if (t.unprojected) parts.push('results over their cap went upstream verbatim (see above)');
  else if (t.stats)
    parts.push(
      `${formatInt(t.stats.originalTokens)} -> ${formatInt(t.stats.projectedTokens)} tokens, ${t.stats.reducedResults}/${t.stats.toolResults} results reduced`,
    );
  if (t.usage) {
    const u = t.usage;
    parts.push(
      `usage in ${u.inputTokens ?? '?'}${u.cachedTokens !== undefined ? ` (cached ${u.cachedTokens})` : ''} out ${u.outputTokens ?? '?'}`,
    );
  }
  return parts.join(', ');
}
