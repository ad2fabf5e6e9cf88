/** The sessions the inspector knows: proxy recordings, replayed transcripts and API sessions, newest first. */
import * as React from 'react';
import { DEFAULT_COST_MODEL, formatChange, headline, type SessionInfo } from '../../src/protocol';
import { count, signedPercent } from '../format';

const ORIGIN_LABEL: Record<SessionInfo['origin'], string> = { proxy: 'proxy', replay: 'replay', api: 'API', copilot: 'Copilot' };

/** What a session saved: tokens, and the headline cost (with read-backs, against raw) at its model's price family. */
function Saved(props: { s: SessionInfo }) {
  const { totals, costModel = DEFAULT_COST_MODEL } = props.s;
  if (!totals || totals.originalTokens <= 0) return null;
  const c = totals.cost?.[costModel];
  return (
    <span className="session-saved">
      tokens {signedPercent(totals.projectedTokens - totals.originalTokens, totals.originalTokens)}
      {c && c.raw > 0 && (
        <span title={`input cost under caching with read-backs, against raw history (${costModel} cache prices)`}>
          {' '}
          · cost {formatChange(headline(c).change)}
        </span>
      )}
    </span>
  );
}

export function SessionList(props: { sessions: readonly SessionInfo[]; selected?: string; onSelect: (id: string) => void }) {
  const { sessions, selected, onSelect } = props;
  if (sessions.length === 0) {
    return (
      <nav className="sessions empty" aria-label="Sessions">
        <p>No sessions yet.</p>
        <p>
          Point an agent at the Spillway proxy, project through the extension API, or run <b>Spillway: Open Transcript…</b> or{' '}
          <b>Browse Agent Sessions</b>.
        </p>
      </nav>
    );
  }
  return (
    <nav className="sessions" aria-label="Sessions">
      <ul>
        {sessions.map((s) => (
          <li key={s.id}>
            <button
              type="button"
              className={`session${s.id === selected ? ' selected' : ''}`}
              aria-current={s.id === selected ? 'true' : undefined}
              onClick={() => onSelect(s.id)}
              title={s.detail}
              data-session={s.id}
            >
              <span className="session-title">{s.title}</span>
              <span className="session-meta">
                <span className={`origin origin-${s.origin}`}>{ORIGIN_LABEL[s.origin]}</span>
                {count(s.turns)} turns{s.live ? ' · live' : ''} · {new Date(s.modified).toLocaleString()}
              </span>
              <Saved s={s} />
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
