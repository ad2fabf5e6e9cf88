/**
 * The proxy's pieces on their own: path mapping, header filtering, usage extraction, session
 * fingerprints, recordings (append-only, crash-tolerant) and the agent environment lines.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import {
  agentEnvironmentLines,
  forwardHeaders,
  listSessions,
  parseUpstream,
  pruneRecordings,
  readBody,
  readOpening,
  readSession,
  Recorder,
  routeFor,
  sessionFromHeader,
  upstreamUrl,
  UsageTap,
  type Turn,
} from '../../src/proxy';
import { zstdStored } from '../support/zstd';
import { codexRouteText, codexShellLines, mcpRouteText, mcpShellLines } from '../../src/proxy/env';
import { originForm } from '../../src/proxy/routes';
import { handleFor } from '../../src/engine';
import { anthropicRequest, chatRequest, responsesRequest } from './support';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-proxy-parts-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

const url = (base: string, provider: 'openai' | 'anthropic', path: string) => upstreamUrl(new URL(base), provider, path).toString();

describe('upstream path mapping', () => {
  it('replaces the client /v1 by the OpenAI base path, as the SDK builds URLs from a base that includes /v1', () => {
    expect(url('https://api.openai.com/v1', 'openai', '/v1/chat/completions')).toBe('https://api.openai.com/v1/chat/completions');
    expect(url('http://127.0.0.1:9000/v1', 'openai', '/v1/responses')).toBe('http://127.0.0.1:9000/v1/responses');
    expect(url('http://127.0.0.1:9000/v1/', 'openai', '/v1/models')).toBe('http://127.0.0.1:9000/v1/models');
  });

  it('keeps an OpenAI gateway prefix and a path without /v1', () => {
    expect(url('https://gw.example/openai/v1', 'openai', '/v1/chat/completions')).toBe('https://gw.example/openai/v1/chat/completions');
    expect(url('https://gw.example/api/v1', 'openai', '/chat/completions')).toBe('https://gw.example/api/v1/chat/completions');
    expect(url('https://gw.example/v2', 'openai', '/v1x/models')).toBe('https://gw.example/v2/v1x/models');
  });

  it('appends the client path unchanged to the Anthropic base, which has no version', () => {
    expect(url('https://api.anthropic.com', 'anthropic', '/v1/messages?beta=true')).toBe('https://api.anthropic.com/v1/messages?beta=true');
    expect(url('http://127.0.0.1:9000/anthropic/', 'anthropic', '/v1/messages/count_tokens')).toBe(
      'http://127.0.0.1:9000/anthropic/v1/messages/count_tokens',
    );
  });

  it('adds the /v1 an AI SDK client (OpenCode) leaves out when given the Anthropic base without it', () => {
    expect(url('https://api.anthropic.com', 'anthropic', '/messages')).toBe('https://api.anthropic.com/v1/messages');
    expect(url('http://127.0.0.1:9000/anthropic', 'anthropic', '/messages/count_tokens?x=1')).toBe(
      'http://127.0.0.1:9000/anthropic/v1/messages/count_tokens?x=1',
    );
    expect(url('https://api.anthropic.com', 'anthropic', '/messagesx')).toBe('https://api.anthropic.com/messagesx');
  });

  it("passes the query string on as sent, after the base URL's own query", () => {
    expect(url('https://x.example/v1', 'openai', '/v1/files?purpose=a%20b&x=%2F')).toBe('https://x.example/v1/files?purpose=a%20b&x=%2F');
    expect(url('https://x.example/openai?api-version=2025', 'openai', '/v1/responses?x=1')).toBe(
      'https://x.example/openai/responses?api-version=2025&x=1',
    );
  });

  it('refuses upstreams that are not absolute http(s) URLs or that carry credentials', () => {
    expect(() => parseUpstream('api.openai.com', 'u')).toThrow(/absolute/);
    expect(() => parseUpstream('ftp://x', 'u')).toThrow(/http or https/);
    expect(() => parseUpstream('https://user:pw@x', 'u')).toThrow(/credentials/);
  });
});

describe('routes', () => {
  it('projects /messages as Anthropic Messages too: what an AI SDK client posts under a base URL without /v1', () => {
    expect(routeFor('POST', '/messages', {})).toEqual({ provider: 'anthropic', format: 'anthropic-messages', record: true });
    expect(routeFor('POST', '/messages/count_tokens', {})).toMatchObject({ format: 'anthropic-messages', record: false });
    expect(routeFor('POST', '/messages/batches', {})).toEqual({ provider: 'anthropic', record: false });
  });

  it('projects exactly the four model-call paths, on POST only', () => {
    expect(routeFor('POST', '/v1/chat/completions', {})).toEqual({ provider: 'openai', format: 'openai-chat', record: true });
    expect(routeFor('POST', '/v1/responses', {})).toMatchObject({ format: 'openai-responses' });
    expect(routeFor('POST', '/v1/messages', {})).toMatchObject({ provider: 'anthropic', format: 'anthropic-messages', record: true });
    expect(routeFor('POST', '/v1/messages/count_tokens', {})).toMatchObject({ format: 'anthropic-messages', record: false });
    expect(routeFor('GET', '/v1/chat/completions', {}).format).toBeUndefined();
    expect(routeFor('POST', '/v1/responses/resp_1/cancel', {}).format).toBeUndefined();
  });

  it('sends pass-through requests to Anthropic by path or by Anthropic headers, else to OpenAI', () => {
    expect(routeFor('GET', '/v1/models', {}).provider).toBe('openai');
    expect(routeFor('GET', '/v1/models', { 'anthropic-version': '2023-06-01' }).provider).toBe('anthropic');
    expect(routeFor('POST', '/v1/messages/batches', {}).provider).toBe('anthropic');
    expect(routeFor('GET', '/v1/models', { 'anthropic-beta': 'oauth-2025-04-20' }).provider).toBe('anthropic');
  });

  it("sends Claude Code's own /api/ endpoints to Anthropic, the bare preflight of a subscription sign-in included", () => {
    expect(routeFor('HEAD', '/api/hello', {})).toEqual({ provider: 'anthropic', record: false });
    expect(routeFor('GET', '/api/oauth/profile', { authorization: 'Bearer x' }).provider).toBe('anthropic');
    expect(routeFor('GET', '/apis', {}).provider).toBe('openai');
  });
});

describe('request targets', () => {
  it('keeps origin-form targets and reduces absolute-form ones to path and query', () => {
    expect(originForm('/v1/responses?x=1')).toBe('/v1/responses?x=1');
    expect(originForm(undefined)).toBe('/');
    expect(originForm('http://127.0.0.1:8787/v1/chat/completions?stream=true')).toBe('/v1/chat/completions?stream=true');
    expect(originForm('HTTPS://api.example.test/v1/messages')).toBe('/v1/messages');
    expect(originForm('http://[bad')).toBe('/');
  });
});

describe('forwarded headers', () => {
  it('drops hop-by-hop headers, those Connection names, host, expect and the session header', () => {
    const out = forwardHeaders(
      [
        'Host',
        'x',
        'Connection',
        'keep-alive, X-Trace',
        'X-Trace',
        '1',
        'Keep-Alive',
        'timeout=5',
        'TE',
        'trailers',
        'Transfer-Encoding',
        'chunked',
        'Expect',
        '100-continue',
        'X-Spillway-Session',
        's',
        'Authorization',
        'Bearer k',
        'X-Multi',
        'a',
        'x-multi',
        'b',
        'Content-Length',
        '10',
      ],
      ['content-length'],
    );
    expect(out).toEqual({ Authorization: 'Bearer k', 'X-Multi': ['a', 'b'] });
  });
});

async function usageOf(chunks: Array<string | Buffer>, contentType: string, encoding?: string) {
  const tap = new UsageTap(contentType, encoding);
  for (const c of chunks) tap.write(Buffer.isBuffer(c) ? c : Buffer.from(c));
  return tap.finish();
}

describe('usage from responses', () => {
  it('reads OpenAI chat usage with cached tokens from a JSON answer', async () => {
    const body = JSON.stringify({
      choices: [],
      usage: { prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 8 } },
    });
    expect(await usageOf([body], 'application/json')).toEqual({ inputTokens: 10, outputTokens: 2, cachedTokens: 8 });
  });

  it('reads the usage chunk of a chat stream even when events are split across writes', async () => {
    const text =
      'data: {"choices":[{"delta":{"content":"a"}}],"usage":null}\n\ndata: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"prompt_tokens_details":{"cached_tokens":0}}}\n\ndata: [DONE]\n\n';
    const pieces = Array.from({ length: Math.ceil(text.length / 7) }, (_, i) => text.slice(i * 7, i * 7 + 7));
    expect(await usageOf(pieces, 'text/event-stream')).toEqual({ inputTokens: 5, outputTokens: 1, cachedTokens: 0 });
  });

  it('reads Responses usage from response.completed, with CRLF line ends', async () => {
    const ev =
      'event: response.completed\r\ndata: {"type":"response.completed","response":{"usage":{"input_tokens":9,"input_tokens_details":{"cached_tokens":4},"output_tokens":3}}}\r\n\r\n';
    expect(await usageOf([ev], 'text/event-stream; charset=utf-8')).toEqual({ inputTokens: 9, outputTokens: 3, cachedTokens: 4 });
  });

  it('merges Anthropic message_start and message_delta usage', async () => {
    const s =
      'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":7,"cache_read_input_tokens":100,"cache_creation_input_tokens":20,"output_tokens":1}}}\n\n' +
      'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":42}}\n\n';
    expect(await usageOf([s], 'text/event-stream')).toEqual({ inputTokens: 7, outputTokens: 42, cachedTokens: 100, cacheWriteTokens: 20 });
  });

  it('reads an event of several megabytes that arrives in small pieces, in linear time', async () => {
    const event = `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', response: { output: [{ text: 'y'.repeat(8_000_000) }], usage: { input_tokens: 5, output_tokens: 6 } } })}\n\n`;
    const pieces = Array.from({ length: Math.ceil(event.length / 16_384) }, (_, i) => event.slice(i * 16_384, (i + 1) * 16_384));
    const started = performance.now();
    expect(await usageOf(pieces, 'text/event-stream')).toEqual({ inputTokens: 5, outputTokens: 6 });
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it('finds usage at the end of a JSON answer bigger than the kept tail', async () => {
    const body = JSON.stringify({
      output: [{ text: 'x'.repeat(300_000), usage: 'not this' }],
      usage: { input_tokens: 1, output_tokens: 2 },
      metadata: {},
    });
    const parts = Array.from({ length: 10 }, (_, i) => body.slice(i * 30_500, (i + 1) * 30_500));
    expect(await usageOf(parts, 'application/json')).toEqual({ inputTokens: 1, outputTokens: 2 });
  });

  it('inflates a zstd answer on the tap side too, fed in pieces; a broken one gives no usage and no error', async () => {
    const gz = zstdStored(Buffer.from(JSON.stringify({ usage: { input_tokens: 3, output_tokens: 4 } })));
    expect(await usageOf([gz.subarray(0, 7), gz.subarray(7, 20), gz.subarray(20)], 'application/json', 'zstd')).toEqual({
      inputTokens: 3,
      outputTokens: 4,
    });
    const events = zstdStored(
      Buffer.from(
        'event: response.completed\ndata: {"type":"response.completed","response":{"usage":{"input_tokens":9,"output_tokens":2}}}\n\n',
      ),
    );
    expect(await usageOf([events], 'text/event-stream', 'zstd')).toEqual({ inputTokens: 9, outputTokens: 2 });
    expect(await usageOf([Buffer.from('not zstd at all')], 'application/json', 'zstd')).toBeUndefined();
  });

  it('inflates a gzip answer on the tap side only', async () => {
    const gz = gzipSync(JSON.stringify({ usage: { input_tokens: 3, output_tokens: 4 } }));
    expect(await usageOf([gz.subarray(0, 10), gz.subarray(10)], 'application/json', 'gzip')).toEqual({ inputTokens: 3, outputTokens: 4 });
  });

  it('reports nothing for answers without usage, broken JSON or an unknown encoding', async () => {
    expect(await usageOf(['{"error":{"message":"x"}}'], 'application/json')).toBeUndefined();
    expect(await usageOf(['{"usage":{"input_tok'], 'application/json')).toBeUndefined();
    expect(await usageOf(['data: {"usage":\n\n'], 'text/event-stream')).toBeUndefined();
    expect(await usageOf(['xx'], 'application/json', 'zstd')).toBeUndefined();
  });
});

describe('session fingerprints', () => {
  it('is the same for successive calls of one conversation, whatever comes after the opening', () => {
    const a = readOpening(JSON.stringify(chatRequest('out 1')), 'openai-chat');
    const b = readOpening(JSON.stringify(chatRequest('out 2', { temperature: 1 })), 'openai-chat');
    expect(a.session).toMatch(/^s_[0-9a-f]{16}$/);
    expect(a.session).toBe(b.session);
    expect(a.model).toBe('gpt-4.1');
  });

  it('differs when the system prompt or the first user message differs', () => {
    const base = readOpening(JSON.stringify(chatRequest('x')), 'openai-chat').session;
    expect(readOpening(JSON.stringify(chatRequest('x', {}, 'another task')), 'openai-chat').session).not.toBe(base);
    const other = chatRequest('x');
    (other.messages as any[])[0].content = 'another system prompt';
    expect(readOpening(JSON.stringify(other), 'openai-chat').session).not.toBe(base);
  });

  it('ignores cache_control moves and JSON layout in Anthropic requests', () => {
    const a = anthropicRequest('x');
    const b = anthropicRequest('y');
    delete (b.system as any[])[0].cache_control;
    (b.messages as any[])[0].content[0].cache_control = { type: 'ephemeral' };
    expect(readOpening(JSON.stringify(a), 'anthropic-messages').session).toBe(
      readOpening(JSON.stringify(b, null, 2), 'anthropic-messages').session,
    );
  });

  it('reads Responses instructions and the first user input', () => {
    const a = readOpening(JSON.stringify(responsesRequest('x')), 'openai-responses');
    const b = readOpening(JSON.stringify(responsesRequest('x', { instructions: 'other' })), 'openai-responses');
    expect(a.session).not.toBe(b.session);
    expect(readOpening('{"input":"hello"}', 'openai-responses').session).not.toBe(
      readOpening('{"input":"bye"}', 'openai-responses').session,
    );
  });

  it('uses a safe header value as it is and hashes any other', () => {
    expect(sessionFromHeader('conv-42')).toBe('conv-42');
    expect(sessionFromHeader('../../etc/passwd')).toMatch(/^h_[0-9a-f]{16}$/);
    expect(sessionFromHeader('a b')).toMatch(/^h_/);
  });

  it('throws on a body that is not JSON', () => {
    expect(() => readOpening('{"messages":', 'openai-chat')).toThrow(/malformed JSON/);
  });
});

function turn(session: string, n: number): Turn {
  return {
    v: 1,
    session,
    turn: n,
    time: new Date(0).toISOString(),
    path: '/v1/messages',
    format: 'anthropic-messages',
    originalBytes: 10,
    projectedBytes: 5,
    reductions: [],
    status: 200,
    durationMs: 1,
  };
}

describe('recordings', () => {
  it('appends one line per turn and reads them back', () => {
    const dir = join(root, 'rec1');
    const r = new Recorder(dir);
    r.append(turn('s_a', r.nextTurn('s_a')));
    r.append(turn('s_a', r.nextTurn('s_a')));
    r.append(turn('s_b', r.nextTurn('s_b')));
    expect(readSession(join(dir, 's_a.jsonl')).map((t) => t.turn)).toEqual([1, 2]);
    expect(
      listSessions(dir)
        .map((s) => s.session)
        .sort(),
    ).toEqual(['s_a', 's_b']);
    expect(listSessions(join(root, 'missing'))).toEqual([]);
  });

  it('survives a crash mid-write: the partial line is skipped and numbering continues on a fresh line', () => {
    const dir = join(root, 'rec2');
    const r = new Recorder(dir);
    r.append(turn('s_c', r.nextTurn('s_c')));
    r.append(turn('s_c', r.nextTurn('s_c')));
    const file = join(dir, 's_c.jsonl');
    fs.appendFileSync(file, JSON.stringify(turn('s_c', 3)).slice(0, 40));
    expect(readSession(file).map((t) => t.turn)).toEqual([1, 2]);
    const after = new Recorder(dir); // a restart
    const n = after.nextTurn('s_c');
    expect(n).toBe(3);
    after.append(turn('s_c', n));
    expect(readSession(file).map((t) => t.turn)).toEqual([1, 2, 3]);
  });

  it('stores bodies content-addressed, once per distinct text, readable by handle and checked against it', async () => {
    const dir = join(root, 'rec3');
    const r = new Recorder(dir);
    const text = JSON.stringify(chatRequest('body é'));
    const ref = (await r.putBody(Buffer.from(text)))!;
    expect(ref).toBe(handleFor(text));
    expect(await r.putBody(Buffer.from(text))).toBe(ref);
    expect(readBody(dir, ref)).toBe(text);
    expect(r.body(ref)).toBe(text);
    const file = join(dir, 'bodies', ref.slice(3, 5), `${ref}.txt`);
    expect(fs.readdirSync(join(dir, 'bodies', ref.slice(3, 5)))).toEqual([`${ref}.txt`]);
    fs.writeFileSync(file, text.replace('body', 'bady'));
    expect(() => readBody(dir, ref)).toThrow(/no longer matches/);
    expect(() => readBody(dir, 'sw_000000000000000000000000')).toThrow(/no recorded body/);
    expect(() => readBody(dir, '../../x')).toThrow(/not a body handle/);
    expect(await new Recorder(join(root, 'rec4'), { bodies: false }).putBody(Buffer.from(text))).toBeUndefined();
  });
});

describe('pruning recordings', () => {
  it('removes old sessions and bodies, keeps bodies used again recently, then trims bodies to a size', async () => {
    const dir = join(root, 'prune');
    const r = new Recorder(dir);
    r.append(turn('s_old', 1));
    r.append(turn('s_new', 1));
    const old = (await r.putBody(Buffer.from('old body')))!;
    const reused = (await r.putBody(Buffer.from('reused body')))!;
    const fresh = (await r.putBody(Buffer.from('fresh body, the biggest of them')))!;
    const day = 24 * 3600 * 1000;
    const past = new Date(Date.now() - 30 * day);
    const bodyFile = (h: string) => join(dir, 'bodies', h.slice(3, 5), `${h}.txt`);
    fs.utimesSync(join(dir, 's_old.jsonl'), past, past);
    for (const h of [old, reused]) fs.utimesSync(bodyFile(h), past, past);
    await r.putBody(Buffer.from('reused body')); // a new turn names it again
    const res = pruneRecordings(dir, { maxAgeDays: 14 });
    expect(res).toMatchObject({ sessions: 1, bodies: 1 });
    expect(listSessions(dir).map((s) => s.session)).toEqual(['s_new']);
    expect(() => readBody(dir, old)).toThrow(/no recorded body/);
    expect(readBody(dir, reused)).toBe('reused body');
    // least recently used first: `fresh` was last written a day ago, `reused` just now
    fs.utimesSync(bodyFile(fresh), new Date(Date.now() - day), new Date(Date.now() - day));
    const trimmed = pruneRecordings(dir, { maxBodyBytes: 40 });
    expect(trimmed.bodies).toBe(1);
    expect(() => readBody(dir, fresh)).toThrow(/no recorded body/);
    expect(readBody(dir, reused)).toBe('reused body');
    expect(pruneRecordings(join(root, 'none'), { maxAgeDays: 1 })).toEqual({ sessions: 0, bodies: 0, freedBytes: 0 });
  });
});

describe('agent environment', () => {
  it('gives OpenAI clients the /v1 base and Anthropic clients the bare one, per shell', () => {
    expect(agentEnvironmentLines('http://127.0.0.1:8417')).toEqual([
      'export OPENAI_BASE_URL=http://127.0.0.1:8417/v1',
      'export OPENAI_API_BASE=http://127.0.0.1:8417/v1',
      'export ANTHROPIC_BASE_URL=http://127.0.0.1:8417',
    ]);
    expect(agentEnvironmentLines('http://127.0.0.1:1/', 'powershell')[2]).toBe('$env:ANTHROPIC_BASE_URL = "http://127.0.0.1:1"');
    expect(agentEnvironmentLines('http://127.0.0.1:1', 'fish')[0]).toBe('set -gx OPENAI_BASE_URL http://127.0.0.1:1/v1');
    expect(agentEnvironmentLines('http://127.0.0.1:1', 'cmd')[0]).toBe('set OPENAI_BASE_URL=http://127.0.0.1:1/v1');
  });

  it('names the MCP read-back for Claude Code and Codex, and as a comment line to paste', () => {
    const launch = { command: 'spillway', args: ['mcp', '--store', '/s'] };
    expect(mcpRouteText(launch)).toEqual([
      'Read-backs over MCP (no shell, no prompt per read; docs/read-back.md):',
      '  Claude Code: claude mcp add spillway -- spillway mcp --store /s',
      '  Codex: [mcp_servers.spillway] command = "spillway", args = ["mcp", "--store", "/s"], default_tools_approval_mode = "approve"',
    ]);
    expect(mcpShellLines(launch, 'cmd')[0]).toMatch(/^REM .*: claude mcp add spillway -- spillway mcp --store \/s$/);
    expect(mcpShellLines(launch, 'posix')[0]).toMatch(/^# /);
  });

  it('gives Codex its own route: -c openai_base_url or the config.toml line, the provider for a ChatGPT sign-in, and an alias per shell', () => {
    expect(codexRouteText('http://127.0.0.1:8417/')).toEqual([
      'Codex (reads openai_base_url from its config, not OPENAI_BASE_URL):',
      '  codex -c openai_base_url="http://127.0.0.1:8417/v1"',
      '  or this line in $CODEX_HOME/config.toml (default ~/.codex/config.toml), above any [table]:',
      '  openai_base_url = "http://127.0.0.1:8417/v1"',
      'Codex signed in with ChatGPT (its own model provider, which sends the ChatGPT tokens to the proxy):',
      `  codex -c 'model_providers.spillway={name="Spillway",base_url="http://127.0.0.1:8417/backend-api/codex",wire_api="responses",requires_openai_auth=true,supports_websockets=true}' -c model_provider=spillway`,
    ]);
    expect(codexShellLines('http://127.0.0.1:8417', 'posix')[1]).toBe(
      `alias codex='command codex -c openai_base_url="http://127.0.0.1:8417/v1"'`,
    );
    expect(codexShellLines('http://127.0.0.1:8417', 'fish')[1]).toBe(
      `alias codex 'command codex -c openai_base_url="http://127.0.0.1:8417/v1"'`,
    );
    expect(codexShellLines('http://127.0.0.1:8417', 'cmd')).toEqual([
      'REM Codex reads openai_base_url, not OPENAI_BASE_URL (or run Spillway: Route Codex Through Spillway): codex -c openai_base_url="http://127.0.0.1:8417/v1"',
    ]);
  });
});
