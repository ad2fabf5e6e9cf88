/**
 * The Gemini API format (`contents[].parts[]` with `functionCall` / `functionResponse`): detection,
 * which call a response answers (by id, else by name and order), where its text is (`output`,
 * `error`, MCP-style `content`), what a reduction keeps byte for byte, and a request shaped as
 * Gemini CLI sends it.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { readRequest } from '../../src/engine/formats';
import { resultText } from '../../src/engine/formats/model';
import { SpillwayError } from '../../src/engine/types';

const big = 'output line with some text\n'.repeat(200); // 5,400 chars
const cfg = { defaultCap: 1_000, previewChars: 100, clear: { enabled: false } };
const engine = () => {
  const store = new MemorySink();
  return { store, engine: createEngine(cfg, { store }) };
};

const call = (name: string, args: object, id?: string) => ({ functionCall: { ...(id ? { id } : {}), name, args } });
const response = (name: string, body: Record<string, unknown>, id?: string) => ({
  functionResponse: { ...(id ? { id } : {}), name, response: body },
});

/** A request as Gemini CLI sends it: the model's calls carry no id, its responses carry the id the CLI made up. */
function geminiCliRequest(output: string) {
  return {
    contents: [
      { role: 'user', parts: [{ text: 'This is the Gemini CLI. We are setting up the context for our chat.' }] },
      { role: 'user', parts: [{ text: 'list the files' }] },
      {
        role: 'model',
        parts: [
          { text: 'Listing.', thoughtSignature: 'c2lnbmF0dXJl' },
          call('run_shell_command', { command: 'ls -la', description: 'list' }),
        ],
      },
      { role: 'user', parts: [response('run_shell_command', { output }, 'run_shell_command-1764200000000-abc123')] },
    ],
    systemInstruction: { role: 'user', parts: [{ text: 'You are an interactive CLI agent.' }] },
    tools: [{ functionDeclarations: [{ name: 'run_shell_command', parametersJsonSchema: { type: 'object' } }] }],
    generationConfig: { temperature: 0, thinkingConfig: { includeThoughts: true } },
  };
}

describe('gemini: detection', () => {
  it('reads a request with top-level contents (and no messages or input) as the Gemini API', () => {
    const text = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] });
    const p = createEngine(cfg).project(text);
    expect([p.format, p.request === text]).toEqual(['gemini', true]);
  });

  it('names contents among the keys it expected when it cannot place a request', () => {
    let err: unknown;
    try {
      createEngine(cfg).project(JSON.stringify({ prompt: 'x' }));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SpillwayError);
    expect((err as Error).message).toContain('"contents" (Gemini API)');
  });

  it('says where it is wrong when contents is not a list', () => {
    expect(() => createEngine(cfg).project(JSON.stringify({ contents: { role: 'user' } }), 'gemini')).toThrow(
      'gemini request: "contents" must be an array, got object',
    );
  });
});

describe('gemini: which call a response answers', () => {
  it('matches by id when the call carries one', () => {
    const req = readRequest(
      JSON.stringify({
        contents: [
          { role: 'model', parts: [call('grep', { q: 'a' }, 'c1'), call('read_file', { path: 'x' }, 'c2')] },
          { role: 'user', parts: [response('ignored', { output: 'b' }, 'c2'), response('ignored', { output: 'a' }, 'c1')] },
        ],
      }),
      'gemini',
    );
    expect(req.results.map((r) => [r.callId, r.tool])).toEqual([
      ['c2', 'read_file'],
      ['c1', 'grep'],
    ]);
  });

  it('matches by name, then order, when the call has no id (the response keeps its own id as the call id)', () => {
    const req = readRequest(
      JSON.stringify({
        contents: [
          { role: 'model', parts: [call('grep', {}), call('read_file', {}), call('grep', {})] },
          {
            role: 'user',
            parts: [response('read_file', { output: '1' }, 'r-1'), response('grep', { output: '2' }), response('grep', { output: '3' })],
          },
        ],
      }),
      'gemini',
    );
    expect(req.results.map((r) => [r.callId, r.tool, r.call?.id])).toEqual([
      ['r-1', 'read_file', 'fc#0.1'],
      ['fc#0.0', 'grep', 'fc#0.0'],
      ['fc#0.2', 'grep', 'fc#0.2'],
    ]);
  });

  it('names the tool after the call, qualified MCP names included, and falls back to the response name', () => {
    const req = readRequest(
      JSON.stringify({
        contents: [
          { role: 'model', parts: [call('mcp_spillway_read_output', { handle: 'h' }, 'a')] },
          { role: 'user', parts: [response('other', { output: 'x' }, 'a')] },
          { role: 'user', parts: [response('orphan_tool', { output: 'y' })] },
        ],
      }),
      'gemini',
    );
    expect(req.results.map((r) => r.tool)).toEqual(['mcp_spillway_read_output', 'orphan_tool']);
    expect(req.kinds).toEqual(['assistant', 'tool', 'tool']);
  });

  it('reads the snake_case spellings the REST API also accepts', () => {
    const req = readRequest(
      JSON.stringify({
        contents: [
          { role: 'model', parts: [{ function_call: { name: 'bash', args: {} } }] },
          { role: 'user', parts: [{ function_response: { name: 'bash', response: { output: 'ok' } } }] },
        ],
        system_instruction: { parts: [{ text: 's' }] },
      }),
      'gemini',
    );
    expect([req.results[0]!.tool, req.fixed.length]).toEqual(['bash', 1]);
  });
});

describe('gemini: where the text is', () => {
  const read = (body: Record<string, unknown>) => {
    const req = readRequest(
      JSON.stringify({
        contents: [
          { role: 'model', parts: [call('t', {})] },
          { role: 'user', parts: [response('t', body)] },
        ],
      }),
      'gemini',
    );
    const r = req.results[0]!;
    return { text: r.content ? resultText(req, r) : undefined, isError: r.isError };
  };

  it('takes response.output', () => {
    expect(read({ output: 'hello' })).toEqual({ text: 'hello', isError: false });
  });

  it('takes response.error as an error', () => {
    expect(read({ error: 'boom' })).toEqual({ text: 'boom', isError: true });
  });

  it('takes MCP-style content parts, joined', () => {
    expect(
      read({
        content: [
          { type: 'text', text: 'a' },
          { type: 'text', text: 'b' },
        ],
      }),
    ).toEqual({ text: 'a\nb', isError: false });
  });

  it('leaves a response without text alone', () => {
    expect(read({ rows: [1, 2, 3] })).toEqual({ text: undefined, isError: false });
  });
});

describe('gemini: reductions', () => {
  it('puts the marker inside response.output and keeps every other byte, Gemini CLI shape', () => {
    const { engine: e, store } = engine();
    const text = JSON.stringify(geminiCliRequest(big), null, 1);
    const p = e.project(text);
    expect(p.format).toBe('gemini');
    expect(p.reductions).toHaveLength(1);
    const r = p.reductions[0]!;
    expect([r.tool, r.callId]).toEqual(['run_shell_command', 'run_shell_command-1764200000000-abc123']);
    expect(store.get(r.handle)).toBe(big);
    const out = JSON.parse(p.request) as ReturnType<typeof geminiCliRequest>;
    const fr = out.contents[3]!.parts[0]! as ReturnType<typeof response>;
    expect(String(fr.functionResponse.response.output)).toContain(r.handle);
    // everything but the output string is as it was
    const original = geminiCliRequest(big);
    (original.contents[3]!.parts[0] as ReturnType<typeof response>).functionResponse.response = { output: '<m>' };
    fr.functionResponse.response = { output: '<m>' };
    expect(out).toEqual(original);
    const at = text.indexOf('"output"');
    expect(p.request.slice(0, at)).toBe(text.slice(0, at));
  });

  it('keeps an error response an error, and nested inline parts byte for byte', () => {
    const { engine: e } = engine();
    const inline = { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } };
    const body = {
      contents: [
        { role: 'model', parts: [call('bash', { cmd: 'x' }, 'k')] },
        { role: 'user', parts: [{ functionResponse: { id: 'k', name: 'bash', response: { error: big }, parts: [inline] } }] },
      ],
    };
    const p = e.project(JSON.stringify(body));
    expect(p.reductions).toHaveLength(1);
    const fr = (
      (JSON.parse(p.request) as typeof body).contents[1]!.parts[0] as (typeof body.contents)[1]['parts'][0] & { functionResponse: object }
    ).functionResponse as { response: { error: string }; parts: unknown };
    expect(Object.keys(fr.response)).toEqual(['error']);
    expect(fr.response.error).toContain(p.reductions[0]!.handle);
    expect(fr.parts).toEqual([inline]);
  });

  it('recognises its own markers when a projection comes back (idempotence)', () => {
    const { engine: e, store } = engine();
    const p = e.project(JSON.stringify(geminiCliRequest(big)));
    const again = createEngine(cfg, { store }).project(p.request);
    expect(again.request).toBe(p.request);
    expect(again.stats.markersSeen).toBe(1);
  });

  it('finds the read tool among function declarations (markers name it)', () => {
    const { engine: e } = engine();
    const body = geminiCliRequest(big);
    body.tools[0]!.functionDeclarations.push({ name: 'mcp_spillway_read_output', parametersJsonSchema: { type: 'object' } });
    const p = e.project(JSON.stringify(body));
    const out = JSON.parse(p.request) as ReturnType<typeof geminiCliRequest>;
    expect(String((out.contents[3]!.parts[0] as ReturnType<typeof response>).functionResponse.response.output)).toContain(
      'mcp_spillway_read_output',
    );
  });
});
