/**
 * How transcripts are read: JSONL line by line from a stream (any size, lines across chunk
 * boundaries, progress, abort), single documents whole with a size limit, and format detection
 * from the first bytes only.
 */
import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync, createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { detectTranscriptFormat, readTranscript, requestForCall } from '../../src/replay/readers/index';
import { readLines } from '../../src/replay/readers/lines';
import { anthropicProblems } from './readers-wire-checks';
import { failing } from '../support/expect';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'spillway-readers-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function collect(path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const line of readLines(path)) out.push(line.text);
  return out;
}

const claudeLine = (type: 'user' | 'assistant', uuid: string, content: unknown, id?: string) =>
  JSON.stringify({
    type,
    uuid,
    sessionId: 's',
    isSidechain: false,
    message: type === 'user' ? { role: 'user', content } : { id, role: 'assistant', model: 'claude-x', content },
  });

/** Writes a Claude Code session of `turns` tool calls with `outputChars`-long results. */
async function writeClaudeSession(path: string, turns: number, outputChars: number): Promise<void> {
  const out = createWriteStream(path);
  const write = (s: string) => new Promise<void>((resolve) => (out.write(s + '\n') ? resolve() : out.once('drain', resolve)));
  await write(claudeLine('user', 'u0', 'Start'));
  for (let i = 0; i < turns; i++) {
    await write(
      claudeLine(
        'assistant',
        `a${i}`,
        [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: `cat part${i}` } }],
        `msg_${i}`,
      ),
    );
    await write(
      claudeLine('user', `u${i + 1}`, [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: `${i}:`.padEnd(outputChars, 'é') }]),
    );
  }
  await write(claudeLine('assistant', 'done', [{ type: 'text', text: 'Done.' }], 'msg_done'));
  await new Promise<void>((resolve) => out.end(resolve));
}

describe('line splitting', () => {
  test('a line longer than a read chunk comes back whole', async () => {
    const path = join(dir, 'long-line.txt');
    const long = 'x'.repeat(3 * 1024 * 1024 + 17);
    writeFileSync(path, `a\n${long}\nb\n`);
    expect(await collect(path)).toEqual(['a', long, 'b']);
  });

  test('multi-byte characters cut by a chunk boundary are decoded intact', async () => {
    const path = join(dir, 'multibyte.txt');
    // 'é' is 2 bytes and '😀' 4, so some of them straddle the 1 MiB chunk boundary
    const line = 'é😀'.repeat(400_000);
    writeFileSync(path, `${line}\n${line}`);
    expect(await collect(path)).toEqual([line, line]);
  });

  test('CRLF line ends, a byte order mark and a missing final newline are handled', async () => {
    const path = join(dir, 'crlf.txt');
    writeFileSync(path, '\uFEFF{"a":1}\r\n{"b":2}\r\n{"c":3}');
    expect(await collect(path)).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });
});

describe('large JSONL sessions', () => {
  let path: string;
  beforeAll(async () => {
    path = join(dir, 'big-session.jsonl');
    await writeClaudeSession(path, 4000, 4000); // about 33 MB
  });

  test('a session of tens of megabytes is read completely', async () => {
    const t = await readTranscript(path);
    expect(t.calls).toHaveLength(4001);
    expect(t.items).toHaveLength(8002);
    expect(t.skipped.total).toBe(0);
    expect(anthropicProblems(requestForCall(t, 4000).messages as unknown[])).toEqual([]);
  });

  test('progress is reported in growing byte counts up to the file size', async () => {
    const seen: [number, number][] = [];
    await readTranscript(path, { onProgress: (read, total) => seen.push([read, total]) });
    const size = statSync(path).size;
    expect(seen.length).toBeGreaterThan(10);
    expect(
      failing(seen, ([read, total], i) => total === size && (i === 0 || read > seen[i - 1]![0])),
      'elements that break the rule',
    ).toEqual([]);
    expect(seen.at(-1)).toEqual([size, size]);
  });

  test('an abort during the read rejects with an AbortError and stops reading', async () => {
    const controller = new AbortController();
    let calls = 0;
    const read = readTranscript(path, {
      signal: controller.signal,
      onProgress: () => {
        calls += 1;
        if (calls === 2) controller.abort();
      },
    });
    await expect(read).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls).toBe(2);
  });

  test('an already aborted signal rejects before reading', async () => {
    const controller = new AbortController();
    controller.abort();
    let progress = 0;
    await expect(readTranscript(path, { signal: controller.signal, onProgress: () => (progress += 1) })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(progress).toBe(0);
  });
});

describe('single JSON documents', () => {
  test('a document over 512 MB is refused with the file name and the limit', async () => {
    const path = join(dir, 'huge.traj');
    writeFileSync(path, '');
    truncateSync(path, 512 * 1024 * 1024 + 1); // sparse: takes no disk space
    await expect(readTranscript(path, { format: 'swe-agent' })).rejects.toThrow(
      /huge\.traj: 536870913 bytes is over the 536870912 byte \(512 MB\) limit/,
    );
  });

  test('progress is reported while a document is read', async () => {
    const path = join(dir, 'request.json');
    writeFileSync(path, JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
    const seen: number[] = [];
    await readTranscript(path, { onProgress: (read, total) => seen.push(read, total) });
    expect(seen.slice(-2)).toEqual([statSync(path).size, statSync(path).size]);
  });

  test('a document that is not valid JSON is refused with its name and the parse error', async () => {
    const path = join(dir, 'broken.traj');
    writeFileSync(path, '{"history": [');
    await expect(readTranscript(path)).rejects.toThrow(/broken\.traj: not valid JSON \(/);
  });
});

describe('format detection from the first bytes', () => {
  test('a Codex log whose first line is longer than the bytes looked at is still recognised', () => {
    const first = JSON.stringify({
      timestamp: 't',
      type: 'session_meta',
      payload: { id: 'x', base_instructions: { text: 'y'.repeat(100_000) } },
    });
    expect(detectTranscriptFormat('/logs/rollout.jsonl', first.slice(0, 64 * 1024))).toBe('codex');
    expect(detectTranscriptFormat('/logs/no-extension', first.slice(0, 64 * 1024))).toBe('codex');
  });

  test('a Claude Code log whose first line is longer than the bytes looked at is still recognised', () => {
    const first = claudeLine('user', 'u', 'z'.repeat(100_000)).replace('{', '{"parentUuid":null,');
    expect(detectTranscriptFormat('/p/session.jsonl', first.slice(0, 64 * 1024))).toBe('claude-code');
  });

  test('a Claude Code log starting with a summary record is recognised', () => {
    const head = '{"type":"summary","summary":"x","leafUuid":"u"}\n{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}\n';
    expect(detectTranscriptFormat('/p/session.jsonl', Buffer.from(head))).toBe('claude-code');
  });

  test('.traj files are SWE-agent and .traj.json files with messages are mini-swe-agent chat', () => {
    expect(detectTranscriptFormat('/t/x.traj', '{"environment": "swe_main", "traj')).toBe('swe-agent');
    expect(detectTranscriptFormat('/t/x.traj.json', '{"info": {"model_stats": {}}, "messages": [{"role": "system", "content": "You')).toBe(
      'openai-chat',
    );
  });

  test('a request body cut off by the head is told apart by its item shapes', () => {
    const big = 'w'.repeat(100_000);
    const anthropic = JSON.stringify({
      model: 'c',
      messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: big }] }],
    });
    const responses = JSON.stringify({ model: 'g', input: [{ type: 'function_call_output', call_id: 'c', output: big }] });
    const chat = JSON.stringify({ model: 'g', messages: [{ role: 'tool', tool_call_id: 'c', content: big }] });
    expect(detectTranscriptFormat('/r/a.json', anthropic.slice(0, 65536))).toBe('anthropic-messages');
    expect(detectTranscriptFormat('/r/b.json', responses.slice(0, 65536))).toBe('openai-responses');
    expect(detectTranscriptFormat('/r/c.json', chat.slice(0, 65536))).toBe('openai-chat');
  });

  test('an empty head is refused as an empty file', () => {
    expect(() => detectTranscriptFormat('/x/empty.jsonl', '')).toThrow(/empty\.jsonl: the file is empty/);
  });

  test('an unrecognisable head is refused naming the file, what was seen and the formats', () => {
    expect(() => detectTranscriptFormat('/x/notes.md', '# Notes\n')).toThrow(
      /^Cannot tell the transcript format of \/x\/notes\.md: it is neither JSON nor JSONL \(it starts with "# Notes\\n"\)\. Supported formats: claude-code .*Pass --format to choose one\.$/,
    );
  });
});
