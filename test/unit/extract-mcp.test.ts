/**
 * `extract_output` over MCP: the `spillway mcp` server (src/cli/mcp.ts) and the official SDK's client,
 * linked in memory, the client's model scripted behind its sampling handler. Proves the sampling
 * plumbing end to end; the stdio server is tested in mcp.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CreateMessageRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../src/cli/mcp';
import { MemoryStore } from '../../src/store';
import { handleFor } from '../../src/engine/handle';

const OUTPUT = Array.from({ length: 400 }, (_, i) => (i === 250 ? 'FAIL src/a.test.ts:9 boom' : `ok ${i}`)).join('\n');
const store = new MemoryStore();
const HANDLE = handleFor(OUTPUT);
store.put(HANDLE, OUTPUT, {
  tool: 'bash',
  callId: 'c',
  stage: 'offload',
  chars: OUTPUT.length,
  bytes: OUTPUT.length,
  lines: 400,
  tokens: 1,
});

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function connect(sampling: boolean) {
  const server = createMcpServer(store);
  const client = new Client({ name: 'scripted-client', version: '0.0.0' }, { capabilities: sampling ? { sampling: {} } : {} });
  const prompts: string[] = [];
  if (sampling)
    client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
      const c = req.params.messages[0]!.content as { type: string; text: string };
      prompts.push(c.text);
      return { role: 'assistant', model: 'scripted', content: { type: 'text', text: 'src/a.test.ts:9 failed: boom' } };
    });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  open.push(client, server);
  return { client, prompts };
}

describe('extract_output over MCP', () => {
  it("answers with the client's model through sampling, the answer naming the handle and what was read", async () => {
    const { client, prompts } = await connect(true);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('extract_output');
    const r = await client.callTool({ name: 'extract_output', arguments: { handle: HANDLE, question: 'what FAIL lines are there?' } });
    expect(r.isError).toBeFalsy();
    const text = (r.content as { text: string }[])[0]!.text;
    expect(text).toBe(
      `[spillway extract ${HANDLE}, read-grep: read 1 match of /FAIL/i with 3 lines of context, 7 lines of 400]\nsrc/a.test.ts:9 failed: boom`,
    );
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('251:FAIL src/a.test.ts:9 boom');
  });

  it('is a tool error saying sampling is missing when the client does not offer it', async () => {
    const { client } = await connect(false);
    const r = await client.callTool({ name: 'extract_output', arguments: { handle: HANDLE, question: 'what failed?' } });
    expect(r.isError).toBe(true);
    expect((r.content as { text: string }[])[0]!.text).toMatch(/did not declare the sampling capability/);
  });
});
