// @vitest-environment jsdom
import './support';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as React from 'react';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { SessionInfo, TextPage, ToolCap, TurnDetail, TurnSummary } from '../../src/protocol';
import { causeLabel } from '../../src/replay/misses';
import { CLEAR_HOLD_LABELS } from '../../src/replay/held';
import { VirtualList } from '../../webview/components/VirtualList';
import { Chart, measure } from '../../webview/components/Chart';
import { firstInteresting, marksOf } from '../../webview/marks';
import { SessionList } from '../../webview/components/SessionList';
import { Timeline } from '../../webview/components/Timeline';
import { TurnDetails, keyOfReduced } from '../../webview/components/TurnDetails';
import { TextPager, PAGE_CHARS } from '../../webview/components/TextPager';
import { CapsPanel, deltaText } from '../../webview/components/CapsPanel';
import { failing } from '../support/expect';
import { GLOSSARY } from '../../webview/components/Glossary';

afterEach(cleanup);

const turn = (index: number, over: Partial<TurnSummary> = {}): TurnSummary => ({
  index,
  originalTokens: 1000 + index * 100,
  projectedTokens: 800 + index * 50,
  cacheStable: index > 0,
  reductions: 1,
  tools: ['bash'],
  missed: 0,
  ...over,
});
const HANDLE = 'sw_0123456789abcdef01234567';
const HANDLE2 = 'sw_76543210fedcba9876543210';
const OPUS = { model: 'claude-opus-4-5', family: 'anthropic', inputPerMTok: 5, source: 'https://www.anthropic.com/pricing#api' };

describe('VirtualList', () => {
  const rows = (n: number, active = 0, onActive = vi.fn(), onActivate = vi.fn()) =>
    render(
      <VirtualList
        count={n}
        rowHeight={20}
        active={active}
        onActive={onActive}
        onActivate={onActivate}
        idPrefix="r"
        label="Rows"
        renderRow={(i) => <span>row {i}</span>}
      />,
    );

  it('puts only a window of 10,000 rows in the DOM', () => {
    const { container } = rows(10_000);
    const n = container.querySelectorAll('[role="option"]').length;
    expect(n).toBeGreaterThan(10);
    expect(n).toBeLessThan(60);
    expect((container.querySelector('.vlist-inner') as HTMLElement).style.height).toBe('200000px');
  });

  it('moves the active row with the arrows, Page keys, Home and End, and activates it with Enter', () => {
    const onActive = vi.fn();
    const onActivate = vi.fn();
    rows(100, 5, onActive, onActivate);
    const list = screen.getByRole('listbox', { name: 'Rows' });
    expect(list.getAttribute('aria-activedescendant')).toBe('r-5');
    fireEvent.keyDown(list, { key: 'ArrowDown' });
    expect(onActive).toHaveBeenLastCalledWith(6);
    fireEvent.keyDown(list, { key: 'ArrowUp' });
    expect(onActive).toHaveBeenLastCalledWith(4);
    fireEvent.keyDown(list, { key: 'End' });
    expect(onActive).toHaveBeenLastCalledWith(99);
    fireEvent.keyDown(list, { key: 'Home' });
    expect(onActive).toHaveBeenLastCalledWith(0);
    fireEvent.keyDown(list, { key: 'PageDown' });
    expect(onActive.mock.lastCall![0]).toBeGreaterThan(20);
    fireEvent.keyDown(list, { key: 'Enter' });
    expect(onActivate).toHaveBeenCalledWith(5);
  });

  it('scrolls the active row into view', () => {
    const { container } = rows(1000, 900);
    expect((container.querySelector('.vlist') as HTMLElement).scrollTop).toBeGreaterThan(900 * 20 - 700);
    expect(container.querySelector('#r-900')).toBeTruthy();
  });
});

describe('Chart', () => {
  it('draws original and projected lines and marks cache-stable calls', () => {
    const turns = [turn(0), turn(1), turn(2, { cacheStable: false }), turn(3)];
    const { container } = render(<Chart turns={turns} selected={1} onSelect={() => undefined} />);
    expect(container.querySelector('[data-testid="chart-original"]')!.getAttribute('d')).toMatch(/^M0\.0,/);
    expect(container.querySelector('[data-testid="chart-projected"]')).toBeTruthy();
    expect(container.querySelector('[data-testid="chart-stable"]')!.getAttribute('d')!.match(/M/g)).toHaveLength(2);
    expect(screen.getByText(/cache-stable \(2\)/)).toBeTruthy();
    expect(container.querySelector('[data-testid="chart-dry"]')).toBeNull();
  });

  it('buckets 10,000 calls into at most 600 points and draws a dry run dashed', () => {
    const turns = Array.from({ length: 10_000 }, (_, i) => turn(i));
    const { container } = render(
      <Chart turns={turns} dry={turns.map((t) => ({ ...t, projectedTokens: 10 }))} selected={0} onSelect={() => undefined} />,
    );
    expect(container.querySelector('[data-testid="chart-original"]')!.getAttribute('d')!.match(/[ML]/g)!.length).toBe(600);
    expect(container.querySelector('[data-testid="chart-dry"]')).toBeTruthy();
  });
});

describe('SessionList', () => {
  const s = (id: string, origin: SessionInfo['origin']): SessionInfo => ({
    id,
    origin,
    title: id,
    detail: 'd',
    turns: 3,
    modified: '2026-01-01T00:00:00Z',
    live: origin !== 'replay',
  });
  it('lists sessions of every origin and selects one', () => {
    const onSelect = vi.fn();
    render(
      <SessionList
        sessions={[s('proxy:a', 'proxy'), s('replay:b', 'replay'), s('api:c', 'api')]}
        selected="replay:b"
        onSelect={onSelect}
      />,
    );
    expect(screen.getAllByRole('button')).toHaveLength(3);
    expect(screen.getByText('replay:b').closest('button')!.getAttribute('aria-current')).toBe('true');
    fireEvent.click(screen.getByText('api:c'));
    expect(onSelect).toHaveBeenCalledWith('api:c');
  });
  it('explains where sessions come from when there are none', () => {
    render(<SessionList sessions={[]} onSelect={() => undefined} />);
    expect(screen.getByText(/Open Transcript/)).toBeTruthy();
  });
});

describe('Timeline', () => {
  it('shows per turn the figures, the cumulative saving and the marks', () => {
    const turns = [turn(0), turn(1, { missed: 2, tools: ['grep'] }), turn(2, { note: 'not JSON' })];
    const { container } = render(
      <Timeline turns={turns} visible={[0, 1, 2]} cumulative={[200, 450, 750]} selected={1} onSelect={() => undefined} />,
    );
    const rows = container.querySelectorAll('.vrow');
    expect(rows).toHaveLength(3);
    expect(rows[1]!.textContent).toMatch(/1\.1k → 850/);
    expect(rows[1]!.textContent).toMatch(/saved 450/);
    expect(rows[1]!.textContent).toMatch(/⚠ 2 missed/);
    expect(rows[1]!.textContent).toMatch(/cache ✓/);
    expect(rows[2]!.textContent).toMatch(/unchanged/);
    expect(rows[1]!.getAttribute('aria-selected')).toBe('true');
  });
  it('shows only the visible turns and the dry-run figure when there is one', () => {
    const turns = [turn(0), turn(1), turn(2)];
    const { container } = render(
      <Timeline
        turns={turns}
        visible={[2]}
        cumulative={[0, 0, 0]}
        dry={turns.map((t) => ({ ...t, projectedTokens: 5 }))}
        selected={2}
        onSelect={() => undefined}
      />,
    );
    expect(container.querySelectorAll('.vrow')).toHaveLength(1);
    expect(container.querySelector('.dry-text')!.textContent).toBe('5');
  });
});

describe('TurnDetails', () => {
  const detail: TurnDetail = {
    index: 3,
    results: [
      {
        tool: 'bash',
        callId: 'call_1',
        stage: 'offload',
        reason: '44,000 chars over bash’s cap of 8,000',
        originalChars: 44_000,
        projectedChars: 1_500,
        originalTokens: 11_000,
        projectedTokens: 400,
        handle: HANDLE,
        fresh: true,
      },
    ],
    missed: [{ id: 'src/a.ts', handle: HANDLE }, { id: 'long_identifier_x' }],
  };
  const loadText = (_h: string, side: string, offset: number): Promise<TextPage> =>
    Promise.resolve({ text: `${side} text`, offset, total: 13 });

  it('lists the results with tool, call id, stage, reason, sizes and tokens', () => {
    render(
      <TurnDetails detail={detail} loadText={loadText} onOpen={() => undefined} onCompare={() => undefined} onCopy={() => undefined} />,
    );
    expect(screen.getByRole('heading', { name: 'Turn 4' })).toBeTruthy();
    expect(screen.getByText('call_1')).toBeTruthy();
    // the badge says what the model was sent in the glossary's word; the stage that made it is in its tooltip
    const badge = screen.getByText('preview', { selector: '.stage' });
    expect(badge.className).toContain('stage-offload');
    expect(badge.getAttribute('title')).toMatch(/^The start and end of a large tool output.*Made by the offload stage\.$/);
    expect(screen.getByText(/over bash’s cap/)).toBeTruthy();
    expect(screen.getByText(/44,000 → 1,500 chars · 11k → 400 tokens/)).toBeTruthy();
  });

  it('expands a result into original and projection side by side, with the three buttons', async () => {
    const onOpen = vi.fn();
    const onCompare = vi.fn();
    const onCopy = vi.fn();
    render(<TurnDetails detail={detail} loadText={loadText} onOpen={onOpen} onCompare={onCompare} onCopy={onCopy} />);
    fireEvent.click(screen.getByRole('button', { expanded: false }));
    await screen.findByText('original text');
    await screen.findByText('projected text');
    fireEvent.click(screen.getByLabelText('Open stored output'));
    fireEvent.click(screen.getByLabelText('Compare original and projected'));
    fireEvent.click(screen.getByLabelText('Copy handle'));
    expect(onOpen).toHaveBeenCalledWith(HANDLE);
    // Compare shows the marker of the turn the result was chosen in
    expect(onCompare).toHaveBeenCalledWith(HANDLE, { turn: 3, callId: 'call_1' });
    expect(onCopy).toHaveBeenCalledWith(HANDLE);
  });

  it('asks for the marker of this turn, names the result by its file with the call id in the tooltip, and links a later clear to its turn', async () => {
    const asked: string[] = [];
    const load = (h: string, side: string, offset: number, _l: number, at?: { turn: number; callId: string }): Promise<TextPage> => {
      asked.push(`${side}:${h}:${at?.turn}:${at?.callId}`);
      return Promise.resolve({ text: side === 'projected' ? `[preview of turn ${at?.turn}]` : 'the file', offset, total: 20 });
    };
    const onSelectTurn = vi.fn();
    const previewed: TurnDetail = {
      index: 10,
      results: [
        {
          ...detail.results[0]!,
          tool: 'Read',
          callId: 'toolu_01EXN',
          source: 'src/windows_admin.py',
          later: { turn: 21, stage: 'clear' },
        },
      ],
      missed: [],
    };
    const { container } = render(
      <TurnDetails
        detail={previewed}
        loadText={load}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
        onSelectTurn={onSelectTurn}
      />,
    );
    const name = container.querySelector('.result-call')!;
    expect(name.textContent).toBe('src/windows_admin.py');
    expect(name.getAttribute('title')).toContain('call toolu_01EXN');
    expect(screen.queryByText('toolu_01EXN')).toBeNull();
    expect(screen.getByTestId('result-later').textContent).toMatch(/cleared in turn 22/);
    fireEvent.click(screen.getByRole('button', { expanded: false }));
    await screen.findByText('[preview of turn 10]');
    expect(screen.getByLabelText('Projected (what the model was sent in turn 11)')).toBeTruthy();
    expect(asked).toContain(`projected:${HANDLE}:10:toolu_01EXN`);
    fireEvent.click(screen.getByRole('button', { name: 'turn 22' }));
    expect(onSelectTurn).toHaveBeenCalledWith(21);
  });

  it('marks what the agent referred to but could no longer see, and opens its output at the identifier', () => {
    const onOpen = vi.fn();
    render(<TurnDetails detail={detail} loadText={loadText} onOpen={onOpen} onCompare={() => undefined} onCopy={() => undefined} />);
    const note = screen.getByRole('note');
    expect(note.textContent).toMatch(/referred to 2 things it could no longer see/);
    expect(note.textContent).toMatch(/long_identifier_x \(not in a stored output\)/);
    fireEvent.click(screen.getByText(HANDLE, { selector: 'button' }));
    expect(onOpen).toHaveBeenCalledWith(HANDLE, 'src/a.ts');
  });

  it('names what hid each missed identifier: the cause, the tool and turn of the reduction, the handle; and the read-backs they cost', () => {
    const onOpen = vi.fn();
    const withCauses: TurnDetail = {
      ...detail,
      readBacks: 3,
      // the host sends each cause with its words (src/extension/inspector/session.ts, from src/replay/misses.ts)
      missed: [
        { id: 'src/a.ts', handle: HANDLE, cause: 'clear', causeLabel: causeLabel('clear'), tool: 'Read', since: 11 },
        { id: 'gammaFunction', handle: HANDLE2, cause: 'input', causeLabel: causeLabel('input'), tool: 'Write', since: 2 },
        { id: 'alphaFunction', handle: HANDLE, cause: 'offload', causeLabel: causeLabel('offload'), tool: 'Bash', since: 4 },
        { id: 'long_identifier_x', cause: 'unheld', causeLabel: causeLabel('unheld') },
      ],
    };
    render(<TurnDetails detail={withCauses} loadText={loadText} onOpen={onOpen} onCompare={() => undefined} onCopy={() => undefined} />);
    expect(screen.getByRole('note').textContent).toMatch(/could no longer see \(3 read-backs to find them again\):/);
    const lines = screen.getAllByTestId('missed-id').map((li) => li.textContent);
    expect(lines).toEqual([
      `src/a.ts · Read result cleared in turn 12 in ${HANDLE}`,
      `gammaFunction · Write file input replaced by a marker in turn 3 in ${HANDLE2}`,
      `alphaFunction · Bash result offloaded on arrival in turn 5 in ${HANDLE}`,
      'long_identifier_x (not in a stored output)',
    ]);
    fireEvent.click(screen.getByText(HANDLE2, { selector: 'button' }));
    expect(onOpen).toHaveBeenCalledWith(HANDLE2, 'gammaFunction');
  });

  it('says what the request sent whole and why the clear stage left it, the reason behind the most tokens first', () => {
    // the host sends each reason with its words (src/extension/inspector/session.ts, from src/replay/held.ts)
    const held = [
      { reason: 'unaffordable', label: CLEAR_HOLD_LABELS.unaffordable, results: 4, tokens: 25_000 },
      { reason: 'in-use', label: CLEAR_HOLD_LABELS['in-use'], results: 12, tokens: 20_400 },
      { reason: 'no-gain', label: CLEAR_HOLD_LABELS['no-gain'], results: 1, tokens: 9 },
    ];
    const { rerender } = render(
      <TurnDetails
        detail={{ ...detail, held }}
        loadText={loadText}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    const summary = screen.getByTestId('held-summary');
    expect(summary.querySelector('summary')!.textContent).toBe(
      "Sent whole in this request: 17 results, 45k tokens. Why the clear stage left them: the session's bank cannot pay for a clear (25k tokens) and 2 other reasons",
    );
    expect(screen.getAllByTestId('held-reason').map((li) => [li.getAttribute('data-reason'), li.textContent])).toEqual([
      ['unaffordable', "the session's bank cannot pay for a clear: 4 results, 25k tokens"],
      ['in-use', 'in use (referred to in the last calls): 12 results, 20k tokens'],
      ['no-gain', 'a marker would not be shorter: 1 result, 9 tokens'],
    ]);
    // one reason, one result: no count of other reasons
    rerender(
      <TurnDetails
        detail={{ ...detail, held: [held[2]!] }}
        loadText={loadText}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    expect(screen.getByTestId('held-summary').querySelector('summary')!.textContent).toBe(
      'Sent whole in this request: 1 result, 9 tokens. Why the clear stage left it: a marker would not be shorter',
    );
    // a turn whose source does not know (a live session) shows nothing
    rerender(
      <TurnDetails detail={detail} loadText={loadText} onOpen={() => undefined} onCompare={() => undefined} onCopy={() => undefined} />,
    );
    expect(screen.queryByTestId('held-summary')).toBeNull();
  });

  it('names the output that held a miss by its file or command, the handle in its tooltip, and shows what the agent wrote around it', () => {
    const onOpen = vi.fn();
    const named: TurnDetail = {
      ...detail,
      missed: [
        {
          id: 'TestRenderMarkdownTables',
          handle: HANDLE,
          cause: 'clear',
          causeLabel: causeLabel('clear'),
          tool: 'Bash',
          source: '$ go test ./pkg/export/... -v',
          wrote: '…the export tests fail: TestRenderMarkdownTables does not close the row…',
          since: 20,
        },
      ],
    };
    render(<TurnDetails detail={named} loadText={loadText} onOpen={onOpen} onCompare={() => undefined} onCopy={() => undefined} />);
    const line = screen.getByTestId('missed-id');
    expect(line.textContent).toMatch(/^TestRenderMarkdownTables · Bash result cleared in turn 21 in \$ go test \.\/pkg\/export\/\.\.\. -v/);
    expect(line.textContent).not.toContain(HANDLE);
    const link = screen.getByText('$ go test ./pkg/export/... -v', { selector: 'button' });
    expect(link.getAttribute('title')).toContain(HANDLE);
    const wrote = screen.getByTestId('missed-wrote');
    expect(wrote.textContent).toBe('the agent wrote: “…the export tests fail: TestRenderMarkdownTables does not close the row…”');
    expect(wrote.querySelector('mark')!.textContent).toBe('TestRenderMarkdownTables');
    fireEvent.click(link);
    expect(onOpen).toHaveBeenCalledWith(HANDLE, 'TestRenderMarkdownTables');
  });

  it('says when nothing was reduced', () => {
    render(
      <TurnDetails
        detail={{ index: 0, results: [], missed: [] }}
        loadText={loadText}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    expect(screen.getByText(/Nothing was reduced/)).toBeTruthy();
  });

  it('shows results Claude Code saved itself as saved by Claude Code, with the file it named', () => {
    const file = '/home/u/.claude/projects/-w/s/tool-results/toolu_9.txt';
    render(
      <TurnDetails
        detail={{
          index: 0,
          results: [],
          missed: [],
          savedByAgent: [{ tool: 'Bash', callId: 'toolu_9', agent: 'claude-code', file, chars: 2300 }],
        }}
        loadText={loadText}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    expect(screen.getByText(/Saved by Claude Code \(1\)/)).toBeTruthy();
    expect(screen.getByText(file)).toBeTruthy();
    expect(screen.getByText('toolu_9')).toBeTruthy();
  });

  it('shows results Gemini CLI masked itself as saved by Gemini CLI, with the file it named', () => {
    const file = '/home/u/.gemini/tmp/4f2a9c/tool-outputs/session-8d1e/run_shell_command_1_k3j9x.txt';
    render(
      <TurnDetails
        detail={{
          index: 0,
          results: [],
          missed: [],
          savedByAgent: [{ tool: 'run_shell_command', callId: 'run_shell_command-1', agent: 'gemini-cli', file, chars: 1200 }],
        }}
        loadText={loadText}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    expect(screen.getByText(/Saved by Gemini CLI \(1\)/)).toBeTruthy();
    expect(screen.getByText(file)).toBeTruthy();
  });

  it('shows outputs the agents truncated themselves: how much each cut, and the file of the whole when it kept one', () => {
    const file = '/home/u/.gemini/tmp/4f2a9c/tool-outputs/session-8d1e/run_shell_command_run_shell_command-1.txt';
    render(
      <TurnDetails
        detail={{
          index: 0,
          results: [],
          missed: [],
          truncatedByAgent: [
            { tool: 'run_shell_command', callId: 'run_shell_command-1', agent: 'gemini-cli', omitted: 77_040, unit: 'chars', file },
            { tool: 'exec_command', callId: 'call_7', agent: 'codex', omitted: 7_920_051, unit: 'tokens', file: '' },
            { tool: 'bash', callId: 'toolu_9', agent: 'opencode', unit: 'lines', file: '/home/u/.local/share/opencode/tool-output/tool_1' },
          ],
        }}
        loadText={loadText}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    expect(screen.getByText(/Truncated by Gemini CLI, Codex and OpenCode \(3\)/)).toBeTruthy();
    const items = screen.getAllByRole('listitem').map((li) => li.textContent);
    expect(items).toContain(`run_shell_command run_shell_command-1: 77,040 chars cut; the whole output is in ${file}`);
    expect(items).toContain('exec_command call_7: 7,920,051 tokens cut; the agent kept no copy of the whole');
    // OpenCode does not say how much it cut
    expect(items).toContain(
      'bash toolu_9: cut (the agent does not say how much); the whole output is in /home/u/.local/share/opencode/tool-output/tool_1',
    );
    // not shown as saved by the agent: Spillway may still reduce these
    expect(screen.queryByText(/Saved by/)).toBeNull();
  });
});

describe('TextPager', () => {
  it('asks for one page at a time and never for the whole text', async () => {
    const whole = 'x'.repeat(10 * 1024 * 1024);
    const load = vi.fn((offset: number, limit: number) =>
      Promise.resolve({ text: whole.slice(offset, offset + limit), offset, total: whole.length }),
    );
    const { container } = render(<TextPager side="original" label="Original" load={load} />);
    await waitFor(() => expect(container.querySelector('pre')!.textContent!.length).toBe(PAGE_CHARS));
    expect(screen.getByText(/16,384 of 10,485,760 chars/)).toBeTruthy();
    fireEvent.click(screen.getByLabelText('Show more of the original text'));
    await waitFor(() => expect(container.querySelector('pre')!.textContent!.length).toBe(2 * PAGE_CHARS));
    expect(
      failing(
        load.mock.calls.map((c) => c[1]),
        (l) => l <= PAGE_CHARS,
      ),
      'elements that break the rule',
    ).toEqual([]);
  });
  it('says why a text is unavailable', async () => {
    render(
      <TextPager
        side="projected"
        label="Projected"
        load={() => Promise.resolve({ text: '', offset: 0, total: 0, unavailable: 'not recorded' })}
      />,
    );
    await screen.findByText('not recorded');
  });
});

describe('CapsPanel', () => {
  const caps: ToolCap[] = [
    { tool: 'bash', cap: 8000, explicit: false, reducedTurns: 3 },
    { tool: 'grep', cap: 'unlimited', explicit: true, reducedTurns: 0 },
  ];
  it('shows the cap in force per tool and reports a valid new one', () => {
    const onChange = vi.fn();
    const { container } = render(
      <CapsPanel
        caps={caps}
        defaultCap={8000}
        capUnit="chars"
        changes={{}}
        onChange={onChange}
        onSave={() => undefined}
        onRevert={() => undefined}
        saving={false}
      />,
    );
    expect(container.querySelector('tr[data-tool="bash"] .cap-current')!.textContent).toBe('8,000 (default)');
    expect(container.querySelector('tr[data-tool="grep"] .cap-current')!.textContent).toBe('unlimited');
    const field = screen.getByLabelText('New cap for bash');
    expect(field.tagName).toBe('INPUT');
    fireEvent.change(field, { target: { value: '12k' } });
    expect(onChange).toHaveBeenLastCalledWith('bash', 12000);
    fireEvent.change(field, { target: { value: 'lots' } });
    // a bad value drops the change (the dry run never runs on a value the field no longer shows) and says why in place
    expect(onChange).toHaveBeenLastCalledWith('bash', undefined);
    expect(screen.getByRole('alert').textContent).toMatch(/^not a cap: use 12k, unlimited or default$/);
    expect(field.getAttribute('aria-invalid')).toBe('true');
    expect(container.querySelector('tr[data-tool="bash"] .cap-effect')!.textContent).toBe(screen.getByRole('alert').textContent);
    // the field still holds what was typed
    expect((field as HTMLInputElement).value).toBe('lots');
  });
  it('enables Save and Revert only with changes', () => {
    const onSave = vi.fn();
    const { rerender } = render(
      <CapsPanel
        caps={caps}
        defaultCap={8000}
        capUnit="chars"
        changes={{}}
        onChange={() => undefined}
        onSave={onSave}
        onRevert={() => undefined}
        saving={false}
      />,
    );
    expect((screen.getByLabelText('Save caps to settings') as HTMLButtonElement).disabled).toBe(true);
    rerender(
      <CapsPanel
        caps={caps}
        defaultCap={8000}
        capUnit="chars"
        changes={{ bash: 4000 }}
        onChange={() => undefined}
        onSave={onSave}
        onRevert={() => undefined}
        saving={false}
      />,
    );
    expect((screen.getByLabelText('Save caps to settings') as HTMLButtonElement).disabled).toBe(false);
    fireEvent.click(screen.getByLabelText('Save caps to settings'));
    expect(onSave).toHaveBeenCalled();
  });
});

describe('Chart: marks, click and measure', () => {
  const costed = (i: number, over: Partial<TurnSummary> = {}) =>
    turn(i, { cost: { anthropic: { raw: 1000, projected: 500 + i }, openai: { raw: 900, projected: 600 } }, ...over });

  it('marks clears, missed identifiers and the largest savings, each with a keyboard-reachable button', () => {
    const turns = [
      costed(0),
      costed(1, { clears: 2 }),
      costed(2, { missed: 1 }),
      costed(3, { freshSaved: 5000 }),
      costed(4, { freshSaved: 100 }),
    ];
    const onSelect = vi.fn();
    const { container } = render(<Chart turns={turns} selected={0} onSelect={onSelect} marks={marksOf(turns)} />);
    expect(container.querySelector('[data-testid="chart-mark-clears"]')!.getAttribute('d')!.match(/M/g)).toHaveLength(1);
    expect(container.querySelector('[data-testid="chart-mark-missed"]')!.getAttribute('d')!.match(/M/g)).toHaveLength(1);
    expect(container.querySelectorAll('[data-testid="chart-mark-savings"] circle')).toHaveLength(2);
    fireEvent.click(screen.getByRole('button', { name: 'Clears: turn 2' }));
    expect(onSelect).toHaveBeenLastCalledWith(1);
    fireEvent.click(screen.getByRole('button', { name: 'Missed identifiers: turn 3' }));
    expect(onSelect).toHaveBeenLastCalledWith(2);
    fireEvent.click(screen.getByRole('button', { name: 'Largest savings: turn 4' }));
    expect(onSelect).toHaveBeenLastCalledWith(3);
  });

  it('selects the turn under the pointer', () => {
    const turns = Array.from({ length: 11 }, (_, i) => costed(i));
    const onSelect = vi.fn();
    render(<Chart turns={turns} selected={0} onSelect={onSelect} />);
    const svg = screen.getByTestId('chart');
    svg.getBoundingClientRect = () => ({
      left: 100,
      width: 1000,
      top: 0,
      height: 120,
      right: 1100,
      bottom: 120,
      x: 100,
      y: 0,
      toJSON: () => ({}),
    });
    fireEvent.click(svg, { clientX: 100 + 700, clientY: 50 });
    expect(onSelect).toHaveBeenLastCalledWith(7);
  });

  it('switches to cumulative cost under caching, read-backs included', () => {
    const turns = [
      costed(0, { cost: { anthropic: { raw: 100, projected: 50, readBack: 10 } } }),
      costed(1, { cost: { anthropic: { raw: 100, projected: 50, readBack: 10 } } }),
    ];
    expect(measure(turns, 'cost')).toEqual({ original: [100, 200], projected: [60, 120] });
    const onMode = vi.fn();
    const { rerender } = render(<Chart turns={turns} selected={0} onSelect={() => undefined} mode="tokens" onMode={onMode} />);
    fireEvent.click(screen.getByLabelText('Cumulative cost'));
    expect(onMode).toHaveBeenCalledWith('cost');
    rerender(<Chart turns={turns} selected={0} onSelect={() => undefined} mode="cost" onMode={onMode} />);
    expect(screen.getByTestId('chart').getAttribute('data-mode')).toBe('cost');
    expect(screen.getByText(/max 200 units/)).toBeTruthy();
    rerender(
      <Chart
        turns={turns}
        selected={0}
        onSelect={() => undefined}
        mode="cost"
        onMode={onMode}
        lens={{ costModel: 'anthropic', price: OPUS }}
      />,
    );
    // 200 units at $5 per million input tokens
    expect(screen.getByText(/max \$0\.0010/)).toBeTruthy();
  });

  it('offers no cost measure when the turns carry no cost', () => {
    render(<Chart turns={[turn(0), turn(1)]} selected={0} onSelect={() => undefined} mode="cost" onMode={() => undefined} />);
    expect(screen.queryByTestId('chart-mode')).toBeNull();
    expect(screen.getByTestId('chart').getAttribute('data-mode')).toBe('tokens');
  });
});

describe('marks', () => {
  it('names the ten largest savings and opens on the largest', () => {
    const turns = Array.from({ length: 30 }, (_, i) =>
      turn(i, { freshSaved: i === 17 ? 9999 : i * 10, ...(i === 4 ? { clears: 1 } : {}) }),
    );
    const m = marksOf(turns);
    expect(m.savings).toHaveLength(10);
    expect(m.savings).toContain(17);
    expect(m.clears).toEqual([4]);
    expect(firstInteresting(turns, m)).toBe(17);
    expect(firstInteresting([turn(0), turn(1, { missed: 2 })])).toBe(1);
    expect(firstInteresting([])).toBe(-1);
  });
});

describe('Timeline: fixed columns and cost', () => {
  it('shows how many file inputs a turn replaced by a marker, and nothing for a turn that replaced none', () => {
    const { container } = render(
      <Timeline
        turns={[turn(0, { inputs: 2 }), turn(1, { inputs: 0 })]}
        visible={[0, 1]}
        cumulative={[0, 0]}
        selected={0}
        onSelect={() => undefined}
      />,
    );
    const marks = [...container.querySelectorAll('.turn')].map((row) => row.querySelector('.mark-inputs')?.textContent);
    expect(marks).toEqual(['✎ 2 inputs', undefined]);
  });

  it("shows each turn's cost under caching, clears and the provider's cached tokens", () => {
    const turns = [turn(0, { cost: { anthropic: { raw: 1000, projected: 250 } }, clears: 3, providerCachedTokens: 12_000 })];
    const { container } = render(<Timeline turns={turns} visible={[0]} cumulative={[0]} selected={0} onSelect={() => undefined} />);
    expect(container.querySelector('.turn-cost')!.textContent).toBe('cost −75.0%');
    expect(container.querySelector('.mark-clear')!.textContent).toBe('✂ 3 cleared');
    expect(container.querySelector('.mark-provider')!.textContent).toBe('cached 12k');
    // every row has the same five cells in the same order, so the figures line up
    expect([...container.querySelector('.turn')!.children].map((c) => c.className.split(' ')[0])).toEqual([
      'turn-index',
      'bar',
      'turn-figures',
      'turn-saved',
      'turn-cost',
      'turn-marks',
    ]);
  });
});

describe('TurnDetails: every result of the turn', () => {
  const detail: TurnDetail = {
    index: 2,
    results: [
      {
        tool: 'bash',
        callId: 'call_new',
        stage: 'offload',
        reason: '44,000 chars over the cap',
        originalChars: 44_000,
        projectedChars: 1_500,
        originalTokens: 11_000,
        projectedTokens: 400,
        handle: HANDLE,
        fresh: true,
      },
      {
        tool: 'grep',
        callId: 'call_old',
        stage: 'offload',
        reason: 'earlier',
        originalChars: 9_000,
        projectedChars: 1_500,
        originalTokens: 2_000,
        projectedTokens: 400,
        handle: 'sw_00000000000000000000abcd',
        fresh: false,
      },
    ],
    missed: [],
    own: ['call_new'],
    whole: [{ tool: 'ls', callId: 'call_ls', chars: 20, tokens: 6 }],
  };
  const loadText = (_h: string, side: string, offset: number): Promise<TextPage> =>
    Promise.resolve({ text: `${side} text`, offset, total: 13 });
  const loadWhole = vi.fn((_t: number, callId: string, offset: number): Promise<TextPage> =>
    Promise.resolve({ text: `whole ${callId} needle`, offset, total: 22 }),
  );

  it('lists the results new in the turn, reduced and whole, then the ones kept from earlier turns, with what each saved', () => {
    const { container } = render(
      <TurnDetails
        detail={detail}
        loadText={loadText}
        loadWhole={loadWhole}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    expect([...container.querySelectorAll('.result')].map((li) => li.getAttribute('data-kind'))).toEqual(['own', 'whole', 'kept']);
    expect(screen.getByTestId('details-summary').textContent).toBe(
      "2 new tool results: 1 reduced, 1 sent whole · 1 reduced earlier and kept · this turn's decisions save 11k tokens",
    );
    expect(screen.getByText(/saves 11k tokens in this and every later call/)).toBeTruthy();
    expect(screen.getByText('sent whole', { selector: '.stage' })).toBeTruthy();
    // "kept" and "sent whole" are the glossary's words, explained on hover
    expect(screen.getByText('sent whole', { selector: '.stage' }).getAttribute('title')).toBe(GLOSSARY['sent whole']);
    expect(screen.getAllByText('kept', { selector: '.term' })[0]!.getAttribute('title')).toBe(GLOSSARY.kept);
  });

  it('shows a result sent whole identical on both sides, and highlights the search', async () => {
    const { container } = render(
      <TurnDetails
        detail={detail}
        loadText={loadText}
        loadWhole={loadWhole}
        highlight="needle"
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    fireEvent.click(screen.getByText('call_ls'));
    await waitFor(() => expect(container.querySelectorAll('.pager-text mark')).toHaveLength(2));
    expect(loadWhole).toHaveBeenCalledWith(2, 'call_ls', 0, PAGE_CHARS);
    const [a, b] = [...container.querySelectorAll('.pager-text')].map((p) => p.textContent);
    expect(a).toBe('whole call_ls needle');
    expect(b).toBe(a);
  });

  it('moves between results with the arrow keys, Home and End, and keeps the expanded one given by the App', () => {
    const onExpanded = vi.fn();
    render(
      <TurnDetails
        detail={detail}
        loadText={loadText}
        loadWhole={loadWhole}
        expanded="w:call_ls"
        onExpanded={onExpanded}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    const heads = screen.getAllByRole('button', { expanded: false }).concat(screen.getAllByRole('button', { expanded: true }));
    expect(screen.getByRole('button', { expanded: true }).textContent).toContain('call_ls');
    const first = document.querySelectorAll<HTMLButtonElement>('.result-head')[0]!;
    first.focus();
    fireEvent.keyDown(first, { key: 'ArrowDown' });
    expect(document.activeElement!.textContent).toContain('call_ls');
    fireEvent.keyDown(document.activeElement!, { key: 'End' });
    expect(document.activeElement!.textContent).toContain('call_old');
    fireEvent.keyDown(document.activeElement!, { key: 'Home' });
    expect(document.activeElement!.textContent).toContain('call_new');
    fireEvent.click(document.activeElement!);
    expect(onExpanded).toHaveBeenCalledWith(keyOfReduced(detail.results[0]!));
    expect(heads.length).toBe(3);
  });

  it('says why the results sent whole are not listed when the request was not kept', () => {
    render(
      <TurnDetails
        detail={{ index: 0, results: [], missed: [], wholeUnavailable: 'the request of this turn was not kept' }}
        loadText={loadText}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    expect(screen.getByText('the request of this turn was not kept.')).toBeTruthy();
  });
});

describe('TurnDetails: a file input a clear replaced', () => {
  const cleared = {
    tool: 'Write',
    callId: 'call_w',
    by: 'clear' as const,
    reason:
      "5,200 chars of Write input; the file on disk holds the content; replaced with its call's result by a clear: context at 120,000 tokens over the trigger of 100,000",
    originalChars: 5_200,
    projectedChars: 180,
    originalTokens: 1_300,
    projectedTokens: 45,
    handle: HANDLE2,
    fresh: true,
    source: '/src/writer.py',
  };
  const detail: TurnDetail = {
    index: 7,
    results: [
      {
        tool: 'bash',
        callId: 'call_b',
        stage: 'clear',
        reason: 'context at 120,000 tokens over the trigger of 100,000',
        originalChars: 8_000,
        projectedChars: 200,
        originalTokens: 2_000,
        projectedTokens: 50,
        handle: HANDLE,
        fresh: true,
      },
    ],
    missed: [],
    own: [],
    whole: [],
    inputs: [cleared],
  };
  const loadText = (_h: string, side: string, offset: number): Promise<TextPage> =>
    Promise.resolve({ text: `${side} text`, offset, total: 13 });

  it('lists it under the file inputs of the turn, with its sizes, what replaced it and what it frees', () => {
    const { container } = render(
      <TurnDetails detail={detail} loadText={loadText} onOpen={() => undefined} onCompare={() => undefined} onCopy={() => undefined} />,
    );
    const rows = [...container.querySelectorAll('.results > li')];
    const divider = rows.findIndex((li) => li.textContent?.startsWith('File inputs replaced by a marker in this turn'));
    expect(divider).toBeGreaterThan(0);
    const row = rows[divider + 1]!;
    expect(row.getAttribute('data-kind')).toBe('input');
    expect(row.getAttribute('data-handle')).toBe(HANDLE2);
    expect(row.querySelector('.result-call')!.textContent).toBe('/src/writer.py');
    expect(row.querySelector('.result-sizes')!.textContent).toBe('5,200 → 180 chars · 1.3k → 45 tokens');
    expect(row.querySelector('.stage')!.getAttribute('title')).toContain("Replaced by the clear stage, together with its call's result.");
    expect(row.querySelector('.result-reason')!.textContent).toContain('by a clear: context at 120,000 tokens');
    expect(row.querySelector('.result-saved')!.textContent).toContain('frees 1.3k tokens in every later call');
    // the turn counts it once, as a file input, and its saving with the clear's
    expect(screen.getByTestId('details-summary').textContent).toBe(
      "0 new tool results: 0 reduced, 0 sent whole · 1 earlier result cleared in this turn · 1 file input replaced by a marker · this turn's decisions save 3.2k tokens",
    );
  });

  it('says the file inputs stage replaced one on arrival', () => {
    const { container } = render(
      <TurnDetails
        detail={{ ...detail, results: [], inputs: [{ ...cleared, by: 'arrival', reason: '5,200 chars of Write input' }] }}
        loadText={loadText}
        onOpen={() => undefined}
        onCompare={() => undefined}
        onCopy={() => undefined}
      />,
    );
    const row = container.querySelector('.result[data-kind="input"]')!;
    expect(row.querySelector('.stage')!.getAttribute('title')).toContain('Replaced by the file inputs stage.');
    expect(row.querySelector('.result-saved')!.textContent).toContain('saves 1.3k tokens in this and every later call');
  });
});

describe("CapsPanel: folded, and the dry run's effect", () => {
  const caps: ToolCap[] = [{ tool: 'bash', cap: 8000, explicit: false, reducedTurns: 3 }];
  const base = {
    originalTokens: 1000,
    projectedTokens: 4_800_000,
    cacheStableShare: 1,
    missed: 0,
    cost: { anthropic: { raw: 100, projected: 50, relative: 0.5 } },
  };
  const dry = { ...base, projectedTokens: 4_862_000, cost: { anthropic: { raw: 100, projected: 50.4, relative: 0.504 } } };

  it('says the change in tokens and in the headline cost (with read-backs, against raw), as the header does, in dollars', () => {
    const lens = { costModel: 'anthropic', price: OPUS };
    expect(deltaText(base, dry, lens)).toBe('+62k tokens, +1.3% · cost −50.0% → −49.6% (+$0.0000020)');
    const big = { ...dry, cost: { anthropic: { raw: 100, projected: 50.4, relative: 0.504, readBack: 1_000_000 } } };
    expect(deltaText(base, big, lens)).toMatch(/cost −50\.0% → \+[\d,.]+% \(\+\$5\.00\)$/);
    render(
      <CapsPanel
        caps={caps}
        defaultCap={8000}
        capUnit="chars"
        changes={{ bash: 'unlimited' }}
        base={base}
        dry={dry}
        perTool={{ bash: dry }}
        onChange={() => undefined}
        onSave={() => undefined}
        onRevert={() => undefined}
        saving={false}
        lens={lens}
      />,
    );
    expect(screen.getByTestId('dry-delta').textContent).toBe('dry run: +62k tokens, +1.3% · cost −50.0% → −49.6% (+$0.0000020)');
    expect(screen.getByTestId('cap-effect-bash').textContent).toBe('+62k tokens, +1.3% · cost −50.0% → −49.6% (+$0.0000020)');
  });

  it('keeps Save and Revert in view when folded', () => {
    const onToggle = vi.fn();
    const { container } = render(
      <CapsPanel
        caps={caps}
        defaultCap={8000}
        capUnit="chars"
        changes={{ bash: 4000 }}
        open={false}
        onToggle={onToggle}
        onChange={() => undefined}
        onSave={() => undefined}
        onRevert={() => undefined}
        saving={false}
      />,
    );
    expect(container.querySelector('table')).toBeNull();
    expect((screen.getByLabelText('Save caps to settings') as HTMLButtonElement).disabled).toBe(false);
    expect(screen.getByText('Revert')).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: /Caps per tool/ }));
    expect(onToggle).toHaveBeenCalledWith(true);
  });
});
