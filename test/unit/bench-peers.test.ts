/**
 * The peers are driven as their users drive them: the LangChain driver sends, call by call, what a
 * real `createAgent` with the same middleware sends its model; the AI SDK driver's projection is
 * `pruneMessages`' output turned back into the wire format.
 */
import { AIMessage, type BaseMessage } from '@langchain/core/messages';
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import type { ChatResult } from '@langchain/core/outputs';
import { ClearToolUsesEdit, contextEditingMiddleware, createAgent, tool } from 'langchain';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Transcript } from '../../src/replay/readers';
import { aiSdkDriver, langchainDriver } from '../../bench/drivers';
import { expectSome } from '../support/expect';

const CALLS = 8;
const output = (k: number) => `out${k} ` + 'x'.repeat(2000);
const edit = { trigger: { tokens: 1500 }, keep: { messages: 1 } };

/** A model that calls the `big` tool CALLS times, recording the tool results it was sent. */
class Scripted extends BaseChatModel {
  seen: string[][] = [];
  private k = 0;
  _llmType(): string {
    return 'scripted';
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.seen.push(messages.filter((m) => m.getType() === 'tool').map((m) => String(m.content)));
    const k = this.k++;
    const message =
      k < CALLS ? new AIMessage({ content: '', tool_calls: [{ id: `c${k}`, name: 'big', args: { k } }] }) : new AIMessage('done');
    return { generations: [{ text: '', message }] };
  }
}

/** The same session as a Chat Completions transcript: call k sends the user message and k rounds. */
function transcript(): Transcript {
  const items: unknown[] = [{ role: 'user', content: 'go' }];
  for (let k = 0; k < CALLS; k++) {
    items.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `c${k}`, type: 'function', function: { name: 'big', arguments: JSON.stringify({ k }) } }],
    });
    items.push({ role: 'tool', tool_call_id: `c${k}`, content: output(k) });
  }
  return {
    source: 'openai-chat',
    wire: 'openai-chat',
    base: {},
    items,
    calls: Array.from({ length: CALLS + 1 }, (_, k) => ({ end: 1 + 2 * k, reply: '' })),
    skipped: { total: 0, byReason: {}, notes: [] },
  };
}

const toolContents = (items: Array<Record<string, unknown>>) => items.filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('peer drivers', () => {
  it('LangChain: the driver sends what a real createAgent with contextEditingMiddleware sends, call by call', async () => {
    const model = new Scripted({});
    const big = tool(async ({ k }: { k: number }) => output(k), {
      name: 'big',
      description: 'big output',
      schema: z.object({ k: z.number() }),
    });
    const agent = createAgent({ model, tools: [big], middleware: [contextEditingMiddleware({ edits: [new ClearToolUsesEdit(edit)] })] });
    await agent.invoke({ messages: [{ role: 'user', content: 'go' }] });
    expect(model.seen).toHaveLength(CALLS + 1);
    // clears are sticky and batched: the agent's state keeps what the middleware cleared
    expectSome(model.seen, (s) => s.includes('[cleared]'));

    const t = transcript();
    const driver = langchainDriver({ edit })(t);
    for (let k = 0; k <= CALLS; k++) {
      const { items } = await driver.project(k);
      expect(toolContents(items as Array<Record<string, unknown>>), `call ${k}`).toEqual(model.seen[k]);
    }
  });

  it('AI SDK: pruneMessages before the last 2 messages drops older tool calls with their results', async () => {
    const t = transcript();
    const driver = aiSdkDriver({ toolCalls: 'before-last-2-messages' })(t);
    const { items } = await driver.project(CALLS);
    // ModelMessages: user, then (assistant, tool) per round; the last two are round CALLS-1
    expect(items).toEqual([t.items[0], t.items[t.items.length - 2], t.items[t.items.length - 1]]);
    // unchanged items come back as the very same objects
    expect(items[1]).toBe(t.items[t.items.length - 2]);
  });
});
