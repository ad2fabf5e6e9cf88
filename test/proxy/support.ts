/**
 * Shared pieces of the proxy tests: realistic agent requests carrying a big tool output in each
 * wire format, a raw HTTP client that keeps the exact bytes and how the response ended, and the
 * test credentials that must never reach the disk or the log.
 */
import * as http from 'node:http';
import { WebSocket } from 'ws';
import { join } from 'node:path';
import type { ProxyOptions } from '../../src/proxy';

export const OPENAI_KEY = 'sk-test-OPENAIKEY-2f9c81d0a7e64b1f9d3c';
export const ANTHROPIC_KEY = 'sk-ant-test-ANTHROPICKEY-77e1c0b4a2d94e';
export const COOKIE_SECRET = 'sess-COOKIESECRET-31a7';
export const ORG_SECRET = 'org-ORGSECRET-9911';
export const SECRETS = [OPENAI_KEY, ANTHROPIC_KEY, COOKIE_SECRET, ORG_SECRET, 'OPENAIKEY', 'ANTHROPICKEY', 'COOKIESECRET', 'ORGSECRET'];

/** A proxy on a free port in front of a fake upstream (both providers), its store and recordings under `root`, logging into `log`. */
export function proxyInFrontOf(upstreamUrl: string, root: string, log: string[], extra: ProxyOptions = {}): ProxyOptions {
  return {
    port: 0,
    storeDir: join(root, 'store'),
    sessionsDir: join(root, 'sessions'),
    openaiUpstream: `${upstreamUrl}/v1`,
    anthropicUpstream: upstreamUrl,
    log: (l) => log.push(l),
    ...extra,
  };
}

/** A test log of `lines` lines with an error and a path near the end, like `npm test` output. */
export function bigLog(lines = 1500, tag = ''): string {
  return Array.from({ length: lines }, (_, i) =>
    i === lines - 20 ? `FAIL src/parser.test.ts:88 expected 3 got 4 ${tag}` : `  ✓ test ${i} passes in ${i % 17} ms ${tag}`,
  ).join('\n');
}

export const SYSTEM = 'You are a careful coding agent. Use the tools to inspect and change the repository.';

export function chatRequest(
  output: string,
  extra: Record<string, unknown> = {},
  firstUser = 'Run the tests and fix what fails.',
): Record<string, unknown> {
  return {
    model: 'gpt-4.1',
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: firstUser },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_tests', type: 'function', function: { name: 'bash', arguments: '{"command":"npm test"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_tests', content: output },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_ls', type: 'function', function: { name: 'bash', arguments: '{"command":"ls"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_ls', content: 'package.json\nsrc\ntest' },
    ],
    tools: [
      {
        type: 'function',
        function: {
          name: 'bash',
          description: 'Run a shell command',
          parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
        },
      },
    ],
    temperature: 0.2,
    ...extra,
  };
}

export function responsesRequest(output: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'gpt-5-codex',
    instructions: SYSTEM,
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Run the tests and fix what fails.' }] },
      { type: 'function_call', call_id: 'call_tests', name: 'shell', arguments: '{"command":["npm","test"]}' },
      { type: 'function_call_output', call_id: 'call_tests', output },
    ],
    tools: [
      {
        type: 'function',
        name: 'shell',
        description: 'Run a command',
        parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } },
        strict: false,
      },
    ],
    store: false,
    prompt_cache_key: 'conv-1',
    ...extra,
  };
}

export function anthropicRequest(output: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    model: 'claude-opus-4-5',
    max_tokens: 1024,
    system: [{ type: 'text', text: SYSTEM, cache_control: { type: 'ephemeral' } }],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'Run the tests and fix what fails.' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Running them.' },
          { type: 'tool_use', id: 'toolu_tests', name: 'Bash', input: { command: 'npm test' } },
        ],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_tests', content: output, cache_control: { type: 'ephemeral' } }],
      },
    ],
    tools: [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }],
    ...extra,
  };
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  rawHeaders: string[];
  body: Buffer;
  /** chunks with their arrival time (ms, performance.now) */
  chunks: Array<{ at: number; bytes: Buffer }>;
  /** how the body ended: 'end', or the error/abort that cut it */
  ended: 'end' | 'aborted' | string;
}

export function rawRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string | string[]>; body?: string | Buffer; timeoutMs?: number } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: options.method ?? 'POST', headers: options.headers ?? {}, agent: false }, (res) => {
      const chunks: Array<{ at: number; bytes: Buffer }> = [];
      let ended: RawResponse['ended'] | undefined;
      const finish = () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          rawHeaders: res.rawHeaders,
          body: Buffer.concat(chunks.map((c) => c.bytes)),
          chunks,
          ended: ended ?? 'aborted',
        });
      };
      res.on('data', (b: Buffer) => chunks.push({ at: performance.now(), bytes: b }));
      res.on('end', () => {
        ended = 'end';
      });
      res.on('aborted', () => {
        ended ??= 'aborted';
      });
      res.on('error', (e) => {
        ended ??= (e as NodeJS.ErrnoException).code ?? e.message;
      });
      res.on('close', finish);
    });
    const timer = setTimeout(() => {
      req.destroy(new Error('raw request timed out'));
    }, options.timeoutMs ?? 20_000);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    req.end(options.body);
  });
}

export async function until(check: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Opens the Responses WebSocket on the proxy at `url` as Codex does (auth and beta headers), bounded in time. */
export async function openResponsesWebSocket(url: string, key: string, timeoutMs = 10_000): Promise<WebSocket> {
  const ws = new WebSocket(`${url.replace('http:', 'ws:')}/v1/responses`, {
    headers: { Authorization: `Bearer ${key}`, 'OpenAI-Beta': 'responses_websockets=2026-02-06' },
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no WebSocket within the time limit')), timeoutMs);
    ws.once('open', () => (clearTimeout(timer), resolve()));
    ws.once('error', (e) => (clearTimeout(timer), reject(e)));
  });
  return ws;
}
