/** The offload stage: a result over its tool's cap is stored in full and replaced by a marker. */
import { describe, expect, it } from 'vitest';
import { project } from '../support/run';
import { createEngine } from '../../src/engine/engine';
import { build, serialize, transcript, type ToolStep } from '../support/wire';
import { expectStart } from '../support/expect';

const tool = (name: string, output: string): ToolStep => ({ tool: name, output });
/** `n` chars of numbered lines */
const lines = (n: number) =>
  Array.from({ length: Math.ceil(n / 19) + 1 }, (_, i) => `line ${String(i).padStart(13, '0')}`)
    .join('\n')
    .slice(0, n);
const base = { defaultCap: 1_000, previewChars: 200, clear: { enabled: false } };

describe('offload stage', () => {
  it('stores a result over the cap and replaces it by a marker, the newest result included', () => {
    const { p, texts, store } = project(base, transcript('q', tool('bash', lines(1_001))));
    expect(p.reductions.map((r) => [r.result, r.stage])).toEqual([[0, 'offload']]);
    expectStart(texts[0]!, '[spillway: bash output offloaded · 1,001 chars');
    expect(store.get(p.reductions[0]!.handle)).toBe(lines(1_001));
  });

  it("keeps a report tool's result (a sub-agent's report) verbatim over the cap, unless toolCaps caps that tool", () => {
    const t = transcript('q', tool('Task', lines(5_000)));
    expect(project({ ...base, reportTools: ['Task'] }, t).p.stats.unchanged).toBe(true);
    expect(project({ ...base, reportTools: ['Task'], toolCaps: { Task: 1_000 } }, t).p.reductions).toHaveLength(1);
    expect(project({ ...base, reportTools: [] }, t).p.reductions).toHaveLength(1);
  });

  it("the default keeps Claude Code's sub-agent reports (Task, Agent) whole; the seed presets do not", () => {
    const t = transcript('q', tool('Task', lines(20_000)));
    expect(project({}, t).p.stats.unchanged).toBe(true);
    expect(project({ preset: 'oracle-offload' }, t).p.stats.unchanged).toBe(false);
  });

  it("counts the lines inside an agent's one-line JSON, the lines its preview shows and `read --lines` numbers", () => {
    const rows = Array.from({ length: 120 }, (_, i) => `row ${i}`).join('\n');
    const codex = JSON.stringify({ output: rows, metadata: { exit_code: 0 } });
    const cline = JSON.stringify([{ query: 'seq 120', result: rows, success: true }]);
    for (const output of [codex, cline]) {
      const { texts } = project({ ...base, defaultCap: 100 }, transcript('q', tool('shell', output)));
      expectStart(texts[0]!, `[spillway: shell output offloaded · ${output.length.toLocaleString('en-US')} chars · 120 lines · `);
    }
    // JSON of no agent's envelope is one line, as stored
    const other = JSON.stringify({ rows });
    expectStart(
      project({ ...base, defaultCap: 100 }, transcript('q', tool('shell', other))).texts[0]!,
      `[spillway: shell output offloaded · ${other.length.toLocaleString('en-US')} chars · 1 lines · `,
    );
  });

  it('keeps a result exactly at the cap verbatim', () => {
    expect(project(base, transcript('q', tool('bash', lines(1_000)))).p.stats.unchanged).toBe(true);
  });

  it('does nothing when offload is disabled, however large the result', () => {
    expect(project({ ...base, offload: { enabled: false } }, transcript('q', tool('bash', lines(50_000)))).p.stats.unchanged).toBe(true);
  });

  it('keeps a result verbatim when its marker would not be shorter than it', () => {
    const { p } = project({ ...base, defaultCap: 10 }, transcript('q', tool('bash', 'x'.repeat(60))));
    expect(p.stats.unchanged).toBe(true);
  });

  it('with capUnit bytes compares UTF-8 bytes: 400 three-byte characters are over a 1,000-byte cap', () => {
    const t = transcript('q', tool('bash', '中'.repeat(400)));
    expect(project({ ...base, capUnit: 'bytes', previewChars: 0 }, t).p.reductions).toHaveLength(1);
    expect(project({ ...base, capUnit: 'chars', previewChars: 0 }, t).p.reductions).toEqual([]);
  });

  it('with capUnit bytes the preview stays within previewChars bytes', () => {
    const { texts } = project(
      { ...base, capUnit: 'bytes', previewChars: 100, preview: 'head' },
      transcript('q', tool('bash', 'é中😀'.repeat(400))),
    );
    const previewPart = texts[0]!.split('\n').slice(2).join('\n');
    expect(Buffer.byteLength(previewPart)).toBeLessThanOrEqual(100);
    expect(previewPart.length).toBeGreaterThan(0);
  });

  it('the preview is at most previewChars long', () => {
    const { texts } = project({ ...base, previewChars: 300 }, transcript('q', tool('bash', lines(20_000))));
    expect(texts[0]!.split('\n').slice(2).join('\n').length).toBeLessThanOrEqual(300);
  });

  it('reports the tool, call id, reason and sizes of each reduction', () => {
    const { p, texts } = project(base, transcript('q', { tool: 'bash', output: lines(5_000), id: 'call_x' }));
    const r = p.reductions[0]!;
    expect(r).toMatchObject({
      result: 0,
      callId: 'call_x',
      tool: 'bash',
      stage: 'offload',
      originalChars: 5_000,
      projectedChars: texts[0]!.length,
      fresh: true,
    });
    expect(r.reason).toBe("5,000 chars over bash's cap of 1,000");
    expect(r.projectedTokens).toBeLessThan(r.originalTokens);
  });
});

describe('caps per tool', () => {
  const big = lines(3_000);
  const reducedTools = (config: Record<string, unknown>, names: string[]) =>
    project({ ...base, defaultCap: 'unlimited', ...config }, transcript('q', ...names.map((n) => tool(n, big)))).p.reductions.map(
      (r) => r.tool,
    );

  it('an exact entry applies to that tool only', () => {
    expect(reducedTools({ toolCaps: { bash: 2_000 } }, ['bash', 'grep'])).toEqual(['bash']);
  });

  it('an exact entry wins over a matching * pattern', () => {
    expect(reducedTools({ toolCaps: { 'read_*': 2_000, read_file: 'unlimited' } }, ['read_file', 'read_dir'])).toEqual(['read_dir']);
  });

  it('the longest matching * pattern wins over a shorter one', () => {
    expect(
      reducedTools({ toolCaps: { 'mcp__*': 2_000, 'mcp__github__*': 'unlimited' } }, ['mcp__github__search', 'mcp__fs__read']),
    ).toEqual(['mcp__fs__read']);
  });

  it('a bare-name entry covers the tool under server.tool and mcp__server__tool names', () => {
    expect(reducedTools({ toolCaps: { read_file: 2_000 } }, ['fs.read_file', 'mcp__fs__read_file', 'read_file', 'write_file'])).toEqual([
      'fs.read_file',
      'mcp__fs__read_file',
      'read_file',
    ]);
  });

  it('a qualified entry wins over the bare-name entry', () => {
    expect(reducedTools({ toolCaps: { read_file: 2_000, 'fs.read_file': 'unlimited' } }, ['fs.read_file', 'web.read_file'])).toEqual([
      'web.read_file',
    ]);
  });

  it('"unlimited" keeps a tool verbatim whatever its size', () => {
    const { p } = project({ ...base, toolCaps: { bash: 'unlimited' } }, transcript('q', tool('bash', lines(200_000))));
    expect(p.stats.unchanged).toBe(true);
  });

  it('a tool without an entry gets defaultCap', () => {
    expect(reducedTools({ defaultCap: 2_000, toolCaps: { bash: 'unlimited' } }, ['bash', 'grep'])).toEqual(['grep']);
  });
});

describe('results that cannot be stored faithfully', () => {
  it('keeps a result with a lone surrogate verbatim, since UTF-8 storage could not give it back', () => {
    const output = 'x'.repeat(5_000) + '\ud800' + 'y'.repeat(5_000);
    const { p, texts } = project(base, transcript('q', tool('bash', output)));
    expect(p.reductions).toEqual([]);
    expect(texts[0]).toBe(output);
  });
});

describe('dedupe', () => {
  it('judges a repeated result by its decoded length, not by how long its JSON escaping is', () => {
    // 500 chars is under the 600-char dedupe minimum; escaped as \u00e9 it takes 3,000 chars of JSON
    const output = 'é'.repeat(500);
    const t = transcript('q', tool('read_file', output), tool('read_file', output));
    const request = build(t, 'openai-chat');
    const plain = createEngine({}).project(serialize(request, { indent: 0, python: false }));
    const escaped = createEngine({}).project(serialize(request, { indent: 0, python: true }));
    expect([plain.reductions, escaped.reductions]).toEqual([[], []]);
  });
});
