/**
 * Wire items as blocks, so a peer that works on its own message type (LangChain messages, AI SDK
 * ModelMessages) can be fed any of the engine's three wire formats and its output turned back into
 * the same wire format. Every wire item splits into blocks (a text, a tool call, a tool result, a
 * reasoning part, something else); a peer's output says which blocks survived and which tool results
 * it rewrote, and `rebuildItems` makes the projected wire items from that. An item the peer left
 * alone comes back as the very same object, so its serialisation and token count are cached and the
 * cost accounting sees exactly what changed.
 */
import type { WireFormat } from '../src/engine/types';

/* eslint-disable @typescript-eslint/no-explicit-any */
export type Item = Record<string, any>;

type BlockKind = 'system' | 'user' | 'assistant-text' | 'call' | 'result' | 'reasoning' | 'other';

export interface Block {
  /** index of the wire item in the transcript */
  item: number;
  /** index of the block inside the item (content block, or 0 for the item's text, 1.. for tool_calls) */
  block: number;
  kind: BlockKind;
  callId?: string;
  name?: string;
  /** call input as an object */
  args?: Record<string, unknown>;
  /** the text a peer sees (message text, tool result text, reasoning summary) */
  text: string;
  /** the original content value (string or array), for peers that keep content parts */
  content?: unknown;
  /** the peer is never shown this block (an empty assistant text): it survives whatever the peer does */
  passive?: boolean;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((b: any) => (typeof b === 'string' ? b : typeof b?.text === 'string' ? b.text : '')).join('');
  }
  return '';
}

function parseArgs(s: unknown): Record<string, unknown> {
  if (typeof s !== 'string') return (s && typeof s === 'object' ? s : {}) as Record<string, unknown>;
  try {
    const v = JSON.parse(s);
    return v && typeof v === 'object' && !Array.isArray(v) ? v : { input: v };
  } catch {
    return { input: s };
  }
}

/** The blocks of one wire item. */
export function blocksOf(wire: WireFormat, it: Item, item: number): Block[] {
  if (wire === 'openai-chat') {
    const role = it.role;
    if (role === 'system' || role === 'developer')
      return [{ item, block: 0, kind: 'system', text: textOf(it.content), content: it.content }];
    if (role === 'tool') return [{ item, block: 0, kind: 'result', callId: it.tool_call_id, text: textOf(it.content) }];
    if (role === 'assistant') {
      const text = textOf(it.content);
      const out: Block[] = [{ item, block: 0, kind: 'assistant-text', text, content: it.content, ...(text ? {} : { passive: true }) }];
      (Array.isArray(it.tool_calls) ? it.tool_calls : []).forEach((c: any, j: number) => {
        const fn = c.function ?? c.custom ?? {};
        out.push({ item, block: j + 1, kind: 'call', callId: c.id, name: fn.name, args: parseArgs(fn.arguments ?? fn.input), text: '' });
      });
      return out;
    }
    return [{ item, block: 0, kind: role === 'user' ? 'user' : 'other', text: textOf(it.content), content: it.content }];
  }
  if (wire === 'anthropic-messages') {
    const role = it.role === 'assistant' ? 'assistant' : 'user';
    if (!Array.isArray(it.content))
      return [{ item, block: 0, kind: role === 'assistant' ? 'assistant-text' : 'user', text: textOf(it.content), content: it.content }];
    return it.content.map((b: any, j: number): Block => {
      if (b?.type === 'tool_result') return { item, block: j, kind: 'result', callId: b.tool_use_id, text: textOf(b.content) };
      if (b?.type === 'tool_use') return { item, block: j, kind: 'call', callId: b.id, name: b.name, args: parseArgs(b.input), text: '' };
      if (b?.type === 'thinking' || b?.type === 'redacted_thinking')
        return { item, block: j, kind: 'reasoning', text: typeof b.thinking === 'string' ? b.thinking : '' };
      if (b?.type === 'text')
        return { item, block: j, kind: role === 'assistant' ? 'assistant-text' : 'user', text: b.text ?? '', content: [b] };
      return { item, block: j, kind: 'other', text: '', content: [b] };
    });
  }
  // openai-responses: one block per input item
  const type = it.type ?? (it.role ? 'message' : undefined);
  if (type === 'message') {
    const kind: BlockKind = it.role === 'assistant' ? 'assistant-text' : it.role === 'user' ? 'user' : 'system';
    return [{ item, block: 0, kind, text: textOf(it.content), content: it.content }];
  }
  if (type === 'function_call' || type === 'custom_tool_call') {
    return [
      {
        item,
        block: 0,
        kind: 'call',
        callId: it.call_id,
        name: it.name,
        args: type === 'function_call' ? parseArgs(it.arguments) : { input: it.input },
        text: '',
      },
    ];
  }
  if (type === 'function_call_output' || type === 'custom_tool_call_output') {
    return [{ item, block: 0, kind: 'result', callId: it.call_id, text: textOf(it.output) }];
  }
  if (type === 'reasoning') return [{ item, block: 0, kind: 'reasoning', text: textOf(it.summary) }];
  return [{ item, block: 0, kind: 'other', text: '' }];
}

/** What a peer did to the blocks of one call's request. */
export interface BlockEdits {
  /** blocks still sent, keyed `item:block` */
  kept: Set<string>;
  /** tool results whose text was replaced, keyed `item:block` */
  replaced: Map<string, string>;
}

export const key = (b: { item: number; block: number }) => `${b.item}:${b.block}`;

/**
 * The projected wire items of a call whose items are `items[0..end)`, given what survived. Items
 * left whole come back as the same objects; `memo` keeps rebuilt items between calls so an edit a
 * peer repeats identically yields an identical object too.
 */
export function rebuildItems(
  wire: WireFormat,
  items: readonly Item[],
  blocks: readonly Block[][],
  end: number,
  edits: BlockEdits,
  memo: Map<number, { sig: string; item: Item | null }>,
): Item[] {
  const out: Item[] = [];
  for (let i = 0; i < end; i++) {
    const bs = blocks[i]!;
    const survives = (b: Block) => b.passive || edits.kept.has(key(b));
    const whole = bs.every((b) => survives(b) && !edits.replaced.has(key(b)));
    if (whole) {
      out.push(items[i]!);
      continue;
    }
    const sig = bs
      .map((b) =>
        survives(b) ? (edits.replaced.has(key(b)) ? `r${edits.replaced.get(key(b))!.length}:${edits.replaced.get(key(b))}` : 'k') : 'd',
      )
      .join('|');
    const m = memo.get(i);
    if (m && m.sig === sig) {
      if (m.item) out.push(m.item);
      continue;
    }
    const rebuilt = rebuildOne(wire, items[i]!, bs, survives, edits);
    memo.set(i, { sig, item: rebuilt });
    if (rebuilt) out.push(rebuilt);
  }
  return out;
}

function rebuildOne(wire: WireFormat, it: Item, bs: Block[], survives: (b: Block) => boolean, edits: BlockEdits): Item | null {
  const rep = (b: Block) => edits.replaced.get(key(b));
  if (wire === 'openai-chat') {
    if (it.role === 'assistant') {
      const calls = (it.tool_calls ?? []).filter((_: unknown, j: number) => survives(bs[j + 1]!));
      const keepText = survives(bs[0]!) && !bs[0]!.passive;
      if (!keepText && calls.length === 0) return null;
      const o: Item = { ...it, content: keepText ? it.content : null };
      if (calls.length) o.tool_calls = calls;
      else delete o.tool_calls;
      return o;
    }
    const b = bs[0]!;
    if (!survives(b)) return null;
    const r = rep(b);
    return r === undefined ? it : { ...it, content: r };
  }
  if (wire === 'anthropic-messages') {
    if (!Array.isArray(it.content)) return survives(bs[0]!) ? it : null;
    const content = it.content.flatMap((c: any, j: number) => {
      const b = bs[j]!;
      if (!survives(b)) return [];
      const r = rep(b);
      return [r === undefined ? c : { ...c, content: r }];
    });
    return content.length ? { ...it, content } : null;
  }
  const b = bs[0]!;
  if (!survives(b)) return null;
  const r = rep(b);
  return r === undefined ? it : { ...it, output: r };
}
