/**
 * Properties of the transcript readers, checked on generated input: line splitting does not depend
 * on where chunk boundaries fall, and any Claude Code session, however its messages are split over
 * lines and interleaved with noise, becomes well-formed Anthropic requests.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { readClaudeCode } from '../../src/replay/readers/claude-code';
import { readLines } from '../../src/replay/readers/lines';
import { requestForCall } from '../../src/replay/readers/types';
import { anthropicProblems, toolResults } from './readers-wire-checks';

let dir: string;
let counter = 0;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'spillway-readers-prop-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});
const tempFile = (content: string | Buffer) => {
  const path = join(dir, `f${counter++}`);
  writeFileSync(path, content);
  return path;
};

describe('line splitting', () => {
  test('lines come back the same wherever the chunk boundaries fall', async () => {
    const line = fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !s.includes('\n') && !s.includes('\r'));
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.boolean(),
        fc.integer({ min: 1, max: 9 }),
        async (lines, crlf, finalNewline, chunkBytes) => {
          const text = lines.join(crlf ? '\r\n' : '\n') + (finalNewline ? '\n' : '');
          const got: string[] = [];
          for await (const l of readLines(tempFile(text), { chunkBytes })) got.push(l.text);
          // a text ending in '\n' has no empty last line; one that does not still yields its last line
          const expected = finalNewline || lines.at(-1) !== '' ? lines : lines.slice(0, -1);
          expect(got).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });
});

interface Turn {
  blocks: ('text' | 'tool')[];
  /** log the first tool's result before the message's next block (parallel tool calls) */
  interleave: boolean;
  /** the user writes something after the results */
  userText: boolean;
}

const turnArb: fc.Arbitrary<Turn> = fc
  .record({
    blocks: fc.array(fc.constantFrom<'text' | 'tool'>('text', 'tool'), { minLength: 1, maxLength: 4 }),
    interleave: fc.boolean(),
    userText: fc.boolean(),
  })
  .map((t) => ({ ...t, userText: t.userText || !t.blocks.includes('tool') }));

const NOISE = [
  '{"type":"system","subtype":"informational","content":"hook","uuid":"NOISE"}',
  '{"type":"file-history-snapshot","messageId":"m","snapshot":{}}',
  '{"type":"user","isSidechain":true,"uuid":"NOISE","message":{"role":"user","content":"sub-agent"}}',
  '{"type":"assistant","isSidechain":true,"uuid":"NOISE","message":{"id":"side","role":"assistant","content":[{"type":"text","text":"x"}]}}',
  '{"type":"user","message":{"role":"user","content":[{"type":"tool_res',
];

function sessionLines(turns: Turn[]): string[] {
  let uuid = 0;
  const line = (type: 'user' | 'assistant', content: unknown, id?: string) =>
    JSON.stringify({
      type,
      uuid: `r${uuid++}`,
      isSidechain: false,
      message: type === 'user' ? { role: 'user', content } : { id, role: 'assistant', model: 'm', content },
    });
  const out = [line('user', 'Start')];
  turns.forEach((turn, i) => {
    const pending: string[] = [];
    turn.blocks.forEach((kind, j) => {
      const block =
        kind === 'text'
          ? { type: 'text', text: `t${i}.${j}` }
          : { type: 'tool_use', id: `toolu_${i}_${j}`, name: `Tool${j}`, input: { n: j } };
      out.push(line('assistant', [block], `msg_${i}`));
      if (kind === 'tool') {
        const result = line('user', [{ type: 'tool_result', tool_use_id: `toolu_${i}_${j}`, content: `out ${i}.${j}` }]);
        if (turn.interleave && pending.length === 0 && j < turn.blocks.length - 1) out.push(result);
        else pending.push(result);
      }
    });
    out.push(...pending);
    if (turn.userText) out.push(line('user', `next ${i}`));
  });
  return out;
}

describe('Claude Code sessions', () => {
  test('any session split over lines and mixed with noise gives one call per assistant message and well-formed requests', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(turnArb, { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(), fc.constantFrom(...NOISE)), { maxLength: 5 }),
        async (turns, noise) => {
          const lines = sessionLines(turns);
          // noise goes anywhere after the first line and before the last one
          for (const [at, text] of noise) lines.splice(1 + (at % (lines.length - 1)), 0, text);
          const t = await readClaudeCode(tempFile(lines.join('\n') + '\n'));
          expect(t.calls).toHaveLength(turns.length);
          const tools = turns.reduce((n, turn) => n + turn.blocks.filter((b) => b === 'tool').length, 0);
          expect(toolResults(t.wire, t.items).filter((r) => r.name !== undefined)).toHaveLength(tools);
          for (let k = 0; k < t.calls.length; k++) {
            expect(anthropicProblems(requestForCall(t, k).messages as unknown[])).toEqual([]);
          }
          expect(t.skipped.total).toBe(noise.length);
        },
      ),
      { numRuns: 200 },
    );
  });
});
