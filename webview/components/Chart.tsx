/**
 * The session at a glance, in one of two measures: the context size of each call (tokens the agent
 * sent against tokens Spillway sent) or the cumulative input cost under prompt caching (raw history
 * against the projection, Anthropic's prices, the read-backs added when replay reports them). Cache-
 * stable calls are ticked along the bottom; clears, turns with missed identifiers and the largest
 * savings are marked, and a click selects the turn under the pointer. A dry run draws its line dashed.
 * Long sessions are bucketed to at most MAX_POINTS columns, so 10,000 calls draw as fast as 500.
 *
 * The marks have a text equivalent below the chart: buttons naming each marked turn, reachable by
 * keyboard (the chart itself is a picture for a screen reader, with a title and a description saying
 * what it shows and its axes). The axes are labelled (turns along the bottom, tokens or dollars up the
 * side), and the pointer shows the values of the turn under it.
 */
import * as React from 'react';
import type { TurnSummary } from '../../src/protocol';
import { compact, count } from '../format';
import { MARK_LABEL, type MarkKind, type Marks } from '../marks';
import { money, turnHeadline, type CostLens } from '../cost';
import { Segmented } from '../ui';

const MAX_POINTS = 600;
const W = 1000;
const H = 140;
const PAD_TOP = 12;
const MARK_H = 6;

export type ChartMode = 'tokens' | 'cost';

interface Series {
  original: number[];
  projected: number[];
  dry?: number[];
  stable: boolean[];
  /** first turn index of each column */
  start: number[];
}

/** The measure per turn: context size, or cumulative cost (with read-backs when known). */
export function measure(
  turns: readonly TurnSummary[],
  mode: ChartMode,
  costModel = 'anthropic',
): { original: number[]; projected: number[] } {
  if (mode === 'tokens') return { original: turns.map((t) => t.originalTokens), projected: turns.map((t) => t.projectedTokens) };
  const original: number[] = [];
  const projected: number[] = [];
  let o = 0;
  let p = 0;
  for (const t of turns) {
    const h = turnHeadline(t, costModel);
    o += h?.raw ?? 0;
    p += h?.withReadBacks ?? 0;
    original.push(o);
    projected.push(p);
  }
  return { original, projected };
}

function bucket(turns: readonly TurnSummary[], dry: readonly TurnSummary[] | undefined, mode: ChartMode, costModel: string): Series {
  const n = turns.length;
  const cols = Math.min(n, MAX_POINTS);
  const m = measure(turns, mode, costModel);
  const md = dry ? measure(dry, mode, costModel) : undefined;
  const s: Series = { original: [], projected: [], stable: [], start: [], ...(dry ? { dry: [] } : {}) };
  for (let c = 0; c < cols; c++) {
    const a = Math.floor((c * n) / cols);
    const b = Math.max(a + 1, Math.floor(((c + 1) * n) / cols));
    let o = 0,
      p = 0,
      d = 0,
      st = true;
    for (let i = a; i < b; i++) {
      o = Math.max(o, m.original[i] ?? 0);
      p = Math.max(p, m.projected[i] ?? 0);
      if (md) d = Math.max(d, md.projected[i] ?? 0);
      if (i > 0 && !turns[i]!.cacheStable) st = false;
    }
    s.original.push(o);
    s.projected.push(p);
    s.dry?.push(d);
    s.stable.push(st && a > 0);
    s.start.push(a);
  }
  return s;
}

export interface ChartProps {
  turns: readonly TurnSummary[];
  dry?: readonly TurnSummary[];
  selected: number;
  onSelect: (turn: number) => void;
  mode?: ChartMode;
  onMode?: (mode: ChartMode) => void;
  marks?: Marks;
  /** how cost is priced (default: Anthropic's cost record, no dollar price) */
  lens?: CostLens;
}

const DEFAULT_LENS: CostLens = { costModel: 'anthropic' };

const MARK_KINDS: MarkKind[] = ['clears', 'missed', 'savings'];

/** One legend entry: its swatch and its word, wrapping together. */
function Key(props: { kind: string; children: React.ReactNode }) {
  return (
    <span className="legend-entry">
      <span className={`key key-${props.kind}`} /> {props.children}
    </span>
  );
}

export function Chart(props: ChartProps) {
  const { turns, dry, selected, onSelect, marks } = props;
  const lens = props.lens ?? DEFAULT_LENS;
  const hasCost = turns.some((t) => t?.cost?.[lens.costModel]);
  const mode: ChartMode = props.mode === 'cost' && hasCost ? 'cost' : 'tokens';
  const s = React.useMemo(() => bucket(turns, dry, mode, lens.costModel), [turns, dry, mode, lens.costModel]);
  const cols = s.original.length;
  const max = Math.max(1, ...s.original, ...s.projected, ...(s.dry ?? []));
  const x = (c: number) => (cols <= 1 ? W / 2 : (c / (cols - 1)) * W);
  const y = (v: number) => PAD_TOP + (1 - v / max) * (H - PAD_TOP - MARK_H - 4);
  const line = (vals: number[]) => vals.map((v, c) => `${c === 0 ? 'M' : 'L'}${x(c).toFixed(1)},${y(v).toFixed(1)}`).join('');
  const area = (vals: number[]) => `${line(vals)}L${x(cols - 1).toFixed(1)},${y(0)}L${x(0).toFixed(1)},${y(0)}Z`;
  const stableMarks = s.stable.map((st, c) => (st ? `M${x(c).toFixed(1)},${H - MARK_H}v${MARK_H}` : '')).join('');
  const colOf = (turn: number) => (turns.length ? Math.min(cols - 1, Math.floor((turn * cols) / turns.length)) : -1);
  const selCol = colOf(selected);
  const stableCount = turns.filter((t, i) => i > 0 && t.cacheStable).length;
  const maxText = mode === 'tokens' ? `${compact(max)} tokens` : money(max, lens);
  const markPath = (kind: MarkKind) =>
    (marks?.[kind] ?? [])
      .map((i) => {
        const cx = x(colOf(i)).toFixed(1);
        if (kind === 'clears') return `M${cx},1l-5,8h10z`;
        if (kind === 'missed') return `M${cx},${PAD_TOP}v${H - PAD_TOP - MARK_H - 4}`;
        return '';
      })
      .join('');
  // the top savings are drawn in an overlay without the plot's stretch, so they stay circles at any width
  const savingDots = (marks?.savings ?? []).map((i) => ({
    turn: i,
    cx: `${((x(colOf(i)) / W) * 100).toFixed(2)}%`,
    cy: `${((y(s.projected[colOf(i)] ?? 0) / H) * 100).toFixed(2)}%`,
  }));

  const columnAt = (e: React.MouseEvent<SVGSVGElement>): number | undefined => {
    const box = e.currentTarget.getBoundingClientRect();
    if (!box.width || cols === 0) return undefined;
    const c = Math.round(((e.clientX - box.left) / box.width) * (cols - 1));
    return Math.max(0, Math.min(cols - 1, c));
  };
  const onClick = (e: React.MouseEvent<SVGSVGElement>) => {
    const c = columnAt(e);
    if (c !== undefined) onSelect(s.start[c] ?? 0);
  };
  const [hover, setHover] = React.useState<number>();
  const hoverCol = hover !== undefined && hover < cols ? hover : undefined;
  const value = (v: number) => (mode === 'tokens' ? `${compact(v)} tokens` : money(v, lens));
  const hoverText = (c: number): string => {
    const first = s.start[c] ?? 0;
    const last = (s.start[c + 1] ?? turns.length) - 1;
    const which = last > first ? `Turns ${first + 1}–${last + 1} (largest)` : `Turn ${first + 1}`;
    const dryPart = s.dry ? ` · dry run ${value(s.dry[c] ?? 0)}` : '';
    return mode === 'tokens'
      ? `${which}: original ${value(s.original[c] ?? 0)} · projected ${value(s.projected[c] ?? 0)}${dryPart}`
      : `${which}: cumulative cost raw ${value(s.original[c] ?? 0)} · projected ${value(s.projected[c] ?? 0)}${dryPart}`;
  };

  const yName = mode === 'tokens' ? 'tokens per call' : 'cumulative cost';
  const description = `Horizontal axis: turns 1 to ${turns.length}. Vertical axis: ${yName}, from ${mode === 'tokens' ? '0' : money(0, lens)} to ${maxText}.`;
  const title =
    mode === 'tokens'
      ? `Tokens per call over ${turns.length} calls, up to ${compact(max)}; ${stableCount} cache-stable calls marked`
      : `Cumulative input cost under caching with read-backs over ${turns.length} calls${lens.price ? ` at ${lens.price.model}'s price` : ''}, up to ${maxText}`;

  return (
    <figure className="chart" aria-label={mode === 'tokens' ? 'Tokens sent per call' : 'Cumulative input cost'}>
      <div className="chart-bar">
        {hasCost && props.onMode && (
          <Segmented
            label="Chart measure"
            data-testid="chart-mode"
            value={mode}
            options={[
              { value: 'tokens', label: 'Context size' },
              { value: 'cost', label: 'Cumulative cost' },
            ]}
            onChange={props.onMode}
          />
        )}
        <span className="legend">
          <Key kind="original">original</Key>
          <Key kind="projected">projected</Key>
          {dry && <Key kind="dry">dry run</Key>}
          <Key kind="stable">cache-stable ({count(stableCount)})</Key>
          {marks && (
            <>
              <Key kind="clear">clear</Key>
              <Key kind="missed">missed</Key>
              <Key kind="saving">top saving</Key>
            </>
          )}
          <span className="legend-max legend-entry">max {maxText}</span>
        </span>
      </div>
      <div className="chart-plot">
        <span className="chart-y" aria-hidden="true">
          <span>{mode === 'tokens' ? compact(max) : maxText}</span>
          <span>{mode === 'tokens' ? compact(max / 2) : money(max / 2, lens)}</span>
          <span>{mode === 'tokens' ? '0' : money(0, lens)}</span>
        </span>
        <div className="chart-area">
          <svg
            viewBox={`0 0 ${W} ${H}`}
            preserveAspectRatio="none"
            role="img"
            aria-labelledby="chart-title"
            aria-describedby={hoverCol !== undefined ? 'chart-desc chart-hover' : 'chart-desc'}
            onClick={onClick}
            onMouseMove={(e) => setHover(columnAt(e))}
            onMouseLeave={() => setHover(undefined)}
            data-testid="chart"
            data-mode={mode}
          >
            <title id="chart-title">{title}</title>
            <desc id="chart-desc">{description}</desc>
            {cols > 0 && (
              <>
                <path className="chart-original-area" d={area(s.original)} />
                <path className="chart-original" d={line(s.original)} data-testid="chart-original" />
                <path className="chart-projected-area" d={area(s.projected)} />
                <path className="chart-projected" d={line(s.projected)} data-testid="chart-projected" />
                {s.dry && <path className="chart-dry" d={line(s.dry)} data-testid="chart-dry" />}
                <path className="chart-stable" d={stableMarks} data-testid="chart-stable" />
                {marks && <path className="chart-mark-missed" d={markPath('missed')} data-testid="chart-mark-missed" />}
                {marks && <path className="chart-mark-clear" d={markPath('clears')} data-testid="chart-mark-clears" />}
                {selCol >= 0 && <line className="chart-cursor" x1={x(selCol)} x2={x(selCol)} y1={0} y2={H} />}
                {hoverCol !== undefined && <line className="chart-hover" x1={x(hoverCol)} x2={x(hoverCol)} y1={0} y2={H} />}
              </>
            )}
          </svg>
          {marks && cols > 0 && (
            <svg className="chart-overlay" aria-hidden="true" data-testid="chart-mark-savings">
              {savingDots.map((d) => (
                <circle key={d.turn} className="chart-mark-saving" cx={d.cx} cy={d.cy} r={4} />
              ))}
            </svg>
          )}
          {hoverCol !== undefined && (
            <span
              id="chart-hover"
              role="tooltip"
              data-testid="chart-hover"
              className={`chart-tooltip${x(hoverCol) > W / 2 ? ' left' : ''}`}
              style={{ left: `${(x(hoverCol) / W) * 100}%` }}
            >
              {hoverText(hoverCol)}
            </span>
          )}
        </div>
        <span className="chart-x" aria-hidden="true" data-testid="chart-x">
          <span>turn 1</span>
          <span>turns</span>
          <span>turn {turns.length}</span>
        </span>
      </div>
      {marks && (
        <nav className="chart-marks" aria-label="Marked turns">
          {MARK_KINDS.map((k) =>
            marks[k].length === 0 ? null : (
              <span key={k} className={`marks-group marks-${k}`} data-testid={`marks-${k}`}>
                <span className="marks-label">{MARK_LABEL[k]}:</span>
                {marks[k].slice(0, 12).map((i) => (
                  <button
                    type="button"
                    key={i}
                    className={`mark-link${i === selected ? ' current' : ''}`}
                    aria-label={`${MARK_LABEL[k]}: turn ${i + 1}`}
                    aria-current={i === selected ? 'true' : undefined}
                    onClick={() => onSelect(i)}
                  >
                    #{i + 1}
                  </button>
                ))}
                {marks[k].length > 12 && <span className="muted">+{marks[k].length - 12}</span>}
              </span>
            ),
          )}
        </nav>
      )}
    </figure>
  );
}
