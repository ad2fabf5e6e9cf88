// @vitest-environment jsdom
import './support';
import { afterEach, describe, expect, it } from 'vitest';
import * as React from 'react';
import { act, cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { App } from '../../webview/App';
import { stubHost, typeInto } from './support';

afterEach(cleanup);

/** Types into a native input (React's own change event). */
function typeText(el: Element, value: string) {
  fireEvent.change(el, { target: { value } });
}

describe('App (the whole inspector against a stubbed acquireVsCodeApi)', () => {
  it('sends ready before anything else and lists the sessions the host sends', async () => {
    const s = stubHost([40, 12]);
    render(<App host={s.host} />);
    expect((s.api.sent[0] as { method: string }).method).toBe('webview/ready');
    await screen.findByRole('button', { name: /^synthetic 40 turns/ });
    expect(screen.getByRole('button', { name: /^synthetic 12 turns/ })).toBeTruthy();
  });

  it('opens a session: totals, chart, caps and the first turn details', async () => {
    const s = stubHost([40]);
    const { container } = render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
    await screen.findByText(/^40 turns$/);
    expect(container.querySelector('[data-testid="chart-original"]')).toBeTruthy();
    // the caps section starts folded, opens on a click and remembers it in the webview state
    expect(container.querySelectorAll('tr[data-tool]').length).toBe(0);
    fireEvent.click(screen.getByRole('button', { name: /Caps per tool/ }));
    expect(container.querySelectorAll('tr[data-tool]').length).toBe(4);
    await waitFor(() => expect((s.api.state as { capsOpen: boolean }).capsOpen).toBe(true));
    // it opens on the turn whose reductions saved the most (turn 1: its 200,000-char output)
    await screen.findByRole('heading', { name: 'Turn 1' });
    expect((s.api.state as { sessionId: string }).sessionId).toBe('replay:synthetic-40');
  });

  it('restores the session and turn it showed before a reload (the panel serializer state)', async () => {
    const s = stubHost([40], { sessionId: 'replay:synthetic-40', turn: 5 });
    render(<App host={s.host} />);
    await screen.findByRole('heading', { name: 'Turn 6' });
  });

  it('filters the timeline by tool', async () => {
    const s = stubHost([40]);
    const { container } = render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
    await screen.findByRole('heading', { name: 'Turn 1' });
    const dropdown = container.querySelector('.toolbar vscode-dropdown')!;
    typeInto(dropdown, 'sql', 'change');
    const count = await screen.findByTestId('filter-count');
    const n = Number(count.textContent!.split(' ')[0]);
    expect(n).toBeGreaterThan(0);
    expect(n).toBeLessThan(40);
    for (const row of container.querySelectorAll('.vrow .turn-tools')) expect(row.textContent).toContain('sql');
  });

  it('filters by tool whether or not its results were reduced, and by reduced with the second filter', async () => {
    const s = stubHost([40]);
    const { container } = render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
    await screen.findByRole('heading', { name: 'Turn 1' });
    // every turn ran `ls`, whose small result was never reduced
    typeInto(container.querySelector('.toolbar vscode-dropdown')!, 'ls', 'change');
    await waitFor(() => expect(screen.getByTestId('filter-count').textContent).toBe('40 of 40 turns'));
    fireEvent.click(screen.getByTestId('reduced-only'));
    await waitFor(() => expect(screen.getByTestId('filter-count').textContent).toBe('0 of 40 turns'));
    typeInto(container.querySelector('.toolbar vscode-dropdown')!, 'sql', 'change');
    await waitFor(() => expect(Number(screen.getByTestId('filter-count').textContent!.split(' ')[0])).toBeGreaterThan(0));
    for (const row of container.querySelectorAll('.vrow .turn-tools')) expect(row.textContent).toContain('sql');
  });

  it('searches the text of the results in the host', async () => {
    const s = stubHost([40]);
    render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
    await screen.findByRole('heading', { name: 'Turn 1' });
    typeText(screen.getByLabelText('Search tool results'), 'output 16:');
    await waitFor(() => expect(screen.getByTestId('filter-count').textContent).toBe('1 of 40 turns'), { timeout: 3000 });
    expect(s.service.handled.get('search/results')).toBeGreaterThan(0);
  });

  it('changing a cap runs a dry run and Save writes the caps', async () => {
    const s = stubHost([40]);
    const { container } = render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
    await screen.findByRole('heading', { name: 'Turn 1' });
    fireEvent.click(screen.getByRole('button', { name: /Caps per tool/ }));
    // each cap field is named by its tool
    typeText(screen.getByLabelText('New cap for bash'), 'unlimited');
    await screen.findByTestId('dry-totals', {}, { timeout: 3000 });
    expect(container.querySelector('[data-testid="chart-dry"]')).toBeTruthy();
    // the change per tool and in total, in tokens and cost
    await waitFor(() =>
      expect(screen.getByTestId('dry-delta').textContent).toMatch(
        /^dry run: \+[\d.]+k tokens, \+[\d.]+% · cost −[\d.]+% → [−+][\d.]+% \(\+\$[\d.]+\)$/,
      ),
    );
    expect(screen.getByTestId('cap-effect-bash').textContent).toMatch(/^\+[\d.]+k tokens/);
    // saving keeps the selected turn
    const timeline = screen.getByRole('listbox', { name: 'Turns' });
    fireEvent.keyDown(timeline, { key: 'ArrowDown' });
    await screen.findByRole('heading', { name: 'Turn 2' });
    fireEvent.click(screen.getByLabelText('Save caps to settings'));
    await waitFor(() => expect(s.calls).toContainEqual({ method: 'saveCaps', args: { bash: 'unlimited' } }));
    await waitFor(() => expect(screen.queryByTestId('dry-delta')).toBeNull());
    expect(screen.getByRole('heading', { name: 'Turn 2' })).toBeTruthy();
    expect(screen.queryByText(/"bash"/)).toBeNull(); // no raw-JSON banner: the host confirms in a notification
  });

  it('appends turns the host reports live', async () => {
    const s = stubHost([10]);
    render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 10 turns/ }));
    await screen.findByText(/^10 turns$/);
    act(() => s.source.append('replay:synthetic-10'));
    await screen.findByText(/^11 turns$/);
  });

  it('shows the missed identifiers of a turn with the stored output that holds them', async () => {
    const s = stubHost([40]);
    render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
    await screen.findByRole('heading', { name: 'Turn 1' });
    const timeline = screen.getByRole('listbox', { name: 'Turns' });
    fireEvent.keyDown(timeline, { key: 'End' });
    // turn 29 (index 28) of the synthetic session has a missed identifier
    for (let i = 0; i < 11; i++) fireEvent.keyDown(timeline, { key: 'ArrowUp' });
    await screen.findByRole('heading', { name: 'Turn 29' });
    const note = await screen.findByRole('note');
    expect(within(note).getByText('src/module_28/handler.ts')).toBeTruthy();
    fireEvent.click(within(note).getByRole('button'));
    await waitFor(() => expect(s.calls.map((c) => c.method)).toContain('openStored'));
  });

  it('opens on the most recent session without being asked, and on the turn that saved the most', async () => {
    const s = stubHost([40, 12]);
    render(<App host={s.host} />);
    // the synthetic 40-turn session is the newer; its first turn carries the 200,000-char output
    await screen.findByRole('heading', { name: 'synthetic 40 turns' });
    await screen.findByRole('heading', { name: 'Turn 1' });
    expect(screen.queryByText('Choose a session.')).toBeNull();
  });

  it("shows no session header over the previous session's timeline while another opens", async () => {
    const s = stubHost([40, 12]);
    const { container } = render(<App host={s.host} />);
    await screen.findByRole('heading', { name: 'synthetic 40 turns' });
    await screen.findByRole('heading', { name: 'Turn 1' });
    // the host answers the next open only when released: the panel is caught between the two sessions
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const receive = s.service.receive.bind(s.service);
    s.service.receive = async (m: unknown) => {
      if ((m as { method?: string }).method === 'session/open') await held;
      return receive(m);
    };
    fireEvent.click(screen.getByRole('button', { name: /^synthetic 12 turns/ }));
    await screen.findByText('Opening the session…');
    expect(screen.queryByRole('heading', { name: 'synthetic 12 turns' })).toBeNull();
    expect(screen.queryByRole('heading', { name: 'synthetic 40 turns' })).toBeNull();
    expect(container.querySelectorAll('.vrow').length).toBe(0);
    expect(screen.queryByRole('heading', { name: /^Turn / })).toBeNull();
    release();
    await screen.findByRole('heading', { name: 'synthetic 12 turns' });
    await screen.findByText(/^12 turns$/);
    await waitFor(() => expect(container.querySelectorAll('.vrow').length).toBeGreaterThan(0));
    expect(container.querySelectorAll('.vrow').length).toBeLessThanOrEqual(12);
  });

  it('filters the timeline to the clears, keeping the details in step with what is listed', async () => {
    const s = stubHost([40]);
    const { container } = render(<App host={s.host} />);
    await screen.findByRole('heading', { name: 'Turn 1' });
    typeInto(container.querySelector('[data-testid="mark-filter"]')!, 'clears', 'change');
    await waitFor(() => expect(screen.getByTestId('filter-count').textContent).toBe('3 of 40 turns'));
    // turn 1 is not a clear: the details follow the first turn listed
    await screen.findByRole('heading', { name: 'Turn 11' });
    expect([...container.querySelectorAll('.vrow [data-turn]')].map((r) => r.getAttribute('data-turn'))).toEqual(['10', '21', '32']);
  });

  it('keeps an expanded result expanded when the tab comes back (the webview state)', async () => {
    const s = stubHost([40]);
    const first = render(<App host={s.host} />);
    await screen.findByRole('heading', { name: 'Turn 1' });
    fireEvent.click(await screen.findByText('call_0_ls'));
    await waitFor(() => expect((s.api.state as { expanded?: string }).expanded).toBe('w:call_0_ls'));
    first.unmount();
    // VS Code tears a hidden webview down and builds it again from its state
    const again = stubHost([40], s.api.state);
    render(<App host={again.host} />);
    await screen.findByRole('heading', { name: 'Turn 1' });
    await waitFor(() => expect(screen.getByRole('button', { expanded: true }).textContent).toContain('call_0_ls'));
  });

  it('leads the header with the cost with read-backs in dollars, the figure before read-backs beside it', async () => {
    const s = stubHost([40]);
    render(<App host={s.host} />);
    const cost = await screen.findByTestId('totals-cost');
    expect(cost.textContent).toMatch(/^Input cost \$[\d.]+ → \$[\d.]+ −[\d.]+% with read-backs \(−[\d.]+% before\)$/);
  });

  it("says when the picker prices a session at another provider's model: the figures are the projection made for its own", async () => {
    const s = stubHost([40]);
    const own = s.source.sessions.get('replay:synthetic-40')!;
    own.info = { ...own.info, model: 'claude-sonnet-4-5', costModel: 'anthropic' };
    const { container } = render(<App host={s.host} />);
    fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
    await screen.findByRole('heading', { name: 'Turn 1' });
    // at the session's own model there is nothing to say
    expect(screen.getByTestId('cost-headline')).toBeTruthy();
    expect(screen.queryByTestId('priced-elsewhere')).toBeNull();
    const picker = container.querySelector('[data-testid="price-model"]')!;
    const gpt = [...picker.querySelectorAll('vscode-option')].map((o) => o.getAttribute('value')!).find((v) => v.startsWith('gpt-5'))!;
    expect(gpt).toBeTruthy();
    typeInto(picker, gpt, 'change');
    const note = await screen.findByTestId('priced-elsewhere');
    expect(note.textContent).toBe(
      `Priced at ${gpt}: the projection made for claude-sonnet-4-5, billed under openai's cache rules. Sent to ${gpt}, Spillway would decide under its prices instead: \`spillway replay --each-route\` measures that.`,
    );
    // back at a model of the session's own provider, the note goes
    const claude = [...picker.querySelectorAll('vscode-option')].map((o) => o.getAttribute('value')!).find((v) => v.startsWith('claude'))!;
    typeInto(picker, claude, 'change');
    await waitFor(() => expect(screen.queryByTestId('priced-elsewhere')).toBeNull());
  });
});
