// @vitest-environment jsdom
import './support';
import { afterEach, describe, expect, it } from 'vitest';
import * as React from 'react';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { formatDollars, headline, type TurnSummary } from '../../src/protocol';
import { explainTurnCost, paybackTurn, sessionSentence } from '../../webview/cost';
import { firstInteresting, marksOf } from '../../webview/marks';
import { Glossary, GLOSSARY, Term } from '../../webview/components/Glossary';
import { TurnDetails } from '../../webview/components/TurnDetails';

afterEach(cleanup);

const OPUS = { model: 'claude-opus-4-5', family: 'anthropic', inputPerMTok: 5, source: 'https://www.anthropic.com/pricing#api' };
const lens = { costModel: 'anthropic', price: OPUS };
/** a turn of `raw` cost units whose projection with read-backs costs `cost` */
const t = (index: number, raw: number, cost: number, over: Partial<TurnSummary> = {}): TurnSummary => ({
  index,
  originalTokens: 10_000,
  projectedTokens: 8_000,
  cacheStable: true,
  reductions: 0,
  tools: [],
  missed: 0,
  cost: { anthropic: { raw, projected: cost } },
  ...over,
});

describe('the headline cost', () => {
  it('is the cost with read-backs relative to raw history, the cost before read-backs beside it', () => {
    const h = headline({ raw: 100, projected: 70, readBack: 10 });
    expect(h.withReadBacks).toBe(80);
    expect(h.change).toBeCloseTo(-0.2);
    expect(h.changeWithout).toBeCloseTo(-0.3);
  });

  it('writes dollars in cents from a dollar up and in two significant digits below', () => {
    expect(formatDollars(1234.5)).toBe('$1,234.50');
    expect(formatDollars(0.0421)).toBe('$0.042');
    expect(formatDollars(-1.2, true)).toBe('−$1.20');
  });
});

describe("a turn's cost explained", () => {
  it('says what a clear that rewrites the cache costs and the turn by which it pays back', () => {
    const turns = [
      t(0, 100, 100),
      t(1, 100, 400, { clears: 31, cacheStable: false, cachedPrefixTokens: 3_000, projectedTokens: 80_000 }),
      t(2, 200, 50),
      t(3, 200, 50),
    ];
    expect(paybackTurn(turns, 1, 'anthropic')).toBe(3);
    expect(explainTurnCost(turns, 1, lens)).toBe(
      '+300.0% this turn ($0.00050 raw → $0.0020): 31 results cleared, the cache is rewritten after its first 3.0k of 80k tokens; it pays back by turn 4.',
    );
  });

  it('says when a dearer turn never pays back in the session', () => {
    const turns = [t(0, 100, 100), t(1, 100, 400, { clears: 2, cacheStable: false, cachedPrefixTokens: 0 }), t(2, 100, 90)];
    expect(explainTurnCost(turns, 1, lens)).toMatch(/; it never pays back in this session\.$/);
  });

  it('names previews, the held cache, the read-backs of missed identifiers and what the turn saved', () => {
    const turns = [
      t(0, 100, 100),
      t(1, 1_000_000, 500_000, { previews: 2, missed: 1, cost: { anthropic: { raw: 1_000_000, projected: 400_000, readBack: 100_000 } } }),
    ];
    expect(explainTurnCost(turns, 1, lens)).toBe(
      '−50.0% this turn ($5.00 raw → $2.50): 2 outputs became previews with a handle, the cached prefix held, $0.50 to read back 1 missed identifier; saves $2.50.',
    );
  });

  it('names the file inputs the turn replaced by a marker', () => {
    const turns = [t(0, 100, 100), t(1, 100, 60, { inputs: 2 })];
    expect(explainTurnCost(turns, 1, lens)).toBe(
      '−40.0% this turn ($0.00050 raw → $0.00030): 2 file inputs replaced by a marker, the cached prefix held; saves $0.00020.',
    );
  });

  it("gives a failed call's error instead of a cost", () => {
    expect(explainTurnCost([t(0, 10, 10, { error: 'upstream unreachable: ECONNREFUSED' })], 0, lens)).toMatch(/failed.*ECONNREFUSED/);
  });

  it('is shown in the turn details with the failure of a failed call', () => {
    const detail = { index: 0, results: [], missed: [], whole: [] };
    render(
      <TurnDetails
        detail={detail}
        summary={t(0, 1, 1, { error: 'HTTP 529 overloaded_error: Overloaded' })}
        costText="+5.0% this turn"
        loadText={async () => ({ text: '', offset: 0, total: 0 })}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    expect(screen.getByTestId('turn-error').textContent).toContain('HTTP 529 overloaded_error: Overloaded');
    expect(screen.getByTestId('turn-cost-explained').textContent).toBe('+5.0% this turn');
  });
});

describe('the session in one sentence', () => {
  it('says how much context the agent produced, what Spillway sent, how many previews and clears', () => {
    const turns = [t(0, 1, 1, { previews: 1 }), t(1, 1, 1, { previews: 2, clears: 26 }), t(2, 1, 1)];
    expect(sessionSentence(turns)).toBe(
      'The agent produced 30k tokens of context over 3 calls; Spillway sent 24k: 3 outputs became previews with a handle, 26 old results were cleared. Click a turn to see what the model saw.',
    );
  });

  it('says how many file inputs were replaced by a marker, pluralised like the rest', () => {
    expect(sessionSentence([t(0, 1, 1, { clears: 2, inputs: 2 }), t(1, 1, 1, { inputs: 1 })])).toBe(
      'The agent produced 20k tokens of context over 2 calls; Spillway sent 16k: 2 old results were cleared, 3 file inputs were replaced by a marker. Click a turn to see what the model saw.',
    );
    expect(sessionSentence([t(0, 1, 1, { inputs: 1 })])).toContain(': 1 file input was replaced by a marker.');
  });

  it('says when nothing needed reducing', () => {
    expect(sessionSentence([t(0, 1, 1)])).toMatch(/Spillway sent 8.0k, every result whole/);
  });
});

describe('the marked turns agree with the cost', () => {
  it('never lists a turn that cost more than raw history among the largest savings', () => {
    const turns = [t(0, 100, 50, { freshSaved: 10 }), t(1, 100, 480, { freshSaved: 50_000, clears: 31 })];
    expect(marksOf(turns).savings).toEqual([0]);
  });

  it('opens on the turn whose outputs became previews with a handle', () => {
    const turns = [t(0, 100, 50, { freshSaved: 90_000, clears: 3 }), t(1, 100, 50, { freshSaved: 5_000, previews: 1 })];
    expect(firstInteresting(turns)).toBe(1);
  });
});

describe("a turn's file inputs in its details", () => {
  const inputInfo = (over: Record<string, unknown> = {}) => ({
    tool: 'Write',
    callId: 'toolu_w',
    reason: 'file input of 2,400 chars; the file holds it',
    originalChars: 2_400,
    projectedChars: 160,
    originalTokens: 600,
    projectedTokens: 40,
    handle: 'sw_0123456789abcdef01234567',
    fresh: true,
    ...over,
  });

  it('lists each input replaced in the turn with tool, call id, reason and handle, and opens and compares it', async () => {
    const opened: string[] = [];
    const compared: string[] = [];
    const loaded: string[] = [];
    const detail = {
      index: 3,
      results: [],
      missed: [],
      whole: [],
      inputs: [inputInfo(), inputInfo({ callId: 'toolu_old', handle: 'sw_fedcba9876543210fedcba98', fresh: false })],
    };
    const { container } = render(
      <TurnDetails
        detail={detail}
        loadText={async (h, side) => {
          loaded.push(`${side}:${h}`);
          return { text: side, offset: 0, total: side.length };
        }}
        onOpen={(h) => opened.push(h)}
        onCompare={(h) => compared.push(h)}
        onCopy={() => undefined}
      />,
    );
    expect(screen.getByTestId('details-summary').textContent).toContain('1 file input replaced by a marker');
    expect(screen.getByTestId('details-summary').textContent).toContain("this turn's decisions save 560 tokens");
    const rows = [...container.querySelectorAll('li[data-kind="input"]')];
    expect(rows.map((r) => r.getAttribute('data-handle'))).toEqual(['sw_0123456789abcdef01234567', 'sw_fedcba9876543210fedcba98']);
    expect(rows[0]!.textContent).toContain('Write');
    expect(rows[0]!.textContent).toContain('toolu_w');
    expect(rows[0]!.textContent).toContain('file input of 2,400 chars; the file holds it');
    expect(rows[1]!.textContent).toContain('kept');
    fireEvent.click(rows[0]!.querySelector('.result-head')!);
    expect(screen.getByText('Original (what the agent wrote)')).toBeTruthy();
    await screen.findByText('projected');
    expect(loaded).toContain('original:sw_0123456789abcdef01234567');
    fireEvent.click(screen.getByLabelText('Open stored output'));
    fireEvent.click(screen.getByLabelText('Compare original and projected'));
    expect(opened).toEqual(['sw_0123456789abcdef01234567']);
    expect(compared).toEqual(['sw_0123456789abcdef01234567']);
  });
});

describe('the glossary', () => {
  it('defines each word the header uses, on hover and in a list', () => {
    expect(Object.keys(GLOSSARY).sort()).toEqual([
      'cache-stable',
      'clear',
      'file input',
      'handle',
      'kept',
      'miss',
      'oracle',
      'preview',
      'read-back',
      'records skipped',
      'reference',
      'sent whole',
      "share of the oracle's saving",
    ]);
    render(
      <>
        <Term word="cache-stable" />
        <Glossary />
      </>,
    );
    expect(screen.getByText('cache-stable', { selector: '.term' }).getAttribute('title')).toBe(GLOSSARY['cache-stable']);
    fireEvent.click(screen.getByText('What the words mean'));
    expect(screen.getByTestId('glossary').textContent).toContain(GLOSSARY['read-back']);
  });
});
