/**
 * `extract` (src/extract): chunking with overlap, each chunk asked, the answers merged, grep first
 * when the question names something greppable, the MCP sampling adapter; all with scripted models
 * over an in-memory store.
 */
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../src/extract/chunks';
import { extract, greppableTerms, type ExtractModel } from '../../src/extract/extract';
import { EXTRACT_TOOL, extractOverMcp, samplingModel, type SamplingServer } from '../../src/extract/sampling';
import { MemoryStore } from '../../src/store';
import { handleFor } from '../../src/engine/handle';

const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1)).join('\n') + '\n';
const LOG = lines(3000, (i) => (i % 700 === 0 ? `FAIL test/t${i}.test.ts > case ${i}: expected ${i} got 0` : `  ok ${i} passes quietly`));
const JSON_OUT = JSON.stringify({ links: [{ url: 'https://a.example/x' }, { note: 'none here' }, { url: 'http://b.example/y' }] }, null, 2);

const store = new MemoryStore();
const put = (text: string) => {
  const h = handleFor(text);
  store.put(h, text, { tool: 'bash', callId: 'c', stage: 'offload', chars: text.length, bytes: text.length, lines: 1, tokens: 1 });
  return h;
};
const LOG_HANDLE = put(LOG);
const JSON_HANDLE = put(JSON_OUT);
const read = store.read.bind(store);

/** A scripted model: records every prompt; answers chunk prompts by listing their FAIL lines, merges by joining. */
function scripted(): ExtractModel & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    prompts,
    async ask({ user }) {
      prompts.push(user);
      if (user.includes('<answer part=')) {
        const parts = [...user.matchAll(/<answer part="\d+">\n([\s\S]*?)\n<\/answer>/g)].flatMap((m) => m[1]!.split('\n'));
        return [...new Set(parts)].join('\n');
      }
      const text = /<output>\n([\s\S]*)\n<\/output>/.exec(user)![1]!;
      const found = text.split('\n').filter((l) => /FAIL|https?:\/\//.test(l));
      return found.length ? found.map((l) => l.replace(/^\d+[:-]/, '').trim()).join('\n') : 'NOTHING';
    },
  };
}

describe('chunkText', () => {
  it('covers the text with chunks of whole lines, each starting before the previous one ended', () => {
    const chunks = chunkText(LOG, 10_000, 10);
    expect(chunks.length).toBeGreaterThan(6);
    expect(chunks[0]!.start).toBe(0);
    expect(chunks.at(-1)!.end).toBe(LOG.length);
    for (const [i, c] of chunks.entries()) {
      expect(c.text).toBe(LOG.slice(c.start, c.end));
      expect(c.text.length).toBeLessThanOrEqual(10_000);
      expect(c.start === 0 || LOG[c.start - 1] === '\n').toBe(true);
      if (i > 0) expect(c.start).toBeLessThanOrEqual(chunks[i - 1]!.end - 1_000);
    }
  });

  it('numbers the lines of each chunk, from the line the text starts at', () => {
    const [first, second] = chunkText('a\nb\nc\nd\n', 4, 0, 10);
    expect([first!.firstLine, first!.lastLine, second!.firstLine, second!.lastLine]).toEqual([10, 11, 12, 13]);
  });

  it('cuts a line longer than a chunk by characters, still making progress', () => {
    const chunks = chunkText('x'.repeat(25), 10, 20);
    expect(chunks.map((c) => [c.start, c.end])).toEqual([
      [0, 10],
      [8, 18],
      [16, 25],
    ]);
  });

  it('refuses an overlap over 50% or a chunk under one character', () => {
    expect(() => chunkText('abc', 10, 60)).toThrow(/overlapPercent must be between 0 and 50/);
    expect(() => chunkText('abc', 0)).toThrow(/chunkChars must be a whole number/);
  });
});

describe('greppableTerms', () => {
  it('takes quoted strings, paths and dotted names, upper-case words and URLs from a question', () => {
    expect(greppableTerms('the failing tests with their first error line: FAIL')).toBe('FAIL');
    expect(greppableTerms('every URL in this JSON')).toBe('https?://');
    expect(greppableTerms('what does "connection refused" say about src/db/pool.ts?')).toBe('connection refused|src/db/pool\\.ts');
  });

  it('finds nothing in a question of plain words', () => {
    expect(greppableTerms('summarise what happened')).toBeUndefined();
  });
});

describe('extract', () => {
  it('full-chunked: asks every chunk, merges the answers, and names the handle and the lines it read', async () => {
    const model = scripted();
    const a = await extract({ handle: LOG_HANDLE, question: 'which tests failed?', mode: 'full-chunked', chunkChars: 10_000 }, read, model);
    const chunkCalls = model.prompts.filter((p) => p.includes('<output>')).length;
    expect(chunkCalls).toBeGreaterThan(6);
    expect(a.calls).toBe(chunkCalls + 1);
    expect(a.text.split('\n')[0]).toBe(
      `[spillway extract ${LOG_HANDLE}, full-chunked: read lines 1–3,000 of 3,000 in ${chunkCalls} chunks overlapping by 10%]`,
    );
    expect(a.text.split('\n').slice(1)).toEqual(
      [700, 1400, 2100, 2800].map((i) => `FAIL test/t${i}.test.ts > case ${i}: expected ${i} got 0`),
    );
  });

  it('read-grep: greps for what the question names and asks only about the matches, in one call', async () => {
    const model = scripted();
    const a = await extract({ handle: LOG_HANDLE, question: 'the FAIL lines with their test files' }, read, model);
    expect([a.mode, a.calls]).toEqual(['read-grep', 1]);
    expect(a.read).toMatch(/^4 matches of \/FAIL\/i with 3 lines of context, 28 lines of 3,000/);
    expect(a.text).toContain('FAIL test/t2800.test.ts > case 2800: expected 2800 got 0');
  });

  it('auto answers "every URL in this JSON" by grepping for URLs', async () => {
    const a = await extract({ handle: JSON_HANDLE, question: 'every URL in this JSON' }, read, scripted());
    expect(a.mode).toBe('read-grep');
    expect(a.text).toContain('"url": "https://a.example/x"');
    expect(a.text).toContain('"url": "http://b.example/y"');
  });

  it('falls back to full-chunked when the grep finds nothing, and says so', async () => {
    const a = await extract({ handle: LOG_HANDLE, question: 'anything about "segfault"?', chunkChars: 200_000 }, read, scripted());
    expect(a.mode).toBe('full-chunked');
    expect(a.read).toMatch(/in one chunk \(grep found no line matching \/segfault\/i\)$/);
  });

  it('reads only the lines asked for', async () => {
    const model = scripted();
    const a = await extract({ handle: LOG_HANDLE, question: 'what failed?', mode: 'full-chunked', lines: '1300:1500' }, read, model);
    expect(a.read).toBe('lines 1,300–1,500 of 3,000 in one chunk');
    expect(a.text.split('\n')[1]).toBe('FAIL test/t1400.test.ts > case 1400: expected 1400 got 0');
  });

  it('stops at maxChunks and says from which line it did not read', async () => {
    const a = await extract(
      { handle: LOG_HANDLE, question: 'what failed?', mode: 'full-chunked', chunkChars: 10_000, maxChunks: 2 },
      read,
      scripted(),
    );
    expect(a.read).toMatch(/^lines 1–\d+ of 3,000 in 2 chunks overlapping by 10%; \d+ more chunk\(s\) from line [\d,]+ not read/);
  });

  it('answers that nothing was found without a merge call when no chunk found anything', async () => {
    const model = scripted();
    const a = await extract({ handle: LOG_HANDLE, question: 'which tests failed?', lines: '1:600' }, read, model);
    expect([a.calls, a.text.split('\n')[1]]).toEqual([1, 'Nothing in the part read answers the question.']);
  });

  it('throws the store’s reason for an unknown handle', async () => {
    await expect(extract({ handle: 'sw_000000000000000000000000', question: 'x' }, read, scripted())).rejects.toThrow(
      /sw_000000000000000000000000/,
    );
  });
});

describe('extract over MCP sampling', () => {
  const server = (sampling: boolean, reply = 'FAIL test/t700.test.ts'): SamplingServer & { requests: unknown[] } => {
    const requests: unknown[] = [];
    return {
      requests,
      getClientCapabilities: () => (sampling ? { sampling: {} } : {}),
      createMessage: async (p) => {
        requests.push(p);
        return { content: { type: 'text', text: reply } };
      },
    };
  };

  it("answers with the client's model through sampling/createMessage", async () => {
    const s = server(true);
    const r = await extractOverMcp({ handle: LOG_HANDLE, question: 'the FAIL lines' }, s, read);
    expect(r.isError).toBeUndefined();
    expect(r.content[0]!.text).toMatch(new RegExp(`^\\[spillway extract ${LOG_HANDLE}, read-grep: read 4 matches`));
    expect(s.requests[0]).toMatchObject({ maxTokens: 4000, includeContext: 'none', messages: [{ role: 'user' }] });
  });

  it('is a tool error saying what is missing when the client offers no sampling', async () => {
    const r = await extractOverMcp({ handle: LOG_HANDLE, question: 'the FAIL lines' }, server(false), read);
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toMatch(/does not offer one \(it did not declare the sampling capability\)/);
    expect(() => samplingModel(server(false))).toThrow(/read_output/);
  });

  it('declares the tool for the MCP server with the fields the call is checked against', () => {
    expect(EXTRACT_TOOL.name).toBe('extract_output');
    expect(EXTRACT_TOOL.inputSchema.required).toEqual(['handle', 'question']);
    expect(Object.keys(EXTRACT_TOOL.inputSchema.properties)).toEqual(['handle', 'question', 'mode', 'lines', 'maxChunks']);
  });

  it('is a tool error naming the field for bad input', async () => {
    const r = await extractOverMcp({ handle: LOG_HANDLE, question: '' }, server(true), read);
    expect([r.isError, r.content[0]!.text]).toEqual([true, expect.stringMatching(/question: question is empty/)]);
  });
});
