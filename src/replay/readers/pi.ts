/**
 * pi coding agent sessions (`~/.pi/agent/sessions/<cwd>/<time>_<id>.jsonl`, github.com/badlogic/pi-mono)
 * as the requests pi sent, in the wire format of the provider it called.
 *
 * A session file is a `{"type":"session"}` header and then entries: `message` entries hold pi's own
 * messages (`user`, `assistant` with `text` / `thinking` / `toolCall` blocks and the `api`,
 * `provider` and `model` that answered, `toolResult`, and the agent's `bashExecution`, `custom`
 * messages), and the others record settings (`thinking_level_change`, `model_change`), compactions,
 * branch summaries, labels and extension data. pi keeps no wire format on disk: before each call it
 * converts its messages to the provider's (packages/ai/src/providers: transform-messages.ts, then
 * anthropic.ts, openai-completions.ts or openai-responses-shared.ts), and this reader does the same:
 * errored and aborted answers are left out of later requests, tool calls left without a result get
 * pi's `"No result provided"` error result, consecutive tool results become one user message
 * (Anthropic), thinking of another model becomes text, the agent's own messages become user text.
 *
 * Calls: every assistant message is one call whose request is what came before it; an aborted or
 * errored answer is a call too when the provider billed it (its usage shows input), else it is
 * skipped and counted. A session that changed model part-way is replayed in the wire format of the
 * model that made most of its calls (pi itself converts the whole history for each new model), and a
 * note says so. Since version 2 entries form a tree (`id`, `parentId`); the branch replayed is the
 * one that ends at the file's last entry, as pi reopens it. A compaction replaced the history with a
 * summary: the replay keeps the full history (its calls are prefixes of one growing history), says
 * so in a note and lists it (`compactions`, with pi's `tokensBefore`), as for Codex and Claude Code. The system prompt and tools are not in the file.
 * A call's time (`at`) is its answer's `timestamp` (ms), which pi sets as it starts the request.
 */
import type { WireFormat } from '../../engine/types';
import { forEachRecord, type StreamOptions } from './lines';
import { SkipLog, preview } from './skip-log';
import type { Transcript, TranscriptCall, TranscriptCompaction } from './types';
import { isRecord, parseTime, replyParts, type Json } from './wire';

/** What pi puts before a branch summary it sends as a user message (packages/coding-agent/src/core/messages.ts). */
const BRANCH_SUMMARY_PREFIX = 'The following is a summary of a branch that this conversation came back from:\n\n<summary>\n';
const BRANCH_SUMMARY_SUFFIX = '</summary>';
/** pi's result for a tool call that got none (transform-messages.ts). */
const NO_RESULT = 'No result provided';

/** Entry types that never reach the model. */
const SETTING_ENTRIES: ReadonlySet<string> = new Set(['thinking_level_change', 'model_change', 'label', 'session_info', 'custom']);

/** pi's `api` names, as the wire format the engine reads them in. */
const WIRE_OF_API: Readonly<Record<string, WireFormat>> = {
  'anthropic-messages': 'anthropic-messages',
  'openai-completions': 'openai-chat',
  'mistral-conversations': 'openai-chat',
  'openai-responses': 'openai-responses',
  'azure-openai-responses': 'openai-responses',
  'openai-codex-responses': 'openai-responses',
};

/** One of pi's messages, converted to a wire format when the session is read to its end. */
type PiMessage = Json & { role: string };

interface Model {
  api: string;
  provider: string;
  model: string;
}

const keyOf = (m: Model) => `${m.api}\0${m.provider}\0${m.model}`;

/** A part of pi's message content: text, or an image as base64 data. */
function partsOf(content: unknown): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? content.filter(isRecord) : [];
}

const textOf = (parts: Json[]) =>
  parts
    .filter((p) => p.type === 'text' && typeof p.text === 'string')
    .map((p) => p.text as string)
    .join('\n');

/** `bashExecutionToText` in pi's messages.ts: a command the user ran with `!`, as the model reads it. */
function bashText(m: Json): string {
  let text = `Ran \`${String(m.command ?? '')}\`\n`;
  const output = typeof m.output === 'string' ? m.output : '';
  text += output !== '' ? `\`\`\`\n${output}\n\`\`\`` : '(no output)';
  if (m.cancelled === true) text += '\n\n(command cancelled)';
  else if (typeof m.exitCode === 'number' && m.exitCode !== 0) text += `\n\nCommand exited with code ${m.exitCode}`;
  if (m.truncated === true && typeof m.fullOutputPath === 'string') text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`;
  return text;
}

/** An answer the provider billed: some input was read or written (an abort before the request has none). */
function billed(m: Json): boolean {
  const u = isRecord(m.usage) ? m.usage : {};
  return ['input', 'cacheRead', 'cacheWrite'].some((k) => typeof u[k] === 'number' && (u[k] as number) > 0);
}

function modelOf(m: Json): Model | undefined {
  if (typeof m.model !== 'string') return undefined;
  return { api: typeof m.api === 'string' ? m.api : '', provider: typeof m.provider === 'string' ? m.provider : '', model: m.model };
}

/** The wire format for a pi `api`; an api the engine does not read goes by its model's family. */
function wireFor(m: Model): WireFormat {
  return WIRE_OF_API[m.api] ?? (/claude/i.test(m.model) ? 'anthropic-messages' : 'openai-chat');
}

/** Converts pi's messages to one wire format, as pi's providers do before each call. */
class Converter {
  readonly items: unknown[] = [];
  private pending: Json[] = [];
  private answered = new Set<string>();

  constructor(
    private readonly wire: WireFormat,
    private readonly target: Model,
  ) {}

  private sameModel(m: Json): boolean {
    return m.api === this.target.api && m.provider === this.target.provider && m.model === this.target.model;
  }

  /** Tool calls of the previous answer left without a result get pi's error result. */
  private closeOrphans(): void {
    const orphans = this.pending.filter((c) => !this.answered.has(String(c.id)));
    this.pending = [];
    this.answered = new Set();
    for (const c of orphans) {
      this.toolResult({ toolCallId: c.id, toolName: c.name, content: [{ type: 'text', text: NO_RESULT }], isError: true });
    }
  }

  user(content: unknown): void {
    this.closeOrphans();
    const parts = partsOf(content);
    if (typeof content === 'string') {
      // a string is sent as one (Anthropic: when not blank)
      if (this.wire === 'openai-responses') this.items.push({ role: 'user', content: [{ type: 'input_text', text: content }] });
      else if (this.wire === 'openai-chat' || content.trim() !== '') this.items.push({ role: 'user', content });
    } else if (this.wire === 'anthropic-messages') {
      const blocks = parts
        .map((p) => (p.type === 'image' ? anthropicImage(p) : { type: 'text', text: typeof p.text === 'string' ? p.text : '' }))
        .filter((b) => b.type !== 'text' || String(b.text).trim() !== '');
      if (blocks.length > 0) this.items.push({ role: 'user', content: blocks });
    } else if (this.wire === 'openai-chat') {
      const blocks = parts.map((p) =>
        p.type === 'image'
          ? { type: 'image_url', image_url: { url: dataUrl(p) } }
          : { type: 'text', text: typeof p.text === 'string' ? p.text : '' },
      );
      if (blocks.length > 0) this.items.push({ role: 'user', content: blocks });
    } else {
      const blocks = parts.map((p) =>
        p.type === 'image'
          ? { type: 'input_image', detail: 'auto', image_url: dataUrl(p) }
          : { type: 'input_text', text: typeof p.text === 'string' ? p.text : '' },
      );
      if (blocks.length > 0) this.items.push({ role: 'user', content: blocks });
    }
  }

  /** The wire items of an answer (none when nothing in it is sent back, as pi drops it). */
  assistantItems(m: Json): unknown[] {
    const same = this.sameModel(m);
    const blocks = partsOf(m.content);
    if (this.wire === 'anthropic-messages') {
      const content: Json[] = [];
      for (const b of blocks) {
        if (b.type === 'text' && typeof b.text === 'string') {
          if (b.text.trim() !== '') content.push({ type: 'text', text: b.text });
        } else if (b.type === 'thinking') {
          const thinking = typeof b.thinking === 'string' ? b.thinking : '';
          const signature = typeof b.thinkingSignature === 'string' ? b.thinkingSignature : '';
          if (b.redacted === true) {
            if (same) content.push({ type: 'redacted_thinking', data: signature });
          } else if (thinking.trim() === '') continue;
          else if (same && signature.trim() !== '') content.push({ type: 'thinking', thinking, signature });
          else content.push({ type: 'text', text: thinking });
        } else if (b.type === 'toolCall') {
          content.push({ type: 'tool_use', id: this.callId(b, same), name: b.name, input: b.arguments ?? {} });
        }
      }
      return content.length > 0 ? [{ role: 'assistant', content }] : [];
    }
    // another model's thinking is sent as text (transform-messages.ts)
    const asText = (b: Json): string | undefined =>
      b.type === 'text' && typeof b.text === 'string'
        ? b.text
        : b.type === 'thinking' && !same && b.redacted !== true && typeof b.thinking === 'string' && b.thinking.trim() !== ''
          ? b.thinking
          : undefined;
    if (this.wire === 'openai-chat') {
      const text = blocks
        .map(asText)
        .filter((t): t is string => t !== undefined && t.trim() !== '')
        .join('');
      const calls = blocks
        .filter((b) => b.type === 'toolCall')
        .map((b) => ({
          id: this.callId(b, same),
          type: 'function',
          function: { name: b.name, arguments: JSON.stringify(b.arguments ?? {}) },
        }));
      if (text === '' && calls.length === 0) return [];
      return [{ role: 'assistant', content: text === '' ? null : text, ...(calls.length > 0 ? { tool_calls: calls } : {}) }];
    }
    const out: Json[] = [];
    for (const b of blocks) {
      if (b.type === 'thinking' && typeof b.thinkingSignature === 'string' && same) {
        try {
          const item: unknown = JSON.parse(b.thinkingSignature);
          if (isRecord(item)) out.push(item);
        } catch {
          // a signature that is not a reasoning item: pi would fail to send it; nothing to replay
        }
      } else if (asText(b) !== undefined) {
        out.push({
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: asText(b), annotations: [] }],
          status: 'completed',
        });
      } else if (b.type === 'toolCall') {
        const [callId] = this.callId(b, same).split('|');
        out.push({ type: 'function_call', call_id: callId, name: b.name, arguments: JSON.stringify(b.arguments ?? {}) });
      }
    }
    return out;
  }

  assistant(m: Json): void {
    this.closeOrphans();
    this.items.push(...this.assistantItems(m));
    this.pending = partsOf(m.content).filter((b) => b.type === 'toolCall');
  }

  toolResult(m: Json): void {
    const id = this.resultId(String(m.toolCallId ?? ''));
    this.answered.add(String(m.toolCallId ?? ''));
    const parts = partsOf(m.content);
    const text = textOf(parts);
    const images = parts.filter((p) => p.type === 'image');
    if (this.wire === 'anthropic-messages') {
      let content: unknown = text;
      if (images.length > 0) {
        const blocks = parts.map((p) => (p.type === 'image' ? anthropicImage(p) : { type: 'text', text: String(p.text ?? '') }));
        content = blocks.some((b) => b.type === 'text') ? blocks : [{ type: 'text', text: '(see attached image)' }, ...blocks];
      }
      const block = { type: 'tool_result', tool_use_id: id, content, is_error: m.isError === true };
      const last = this.items.at(-1);
      // consecutive tool results go back as one user message
      if (
        isRecord(last) &&
        last.role === 'user' &&
        Array.isArray(last.content) &&
        last.content.every((b) => isRecord(b) && b.type === 'tool_result')
      ) {
        last.content.push(block);
      } else this.items.push({ role: 'user', content: [block] });
    } else if (this.wire === 'openai-chat') {
      this.items.push({ role: 'tool', content: text !== '' ? text : '(see attached image)', tool_call_id: id });
      if (images.length > 0) {
        this.items.push({
          role: 'user',
          content: [
            { type: 'text', text: 'Attached image(s) from tool result:' },
            ...images.map((p) => ({ type: 'image_url', image_url: { url: dataUrl(p) } })),
          ],
        });
      }
    } else {
      const output =
        images.length > 0
          ? [
              ...(text !== '' ? [{ type: 'input_text', text }] : []),
              ...images.map((p) => ({ type: 'input_image', detail: 'auto', image_url: dataUrl(p) })),
            ]
          : text !== ''
            ? text
            : '(see attached image)';
      this.items.push({ type: 'function_call_output', call_id: id.split('|')[0], output });
    }
  }

  /** Ids of another provider's calls are made valid for this one, as pi's providers do. */
  private readonly renamed = new Map<string, string>();

  private callId(b: Json, same: boolean): string {
    const id = String(b.id ?? '');
    if (same || this.wire !== 'anthropic-messages') return id;
    const normal = id.replace(/[^a-zA-Z0-9_-]/g, '_').slice(0, 64);
    if (normal !== id) this.renamed.set(id, normal);
    return normal;
  }

  private resultId(id: string): string {
    return this.renamed.get(id) ?? id;
  }
}

function dataUrl(p: Json): string {
  return `data:${String(p.mimeType ?? 'image/png')};base64,${String(p.data ?? '')}`;
}

function anthropicImage(p: Json): Json {
  return { type: 'image', source: { type: 'base64', media_type: String(p.mimeType ?? 'image/png'), data: String(p.data ?? '') } };
}

/** The entries on the branch that ends at the last entry, in order (all of them for a v1 file, which has no tree). */
function branchOf(entries: { entry: Json; line: number }[], log: SkipLog): { entry: Json; line: number }[] {
  const tree = entries.some((e) => typeof e.entry.id === 'string' && 'parentId' in e.entry);
  if (!tree || entries.length === 0) return entries;
  const byId = new Map<string, { entry: Json; line: number }>();
  for (const e of entries) if (typeof e.entry.id === 'string') byId.set(e.entry.id, e);
  const path: { entry: Json; line: number }[] = [];
  const seen = new Set<string>();
  for (let e: { entry: Json; line: number } | undefined = entries.at(-1); e !== undefined;) {
    path.unshift(e);
    const parent = e.entry.parentId;
    if (typeof parent !== 'string' || seen.has(parent)) break;
    seen.add(parent);
    e = byId.get(parent);
  }
  const off = entries.length - path.length;
  if (off > 0) {
    for (let i = 0; i < off; i++) log.skip('other-branch');
    log.note(
      `${off} entr${off === 1 ? 'y is' : 'ies are'} on other branches of the session tree (the branch that ends at the last entry is replayed)`,
    );
  }
  return path;
}

export async function readPi(path: string, opts: StreamOptions = {}): Promise<Transcript> {
  const log = new SkipLog();
  const entries: { entry: Json; line: number }[] = [];
  let header: Json | undefined;
  await forEachRecord(
    path,
    opts,
    log,
    (record, line) => {
      if (record.type === 'session') {
        if (header === undefined) header = record;
        else log.skip('session', `line ${line}: a second session header (skipped)`);
        return;
      }
      entries.push({ entry: record, line });
    },
    { concatenated: true },
  );

  // pass 1: pi's messages in the order they were sent, and where each call was made
  const messages: PiMessage[] = [];
  const calls: { at: number; answer: Json }[] = [];
  /** each compaction on the branch, with the calls made before it (pass 1's count) */
  const compactions: { before: number; c: Omit<TranscriptCompaction, 'calls'> }[] = [];
  for (const { entry, line } of branchOf(entries, log)) {
    const type = typeof entry.type === 'string' ? entry.type : '(no type)';
    if (type === 'message') {
      const m = entry.message;
      if (!isRecord(m) || typeof m.role !== 'string') {
        log.skip('no-message', `line ${line}: message entry without a message role`);
        continue;
      }
      const role = m.role === 'hookMessage' ? 'custom' : m.role;
      if (role === 'assistant') {
        const failed = m.stopReason === 'error' || m.stopReason === 'aborted';
        if (failed && !billed(m)) {
          log.skipNoteFirst(
            `assistant:${String(m.stopReason)}`,
            `line ${line}: ${String(m.stopReason)} before the provider answered (not a call; further ones counted only)`,
          );
          continue;
        }
        calls.push({ at: messages.length, answer: m });
        if (!failed) messages.push({ ...m, role });
      } else if (role === 'user' || role === 'toolResult') messages.push({ ...m, role });
      else if (role === 'custom') messages.push({ role: 'user', content: partsOf(m.content) });
      else if (role === 'bashExecution') {
        if (m.excludeFromContext === true) log.skip('bashExecution:excluded');
        else messages.push({ role: 'user', content: [{ type: 'text', text: bashText(m) }] });
      } else
        log.skipNoteFirst(
          `unknown:message:${role}`,
          `line ${line}: unknown message role ${preview(role)} (skipped; further ones counted only)`,
        );
    } else if (type === 'custom_message') {
      messages.push({ role: 'user', content: partsOf(entry.content) });
    } else if (type === 'branch_summary') {
      if (typeof entry.summary === 'string' && entry.summary !== '') {
        messages.push({ role: 'user', content: [{ type: 'text', text: BRANCH_SUMMARY_PREFIX + entry.summary + BRANCH_SUMMARY_SUFFIX }] });
      } else log.skip('branch_summary');
    } else if (type === 'compaction') {
      log.skip('compaction', `line ${line}: compaction (pi summarised the history here; later calls are replayed with the full history)`);
      // CompactionEntry (packages/coding-agent/src/core/session-manager.ts): summary, tokensBefore, no usage of its own
      const model = calls.length > 0 && typeof calls.at(-1)!.answer.model === 'string' ? (calls.at(-1)!.answer.model as string) : undefined;
      compactions.push({
        before: calls.length,
        c: {
          line,
          ...(typeof entry.tokensBefore === 'number' ? { tokens: entry.tokensBefore } : {}),
          ...(model !== undefined ? { model } : {}),
          summary: typeof entry.summary === 'string' ? entry.summary : '',
        },
      });
    } else if (SETTING_ENTRIES.has(type)) log.skip(type);
    else log.skipNoteFirst(`unknown:${type}`, `line ${line}: unknown entry type ${preview(type)} (skipped; further ones counted only)`);
  }

  // the model that made most calls decides the wire format
  const counts = new Map<string, { model: Model; calls: number }>();
  for (const c of calls) {
    const m = modelOf(c.answer);
    if (m === undefined) continue;
    const slot = counts.get(keyOf(m)) ?? { model: m, calls: 0 };
    slot.calls += 1;
    counts.set(keyOf(m), slot);
  }
  const ranked = [...counts.values()].sort((a, b) => b.calls - a.calls);
  const headerModel: Model | undefined =
    header && typeof header.modelId === 'string'
      ? { api: '', provider: typeof header.provider === 'string' ? header.provider : '', model: header.modelId }
      : undefined;
  const target = ranked[0]?.model ?? headerModel ?? { api: 'anthropic-messages', provider: '', model: '' };
  const wire = wireFor(target);
  if (ranked.length > 1) {
    log.note(
      `the session called ${ranked.length} models (${ranked.map((r) => `${r.model.model} via ${r.model.api || r.model.provider}: ${r.calls} calls`).join('; ')}); ` +
        `every call is replayed as ${target.model}'s, in ${wire}`,
    );
  }
  if (target.api !== '' && WIRE_OF_API[target.api] === undefined) {
    log.note(`pi called ${target.model} through ${target.api}, a format the engine does not read: replayed as ${wire}`);
  }

  // pass 2: the wire items, and each call's end among them
  const conv = new Converter(wire, target);
  const out: TranscriptCall[] = [];
  let next = 0;
  for (let i = 0; i <= messages.length; i++) {
    while (next < calls.length && calls[next]!.at === i) {
      const call = calls[next]!;
      const reply = conv
        .assistantItems(call.answer)
        .flatMap((item) => replyParts(wire, item))
        .filter((p) => p !== '')
        .join('\n');
      // pi sets an answer's timestamp when it starts the request (packages/ai/src/providers)
      const at = parseTime(call.answer.timestamp);
      out.push({ end: conv.items.length, reply, ...(at !== undefined ? { at } : {}) });
      next += 1;
    }
    const m = messages[i];
    if (m === undefined) break;
    if (m.role === 'assistant') conv.assistant(m);
    else if (m.role === 'toolResult') conv.toolResult(m);
    else conv.user(m.content);
  }

  // a call with nothing before it is no call; a compaction counts the calls kept before it
  const kept = out.map((c) => c.end > 0);
  const compacted = compactions.map(({ before, c }) => ({ calls: kept.slice(0, before).filter(Boolean).length, ...c }));
  return {
    source: 'pi',
    wire,
    base: target.model !== '' ? { model: target.model } : {},
    items: conv.items,
    calls: out.filter((c) => c.end > 0),
    ...(compacted.length > 0 ? { compactions: compacted } : {}),
    skipped: log.result(),
  };
}
