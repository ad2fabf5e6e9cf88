/** The window stage (seed 000): old turns' large results become previews. */
import { describe, expect, it } from 'vitest';
import { project } from '../support/run';
import { transcript, type ToolStep } from '../support/wire';
import { expectStart } from '../support/expect';

const tool = (name: string, output: string): ToolStep => ({ tool: name, output });
const big = 'w'.repeat(3_000);
const window = (over: Record<string, unknown> = {}) => ({
  offload: { enabled: false },
  clear: { enabled: false },
  previewChars: 100,
  window: { enabled: true, recentTurns: 2, maxOutputChars: 1_000, tools: [], ...over },
});

describe('window stage', () => {
  it('trims a result older than the last recentTurns user messages that is over maxOutputChars', () => {
    const { p, texts } = project(window(), transcript('u1', tool('bash', big), 'u2', 'u3'));
    expect(p.reductions.map((r) => [r.result, r.stage])).toEqual([[0, 'window']]);
    expectStart(texts[0]!, '[spillway: bash output trimmed');
  });

  it('leaves results in the last recentTurns turns alone', () => {
    const { p } = project(window(), transcript('u1', 'u2', tool('bash', big), 'u3', tool('bash', big)));
    expect(p.reductions).toEqual([]);
  });

  it('leaves old results of at most maxOutputChars alone', () => {
    const { p } = project(window(), transcript('u1', tool('bash', 'w'.repeat(1_000)), 'u2', 'u3'));
    expect(p.reductions).toEqual([]);
  });

  it('with fewer user messages than recentTurns, nothing is old', () => {
    const { p } = project(window({ recentTurns: 3 }), transcript('u1', tool('bash', big), 'u2'));
    expect(p.reductions).toEqual([]);
  });

  it('moves with the conversation: recentTurns 1 makes everything before the last user message old', () => {
    const { p } = project(window({ recentTurns: 1 }), transcript('u1', tool('bash', big), 'u2', tool('bash', big + 'x')));
    expect(p.reductions.map((r) => r.result)).toEqual([0]);
  });

  it('with a tools list trims only listed tools, * patterns included', () => {
    const t = transcript('u1', tool('bash', big), tool('mcp__gh__search', big), tool('grep', big), 'u2', 'u3');
    const { p } = project(window({ tools: ['bash', 'mcp__*'] }), t);
    expect(p.reductions.map((r) => r.tool)).toEqual(['bash', 'mcp__gh__search']);
  });

  it('does not count Anthropic user messages that carry only tool results as user turns', () => {
    // u1, result, u2: only two real user messages, so with recentTurns 2 the boundary is u1
    const { p } = project(window(), transcript('u1', tool('bash', big), tool('bash', big), 'u2'), 'anthropic-messages');
    expect(p.reductions).toEqual([]);
  });

  it('does not run when disabled', () => {
    const { p } = project(
      { ...window(), window: { enabled: false, recentTurns: 1, maxOutputChars: 10 } },
      transcript('u1', tool('bash', big), 'u2', 'u3'),
    );
    expect(p.reductions).toEqual([]);
  });
});
