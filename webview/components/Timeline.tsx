/**
 * The turns of a session, one row each: a bar of original against projected tokens, the figures,
 * the cumulative saving up to that turn, what was reduced, and marks for cache-stable turns and for
 * turns where the agent named something the projection had hidden. Windowed (VirtualList).
 */
import * as React from 'react';
import type { SearchMatch, TurnSummary } from '../../src/protocol';
import { formatChange } from '../../src/protocol';
import { compact, count } from '../format';
import { money, turnHeadline, type CostLens } from '../cost';
import { VirtualList } from './VirtualList';
import { Snippet } from './Snippet';

const ROW_HEIGHT = 44;

export interface TimelineProps {
  turns: readonly TurnSummary[];
  /** indexes of the turns shown (filter and search applied) */
  visible: readonly number[];
  /** cumulative saving per turn index */
  cumulative: readonly number[];
  /** dry-run figures by turn index, when caps were changed */
  dry?: readonly TurnSummary[];
  selected: number;
  onSelect: (turn: number) => void;
  /** a turn clicked or chosen with Enter (the arrows only select) */
  onActivate?: (turn: number) => void;
  /** how cost is priced (default: Anthropic's cost record, no dollar price) */
  lens?: CostLens;
  /** where a search found its text, by turn: a matching row shows the snippet instead of its marks */
  matches?: ReadonlyMap<number, readonly SearchMatch[]>;
}

const DEFAULT_LENS: CostLens = { costModel: 'anthropic' };

/** The turn's headline cost (with read-backs, against raw history with caching), as in the header. */
function TurnCost(props: { t: TurnSummary; lens: CostLens }) {
  const { t, lens } = props;
  if (t.error)
    return (
      <span className="turn-cost turn-error" title={t.error}>
        failed
      </span>
    );
  const h = turnHeadline(t, lens.costModel);
  if (!h) return <span className="turn-cost muted">—</span>;
  const title = `input cost under caching with read-backs: ${money(h.raw, lens)} raw → ${money(h.withReadBacks, lens)}${h.withReadBacks > h.withoutReadBacks ? ` (${money(h.withReadBacks - h.withoutReadBacks, lens)} of it read-backs)` : ''}; ${formatChange(h.changeWithout)} before read-backs`;
  return (
    <span className="turn-cost" title={title}>
      cost {formatChange(h.change)}
    </span>
  );
}

export function Timeline(props: TimelineProps) {
  const { turns, visible, cumulative, dry, selected, onSelect } = props;
  const lens = props.lens ?? DEFAULT_LENS;
  const max = React.useMemo(() => turns.reduce((m, t) => Math.max(m, t.originalTokens), 1), [turns]);
  const active = visible.indexOf(selected);
  return (
    <VirtualList
      className="timeline"
      idPrefix="turn"
      label="Turns"
      count={visible.length}
      rowHeight={ROW_HEIGHT}
      active={active}
      onActive={(i) => onSelect(visible[i]!)}
      onActivate={(i) => (props.onActivate ?? onSelect)(visible[i]!)}
      renderRow={(i) => {
        const saved = turns[visible[i]!]!;
        const d = dry?.[saved.index];
        // in a dry run everything on the row is the dry run's (its reductions, clears, cache, misses); the original is the same
        const t = d ?? saved;
        const projected = t.projectedTokens;
        return (
          <div className={`turn${d ? ' dry' : ''}`} data-turn={t.index}>
            <span className="turn-index">#{t.index + 1}</span>
            <span className="bar" aria-hidden="true">
              <span className="bar-original" style={{ width: `${(t.originalTokens / max) * 100}%` }} />
              <span className={`bar-projected${d ? ' dry' : ''}`} style={{ width: `${(projected / max) * 100}%` }} />
            </span>
            <span className="turn-figures">
              <span title={`${count(t.originalTokens)} tokens sent by the agent`}>{compact(t.originalTokens)}</span>
              {' → '}
              <span title={`${count(projected)} tokens sent by Spillway${d ? ' under the new caps' : ''}`} className={d ? 'dry-text' : ''}>
                {compact(projected)}
              </span>
            </span>
            <span className="turn-saved" title="tokens saved so far in this session">
              saved {compact(cumulative[t.index] ?? 0)}
            </span>
            <TurnCost t={t} lens={lens} />
            {props.matches?.get(t.index)?.[0] ? (
              <span className="turn-marks">
                <Snippet match={props.matches.get(t.index)![0]!} withTool className="turn-snippet" />
              </span>
            ) : (
              <span className="turn-marks">
                {(t.clears ?? 0) > 0 && (
                  <span
                    className="mark mark-clear"
                    title={`${t.clears} result${t.clears === 1 ? '' : 's'} cleared in this turn${d ? ' in the dry run' : ''}: the cached prefix is rewritten from the first of them`}
                  >
                    ✂ {t.clears} cleared
                  </span>
                )}
                {(t.inputs ?? 0) > 0 && (
                  <span
                    className="mark mark-inputs"
                    title={`${t.inputs} file input${t.inputs === 1 ? '' : 's'} (what the agent wrote to a file) replaced by a marker with a handle in this turn`}
                  >
                    ✎ {t.inputs} input{t.inputs === 1 ? '' : 's'}
                  </span>
                )}
                {t.reductions > 0 && (
                  <span
                    className="mark mark-reduced"
                    title={`${t.reductions} tool result${t.reductions === 1 ? '' : 's'} reduced${d ? ' in the dry run' : ''}`}
                  >
                    {t.reductions} reduced
                  </span>
                )}
                {t.tools.length > 0 && <span className="turn-tools">{t.tools.join(', ')}</span>}
                {t.providerCachedTokens !== undefined && (
                  <span
                    className="mark mark-provider"
                    title={`the provider reported ${count(t.providerCachedTokens)} prompt tokens served from its cache`}
                  >
                    cached {compact(t.providerCachedTokens)}
                  </span>
                )}
                {t.cacheStable && (
                  <span
                    className="mark mark-stable"
                    title="the previous projection is a prefix of this one: the prompt cache keeps hitting"
                  >
                    cache ✓
                  </span>
                )}
                {t.missed > 0 && (
                  <span className="mark mark-missed" title="identifiers the agent wrote next that this projection had hidden">
                    ⚠ {t.missed} missed
                  </span>
                )}
                {t.error && (
                  <span className="mark mark-error" role="img" aria-label={`failed: ${t.error}`} title={t.error}>
                    ✖ error
                  </span>
                )}
                {t.note && (
                  <span className="mark mark-note" title={t.note}>
                    unchanged
                  </span>
                )}
              </span>
            )}
          </div>
        );
      }}
    />
  );
}
