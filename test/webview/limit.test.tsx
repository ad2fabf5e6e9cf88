// @vitest-environment jsdom
/**
 * The header's "How much is left?" (issue 35 item 1): a replayed session offers it; a click asks the
 * host for `session/limits` and the answer shows the share of the oracle's saving kept, per price
 * model, and the oracle against raw; a failure is one line; a live session does not offer it.
 */
import './support';
import { afterEach, describe, expect, it } from 'vitest';
import * as React from 'react';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import type { SessionLimits } from '../../src/protocol';
import { App } from '../../webview/App';
import { GLOSSARY } from '../../webview/components/Glossary';
import { stubHost } from './support';

afterEach(cleanup);

const LIMITS: SessionLimits = {
  models: {
    anthropic: { raw: 1000, kept: 780, oracle: 490, floor: 400, share: 0.431 },
    openai: { raw: 1000, kept: 750, oracle: 480, floor: 390, share: 0.48 },
  },
  oracleMisses: 0,
};

/** The inspector on one synthetic replayed session whose limits the host answers with `limits`. */
async function opened(limits: () => Promise<SessionLimits>, live = false) {
  const s = stubHost([40]);
  const session = s.source.sessions.get('replay:synthetic-40')!;
  Object.assign(session, { limits });
  if (live) session.info = { ...session.info, live: true };
  render(<App host={s.host} />);
  fireEvent.click(await screen.findByRole('button', { name: /^synthetic 40 turns/ }));
  await screen.findByText(/^40 turns$/);
  return s;
}

describe("the header's limit", () => {
  it('is not measured on open: the header offers it as an action', async () => {
    const s = await opened(async () => LIMITS);
    expect(screen.getByRole('button', { name: 'How much is left?' })).toBeTruthy();
    expect(s.api.sent.some((m) => (m as { method: string }).method === 'session/limits')).toBe(false);
  });

  it("posts session/limits for the session on a click and shows the share of the oracle's saving kept", async () => {
    const s = await opened(async () => LIMITS);
    fireEvent.click(screen.getByRole('button', { name: 'How much is left?' }));
    const limit = await screen.findByText(/^keeps/, { selector: '[data-testid="limit"]' });
    expect(s.api.sent).toContainEqual(
      expect.objectContaining({ kind: 'request', method: 'session/limits', params: { sessionId: 'replay:synthetic-40' } }),
    );
    expect(limit.textContent).toBe("keeps 43% / 48% of the oracle's saving (Anthropic / GPT-5) · oracle 49% / 48% of raw");
    expect(limit.getAttribute('title')).toBe(GLOSSARY.oracle);
    expect(limit.querySelector('[data-term="oracle"]')).toBeTruthy();
  });

  it('shows a failure as one line with the reason, and offers to try again', async () => {
    await opened(async () => {
      throw new Error('cancelled\nat somewhere');
    });
    fireEvent.click(screen.getByRole('button', { name: 'How much is left?' }));
    await waitFor(() => expect(screen.getByTestId('limit').textContent).toMatch(/^could not measure the limit: cancelled Try again$/));
    expect(screen.getByRole('button', { name: 'Try again' })).toBeTruthy();
  });

  it('is not offered for a live session', async () => {
    await opened(async () => LIMITS, true);
    expect(screen.queryByTestId('limit')).toBeNull();
  });
});

describe('the glossary', () => {
  it("defines the oracle and the share of the oracle's saving", () => {
    expect(GLOSSARY.oracle).toMatch(/lines holding what the agent writes later/);
    expect(GLOSSARY["share of the oracle's saving"]).toMatch(/\(raw − cost\) ÷ \(raw − oracle\)/);
  });
});
