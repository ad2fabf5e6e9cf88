/**
 * `--answer-reads`: the proxy answers the model's read-backs itself, for agents with neither a shell
 * nor MCP (most agents built on the providers' SDKs), which otherwise have no way back to what a
 * marker hides.
 *
 * server.ts adds the read tool to the request before the engine projects it (readLoop.ts), so the
 * markers can name it; this module sends the projection and reads the whole answer before the
 * client sees any of it: an answer whose tool calls are all read-backs is answered from the store
 * and the model is asked again (bounded rounds), within the one client request; the answer that ends
 * the loop goes to the client with the usage of every round summed into its usage fields, so what
 * the agent's SDK reports is what the call cost. The client therefore receives a stream only once
 * its round is over: answer-reads trades time to first token for a read-back the agent could not
 * make at all.
 *
 * A final answer that mixes read-backs with the agent's own calls goes to the client without the
 * read-backs (JSON and server-sent events alike, indices renumbered): the agent runs its own calls,
 * never sees a call to a tool it does not have, and the model, still offered the tool, can read on
 * the next request. The last round allowed is handed on as it is.
 *
 * The caller (server.ts) fails open: anything this module throws before the client got a byte
 * sends the agent's original request upstream, as plain forwarding would.
 */
import * as http from 'node:http';
import * as https from 'node:https';
import * as zlib from 'node:zlib';
import type { WireFormat } from '../engine/types';
import { LINE_BREAK } from '../engine/lines';
import { READ_TOOL, runReadLoop, type Reader, type RoundOutput, type ToolCall } from './readLoop';
import { responseHeaders, type OutgoingHeaders } from './routes';
import { SseParser, StreamDecoder, type StreamApi } from './streams';
import { mergeUsage, type TurnUsage } from './usage';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** One upstream answer, read whole. */
interface Buffered {
  status: number;
  statusMessage?: string;
  rawHeaders: string[];
  body: Buffer;
}

interface Round extends RoundOutput {
  answer: Buffered;
  sse: boolean;
  /** the round's usage as the provider reported it (raw fields, later events overriding earlier ones) */
  rawUsage: Json;
}

export interface AnswerReadsExchange {
  format: WireFormat;
  /** the request as it goes upstream: projected, the read tool already in it (server.ts adds it before projecting) */
  body: string;
  target: URL;
  method: string;
  /** request headers to send upstream, without framing (content-length) */
  headers: OutgoingHeaders;
  agent: http.Agent;
  signal: AbortSignal;
  read: Reader;
  maxRounds?: number;
  log: (line: string) => void;
}

export interface AnswerReadsResult {
  status: number;
  rawHeaders: string[];
  statusMessage?: string;
  body: Buffer;
  /** rounds sent upstream (1 when the model read nothing back) */
  rounds: number;
  /** read-back calls answered here */
  reads: number;
  /** read-back calls removed from an answer that mixed them with the agent's own */
  stripped: number;
  usage?: TurnUsage;
}

/** The stream each format answers with; the Gemini API's is not read here (readLoop.ts never adds the tool to it). */
const STREAM_API: Record<WireFormat, StreamApi | undefined> = {
  'openai-chat': 'openai-chat',
  'openai-responses': 'openai-responses',
  'anthropic-messages': 'anthropic',
  gemini: undefined,
};

/** Runs the loop for one client request, whose body (projected, the read tool in it) is `x.body`. */
export async function answerReads(x: AnswerReadsExchange): Promise<AnswerReadsResult> {
  const body: unknown = JSON.parse(x.body);
  if (!isObj(body)) throw new Error('the projected request is not a JSON object');
  let reads = 0;
  const rounds = await runReadLoop<Round>({
    format: x.format,
    body,
    read: x.read,
    maxRounds: x.maxRounds,
    send: async (b) => parseRound(x.format, await post(x, JSON.stringify(b))),
    onAnswered: (round, answers) => {
      reads += answers.length;
      const errors = answers.filter((a) => a.isError).length;
      x.log(
        `proxy: answered ${answers.length} ${READ_TOOL} call(s) from the store (round ${round + 1}${errors ? `, ${errors} as tool errors` : ''})`,
      );
    },
  });
  const last = rounds[rounds.length - 1]!;
  let out = last.answer.body;
  let stripped = 0;
  if (last.answer.status < 300 && last.calls.some((c) => c.name === READ_TOOL) && last.calls.some((c) => c.name !== READ_TOOL)) {
    stripped = last.calls.filter((c) => c.name === READ_TOOL).length;
    out = stripReadCalls(x.format, out, last.sse);
    x.log(`proxy: the model mixed ${stripped} ${READ_TOOL} call(s) with the agent's own calls: handed the agent only its own`);
  }
  if (rounds.length > 1 && last.answer.status < 300)
    out = addUsage(
      out,
      last.sse,
      rounds.slice(0, -1).map((r) => r.rawUsage),
    );
  const usage = sumUsage(rounds);
  return {
    status: last.answer.status,
    rawHeaders: last.answer.rawHeaders,
    ...(last.answer.statusMessage ? { statusMessage: last.answer.statusMessage } : {}),
    body: out,
    rounds: rounds.length,
    reads,
    stripped,
    ...(usage ? { usage } : {}),
  };
}

/** Writes the result to the client: the upstream's status and headers, framing recomputed. */
export function sendResult(res: http.ServerResponse, r: AnswerReadsResult): void {
  const headers: string[] = [];
  const raw = responseHeaders(r.rawHeaders);
  for (let i = 0; i < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (lower !== 'content-length' && lower !== 'content-encoding' && lower !== 'transfer-encoding') headers.push(raw[i]!, raw[i + 1]!);
  }
  headers.push('content-length', String(r.body.length));
  res.writeHead(r.status, r.statusMessage, headers);
  res.end(r.body);
}

/** Sends one round upstream and reads the whole answer (uncompressed: the loop must read it). */
function post(x: AnswerReadsExchange, text: string): Promise<Buffered> {
  const bytes = Buffer.from(text, 'utf8');
  const headers: OutgoingHeaders = {};
  // the body goes as plain UTF-8, and the answer must come back plain for the loop to read it
  const framing = new Set(['accept-encoding', 'content-encoding', 'content-length']);
  for (const [k, v] of Object.entries(x.headers)) if (!framing.has(k.toLowerCase())) headers[k] = v;
  headers['accept-encoding'] = 'identity';
  headers['content-length'] = String(bytes.length);
  const mod = x.target.protocol === 'https:' ? https : http;
  return new Promise<Buffered>((resolve, reject) => {
    const req = mod.request(x.target, { method: x.method, headers, agent: x.agent, signal: x.signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        try {
          resolve({
            status: res.statusCode ?? 502,
            ...(res.statusMessage ? { statusMessage: res.statusMessage } : {}),
            rawHeaders: res.rawHeaders,
            // an upstream that compresses although asked not to: the client gets the answer decoded (sendResult drops the header)
            body: decode(Buffer.concat(chunks), headerOf(res.rawHeaders, 'content-encoding')),
          });
        } catch (e) {
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      });
    });
    req.on('error', reject);
    req.end(bytes);
  });
}

/** Reads a round's answer: text, tool calls, the output verbatim, usage. An answer it cannot read ends the loop as is. */
function parseRound(format: WireFormat, answer: Buffered): Round {
  const sse = /text\/event-stream/i.test(headerOf(answer.rawHeaders, 'content-type') ?? '');
  const none: Round = { answer, sse, text: '', calls: [], rawUsage: {} };
  if (answer.status >= 300) return none;
  const text = answer.body.toString('utf8');
  if (sse) return { ...parseStream(format, text), answer, sse };
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return none;
  }
  if (!isObj(v)) return none;
  return { ...parseJson(format, v), answer, sse, rawUsage: isObj(v.usage) ? v.usage : {} };
}

function parseJson(format: WireFormat, v: Json): RoundOutput {
  if (format === 'openai-chat') {
    const message = Array.isArray(v.choices) && isObj(v.choices[0]) && isObj(v.choices[0].message) ? v.choices[0].message : undefined;
    if (!message) return { text: '', calls: [] };
    const calls: ToolCall[] = (Array.isArray(message.tool_calls) ? message.tool_calls : []).filter(isObj).map((c) => {
      const fn = isObj(c.function) ? c.function : {};
      return { callId: String(c.id ?? ''), name: String(fn.name ?? ''), input: parseArguments(fn.arguments) };
    });
    return { text: typeof message.content === 'string' ? message.content : '', calls, items: [message] };
  }
  if (format === 'openai-responses') {
    const output = (Array.isArray(v.output) ? v.output : []).filter(isObj);
    const calls = output
      .filter((i) => i.type === 'function_call')
      .map((i) => ({ callId: String(i.call_id ?? i.id ?? ''), name: String(i.name ?? ''), input: parseArguments(i.arguments) }));
    return { text: '', calls, items: output };
  }
  const content = (Array.isArray(v.content) ? v.content : []).filter(isObj);
  const calls = content
    .filter((b) => b.type === 'tool_use')
    .map((b) => ({ callId: String(b.id ?? ''), name: String(b.name ?? ''), input: b.input }));
  return { text: content.map((b) => (b.type === 'text' && typeof b.text === 'string' ? b.text : '')).join(''), calls, items: content };
}

function parseArguments(a: unknown): unknown {
  if (typeof a !== 'string') return a ?? {};
  try {
    return a.trim() === '' ? {} : JSON.parse(a);
  } catch {
    return { _unparsedArguments: a };
  }
}

/** A streamed answer: the shared decoder for text and calls; the output items rebuilt where the format allows. */
function parseStream(format: WireFormat, text: string): Omit<Round, 'answer' | 'sse'> {
  const api = STREAM_API[format];
  if (!api) throw new Error(`answer-reads does not read ${format} streams`);
  const decoder = new StreamDecoder(api);
  const events = [...decoder.push(text), ...decoder.end()];
  const calls: ToolCall[] = [];
  let said = '';
  for (const e of events) {
    if (e.type === 'text') said += e.text;
    else if (e.type === 'toolCall') calls.push({ callId: e.callId, name: e.name, input: e.input });
  }
  const rawUsage: Json = {};
  const responsesItems: unknown[] = [];
  const blocks: Json[] = [];
  const parser = new SseParser();
  for (const r of [...parser.push(text), ...parser.end()]) {
    let v: unknown;
    try {
      v = JSON.parse(r.data);
    } catch {
      continue;
    }
    if (!isObj(v)) continue;
    for (const u of usageObjects(v)) Object.assign(rawUsage, u);
    if (format === 'openai-responses' && v.type === 'response.output_item.done' && isObj(v.item)) responsesItems.push(v.item);
    if (format === 'anthropic-messages') collectBlock(v, blocks);
  }
  const items = format === 'openai-responses' ? responsesItems : format === 'anthropic-messages' ? blocks.filter(Boolean) : undefined;
  return { text: said, calls, rawUsage, ...(items ? { items } : {}) };
}

/** Rebuilds Anthropic content blocks from stream events, thinking signatures included (they must go back with a tool round). */
function collectBlock(v: Json, blocks: Json[]): void {
  const i = typeof v.index === 'number' ? v.index : -1;
  if (v.type === 'content_block_start' && isObj(v.content_block)) blocks[i] = { ...v.content_block, _json: '' };
  const b = blocks[i];
  if (!b) return;
  if (v.type === 'content_block_delta' && isObj(v.delta)) {
    const d = v.delta;
    if (d.type === 'text_delta') b.text = String(b.text ?? '') + String(d.text ?? '');
    else if (d.type === 'thinking_delta') b.thinking = String(b.thinking ?? '') + String(d.thinking ?? '');
    else if (d.type === 'signature_delta') b.signature = String(b.signature ?? '') + String(d.signature ?? '');
    else if (d.type === 'input_json_delta') b._json = String(b._json) + String(d.partial_json ?? '');
  } else if (v.type === 'content_block_stop') {
    const json = String(b._json);
    delete b._json;
    if (b.type === 'tool_use' && json) b.input = parseArguments(json);
  }
}

function usageObjects(v: Json): Json[] {
  const out: Json[] = [];
  if (isObj(v.usage)) out.push(v.usage);
  if (isObj(v.response) && isObj(v.response.usage)) out.push(v.response.usage);
  if (isObj(v.message) && isObj(v.message.usage)) out.push(v.message.usage);
  return out;
}

/** Adds each earlier round's usage to every numeric usage field the final answer has (nested details too). */
function addInto(target: Json, extra: Json): void {
  for (const [k, v] of Object.entries(extra)) {
    const t = target[k];
    if (typeof v === 'number' && typeof t === 'number') target[k] = t + v;
    else if (isObj(v) && isObj(t)) addInto(t, v);
  }
}

function addUsage(bytes: Buffer, sse: boolean, prior: readonly Json[]): Buffer {
  const add = (v: Json): boolean => {
    const targets = usageObjects(v);
    for (const t of targets) for (const p of prior) addInto(t, p);
    return targets.length > 0;
  };
  if (!sse) {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    return isObj(v) && add(v) ? Buffer.from(JSON.stringify(v), 'utf8') : bytes;
  }
  return rewriteEvents(bytes, (v) => (add(v) ? v : undefined));
}

/** The usage of all rounds, as the recording keeps it. */
function sumUsage(rounds: readonly Round[]): TurnUsage | undefined {
  const total: TurnUsage = {};
  let any = false;
  for (const r of rounds) {
    const u: TurnUsage = {};
    mergeUsage(u, r.rawUsage);
    for (const [k, n] of Object.entries(u) as [keyof TurnUsage, number][]) {
      total[k] = (total[k] ?? 0) + n;
      any = true;
    }
  }
  return any ? total : undefined;
}

/**
 * Rewrites a server-sent event stream event by event: `edit` returns the event's new data, `null`
 * to drop it, or undefined to keep its bytes as they were.
 */
function rewriteEvents(bytes: Buffer, edit: (v: Json) => Json | null | undefined): Buffer {
  const text = bytes.toString('utf8');
  const parts = text.split(/(\r?\n\r?\n)/);
  let out = '';
  for (let i = 0; i < parts.length; i += 2) {
    const block = parts[i]!;
    const sep = parts[i + 1] ?? '';
    const lines = block.split(/\r?\n/);
    const data = lines.filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, ''));
    let v: unknown;
    try {
      v = data.length ? JSON.parse(data.join(LINE_BREAK)) : undefined;
    } catch {
      v = undefined;
    }
    const next = isObj(v) ? edit(v) : undefined;
    if (next === null) continue;
    if (next === undefined) out += block + sep;
    else out += [...lines.filter((l) => !l.startsWith('data:')), `data: ${JSON.stringify(next)}`].join(LINE_BREAK) + sep;
  }
  return Buffer.from(out, 'utf8');
}

/** The answer without its read-back calls, indices of the calls that stay renumbered. */
function stripReadCalls(format: WireFormat, bytes: Buffer, sse: boolean): Buffer {
  const isRead = (name: unknown) => name === READ_TOOL;
  if (!sse) {
    const v: unknown = JSON.parse(bytes.toString('utf8'));
    if (!isObj(v)) return bytes;
    if (format === 'openai-chat' && Array.isArray(v.choices))
      for (const c of v.choices)
        if (isObj(c) && isObj(c.message) && Array.isArray(c.message.tool_calls))
          c.message.tool_calls = c.message.tool_calls.filter((t) => !(isObj(t) && isObj(t.function) && isRead(t.function.name)));
    if (format === 'openai-responses' && Array.isArray(v.output))
      v.output = v.output.filter((i) => !(isObj(i) && i.type === 'function_call' && isRead(i.name)));
    if (format === 'anthropic-messages' && Array.isArray(v.content))
      v.content = v.content.filter((b) => !(isObj(b) && b.type === 'tool_use' && isRead(b.name)));
    return Buffer.from(JSON.stringify(v), 'utf8');
  }
  const dropped = new Set<number>();
  const renumber = (i: number) => i - [...dropped].filter((d) => d < i).length;
  return rewriteEvents(bytes, (v) => {
    if (format === 'openai-chat') {
      const choice = Array.isArray(v.choices) && isObj(v.choices[0]) ? v.choices[0] : undefined;
      const calls = choice && isObj(choice.delta) && Array.isArray(choice.delta.tool_calls) ? choice.delta.tool_calls : undefined;
      if (!calls) return undefined;
      const kept: unknown[] = [];
      for (const c of calls) {
        if (!isObj(c) || typeof c.index !== 'number') continue;
        if (isObj(c.function) && isRead(c.function.name)) dropped.add(c.index);
        if (!dropped.has(c.index)) kept.push({ ...c, index: renumber(c.index) });
      }
      (choice!.delta as Json).tool_calls = kept;
      if (!kept.length) delete (choice!.delta as Json).tool_calls;
      return v;
    }
    if (format === 'openai-responses') {
      if (isObj(v.item) && v.item.type === 'function_call' && isRead(v.item.name) && typeof v.output_index === 'number')
        dropped.add(v.output_index);
      if (isObj(v.response) && Array.isArray(v.response.output))
        v.response.output = v.response.output.filter((i) => !(isObj(i) && i.type === 'function_call' && isRead(i.name)));
      if (typeof v.output_index !== 'number') return isObj(v.response) ? v : undefined;
      if (dropped.has(v.output_index)) return null;
      return { ...v, output_index: renumber(v.output_index) };
    }
    if (v.type === 'content_block_start' && isObj(v.content_block) && v.content_block.type === 'tool_use' && isRead(v.content_block.name))
      dropped.add(v.index as number);
    if (typeof v.index !== 'number') return undefined;
    if (dropped.has(v.index)) return null;
    return { ...v, index: renumber(v.index) };
  });
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  const e = encoding?.trim().toLowerCase();
  if (!e || e === 'identity') return body;
  if (e === 'gzip' || e === 'x-gzip') return zlib.gunzipSync(body);
  if (e === 'br') return zlib.brotliDecompressSync(body);
  if (e === 'deflate') return zlib.inflateSync(body);
  throw new Error(`the upstream answered in an encoding the proxy cannot read (${e})`);
}

function headerOf(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) return raw[i + 1];
  return undefined;
}
