/**
 * Markers name the way back the agent has (issue 20, item 3): when a request offers Spillway's MCP
 * read tool, under whatever name its client gives it, new markers say to call it with the handle;
 * otherwise they say `spillway read`. Per session, once offered, always named; a marker already
 * sent never changes.
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { readRequest } from '../../src/engine/formats';
import { recogniseMarker } from '../../src/engine/markers';
import { findReadTool, isReadToolName } from '../../src/engine/read-tool';
import type { WireFormat } from '../../src/engine/types';
import { build, contentsOf, contentText, transcript, type ToolStep, type Transcript } from '../support/wire';

const big = (tag: string) => Array.from({ length: 2_000 }, (_, i) => `${tag} line ${i}: something happened`).join('\n');

/** The tools array of `format` naming each tool in `names`. */
function toolsOf(format: WireFormat, names: string[]): unknown[] {
  if (format === 'openai-chat') return names.map((name) => ({ type: 'function', function: { name, parameters: { type: 'object' } } }));
  if (format === 'openai-responses') return names.map((name) => ({ type: 'function', name, parameters: { type: 'object' } }));
  return names.map((name) => ({ name, input_schema: { type: 'object' } }));
}

function request(format: WireFormat, steps: ToolStep[], tools: string[]): string {
  return JSON.stringify({ ...build(transcript('go', ...steps), format), tools: toolsOf(format, tools) });
}

function markers(projected: string, format: WireFormat): string[] {
  return contentsOf(projected, format).map(contentText);
}

const FORMATS: WireFormat[] = ['anthropic-messages', 'openai-chat', 'openai-responses'];

describe('isReadToolName', () => {
  it.each([
    'mcp__spillway__read_output',
    'mcp_spillway_read_output',
    'spillway__read_output',
    'spillway.read_output',
    'spillway/read_output',
    'spillway_read_output',
  ])('matches %s', (name) => expect(isReadToolName(name)).toBe(true));

  it.each([
    'read_output',
    'mcp__other__read_output',
    'mcp__spillway__find_outputs',
    'mcp__spillway__read_output2',
    'xspillway.read_output',
  ])('does not match %s', (name) => expect(isReadToolName(name)).toBe(false));
});

describe('findReadTool', () => {
  for (const format of FORMATS) {
    it(`finds the tool among a ${format} request's tools under the name its client gave it`, () => {
      const text = request(format, [{ tool: 'bash', output: 'ok' }], ['Bash', 'mcp__spillway__read_output']);
      expect(findReadTool(readRequest(text, format))).toBe('mcp__spillway__read_output');
    });
  }

  it("finds it inside a Responses namespace, as Codex groups an MCP server's tools, named namespace.tool", () => {
    const body = {
      ...build(transcript('go'), 'openai-responses'),
      tools: [
        {
          type: 'namespace',
          name: 'mcp__spillway',
          tools: [
            { type: 'function', name: 'find_outputs' },
            { type: 'function', name: 'read_output' },
          ],
        },
      ],
    };
    expect(findReadTool(readRequest(JSON.stringify(body), 'openai-responses'))).toBe('mcp__spillway.read_output');
  });

  it('finds it among legacy chat functions', () => {
    const text = JSON.stringify({ ...build(transcript('go'), 'openai-chat'), functions: [{ name: 'spillway.read_output' }] });
    expect(findReadTool(readRequest(text, 'openai-chat'))).toBe('spillway.read_output');
  });

  it('finds it listed as a deferred tool, one name a line, as Claude Code lists MCP tools with tool search on', () => {
    const body = {
      ...build(transcript('go'), 'anthropic-messages'),
      system:
        'Use ToolSearch with query "select:<name>" to load tool schemas before calling them:\nWebFetch\nmcp__spillway__find_outputs\nmcp__spillway__read_output\n\nMore.',
      tools: toolsOf('anthropic-messages', ['Bash', 'ToolSearch']),
    };
    expect(findReadTool(readRequest(JSON.stringify(body), 'anthropic-messages'))).toBe('mcp__spillway__read_output');
  });

  it('looks for a deferred listing only where the request changed since one that listed none', () => {
    const body = {
      ...build(transcript('go'), 'anthropic-messages'),
      system: 'Use ToolSearch to load tool schemas before calling them:\nWebFetch\nmcp__spillway__read_output\n\nMore.',
      tools: toolsOf('anthropic-messages', ['Bash', 'ToolSearch']),
    };
    const text = JSON.stringify(body);
    const req = readRequest(text, 'anthropic-messages');
    const end = text.indexOf('read_output') + 'read_output'.length;
    // a listing that ends where the change begins, or after, is found
    for (const unchanged of [0, end - 3, end, end + 1]) expect(findReadTool(req, unchanged)).toBe('mcp__spillway__read_output');
    // one wholly inside the unchanged part is not looked for (the earlier request would have listed it)
    expect(findReadTool(req, end + 2)).toBeUndefined();
  });

  it('does not take a mention inside a sentence for a listed tool', () => {
    const body = { ...build(transcript('please call mcp__spillway__read_output later'), 'anthropic-messages'), tools: [] };
    expect(findReadTool(readRequest(JSON.stringify(body), 'anthropic-messages'))).toBeUndefined();
  });

  it('finds nothing in a request without the tool', () => {
    expect(findReadTool(readRequest(request('anthropic-messages', [], ['Bash']), 'anthropic-messages'))).toBeUndefined();
  });
});

describe('markers name the read tool', () => {
  const config = { preset: 'spillway', tokenizer: 'approximate' };

  for (const format of FORMATS) {
    it(`says to call the tool with the handle, and gives no file path, when a ${format} request offers it`, () => {
      const engine = createEngine(config, { store: new MemorySink() });
      const p = engine.project(request(format, [{ tool: 'bash', output: big('a') }], ['mcp__spillway__read_output']), format);
      const [marker] = markers(p.request, format);
      expect(marker).toContain(`call \`mcp__spillway__read_output\` with handle ${p.reductions[0]!.handle}`);
      expect(marker).not.toContain('spillway read');
      expect(recogniseMarker(marker!)).toBe(p.reductions[0]!.handle);
    });
  }

  it('says spillway read when the request does not offer the tool', () => {
    const engine = createEngine(config, { store: new MemorySink() });
    const p = engine.project(request('anthropic-messages', [{ tool: 'bash', output: big('a') }], ['Bash']), 'anthropic-messages');
    expect(markers(p.request, 'anthropic-messages')[0]).toContain(`spillway read ${p.reductions[0]!.handle}`);
  });

  it('leaves a projection with tool-naming markers unchanged when projected again', () => {
    const engine = createEngine(config, { store: new MemorySink() });
    const p = engine.project(request('anthropic-messages', [{ tool: 'bash', output: big('a') }], ['mcp__spillway__read_output']));
    expect(engine.project(p.request).request).toBe(p.request);
  });

  for (const markerStyle of ['trimmer', 'clark', 'ai-agent', 'eino', 'oracle'] as const) {
    it(`names the tool in the ${markerStyle} style and still recognises the marker`, () => {
      const engine = createEngine({ ...config, markerStyle }, { store: new MemorySink() });
      const p = engine.project(request('openai-chat', [{ tool: 'bash', output: big('a') }], ['spillway__read_output']), 'openai-chat');
      const [marker] = markers(p.request, 'openai-chat');
      expect(marker).toContain(`spillway__read_output with handle ${p.reductions[0]!.handle}`);
      expect(recogniseMarker(marker!)).toBe(p.reductions[0]!.handle);
      expect(engine.project(p.request, 'openai-chat').request).toBe(p.request);
    });
  }
});

describe("the read tool's own answers", () => {
  for (const tool of ['mcp__spillway__read_output', 'spillway_read_output']) {
    it(`are never reduced (${tool}), however long: a marker there would send the model to read the read`, () => {
      const engine = createEngine({ preset: 'spillway', tokenizer: 'approximate' }, { store: new MemorySink() });
      const answer = `[spillway sw_${'0'.repeat(24)}: chars 0–8,000 of 30,000; next: offset 8000, limit 8000]\n${'x'.repeat(8_000)}`;
      const text = request('anthropic-messages', [{ tool, output: answer }], [tool]);
      const p = engine.project(text, 'anthropic-messages');
      expect(p.reductions).toEqual([]);
      expect(p.request).toBe(text);
    });
  }

  it('leave other tools of the same length reduced', () => {
    const engine = createEngine({ preset: 'spillway', tokenizer: 'approximate' }, { store: new MemorySink() });
    const p = engine.project(request('anthropic-messages', [{ tool: 'bash', output: 'x'.repeat(9_000) }], []), 'anthropic-messages');
    expect(p.reductions).toHaveLength(1);
  });
});

describe('the way back is decided per session and sticky', () => {
  const config = { preset: 'spillway', tokenizer: 'approximate' };
  const format: WireFormat = 'anthropic-messages';

  it('keeps a marker sent before the tool appeared byte for byte, and names the tool in markers made after', () => {
    const engine = createEngine(config, { store: new MemorySink() });
    const first: ToolStep = { tool: 'bash', output: big('first') };
    const second: ToolStep = { tool: 'bash', output: big('second') };
    const p1 = engine.project(request(format, [first], []), format, { session: 's' });
    const [before] = markers(p1.request, format);
    expect(before).toContain('spillway read');
    const p2 = engine.project(request(format, [first, second], ['mcp__spillway__read_output']), format, { session: 's' });
    const [again, after] = markers(p2.request, format);
    expect(again).toBe(before);
    expect(after).toContain('call `mcp__spillway__read_output`');
  });

  it('finds the tool listed in a message added since the previous call of the session', () => {
    const engine = createEngine(config, { store: new MemorySink() });
    const first: ToolStep = { tool: 'bash', output: big('first') };
    const second: ToolStep = { tool: 'bash', output: big('second') };
    const listing = 'Load tool schemas with ToolSearch before calling them:\nWebFetch\nmcp__spillway__read_output\n';
    const body = (t: Transcript) => JSON.stringify({ ...build(t, format), tools: toolsOf(format, ['Bash', 'ToolSearch']) });
    engine.project(body(transcript(first)), format, { session: 's' });
    const p2 = engine.project(body(transcript(first, listing, second)), format, { session: 's' });
    const [, after] = markers(p2.request, format);
    expect(after).toContain('call `mcp__spillway__read_output`');
  });

  it('keeps naming the tool in a session that offered it, on a request that does not list it', () => {
    const engine = createEngine(config, { store: new MemorySink() });
    const first: ToolStep = { tool: 'bash', output: big('first') };
    const second: ToolStep = { tool: 'bash', output: big('second') };
    engine.project(request(format, [first], ['mcp__spillway__read_output']), format, { session: 's' });
    const p2 = engine.project(request(format, [first, second], []), format, { session: 's' });
    for (const marker of markers(p2.request, format)) expect(marker).toContain('call `mcp__spillway__read_output`');
  });

  it('decides for each session on its own', () => {
    const engine = createEngine(config, { store: new MemorySink() });
    engine.project(request(format, [{ tool: 'bash', output: big('a') }], ['mcp__spillway__read_output']), format, { session: 'with' });
    const p = engine.project(request(format, [{ tool: 'bash', output: big('b') }], []), format, { session: 'without' });
    expect(markers(p.request, format)[0]).toContain('spillway read');
  });
});
