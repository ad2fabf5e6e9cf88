/**
 * Claude Code session logs (`~/.claude/projects/<project>/<session>.jsonl`) as Anthropic Messages.
 *
 * Claude Code writes one line per content block as the response streams in, so one API message is
 * spread over several `type:"assistant"` lines sharing `message.id`; they are merged back into one
 * message. Tool results arrive as `type:"user"` lines with `tool_result` blocks; consecutive user
 * lines are merged so roles alternate, as the API requires. The copy of each output in
 * `toolUseResult` is ignored (the model never saw it). Sub-agent (`isSidechain`) records, meta
 * records (system, summary, snapshots) and synthetic assistant lines are skipped and counted; in a
 * sub-agent's own log (`agent-*.jsonl`, or any file whose user/assistant records are all sidechain
 * records, e.g. `<session>/subagents/*.jsonl`) the sidechain records are the session and are read.
 *
 * Call k is everything before assistant message k; its reply is that message's text and tool
 * inputs; its time (`at`) is the `timestamp` of the last record of its request (the tool result or
 * user message it answers), absent when that record has no valid one. Thinking blocks stay in the
 * items untouched. A `compact_boundary` record is where Claude Code summarised its history: the
 * replay keeps the full history, and the transcript lists the compaction (`compactions`).
 *
 * Since 2.1.332 the log also records every request as sent (./claude-code-requests.ts): its system
 * prompt and tools, and the messages Claude Code adds to the conversation's (reminders, listings and
 * notices rendered from `attachment` records, some as `role: "system"` messages). Such a log is
 * replayed from those records, each call exactly as sent and dated when it was sent; one whose
 * history was rewritten (a compaction) is read from its conversation records as above.
 */
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import { RequestLog, REQUEST_RECORD_TYPES } from './claude-code-requests';
import { forEachRecord, type StreamOptions } from './lines';
import { SkipLog, preview } from './skip-log';
import type { Transcript, TranscriptCompaction } from './types';
import { callsBefore, computeCalls, isRecord, parseTime, type Json } from './wire';

/** Record types Claude Code writes that are not API messages. */
const NON_MESSAGE_TYPES: ReadonlySet<string> = new Set([
  'system',
  'summary',
  'file-history-snapshot',
  'queue-operation',
  'progress',
  'custom-title',
  // 2.1.332: the prompt last typed, tools used, cost so far, a latch of its own
  'last-prompt',
  'tools-used',
  'cost-state',
  'atis-latch',
]);

/** Claude Code's model name on assistant lines it made up itself (errors, "no response requested"). */
const SYNTHETIC_MODEL = '<synthetic>';

interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: unknown;
}

function toBlocks(content: unknown): unknown[] {
  if (Array.isArray(content)) return content;
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return [];
}

/** The text of a message's content: a string, or its text blocks joined. */
const textOfContent = (content: unknown): string =>
  toBlocks(content)
    .filter((b): b is Json => isRecord(b) && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text as string)
    .join('\n');

const isToolResult = (block: unknown): boolean => isRecord(block) && block.type === 'tool_result';

/** The API wants a user message's tool_result blocks before anything else in it. */
function toolResultsFirst(blocks: unknown[]): unknown[] {
  const firstOther = blocks.findIndex((b) => !isToolResult(b));
  if (firstOther === -1 || !blocks.slice(firstOther).some(isToolResult)) return blocks;
  return [...blocks.filter(isToolResult), ...blocks.filter((b) => !isToolResult(b))];
}

class SessionBuilder {
  readonly items: AnthropicMessage[] = [];
  /** per item, the time of the last record merged into it (undefined: that record had no valid time) */
  readonly times: (number | undefined)[] = [];
  model: string | undefined;
  private lastAssistant = -1;
  private lastAssistantId: string | undefined;
  private lastUuid: string | undefined;
  private readonly seenUuids = new Set<string>();
  /** type, time, message id and content of each record: a resumed session copies them under new uuids */
  private readonly seenRecords = new Set<string>();
  /** user/assistant records seen, and how many of them were sidechain records */
  conversation = 0;
  sidechain = 0;
  /** the compact boundaries, each with the item count when it came (turned into call counts at the end) */
  readonly compactions: { items: number; c: Omit<TranscriptCompaction, 'calls'> }[] = [];
  /** the model of the latest assistant record read */
  private latestModel: string | undefined;
  /** the requests the log records of itself (2.1.332 and later: ./claude-code-requests.ts) */
  readonly requests = new RequestLog();
  /** `attachment` records: what Claude Code renders into a request beside the conversation (in its request records) */
  attachments = 0;
  /** the sub-agent whose records are the session (read from them), when the sidechain is the session */
  agentId: string | undefined;

  constructor(
    private readonly log: SkipLog,
    readonly sidechainIsSession: boolean,
  ) {}

  record(r: Json, line: number): void {
    const type = typeof r.type === 'string' ? r.type : undefined;
    if (type === undefined) {
      this.log.skipNoteFirst('unknown:(no type)', `line ${line}: record without a "type" field (skipped; further ones counted only)`);
      return;
    }
    if (REQUEST_RECORD_TYPES.has(type)) {
      if (!this.requests.request(r))
        this.log.skipNoteFirst(`malformed:${type}`, `line ${line}: ${type} record without the fields it needs (skipped)`);
      return;
    }
    if (type === 'attachment') {
      this.attachments += 1;
      return;
    }
    if (type !== 'user' && type !== 'assistant') {
      if (NON_MESSAGE_TYPES.has(type)) {
        this.log.skip(type);
        if (type === 'system' && r.subtype === 'compact_boundary') {
          this.log.note(
            `line ${line}: compact boundary (Claude Code summarised the history here; later calls are replayed with the full history)`,
          );
          this.compaction(r, line);
        }
      } else {
        this.log.skipNoteFirst(
          `unknown:${type}`,
          `line ${line}: unknown record type ${preview(type)} (skipped; further ones counted only)`,
        );
      }
      return;
    }
    this.conversation += 1;
    this.requests.conversation(r);
    if (r.isSidechain === true) this.sidechain += 1;
    if (r.isSidechain === true && !this.sidechainIsSession) {
      this.log.skip('sidechain');
      return;
    }
    if (this.sidechainIsSession && this.agentId === undefined && typeof r.agentId === 'string') this.agentId = r.agentId;
    const uuid = typeof r.uuid === 'string' ? r.uuid : undefined;
    if (uuid !== undefined) {
      if (this.seenUuids.has(uuid)) {
        this.log.skip('duplicate', `line ${line}: repeats record ${uuid}`);
        return;
      }
      this.seenUuids.add(uuid);
    }
    const message = r.message;
    if (!isRecord(message) || !('content' in message)) {
      this.log.skip('no-message', `line ${line}: ${type} record without a message`);
      return;
    }
    // Resuming a session copies its history into the file again under new uuids (same timestamps,
    // message ids and content): the copy is the same conversation, not more of it.
    if (typeof r.timestamp === 'string') {
      const key = createHash('sha256')
        .update(`${type}\0${r.timestamp}\0${String(message.id ?? '')}\0${JSON.stringify(message.content)}`)
        .digest('hex');
      if (this.seenRecords.has(key)) {
        this.log.skipNoteFirst(
          'resumed-copy',
          `line ${line}: repeats an earlier ${type} record under a new uuid (same time and content: a resumed session's copy of its history; skipped, further ones counted only)`,
        );
        return;
      }
      this.seenRecords.add(key);
    }
    if (type === 'assistant' && (message.model === SYNTHETIC_MODEL || r.isApiErrorMessage === true)) {
      this.log.skip('synthetic', `line ${line}: assistant line written by Claude Code, not the model`);
      return;
    }
    // A new prompt that does not continue from the record before it: the user rewound the session
    // (tool results may legitimately point back to the line of the call they answer).
    const parent = r.parentUuid;
    const prompt = type === 'user' && !toBlocks(message.content).some(isToolResult);
    if (prompt && typeof parent === 'string' && this.lastUuid !== undefined && parent !== this.lastUuid && this.seenUuids.has(parent)) {
      this.log.note(`line ${line}: continues from an earlier record (the session was rewound or branched); replayed in file order`);
    }
    if (uuid !== undefined) this.lastUuid = uuid;

    const at = parseTime(r.timestamp);
    if (type === 'user') {
      const last = this.compactions.at(-1);
      if (r.isCompactSummary === true && last !== undefined && last.c.summary === '') last.c.summary = textOfContent(message.content);
      this.addUser(message.content, at);
    } else {
      if (this.model === undefined && typeof message.model === 'string') this.model = message.model;
      if (typeof message.model === 'string') this.latestModel = message.model;
      this.addAssistant(typeof message.id === 'string' ? message.id : undefined, message.content, at);
    }
  }

  /**
   * A `compact_boundary` record: `compactMetadata` holds the trigger (`auto` or `manual`) and
   * `preTokens`, Claude Code's count of the context it compacted; the summary is the next user
   * record, marked `isCompactSummary`.
   */
  private compaction(r: Json, line: number): void {
    const meta = isRecord(r.compactMetadata) ? r.compactMetadata : {};
    const trigger = meta.trigger === 'auto' || meta.trigger === 'manual' ? meta.trigger : undefined;
    this.compactions.push({
      items: this.items.length,
      c: {
        line,
        ...(trigger ? { trigger } : {}),
        ...(typeof meta.preTokens === 'number' ? { tokens: meta.preTokens } : {}),
        ...(this.latestModel !== undefined ? { model: this.latestModel } : {}),
        ...(typeof r.version === 'string' ? { version: r.version } : {}),
        summary: '',
      },
    });
  }

  private addUser(content: unknown, at: number | undefined): void {
    const last = this.items.at(-1);
    if (last?.role === 'user') {
      last.content = toolResultsFirst([...toBlocks(last.content), ...toBlocks(content)]);
      this.times[this.items.length - 1] = at;
    } else {
      this.items.push({ role: 'user', content });
      this.times.push(at);
    }
  }

  private addAssistant(id: string | undefined, content: unknown, at: number | undefined): void {
    const lastIndex = this.items.length - 1;
    const last = this.items[lastIndex];
    let target: AnthropicMessage | undefined;
    if (last?.role === 'assistant') {
      target = last;
    } else if (
      // Parallel tool calls: a result can be logged before the rest of the message that called it.
      id !== undefined &&
      id === this.lastAssistantId &&
      this.lastAssistant === lastIndex - 1 &&
      last !== undefined &&
      Array.isArray(last.content) &&
      last.content.every(isToolResult)
    ) {
      target = this.items[this.lastAssistant];
    }
    if (target === undefined) {
      this.items.push({ role: 'assistant', content });
      this.times.push(at);
      this.lastAssistant = this.items.length - 1;
    } else {
      // a copy: the first record's own block list stays as logged (the request log hashes it)
      const blocks = [...toBlocks(target.content)];
      const known = new Set(blocks.filter((b) => isRecord(b) && b.type === 'tool_use').map((b) => (b as Json).id));
      for (const block of toBlocks(content)) {
        // The same block logged twice (a retried write) must not become a second tool call.
        if (isRecord(block) && block.type === 'tool_use' && known.has(block.id)) continue;
        blocks.push(block);
      }
      target.content = blocks;
    }
    this.lastAssistantId = id;
  }
}

export async function readClaudeCode(path: string, opts: StreamOptions = {}): Promise<Transcript> {
  let log = new SkipLog();
  // A sub-agent's own log (`agent-<id>.jsonl`) holds nothing but sidechain records: they are its session.
  const subAgentLog = /^agent-.*\.jsonl$/i.test(basename(path));
  if (subAgentLog) log.note('sub-agent log (agent-*.jsonl): its sidechain records are read as the session');
  let builder = new SessionBuilder(log, subAgentLog);
  await forEachRecord(path, opts, log, (record, line) => builder.record(record, line));
  if (!subAgentLog && builder.conversation > 0 && builder.sidechain === builder.conversation) {
    // every conversation record is a sidechain record: a sub-agent's transcript whatever its name,
    // read again with the sidechain as the session (a fresh tally, so nothing is counted twice)
    log = new SkipLog();
    log.note('sub-agent transcript (every user/assistant record is a sidechain record): its sidechain records are read as the session');
    builder = new SessionBuilder(log, true);
    await forEachRecord(path, opts, log, (record, line) => builder.record(record, line));
  }
  const sent = asSent(builder, log);
  const subAgent = builder.sidechainIsSession ? { subAgent: true as const } : {};
  if (sent) return { source: 'claude-code', wire: 'anthropic-messages', ...sent, ...subAgent, skipped: log.result() };
  if (builder.attachments > 0) {
    for (let i = 0; i < builder.attachments; i++)
      log.skipNoteFirst(
        'attachment',
        'attachment records (reminders, listings and notices Claude Code puts into its requests) are not replayed without the request records that place them',
      );
  }
  const calls = computeCalls('anthropic-messages', builder.items, false, builder.times);
  const compactions = builder.compactions.map(({ items, c }) => ({ calls: callsBefore(calls, items), ...c }));
  return {
    source: 'claude-code',
    wire: 'anthropic-messages',
    base: builder.model === undefined ? {} : { model: builder.model },
    items: builder.items,
    calls,
    ...(compactions.length > 0 ? { compactions } : {}),
    ...subAgent,
    skipped: log.result(),
  };
}

/**
 * The session's calls as Claude Code sent them, when its log records its requests and they rebuild
 * into one growing history (./claude-code-requests.ts); undefined otherwise, with a note saying why
 * when the log has request records.
 */
function asSent(builder: SessionBuilder, log: SkipLog): Pick<Transcript, 'base' | 'items' | 'calls'> | undefined {
  if (!builder.requests.recorded) return undefined;
  const fallBack = (why: string) => {
    log.note(`the log records its requests, but its calls are replayed from the conversation records: ${why}`);
    return undefined;
  };
  if (builder.compactions.length > 0) return fallBack('it was compacted');
  const rebuilt = builder.requests.rebuild(builder.agentId);
  if (typeof rebuilt === 'string') return fallBack(rebuilt);
  const calls = computeCalls('anthropic-messages', rebuilt.items, !rebuilt.answered);
  if (calls.length !== rebuilt.calls.length || calls.some((c, k) => c.end !== rebuilt.calls[k]!.end))
    return fallBack('its requests do not end where the answers begin');
  calls.forEach((c, k) => {
    const at = rebuilt.calls[k]!.at;
    if (at !== undefined) c.at = at;
  });
  log.note(
    'the log records its requests (Claude Code 2.1.332 and later): every call is replayed as sent, with its own system prompt and tools',
  );
  for (const note of rebuilt.notes) log.note(note);
  return { base: rebuilt.base, items: rebuilt.items, calls };
}
