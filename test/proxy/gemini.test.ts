/**
 * The Gemini API through the proxy, as Gemini CLI uses it: `POST /v1beta/models/<model>:generateContent`
 * (JSON) and `:streamGenerateContent?alt=sse` (server-sent events), the key in `x-goog-api-key` or in
 * `?key=`, against a fake Gemini upstream on 127.0.0.1 that records what it received.
 */
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readBody, startProxy, type RunningProxy, type Turn } from '../../src/proxy';
import { routeFor, upstreamUrl } from '../../src/proxy/routes';
import { sseOf, startFakeUpstream, type FakeUpstream, type Received, type Reply } from './fake-upstream';
import { bigLog, rawRequest, until } from './support';
import { filesUnder } from '../support/files';
import { HANDLE_IN_TEXT as MARKER } from '../../src/engine/handle';
import { ProxySource } from '../../src/extension/inspector/proxySource';
import { FileStore } from '../../src/store/store';
import { parseConfig } from '../../src/engine/config';

const GEMINI_KEY = 'AIzaTEST-GEMINIKEY-4c1d9e0b7a2f53';
const QUERY_KEY = 'AIzaTEST-QUERYKEY-81f0c2d4e6';
const MODEL = 'gemini-2.5-pro';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-gemini-proxy-'));
const storeDir = join(root, 'store');
const sessionsDir = join(root, 'sessions');
const logLines: string[] = [];
let upstream: FakeUpstream;
let proxy: RunningProxy;
const turns: Turn[] = [];

const usageMetadata = {
  promptTokenCount: 5200,
  candidatesTokenCount: 12,
  thoughtsTokenCount: 30,
  cachedContentTokenCount: 4096,
  totalTokenCount: 5242,
};
const candidate = (text: string) => ({ content: { role: 'model', parts: [{ text }] }, finishReason: 'STOP', index: 0 });

/** Answers as the Gemini API does: JSON for generateContent, server-sent events for streamGenerateContent?alt=sse. */
function geminiReply(r: Received): Reply {
  const path = r.url.split('?')[0]!;
  if (path.endsWith(':countTokens')) return { kind: 'json', body: { totalTokens: 321 } };
  if (path.endsWith(':streamGenerateContent')) {
    return {
      kind: 'sse',
      delayMs: 5,
      headers: { 'content-type': 'text/event-stream' },
      chunks: sseOf([
        { data: { candidates: [candidate('Done ')], modelVersion: MODEL, responseId: 'r1' } },
        { data: { candidates: [candidate('é.')], usageMetadata, modelVersion: MODEL, responseId: 'r1' } },
      ]).map((c) => c.replace(/\n\n$/, '\r\n\r\n')),
    };
  }
  if (path.endsWith(':generateContent'))
    return { kind: 'json', body: { candidates: [candidate('{"complexity_score": 1}')], usageMetadata, modelVersion: MODEL } };
  return { kind: 'json', body: { models: [{ name: `models/${MODEL}` }] } };
}

/** A body as Gemini CLI sends it: calls without an id, responses with the id Gemini CLI made up. */
function geminiRequest(output: string, firstUser = 'Run the tests and fix what fails.') {
  return {
    contents: [
      { role: 'user', parts: [{ text: firstUser }] },
      { role: 'model', parts: [{ functionCall: { name: 'run_shell_command', args: { command: 'npm test' } }, thoughtSignature: 'c2ln' }] },
      { role: 'user', parts: [{ functionResponse: { id: 'run_shell_command-1-a', name: 'run_shell_command', response: { output } } }] },
    ],
    systemInstruction: { role: 'user', parts: [{ text: 'You are an interactive CLI agent.' }] },
    tools: [{ functionDeclarations: [{ name: 'run_shell_command', parametersJsonSchema: { type: 'object' } }] }],
    generationConfig: { temperature: 0, thinkingConfig: { includeThoughts: true } },
  };
}

const last = (): Received => upstream.received[upstream.received.length - 1]!;
const sentBody = (r: Received) => JSON.parse(r.body!.toString('utf8')) as ReturnType<typeof geminiRequest>;
const outputOf = (body: ReturnType<typeof geminiRequest>) =>
  (body.contents[2]!.parts[0] as { functionResponse: { response: { output: string } } }).functionResponse.response.output;

async function turnFor(predicate: (t: Turn) => boolean): Promise<Turn> {
  await until(() => turns.some(predicate), 5000, 'a recorded turn');
  return turns.filter(predicate).pop()!;
}

beforeAll(async () => {
  upstream = await startFakeUpstream({ respond: geminiReply });
  proxy = await startProxy({ port: 0, storeDir, geminiUpstream: upstream.url, log: (l) => logLines.push(l) });
  proxy.on('turn', (t) => turns.push(t));
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('Gemini routes', () => {
  it('projects generateContent, streamGenerateContent and countTokens on any API version; other Gemini paths pass through', () => {
    expect(routeFor('POST', `/v1beta/models/${MODEL}:generateContent`, {})).toEqual({
      provider: 'gemini',
      format: 'gemini',
      record: true,
      model: MODEL,
    });
    expect(routeFor('POST', '/v1/models/gemini-2.5-flash:streamGenerateContent', {})).toMatchObject({
      record: true,
      model: 'gemini-2.5-flash',
    });
    expect(routeFor('POST', '/v1alpha/tunedModels/my-model:generateContent', {})).toMatchObject({ format: 'gemini', model: 'my-model' });
    expect(routeFor('POST', `/v1beta/models/${MODEL}:countTokens`, {})).toMatchObject({ format: 'gemini', record: false });
    expect(routeFor('POST', `/v1beta/models/${MODEL}:embedContent`, {})).toEqual({ provider: 'gemini', record: false });
    expect(routeFor('GET', '/v1beta/models', {})).toEqual({ provider: 'gemini', record: false });
    expect(routeFor('GET', '/v1/models', { 'x-goog-api-key': 'k' }).provider).toBe('gemini');
    expect(routeFor('GET', '/v1/models', {}, 'key=k').provider).toBe('gemini');
    // OpenAI's own model list stays OpenAI's
    expect(routeFor('GET', '/v1/models', {}).provider).toBe('openai');
  });

  it('appends the client path to the Gemini base URL, path prefix and query kept', () => {
    const u = upstreamUrl(new URL('http://gw.local/google/'), 'gemini', `/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    expect(u.toString()).toBe(`http://gw.local/google/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
  });
});

describe('Gemini API through the proxy', () => {
  it('reduces the functionResponse output of generateContent and relays the JSON answer byte for byte', async () => {
    const output = bigLog(1500, 'gemini-json');
    const text = JSON.stringify(geminiRequest(output), null, 2);
    const r = await rawRequest(`${proxy.url}/v1beta/models/${MODEL}:generateContent`, {
      headers: {
        'content-type': 'application/json',
        'x-goog-api-key': GEMINI_KEY,
        'user-agent': 'GeminiCLI/0.61.0/gemini-2.5-pro (linux; x64; terminal)',
      },
      body: text,
    });
    expect(r.status).toBe(200);
    expect(r.body.equals(Buffer.concat(last().sent))).toBe(true);
    expect(last().url).toBe(`/v1beta/models/${MODEL}:generateContent`);
    expect(last().headers['x-goog-api-key']).toBe(GEMINI_KEY);
    const sent = sentBody(last());
    expect(outputOf(sent)).toMatch(MARKER);
    // every other byte as the agent sent it
    const at = text.indexOf(JSON.stringify(output));
    const suffix = text.slice(at + JSON.stringify(output).length);
    const raw = last().body!.toString('utf8');
    expect(raw.slice(0, at)).toBe(text.slice(0, at));
    expect(raw.slice(raw.length - suffix.length)).toBe(suffix);
    const turn = await turnFor((t) => t.path.endsWith(':generateContent') && t.reductions.length > 0);
    expect(turn).toMatchObject({ format: 'gemini', model: MODEL, status: 200 });
    expect(turn.usage).toEqual({ inputTokens: 5200, outputTokens: 42, cachedTokens: 4096 });
    expect(turn.reductions[0]!.tool).toBe('run_shell_command');
  });

  it('relays streamGenerateContent?alt=sse byte for byte and records the usage of the last event', async () => {
    const output = bigLog(1500, 'gemini-sse');
    const r = await rawRequest(`${proxy.url}/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
      headers: { 'content-type': 'application/json', 'x-goog-api-key': GEMINI_KEY },
      body: JSON.stringify(geminiRequest(output, 'a second conversation')),
    });
    expect(r.status).toBe(200);
    expect(r.ended).toBe('end');
    expect(last().url).toBe(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    expect(r.body.equals(Buffer.concat(last().sent))).toBe(true);
    expect(r.body.toString('utf8')).toContain('\r\n\r\n');
    expect(outputOf(sentBody(last()))).toMatch(MARKER);
    const turn = await turnFor((t) => t.path.endsWith(':streamGenerateContent'));
    expect(turn).toMatchObject({ format: 'gemini', model: MODEL });
    expect(turn.usage).toEqual({ inputTokens: 5200, outputTokens: 42, cachedTokens: 4096 });
    // the recording keeps both bodies, and the projection is what went upstream
    expect(readBody(sessionsDir, turn.projectionRef!)).toBe(last().body!.toString('utf8'));
    expect(outputOf(JSON.parse(readBody(sessionsDir, turn.requestRef!)) as ReturnType<typeof geminiRequest>)).toBe(output);
  });

  it('forwards a ?key= query as it came and writes it nowhere: not the store, the recordings or the log', async () => {
    const r = await rawRequest(`${proxy.url}/v1beta/models/${MODEL}:generateContent?key=${QUERY_KEY}`, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(geminiRequest(bigLog(1200, 'gemini-query-key'), 'a third conversation')),
    });
    expect(r.status).toBe(200);
    expect(last().url).toBe(`/v1beta/models/${MODEL}:generateContent?key=${QUERY_KEY}`);
    await turnFor((t) => t.path.endsWith(':generateContent') && t.session !== turns[0]!.session);
    await until(() => filesUnder(sessionsDir).length > 0, 5000, 'recordings');
    for (const file of [...filesUnder(storeDir), ...filesUnder(sessionsDir)]) {
      const bytes = fs.readFileSync(file, 'latin1');
      for (const secret of [GEMINI_KEY, QUERY_KEY, 'GEMINIKEY', 'QUERYKEY'])
        expect(bytes.includes(secret), `${secret} in ${file}`).toBe(false);
    }
    for (const line of logLines) for (const secret of ['GEMINIKEY', 'QUERYKEY']) expect(line).not.toContain(secret);
  });

  it('projects countTokens without recording it as a turn', async () => {
    const before = turns.length;
    const r = await rawRequest(`${proxy.url}/v1beta/models/${MODEL}:countTokens`, {
      headers: { 'x-goog-api-key': GEMINI_KEY },
      body: JSON.stringify({ contents: geminiRequest(bigLog(1200, 'count')).contents }),
    });
    expect(JSON.parse(r.body.toString('utf8'))).toEqual({ totalTokens: 321 });
    expect(outputOf(sentBody(last()))).toMatch(MARKER);
    // a later recorded call proves no turn was recorded for countTokens in between
    await rawRequest(`${proxy.url}/v1beta/models/${MODEL}:generateContent`, {
      headers: { 'x-goog-api-key': GEMINI_KEY },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    await until(() => turns.length > before, 5000, 'the next turn');
    expect(turns.slice(before).map((t) => t.path)).toEqual([`/v1beta/models/${MODEL}:generateContent`]);
  });

  it('passes the model list through with its key, and maps onto a Gemini upstream with a path prefix', async () => {
    const r = await rawRequest(`${proxy.url}/v1beta/models`, { method: 'GET', headers: { 'x-goog-api-key': GEMINI_KEY } });
    expect(r.status).toBe(200);
    expect([last().method, last().url, last().headers['x-goog-api-key']]).toEqual(['GET', '/v1beta/models', GEMINI_KEY]);
    const prefixed = await startProxy({ port: 0, geminiUpstream: `${upstream.url}/google/`, sessionsDir: false });
    try {
      await rawRequest(`${prefixed.url}/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, {
        headers: { 'x-goog-api-key': GEMINI_KEY },
        body: JSON.stringify(geminiRequest('small')),
      });
      expect(last().url).toBe(`/google/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`);
    } finally {
      await prefixed.close();
    }
  });

  it('shows its recorded turns in the inspector like the others: titled, reduced, the original and the marker readable', async () => {
    const source = new ProxySource(
      { store: () => new FileStore(storeDir), config: () => parseConfig({}).config },
      () => sessionsDir,
      60_000,
    );
    try {
      const turn = turns.find((t) => t.path.endsWith(':generateContent') && t.reductions.length > 0)!;
      const info = source.list().find((s) => s.id === `proxy:${turn.session}`)!;
      expect(info.title).toMatch(/^Gemini CLI · /);
      const session = (await source.open(info.id))!;
      const summary = session.turns()[turn.turn - 1]!;
      expect(summary.tools).toEqual(['run_shell_command']);
      const detail = session.detail(turn.turn - 1);
      const r = detail.results[0]!;
      expect([r.tool, r.callId, r.stage]).toEqual(['run_shell_command', 'run_shell_command-1-a', 'offload']);
      expect(session.text(r.handle, 'original', 0, 100).text).toBe(bigLog(1500, 'gemini-json').slice(0, 100));
      expect(session.text(r.handle, 'projected', 0, 10_000).text).toContain(r.handle);
    } finally {
      source.dispose();
    }
  });

  it("answers 502 in the Gemini API's error shape when the upstream cannot be reached", async () => {
    const dead = await startFakeUpstream();
    const url = dead.url;
    await dead.close();
    const p = await startProxy({ port: 0, geminiUpstream: url, sessionsDir: false });
    try {
      const r = await rawRequest(`${p.url}/v1beta/models/${MODEL}:generateContent`, {
        headers: { 'x-goog-api-key': GEMINI_KEY },
        body: JSON.stringify(geminiRequest('x')),
      });
      expect(r.status).toBe(502);
      expect(JSON.parse(r.body.toString('utf8'))).toMatchObject({ error: { code: 502, status: 'UNAVAILABLE' } });
    } finally {
      await p.close();
    }
  });
});
