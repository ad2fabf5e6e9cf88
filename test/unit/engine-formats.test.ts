/**
 * The engine across wire formats: detection, errors on bad input, tool names from the call a
 * result answers, and what a reduction keeps of a result (is_error, images, cache_control, the
 * first text part's fields).
 */
import { describe, expect, it } from 'vitest';
import { createEngine, MemorySink } from '../../src/engine/engine';
import { SpillwayError } from '../../src/engine/types';
import { get, parseLazy } from '../../src/engine/json';
import { project } from '../support/run';
import { transcript } from '../support/wire';

const big = 'output line with some text\n'.repeat(200); // 5,400 chars
const cfg = { defaultCap: 1_000, previewChars: 100, clear: { enabled: false } };
const reduce = (request: unknown, format: 'auto' | 'openai-chat' | 'openai-responses' | 'anthropic-messages' = 'auto') =>
  createEngine(cfg, { store: new MemorySink() }).project(JSON.stringify(request), format);
const errorOf = (f: () => unknown): SpillwayError => {
  try {
    f();
  } catch (e) {
    return e as SpillwayError;
  }
  throw new Error('expected an error');
};

describe('format detection (auto)', () => {
  it('reads a request with top-level input as OpenAI Responses', () => {
    expect(reduce({ input: [{ role: 'user', content: 'hi' }] }).format).toBe('openai-responses');
  });

  it('reads messages with a top-level system as Anthropic Messages', () => {
    expect(reduce({ system: 'be brief', messages: [{ role: 'user', content: 'hi' }] }).format).toBe('anthropic-messages');
  });

  it('reads messages with tool_use / tool_result blocks as Anthropic Messages without a system', () => {
    const p = project(cfg, transcript('q', { tool: 'bash', output: big }), 'anthropic-messages');
    expect(createEngine(cfg).project(p.text).format).toBe('anthropic-messages');
  });

  it('reads messages with role "tool" or tool_calls as OpenAI Chat Completions', () => {
    const p = project(cfg, transcript('q', { tool: 'bash', output: big }), 'openai-chat');
    expect(createEngine(cfg).project(p.text).format).toBe('openai-chat');
  });

  it('reads a plain message list with no tool traits as Chat Completions, changing nothing', () => {
    const text = JSON.stringify({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
    });
    const p = createEngine(cfg).project(text);
    expect([p.format, p.request === text]).toEqual(['openai-chat', true]);
  });

  it('reads messages with role "system" items and tool_result blocks as Anthropic Messages, even without a top-level system', () => {
    const p = reduce({
      messages: [
        { role: 'system', content: 'environment notes' },
        { role: 'user', content: 'q' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'seq' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: big }] },
      ],
    });
    expect([p.format, p.reductions.map((r) => r.tool)]).toEqual(['anthropic-messages', ['Bash']]);
  });

  it('still reads a system item beside Chat-only traits as Chat Completions', () => {
    const p = reduce({
      messages: [
        { role: 'system', content: 'be brief' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'sh', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: big },
      ],
    });
    expect([p.format, p.reductions.map((r) => r.tool)]).toEqual(['openai-chat', ['sh']]);
  });

  it('uses an explicit format even where detection would choose another', () => {
    const text = JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] });
    expect(createEngine(cfg).project(text, 'anthropic-messages').format).toBe('anthropic-messages');
  });

  it('explains a request it cannot place: what it expected, the keys it found, and --format', () => {
    const e = errorOf(() => reduce({ model: 'x', prompt: 'hello' }));
    expect(e).toBeInstanceOf(SpillwayError);
    expect(e.code).toBe('unknown-format');
    expect(e.message).toBe(
      'cannot tell the request format: expected a top-level "messages" array (OpenAI Chat Completions or Anthropic Messages), "input" (OpenAI Responses) or "contents" (Gemini API); found keys "model", "prompt". Pass --format to say which.',
    );
  });
});

describe('bad input', () => {
  it('names the offset and line of malformed JSON', () => {
    const text = '{\n  "messages": [1,]\n}';
    const e = errorOf(() => createEngine(cfg).project(text));
    expect(e.code).toBe('bad-json');
    expect(e.message).toBe(`malformed JSON at offset ${text.indexOf(']')} (line 2): unexpected character "]"`);
  });

  it('names the end of the input for truncated JSON', () => {
    const text = '{"messages": [{"role": "user", "content": "hi"}';
    expect(errorOf(() => createEngine(cfg).project(text)).message).toMatch(
      new RegExp(`^malformed JSON at offset ${text.length} \\(line 1\\)`),
    );
  });

  it('refuses a JSON value that is not an object', () => {
    expect(errorOf(() => createEngine(cfg).project('[1, 2]')).message).toBe('the request must be a JSON object, got an array');
  });

  it('refuses a messages field that is not an array, naming the format and the key', () => {
    expect(errorOf(() => createEngine(cfg).project('{"messages": {}}', 'openai-chat')).message).toBe(
      'openai-chat request: "messages" must be an array, got object',
    );
  });
});

describe('tool names', () => {
  it('a Chat result is named after the tool call it answers', () => {
    const p = project(cfg, transcript('q', { tool: 'read_file', output: big }), 'openai-chat').p;
    expect(p.reductions[0]!.tool).toBe('read_file');
  });

  it('a Responses function_call with a namespace names its results namespace.name', () => {
    const p = reduce({
      input: [
        { type: 'function_call', call_id: 'c1', namespace: 'fs', name: 'read_file', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: big },
      ],
    });
    expect(p.reductions[0]!.tool).toBe('fs.read_file');
  });

  it('an Anthropic mcp_tool_use with a server_name names its result server.tool', () => {
    const p = reduce({
      system: 's',
      messages: [
        { role: 'assistant', content: [{ type: 'mcp_tool_use', id: 'm1', name: 'search', server_name: 'github', input: {} }] },
        { role: 'user', content: [{ type: 'mcp_tool_result', tool_use_id: 'm1', content: [{ type: 'text', text: big }] }] },
      ],
    });
    expect(p.reductions[0]!.tool).toBe('github.search');
  });

  it('a result whose call is not in the request is named unknown_tool and gets defaultCap', () => {
    const p = reduce({ messages: [{ role: 'tool', tool_call_id: 'gone', content: big }] });
    expect(p.reductions.map((r) => [r.tool, r.callId])).toEqual([['unknown_tool', 'gone']]);
  });

  it('a custom_tool_call_output is named after its custom_tool_call', () => {
    const p = reduce({
      input: [
        { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: '*** Begin Patch' },
        { type: 'custom_tool_call_output', call_id: 'c1', output: big },
      ],
    });
    expect(p.reductions[0]!.tool).toBe('apply_patch');
  });
});

describe('Claude Code on a subscription: what it sends beside the results', () => {
  // the shape Claude Code 2.1 sends with CLAUDE_CODE_OAUTH_TOKEN: context_management at the top, and a
  // role "system" item (block array on the first call, a string later) inside messages
  const request = {
    model: 'claude-sonnet',
    system: [
      { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1' },
      { type: 'text', text: 'You are an agent.' },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'run it' }] },
      { role: 'system', content: [{ type: 'text', text: '# Environment\nPrimary working directory: /w' }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: 'seq 1 9999' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: big }] },
      { role: 'system', content: '# Environment, again as a string' },
    ],
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    stream: true,
  };

  it('reduces the tool result and leaves every system item and context_management byte for byte', () => {
    const text = JSON.stringify(request, null, 1);
    const p = createEngine(cfg, { store: new MemorySink() }).project(text);
    expect([p.format, p.reductions.map((r) => r.tool)]).toEqual(['anthropic-messages', ['Bash']]);
    const after = JSON.parse(p.request) as typeof request;
    expect(after.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'user', 'system']);
    // the bytes of each member as it stands in the text: the projection patches in place
    const bytes = (t: string, key: string, item?: number) => {
      const root = parseLazy(t);
      const node = get(root, key)!;
      const at = item === undefined || node.kind !== 'array' ? node : node.items[item]!;
      return t.slice(at.start, at.end);
    };
    for (const i of [0, 1, 2, 4]) expect(bytes(p.request, 'messages', i)).toBe(bytes(text, 'messages', i));
    for (const key of ['system', 'context_management', 'model']) expect(bytes(p.request, key)).toBe(bytes(text, key));
    expect((after.messages[3]!.content as any[])[0].content).not.toBe(big);
  });
});

describe('what a reduction keeps', () => {
  it('keeps is_error and cache_control on an Anthropic tool_result', () => {
    const { parsed, p } = project(
      cfg,
      transcript('q', { tool: 'bash', output: big, result: { isError: true, cacheControl: true } }),
      'anthropic-messages',
    );
    const block = ((parsed.messages as any[])[2].content as any[])[0];
    expect(p.reductions).toHaveLength(1);
    expect(Object.keys(block)).toEqual(['type', 'tool_use_id', 'content', 'is_error', 'cache_control']);
    expect([block.is_error, block.cache_control]).toEqual([true, { type: 'ephemeral' }]);
  });

  it('keeps an image block where it was, replacing only the text', () => {
    const { contents } = project(
      cfg,
      transcript('q', { tool: 'screenshot', output: big, result: { parts: [big], image: true } }),
      'anthropic-messages',
    );
    expect((contents[0] as any[]).map((b) => b.type)).toEqual(['text', 'image']);
    expect((contents[0] as any[])[1].source.media_type).toBe('image/png');
  });

  it('keeps a Responses input_image part next to the marker', () => {
    const { contents } = project(
      cfg,
      transcript('q', { tool: 'screenshot', output: big, result: { parts: [big], image: true } }),
      'openai-responses',
    );
    expect((contents[0] as any[]).map((b) => b.type)).toEqual(['input_text', 'input_image']);
  });

  it('collapses several text parts into the first one, keeping its other fields, and stores them joined by newlines', () => {
    const parts = [big, 'second part', 'third part'];
    const { contents, store, p } = project(
      cfg,
      transcript('q', { tool: 'bash', output: big, result: { parts, blocks: true, partExtras: { after: { citations: null } } } }),
      'anthropic-messages',
    );
    const blocks = contents[0] as any[];
    expect(blocks).toHaveLength(1);
    expect(Object.keys(blocks[0])).toEqual(['type', 'text', 'citations']);
    expect(blocks[0].text).toContain(p.reductions[0]!.handle);
    expect(store.get(p.reductions[0]!.handle)).toBe(parts.join('\n'));
  });

  it('counts every text part of a result against the cap', () => {
    const parts = ['a'.repeat(600), 'b'.repeat(600)];
    const { p } = project(cfg, transcript('q', { tool: 'bash', output: '', result: { parts, blocks: true } }), 'openai-chat');
    expect(p.reductions.map((r) => r.originalChars)).toEqual([1_201]);
  });

  it('returns an object when given an object, leaving the given object untouched', () => {
    const request = {
      input: [
        { type: 'function_call', call_id: 'c1', name: 'bash', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: big },
      ],
    };
    const before = JSON.stringify(request);
    const p = createEngine(cfg).project(request);
    expect(typeof p.request).toBe('object');
    expect(((p.request as typeof request).input[1] as { output: string }).output).toContain(p.reductions[0]!.handle);
    expect(JSON.stringify(request)).toBe(before);
  });
});

describe('images are counted by their pixels, not by the text of their base64', () => {
  /** A PNG of width × height: its header, then filler as long as a real screenshot's data (70 KB). */
  const png = (width: number, height: number): string => {
    const b = Buffer.alloc(52_500, 7);
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]).copy(b, 0);
    b.writeUInt32BE(13, 8);
    b.write('IHDR', 12, 'latin1');
    b.writeUInt32BE(width, 16);
    b.writeUInt32BE(height, 20);
    return b.toString('base64');
  };
  const tokensOf = (request: unknown) => reduce(request).stats.originalTokens;
  const text = { type: 'text', text: 'what does this show?' };

  it('an Anthropic image block as the dearer provider bills it: 1,000 × 750 px is 1,000 tokens (Anthropic) over 765 (OpenAI)', () => {
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(1000, 750) } };
    const withImage = tokensOf({ system: 's', messages: [{ role: 'user', content: [text, image] }] });
    const without = tokensOf({ system: 's', messages: [{ role: 'user', content: [text] }] });
    expect(withImage - without).toBe(1000);
  });

  it("a Chat Completions data URL likewise, its detail heeded, and an image of unknown size at the providers' largest", () => {
    const at = (url: string, detail?: string) =>
      tokensOf({
        messages: [{ role: 'user', content: [text, { type: 'image_url', image_url: { url, ...(detail ? { detail } : {}) } }] }],
      }) - tokensOf({ messages: [{ role: 'user', content: [text] }] });
    // 2,000 × 400 px: Anthropic fits 1,568 px (1,568 × 314 / 750 = 657), OpenAI 768 px short side: 4 × 1 tiles = 765
    expect(at(`data:image/png;base64,${png(2000, 400)}`)).toBe(765);
    // detail low is 85 for OpenAI; Anthropic still bills the pixels
    expect(at(`data:image/png;base64,${png(2000, 400)}`, 'low')).toBe(657);
    expect(at('https://example.com/a.png')).toBe(1600);
  });
});

describe('thinking blocks and reasoning items are counted by their readable text, not their signatures or encrypted content', () => {
  const tokensOf = (request: unknown) => reduce(request).stats.originalTokens;
  // about 1,000 tokens of base64-like text: what a signature or an encrypted blob looks like to a tokenizer
  const blob = Buffer.alloc(3_000, 'spillway thinking blob').toString('base64');
  const said = 'I should read the config first.';
  const counted = (request: (block: unknown) => unknown, block: unknown, empty: unknown) =>
    tokensOf(request(block)) - tokensOf(request(empty));

  it('an Anthropic thinking block: its thinking, never its signature; a redacted block: nothing', () => {
    const request = (block: unknown) => ({
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: [block, { type: 'text', text: 'ok' }] },
      ],
    });
    const withText = counted(
      request,
      { type: 'thinking', thinking: said, signature: blob },
      { type: 'thinking', thinking: '', signature: '' },
    );
    const bare = tokensOf({ messages: [{ role: 'user', content: said }] }) - tokensOf({ messages: [{ role: 'user', content: '' }] });
    expect(withText).toBe(bare);
    expect(counted(request, { type: 'redacted_thinking', data: blob }, { type: 'redacted_thinking', data: '' })).toBe(0);
  });

  it('an OpenAI reasoning item: its summary, never its encrypted content', () => {
    const request = (item: unknown) => ({ input: [{ role: 'user', content: 'go' }, item] });
    const reasoning = (summary: string, encrypted: string) => ({
      type: 'reasoning',
      id: 'rs_1',
      summary: summary ? [{ type: 'summary_text', text: summary }] : [],
      encrypted_content: encrypted,
    });
    expect(counted(request, reasoning('', blob), reasoning('', ''))).toBe(0);
    const bare = tokensOf({ input: [{ role: 'user', content: said }] }) - tokensOf({ input: [{ role: 'user', content: '' }] });
    expect(counted(request, reasoning(said, blob), reasoning('', blob))).toBe(bare);
  });
});
