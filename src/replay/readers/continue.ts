/**
 * Continue's sessions (`~/.continue/sessions/<id>.json`, written by its CLI `cn` and by its VS Code
 * extension) replayed as the requests Continue sent.
 *
 * A session is one JSON document: `sessionId`, `title`, `workspaceDirectory` and `history`, each item
 * `{message, contextItems, toolCallStates}`:
 * - a user message (`content` a string or parts) with the context items attached to it;
 * - an assistant message (its `content`, its `toolCalls` in Chat Completions form, its `usage` naming
 *   the model), and beside it `toolCallStates`, each call's state and `output` (a list of
 *   `{content}`), already cut by Continue's own limits;
 * - `thinking` and `system` messages.
 *
 * Before each request Continue's CLI (1.5.47, `convertFromUnifiedHistory`) turns the history into
 * Chat Completions messages: a user message's context items first (`<context name="…">` blocks),
 * then its text; an assistant message with its tool calls; after it one `tool` message per call,
 * the outputs' contents joined by newlines (`Tool cancelled` for a call without output); a thinking
 * message as an assistant one. Its OpenAI adapter sends that to the Responses API for the models it
 * routes there (`gpt-5…`, `o1`…: `function_call`, `function_call_output`, an answer's text as a
 * message with a numbered id), else as Chat Completions. This reader writes the same; the agents
 * suite checks the Responses form against what the real CLI sent, less the system prompt, which is
 * not in the session (a note says so).
 *
 * For a Claude model (`claude-…`, no provider prefix: Continue's Anthropic provider) its Anthropic
 * adapter converts those messages to Messages: a run of user and tool messages becomes one user
 * message (each tool message a `tool_result` block holding its text, a prompt's text a text block),
 * an answer its text blocks then its `tool_use` blocks (the arguments parsed, `{}` when they are not
 * JSON), empty text left out, a system message moved to `system`. This reader writes the same, and
 * the agents suite checks it against what the real CLI sent through the proxy.
 *
 * Calls: each assistant message is a call, its request everything before it. The file has no times.
 * Not reproduced (a note): the cache breakpoints the Anthropic adapter puts on the last two user
 * text blocks of each call (they move from call to call), another provider's wire for a Claude model
 * (a model named `provider/claude-…` replays in Chat Completions), and a compacted history (the
 * replay keeps the whole history, as for the other agents).
 */
import { dataUrlBase64 } from '../../engine/images';
import { SpillwayError } from '../../engine/types';
import type { WireFormat } from '../../engine/types';
import { SkipLog, preview } from './skip-log';
import type { Transcript, TranscriptCall } from './types';
import { isRecord, mostAnsweringModel, type Json } from './wire';

/** What Continue sends for a tool call that produced no output. */
export const CONTINUE_CANCELLED = 'Tool cancelled';
/** The models Continue's OpenAI adapter sends to the Responses API. */
const RESPONSES_MODELS = /^(?:gpt-5|gpt-5-codex|o[0-9])/i;
/** The models Continue's Anthropic provider serves (a name without a router's `provider/` prefix). */
const ANTHROPIC_MODELS = /^claude-/i;

/** How a Continue session starts: its id, then its title (its folder and history follow); told from a head that stops inside the document. */
export const CONTINUE_SESSION_HEAD = /^\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"title"\s*:/;

/** A Continue session document: its id, its workspace and its history. */
export function isContinueSession(doc: unknown): boolean {
  return (
    isRecord(doc) &&
    typeof doc.sessionId === 'string' &&
    Array.isArray(doc.history) &&
    ('workspaceDirectory' in doc || 'title' in doc) &&
    (doc.history.length === 0 || (isRecord(doc.history[0]) && isRecord(doc.history[0].message)))
  );
}

/** A message's content as Continue converts it: a string as it is, text and image parts in Chat Completions form. */
function contentOf(content: unknown, log: SkipLog, at: number): unknown {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.filter(isRecord).flatMap((p): Json[] => {
    if (p.type === 'text') return [{ type: 'text', text: typeof p.text === 'string' ? p.text : '' }];
    if (p.type === 'imageUrl' && isRecord(p.imageUrl)) return [{ type: 'image_url', image_url: { url: p.imageUrl.url } }];
    log.skipNoteFirst(`part:${String(p.type)}`, `history ${at}: a ${preview(String(p.type))} part is left out`);
    return [];
  });
}

/** Chat Completions messages as Continue's `convertFromUnifiedHistory` makes them (see the module comment). */
function chatMessages(
  history: readonly Json[],
  log: SkipLog,
): { messages: Json[]; answers: number[]; models: string[]; replies: string[] } {
  const messages: Json[] = [];
  /** index in `messages` of each answer (its thinking message first, when it has one) */
  const answers: number[] = [];
  const models: string[] = [];
  const replies: string[] = [];
  // a thinking message is the start of the answer after it (one model response)
  let answerFrom: number | undefined;
  history.forEach((item, at) => {
    const m = item.message as Json;
    const role = m.role;
    if (role !== 'thinking' && role !== 'assistant') answerFrom = undefined;
    if (role === 'user') {
      const context = Array.isArray(item.contextItems) ? item.contextItems.filter(isRecord) : [];
      const prefix = context.map((c) => `<context name="${String(c.name)}">\n${String(c.content ?? '')}\n</context>\n\n`).join('');
      const content = contentOf(m.content, log, at);
      messages.push({ role: 'user', content: typeof content === 'string' ? prefix + content : content });
    } else if (role === 'assistant' || role === 'thinking') {
      const msg: Json = { role: 'assistant', content: contentOf(m.content, log, at) };
      const calls = Array.isArray(m.toolCalls) ? m.toolCalls.filter(isRecord) : [];
      if (calls.length > 0)
        msg.tool_calls = calls.map((c) => {
          const fn = isRecord(c.function) ? c.function : {};
          return {
            id: c.id,
            type: 'function',
            function: { name: typeof fn.name === 'string' ? fn.name : '', arguments: typeof fn.arguments === 'string' ? fn.arguments : '' },
            ...(c.extra_content ? { extra_content: c.extra_content } : {}),
          };
        });
      if (role === 'thinking') answerFrom ??= messages.length;
      else {
        answers.push(answerFrom ?? messages.length);
        replies.push(textOf(msg.content));
        answerFrom = undefined;
        const usage = isRecord(m.usage) ? m.usage : undefined;
        if (typeof usage?.model === 'string') models.push(usage.model);
      }
      messages.push(msg);
      const states = Array.isArray(item.toolCallStates) ? item.toolCallStates.filter(isRecord) : [];
      for (const s of states) {
        const output = Array.isArray(s.output) ? s.output.filter(isRecord) : [];
        messages.push({
          role: 'tool',
          content: output.length > 0 ? output.map((o) => o.content).join('\n') : CONTINUE_CANCELLED,
          tool_call_id: s.toolCallId,
        });
      }
    } else if (role === 'system') {
      messages.push({ role: 'system', content: m.content });
    } else {
      log.skip('role', `history ${at}: a message of role ${preview(String(role))} is left out`);
    }
  });
  return { messages, answers, models, replies };
}

/** Text of Chat content for Responses: a string, or the text parts joined (Continue's own conversion). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((p) => (isRecord(p) && p.type === 'text' && typeof p.text === 'string' ? p.text : '')).join('');
}

/** A user or developer message's content as Responses input parts. */
function inputParts(content: unknown): Json[] {
  if (typeof content === 'string') return [{ text: content, type: 'input_text' }];
  if (!Array.isArray(content)) return [];
  return content.filter(isRecord).flatMap((p): Json[] => {
    if (p.type === 'text') return [{ text: p.text, type: 'input_text' }];
    if (p.type === 'image_url' && isRecord(p.image_url)) return [{ type: 'input_image', image_url: p.image_url.url, detail: 'auto' }];
    return [];
  });
}

/**
 * Continue's Chat-to-Responses conversion of its OpenAI adapter: each call's input numbers the
 * answers' text messages from `msg_0000`, so the k-th answer has the same id in every later call.
 */
function responsesItems(messages: readonly Json[], answers: readonly number[]): { items: Json[]; ends: number[] } {
  const items: Json[] = [];
  const ends: number[] = [];
  const answerAt = new Set(answers);
  let n = 0;
  messages.forEach((m, i) => {
    if (answerAt.has(i)) ends.push(items.length);
    if (m.role === 'tool') {
      if (m.tool_call_id) items.push({ type: 'function_call_output', call_id: m.tool_call_id, output: textOf(m.content) });
    } else if (m.role === 'system' || m.role === 'user') {
      const content = inputParts(m.content);
      if (content.length > 0) items.push({ type: 'message', role: m.role === 'system' ? 'developer' : 'user', content });
    } else if (m.role === 'assistant') {
      const text = typeof m.content === 'string' ? [m.content] : Array.isArray(m.content) ? m.content.map((p) => textOf([p])) : [];
      const parts = text.filter((t) => t.trim().length > 0).map((t) => ({ text: t, type: 'output_text', annotations: [] }));
      if (parts.length > 0)
        items.push({
          type: 'message',
          role: 'assistant',
          content: parts,
          id: `msg_${(n++).toString().padStart(4, '0')}`,
          status: 'completed',
        });
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(isRecord) : [];
      calls.forEach((c, k) => {
        const fn = isRecord(c.function) ? c.function : {};
        const id = typeof c.id === 'string' ? c.id : undefined;
        items.push({
          type: 'function_call',
          call_id: id ?? `tool_call_${k}`,
          name: typeof fn.name === 'string' ? fn.name : '',
          arguments: typeof fn.arguments === 'string' ? fn.arguments : '{}',
          ...(id?.startsWith('fc_') ? { id } : {}),
        });
      });
    }
  });
  return { items, ends };
}

/** The image types the Anthropic adapter names as they are; any other data URL it sends as JPEG. */
const ANTHROPIC_MEDIA_TYPES = /^data:(image\/(?:png|gif|webp));base64,/;

/** A Chat message's content as the Anthropic adapter's blocks: non-empty text, images as data. */
function anthropicBlocks(content: unknown): Json[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.filter(isRecord).flatMap((p): Json[] => {
    if (p.type === 'text' || p.type === 'refusal') {
      const text = p.type === 'text' ? p.text : p.refusal;
      return typeof text === 'string' && text ? [{ type: 'text', text }] : [];
    }
    const url = p.type === 'image_url' && isRecord(p.image_url) ? p.image_url.url : undefined;
    const data = typeof url === 'string' ? dataUrlBase64(url) : undefined;
    if (typeof url !== 'string' || data === undefined) return [];
    const mediaType = ANTHROPIC_MEDIA_TYPES.exec(url)?.[1] ?? 'image/jpeg';
    return [{ type: 'image', source: { type: 'base64', media_type: mediaType, data } }];
  });
}

/** Tool-call arguments as the Anthropic adapter parses them: `{}` when they are not JSON. */
function parsedArguments(args: unknown): Json {
  try {
    const v: unknown = JSON.parse(typeof args === 'string' && args.trim() ? args : '{}');
    return isRecord(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * Continue's Chat-to-Messages conversion of its Anthropic adapter (see the module comment), with the
 * index in the Messages of each answer: a run of same-role messages is one message, so an answer's
 * request is the messages converted before it.
 */
function anthropicItems(messages: readonly Json[], answers: readonly number[]): { items: Json[]; ends: number[]; system?: unknown } {
  const items: Json[] = [];
  const ends: number[] = [];
  const answerAt = new Set(answers);
  let role: 'user' | 'assistant' | undefined;
  let parts: Json[] = [];
  const flush = () => {
    if (role && parts.length > 0) items.push({ role, content: parts });
    parts = [];
  };
  let system: unknown;
  messages.forEach((m, i) => {
    if (answerAt.has(i)) {
      flush();
      role = undefined;
      ends.push(items.length);
    }
    if (m.role === 'system') {
      system ??= typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
      return;
    }
    const next = m.role === 'user' || m.role === 'tool' ? 'user' : 'assistant';
    if (next !== role) {
      flush();
      role = next;
    }
    if (m.role === 'tool') parts.push({ type: 'tool_result', tool_use_id: m.tool_call_id, content: m.content });
    else if (m.role === 'user') parts.push(...anthropicBlocks(m.content));
    else {
      if (m.content) parts.push(...anthropicBlocks(m.content));
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(isRecord) : [];
      for (const c of calls) {
        const fn = isRecord(c.function) ? c.function : {};
        if (typeof c.id === 'string' && c.id && typeof fn.name === 'string' && fn.name)
          parts.push({ type: 'tool_use', id: c.id, name: fn.name, input: parsedArguments(fn.arguments) });
      }
    }
  });
  flush();
  return { items, ends, ...(system !== undefined ? { system } : {}) };
}

/** The wire Continue's adapter for `model` sends: Responses, Messages, or its own Chat Completions. */
function wireOf(model: string | undefined): WireFormat {
  if (model !== undefined && RESPONSES_MODELS.test(model)) return 'openai-responses';
  if (model !== undefined && ANTHROPIC_MODELS.test(model)) return 'anthropic-messages';
  return 'openai-chat';
}

/** A Continue session document as the requests Continue sent (see the module comment). */
export function continueTranscript(doc: unknown, path: string): Transcript {
  if (!isContinueSession(doc) || !isRecord(doc))
    throw new SpillwayError(`${path}: not a Continue session (no sessionId and history)`, 'invalid-input');
  const log = new SkipLog();
  const history: Json[] = [];
  (doc.history as unknown[]).forEach((item, i) => {
    if (!isRecord(item) || !isRecord(item.message)) {
      log.skip('not-an-item', `history ${i}: not a history item with a message (${preview(JSON.stringify(item) ?? '')})`);
      return;
    }
    history.push(item);
  });
  const { messages, answers, models, replies } = chatMessages(history, log);
  const model = mostAnsweringModel(models, log);
  const wire = wireOf(model);
  let items: Json[];
  let ends: number[];
  let system: unknown;
  if (wire === 'openai-responses') ({ items, ends } = responsesItems(messages, answers));
  else if (wire === 'anthropic-messages') ({ items, ends, system } = anthropicItems(messages, answers));
  else {
    items = messages;
    ends = answers;
  }
  const calls: TranscriptCall[] = ends.map((end, k) => ({ end, reply: replies[k] ?? '' }));
  if (history.some((h) => h.conversationSummary !== undefined))
    log.note('Continue compacted this session (a conversation summary): the replay keeps the whole history');
  if (wire === 'anthropic-messages')
    log.note(
      "Continue's Anthropic adapter marks the last two user text blocks of each call for caching; the replay's requests carry no breakpoints",
    );
  else if (model !== undefined && /claude|anthropic/i.test(model))
    log.note(
      `${model} is a Claude model behind another provider's name: the replay is in Chat Completions (Continue's own form), priced by the model`,
    );
  log.note(
    'Continue sends its system prompt and tool declarations with every call; they are not in the session, so calls replay without them',
  );
  const base: Json = { ...(model ? { model } : {}), ...(system !== undefined ? { system } : {}) };
  return { source: 'continue', wire, base, items, calls, skipped: log.result() };
}
