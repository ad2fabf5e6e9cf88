// @vitest-environment jsdom
/**
 * What a person reads in the panel (issue 28, item 7): the search shows where it found its text and
 * marks it, the chart labels its axes and gives the values under the pointer, the header answers
 * "which turn needed something it hid" when the answer is none, and a replay's "records skipped" is
 * explained.
 */
import { stubHost } from './support';
import { afterEach, describe, expect, it } from 'vitest';
import * as React from 'react';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { SearchMatch, TurnSummary } from '../../src/protocol';
import { Chart } from '../../webview/components/Chart';
import { Timeline } from '../../webview/components/Timeline';
import { TurnDetails } from '../../webview/components/TurnDetails';
import { GLOSSARY } from '../../webview/components/Glossary';
import { App } from '../../webview/App';
import { SyntheticSession } from '../../bench/inspector-fixture';
import { parseConfig } from '../../src/engine';

afterEach(cleanup);

const turn = (index: number, over: Partial<TurnSummary> = {}): TurnSummary => ({
  index,
  originalTokens: 1000 * (index + 1),
  projectedTokens: 800 * (index + 1),
  cacheStable: index > 0,
  reductions: 0,
  tools: [],
  missed: 0,
  ...over,
});

describe('the search shows where it found its text', () => {
  it('answers with a snippet per matching result, the match at its place in it', async () => {
    const stub = stubHost([120]);
    // src/module_8/ is in the output of turn 3 (the synthetic outputs name the module of their seed)
    const r = await stub.host.request('search/results', { sessionId: 'replay:synthetic-120', query: 'MODULE_8/' });
    expect(r.turns.length).toBeGreaterThan(0);
    expect(r.matches!.length).toBeGreaterThanOrEqual(r.turns.length);
    for (const m of r.matches!) {
      expect(r.turns).toContain(m.turn);
      expect(m.snippet.slice(m.at, m.at + m.length).toLowerCase()).toBe('module_8/');
      expect(m.snippet).not.toMatch(/\n/);
    }
    stub.host.dispose();
  });

  const match: SearchMatch = {
    turn: 2,
    tool: 'bash',
    callId: 'call_1',
    handle: 'sw_0123456789abcdef01234567',
    where: 'original',
    snippet: '…error in src/module_7/a.ts line 4…',
    at: 14,
    length: 9,
  };

  it('puts the snippet in the matching row of the timeline, the match marked', () => {
    const turns = [turn(0), turn(1), turn(2, { tools: ['bash'], reductions: 1 })];
    const { container } = render(
      <Timeline
        turns={turns}
        visible={[2]}
        cumulative={[0, 0, 0]}
        selected={2}
        onSelect={() => undefined}
        matches={new Map([[2, [match]]])}
      />,
    );
    const snippet = container.querySelector('.turn[data-turn="2"] [data-testid="search-snippet"]')!;
    expect(snippet.textContent).toBe('bash in the original: …error in src/module_7/a.ts line 4…');
    expect(snippet.querySelector('mark')!.textContent).toBe('module_7/');
  });

  it('puts the snippet under the matching result in the details', () => {
    render(
      <TurnDetails
        detail={{
          index: 2,
          results: [
            {
              tool: 'bash',
              callId: 'call_1',
              stage: 'offload',
              reason: 'over the cap',
              originalChars: 9000,
              projectedChars: 1000,
              originalTokens: 2000,
              projectedTokens: 300,
              handle: 'sw_0123456789abcdef01234567',
              fresh: true,
            },
          ],
          missed: [],
        }}
        loadText={() => Promise.resolve({ text: '', offset: 0, total: 0 })}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
        highlight="module_7/"
        matches={[match]}
      />,
    );
    const snippet = screen.getByTestId('search-snippet');
    expect(snippet.closest('.result')!.getAttribute('data-handle')).toBe('sw_0123456789abcdef01234567');
    expect(snippet.querySelector('mark')!.textContent).toBe('module_7/');
  });
});

describe('the chart', () => {
  const turns = Array.from({ length: 11 }, (_, i) => turn(i));
  it('labels its axes and describes them to a screen reader', () => {
    const { container } = render(<Chart turns={turns} selected={0} onSelect={() => undefined} />);
    expect(screen.getByTestId('chart-x').textContent).toBe('turn 1turnsturn 11');
    expect([...container.querySelectorAll('.chart-y span')].map((s) => s.textContent)).toEqual(['11k', '5.5k', '0']);
    const svg = screen.getByTestId('chart');
    expect(container.querySelector(`#${svg.getAttribute('aria-describedby')}`)!.textContent).toBe(
      'Horizontal axis: turns 1 to 11. Vertical axis: tokens per call, from 0 to 11k tokens.',
    );
  });

  it('gives the values of the turn under the pointer, and forgets them when the pointer leaves', () => {
    render(<Chart turns={turns} selected={0} onSelect={() => undefined} />);
    const svg = screen.getByTestId('chart');
    svg.getBoundingClientRect = () => ({
      left: 0,
      width: 1000,
      top: 0,
      height: 120,
      right: 1000,
      bottom: 120,
      x: 0,
      y: 0,
      toJSON: () => ({}),
    });
    fireEvent.mouseMove(svg, { clientX: 700, clientY: 50 });
    const tip = screen.getByTestId('chart-hover');
    expect(tip.getAttribute('role')).toBe('tooltip');
    expect(tip.textContent).toBe('Turn 8: original 8.0k tokens · projected 6.4k tokens');
    expect(svg.getAttribute('aria-describedby')).toBe('chart-desc chart-hover');
    fireEvent.mouseLeave(svg);
    expect(screen.queryByTestId('chart-hover')).toBeNull();
  });
});

describe('the header', () => {
  it('answers "which turn needed something it hid" when no turn did', async () => {
    // the synthetic sessions miss an identifier every 29th turn: 20 turns miss none
    const stub = stubHost([20]);
    render(<App host={stub.host} />);
    const answer = await screen.findByTestId('missed-answer');
    await waitFor(() => expect(answer.textContent).toBe('Misses: none: no turn needed anything it hid'));
    stub.host.dispose();
  });

  it('counts the missed identifiers and their turns when there are some', async () => {
    const stub = stubHost([60]);
    render(<App host={stub.host} />);
    const answer = await screen.findByTestId('missed-answer');
    await waitFor(() => expect(answer.textContent).toBe('2 missed identifiers in 2 turns'));
    stub.host.dispose();
  });

  it('explains "records skipped" in a replay\'s detail line', async () => {
    const stub = stubHost([]);
    const session = new SyntheticSession('replay:skipping', 5, parseConfig({}).config, 20_000);
    session.info = { ...session.info, detail: 'claude-code transcript, 5 calls, miss rate 0.0%, 4 records skipped · /tmp/s.jsonl' };
    stub.source.add(session);
    render(<App host={stub.host} />);
    const term = await screen.findByText('records skipped', { selector: '.term' });
    expect(term.getAttribute('title')).toBe(GLOSSARY['records skipped']);
    expect(term.closest('.session-detail')!.textContent).toBe(session.info.detail);
    stub.host.dispose();
  });
});
