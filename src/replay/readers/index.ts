/**
 * Transcript readers: turn one agent session file into the model calls it made, in the engine's
 * wire formats, so `spillway replay` and the inspector can project every call of a real session.
 *
 * JSONL logs (Claude Code, Codex, OpenHands, pi, Gemini CLI, GitHub Copilot's CLI, Copilot's chat in VS Code, Qwen Code) are streamed line by
 * line and can be any size; single JSON documents (SWE-agent, mini-swe-agent, Cline, OpenCode's export, Continue, Copilot's older chat
 * sessions, request bodies) are parsed whole, up to 512 MB.
 */
import { open, stat } from 'node:fs/promises';
import { SpillwayError } from '../../engine/types';
import { apiTranscript, isMiniSweAgent, miniSweAgentTranscript } from './api';
import { readClaudeCode } from './claude-code';
import { clineTranscript } from './cline';
import { clineTaskTranscript } from './cline-task';
import { readCodex } from './codex';
import { readCopilotCli } from './copilot-cli';
import { geminiCliDocument, readGeminiCli } from './gemini-cli';
import { readOpenHands } from './openhands';
import { readPi } from './pi';
import { continueTranscript } from './continue';
import { openCodeTranscript } from './opencode';
import { readQwenCode } from './qwen-code';
import { copilotChatTranscript, readCopilotChat } from './copilot-chat';
import { classifyDocument, DETECT_HEAD_BYTES, describeDocument, sniffTranscript, unknownFormatError } from './detect';
import { readDocument } from './document';
import { SkipLog } from './skip-log';
import type { StreamOptions } from './lines';
import { sweAgentTranscript } from './swe-agent';
import { TRANSCRIPT_FORMATS, type ReadTranscriptOptions, type Transcript, type TranscriptFormat } from './types';
import { isRecord } from './wire';

export { detectTranscriptFormat } from './detect';
export { requestForCall, itemsKey, TRANSCRIPT_FORMATS } from './types';
export type { ReadTranscriptOptions, Transcript, TranscriptCompaction, TranscriptFormat } from './types';

async function readHead(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(DETECT_HEAD_BYTES);
    const { bytesRead } = await file.read(buffer, 0, DETECT_HEAD_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}

function fromDocument(format: TranscriptFormat, doc: unknown, path: string): Transcript {
  switch (format) {
    case 'swe-agent':
      return sweAgentTranscript(doc, path);
    case 'openai-chat':
      return isMiniSweAgent(doc) ? miniSweAgentTranscript(doc) : apiTranscript(doc, path, 'openai-chat');
    case 'anthropic-messages':
    case 'openai-responses':
    case 'gemini':
      return apiTranscript(doc, path, format);
    case 'gemini-cli':
      return geminiCliDocument(doc);
    case 'cline':
      return clineTranscript(doc, path);
    case 'cline-task':
      return clineTaskTranscript(doc, path);
    case 'opencode':
      return openCodeTranscript(doc, path);
    case 'continue':
      return continueTranscript(doc, path);
    case 'copilot-chat':
      return copilotChatTranscript(isRecord(doc) ? doc : {}, new SkipLog(), path);
    case 'claude-code':
    case 'codex':
    case 'openhands':
    case 'pi':
    case 'copilot-cli':
    case 'qwen-code':
      throw new SpillwayError(`${path}: a ${format} transcript is a JSONL log, not a single JSON document`, 'invalid-input');
  }
}

/**
 * Reads the transcript at `path`. Throws a SpillwayError naming the file for a missing, empty,
 * unrecognised or over-large file; skipped records (broken lines, unknown types) do not throw but
 * are counted in `skipped`. Rejects with the signal's reason when `signal` aborts.
 */
export async function readTranscript(path: string, opts: ReadTranscriptOptions = {}): Promise<Transcript> {
  const format = opts.format ?? 'auto';
  if (format !== 'auto' && !TRANSCRIPT_FORMATS.includes(format)) {
    throw new SpillwayError(
      `unknown transcript format ${JSON.stringify(format)}: use auto, ${TRANSCRIPT_FORMATS.join(', ')}`,
      'invalid-input',
    );
  }
  let size: number;
  try {
    const info = await stat(path);
    if (!info.isFile()) throw new SpillwayError(`${path}: not a file`, 'invalid-input');
    size = info.size;
  } catch (err) {
    if (err instanceof SpillwayError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    throw new SpillwayError(`${path}: ${code === 'ENOENT' ? 'no such file' : `cannot read (${String(err)})`}`, 'invalid-input');
  }
  if (size === 0) throw new SpillwayError(`${path}: the file is empty; there is no transcript to read`, 'empty');
  const stream: StreamOptions = { signal: opts.signal, onProgress: opts.onProgress };

  let resolved: TranscriptFormat;
  if (format === 'auto') {
    const sniff = sniffTranscript(path, await readHead(path));
    if (sniff.kind === 'document') {
      const doc = await readDocument(path, stream);
      const found = classifyDocument(doc) ?? sniff.format;
      if (found === undefined) throw unknownFormatError(path, describeDocument(doc));
      // a one-line JSONL log parses as a document too
      if (
        found !== 'claude-code' &&
        found !== 'codex' &&
        found !== 'openhands' &&
        found !== 'pi' &&
        found !== 'gemini-cli' &&
        found !== 'copilot-cli' &&
        found !== 'qwen-code'
      )
        return fromDocument(found, doc, path);
      // a saved chat of an older Gemini CLI is one document; a one-line JSONL chat parses as one too
      if (found === 'gemini-cli') return geminiCliDocument(doc);
      resolved = found;
    } else {
      resolved = sniff.format;
    }
  } else {
    resolved = format;
  }
  if (resolved === 'claude-code') return readClaudeCode(path, stream);
  if (resolved === 'codex') return readCodex(path, stream);
  if (resolved === 'pi') return readPi(path, stream);
  if (resolved === 'qwen-code') return readQwenCode(path, stream);
  if (resolved === 'copilot-chat') return readCopilotChat(path, stream);
  if (resolved === 'copilot-cli')
    return readCopilotCli(path, { ...stream, ...(opts.instance !== undefined ? { instance: opts.instance } : {}) });
  if (resolved === 'gemini-cli')
    return path.toLowerCase().endsWith('.json') ? geminiCliDocument(await readDocument(path, stream)) : readGeminiCli(path, stream);
  if (resolved === 'openhands')
    return readOpenHands(path, { ...stream, ...(opts.instance !== undefined ? { instance: opts.instance } : {}) });
  return fromDocument(resolved, await readDocument(path, stream), path);
}
