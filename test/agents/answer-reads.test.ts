/**
 * An agent built on an SDK, with neither a shell nor MCP and no tools of its own, reads back through
 * `spillway proxy --answer-reads` (issue 20, item 6): the official `openai` client, streaming, talks
 * to the built CLI (dist/cli.js) in front of a scripted model on 127.0.0.1. The model sees a marker,
 * reads the whole output back page by page with the read tool the proxy added, and the pages it got
 * reassemble the output byte for byte; the client receives only the final answer.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream, defaultReply, type FakeUpstream, type Received } from '../proxy/fake-upstream';
import { OPENAI_KEY, bigLog, chatRequest } from '../proxy/support';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';
import { CLI, ROOT, startProxy, type Proxy } from './spillway';

const OUTPUT = bigLog(900, 'sdk-agent');
/** Characters per page the scripted model asks for: under the read tool's answer bound, so no page is clipped. */
const PAGE = 7_500;
const READ_TOOL = 'spillway_read_output';

const root = mkdtempSync(join(tmpdir(), 'sw-answer-reads-'));
let upstream: FakeUpstream;
let proxy: Proxy;

type Message = { role: string; content?: string | null; tool_call_id?: string };

/** The scripted model: read page 0, learn the size from its header, read every other page at once, then answer. */
function model(r: Received) {
  const body = JSON.parse(r.body!.toString('utf8')) as { messages: Message[]; stream?: boolean; tools?: { function: { name: string } }[] };
  const pages = body.messages.filter((m) => m.role === 'tool' && m.tool_call_id?.startsWith('page_')).map((m) => String(m.content));
  const handle = new RegExp(HANDLE_IN_TEXT.source).exec(JSON.stringify(body.messages))?.[0];
  const total = pages.length ? Number(/, ([\d,]+) chars\]$/.exec(pages[0]!.split('\n')[0]!)![1]!.replace(/,/g, '')) : PAGE;
  const count = Math.ceil(total / PAGE);
  const wanted = pages.length === 0 ? [0] : pages.length < count ? Array.from({ length: count - 1 }, (_, i) => i + 1) : [];
  if (!handle || !wanted.length) return defaultReply(r);
  const chunk = (delta: unknown, finish: string | null) => ({
    id: 'chatcmpl-p',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gpt-4.1',
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const calls = wanted.map((p, index) => ({
    index,
    id: `page_${p}`,
    type: 'function',
    function: { name: READ_TOOL, arguments: JSON.stringify({ handle, offset: p * PAGE, limit: PAGE }) },
  }));
  return {
    kind: 'sse' as const,
    chunks: [
      `data: ${JSON.stringify(chunk({ role: 'assistant', tool_calls: calls }, null))}\n\n`,
      `data: ${JSON.stringify(chunk({}, 'tool_calls'))}\n\n`,
      'data: [DONE]\n\n',
    ],
  };
}

beforeAll(async () => {
  if (!existsSync(CLI)) execFileSync(process.execPath, [join(ROOT, 'esbuild.mjs')], { cwd: ROOT, stdio: 'inherit' });
  upstream = await startFakeUpstream({ respond: model });
  proxy = await startProxy(root, ['--answer-reads', '--openai-upstream', `${upstream.url}/v1`]);
}, 120_000);

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  rmSync(root, { recursive: true, force: true });
});

it('an SDK client with no tools reads a stored output back byte for byte through --answer-reads, and sees only the final answer', async () => {
  const request = chatRequest(OUTPUT) as Record<string, unknown>;
  delete request.tools;
  const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${proxy.url}/v1`, maxRetries: 0, timeout: 30_000 });
  const stream = await openai.chat.completions.create({
    ...(request as unknown as OpenAI.ChatCompletionCreateParamsStreaming),
    stream: true,
  });
  let text = '';
  let calls = 0;
  for await (const c of stream) {
    text += c.choices[0]?.delta.content ?? '';
    calls += c.choices[0]?.delta.tool_calls?.length ?? 0;
  }
  expect([text, calls]).toEqual(['All tests pass.', 0]);

  const rounds = upstream.received;
  expect(rounds.length, proxy.out()).toBe(3);
  const first = JSON.parse(rounds[0]!.body!.toString('utf8')) as { tools: { function: { name: string } }[]; messages: Message[] };
  expect(first.tools.map((t) => t.function.name)).toEqual([READ_TOOL]);
  const sent = String(first.messages.find((m) => m.tool_call_id === 'call_tests')!.content);
  expect(sent.length, 'the output went upstream as a marker, not in full').toBeLessThan(OUTPUT.length / 4);
  const last = JSON.parse(rounds[2]!.body!.toString('utf8')) as { messages: Message[] };
  const pages = last.messages
    .filter((m) => m.role === 'tool' && m.tool_call_id?.startsWith('page_'))
    .sort((a, b) => Number(a.tool_call_id!.slice(5)) - Number(b.tool_call_id!.slice(5)))
    .map((m) => String(m.content).slice(String(m.content).indexOf('\n') + 1));
  expect(pages.length).toBeGreaterThan(2);
  expect(pages.join('')).toBe(OUTPUT);
  expect(proxy.out()).toMatch(/answered \d+ spillway_read_output call\(s\) from the store \(round 2\)/);
});
