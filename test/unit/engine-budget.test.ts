/** The budget stage (seed 001): every result but the newest is held to its tool's cap. */
import { describe, expect, it } from 'vitest';
import { project } from '../support/run';
import { transcript, type ToolStep } from '../support/wire';
import { expectStart } from '../support/expect';

const tool = (name: string, output: string): ToolStep => ({ tool: name, output });
const budget = (over: Record<string, unknown> = {}) => ({
  offload: { enabled: false },
  clear: { enabled: false },
  budget: { enabled: true },
  defaultCap: 1_000,
  previewChars: 100,
  ...over,
});
const big = 'b'.repeat(2_000);

describe('budget stage', () => {
  it('clips every result over the cap except the newest', () => {
    const { p } = project(budget(), transcript('q', tool('bash', big), tool('bash', big), tool('bash', big)));
    expect(p.reductions.map((r) => [r.result, r.stage])).toEqual([
      [0, 'budget'],
      [1, 'budget'],
    ]);
  });

  it('keeps the newest result verbatim however large', () => {
    const { texts } = project(budget(), transcript('q', tool('bash', 'b'.repeat(300_000))));
    expect(texts[0]).toBe('b'.repeat(300_000));
  });

  it('the newest result is the last one in the request even when several answer one round', () => {
    const { p } = project(budget(), transcript('q', [tool('bash', big), tool('grep', big)]));
    expect(p.reductions.map((r) => r.tool)).toEqual(['bash']);
  });

  it('keeps results within the cap verbatim', () => {
    expect(project(budget(), transcript('q', tool('bash', 'b'.repeat(1_000)), tool('bash', 'x'))).p.stats.unchanged).toBe(true);
  });

  it('keeps a tool capped "unlimited" verbatim', () => {
    const { p } = project(
      budget({ toolCaps: { publish: 'unlimited' } }),
      transcript('q', tool('publish', big), tool('bash', big), tool('bash', 'x')),
    );
    expect(p.reductions.map((r) => r.tool)).toEqual(['bash']);
  });

  it('marks the clipped result as clipped and gives the reason', () => {
    const { p, texts } = project(budget(), transcript('q', tool('bash', big), tool('bash', 'x')));
    expectStart(texts[0]!, '[spillway: bash output clipped · 2,000 chars');
    expect(p.reductions[0]!.reason).toBe("2,000 chars over bash's cap of 1,000 (not the newest result)");
  });

  it('leaves a result the offload stage already reduced to offload', () => {
    const { p } = project(budget({ offload: { enabled: true } }), transcript('q', tool('bash', big), tool('bash', 'x')));
    expect(p.reductions.map((r) => r.stage)).toEqual(['offload']);
  });
});
