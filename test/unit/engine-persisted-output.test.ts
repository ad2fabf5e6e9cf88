/**
 * Claude Code's own offload: outputs over about 30 kB reach the model as `<persisted-output>` with the
 * file Claude Code saved them to and a 2 KB preview. Spillway must not reduce such a result again, and
 * says in its stats that the agent saved it, naming the file.
 */
import { describe, expect, it } from 'vitest';
import { project } from '../support/run';
import { recogniseCopilotChatWritten, recogniseCopilotSaved, recognisePersistedOutput } from '../../src/engine/markers';
import { transcript } from '../support/wire';

const FILE = '/home/u/.claude/projects/-work-demo/5c0375b4/tool-results/toolu_01ABC.txt';
/** As Claude Code 2.x writes it: tag, size, file, a 2 KB preview, the tail. */
const persisted = (preview: string) =>
  `<persisted-output>\nOutput too large (48.3KB). Full output saved to: ${FILE}\n\nPreview (first 2KB):\n${preview}\n...\n</persisted-output>`;
const base = { defaultCap: 500, previewChars: 100, clear: { enabled: false } };

describe("Claude Code's <persisted-output> results", () => {
  it('are recognised with the file they name, in both the current and the older wording', () => {
    expect(recognisePersistedOutput(persisted('x'))).toBe(FILE);
    expect(recognisePersistedOutput(`<persisted-output>Tool result saved to: ${FILE}\n\nUse Read to view</persisted-output>`)).toBe(FILE);
    expect(recognisePersistedOutput('<persisted-output>\nsomething else\n</persisted-output>')).toBe('');
    expect(recognisePersistedOutput('total 0\n<persisted-output>')).toBeUndefined();
  });

  for (const format of ['anthropic-messages', 'openai-chat', 'openai-responses'] as const) {
    it(`are never offloaded again, even over the cap, and are counted as saved by the agent (${format})`, () => {
      const big = persisted('line of preview text\n'.repeat(100)); // ~2.1 kB, over the 500-char cap
      const other = 'y'.repeat(2_000);
      const { p, texts } = project(base, transcript('q', { tool: 'Bash', output: big }, { tool: 'Bash', output: other }), format);
      expect(texts[0]).toBe(big);
      expect(p.reductions.map((r) => r.result)).toEqual([1]);
      expect(p.stats.savedByAgent).toEqual([
        { result: 0, callId: expect.any(String), tool: 'Bash', agent: 'claude-code', file: FILE, chars: big.length },
      ]);
    });
  }

  it("are Qwen Code's when they carry its digest line: it writes Claude Code's tag too", () => {
    const qwenFile = '/home/u/.qwen/tmp/4f2a9c/tool-results/run_shell_command-1.txt';
    // as Qwen Code 0.24's buildStub writes it
    const qwen = `<persisted-output>\nOutput too large (48 KB). Full output saved to: ${qwenFile}\nFull output sha256: ${'a1'.repeat(32)}\nNote: this file may be cleaned up after 24 hours.\nTo read the complete output, use the read_file tool with the absolute file path above.\n\nPreview (up to 2000 chars):\n${'line of preview text\n'.repeat(100)}</persisted-output>`;
    const { p, texts } = project(base, transcript('q', { tool: 'run_shell_command', output: qwen }), 'openai-chat');
    expect(texts[0]).toBe(qwen);
    expect(p.stats.savedByAgent).toEqual([
      { result: 0, callId: expect.any(String), tool: 'run_shell_command', agent: 'qwen-code', file: qwenFile, chars: qwen.length },
    ]);
  });

  it("are GitHub Copilot's CLI's when it opens with its own line, and are left alone the same way", () => {
    const file = '/tmp/1796060744245-copilot-tool-output-28387-4ed7e535-1dae-4094-9f51-22e1017004ed.txt';
    // as Copilot's CLI 1.0.102 sent it in the agents suite (its bash tool's last line after the preview)
    const copilot = `Output too large to read at once (29.0 KB). Saved to: ${file}\nConsider using tools like grep (for searching), head/tail (for viewing start/end), view with view_range (for specific sections), or jq (for JSON) to examine portions of the output.\n\nPreview (first 500 chars):\n${'step-03 row 00001 of the run\n'.repeat(17)}step-03 ro\n<shellId: 0 completed with exit code 0>`;
    expect(recogniseCopilotSaved(copilot)).toBe(file);
    // its first line only at the very start, with a size and a file
    expect(recogniseCopilotSaved(`log:\n${copilot}`)).toBeUndefined();
    expect(recogniseCopilotSaved('Output too large to read at once (29.0 KB).\nno file')).toBeUndefined();
    for (const format of ['openai-chat', 'anthropic-messages'] as const) {
      const { p, texts } = project(base, transcript('q', { tool: 'bash', output: copilot }), format);
      expect(texts[0]).toBe(copilot);
      expect(p.reductions).toEqual([]);
      expect(p.stats.savedByAgent).toEqual([
        { result: 0, callId: expect.any(String), tool: 'bash', agent: 'copilot-cli', file, chars: copilot.length },
      ]);
    }
  });

  it("are Copilot's in VS Code when it opens with its pointer to the file it wrote, and are left alone the same way", () => {
    const file =
      '/home/u/.config/Code/User/workspaceStorage/9f2c/GitHub.copilot-chat/chat-session-resources/5c1d/toolu_01Test__vscode-17/content.json';
    const schema = file.replace('content.json', 'schema.json');
    // as vscode-copilot-chat's ToolResult.onText writes it for a JSON result over its 8 KiB threshold
    const written = `Large tool result (12KB) written to file. Use the read_file tool to access the content at: ${file}\n\nData schema found at: ${schema}`;
    expect(recogniseCopilotChatWritten(written)).toBe(file);
    expect(recogniseCopilotChatWritten(`note\n${written}`)).toBeUndefined();
    expect(recogniseCopilotChatWritten('Large tool result (12KB) written to file.')).toBeUndefined();
    const small = { ...base, defaultCap: 100, previewChars: 40 };
    for (const format of ['openai-chat', 'anthropic-messages', 'openai-responses'] as const) {
      const { p, texts } = project(small, transcript('q', { tool: 'run_in_terminal', output: written }), format);
      expect(texts[0]).toBe(written);
      expect(p.reductions).toEqual([]);
      expect(p.stats.savedByAgent).toEqual([
        { result: 0, callId: expect.any(String), tool: 'run_in_terminal', agent: 'copilot-chat', file, chars: written.length },
      ]);
    }
  });

  it('leave the stats without the field when there are none', () => {
    const { p } = project(base, transcript('q', { tool: 'Bash', output: 'z'.repeat(1_000) }), 'anthropic-messages');
    expect(p.stats.savedByAgent).toBeUndefined();
  });
});

describe('through to the inspector', () => {
  it("a proxy turn's stats carry the saved results into the turn detail, which the protocol accepts", async () => {
    const { proxyRecord } = await import('../../src/extension/inspector/proxySource');
    const { checkResult } = await import('../../src/protocol');
    const big = persisted('p\n'.repeat(1_000));
    const { p } = project(base, transcript('q', { tool: 'Bash', output: big }), 'anthropic-messages');
    const rec = proxyRecord({ session: 's', time: new Date(0).toISOString(), reductions: p.reductions, stats: p.stats } as any, 0);
    expect(rec.savedByAgent).toEqual(p.stats.savedByAgent);
    const detail = checkResult('turn/detail', {
      index: 0,
      results: [],
      missed: [],
      savedByAgent: rec.savedByAgent!.map(({ result: _r, ...s }) => s),
    });
    expect(detail.savedByAgent).toEqual([
      { tool: 'Bash', callId: expect.any(String), agent: 'claude-code', file: FILE, chars: big.length },
    ]);
  });
});
