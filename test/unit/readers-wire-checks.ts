/**
 * Shape checks for the requests transcript readers produce: what a provider would reject (roles out
 * of order, a tool result without its call) is listed as a problem. Shared by the readers tests.
 */
import type { WireFormat } from '../../src/engine/types';

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const blocks = (content: unknown): Json[] => (Array.isArray(content) ? content.filter(isRecord) : []);

/** Anthropic: starts with user, roles alternate, each tool_result answers a tool_use of the message just before. */
export function anthropicProblems(messages: unknown[]): string[] {
  const problems: string[] = [];
  messages.forEach((m, i) => {
    if (!isRecord(m)) return void problems.push(`messages[${i}] is not an object`);
    if (m.role !== 'user' && m.role !== 'assistant') problems.push(`messages[${i}] has role ${String(m.role)}`);
    if (i === 0 && m.role !== 'user') problems.push('the first message is not from the user');
    const prev = messages[i - 1];
    if (i > 0 && isRecord(prev) && prev.role === m.role) problems.push(`messages[${i}] repeats role ${String(m.role)}`);
    const uses = new Set(
      isRecord(prev) && prev.role === 'assistant'
        ? blocks(prev.content)
            .filter((b) => b.type === 'tool_use')
            .map((b) => b.id)
        : [],
    );
    let seenOther = false;
    for (const b of blocks(m.content)) {
      if (b.type === 'tool_result') {
        if (m.role !== 'user') problems.push(`messages[${i}]: tool_result in an assistant message`);
        if (!uses.has(b.tool_use_id))
          problems.push(`messages[${i}]: tool_result ${String(b.tool_use_id)} does not answer a tool_use of messages[${i - 1}]`);
        if (seenOther) problems.push(`messages[${i}]: tool_result ${String(b.tool_use_id)} after other content`);
      } else seenOther = true;
      if (b.type === 'tool_use' && (typeof b.id !== 'string' || typeof b.name !== 'string' || b.name === '')) {
        problems.push(`messages[${i}]: tool_use without id or name`);
      }
    }
    // every tool_use must be answered in the next message, when there is one
    const next = messages[i + 1];
    if (m.role === 'assistant' && next !== undefined) {
      const answered = new Set(
        blocks(isRecord(next) ? next.content : undefined)
          .filter((b) => b.type === 'tool_result')
          .map((b) => b.tool_use_id),
      );
      for (const b of blocks(m.content)) {
        if (b.type === 'tool_use' && !answered.has(b.id))
          problems.push(`messages[${i}]: tool_use ${String(b.id)} is not answered in messages[${i + 1}]`);
      }
    }
  });
  return problems;
}

/** Chat: each tool message answers a tool call of the assistant message before its run of tool messages. */
function chatProblems(messages: unknown[]): string[] {
  const problems: string[] = [];
  let open = new Map<string, string>();
  messages.forEach((m, i) => {
    if (!isRecord(m)) return void problems.push(`messages[${i}] is not an object`);
    if (!['system', 'developer', 'user', 'assistant', 'tool'].includes(String(m.role)))
      problems.push(`messages[${i}] has role ${String(m.role)}`);
    if ('extra' in m) problems.push(`messages[${i}] carries a non-API "extra" field`);
    if (m.role === 'tool') {
      const id = m.tool_call_id;
      if (typeof id !== 'string' || !open.has(id)) problems.push(`messages[${i}]: tool result ${String(id)} answers no pending tool call`);
      else open.delete(id);
      return;
    }
    if (open.size > 0) problems.push(`messages[${i}]: tool calls ${[...open.keys()].join(', ')} were not answered`);
    open = new Map();
    if (m.role === 'assistant' && Array.isArray(m.tool_calls)) {
      for (const call of m.tool_calls) {
        if (
          !isRecord(call) ||
          typeof call.id !== 'string' ||
          !isRecord(call.function) ||
          typeof call.function.name !== 'string' ||
          call.function.name === ''
        ) {
          problems.push(`messages[${i}]: a tool call without id or function name`);
          continue;
        }
        if (typeof call.function.arguments !== 'string') problems.push(`messages[${i}]: tool call ${call.id} arguments are not a string`);
        open.set(call.id, call.function.name);
      }
    }
  });
  return problems;
}

/** Responses: each *_call_output answers an earlier call with a name; every item has a type or a role. */
function responsesProblems(input: unknown[]): string[] {
  const problems: string[] = [];
  const calls = new Map<string, string>();
  input.forEach((item, i) => {
    if (!isRecord(item)) return void problems.push(`input[${i}] is not an object`);
    if (typeof item.type !== 'string' && typeof item.role !== 'string') problems.push(`input[${i}] has neither type nor role`);
    if (item.type === 'function_call' || item.type === 'custom_tool_call') {
      if (typeof item.call_id !== 'string' || typeof item.name !== 'string' || item.name === '')
        problems.push(`input[${i}]: call without call_id or name`);
      else calls.set(item.call_id, item.name);
    }
    if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
      if (typeof item.call_id !== 'string' || !calls.has(item.call_id))
        problems.push(`input[${i}]: output ${String(item.call_id)} answers no earlier call`);
    }
  });
  return problems;
}

export function wireProblems(wire: WireFormat, items: unknown[]): string[] {
  if (wire === 'anthropic-messages') return anthropicProblems(items);
  if (wire === 'openai-chat') return chatProblems(items);
  return responsesProblems(items);
}

/** Tool results in the items with the name of the call each answers (undefined when unmatched). */
export function toolResults(wire: WireFormat, items: unknown[]): { id: string; name: string | undefined }[] {
  const names = new Map<string, string>();
  const out: { id: string; name: string | undefined }[] = [];
  for (const item of items) {
    if (!isRecord(item)) continue;
    if (wire === 'anthropic-messages') {
      for (const b of blocks(item.content)) {
        if (b.type === 'tool_use') names.set(String(b.id), String(b.name));
        if (b.type === 'tool_result') out.push({ id: String(b.tool_use_id), name: names.get(String(b.tool_use_id)) });
      }
    } else if (wire === 'openai-chat') {
      if (Array.isArray(item.tool_calls)) {
        for (const c of item.tool_calls) if (isRecord(c) && isRecord(c.function)) names.set(String(c.id), String(c.function.name));
      }
      if (item.role === 'tool') out.push({ id: String(item.tool_call_id), name: names.get(String(item.tool_call_id)) });
    } else {
      if (item.type === 'function_call' || item.type === 'custom_tool_call') names.set(String(item.call_id), String(item.name));
      if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
        out.push({ id: String(item.call_id), name: names.get(String(item.call_id)) });
      }
    }
  }
  return out;
}
