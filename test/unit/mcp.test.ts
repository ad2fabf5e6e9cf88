/**
 * `spillway mcp` as an agent meets it: the official MCP client spawns the bundled dist/cli.js over
 * stdio and calls its tools. Pages reassemble an output byte for byte, every bad call is a tool
 * error with its reason, and the server answers the next call after each one.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handleFor } from '../../src/engine/handle';
import { FileStore, MAX_ANSWER_CHARS } from '../../src/store';

const CLI = join(__dirname, '../../dist/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'spillway-mcp-'));
const storeDir = join(dir, 'store');
const store = new FileStore(storeDir, { durable: false });

/** 2,500 lines with CRLF and multi-byte characters, then a non-BMP character straddling a page edge. */
const numbered = Array.from(
  { length: 2500 },
  (_, i) => `line ${i} ${i % 97 === 0 ? 'ERROR broke in src/app.ts:42 ✗ 🧪' : 'ok é'}\r\n`,
).join('');
const straddle = Math.ceil((numbered.length + 1) / MAX_ANSWER_CHARS) * MAX_ANSWER_CHARS - 1;
const long = numbered + 'x'.repeat(straddle - numbered.length) + '🧪 tail\n';
const longHandle = handleFor(long);
const short = 'FAILED tests/test_api.py::test_login - AssertionError\n1 failed, 20 passed\n';
const shortHandle = handleFor(short);

function put(text: string, tool: string, callId: string, session: string): void {
  store.put(handleFor(text), text, {
    tool,
    callId,
    stage: 'offload',
    chars: text.length,
    bytes: Buffer.byteLength(text),
    lines: 1,
    tokens: 1,
    session,
  });
}

let client: Client;

beforeAll(async () => {
  put(long, 'Bash', 'toolu_long', 'session-a');
  put(short, 'mcp__tests__pytest', 'toolu_short', 'session-b');
  client = new Client({ name: 'spillway-test', version: '0.0.0' });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [CLI, 'mcp', '--store', storeDir], stderr: 'pipe' }));
});

afterAll(async () => {
  await client?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }> {
  const r = (await client.callTool({ name, arguments: args })) as CallToolResult;
  const first = r.content[0];
  return { text: first?.type === 'text' ? first.text : '', isError: r.isError === true };
}

/** The header line and the exact text after it. */
function split(answer: string): { header: string; body: string } {
  const nl = answer.indexOf('\n');
  return { header: answer.slice(0, nl), body: answer.slice(nl + 1) };
}

describe('spillway mcp', () => {
  it('lists read_output, find_outputs and extract_output with descriptions that say what a handle is', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['extract_output', 'find_outputs', 'read_output']);
    for (const t of tools) expect(t.description).toMatch(/handle \(sw_ followed by 24 hex digits\)/);
    expect(tools.find((t) => t.name === 'read_output')!.inputSchema.required).toEqual(['handle']);
  });

  it('reassembles an output byte for byte from pages read with offset and limit', async () => {
    expect(long.length).toBeGreaterThan(3 * MAX_ANSWER_CHARS);
    let offset = 0;
    let whole = '';
    const sizes: number[] = [];
    for (let page = 0; page < 20 && offset < long.length; page++) {
      const r = await call('read_output', { handle: longHandle, offset, limit: MAX_ANSWER_CHARS });
      expect(r.isError).toBe(false);
      const { header, body } = split(r.text);
      expect(header).toContain(`of ${long.length.toLocaleString('en-US')}`);
      whole += body;
      sizes.push(body.length);
      offset += body.length;
    }
    expect(Buffer.from(whole).equals(Buffer.from(long))).toBe(true);
    // the page that would have split the surrogate pair stops one char early instead
    expect(sizes).toContain(MAX_ANSWER_CHARS - 1);
  });

  it('caps a whole-output read at one page and names the next one', async () => {
    const r = await call('read_output', { handle: longHandle });
    const { header, body } = split(r.text);
    expect(body).toBe(long.slice(0, MAX_ANSWER_CHARS));
    expect(header).toContain(`next: offset ${MAX_ANSWER_CHARS}, limit ${MAX_ANSWER_CHARS}`);
  });

  it('reads a short output whole, saying it is all of it', async () => {
    const { header, body } = split((await call('read_output', { handle: shortHandle })).text);
    expect(body).toBe(short);
    expect(header).toBe(`[spillway ${shortHandle}: all 2 lines (${short.length} chars)]`);
  });

  it('answers lines as spillway read does, terminators included', async () => {
    const { header, body } = split((await call('read_output', { handle: longHandle, lines: '2:3' })).text);
    expect(body).toBe('line 1 ok é\r\nline 2 ok é\r\n');
    expect(header).toContain('lines 2–3 of 2,501');
  });

  it('greps with context and ignore_case', async () => {
    const { header, body } = split(
      (await call('read_output', { handle: longHandle, grep: 'error BROKE', ignore_case: true, context: 1 })).text,
    );
    expect(header).toMatch(/^\[spillway sw_[0-9a-f]{24}: 26 matches of \/error BROKE\/i with 1 line of context/);
    expect(body).toContain('98:line 97 ERROR broke in src/app.ts:42 ✗ 🧪');
    expect(body).toContain('97-line 96 ok é');
  });

  it('finds the outputs of a session, newest first, and by tool, call id and text', async () => {
    expect((await call('find_outputs', { session: 'session-b' })).text).toMatch(
      new RegExp(`^${shortHandle} · mcp__tests__pytest · call toolu_short`),
    );
    expect((await call('find_outputs', { tool: 'pytest' })).text).toContain(shortHandle);
    expect((await call('find_outputs', { call_id: 'toolu_long' })).text).toContain(longHandle);
    const byText = (await call('find_outputs', { text: 'assertionerror' })).text;
    expect(byText).toContain(shortHandle);
    expect(byText).not.toContain(longHandle);
    expect((await call('find_outputs', {})).text.split('\n')).toHaveLength(2);
  });

  it('says so when no stored output matches', async () => {
    expect(await call('find_outputs', { tool: 'Nothing' })).toEqual({ text: 'no stored output matches', isError: false });
  });
});

describe('spillway mcp errors are tool results and the server keeps serving', () => {
  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['an unknown handle', { handle: 'sw_' + 'f'.repeat(24) }, /sw_f{24}/],
    ['a handle that tries to leave the store', { handle: '../../../etc/passwd' }, /is not a Spillway handle/],
    ['a bad regex', { handle: shortHandle, grep: '(unclosed' }, /not a valid JavaScript regular expression/],
    ['a limit over the cap', { handle: shortHandle, offset: 0, limit: MAX_ANSWER_CHARS + 1 }, /over the cap of 8,000 chars per answer/],
    ['a bad line range', { handle: shortHandle, lines: '5:2' }, /is not a line range/],
    ['options that conflict', { handle: shortHandle, lines: '1:2', offset: 3 }, /offset counts chars and cannot be combined with lines/],
    ['an argument of the wrong type', { handle: shortHandle, context: 'two' }, /context/],
  ];
  for (const [what, args, reason] of cases) {
    it(`answers ${what} with isError and the reason, then reads again`, async () => {
      const bad = await call('read_output', args);
      expect(bad.isError).toBe(true);
      expect(bad.text).toMatch(reason);
      const good = await call('read_output', { handle: shortHandle });
      expect(good.isError).toBe(false);
      expect(split(good.text).body).toBe(short);
    });
  }

  it('answers a find_outputs limit out of range with isError', async () => {
    const bad = await call('find_outputs', { limit: 0 });
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/limit/);
  });
});
