/**
 * The proxy refuses what only a web page would send (issue 14, point 3): a `Host` that is not its
 * own loopback address and port (DNS rebinding) and any `Origin`, with a 403 in the API's own error
 * shape; agents' requests (the official clients, below and in proxy.test.ts) go through.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../src/proxy';
import { allowedHosts, refuseForeignRequest } from '../../src/proxy/guard';
import { startFakeUpstream, type FakeUpstream } from './fake-upstream';
import { ANTHROPIC_KEY, OPENAI_KEY, anthropicRequest, chatRequest, proxyInFrontOf, rawRequest } from './support';
import { expectSome } from '../support/expect';

const root = fs.mkdtempSync(join(tmpdir(), 'spillway-guard-'));
let upstream: FakeUpstream;
let proxy: RunningProxy;
const logLines: string[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startProxy(proxyInFrontOf(upstream.url, root, logLines));
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
  fs.rmSync(root, { recursive: true, force: true });
});

describe('refuseForeignRequest', () => {
  it("lets through the loopback names with the proxy's port, in any case", () => {
    for (const host of [...allowedHosts(8417), 'LOCALHOST:8417']) expect(refuseForeignRequest({ host }, 8417)).toBeUndefined();
  });

  it('refuses another host, another port, a host without port, and no host at all', () => {
    for (const host of ['attacker.example:8417', '127.0.0.1:9999', '127.0.0.1', 'localhost.attacker.example:8417', undefined]) {
      expect(refuseForeignRequest({ host }, 8417), `Host ${String(host)}`).toMatch(/refused a request for host/);
    }
  });

  it('refuses any Origin, even a local one', () => {
    for (const origin of ['http://attacker.example', 'http://127.0.0.1:8417', 'null']) {
      expect(refuseForeignRequest({ host: '127.0.0.1:8417', origin }, 8417), `Origin ${origin}`).toMatch(/refused a request from origin/);
    }
  });
});

describe('the running proxy', () => {
  const seen = () => upstream.received.length;

  it("answers a rebinding Host on an OpenAI route with 403 in OpenAI's error shape and forwards nothing", async () => {
    const before = seen();
    const r = await rawRequest(`${proxy.url}/v1/chat/completions`, {
      headers: { host: `attacker.example:${proxy.port}`, 'content-type': 'application/json', authorization: `Bearer ${OPENAI_KEY}` },
      body: JSON.stringify(chatRequest('x')),
    });
    expect(r.status).toBe(403);
    const body = JSON.parse(r.body.toString('utf8')) as { error: { type: string; code: string; message: string } };
    expect(body.error).toMatchObject({ type: 'spillway_proxy_error', code: 'forbidden' });
    expect(body.error.message).toContain('attacker.example');
    expect(seen()).toBe(before);
    expectSome(logLines, (l) => l.includes('403') && l.includes('attacker.example'));
  });

  it("answers an Origin on an Anthropic route with 403 in Anthropic's error shape and forwards nothing", async () => {
    const before = seen();
    const r = await rawRequest(`${proxy.url}/v1/messages`, {
      headers: {
        origin: 'http://attacker.example',
        'content-type': 'application/json',
        'x-api-key': ANTHROPIC_KEY,
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify(anthropicRequest('x')),
    });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body.toString('utf8'))).toMatchObject({ type: 'error', error: { type: 'permission_error' } });
    expect(seen()).toBe(before);
  });

  it('refuses a foreign Host on a pass-through route too', async () => {
    const r = await rawRequest(`${proxy.url}/v1/models`, { method: 'GET', headers: { host: 'attacker.example' } });
    expect(r.status).toBe(403);
  });

  it('still serves the official clients, at 127.0.0.1 and at localhost', async () => {
    const openai = new OpenAI({ apiKey: OPENAI_KEY, baseURL: `${proxy.url}/v1`, maxRetries: 0, timeout: 20_000 });
    const chat = await openai.chat.completions.create(chatRequest('hello') as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming);
    expect(chat.choices.length).toBeGreaterThan(0);
    const anthropic = new Anthropic({ apiKey: ANTHROPIC_KEY, baseURL: `http://localhost:${proxy.port}`, maxRetries: 0, timeout: 20_000 });
    const message = await anthropic.messages.create(anthropicRequest('hello') as unknown as Anthropic.MessageCreateParamsNonStreaming);
    expect(message.type).toBe('message');
  });
});
