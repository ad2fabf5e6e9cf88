// @vitest-environment jsdom
/**
 * The header's "Replay it as sent to …": when the picker prices a replayed session at a model of
 * another provider the host can route to (`SessionInfo.routes`), the header offers to replay the
 * session as sent there; a click asks the host for `session/routed` with that price model and the
 * answer says what Spillway would have cost there, with read-backs, and its misses; a failure is one
 * line; a session the host cannot route keeps the CLI's hint and offers nothing.
 */
import './support';
import { afterEach, describe, expect, it } from 'vitest';
import * as React from 'react';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { RoutedFigures } from '../../src/protocol';
import { App } from '../../webview/App';
import { routedSentence } from '../../webview/components/Route';
import { stubHost, typeInto } from './support';

afterEach(cleanup);

const FIGURES: RoutedFigures = {
  costModel: 'openai',
  raw: 2_000_000,
  projected: 1_700_000,
  readBack: 20_000,
  missedIds: 12,
  referencedIds: 1500,
};

/** The inspector on one synthetic replayed session (a Claude model) that can be routed to `routes`, priced at GPT-5. */
async function pricedAtGpt5(routed: (costModel: string) => Promise<RoutedFigures>, routes: string[] | null = ['openai', 'openai-4o']) {
  const s = stubHost([40]);
  const session = s.source.sessions.get('replay:synthetic-40')!;
  Object.assign(session, { routed });
  session.info = { ...session.info, model: 'claude-sonnet-4-5', costModel: 'anthropic', ...(routes ? { routes } : {}) };
  const { container } = render(<App host={s.host} />);
  fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
  await screen.findByRole('heading', { name: 'Turn 1' });
  const picker = container.querySelector('[data-testid="price-model"]')!;
  const gpt = [...picker.querySelectorAll('vscode-option')].map((o) => o.getAttribute('value')!).find((v) => v.startsWith('gpt-5'))!;
  typeInto(picker, gpt, 'change');
  await screen.findByTestId('priced-elsewhere');
  return { s, gpt };
}

describe("the header's replay as sent elsewhere", () => {
  it('is offered, not run, when the picker prices the session at a provider the host can route to', async () => {
    const { s, gpt } = await pricedAtGpt5(async () => FIGURES);
    const note = screen.getByTestId('priced-elsewhere');
    expect(note.textContent).toBe(
      `Priced at ${gpt}: the projection made for claude-sonnet-4-5, billed under openai's cache rules. Sent to ${gpt}, Spillway would decide under its prices instead. Replay it as sent to ${gpt}`,
    );
    expect(s.api.sent.some((m) => (m as { method: string }).method === 'session/routed')).toBe(false);
  });

  it('posts session/routed with the price model on a click and says what it would have cost there', async () => {
    const asked: string[] = [];
    const { s, gpt } = await pricedAtGpt5(async (costModel) => {
      asked.push(costModel);
      return FIGURES;
    });
    fireEvent.click(screen.getByRole('button', { name: `Replay it as sent to ${gpt}` }));
    const route = await screen.findByText(/^As sent to/, { selector: '[data-testid="route"]' });
    expect(s.api.sent).toContainEqual(
      expect.objectContaining({
        kind: 'request',
        method: 'session/routed',
        params: { sessionId: 'replay:synthetic-40', costModel: 'openai' },
      }),
    );
    expect(asked).toEqual(['openai']);
    // 1,720,000 of 2,000,000 units with read-backs: 86.0% of raw; 12 of 1,500 identifiers missed
    expect(route.textContent).toMatch(
      new RegExp(`^As sent to ${gpt}: \\$[\\d.,]+ with read-backs, 86\\.0% of raw \\(\\$[\\d.,]+\\); misses 0\\.8% \\(12 of 1,500\\)\\.$`),
    );
  });

  it('shows a failure as one line with the reason, and offers to try again', async () => {
    const { gpt } = await pricedAtGpt5(async () => {
      throw new Error('cancelled\nat somewhere');
    });
    fireEvent.click(screen.getByRole('button', { name: `Replay it as sent to ${gpt}` }));
    await waitFor(() => expect(screen.getByTestId('route').textContent).toBe(`could not replay it as sent to ${gpt}: cancelled Try again`));
    expect(screen.getByRole('button', { name: 'Try again' })).toBeTruthy();
  });

  it('is not offered when the host cannot route the session there: the CLI hint stays', async () => {
    const { gpt } = await pricedAtGpt5(async () => FIGURES, null);
    expect(screen.queryByTestId('route')).toBeNull();
    expect(screen.getByTestId('priced-elsewhere').textContent).toMatch(
      new RegExp(`Sent to ${gpt}, Spillway would decide under its prices instead: \`spillway replay --each-route\` measures that\\.$`),
    );
  });
});

describe('the sentence', () => {
  it('gives units without a price, and says none when nothing was referenced', () => {
    expect(routedSentence({ ...FIGURES, missedIds: 0, referencedIds: 0 }, { costModel: 'openai' }, 'gpt-5')).toBe(
      'As sent to gpt-5: 1.7M units with read-backs, 86.0% of raw (2.0M units); misses none.',
    );
  });
});
