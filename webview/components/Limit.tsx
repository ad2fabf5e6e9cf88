/**
 * How much is left to win, for a replayed session: the share of the hindsight oracle's saving the
 * session's settings keep, with read-backs priced (src/replay/limits.ts). Measuring it replays the
 * session three times more on the host, so it is never done on open: the header offers it as an action and
 * shows the answer, or a one-line reason when the host could not measure it.
 */
import * as React from 'react';
import type { SessionLimits } from '../../src/protocol';
import { Spinner } from '../ui';
import { GLOSSARY, Term } from './Glossary';
import { useAsk } from './useAsk';

/** The price models the answer quotes, in this order, and their names (the CLI's table quotes the same two). */
const QUOTED: readonly (readonly [string, string])[] = [
  ['anthropic', 'Anthropic'],
  ['openai', 'GPT-5'],
];

const pct = (x: number) => `${Math.round(x * 100)}%`;

/** "keeps 43% / 48% of the oracle's saving (Anthropic / GPT-5) · oracle 51% / 50% of raw", in parts the header marks up. */
function limitParts(l: SessionLimits): { share: string; models: string; oracle: string } | undefined {
  const quoted = QUOTED.filter(([k]) => l.models[k]);
  const shown = quoted.length ? quoted : Object.keys(l.models).map((k) => [k, k] as const);
  if (!shown.length) return undefined;
  const share = shown.map(([k]) => {
    const s = l.models[k]!.share;
    return s === undefined ? 'n/a' : pct(s);
  });
  const oracle = shown.map(([k]) => {
    const m = l.models[k]!;
    return m.raw > 0 ? pct(m.oracle / m.raw) : '—';
  });
  return { share: share.join(' / '), models: shown.map(([, name]) => name).join(' / '), oracle: oracle.join(' / ') };
}

export function LimitAction(props: { measure: () => Promise<SessionLimits> }) {
  const [state, measure] = useAsk(props.measure);
  const ask = (label: string) => (
    <button
      type="button"
      className="link"
      data-testid="limit-measure"
      onClick={measure}
      title="Replays the session three times more: the oracle, with and without its hindsight clears, and the floor"
    >
      {label}
    </button>
  );
  if (state.kind === 'idle') return <span data-testid="limit">{ask('How much is left?')}</span>;
  if (state.kind === 'pending')
    return (
      <span data-testid="limit" role="status">
        <Spinner aria-label="measuring" /> measuring the limit…
      </span>
    );
  if (state.kind === 'failed')
    return (
      <span data-testid="limit" className="limit-error" title={state.error}>
        could not measure the limit: {state.error} {ask('Try again')}
      </span>
    );
  const parts = limitParts(state.value);
  if (!parts) return <span data-testid="limit">no cost figures to measure the limit against</span>;
  const misses = state.value.oracleMisses;
  return (
    <span data-testid="limit" title={GLOSSARY.oracle}>
      keeps <b>{parts.share}</b> of <Term word="share of the oracle's saving">the oracle's saving</Term> ({parts.models}) ·{' '}
      <Term word="oracle" /> {parts.oracle} of raw
      {misses > 0 && <> (the oracle missed {misses} identifiers)</>}
    </span>
  );
}
