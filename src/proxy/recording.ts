/**
 * Recordings: every model call that passes through the proxy becomes a turn in a session file, so
 * the inspector can show, turn by turn, what the agent sent and what the model was sent.
 *
 * Layout (the folder defaults to `<store>/../sessions`; the extension puts it in workspace storage):
 *   <dir>/<session>.jsonl             one JSON line per turn, append-only
 *   <dir>/bodies/<hh>/<handle>.txt    the request bodies, content-addressed (hh: the handle's first
 *                                     two hex digits), named by the same kind of handle as outputs
 * A turn names its bodies by handle (`requestRef`, `projectionRef`), so the lines stay small and a
 * body sent unchanged is stored once (its projection has the same handle). Bodies live apart from
 * the output store so that the store's size limit and listings only ever concern tool outputs.
 *
 * Bodies are hashed and written off the event loop (WebCrypto's digest and fs.promises run on
 * libuv's thread pool): a 10 MB request costs the proxy's thread almost nothing to record, so
 * recording never delays the streams it relays.
 *
 * Crash safety: a body is written to a temp file and renamed into place, before the line that names
 * it. Each turn is one `appendFileSync` of one line. A crash can leave a partial last line;
 * `readSession` skips any line that does not parse, and the next append after a restart starts on a
 * fresh line.
 *
 * Secrets: a turn holds only fields listed in `Turn` and request headers from an allow-list that
 * cannot carry credentials (see `RECORDED_REQUEST_HEADERS`); request bodies hold no headers.
 */
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import {
  CLEAR_HOLDS,
  handleFromDigest,
  isHandle,
  SpillwayError,
  type HeldGroup,
  type InputReduction,
  type ProjectionStats,
  type Reduction,
  type WireFormat,
} from '../engine';
import type { TurnUsage } from './usage';
import { mkdirPrivate, mkdirPrivateAsync, PRIVATE_FILE_MODE } from '../store/private';

export const TURN_VERSION = 1;
export const SESSION_SUFFIX = '.jsonl';
export const BODIES_DIR = 'bodies';

/** One model call, as recorded. */
export interface Turn {
  v: 1;
  session: string;
  /** 1-based, in the order the calls reached the proxy */
  turn: number;
  /** when the call reached the proxy (ISO 8601) */
  time: string;
  /** the client's path, without the query */
  path: string;
  format: WireFormat;
  model?: string;
  /** request body sizes in UTF-8 bytes, as sent by the agent and as forwarded */
  originalBytes: number;
  projectedBytes: number;
  /** the engine's token counts (absent when the call failed open) */
  originalTokens?: number;
  projectedTokens?: number;
  reductions: Reduction[];
  /**
   * tool call inputs the projection replaced by a marker (file-writing calls, heredoc bodies), in
   * force in this call, each `fresh` when this call decided it; absent in recordings made before
   * they were recorded, and when none was replaced
   */
  inputs?: InputReduction[];
  stats?: ProjectionStats;
  /** as the provider reported it in the response */
  usage?: TurnUsage;
  /** the upstream's HTTP status; 0 when no response came */
  status: number;
  /** from the call reaching the proxy to the response's last byte */
  durationMs: number;
  /** why the original bytes were forwarded unchanged */
  failOpen?: string;
  /** how the exchange broke off: client aborted, upstream unreachable or reset */
  error?: string;
  /** an error status's message as the upstream wrote it (`error.message` of its JSON body), bounded */
  upstreamMessage?: string;
  /** handles of the request as sent and as forwarded, in `<dir>/bodies` (absent when not kept) */
  requestRef?: string;
  projectionRef?: string;
  /** allow-listed request headers (never credentials) */
  headers?: Record<string, string>;
  /** `websocket` for a `response.create` message of the Responses WebSocket mode (absent: HTTP) */
  transport?: 'websocket';
  /** WebSocket turns: the response this call continues (its items live upstream, unchanged) and its own */
  previousResponseId?: string;
  responseId?: string;
  /** results over their cap that went upstream verbatim because no stage could act on them, and why */
  unprojected?: string;
  /**
   * Observe mode: the request went upstream byte for byte, and the projection figures of this turn
   * (`projectedBytes`, `projectedTokens`, `stats`, `reductions`, `projectionRef`) are what Spillway
   * would have sent.
   */
  observed?: true;
  /** read-back rounds the proxy answered itself within this call (`--answer-reads`), each one more paid model call */
  readRounds?: number;
  /**
   * the results the request sent whole, grouped by why the clear stage left them so (Projection.held);
   * absent when the clear stage did not run, the call failed open, or it was recorded before they were
   */
  held?: HeldGroup[];
}

/** Bytes of an error response kept to read its message from: providers' error bodies are a few hundred bytes. */
export const MAX_ERROR_BODY_BYTES = 8 * 1024;
/** Longest upstream message recorded: enough for any provider's sentence, never a whole page. */
const MAX_UPSTREAM_MESSAGE_CHARS = 500;

/**
 * The message of an upstream's error response, as the inspector shows it: `error.message` (and
 * `error.type`) of a JSON body (Anthropic's and OpenAI's shapes), else the body's first line of text.
 * Undefined for a compressed or empty body. Bounded, single-line.
 */
export function upstreamErrorMessage(body: Buffer, contentEncoding?: string): string | undefined {
  if (contentEncoding && contentEncoding !== 'identity') return undefined;
  const text = body.subarray(0, MAX_ERROR_BODY_BYTES).toString('utf8').trim();
  if (!text) return undefined;
  let message: string | undefined;
  try {
    const v = JSON.parse(text) as { error?: unknown; message?: unknown };
    const e = v.error;
    if (e && typeof e === 'object') {
      const o = e as { message?: unknown; type?: unknown };
      const m = typeof o.message === 'string' ? o.message : undefined;
      const type = typeof o.type === 'string' ? o.type : undefined;
      message = [type, m].filter(Boolean).join(': ') || undefined;
    } else if (typeof e === 'string') message = e;
    else if (typeof v.message === 'string') message = v.message;
  } catch {
    message = text.split('\n')[0];
  }
  if (!message) return undefined;
  const line = message.replace(/\s+/g, ' ').trim();
  return line.length > MAX_UPSTREAM_MESSAGE_CHARS ? `${line.slice(0, MAX_UPSTREAM_MESSAGE_CHARS - 1)}…` : line;
}

export interface SessionInfo {
  session: string;
  file: string;
  bytes: number;
  modified: string;
}

export interface RecorderOptions {
  /** keep request and projection bodies (default true) */
  bodies?: boolean;
}

export class Recorder {
  readonly dir: string;
  readonly keepsBodies: boolean;
  private readonly turns = new Map<string, number>();
  private readonly opened = new Set<string>();

  constructor(dir: string, options: RecorderOptions = {}) {
    this.dir = path.resolve(dir);
    this.keepsBodies = options.bodies ?? true;
  }

  sessionFile(session: string): string {
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(session)) throw new Error(`internal: unsafe session id ${JSON.stringify(session)}`);
    return path.join(this.dir, session + SESSION_SUFFIX);
  }

  /** The next turn number of a session, continuing a file left by an earlier run. */
  nextTurn(session: string): number {
    let n = this.turns.get(session);
    if (n === undefined) {
      n = 0;
      try {
        n = readSession(this.sessionFile(session)).reduce((m, t) => Math.max(m, t.turn), 0);
      } catch {
        /* no file yet */
      }
    }
    this.turns.set(session, n + 1);
    return n + 1;
  }

  /** Stores a body (its UTF-8 bytes) and resolves with its handle; undefined when bodies are not kept. */
  async putBody(bytes: Buffer): Promise<string | undefined> {
    if (!this.keepsBodies) return undefined;
    const digest = Buffer.from(await webcrypto.subtle.digest('SHA-256', bytes)).toString('hex');
    const handle = handleFromDigest(digest);
    const file = bodyPath(this.dir, handle);
    const size = await fs.promises.stat(file).then(
      (st) => st.size,
      () => -1,
    );
    if (size === bytes.length) {
      // stored already: mark it used now, so pruning by age keeps what recent turns name
      const now = new Date();
      await fs.promises.utimes(file, now, now).catch(() => {});
      return handle;
    }
    await mkdirPrivateAsync(path.dirname(file));
    const temp = path.join(path.dirname(file), `.${handle}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await fs.promises.writeFile(temp, bytes, { flag: 'wx', mode: PRIVATE_FILE_MODE });
      await fs.promises.rename(temp, file);
    } catch (e) {
      await fs.promises.rm(temp, { force: true });
      throw e;
    }
    return handle;
  }

  /** A stored body by handle. */
  body(ref: string): string {
    return readBody(this.dir, ref);
  }

  append(turn: Turn): void {
    const file = this.sessionFile(turn.session);
    mkdirPrivate(this.dir);
    let prefix = '';
    if (!this.opened.has(file)) {
      this.opened.add(file);
      // a crash mid-append left a partial line: start on a fresh one so this turn stays readable
      if (!endsWithNewline(file)) prefix = '\n';
    }
    fs.appendFileSync(file, prefix + JSON.stringify(turn) + '\n', { mode: PRIVATE_FILE_MODE });
  }
}

function endsWithNewline(file: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return true;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size === 0) return true;
    const b = Buffer.alloc(1);
    fs.readSync(fd, b, 0, 1, size - 1);
    return b[0] === 10;
  } finally {
    fs.closeSync(fd);
  }
}

const count = z.number().nonnegative();
/** One recorded input replacement, as `Turn.inputs` holds it (checked when read back: the file is on disk, anyone may edit it). */
const RecordedInput = z.object({
  callId: z.string(),
  tool: z.string(),
  item: z.number().int().nonnegative(),
  // recordings made before inputs a clear replaced were listed hold only those replaced on arrival
  by: z.enum(['arrival', 'clear']).default('arrival'),
  reason: z.string(),
  originalChars: count,
  projectedChars: count,
  originalTokens: count,
  projectedTokens: count,
  handle: z.string().refine(isHandle, 'not a handle'),
  fresh: z.boolean(),
});
const RecordedInputs = z.array(RecordedInput);
/** One group of results sent whole for one reason, as `Turn.held` holds it. */
const RecordedHeld = z.object({ reason: z.enum(CLEAR_HOLDS), results: z.number().int().positive(), tokens: count });

/**
 * A recorded list of input replacements (a proxy turn's `inputs`, an inspector archive's), or
 * undefined when it is absent or does not hold valid ones: a damaged list is dropped, not the turn.
 */
export function recordedInputs(v: unknown): InputReduction[] | undefined {
  if (v === undefined) return undefined;
  const r = RecordedInputs.safeParse(v);
  return r.success ? r.data : undefined;
}

/**
 * A recorded list of groups of results sent whole (a proxy turn's `held`, an inspector archive's):
 * the valid groups, a damaged one dropped alone; undefined when it is absent or holds none.
 */
export function recordedHeld(v: unknown): HeldGroup[] | undefined {
  if (!Array.isArray(v)) return undefined;
  const groups = v.flatMap((g) => {
    const r = RecordedHeld.safeParse(g);
    return r.success ? [r.data] : [];
  });
  return groups.length ? groups : undefined;
}

function isTurn(v: unknown): v is Turn {
  if (typeof v !== 'object' || v === null) return false;
  const t = v as Partial<Turn>;
  return t.v === TURN_VERSION && typeof t.session === 'string' && typeof t.turn === 'number' && typeof t.path === 'string';
}

/**
 * The turns of a session file, in file order. Lines that do not parse (the partial last line of a
 * crash mid-write) or are not turns of this version are skipped. Throws when the file cannot be read.
 */
export function readSession(file: string): Turn[] {
  const text = fs.readFileSync(file, 'utf8');
  const turns: Turn[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v: unknown = JSON.parse(line);
      if (!isTurn(v)) continue;
      // inputs and held came later than the other fields: older lines have none, and damage is dropped
      const inputs = recordedInputs(v.inputs);
      const held = recordedHeld(v.held);
      delete v.inputs;
      delete v.held;
      turns.push({ ...v, ...(inputs ? { inputs } : {}), ...(held ? { held } : {}) });
    } catch {
      /* truncated or damaged line */
    }
  }
  return turns;
}

/** The session files in `dir`, most recently written first; an absent folder has none. */
export function listSessions(dir: string): SessionInfo[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return [];
  }
  const out: SessionInfo[] = [];
  for (const name of names) {
    if (!name.endsWith(SESSION_SUFFIX) || name.startsWith('.')) continue;
    const file = path.join(dir, name);
    try {
      const st = fs.statSync(file);
      if (!st.isFile()) continue;
      out.push({ session: name.slice(0, -SESSION_SUFFIX.length), file, bytes: st.size, modified: st.mtime.toISOString() });
    } catch {
      /* removed meanwhile */
    }
  }
  return out.sort((a, b) => (a.modified < b.modified ? 1 : a.modified > b.modified ? -1 : a.session.localeCompare(b.session)));
}

function bodyPath(dir: string, handle: string): string {
  if (!isHandle(handle)) throw new SpillwayError(`${JSON.stringify(handle)} is not a body handle`, 'bad-handle');
  return path.join(dir, BODIES_DIR, handle.slice(3, 5), handle + '.txt');
}

/**
 * A body a turn names, read from a recordings folder and checked against its handle. Throws
 * 'bad-handle', 'not-found' (never stored, or pruned) or 'corrupt' (changed on disk).
 */
export function readBody(dir: string, ref: string): string {
  const file = bodyPath(dir, ref);
  let bytes: Buffer;
  try {
    bytes = fs.readFileSync(file);
  } catch {
    throw new SpillwayError(`no recorded body ${ref} in ${path.join(dir, BODIES_DIR)}`, 'not-found');
  }
  if (handleFromDigest(createHash('sha256').update(bytes).digest('hex')) !== ref) {
    throw new SpillwayError(`recorded body ${ref} (${file}) no longer matches its handle`, 'corrupt');
  }
  return bytes.toString('utf8');
}

/** The default recordings folder for a store folder: a sibling named `sessions`. */
export function defaultSessionsDir(storeDir: string): string {
  return path.join(path.dirname(path.resolve(storeDir)), 'sessions');
}

export interface PruneRecordingsOptions {
  /** remove session files and bodies not written or used for this many days */
  maxAgeDays?: number;
  /** then remove the least recently used bodies until they take at most this many bytes */
  maxBodyBytes?: number;
  /** the time to measure age against (tests) */
  now?: Date;
}

export interface PruneRecordingsResult {
  sessions: number;
  bodies: number;
  freedBytes: number;
}

/**
 * Keeps a recordings folder bounded: every turn stores its whole request, so a long session costs
 * disk quadratic in its length. Session files and bodies are aged by modification time (a body is
 * touched whenever a turn names it again); a turn whose body was pruned still reads, only
 * `readBody` for it answers 'not-found'.
 */
export function pruneRecordings(dir: string, options: PruneRecordingsOptions = {}): PruneRecordingsResult {
  const now = (options.now ?? new Date()).getTime();
  const cutoff = options.maxAgeDays !== undefined ? now - options.maxAgeDays * 24 * 3600 * 1000 : -Infinity;
  const result: PruneRecordingsResult = { sessions: 0, bodies: 0, freedBytes: 0 };
  const remove = (file: string, size: number) => {
    try {
      fs.unlinkSync(file);
      result.freedBytes += size;
      return true;
    } catch {
      return false;
    }
  };
  for (const s of listSessions(dir)) {
    if (Date.parse(s.modified) < cutoff && remove(s.file, s.bytes)) result.sessions++;
  }
  const bodies: Array<{ file: string; size: number; used: number }> = [];
  const root = path.join(dir, BODIES_DIR);
  let shards: string[] = [];
  try {
    shards = fs.readdirSync(root);
  } catch {
    /* none */
  }
  for (const shard of shards) {
    if (!/^[0-9a-f]{2}$/.test(shard)) continue;
    let names: string[];
    try {
      names = fs.readdirSync(path.join(root, shard));
    } catch {
      continue;
    }
    for (const name of names) {
      const file = path.join(root, shard, name);
      try {
        const st = fs.statSync(file);
        // temp files of interrupted writes go once they are a day old
        if (name.endsWith('.tmp')) {
          if (now - st.mtimeMs > 24 * 3600 * 1000) remove(file, st.size);
          continue;
        }
        if (!name.endsWith('.txt')) continue;
        bodies.push({ file, size: st.size, used: st.mtimeMs });
      } catch {
        /* removed meanwhile */
      }
    }
  }
  bodies.sort((a, b) => a.used - b.used);
  let total = bodies.reduce((n, b) => n + b.size, 0);
  for (const b of bodies) {
    const old = b.used < cutoff;
    const over = options.maxBodyBytes !== undefined && total > options.maxBodyBytes;
    if (!old && !over) continue;
    if (remove(b.file, b.size)) {
      result.bodies++;
      total -= b.size;
    }
  }
  return result;
}
