// @vitest-environment jsdom
/**
 * Labels that tell the truth (issue 36): a result over its cap kept whole says why, in the row, the
 * glossary and the caps table; a reference is not called a preview; "1 token", not "1 tokens"; in a dry
 * run the timeline's row is the dry run's and the turn's results say they are the saved run's.
 */
import './support';
import { afterEach, describe, expect, it } from 'vitest';
import * as React from 'react';
import { cleanup, render, screen } from '@testing-library/react';
import type { ResultInfo, TextPage, ToolCap, TurnDetail, TurnSummary } from '../../src/protocol';
import { TurnDetails, savedText, wholeReason } from '../../webview/components/TurnDetails';
import { Timeline } from '../../webview/components/Timeline';
import { CapsPanel } from '../../webview/components/CapsPanel';
import { GLOSSARY } from '../../webview/components/Glossary';
import { explainTurnCost, sessionSentence } from '../../webview/cost';

afterEach(cleanup);

const HANDLE = 'sw_0123456789abcdef01234567';
const KEEP =
  'kept whole while in use: a read the agent asked for stays whole up to 24,000 chars (offload.keepReads) and is cleared once no longer used';
const loadText = (_h: string, side: string, offset: number): Promise<TextPage> =>
  Promise.resolve({ text: `${side} text`, offset, total: 13 });
const loadWhole = (_t: number, callId: string, offset: number): Promise<TextPage> => Promise.resolve({ text: callId, offset, total: 5 });
const details = (detail: TurnDetail, more: Partial<React.ComponentProps<typeof TurnDetails>> = {}) =>
  render(
    <TurnDetails
      detail={detail}
      loadText={loadText}
      loadWhole={loadWhole}
      onOpen={() => undefined}
      onCompare={() => undefined}
      onCopy={() => undefined}
      {...more}
    />,
  );
const result = (over: Partial<ResultInfo>): ResultInfo => ({
  tool: 'Bash',
  callId: 'call_a',
  stage: 'offload',
  reason: "44,000 chars over Bash's cap of 8,000",
  originalChars: 44_000,
  projectedChars: 1_500,
  originalTokens: 11_000,
  projectedTokens: 400,
  handle: HANDLE,
  fresh: true,
  ...over,
});
const turn = (index: number, over: Partial<TurnSummary> = {}): TurnSummary => ({
  index,
  originalTokens: 1000,
  projectedTokens: 800,
  cacheStable: index > 0,
  reductions: 0,
  tools: [],
  missed: 0,
  ...over,
});

describe('a result over its cap sent whole', () => {
  const detail: TurnDetail = {
    index: 4,
    results: [],
    missed: [],
    own: [],
    whole: [
      {
        tool: 'Read',
        callId: 'call_css',
        source: 'style.css',
        chars: 13_947,
        why: { over: true, reason: `13,947 chars, over Read's cap of 8,000; ${KEEP}` },
      },
      { tool: 'Bash', callId: 'call_ls', chars: 20, why: { over: false, reason: 'under its cap' } },
    ],
  };

  it("says why in its row, with the engine's reason, and never 'under its cap'", () => {
    const { container } = details(detail);
    const rows = [...container.querySelectorAll('.result[data-kind="whole"]')];
    const css = rows.find((r) => r.getAttribute('data-call') === 'call_css')!;
    expect(css.querySelector('[data-testid="whole-reason"]')!.textContent).toBe(
      `13,947 chars, over Read's cap of 8,000; ${KEEP}: the model was sent it as it was (nothing saved in this turn, nothing hidden)`,
    );
    expect(css.textContent).not.toMatch(/under its cap/);
    expect(css.querySelector('[data-testid="over-cap"]')!.textContent).toBe('over its cap');
  });

  it('says a result under its cap is under its cap', () => {
    const { container } = details(detail);
    const ls = container.querySelector('.result[data-call="call_ls"] [data-testid="whole-reason"]')!;
    expect(ls.textContent).toBe('under its cap: the model was sent it as it was (nothing saved, nothing hidden)');
    expect(container.querySelector('.result[data-call="call_ls"] [data-testid="over-cap"]')).toBeNull();
  });

  it('claims no reason when the source cannot tell', () => {
    expect(wholeReason({ tool: 'Bash', callId: 'c', chars: 9_000 })).toBe(
      'the model was sent it as it was (nothing saved, nothing hidden)',
    );
  });

  it('is explained in the glossary: reads the agent asked for stay whole while in use, up to offload.keepReads', () => {
    expect(GLOSSARY['sent whole']).toMatch(/over it and kept whole on purpose/);
    expect(GLOSSARY['sent whole']).toMatch(/offload\.keepReads/);
  });

  it("is counted in the caps table beside the tool's cap, with the reason", () => {
    const caps: ToolCap[] = [
      { tool: 'Read', cap: 8000, explicit: false, reducedTurns: 1, keptWhole: { results: 3, why: KEEP } },
      { tool: 'Bash', cap: 8000, explicit: false, reducedTurns: 2 },
    ];
    render(
      <CapsPanel
        caps={caps}
        defaultCap={8000}
        capUnit="chars"
        changes={{}}
        onChange={() => undefined}
        onSave={() => undefined}
        onRevert={() => undefined}
        saving={false}
      />,
    );
    expect(screen.getByTestId('cap-kept-whole-Read').textContent).toBe(' · 3 over it sent whole*');
    expect(screen.getByTestId('caps-kept-whole').textContent).toBe(`* Read: 3 results over its cap were sent whole: ${KEEP}.`);
    expect(screen.queryByTestId('cap-kept-whole-Bash')).toBeNull();
  });
});

describe('what a reduction is called', () => {
  it('names a reference to an identical output a reference, not a preview, and counts it apart', () => {
    const detail: TurnDetail = {
      index: 2,
      results: [
        result({}),
        result({
          callId: 'call_b',
          kind: 'reference',
          reason: 'identical to the output of call call_a',
          projectedChars: 120,
          projectedTokens: 40,
        }),
      ],
      missed: [],
      own: ['call_a', 'call_b'],
      whole: [],
    };
    const { container } = details(detail);
    const badge = container.querySelector('.result[data-call="call_b"] .stage')!;
    expect(badge.textContent).toBe('reference');
    expect(badge.getAttribute('data-term')).toBe('reference');
    expect(container.querySelector('.result[data-call="call_a"] .stage')!.textContent).toBe('preview');
    expect(screen.getByTestId('details-summary').textContent).toMatch(
      /^2 new tool results: 2 reduced \(1 preview, 1 reference\), 0 sent whole/,
    );
  });

  it('says what references did in the session sentence and in the turn line', () => {
    const turns = [turn(0), turn(1, { previews: 1, references: 2, cost: { anthropic: { raw: 100, projected: 90 } } })];
    expect(sessionSentence(turns)).toContain('1 output became a preview with a handle, 2 outputs became references to an earlier one');
    expect(explainTurnCost(turns, 1, { costModel: 'anthropic' })).toContain('2 outputs became references to an earlier one');
  });

  it('says "1 token", not "1 tokens"', () => {
    expect(savedText(result({ stage: 'clear', originalTokens: 41, projectedTokens: 40 }))).toMatch(/^frees 1 token in every later call/);
    expect(savedText(result({ originalTokens: 41, projectedTokens: 40 }))).toMatch(/^saves 1 token in this/);
    expect(savedText(result({ originalTokens: 40, projectedTokens: 41 }))).toMatch(/^adds 1 token \(/);
    expect(savedText(result({}))).toMatch(/^saves 11k tokens/);
  });
});

describe('a dry run shows one state at a time', () => {
  it("draws the timeline's row from the dry run: its reductions, clears and cache, not the saved run's", () => {
    const saved = [turn(0), turn(1, { reductions: 3, clears: 2, tools: ['Bash'], cacheStable: false })];
    const dry = [turn(0), turn(1, { reductions: 0, clears: 0, tools: [], cacheStable: true, projectedTokens: 1000 })];
    const { container } = render(
      <Timeline turns={saved} visible={[0, 1]} cumulative={[0, 0]} dry={dry} selected={1} onSelect={() => undefined} />,
    );
    const row = container.querySelector('.turn[data-turn="1"]')!;
    expect(row.textContent).not.toMatch(/3 reduced|cleared|Bash/);
    expect(row.textContent).toMatch(/cache ✓/);
    expect(row.classList.contains('dry')).toBe(true);
  });

  it("labels the turn's line as the dry run's and its results as the saved run's", () => {
    const detail: TurnDetail = { index: 1, results: [result({})], missed: [], own: ['call_a'], whole: [] };
    details(detail, { dryRun: true, costText: '−2.9% this turn: the cached prefix held.' });
    expect(screen.getByTestId('turn-cost-explained').textContent).toBe('Dry run: −2.9% this turn: the cached prefix held.');
    expect(screen.getByTestId('saved-run-note').textContent).toMatch(
      /The results below are the saved run's \(the caps in force\), not the dry run's/,
    );
    expect(screen.getByRole('list', { name: 'Tool results of this turn in the saved run' })).toBeTruthy();
  });

  it('says nothing of a saved run when there is no dry run', () => {
    const detail: TurnDetail = { index: 1, results: [result({})], missed: [], own: ['call_a'], whole: [] };
    details(detail, { costText: '−2.9% this turn.' });
    expect(screen.queryByTestId('saved-run-note')).toBeNull();
    expect(screen.getByTestId('turn-cost-explained').textContent).toBe('−2.9% this turn.');
  });
});
