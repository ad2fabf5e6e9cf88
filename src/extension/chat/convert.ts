/**
 * Chat messages as VS Code hands them to a language model provider, in a neutral form, and their
 * conversion to each endpoint's wire format. Pure (no `vscode`): provider.ts maps VS Code's part
 * classes to `ChatPart`s, and the unit tests build them directly.
 *
 * The wire bodies are the ones the engine reads (openai-chat, openai-responses, anthropic-messages),
 * so a tool result Copilot sends becomes a tool result the engine can project.
 */
import type { WireFormat } from '../../engine/types';
import type { ChatApi } from './models';

export type ChatPart =
  | { kind: 'text'; text: string }
  | { kind: 'toolCall'; callId: string; name: string; input: unknown }
  | { kind: 'toolResult'; callId: string; content: string; images?: { mimeType: string; base64: string }[] }
  | { kind: 'data'; mimeType: string; base64?: string; text?: string };

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  parts: ChatPart[];
}

export interface ChatTool {
  name: string;
  description: string;
  inputSchema?: object;
}

export interface RequestOptions {
  model: string;
  maxOutputTokens: number;
  tools: ChatTool[];
  /** 'required' when the caller demands a tool call (LanguageModelChatToolMode.Required) */
  toolMode?: 'auto' | 'required';
  /** the caller's modelOptions (temperature...), passed through as body fields */
  extra?: Record<string, unknown>;
}

export const WIRE_FORMAT: Record<ChatApi, WireFormat> = {
  'openai-responses': 'openai-responses',
  'openai-chat': 'openai-chat',
  anthropic: 'anthropic-messages',
};

const EMPTY_SCHEMA = { type: 'object', properties: {} };
const isImage = (mime: string) => /^image\/(png|jpe?g|gif|webp)$/i.test(mime);

function textOf(parts: readonly ChatPart[]): string {
  return parts.map((p) => (p.kind === 'text' ? p.text : p.kind === 'data' && p.text !== undefined ? p.text : '')).join('');
}

/** A data part that is not an image travels as text (JSON, plain text); anything binary is named, not sent. */
function dataText(p: Extract<ChatPart, { kind: 'data' }>): string {
  if (p.text !== undefined) return p.text;
  return `[${p.mimeType} data, ${Math.round(((p.base64?.length ?? 0) * 3) / 4)} bytes, not sent]`;
}

const argsText = (input: unknown) => (typeof input === 'string' ? input : JSON.stringify(input ?? {}));

// ---------------------------------------------------------------- OpenAI Chat Completions

function toOpenAIChat(messages: readonly ChatMessage[], o: RequestOptions): Record<string, unknown> {
  const out: Record<string, unknown>[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      out.push({ role: 'system', content: textOf(m.parts) });
      continue;
    }
    if (m.role === 'assistant') {
      const calls = m.parts.filter((p): p is Extract<ChatPart, { kind: 'toolCall' }> => p.kind === 'toolCall');
      const text = textOf(m.parts);
      out.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length
          ? { tool_calls: calls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: argsText(c.input) } })) }
          : {}),
      });
      continue;
    }
    // user: tool results first (they answer the previous assistant's calls), then what the user wrote
    const content: Record<string, unknown>[] = [];
    for (const p of m.parts) {
      if (p.kind === 'toolResult') {
        out.push({ role: 'tool', tool_call_id: p.callId, content: p.content });
        for (const img of p.images ?? [])
          content.push({ type: 'image_url', image_url: { url: `data:${img.mimeType};base64,${img.base64}` } });
      } else if (p.kind === 'text') content.push({ type: 'text', text: p.text });
      else if (p.kind === 'data' && isImage(p.mimeType) && p.base64)
        content.push({ type: 'image_url', image_url: { url: `data:${p.mimeType};base64,${p.base64}` } });
      else if (p.kind === 'data') content.push({ type: 'text', text: dataText(p) });
    }
    if (content.length)
      out.push({ role: 'user', content: content.every((c) => c.type === 'text') ? content.map((c) => c.text).join('') : content });
  }
  return {
    model: o.model,
    messages: out,
    stream: true,
    stream_options: { include_usage: true },
    max_completion_tokens: o.maxOutputTokens,
    ...(o.tools.length
      ? {
          tools: o.tools.map((t) => ({
            type: 'function',
            function: { name: t.name, description: t.description, parameters: t.inputSchema ?? EMPTY_SCHEMA },
          })),
          ...(o.toolMode === 'required' ? { tool_choice: 'required' } : {}),
        }
      : {}),
    ...o.extra,
  };
}

// ---------------------------------------------------------------- OpenAI Responses

function toOpenAIResponses(messages: readonly ChatMessage[], o: RequestOptions): Record<string, unknown> {
  const input: Record<string, unknown>[] = [];
  const instructions: string[] = [];
  for (const m of messages) {
    if (m.role === 'system') {
      instructions.push(textOf(m.parts));
      continue;
    }
    const content: Record<string, unknown>[] = [];
    const flush = () => {
      if (content.length) input.push({ role: m.role, content: content.splice(0) });
    };
    for (const p of m.parts) {
      if (p.kind === 'text') content.push({ type: m.role === 'assistant' ? 'output_text' : 'input_text', text: p.text });
      else if (p.kind === 'toolCall') {
        flush();
        input.push({ type: 'function_call', call_id: p.callId, name: p.name, arguments: argsText(p.input) });
      } else if (p.kind === 'toolResult') {
        flush();
        input.push({ type: 'function_call_output', call_id: p.callId, output: p.content });
        for (const img of p.images ?? []) content.push({ type: 'input_image', image_url: `data:${img.mimeType};base64,${img.base64}` });
      } else if (isImage(p.mimeType) && p.base64 && m.role === 'user')
        content.push({ type: 'input_image', image_url: `data:${p.mimeType};base64,${p.base64}` });
      else content.push({ type: m.role === 'assistant' ? 'output_text' : 'input_text', text: dataText(p) });
    }
    flush();
  }
  return {
    model: o.model,
    ...(instructions.length ? { instructions: instructions.join('\n\n') } : {}),
    input,
    stream: true,
    store: false,
    max_output_tokens: o.maxOutputTokens,
    ...(o.tools.length
      ? {
          tools: o.tools.map((t) => ({
            type: 'function',
            name: t.name,
            description: t.description,
            parameters: t.inputSchema ?? EMPTY_SCHEMA,
          })),
          ...(o.toolMode === 'required' ? { tool_choice: 'required' } : {}),
        }
      : {}),
    ...o.extra,
  };
}

// ---------------------------------------------------------------- Anthropic Messages

function toAnthropic(messages: readonly ChatMessage[], o: RequestOptions): Record<string, unknown> {
  const system: string[] = [];
  const out: { role: 'user' | 'assistant'; content: Record<string, unknown>[] }[] = [];
  const push = (role: 'user' | 'assistant', block: Record<string, unknown>) => {
    const last = out[out.length - 1];
    // Anthropic wants alternating roles: consecutive messages of one role become one
    if (last?.role === role) last.content.push(block);
    else out.push({ role, content: [block] });
  };
  for (const m of messages) {
    if (m.role === 'system') {
      system.push(textOf(m.parts));
      continue;
    }
    // tool results lead a user message
    const ordered =
      m.role === 'user' ? [...m.parts.filter((p) => p.kind === 'toolResult'), ...m.parts.filter((p) => p.kind !== 'toolResult')] : m.parts;
    for (const p of ordered) {
      if (p.kind === 'text') {
        if (p.text) push(m.role, { type: 'text', text: p.text });
      } else if (p.kind === 'toolCall')
        push('assistant', {
          type: 'tool_use',
          id: p.callId,
          name: p.name,
          input: typeof p.input === 'object' && p.input !== null ? p.input : {},
        });
      else if (p.kind === 'toolResult') {
        const images = (p.images ?? []).map((img) => ({
          type: 'image',
          source: { type: 'base64', media_type: img.mimeType, data: img.base64 },
        }));
        push('user', {
          type: 'tool_result',
          tool_use_id: p.callId,
          content: images.length ? [{ type: 'text', text: p.content }, ...images] : p.content,
        });
      } else if (isImage(p.mimeType) && p.base64)
        push(m.role, { type: 'image', source: { type: 'base64', media_type: p.mimeType, data: p.base64 } });
      else push(m.role, { type: 'text', text: dataText(p) });
    }
  }
  return {
    model: o.model,
    max_tokens: o.maxOutputTokens,
    ...(system.length ? { system: system.join('\n\n') } : {}),
    messages: out,
    stream: true,
    ...(o.tools.length
      ? {
          tools: o.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema ?? EMPTY_SCHEMA })),
          ...(o.toolMode === 'required' ? { tool_choice: { type: 'any' } } : {}),
        }
      : {}),
    ...o.extra,
  };
}

export function toWire(api: ChatApi, messages: readonly ChatMessage[], o: RequestOptions): Record<string, unknown> {
  return api === 'openai-responses'
    ? toOpenAIResponses(messages, o)
    : api === 'openai-chat'
      ? toOpenAIChat(messages, o)
      : toAnthropic(messages, o);
}

/**
 * The conversation's session name: a hash of its first user message (Copilot sends the whole
 * conversation every turn and names no id, so the first prompt is what stays the same).
 */
export function conversationKey(messages: readonly ChatMessage[], hash: (s: string) => string): string {
  const first = messages.find((m) => m.role === 'user' && m.parts.some((p) => p.kind === 'text'));
  return hash(first ? textOf(first.parts) : JSON.stringify(messages[0] ?? ''));
}
