/**
 * What Spillway promises about data, in a real VS Code (issue 21): `api.project` resolves only once
 * the outputs its markers point at are on disk, owner-only; an old store readable by others is
 * tightened when the extension opens it; `spillway.proxy.mode` switches the running proxy between
 * observe (requests forwarded byte for byte) and project.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { freePort, launch, setSpillwaySetting, waitUntil, type Harness } from './harness';
import { anthropicRequest, testLog } from './requests';
import { startFakeUpstream, type FakeUpstream } from '../proxy/fake-upstream';
import { bigLog, chatRequest, OPENAI_KEY } from '../proxy/support';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';

let vs: Harness;
let fake: FakeUpstream;

beforeAll(async () => {
  fake = await startFakeUpstream();
  vs = await launch({ name: 'trust' });
});

afterAll(async () => {
  await vs?.close();
  await fake?.close();
});

const setSetting = (key: string, value: unknown, where: 'workspace' | 'user' = 'workspace') => setSpillwaySetting(vs, key, value, where);

describe('durable before sent, in the extension', () => {
  it('resolves api.project only once every output its markers point at is on disk, owner-only', async () => {
    const r = await vs.run(
      async ({ api, host, require }, req) => {
        const fs = require('node:fs') as typeof import('node:fs');
        const path = require('node:path') as typeof import('node:path');
        const p = await api.project(req);
        // checked in the same tick the promise resolved in: nothing has had a chance to write since
        return p.reductions.map((x) => {
          const file = host.store.pathFor(x.handle)!;
          const onDisk = fs.existsSync(file);
          return {
            onDisk,
            bytes: onDisk ? fs.statSync(file).size : 0,
            fileMode: onDisk ? (fs.statSync(file).mode & 0o777).toString(8) : '',
            dirMode: onDisk ? (fs.statSync(path.dirname(file)).mode & 0o777).toString(8) : '',
          };
        });
      },
      anthropicRequest('bash', 'toolu_trust_1', testLog(700, 'trust')),
    );
    expect(r).toHaveLength(1);
    expect(r[0]).toMatchObject({ onDisk: true, fileMode: '600', dirMode: '700' });
    expect(r[0]!.bytes).toBeGreaterThan(10_000);
  });
});

describe('a private store, in the extension', () => {
  it('tightens an old store readable by others when the extension opens it', async () => {
    const folder = join(vs.workspace!, 'old-store');
    const shard = join(folder, 'objects', 'ab');
    mkdirSync(shard, { recursive: true });
    const file = join(shard, 'sw_ab0000000000000000000000.txt');
    writeFileSync(file, 'API_TOKEN=old\n');
    for (const p of [folder, join(folder, 'objects'), shard]) chmodSync(p, 0o755);
    chmodSync(file, 0o644);
    await setSetting('storage.folder', folder);
    try {
      await vs.run(async ({ host }) => {
        await host.tightening;
      });
      await waitUntil('the old store tightened', () => (statSync(file).mode & 0o777) === 0o600);
      expect((statSync(shard).mode & 0o777).toString(8)).toBe('700');
      expect((statSync(folder).mode & 0o777).toString(8)).toBe('700');
    } finally {
      await setSetting('storage.folder', null);
    }
  });
});

describe('spillway.proxy.mode in the extension', () => {
  it('switches the running proxy between observe (byte for byte) and project, without a restart', async () => {
    const port = await freePort();
    await setSetting('proxy.openaiUpstream', `${fake.url}/v1`, 'user');
    await setSetting('proxy.anthropicUpstream', fake.url, 'user');
    await setSetting('proxy.port', port);
    await setSetting('proxy.mode', 'observe');
    await setSetting('proxy.enabled', true);
    const client = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: OPENAI_KEY, maxRetries: 2, timeout: 20_000 });
    const body = chatRequest(bigLog(1500, 'trust-mode'), {}, 'Observe, then project.');
    const send = async () => {
      const before = fake.received.length;
      await client.chat.completions.create(body as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming);
      return fake.received[before]!.body!.toString('utf8');
    };
    try {
      await waitUntil('the proxy listening', async () => {
        try {
          await fetch(`http://127.0.0.1:${port}/v1/models`);
          return true;
        } catch {
          return false;
        }
      });
      const observed = await send();
      expect(observed).not.toMatch(HANDLE_IN_TEXT);
      expect(JSON.parse(observed)).toEqual(body);
      await setSetting('proxy.mode', 'project');
      const projected = await send();
      expect(projected).toMatch(HANDLE_IN_TEXT);
      expect(projected.length).toBeLessThan(observed.length / 5);
    } finally {
      await setSetting('proxy.enabled', null);
      await setSetting('proxy.mode', null);
      await setSetting('proxy.port', null);
      await setSetting('proxy.openaiUpstream', null, 'user');
      await setSetting('proxy.anthropicUpstream', null, 'user');
    }
  });
});
