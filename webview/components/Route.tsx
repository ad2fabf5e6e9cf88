/**
 * What a replayed session would have cost sent to the provider the picker prices it at. The header's
 * figures are the projection made for the session's own provider; sent elsewhere, the engine would
 * hold its decisions to that provider's prices (src/replay/routes.ts). Finding out replays the
 * session once more on the host, so it waits to be asked, as the limit does (Limit.tsx).
 */
import * as React from 'react';
import type { RoutedFigures } from '../../src/protocol';
import { count, percent } from '../format';
import { money, type CostLens } from '../cost';
import { Spinner } from '../ui';
import { useAsk } from './useAsk';

/** "as sent to gpt-5: $1.20 with read-backs, 88.8% of raw ($1.35); misses 0.8% (12 of 1,500)" */
export function routedSentence(r: RoutedFigures, lens: CostLens, model: string): string {
  const kept = r.projected + r.readBack;
  const share = r.raw > 0 ? `, ${percent(kept, r.raw)} of raw (${money(r.raw, lens)})` : '';
  const misses =
    r.referencedIds > 0 ? `${percent(r.missedIds, r.referencedIds)} (${count(r.missedIds)} of ${count(r.referencedIds)})` : 'none';
  return `As sent to ${model}: ${money(kept, lens)} with read-backs${share}; misses ${misses}.`;
}

export function RouteAction(props: { lens: CostLens; model: string; measure: () => Promise<RoutedFigures> }) {
  const [state, replay] = useAsk(props.measure);
  const ask = (label: string) => (
    <button
      type="button"
      className="link"
      data-testid="route-replay"
      onClick={replay}
      title={`Replays the session once more on the host, as the proxy would have sent it to ${props.model}`}
    >
      {label}
    </button>
  );
  if (state.kind === 'idle') return <span data-testid="route">{ask(`Replay it as sent to ${props.model}`)}</span>;
  if (state.kind === 'pending')
    return (
      <span data-testid="route" role="status">
        <Spinner aria-label="replaying" /> replaying as sent to {props.model}…
      </span>
    );
  if (state.kind === 'failed')
    return (
      <span data-testid="route" className="limit-error" title={state.error}>
        could not replay it as sent to {props.model}: {state.error} {ask('Try again')}
      </span>
    );
  return <span data-testid="route">{routedSentence(state.value, props.lens, props.model)}</span>;
}
