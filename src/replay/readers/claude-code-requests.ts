/**
 * The requests a Claude Code log records of itself. Since 2.1.332 Claude Code writes, beside its
 * conversation records, what it sent with each model call:
 *
 * - `api-request-shape`: the system prompt and tool definitions, once per distinct `shapeHash`;
 * - `api-request-blob`: a message the conversation records do not hold as sent (the first prompt
 *   with the reminders put in front of it, the `role: "system"` messages its attachments render to),
 *   under its hash;
 * - `api-request`: one per call, its messages as the first `keep` messages of an earlier request
 *   (`base`, its id) followed by the messages whose hashes `tail` lists, in order; a hash is a blob's
 *   or that of a `user` / `assistant` record's `{role, content}`. A message's hash is the SHA-256 of
 *   its JSON with every object's keys sorted (checked against the blobs of the real CLI's logs).
 *
 * The one part of a request the log leaves out is Claude Code's billing header, the first block of
 * its system prompt (`x-anthropic-billing-header: cc_version=…; cc_entrypoint=…;`, and
 * `cc_is_subagent=true;` in a sub-agent's). It is written back as Claude Code writes it for a base URL
 * other than Anthropic's own (`billingHeader`); to api.anthropic.com it adds request ids the log does
 * not keep, a few dozen characters the provider reads as billing data.
 *
 * From those, each call is rebuilt as sent. When every call's messages extend the previous call's
 * (no compaction rewrote the history), the session's items are the last call's messages and its
 * answer, each call ends where its messages end, and the system prompt and tools are the log's own
 * (the captured prelude is then not needed: src/replay/prelude.ts adds a field only where the base has
 * none). Otherwise `rebuild` says why and the reader replays the conversation records as before.
 */
import { createHash } from 'node:crypto';
import { isRecord, parseTime, type Json } from './wire';

/** The record types that describe requests (not conversation messages). */
export const REQUEST_RECORD_TYPES: ReadonlySet<string> = new Set(['api-request', 'api-request-blob', 'api-request-shape']);

interface Message {
  role: string;
  content: unknown;
}

interface RecordedRequest {
  id: string;
  /** the sub-agent whose request it is (absent: the main conversation's) */
  agentId?: string;
  base?: string;
  keep: number;
  tail: string[];
  shapeHash?: string;
  /** what made the call: `sdk` or `repl_main_thread` for the conversation, `agent:…` for a sub-agent, other names for side calls */
  source?: string;
  model?: string;
  /** the CLI's version */
  version?: string;
  at?: number;
}

/** One rebuilt session: its items, the end of each call in them (with its time), and the request fields around the messages. */
export interface RebuiltSession {
  items: Message[];
  /** per call, the number of items its request held, and when it was sent */
  calls: Array<{ end: number; at?: number }>;
  base: Record<string, unknown>;
  /** whether the log holds the last call's answer (the items end with it) */
  answered: boolean;
  notes: string[];
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (!isRecord(value)) return value;
  const out: Json = {};
  for (const key of Object.keys(value).sort()) out[key] = sortedKeys(value[key]);
  return out;
}

/** The salt of the fingerprint Claude Code puts in its billing header (2.1.332). */
const FINGERPRINT_SALT = '59cf53e54c78';

/**
 * Claude Code's billing header for a base URL other than Anthropic's (2.1.332): its version with a
 * fingerprint of the session's first prompt (three hex digits of a SHA-256 over a salt, the prompt's
 * characters 4, 7 and 20, and the version), how it was started, and whether a sub-agent sends it.
 */
export function billingHeader(version: string, entrypoint: string, firstPrompt: string, subAgent: boolean): string {
  const picked = [4, 7, 20].map((i) => firstPrompt[i] ?? '0').join('');
  const fingerprint = createHash('sha256').update(`${FINGERPRINT_SALT}${picked}${version}`).digest('hex').slice(0, 3);
  return `x-anthropic-billing-header: cc_version=${version}.${fingerprint}; cc_entrypoint=${entrypoint};${subAgent ? ' cc_is_subagent=true;' : ''}`;
}

/** The text Claude Code fingerprints: a message's string content, or its first text block's. */
function promptText(content: unknown): string {
  if (typeof content === 'string') return content;
  const block = Array.isArray(content) ? content.find((b) => isRecord(b) && b.type === 'text' && isString(b.text)) : undefined;
  return isRecord(block) && isString(block.text) ? block.text : '';
}

/** The hash Claude Code names a message by in its request records. */
export function messageHash(message: Message): string {
  return createHash('sha256')
    .update(JSON.stringify(sortedKeys({ role: message.role, content: message.content })))
    .digest('hex');
}

const isString = (v: unknown): v is string => typeof v === 'string';

export class RequestLog {
  private readonly shapes = new Map<string, Json>();
  private readonly blobs = new Map<string, Message>();
  private readonly requests: RecordedRequest[] = [];
  /** the conversation records' messages, in file order (hashed only if the log records requests) */
  private readonly records: Array<{ message: Message; agentId?: string; requestRef?: string; block?: number; meta: boolean }> = [];
  /** how the CLI was started, as its records say (`cli`, `sdk-cli`, …) */
  private entrypoint: string | undefined;

  /** Takes a request record; false when it is malformed (the reader counts it). */
  request(r: Json): boolean {
    if (r.type === 'api-request-shape') {
      if (!isString(r.shapeHash) || !isRecord(r.shape)) return false;
      this.shapes.set(r.shapeHash, r.shape);
      return true;
    }
    if (r.type === 'api-request-blob') {
      const m = r.message;
      if (!isString(r.hash) || !isRecord(m) || !isString(m.role) || !('content' in m)) return false;
      this.blobs.set(r.hash, { role: m.role, content: m.content });
      return true;
    }
    const keep = r.keep ?? 0;
    if (
      !isString(r.id) ||
      !Array.isArray(r.tail) ||
      !r.tail.every(isString) ||
      typeof keep !== 'number' ||
      !Number.isInteger(keep) ||
      keep < 0
    )
      return false;
    const params = isRecord(r.params) ? r.params : {};
    const at = parseTime(r.timestamp);
    this.requests.push({
      id: r.id,
      ...(isString(r.agentId) ? { agentId: r.agentId } : {}),
      ...(isString(r.base) ? { base: r.base } : {}),
      keep,
      tail: r.tail,
      ...(isString(r.shapeHash) ? { shapeHash: r.shapeHash } : {}),
      ...(isString(r.querySource) ? { source: r.querySource } : {}),
      ...(isString(params.model) ? { model: params.model } : {}),
      ...(isString(r.version) ? { version: r.version } : {}),
      ...(at !== undefined ? { at } : {}),
    });
    return true;
  }

  /** Takes a conversation record's message (hashed only when rebuilding). */
  conversation(r: Json): void {
    const m = r.message;
    if (!isRecord(m) || !isString(m.role) || !('content' in m)) return;
    if (this.entrypoint === undefined && isString(r.entrypoint)) this.entrypoint = r.entrypoint;
    this.records.push({
      message: { role: m.role, content: m.content },
      ...(isString(r.agentId) ? { agentId: r.agentId } : {}),
      ...(isString(r.requestRef) ? { requestRef: r.requestRef } : {}),
      ...(typeof r.apiBlockIndex === 'number' ? { block: r.apiBlockIndex } : {}),
      meta: r.isMeta === true,
    });
  }

  /** Whether the log recorded any request. */
  get recorded(): boolean {
    return this.requests.length > 0;
  }

  /**
   * The session's calls as sent: the main conversation's requests, or with `agentId` that
   * sub-agent's. A string says why they cannot be (the reader then replays the records).
   */
  rebuild(agentId: string | undefined): RebuiltSession | string {
    const ofAgent = this.requests.filter((r) => r.agentId === agentId);
    if (ofAgent.length === 0) return 'the log records no request of this conversation';
    // the conversation's own calls are the source that made the most; side calls (a title, a
    // summary) are requests of their own, not turns of the conversation
    const bySource = new Map<string | undefined, number>();
    for (const r of ofAgent) bySource.set(r.source, (bySource.get(r.source) ?? 0) + 1);
    const source = [...bySource].sort((a, b) => b[1] - a[1])[0]![0];
    const requests = ofAgent.filter((r) => r.source === source);
    const notes: string[] = [];
    if (requests.length < ofAgent.length)
      notes.push(`${ofAgent.length - requests.length} side request(s) (not \`${source ?? '(no source)'}\`) left out of the conversation`);
    const known = new Map(this.blobs);
    for (const { message } of this.records) known.set(messageHash(message), message);

    // each request's messages, as hashes
    const sent = new Map<string, string[]>();
    let previous: string[] = [];
    for (const [k, r] of requests.entries()) {
      const base = r.base === undefined ? [] : sent.get(r.base);
      if (base === undefined) return `request ${k + 1} continues request ${r.base}, which the log does not hold`;
      if (r.keep > base.length) return `request ${k + 1} keeps ${r.keep} messages of a request that has ${base.length}`;
      const missing = r.tail.find((h) => !known.has(h));
      if (missing !== undefined) return `request ${k + 1} names a message (${missing.slice(0, 12)}…) the log does not hold`;
      const hashes = [...base.slice(0, r.keep), ...r.tail];
      if (hashes.length < previous.length || previous.some((h, i) => hashes[i] !== h))
        return `request ${k + 1} does not extend the one before it (the history was rewritten, as a compaction does)`;
      sent.set(r.id, hashes);
      previous = hashes;
    }

    const last = requests.at(-1)!;
    const items = previous.map((h) => known.get(h)!);
    // the last call's answer: its records (one per content block), in block order
    const blocks = this.records.filter((x) => x.requestRef === last.id && x.message.role === 'assistant');
    const answered = blocks.length > 0;
    if (answered) {
      const content = blocks
        .sort((a, b) => (a.block ?? 0) - (b.block ?? 0))
        .flatMap((x) => (Array.isArray(x.message.content) ? x.message.content : [{ type: 'text', text: x.message.content }]));
      items.push({ role: 'assistant', content });
    }

    // one call per distinct end (a retried request sends the same messages again); that each is
    // answered by the message after its own, the reader checks against the answers (claude-code.ts)
    const calls: Array<{ end: number; at?: number }> = [];
    for (const r of requests) {
      const end = sent.get(r.id)!.length;
      const at = r.at !== undefined ? { at: r.at } : {};
      if (calls.at(-1)?.end === end) calls[calls.length - 1] = { end, ...at };
      else calls.push({ end, ...at });
    }

    const base: Record<string, unknown> = {};
    const model = last.model;
    if (model !== undefined) base.model = model;
    const counts = new Map<string, number>();
    for (const r of requests) if (r.shapeHash !== undefined) counts.set(r.shapeHash, (counts.get(r.shapeHash) ?? 0) + 1);
    const [shapeHash, used] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [];
    const shape = shapeHash === undefined ? undefined : this.shapes.get(shapeHash);
    if (shape) {
      for (const [key, value] of Object.entries(shape)) base[key] = value;
      const header = this.header(last.version, agentId);
      if (header !== undefined && Array.isArray(base.system)) base.system = [{ type: 'text', text: header }, ...(base.system as unknown[])];
      else if (header !== undefined && isString(base.system))
        base.system = [
          { type: 'text', text: header },
          { type: 'text', text: base.system },
        ];
      if (counts.size > 1)
        notes.push(
          `${counts.size} request shapes (system prompt and tools) in the log: every call replayed with the one ${used} of ${requests.length} calls were sent with`,
        );
    } else notes.push('the log names no request shape it holds: the system prompt and tools are not in it');
    return { items, calls, base, answered, notes };
  }

  /** The billing header of the conversation's requests (`billingHeader`), when the log says enough to write it. */
  private header(version: string | undefined, agentId: string | undefined): string | undefined {
    const first = this.records.find((x) => x.agentId === agentId && x.message.role === 'user' && !x.meta);
    if (version === undefined || this.entrypoint === undefined || first === undefined) return undefined;
    return billingHeader(version, this.entrypoint, promptText(first.message.content), agentId !== undefined);
  }
}
