/**
 * Gemini CLI's own masking: once a session's tool outputs pass its thresholds, Gemini CLI writes
 * older large outputs to a file and sends `<tool_output_masked>` with a head and tail (`[TRUNCATED]`,
 * or lines omitted for shell output) and `Output too large. Full output available at: <file>`
 * (packages/core/src/context/toolOutputMaskingService.ts); its context pipeline's processor sends
 * `[Tool observation string (…) masked to preserve context window. Full string saved to: <file>]`
 * (processors/toolMaskingProcessor.ts). Like Claude Code's `<persisted-output>`, such a result is left
 * alone and reported as saved by the agent.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { recogniseMaskedOutput } from '../../src/engine/markers';

const FILE = '/home/u/.gemini/tmp/4f2a9c/tool-outputs/session-8d1e/read_file_read_file-1764200000000-abc_k3j9x.txt';
const line = (i: number) => `export function handler_${i}(req: Request): Response { return route(req, ${i}); }`;
/** As ToolOutputMaskingService writes a general tool's output: 250 characters of head and of tail. */
function maskedRead(): string {
  const content = JSON.stringify({ output: Array.from({ length: 400 }, (_, i) => line(i)).join('\n') }, null, 2);
  const preview = `${content.slice(0, 250)}\n... [TRUNCATED] ...\n${content.slice(-250)}`;
  return `<tool_output_masked>\n${preview}\n\nOutput too large. Full output available at: ${FILE}\n</tool_output_masked>`;
}
/** As it writes a shell output: ten lines of head and of tail, the exit code kept. */
function maskedShell(): string {
  const lines = Array.from({ length: 10 }, (_, i) => `PASS src/module_${i}.test.ts (${i}.2 s)`);
  const preview = `Output: ${lines.join('\n')}\n\n... [1,180 lines omitted] ...\n\n${lines.join('\n')}\nExit Code: 1`;
  return `<tool_output_masked>\n${preview}\n\nOutput too large. Full output available at: ${FILE}\n</tool_output_masked>`;
}
/** As the context pipeline's ToolMaskingProcessor writes any long string of a response. */
const maskedByProcessor = `<tool_output_masked>\n[Tool observation string (0.09MB, 1204 lines) masked to preserve context window. Full string saved to: ${FILE}]\n</tool_output_masked>`;

/** A Gemini API request with one masked response and one large plain one, camelCase or as the proto's snake_case. */
function request(masked: string, snake: boolean) {
  const fc = snake ? 'function_call' : 'functionCall';
  const fr = snake ? 'function_response' : 'functionResponse';
  const plain = Array.from({ length: 300 }, (_, i) => line(i + 1_000)).join('\n');
  return {
    contents: [
      { role: 'user', parts: [{ text: 'fix the router' }] },
      { role: 'model', parts: [{ [fc]: { name: 'read_file', args: { absolute_path: '/w/src/router.ts' } } }] },
      { role: 'user', parts: [{ [fr]: { id: 'read_file-1764200000000-abc', name: 'read_file', response: { output: masked } } }] },
      { role: 'model', parts: [{ [fc]: { name: 'read_file', args: { absolute_path: '/w/src/routes.ts' } } }] },
      { role: 'user', parts: [{ [fr]: { id: 'read_file-1764200000001-def', name: 'read_file', response: { output: plain } } }] },
    ],
  };
}

const config = { defaultCap: 200, previewChars: 100, clear: { enabled: false } };

describe("Gemini CLI's <tool_output_masked> results", () => {
  it('are recognised with the file they name, in both of its wordings', () => {
    expect(recogniseMaskedOutput(maskedRead())).toBe(FILE);
    expect(recogniseMaskedOutput(maskedShell())).toBe(FILE);
    expect(recogniseMaskedOutput(maskedByProcessor)).toBe(FILE);
  });

  it('are not recognised without the closing tag at the end (an output that merely starts like one)', () => {
    expect(recogniseMaskedOutput(`${maskedRead()}\n${line(1)}`)).toBeUndefined();
    expect(recogniseMaskedOutput(`text\n${maskedRead()}`)).toBeUndefined();
    expect(recogniseMaskedOutput('<tool_output_masked>\nno file named\n</tool_output_masked>')).toBe('');
  });

  for (const [wording, masked] of [
    ['a general tool', maskedRead()],
    ['shell', maskedShell()],
    ['the context pipeline', maskedByProcessor],
  ] as const)
    for (const snake of [false, true])
      it(`are never reduced again, even over the cap, and are counted as saved by Gemini CLI (${wording}, ${snake ? 'snake_case' : 'camelCase'} functionResponse)`, () => {
        const store = new MemorySink();
        const text = JSON.stringify(request(masked, snake));
        const p = createEngine(config, { store }).project(text, 'gemini');
        expect(masked.length).toBeGreaterThan(config.defaultCap);
        const out = JSON.parse(p.request) as ReturnType<typeof request>;
        const fr = snake ? 'function_response' : 'functionResponse';
        expect((out.contents[2]!.parts[0] as Record<string, { response: { output: string } }>)[fr]!.response.output).toBe(masked);
        // the plain large output beside it is offloaded as usual
        expect(p.reductions.map((r) => [r.result, r.callId])).toEqual([[1, 'read_file-1764200000001-def']]);
        expect(p.stats.savedByAgent).toEqual([
          { result: 0, callId: 'read_file-1764200000000-abc', tool: 'read_file', agent: 'gemini-cli', file: FILE, chars: masked.length },
        ]);
      });

  it('a projection of a projection changes nothing', () => {
    const engine = createEngine(config, { store: new MemorySink() });
    const p = engine.project(JSON.stringify(request(maskedRead(), false)), 'gemini');
    expect(engine.project(p.request, 'gemini').request).toBe(p.request);
  });
});

describe('through to the inspector', () => {
  it("a proxy turn's stats carry Gemini CLI's masked results into the turn detail, which the protocol accepts", async () => {
    const { proxyRecord } = await import('../../src/extension/inspector/proxySource');
    const { checkResult } = await import('../../src/protocol');
    const p = createEngine(config, { store: new MemorySink() }).project(JSON.stringify(request(maskedShell(), false)), 'gemini');
    const rec = proxyRecord({ session: 's', time: new Date(0).toISOString(), reductions: p.reductions, stats: p.stats } as any, 0);
    const detail = checkResult('turn/detail', {
      index: 0,
      results: [],
      missed: [],
      savedByAgent: rec.savedByAgent!.map(({ result: _r, ...s }) => s),
    });
    expect(detail.savedByAgent).toEqual([
      { tool: 'read_file', callId: 'read_file-1764200000000-abc', agent: 'gemini-cli', file: FILE, chars: maskedShell().length },
    ]);
  });
});
