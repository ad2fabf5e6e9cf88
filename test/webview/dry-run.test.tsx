// @vitest-environment jsdom
/**
 * The dry run explains itself (issue 28, item 5): which clear moved, from which turn to which, why,
 * and where the tokens went; Save is not the highlighted action for a change that costs more, and says
 * what it costs; a bad cap value keeps the table's layout, says why in place and blocks Save.
 */
import { stubHost } from './support';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as React from 'react';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { totalsOf, type ClearSettings, type ToolCap, type TurnSummary } from '../../src/protocol';
import { explainClearMove, explainDryRun } from '../../webview/dryRun';
import { CapsPanel } from '../../webview/components/CapsPanel';
import { App } from '../../webview/App';

afterEach(cleanup);

/** The toolkit button's appearance (a property of the web component; the browser reflects it as an attribute). */
const appearance = (el: HTMLElement) => (el as HTMLElement & { appearance?: string }).appearance;

const PAYBACK: ClearSettings = { enabled: true, triggerTokens: 15_000, schedule: 'payback' };
const OPUS = { model: 'claude-opus-4-5', family: 'anthropic', inputPerMTok: 5, source: 'https://www.anthropic.com/pricing#api' };

/** Turns of the given projected sizes (a ✂ after a size: a clear fired there), priced one unit a token. */
function session(sizes: (number | `${number}✂`)[]): TurnSummary[] {
  return sizes.map((v, index) => {
    const projected = Number(String(v).replace('✂', ''));
    return {
      index,
      originalTokens: 20_000,
      projectedTokens: projected,
      cacheStable: true,
      reductions: 0,
      tools: [],
      missed: 0,
      ...(String(v).endsWith('✂') ? { clears: 3 } : {}),
      cost: { anthropic: { raw: 20_000, projected } },
    };
  });
}

// the settings clear at turn 5; under a lower cap the request grows more slowly: it passes the
// trigger (15k) at turn 6 and the clear fires at turn 8
const base = session([1000, 5000, 12000, 19000, '9000✂', 10000, 11000, 12000, 13000, 14000]);
const lower = session([1000, 4500, 11000, 14000, 14500, 16000, 17000, '11000✂', 12000, 13000]);

describe('which clear moved, and why', () => {
  it('says the first clear moved later, that the request stayed under the trigger until a turn, and the payback rule from there', () => {
    expect(explainClearMove(base, lower, PAYBACK)).toBe(
      'The first clear moves from turn 5 to turn 8: the request stays under the clear trigger (15k tokens) until turn 6, and from there ' +
        'a clear waits until it frees enough to pay back its cache rewrite (the payback rule). Until it fires, the old results it would ' +
        'have cleared are sent again: +18k tokens in turns 5–7, −9.5k in the others.',
    );
  });

  it('says when the request never left the trigger but less could be cleared', () => {
    const over = session([1000, 5000, 12000, 19000, 20000, 21000, '9000✂', 10000, 11000, 12000]);
    expect(explainClearMove(base, over, PAYBACK)).toMatch(
      /^The first clear moves from turn 5 to turn 7: the request passes the clear trigger \(15k tokens\) at turn 5 as before, but less of it can be cleared, and a clear waits until it frees enough to pay back its cache rewrite \(the payback rule\)\./,
    );
  });

  it('says when the request stays under the trigger until the clear, and when a clear no longer fires at all', () => {
    const under = session([1000, 5000, 12000, 13000, 14000, 14500, '9000✂', 10000, 11000, 12000]);
    expect(explainClearMove(base, under, PAYBACK)).toMatch(
      /^The first clear moves from turn 5 to turn 7: the request stays under the clear trigger \(15k tokens\) until then\./,
    );
    const never = session([1000, 5000, 12000, 13000, 14000, 14500, 14000, 14000, 14000, 14000]);
    expect(explainClearMove(base, never, PAYBACK)).toMatch(
      /^The clear at turn 5 no longer fires: the request never passes the clear trigger \(15k tokens\)\. The old results stay: /,
    );
  });

  it('says when a clear comes sooner, with every clear listed when there are several', () => {
    const sooner = session([1000, 5000, 16000, '8000✂', 9000, 10000, 11000, 12000, '8000✂', 9000]);
    expect(explainClearMove(base, sooner, PAYBACK)).toBe(
      'The first clear moves from turn 5 to turn 4: the request passes the clear trigger (15k tokens) sooner. Clearing earlier: −11k ' +
        'tokens in turn 4, −6.0k in the others (clears: turn 5 before, turns 4, 9 now).',
    );
  });

  it('says nothing when the clears stay where they were', () => {
    expect(explainClearMove(base, session([1000, 4000, 11000, 18000, '9000✂', 10000, 11000, 12000, 13000, 14000]), PAYBACK)).toBe(
      undefined,
    );
  });
});

describe('a dry run whose effect runs against the change', () => {
  const caps: ToolCap[] = [{ tool: 'Read', cap: 8000, explicit: false, reducedTurns: 3 }];
  it('leads with "costs more, not less" when a lower cap costs more, then the clear that moved', () => {
    const text = explainDryRun({
      base,
      dry: lower,
      baseTotals: totalsOf(base),
      dryTotals: totalsOf(lower),
      clear: PAYBACK,
      changes: { Read: 4000 },
      caps,
      defaultCap: 8000,
      costModel: 'anthropic',
    });
    expect(text).toMatch(/^Lowering Read's cap costs more, not less\. The first clear moves from turn 5 to turn 8: /);
  });

  it('says nothing when a lower cap saves and no clear moved', () => {
    const cheaper = session([1000, 4000, 11000, 18000, '9000✂', 9000, 10000, 11000, 12000, 13000]);
    expect(
      explainDryRun({
        base,
        dry: cheaper,
        baseTotals: totalsOf(base),
        dryTotals: totalsOf(cheaper),
        clear: PAYBACK,
        changes: { Read: 4000 },
        caps,
        defaultCap: 8000,
        costModel: 'anthropic',
      }),
    ).toBe(undefined);
  });
});

describe('Save for a change that costs more', () => {
  const caps: ToolCap[] = [
    { tool: 'Read', cap: 8000, explicit: false, reducedTurns: 3 },
    { tool: 'mcp__github__search_code_in_repository', cap: 8000, explicit: false, reducedTurns: 1 },
  ];
  const panel = (over: Partial<React.ComponentProps<typeof CapsPanel>> = {}) => (
    <CapsPanel
      caps={caps}
      defaultCap={8000}
      capUnit="chars"
      changes={{ Read: 4000 }}
      base={totalsOf(base)}
      dry={totalsOf(lower)}
      onChange={() => undefined}
      onSave={() => undefined}
      onRevert={() => undefined}
      saving={false}
      lens={{ costModel: 'anthropic', price: OPUS }}
      {...over}
    />
  );

  it('turns Save secondary with the cost stated, Revert primary, and shows the explanation', () => {
    render(panel({ explain: 'Lowering Read’s cap costs more, not less.' }));
    const save = screen.getByLabelText('Save caps to settings');
    // 8,000 tokens more at one unit a token, at $5 per million: $0.040
    expect(save.textContent).toBe('Save anyway… (costs $0.040 more)');
    expect(appearance(save)).toBe('secondary');
    expect(appearance(screen.getByTestId('caps-revert'))).toBe('primary');
    expect(screen.getByTestId('dry-explain').textContent).toBe('Lowering Read’s cap costs more, not less.');
  });

  it('keeps Save primary for a change that costs less', () => {
    render(panel({ base: totalsOf(lower), dry: totalsOf(base) }));
    const save = screen.getByLabelText('Save caps to settings');
    expect(save.textContent).toBe('Save…');
    expect(appearance(save)).toBe('primary');
  });

  it('blocks Save while a cap is not valid, says which in place, and Revert starts the row again', () => {
    const onChange = vi.fn();
    const { container } = render(panel({ onChange }));
    const field = screen.getByLabelText('New cap for mcp__github__search_code_in_repository');
    fireEvent.change(field, { target: { value: '12kk' } });
    expect(onChange).toHaveBeenLastCalledWith('mcp__github__search_code_in_repository', undefined);
    expect((screen.getByLabelText('Save caps to settings') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('caps-blocked').textContent).toBe('fix the cap for mcp__github__search_code_in_repository to save');
    // the error is in the row's effect cell: the table keeps its fixed columns, the tool's name whole
    const row = container.querySelector('tr[data-tool="mcp__github__search_code_in_repository"]')!;
    expect(row.querySelector('.cap-effect [role="alert"]')!.textContent).toMatch(/^not a cap/);
    expect(row.querySelector('th')!.getAttribute('title')).toBe('mcp__github__search_code_in_repository');
    expect(container.querySelectorAll('colgroup col')).toHaveLength(5);
    fireEvent.click(screen.getByTestId('caps-revert'));
    expect((screen.getByLabelText('New cap for mcp__github__search_code_in_repository') as HTMLInputElement).value).toBe('');
    expect(screen.queryByTestId('caps-blocked')).toBeNull();
  });
});

describe('after a save', () => {
  it('asks for the open turn again, so its reasons follow the caps now in force', async () => {
    const s = stubHost([40]);
    render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
    await screen.findByRole('heading', { name: 'Turn 1' });
    fireEvent.click(screen.getByRole('button', { name: /Caps per tool/ }));
    fireEvent.change(screen.getByLabelText('New cap for bash'), { target: { value: 'unlimited' } });
    await screen.findByTestId('dry-totals', {}, { timeout: 3000 });
    const asked = s.service.handled.get('turn/detail') ?? 0;
    fireEvent.click(screen.getByLabelText('Save caps to settings'));
    await waitFor(() => expect(s.calls).toContainEqual({ method: 'saveCaps', args: { bash: 'unlimited' } }));
    // the same turn, its details asked for again (they said "over bash's cap of 8,000" under the old caps)
    await waitFor(() => expect(s.service.handled.get('turn/detail')).toBeGreaterThan(asked));
    expect(screen.getByRole('heading', { name: 'Turn 1' })).toBeTruthy();
    s.host.dispose();
  });
});
