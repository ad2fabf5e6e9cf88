/**
 * The session at a glance: tokens sent per call, original (what the agent sent) against projected
 * (what Spillway sent), with cache-stable calls marked along the bottom and, during a dry run, the
 * projected line under the new caps dashed. Drawn as one SVG; long sessions are bucketed to at most
 * MAX_POINTS columns (each the bucket's largest call) so 10,000 calls draw as fast as 500.
 */
import * as React from 'react';
import type { TurnSummary } from '../../src/protocol';
import { compact } from '../format';

const MAX_POINTS = 600;
const W = 1000;
const H = 140;
const PAD_TOP = 8;
const MARK_H = 6;

interface Series {
  original: number[];
  projected: number[];
  dry?: number[];
  stable: boolean[];
  /** first turn index of each column */
  start: number[];
}

function bucket(turns: readonly TurnSummary[], dry: readonly TurnSummary[] | undefined): Series {
  const n = turns.length;
  const cols = Math.min(n, MAX_POINTS);
  const s: Series = { original: [], projected: [], stable: [], start: [], ...(dry ? { dry: [] } : {}) };
  for (let c = 0; c < cols; c++) {
    const a = Math.floor((c * n) / cols);
    const b = Math.max(a + 1, Math.floor(((c + 1) * n) / cols));
    let o = 0, p = 0, d = 0, st = true;
    for (let i = a; i < b; i++) {
      const t = turns[i]!;
      o = Math.max(o, t.originalTokens);
      p = Math.max(p, t.projectedTokens);
      if (dry) d = Math.max(d, dry[i]?.projectedTokens ?? 0);
      if (i > 0 && !t.cacheStable) st = false;
    }
    s.original.push(o);
    s.projected.push(p);
    s.dry?.push(d);
    s.stable.push(st && a > 0);
    s.start.push(a);
  }
  return s;
}

export function Chart(props: { turns: readonly TurnSummary[]; dry?: readonly TurnSummary[]; selected: number; onSelect: (turn: number) => void }) {
  const { turns, dry, selected, onSelect } = props;
  const s = React.useMemo(() => bucket(turns, dry), [turns, dry]);
  const cols = s.original.length;
  const max = Math.max(1, ...s.original, ...s.projected, ...(s.dry ?? []));
  const x = (c: number) => (cols <= 1 ? W / 2 : (c / (cols - 1)) * W);
  const y = (v: number) => PAD_TOP + (1 - v / max) * (H - PAD_TOP - MARK_H - 4);
  const line = (vals: number[]) => vals.map((v, c) => `${c === 0 ? 'M' : 'L'}${x(c).toFixed(1)},${y(v).toFixed(1)}`).join('');
  const area = (vals: number[]) => `${line(vals)}L${x(cols - 1).toFixed(1)},${y(0)}L${x(0).toFixed(1)},${y(0)}Z`;
  const stableMarks = s.stable
    .map((st, c) => (st ? `M${x(c).toFixed(1)},${H - MARK_H}v${MARK_H}` : ''))
    .join('');
  const selCol = turns.length ? Math.min(cols - 1, Math.floor((selected * cols) / turns.length)) : -1;
  const stableCount = turns.filter((t, i) => i > 0 && t.cacheStable).length;

  const onClick = (e: React.MouseEvent<SVGSVGElement>) => {
    const box = e.currentTarget.getBoundingClientRect();
    if (!box.width || cols === 0) return;
    const c = Math.round(((e.clientX - box.left) / box.width) * (cols - 1));
    onSelect(s.start[Math.max(0, Math.min(cols - 1, c))] ?? 0);
  };

  return (
    <figure className="chart" aria-label="Tokens sent per call">
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-labelledby="chart-title" onClick={onClick} data-testid="chart">
        <title id="chart-title">{`Tokens per call over ${turns.length} calls, up to ${compact(max)}; ${stableCount} cache-stable calls marked`}</title>
        {cols > 0 && (
          <>
            <path className="chart-original-area" d={area(s.original)} />
            <path className="chart-original" d={line(s.original)} data-testid="chart-original" />
            <path className="chart-projected-area" d={area(s.projected)} />
            <path className="chart-projected" d={line(s.projected)} data-testid="chart-projected" />
            {s.dry && <path className="chart-dry" d={line(s.dry)} data-testid="chart-dry" />}
            <path className="chart-stable" d={stableMarks} data-testid="chart-stable" />
            {selCol >= 0 && <line className="chart-cursor" x1={x(selCol)} x2={x(selCol)} y1={0} y2={H} />}
          </>
        )}
      </svg>
      <figcaption className="legend">
        <span className="key key-original" /> original
        <span className="key key-projected" /> projected
        {dry && (
          <>
            <span className="key key-dry" /> dry run
          </>
        )}
        <span className="key key-stable" /> cache-stable ({stableCount})
        <span className="legend-max">max {compact(max)} tokens</span>
      </figcaption>
    </figure>
  );
}
