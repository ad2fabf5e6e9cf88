/**
 * Streaming line reader for JSONL transcripts. Session logs grow to hundreds of megabytes, more
 * than fits in one JavaScript string, so they are read chunk by chunk and split on '\n' at the byte
 * level (a multi-byte character never straddles a split, since UTF-8 never uses 0x0A inside one).
 * Only the current line is ever held as text.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { SkipLog } from './skip-log';

/** Bigger than the default 64 KB so a 500 MB file takes a few hundred reads, not thousands. */
const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;

export interface StreamOptions {
  signal?: AbortSignal;
  onProgress?: (bytesRead: number, totalBytes: number) => void;
  /** read size; only tests change it, to put chunk boundaries everywhere */
  chunkBytes?: number;
}

export interface Line {
  /** 1-based line number in the file */
  number: number;
  text: string;
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw signal.reason instanceof Error ? signal.reason : new DOMException('The read was aborted', 'AbortError');
  }
}

/** Yields the file's lines without their line terminator ('\n' or '\r\n'), BOM stripped from line 1. */
export async function* readLines(path: string, opts: StreamOptions = {}): AsyncGenerator<Line> {
  throwIfAborted(opts.signal);
  const totalBytes = (await stat(path)).size;
  const stream = createReadStream(path, { highWaterMark: opts.chunkBytes ?? CHUNK_BYTES });
  let pending: Buffer[] = [];
  let number = 0;
  let bytesRead = 0;
  const decode = (parts: Buffer[], tail: Buffer): Line => {
    number += 1;
    let text = parts.length === 0 ? tail.toString('utf8') : Buffer.concat([...parts, tail]).toString('utf8');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (number === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    return { number, text };
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      throwIfAborted(opts.signal);
      bytesRead += chunk.length;
      let start = 0;
      for (let nl = chunk.indexOf(NEWLINE, start); nl !== -1; nl = chunk.indexOf(NEWLINE, start)) {
        const line = decode(pending, chunk.subarray(start, nl));
        pending = [];
        start = nl + 1;
        yield line;
        throwIfAborted(opts.signal);
      }
      if (start < chunk.length) pending.push(chunk.subarray(start));
      opts.onProgress?.(bytesRead, totalBytes);
    }
    if (pending.length > 0) yield decode(pending.slice(0, -1), pending[pending.length - 1]!);
  } finally {
    stream.destroy();
  }
}

/**
 * The JSON objects of a line that holds several written back to back (`{...}{...}`), or undefined
 * when it is not that. Two appends that raced can leave two records on one line with no newline
 * between them; each is whole, so each can be read.
 */
export function splitConcatenated(text: string): unknown[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c /* \\ */) i++;
      else if (ch === 0x22 /* " */) inString = false;
      continue;
    }
    if (ch === 0x22) inString = true;
    else if (ch === 0x7b /* { */) {
      if (depth === 0) start = i;
      depth++;
    } else if (ch === 0x7d /* } */) {
      depth--;
      if (depth < 0) return undefined;
      if (depth === 0) parts.push(text.slice(start, i + 1));
    } else if (depth === 0 && ch !== 0x20 && ch !== 0x09) return undefined;
  }
  if (depth !== 0 || parts.length < 2) return undefined;
  try {
    return parts.map((p) => JSON.parse(p) as unknown);
  } catch {
    return undefined;
  }
}

/** How `forEachRecord` treats lines; see `splitConcatenated`. */
export interface RecordOptions {
  /** read each object of a line that holds several back to back (the agent's appends raced) */
  concatenated?: boolean;
}

/**
 * Reads a JSONL file record by record. Blank lines are ignored. A line that is not valid JSON is
 * skipped, counted and noted; when it is the last line it is reported as truncated (the usual
 * cause: the agent was killed in the middle of a write), so the rest of the session still replays.
 * A line that is valid JSON but not an object is skipped as `not-an-object`. With `concatenated`,
 * a line of several whole objects back to back yields each of them, with a note.
 */
export async function forEachRecord(
  path: string,
  opts: StreamOptions,
  log: SkipLog,
  onRecord: (record: Record<string, unknown>, line: number) => void,
  records: RecordOptions = {},
): Promise<void> {
  let broken: { line: number; why: string } | undefined;
  for await (const { number, text } of readLines(path, opts)) {
    if (text.trim() === '') continue;
    if (broken) {
      log.skip('invalid-json', `line ${broken.line}: not valid JSON (${broken.why})`);
      broken = undefined;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      const several = records.concatenated ? splitConcatenated(text) : undefined;
      if (several?.every((v) => typeof v === 'object' && v !== null && !Array.isArray(v))) {
        log.note(`line ${number}: ${several.length} records written back to back on one line (each is read)`);
        for (const v of several) onRecord(v as Record<string, unknown>, number);
        continue;
      }
      broken = { line: number, why: err instanceof Error ? err.message : String(err) };
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      log.skip('not-an-object', `line ${number}: a JSON ${Array.isArray(value) ? 'array' : typeof value}, not a record object`);
      continue;
    }
    onRecord(value as Record<string, unknown>, number);
  }
  if (broken) {
    log.skip('truncated-last-line', `line ${broken.line}: not valid JSON (truncated last line: ${broken.why})`);
  }
}
