/**
 * Whole-file reads for the single-document formats (SWE-agent `.traj`, mini-swe-agent
 * `.traj.json`, API request bodies). JSON.parse needs the whole text as one string, so these are
 * read whole, straight into one buffer of the file's size (no chunk list, no second copy of the
 * bytes) while reporting progress.
 */
import { open } from 'node:fs/promises';
import { SpillwayError } from '../../engine/types';
import { throwIfAborted, type StreamOptions } from './lines';

/**
 * V8 cannot hold a string longer than about 2^29 characters (512 Mi), so a larger JSON document
 * cannot be parsed at all; the limit is checked up front to fail with a clear message instead of a
 * RangeError from deep inside the runtime.
 */
const MAX_DOCUMENT_BYTES = 512 * 1024 * 1024;
const CHUNK_BYTES = 4 << 20;

async function readDocumentText(path: string, opts: StreamOptions = {}): Promise<string> {
  throwIfAborted(opts.signal);
  const file = await open(path, 'r');
  try {
    const size = (await file.stat()).size;
    if (size > MAX_DOCUMENT_BYTES) {
      throw new SpillwayError(
        `${path}: ${size} bytes is over the ${MAX_DOCUMENT_BYTES} byte (512 MB) limit for single JSON documents ` +
          '(.traj, .traj.json, .json are parsed whole); JSONL session logs have no such limit',
        'too-large',
      );
    }
    const buffer = Buffer.allocUnsafe(size);
    let offset = 0;
    while (offset < size) {
      throwIfAborted(opts.signal);
      const { bytesRead } = await file.read(buffer, offset, Math.min(CHUNK_BYTES, size - offset), offset);
      if (bytesRead === 0) break; // the file shrank while we read it
      offset += bytesRead;
      opts.onProgress?.(offset, size);
    }
    let text = buffer.toString('utf8', 0, offset);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return text;
  } finally {
    await file.close();
  }
}

export async function readDocument(path: string, opts: StreamOptions = {}): Promise<unknown> {
  const text = await readDocumentText(path, opts);
  if (text.trim() === '') throw new SpillwayError(`${path}: the file is empty; there is no transcript to read`, 'empty');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new SpillwayError(`${path}: not valid JSON (${err instanceof Error ? err.message : String(err)})`, 'invalid-input');
  }
}
