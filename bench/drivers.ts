/**
 * The strategies the benchmark compares that are not Spillway's engine, each driven the way its
 * users drive it, one model call at a time:
 *
 * - LangChain context editing: `contextEditingMiddleware` (langchain v1) with `ClearToolUsesEdit`
 *   at its documented defaults. A LangChain agent hands the middleware's `wrapModelCall` a request
 *   whose `messages` is the agent state's own array, and the edit rewrites that array in place, so
 *   cleared results stay cleared in later calls (test/unit/bench-peers.test.ts runs a real
 *   `createAgent` next to this driver and checks both send the same tool results on every call). The driver keeps one LangChain message list per session,
 *   appends each call's new items, and calls `wrapModelCall` with it and a handler that captures
 *   what would have been sent.
 * - The AI SDK's `pruneMessages`, called on the whole `ModelMessage` history before every step (what
 *   `prepareStep` does); it is pure, so nothing carries over between calls.
 * - Observation masking (reference, not a peer): tool results older than the last 10 model calls
 *   become a one-line placeholder, re-evaluated on every call.
 * - Raw: the request as the agent sent it.
 *
 * Every driver returns the projected wire items; the same meter then measures all strategies.
 */
import { performance } from 'node:perf_hooks';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { pruneMessages, type ModelMessage } from 'ai';
import { ClearToolUsesEdit, contextEditingMiddleware } from 'langchain';
import type { Transcript } from '../src/replay/readers';
import { blocksOf, key, rebuildItems, type Block, type BlockEdits, type Item } from './blocks';

/* eslint-disable @typescript-eslint/no-explicit-any */

export interface Driver {
  /** projected items of call k (calls are projected in order, each once) and the strategy's own time */
  project(k: number): Promise<{ items: Item[]; ms: number }>;
}

export type DriverFactory = (t: Transcript) => Driver;

function allBlocks(t: Transcript): Block[][] {
  return t.items.map((it, i) => blocksOf(t.wire, it as Item, i));
}

/** Raw history: no reduction. */
export const rawDriver: DriverFactory = (t) => ({
  project: async (k) => ({ items: t.items.slice(0, t.calls[k]!.end) as Item[], ms: 0 }),
});

/** Placeholder of the masking reference (the wording of the observation-masking study). */
export const MASK_PLACEHOLDER = '[Old tool output omitted for brevity]';

/** Keep-the-last-N-turns observation masking: results from before the last `turns` calls are masked. */
export function maskingDriver(turns = 10): DriverFactory {
  return (t) => {
    const blocks = allBlocks(t);
    const memo = new Map<number, { sig: string; item: Item | null }>();
    return {
      project: async (k) => {
        const end = t.calls[k]!.end;
        const t0 = performance.now();
        const cutoff = k >= turns ? t.calls[k - turns]!.end : 0;
        const edits: BlockEdits = { kept: new Set(), replaced: new Map() };
        for (let i = 0; i < end; i++) {
          for (const b of blocks[i]!) {
            edits.kept.add(key(b));
            if (b.kind === 'result' && i < cutoff && b.text.length > MASK_PLACEHOLDER.length) edits.replaced.set(key(b), MASK_PLACEHOLDER);
          }
        }
        const items = rebuildItems(t.wire, t.items as Item[], blocks, end, edits, memo);
        return { items, ms: performance.now() - t0 };
      },
    };
  };
}

// ---- LangChain -----------------------------------------------------------------------------------

/** LangChain messages for one wire item, each with the blocks it carries. */
function toLangChain(bs: Block[]): Array<{ msg: BaseMessage; blocks: Block[] }> {
  const out: Array<{ msg: BaseMessage; blocks: Block[] }> = [];
  let ai: Block[] = [];
  let human: Block[] = [];
  const flushAi = () => {
    if (!ai.length) return;
    const text = ai
      .filter((b) => b.kind === 'assistant-text')
      .map((b) => b.text)
      .join('\n');
    const calls = ai
      .filter((b) => b.kind === 'call')
      .map((b) => ({ id: b.callId!, name: b.name ?? 'tool', args: b.args ?? {}, type: 'tool_call' as const }));
    out.push({ msg: new AIMessage({ content: text, tool_calls: calls }), blocks: ai });
    ai = [];
  };
  const flushHuman = () => {
    if (!human.length) return;
    out.push({ msg: new HumanMessage({ content: human.map((b) => b.text).join('\n') }), blocks: human });
    human = [];
  };
  for (const b of bs) {
    if (b.passive) continue;
    if (b.kind === 'result') {
      flushAi();
      flushHuman();
      out.push({ msg: new ToolMessage({ tool_call_id: b.callId ?? '', content: b.text }), blocks: [b] });
    } else if (b.kind === 'user' || (b.kind === 'other' && !ai.length)) {
      flushAi();
      human.push(b);
    } else if (b.kind === 'system') {
      flushAi();
      flushHuman();
      out.push({ msg: new SystemMessage({ content: b.text }), blocks: [b] });
    } else {
      flushHuman();
      ai.push(b);
    }
  }
  flushAi();
  flushHuman();
  return out;
}

export interface LangChainOptions {
  /** passed to `new ClearToolUsesEdit(...)`; `undefined` means its documented defaults */
  edit?: ConstructorParameters<typeof ClearToolUsesEdit>[0];
}

export function langchainDriver(opts: LangChainOptions = {}): DriverFactory {
  return (t) => {
    const blocks = allBlocks(t);
    const middleware = contextEditingMiddleware({ edits: [new ClearToolUsesEdit(opts.edit)] });
    const wrap = middleware.wrapModelCall!;
    const state: BaseMessage[] = [];
    const origin = new Map<BaseMessage, Block[]>();
    const resultBlock = new Map<string, Block>();
    const passive = new Set<string>();
    const memo = new Map<number, { sig: string; item: Item | null }>();
    let systemPrompt = '';
    let converted = 0;
    return {
      project: async (k) => {
        const end = t.calls[k]!.end;
        for (; converted < end; converted++) {
          const bs = blocks[converted]!;
          // an agent's leading system message is its system prompt, not part of the state
          if (converted === 0 && bs.length === 1 && bs[0]!.kind === 'system') {
            systemPrompt = bs[0]!.text;
            passive.add(key(bs[0]!));
            continue;
          }
          for (const b of bs) if (b.passive) passive.add(key(b));
          for (const { msg, blocks: mb } of toLangChain(bs)) {
            origin.set(msg, mb);
            for (const b of mb) if (b.kind === 'result' && b.callId) resultBlock.set(b.callId, b);
            state.push(msg);
          }
        }
        let sent: BaseMessage[] = [];
        const request = { model: {}, systemPrompt, messages: state, tools: [], state: { messages: state }, runtime: {} };
        const t0 = performance.now();
        await wrap(request as any, async (req: any) => {
          sent = [...req.messages];
          return new AIMessage('');
        });
        const ms = performance.now() - t0;
        const edits: BlockEdits = { kept: new Set(passive), replaced: new Map() };
        for (const msg of sent) {
          const mb = origin.get(msg);
          if (mb) {
            for (const b of mb) edits.kept.add(key(b));
            continue;
          }
          if (ToolMessage.isInstance(msg)) {
            const b = resultBlock.get(msg.tool_call_id);
            if (!b) continue;
            edits.kept.add(key(b));
            const text = typeof msg.content === 'string' ? msg.content : JSON.stringify(msg.content);
            if (text !== b.text) edits.replaced.set(key(b), text);
          }
        }
        return { items: rebuildItems(t.wire, t.items as Item[], blocks, end, edits, memo), ms };
      },
    };
  };
}

// ---- AI SDK --------------------------------------------------------------------------------------

export type PruneOptions = Omit<Parameters<typeof pruneMessages>[0], 'messages'>;

/**
 * The AI SDK's message list for a session, grown call by call: a step's assistant parts (text,
 * reasoning, tool calls) form one assistant message and its tool results one tool message, as the
 * SDK records them.
 */
export function aiSdkDriver(options: PruneOptions): DriverFactory {
  return (t) => {
    const blocks = allBlocks(t);
    const messages: ModelMessage[] = [];
    const partOrigin = new Map<object, Block>();
    const messageOrigin = new Map<object, Block>();
    const passive = new Set<string>();
    const names = new Map<string, string>();
    const memo = new Map<number, { sig: string; item: Item | null }>();
    let converted = 0;
    const last = () => messages[messages.length - 1] as any;
    const push = (b: Block) => {
      if (b.passive) {
        passive.add(key(b));
        return;
      }
      if (b.kind === 'system' || b.kind === 'user') {
        const m: any = b.kind === 'system' ? { role: 'system', content: b.text } : { role: 'user', content: b.text };
        messageOrigin.set(m, b);
        messages.push(m);
        return;
      }
      if (b.kind === 'result') {
        const part = {
          type: 'tool-result' as const,
          toolCallId: b.callId ?? '',
          toolName: names.get(b.callId ?? '') ?? 'tool',
          output: { type: 'text' as const, value: b.text },
        };
        partOrigin.set(part, b);
        if (last()?.role === 'tool') last().content.push(part);
        else messages.push({ role: 'tool', content: [part] });
        return;
      }
      let part: any;
      if (b.kind === 'call') {
        names.set(b.callId ?? '', b.name ?? 'tool');
        part = { type: 'tool-call', toolCallId: b.callId ?? '', toolName: b.name ?? 'tool', input: b.args ?? {} };
      } else if (b.kind === 'reasoning') part = { type: 'reasoning', text: b.text };
      else part = { type: 'text', text: b.text };
      partOrigin.set(part, b);
      if (last()?.role === 'assistant') last().content.push(part);
      else messages.push({ role: 'assistant', content: [part] });
    };
    return {
      project: async (k) => {
        const end = t.calls[k]!.end;
        for (; converted < end; converted++) for (const b of blocks[converted]!) push(b);
        const t0 = performance.now();
        const pruned = pruneMessages({ messages, ...options });
        const ms = performance.now() - t0;
        const edits: BlockEdits = { kept: new Set(passive), replaced: new Map() };
        for (const m of pruned) {
          if (typeof m.content === 'string') {
            const b = messageOrigin.get(m);
            if (b) edits.kept.add(key(b));
            continue;
          }
          for (const part of m.content as object[]) {
            const b = partOrigin.get(part);
            if (b) edits.kept.add(key(b));
          }
        }
        return { items: rebuildItems(t.wire, t.items as Item[], blocks, end, edits, memo), ms };
      },
    };
  };
}
