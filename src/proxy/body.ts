/**
 * Request bodies: collected once as bytes, decoded once for the engine.
 *
 * The engine needs the whole body as one string, so a projected request is held in memory: the
 * bytes (one buffer, sized from content-length when the client sends it, so no second copy is
 * made while collecting), the decoded string, and the projection when it differs. Bodies over
 * `maxBodyBytes` are not collected at all: they stream upstream unchanged.
 */
import type { IncomingMessage } from 'node:http';
import { isUtf8 } from 'node:buffer';
import * as zlib from 'node:zlib';
import { promisify } from 'node:util';
import { Decompress as ZstdDecompress } from 'fzstd';

export const DEFAULT_MAX_BODY_BYTES = 200 * 1024 * 1024;

export type Collected =
  | { kind: 'complete'; body: Buffer }
  /** over the limit: `head` was read already, the rest is still in the (paused) request stream */
  | { kind: 'over'; head: Buffer[] }
  /** the client went away before the body was complete */
  | { kind: 'aborted' };

export function collectBody(req: IncomingMessage, limit: number): Promise<Collected> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) return Promise.resolve({ kind: 'over', head: [] });
  return new Promise((resolve) => {
    const sized = Number.isFinite(declared) && declared >= 0 && req.headers['transfer-encoding'] === undefined;
    const whole = sized ? Buffer.allocUnsafe(declared) : undefined;
    const chunks: Buffer[] = [];
    let got = 0;
    /** bytes copied into `whole` (the parser never sends more than content-length; kept exact anyway) */
    let filled = 0;
    let done = false;
    const finish = (c: Collected) => {
      if (done) return;
      done = true;
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onClose);
      req.off('error', onClose);
      resolve(c);
    };
    const onData = (chunk: Buffer) => {
      if (whole && chunks.length === 0 && filled + chunk.length <= whole.length) {
        chunk.copy(whole, filled);
        filled += chunk.length;
      } else chunks.push(chunk);
      got += chunk.length;
      if (!whole && got > limit) {
        req.pause();
        finish({ kind: 'over', head: chunks });
      }
    };
    const onEnd = () => {
      if (whole && chunks.length === 0 && filled === whole.length) finish({ kind: 'complete', body: whole });
      else if (whole) finish({ kind: 'complete', body: Buffer.concat([whole.subarray(0, filled), ...chunks]) });
      else finish({ kind: 'complete', body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, got) });
    };
    const onClose = () => {
      if (!req.complete) finish({ kind: 'aborted' });
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('close', onClose);
    req.on('error', onClose);
  });
}

const gunzip = promisify(zlib.gunzip);
const inflate = promisify(zlib.inflate);
const inflateRaw = promisify(zlib.inflateRaw);
const brotli = promisify(zlib.brotliDecompress);

/** The encodings the proxy reads (`x-gzip` is gzip's old name). */
const READ_ENCODINGS = ['gzip', 'deflate', 'br', 'zstd'] as const;

/**
 * Decodes a zstd body of at most `limit` bytes (Codex signed in with ChatGPT sends its model calls
 * zstd-compressed). Node's zlib has zstd only from 22.15 on, and its decoder stops after the first
 * frame; fzstd decodes every frame on every Node the extension runs on: pure JavaScript shipped
 * inside its npm package (no native build, no download), fed the whole body, and stopped as soon as
 * what it has produced passes `limit`.
 */
function unzstd(body: Buffer, limit: number): Buffer {
  const chunks: Buffer[] = [];
  let size = 0;
  const stream = new ZstdDecompress((chunk) => {
    size += chunk.length;
    if (size > limit) throw new RangeError(`the decoded body is over ${limit} bytes`);
    chunks.push(Buffer.from(chunk));
  });
  stream.push(body, true);
  return Buffer.concat(chunks, size);
}

/** `bytes`: the UTF-8 bytes of `text` (the body itself, or its decoded form). */
export type Decoded = { text: string; bytes: Buffer } | { failOpen: string };

/**
 * The body as text for the engine. A gzip, deflate, br or zstd body is decoded (at most `limit`
 * bytes); anything the proxy cannot read exactly (another or a stacked encoding, bytes that do not
 * decode, bytes that are not UTF-8) is reported as a fail-open reason, and the original bytes go
 * upstream as they came.
 */
export async function decodeBody(body: Buffer, contentEncoding: string | undefined, limit: number): Promise<Decoded> {
  const enc = (contentEncoding ?? '').trim().toLowerCase();
  let bytes = body;
  if (enc && enc !== 'identity') {
    const opts = { maxOutputLength: limit };
    try {
      if (enc === 'gzip' || enc === 'x-gzip') bytes = await gunzip(body, opts);
      // `deflate` is zlib-wrapped (RFC 9110), but some clients send the raw stream under that name
      else if (enc === 'deflate') bytes = await inflate(body, opts).catch(() => inflateRaw(body, opts));
      else if (enc === 'br') bytes = await brotli(body, opts);
      else if (enc === 'zstd') bytes = unzstd(body, limit);
      else return { failOpen: `content-encoding ${JSON.stringify(enc)} is not one the proxy reads (${READ_ENCODINGS.join(', ')})` };
    } catch (e) {
      return { failOpen: `could not decode the ${enc} body: ${(e as Error).message}` };
    }
  }
  if (!isUtf8(bytes)) return { failOpen: 'the body is not valid UTF-8' };
  return { text: bytes.toString('utf8'), bytes };
}
