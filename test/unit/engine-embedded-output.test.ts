/**
 * Codex's `exec` tool (code mode, the shell of Codex signed in with ChatGPT) answers with a
 * `custom_tool_call_output` whose text is the tool's JSON, `{"exit_code":0,…,"output":"…"}`, often
 * after a header part ("Script completed\nWall time …\nOutput:\n"). The engine reduces the `output`
 * string inside that JSON: the marker goes where the output was, so the JSON still parses and its
 * other fields, and the item's other parts, stay byte for byte. The DESIGN.md properties are checked
 * on such items with fast-check.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { recogniseMarker } from '../../src/engine/markers';

const cfg = { defaultCap: 1_000, previewChars: 200, clear: { enabled: false } };
const HEADER = 'Script completed\nWall time 0.2 seconds\nOutput:\n';

/** The JSON Codex's `exec` puts in its answer for `text(await tools.exec_command(…))`. */
const execJson = (output: string, exitCode = 0) =>
  JSON.stringify({ chunk_id: '544208', wall_time_seconds: 0.0097, exit_code: exitCode, original_token_count: 3474, output });

/** A Codex ChatGPT-mode request: the exec call and its answer, as parts or as one string. */
function request(json: string, asParts = true, extra: unknown[] = []) {
  return {
    model: 'gpt-6.2-sol',
    input: [
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'run the tests' }] },
      {
        type: 'custom_tool_call',
        id: 'ctc_1',
        status: 'completed',
        call_id: 'call_1',
        name: 'exec',
        input: 'text(await tools.exec_command({cmd: "seq 1 3000"}))',
      },
      {
        type: 'custom_tool_call_output',
        id: 'ctco_1',
        call_id: 'call_1',
        output: asParts
          ? [
              { type: 'input_text', text: HEADER },
              { type: 'input_text', text: json },
            ]
          : json,
      },
      ...extra,
    ],
  };
}

function run(body: unknown, config: Record<string, unknown> = cfg) {
  const store = new MemorySink();
  const engine = createEngine(config, { store });
  const text = JSON.stringify(body);
  const p = engine.project(text, 'openai-responses');
  return { text, p, store, engine, out: JSON.parse(p.request) as { input: Array<{ output: unknown }> } };
}

const seq = Array.from({ length: 3000 }, (_, i) => String(i + 1)).join('\n') + '\n';

describe('Codex exec answers: the marker goes inside the JSON output string', () => {
  it('reduces the output string, keeps the JSON parseable with its other fields, and the header part untouched', () => {
    const { p, store, out } = run(request(execJson(seq, 1)));
    expect(p.reductions).toHaveLength(1);
    const parts = out.input[2]!.output as Array<{ type: string; text: string }>;
    expect(parts[0]).toEqual({ type: 'input_text', text: HEADER });
    const inner = JSON.parse(parts[1]!.text) as Record<string, unknown>;
    expect(Object.keys(inner)).toEqual(['chunk_id', 'wall_time_seconds', 'exit_code', 'original_token_count', 'output']);
    expect([inner.chunk_id, inner.exit_code, inner.original_token_count]).toEqual(['544208', 1, 3474]);
    const handle = recogniseMarker(inner.output as string);
    expect(handle).toBe(p.reductions[0]!.handle);
    // what reads back is the command's output itself, byte for byte
    expect(store.get(handle!)).toBe(seq);
    expect(p.reductions[0]!.tool).toBe('exec');
  });

  it('reduces a string output whose text is the JSON the same way', () => {
    const { p, store, out } = run(request(execJson(seq), false));
    const inner = JSON.parse(out.input[2]!.output as string) as Record<string, unknown>;
    expect(inner.exit_code).toBe(0);
    expect(store.get(recogniseMarker(inner.output as string)!)).toBe(seq);
    expect(p.reductions).toHaveLength(1);
  });

  it('leaves everything outside the reduced string byte for byte', () => {
    const { text, p } = run(request(execJson(seq)));
    const at = text.indexOf('\\"output\\":\\"') + '\\"output\\":\\"'.length - 2;
    expect(p.request.slice(0, at)).toBe(text.slice(0, at));
    const tail = text.slice(text.lastIndexOf('"}]}]}'));
    expect(p.request.endsWith(tail)).toBe(true);
  });

  it('projecting the projection changes nothing (the marker inside the JSON is recognised)', () => {
    const { p, engine } = run(request(execJson(seq)));
    const again = engine.project(p.request, 'openai-responses');
    expect(again.request).toBe(p.request);
    expect(again.reductions).toEqual([]);
    expect(again.stats.markersSeen).toBe(1);
  });

  it('a small output is not touched at all', () => {
    const { text, p } = run(request(execJson('ok\n')));
    expect(p.request).toBe(text);
  });

  it('a custom tool output that is not JSON, or JSON without a string output, is reduced as plain text', () => {
    const plain = run(request('x'.repeat(5000), false));
    expect(recogniseMarker(plain.out.input[2]!.output as string)).toBe(plain.p.reductions[0]!.handle);
    const noOutput = JSON.stringify({ exit_code: 0, stdout: seq });
    const r = run(request(noOutput, false));
    expect(r.store.get(r.p.reductions[0]!.handle)).toBe(noOutput);
  });

  it('a read-back that exec made from code (the MCP read tool) is left whole, as the read tool answers are', () => {
    const read = request(execJson(seq));
    (read.input[1] as { input: string }).input =
      'text(await tools.mcp__spillway__read_output({handle: "sw_0123456789abcdef01234567", offset: 0, limit: 20000}))';
    const r = run(read);
    expect(r.p.request).toBe(r.text);
    expect(r.p.reductions).toEqual([]);
    // any other exec code is reduced as usual
    expect(run(request(execJson(seq))).p.reductions).toHaveLength(1);
  });

  it('a function_call_output with the same JSON is read as before: its whole text is the result', () => {
    const body = {
      input: [
        { type: 'function_call', call_id: 'c1', name: 'shell', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: execJson(seq) },
      ],
    };
    const r = run(body);
    expect(r.store.get(r.p.reductions[0]!.handle)).toBe(execJson(seq));
  });
});

// ---- properties --------------------------------------------------------------------------------

const RUNS = Number(process.env.SPILLWAY_PROP_RUNS ?? 100);
/** outputs with the characters JSON escapes twice over: quotes, backslashes, newlines, controls, non-BMP */
const outputArb = fc
  .array(
    fc.oneof(fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constantFrom('"', '\\', '\n', '\t', '\u0001', '😀', '\\n', '{"a":1}')),
    {
      maxLength: 400,
    },
  )
  .map((a) => a.join(''));
const itemArb = fc.record({ output: outputArb, exit: fc.integer({ min: 0, max: 255 }), asParts: fc.boolean() });
const configArb = fc.record({
  defaultCap: fc.integer({ min: 50, max: 4000 }),
  previewChars: fc.integer({ min: 0, max: 300 }),
});

function session(items: Array<{ output: string; exit: number; asParts: boolean }>) {
  const input: unknown[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] }];
  items.forEach((it, k) => {
    const json = execJson(it.output, it.exit);
    input.push({ type: 'custom_tool_call', call_id: `call_${k}`, name: 'exec', input: 'js' });
    input.push({
      type: 'custom_tool_call_output',
      call_id: `call_${k}`,
      output: it.asParts
        ? [
            { type: 'input_text', text: HEADER },
            { type: 'input_text', text: json },
          ]
        : json,
    });
  });
  return { input };
}

/** The `output` strings of the exec answers in a projected request. */
function outputsOf(request: string): string[] {
  const body = JSON.parse(request) as { input: Array<{ type: string; output: unknown }> };
  return body.input
    .filter((i) => i.type === 'custom_tool_call_output')
    .map((i) => {
      const text = Array.isArray(i.output) ? (i.output as Array<{ text: string }>)[1]!.text : (i.output as string);
      return (JSON.parse(text) as { output: string }).output;
    });
}

describe('properties of embedded outputs', () => {
  it('identity: with no result over its cap, the projection is the request byte for byte', () => {
    fc.assert(
      fc.property(fc.array(itemArb, { maxLength: 5 }), (items) => {
        const text = JSON.stringify(session(items));
        const p = createEngine({ defaultCap: 1_000_000, clear: { enabled: false } }).project(text, 'openai-responses');
        expect(p.request).toBe(text);
      }),
      { numRuns: RUNS },
    );
  });

  it('recoverability, bounded markers, fidelity and idempotence over generated outputs and configurations', () => {
    fc.assert(
      fc.property(fc.array(itemArb, { minLength: 1, maxLength: 5 }), configArb, (items, config) => {
        const store = new MemorySink();
        const engine = createEngine({ ...config, clear: { enabled: false } }, { store });
        const text = JSON.stringify(session(items));
        const p = engine.project(text, 'openai-responses');
        const before = outputsOf(text);
        const after = outputsOf(p.request);
        const body = JSON.parse(p.request) as { input: Array<{ output: unknown }> };
        const original = JSON.parse(text) as { input: Array<{ output: unknown }> };
        after.forEach((o, k) => {
          const handle = recogniseMarker(o);
          if (handle) {
            // recoverability: the handle reads back the command's output exactly
            expect(store.get(handle)).toBe(before[k]);
            // a reduction never makes a result longer
            expect(o.length).toBeLessThanOrEqual(before[k]!.length);
          } else expect(o).toBe(before[k]);
          // fidelity: the JSON's other fields and the header part are unchanged
          const item = body.input[2 + 2 * k]!.output;
          const orig = original.input[2 + 2 * k]!.output;
          const json = (x: unknown) =>
            JSON.parse(Array.isArray(x) ? (x as Array<{ text: string }>)[1]!.text : (x as string)) as Record<string, unknown>;
          expect({ ...json(item), output: null }).toEqual({ ...json(orig), output: null });
          if (Array.isArray(orig)) expect((item as unknown[])[0]).toEqual(orig[0]);
        });
        // idempotence
        expect(engine.project(p.request, 'openai-responses').request).toBe(p.request);
      }),
      { numRuns: RUNS },
    );
  });
});
