/**
 * Compressed request bodies: Codex signed in with ChatGPT sends its model calls zstd-compressed, and
 * other clients use gzip, deflate or br. Each is decoded for the engine and projected; the
 * projection goes upstream as plain UTF-8 with `content-encoding` dropped and `content-length` set to
 * what is sent (every upstream takes an uncompressed JSON body, and Node 20 cannot write zstd). A
 * body with nothing to reduce goes as its original compressed bytes. A body that does not decode
 * goes through unchanged, with one fail-open line in the log.
 */
import { brotliCompressSync, deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxy, type RunningProxy } from '../../src/proxy';
import { decodeBody } from '../../src/proxy/body';
import { HANDLE_IN_TEXT as MARKER } from '../../src/engine/handle';
import { startFakeUpstream, type FakeUpstream, type Received } from './fake-upstream';
import { bigLog, rawRequest, responsesRequest } from './support';
import { ZSTD_RESPONSES, zstdResponsesBody, zstdStored } from '../support/zstd';

let upstream: FakeUpstream;
let proxy: RunningProxy;
const log: string[] = [];

beforeAll(async () => {
  upstream = await startFakeUpstream();
  proxy = await startProxy({
    port: 0,
    openaiUpstream: `${upstream.url}/v1`,
    anthropicUpstream: upstream.url,
    sessionsDir: false,
    log: (l) => log.push(l),
  });
});

afterAll(async () => {
  await proxy?.close();
  await upstream?.close();
});

const last = (): Received => upstream.received[upstream.received.length - 1]!;

async function send(body: Buffer, encoding: string, session: string): Promise<Received> {
  const r = await rawRequest(`${proxy.url}/v1/responses`, {
    headers: { 'content-encoding': encoding, 'content-type': 'application/json', 'x-spillway-session': session },
    body,
  });
  expect(r.status).toBe(200);
  return last();
}

/** The request the upstream received must be the projection of `text`: plain, framed right, reduced. */
function expectProjected(got: Received, text: string, output: string): void {
  expect(got.headers['content-encoding']).toBeUndefined();
  expect(got.headers['content-length']).toBe(String(got.body!.length));
  const sent = JSON.parse(got.body!.toString('utf8')) as { input: Array<{ output?: string }> };
  const reduced = sent.input[2]!.output!;
  expect(reduced).toMatch(MARKER);
  sent.input[2]!.output = output;
  expect(sent).toEqual(JSON.parse(text));
}

const ENCODERS: Record<string, (b: Buffer) => Buffer> = {
  gzip: (b) => gzipSync(b),
  deflate: (b) => deflateSync(b),
  'deflate (raw stream)': (b) => deflateRawSync(b),
  br: (b) => brotliCompressSync(b),
  zstd: (b) => zstdStored(b),
};
const headerOf = (name: string) => name.split(' ')[0]!;

describe('compressed request bodies are decoded, projected and forwarded as plain UTF-8', () => {
  for (const [name, encode] of Object.entries(ENCODERS)) {
    it(`${name}`, async () => {
      const output = bigLog(1500, name);
      const text = JSON.stringify(responsesRequest(output));
      const got = await send(encode(Buffer.from(text)), headerOf(name), `enc-${name}`);
      expectProjected(got, text, output);
    });
  }

  it('zstd as Codex compresses it (Huffman and FSE coded blocks)', async () => {
    const text = zstdResponsesBody();
    const output = (JSON.parse(text) as { input: Array<{ output?: string }> }).input[2]!.output!;
    const got = await send(ZSTD_RESPONSES, 'zstd', 'enc-zstd-real');
    expectProjected(got, text, output);
  });

  it('a compressed body with nothing to reduce goes as its original bytes, encoding and all', async () => {
    const small = zstdStored(Buffer.from(JSON.stringify(responsesRequest('ok'))));
    const got = await send(small, 'zstd', 'enc-small');
    expect(got.headers['content-encoding']).toBe('zstd');
    expect(got.body!.equals(small)).toBe(true);
  });
});

describe('a body that does not decode goes through unchanged, with one log line', () => {
  const text = Buffer.from(JSON.stringify(responsesRequest(bigLog(1500, 'corrupt'))));
  const corrupt: Record<string, Buffer> = {
    gzip: gzipSync(text).subarray(0, 40),
    deflate: Buffer.from('not a deflate stream at all'),
    br: Buffer.from([0x1b, 0xff, 0xff, 0xff, 0x00, 0x01]),
    zstd: Buffer.concat([zstdStored(text).subarray(0, 200)]),
    'zstd (not a frame)': Buffer.from('(zstd frame)'),
    'x-unknown': text,
  };
  for (const [name, body] of Object.entries(corrupt)) {
    it(`${name}`, async () => {
      const session = `corrupt-${name.replace(/\W+/g, '-')}`;
      const got = await send(body, headerOf(name), session);
      expect(got.body!.equals(body)).toBe(true);
      expect(got.headers['content-encoding']).toBe(headerOf(name));
      expect(got.headers['content-length']).toBe(String(body.length));
      const lines = log.filter((l) => l.includes('fail open') && l.includes(session));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(headerOf(name));
    });
  }
});

describe('decodeBody', () => {
  it('stops a zstd body that decodes past the limit, and says so', async () => {
    const d = await decodeBody(zstdStored(Buffer.alloc(300_000, 0x61)), 'zstd', 100_000);
    expect('failOpen' in d && d.failOpen).toMatch(/could not decode the zstd body/);
  });

  it('decodes a zstd body of several frames, as concatenated frames decode', async () => {
    const a = Buffer.from('{"input":'),
      b = Buffer.from('[]}');
    const d = await decodeBody(Buffer.concat([zstdStored(a), zstdStored(b)]), 'zstd', 1000);
    expect('text' in d && d.text).toBe('{"input":[]}');
  });
});
