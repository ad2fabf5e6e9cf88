/**
 * The frontier (issues 10, 19): cost against miss rate on the corpus, pooled and per agent, for the default, the
 * presets, the peers and a sweep of the default's main knobs, one knob moved at a time. A point is on
 * the frontier when no other point is at least as cheap and misses at most as much, and better in
 * one of the two. Written as a table and a hand-drawn SVG (two panels: Anthropic and OpenAI prices).
 */
import { tokenCounter } from '../src/engine';
import { runSpillway, strategyRow, type Row } from './metrics';
import { poolRows, type Session } from './peers';

/** One configuration of the sweep: the `spillway` preset with `over` set. */
export interface SweepPoint {
  name: string;
  over: Record<string, unknown>;
}

/** The default's main knobs, each moved on its own (plus the pairs that only act together). */
export function sweepPoints(quick: boolean): SweepPoint[] {
  const all: SweepPoint[] = [
    { name: 'defaultCap 2,000', over: { defaultCap: 2_000 } },
    { name: 'defaultCap 4,000', over: { defaultCap: 4_000 } },
    { name: 'defaultCap 16,000', over: { defaultCap: 16_000 } },
    { name: 'defaultCap 4,000 + latestCap 40,000', over: { defaultCap: 4_000, 'offload.latestCap': 40_000 } },
    { name: 'previewChars 600', over: { previewChars: 600 } },
    { name: 'previewChars 2,400', over: { previewChars: 2_400 } },
    { name: 'clear.triggerTokens 10,000', over: { 'clear.triggerTokens': 10_000 } },
    { name: 'clear.triggerTokens 40,000', over: { 'clear.triggerTokens': 40_000 } },
    { name: 'clear.triggerTokens 80,000', over: { 'clear.triggerTokens': 80_000 } },
    { name: 'clear.keep 5', over: { 'clear.keep': 5 } },
    { name: 'clear.keep 20', over: { 'clear.keep': 20 } },
    { name: 'clear.clearAtLeastTokens 5,000', over: { 'clear.clearAtLeastTokens': 5_000 } },
    { name: 'clear.clearAtLeastTokens 20,000', over: { 'clear.clearAtLeastTokens': 20_000 } },
    { name: 'clear.clearAtLeastTokens all', over: { 'clear.clearAtLeastTokens': 'all' } },
    { name: 'clear.schedule trigger', over: { 'clear.schedule': 'trigger' } },
    { name: 'clear.inUseCalls 4', over: { 'clear.inUseCalls': 4 } },
    { name: 'clear.inUseCalls 8', over: { 'clear.inUseCalls': 8 } },
    { name: 'clear.staleFirst false', over: { 'clear.staleFirst': false } },
    { name: 'clear.enabled false', over: { 'clear.enabled': false } },
    { name: 'inputs.enabled false', over: { 'inputs.enabled': false } },
    { name: 'inputs.minTokens 0', over: { 'inputs.minTokens': 0 } },
  ];
  return quick ? all.filter((p) => ['defaultCap 4,000', 'clear.keep 5', 'inputs.enabled false'].includes(p.name)) : all;
}

export type PointKind = 'default' | 'preset' | 'peer' | 'sweep' | 'reference' | 'raw';

export interface FrontierPoint {
  name: string;
  kind: PointKind;
  /** the settings that differ from the default (sweep points) */
  over?: Record<string, unknown>;
  row: Row;
  /** on the frontier under Anthropic / OpenAI prices */
  frontier: { anthropic: boolean; openai: boolean };
}

/** One sweep point's rows, one per session (in the order of the sessions given), and pooled. */
export interface SweepResult {
  point: SweepPoint;
  row: Row;
  rows: Row[];
}

/**
 * Runs one sweep point over the sessions and pools it (bench/peers.ts runs each point in a worker).
 * The replays share one token counter: the sweep reports no timings, so a warm cache only saves the
 * time of counting the same texts again.
 */
export function runSweep(sessions: Session[], point: SweepPoint): SweepResult {
  const counter = tokenCounter('o200k_base');
  const rows = sessions.map((s) =>
    strategyRow(point.name, 'spillway', runSpillway(s.transcript, { preset: 'spillway', ...point.over }, counter), new Map()),
  );
  return { point, row: poolRows(point.name, rows), rows };
}

const missOf = (r: Row) => r.missRate ?? 0;

/** Marks the points no other point dominates (cheaper or equal and missing less or equal, better in one). */
export function markFrontier(points: Array<Omit<FrontierPoint, 'frontier'>>): FrontierPoint[] {
  const on = (p: Omit<FrontierPoint, 'frontier'>, price: string) =>
    !points.some(
      (q) =>
        q !== p &&
        q.row.cost[price]! <= p.row.cost[price]! &&
        missOf(q.row) <= missOf(p.row) &&
        (q.row.cost[price]! < p.row.cost[price]! || missOf(q.row) < missOf(p.row)),
    );
  return points.map((p) => ({ ...p, frontier: { anthropic: on(p, 'anthropic'), openai: on(p, 'openai') } }));
}

const pct = (x: number | null | undefined) => (x === null || x === undefined ? 'n/a' : `${(x * 100).toFixed(1)}%`);

export function frontierTable(points: FrontierPoint[]): string {
  const rb = points.some((p) => Object.keys(p.row.costWithReadBacks).length > 0);
  return [
    `| point | kind | cost vs raw, Anthropic | cost vs raw, OpenAI | miss rate |${rb ? ' cost with read-backs, Anthropic | cost with read-backs, OpenAI |' : ''} on the frontier (A / O) |`,
    `| --- | --- | ---: | ---: | ---: |${rb ? ' ---: | ---: |' : ''} --- |`,
    ...[...points]
      .sort((a, b) => a.row.cost.anthropic! - b.row.cost.anthropic!)
      .map((p) => {
        const name = p.kind === 'default' ? `**${p.name}**` : p.name;
        const rbCells = rb ? ` ${pct(p.row.costWithReadBacks.anthropic)} | ${pct(p.row.costWithReadBacks.openai)} |` : '';
        return `| ${name} | ${p.kind} | ${pct(p.row.cost.anthropic)} | ${pct(p.row.cost.openai)} | ${pct(p.row.missRate)} (${p.row.missedIds}/${p.row.referencedIds}) |${rbCells} ${p.frontier.anthropic ? 'yes' : '—'} / ${p.frontier.openai ? 'yes' : '—'} |`;
      }),
  ].join('\n');
}

const KIND_STYLE: Record<PointKind, { fill: string; label: string }> = {
  default: { fill: '#1f77b4', label: 'spillway default' },
  sweep: { fill: '#aec7e8', label: "sweep of the default's knobs" },
  preset: { fill: '#ff7f0e', label: 'seed presets' },
  peer: { fill: '#d62728', label: 'peers (LangChain, AI SDK)' },
  reference: { fill: '#7f7f7f', label: 'reference (masking)' },
  raw: { fill: '#444444', label: 'raw' },
};

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * Two scatter panels (Anthropic, OpenAI prices): x is the miss rate, y the cost relative to
 * raw-with-cache; the frontier is drawn as a step line; the aim's box (miss ≤ 3%, cost ≤ aim) shaded.
 */
export function frontierSvg(title: string, points: FrontierPoint[], aims: Record<string, number>, maxMiss = 0.03): string {
  const W = 1160,
    H = 600,
    panelW = 440,
    top = 56,
    bottom = 100,
    left = 70,
    gap = 90;
  const ph = H - top - bottom;
  const xmax = Math.max(0.05, ...points.map((p) => missOf(p.row))) * 1.08;
  const ymax = Math.max(1.05, ...points.flatMap((p) => [p.row.cost.anthropic!, p.row.cost.openai!])) * 1.02;
  const ymin = Math.max(0, Math.min(...points.flatMap((p) => [p.row.cost.anthropic!, p.row.cost.openai!])) - 0.05);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${W / 2}" y="24" text-anchor="middle" font-size="16">${esc(title)}</text>`);
  (['anthropic', 'openai'] as const).forEach((price, pi) => {
    const x0 = left + pi * (panelW + gap);
    const x = (v: number) => x0 + (v / xmax) * panelW;
    const y = (v: number) => top + ph - ((v - ymin) / (ymax - ymin)) * ph;
    out.push(
      `<text x="${x0 + panelW / 2}" y="${top - 12}" text-anchor="middle" font-size="14">${price === 'anthropic' ? 'Anthropic prices (read 0.1×, write 1.25×)' : 'OpenAI prices (cached 0.5×)'}</text>`,
    );
    // the aim: miss ≤ 3% and cost ≤ the aim
    const aim = aims[price]!;
    out.push(
      `<rect x="${x(0)}" y="${y(Math.min(aim, ymax))}" width="${x(maxMiss) - x(0)}" height="${y(ymin) - y(Math.min(aim, ymax))}" fill="#2ca02c" fill-opacity="0.10" stroke="#2ca02c" stroke-dasharray="4 3"/>`,
    );
    out.push(
      `<text x="${x(maxMiss) + 4}" y="${y(Math.min(aim, ymax)) + 12}" fill="#2ca02c">aim: ≤ ${(aim * 100).toFixed(0)}%, miss ≤ 3%</text>`,
    );
    // axes and ticks
    out.push(
      `<line x1="${x0}" y1="${top + ph}" x2="${x0 + panelW}" y2="${top + ph}" stroke="#000"/><line x1="${x0}" y1="${top}" x2="${x0}" y2="${top + ph}" stroke="#000"/>`,
    );
    const xStep = xmax > 0.2 ? 0.05 : xmax > 0.08 ? 0.02 : 0.01;
    for (let v = 0; v <= xmax + 1e-9; v += xStep)
      out.push(
        `<line x1="${x(v)}" y1="${top + ph}" x2="${x(v)}" y2="${top + ph + 4}" stroke="#000"/><text x="${x(v)}" y="${top + ph + 17}" text-anchor="middle">${(v * 100).toFixed(0)}%</text>`,
      );
    for (let v = Math.ceil(ymin * 10) / 10; v <= ymax + 1e-9; v += 0.1)
      out.push(
        `<line x1="${x0 - 4}" y1="${y(v)}" x2="${x0 + panelW}" y2="${y(v)}" stroke="#eee"/><text x="${x0 - 7}" y="${y(v) + 4}" text-anchor="end">${(v * 100).toFixed(0)}%</text>`,
      );
    out.push(
      `<text x="${x0 + panelW / 2}" y="${top + ph + 36}" text-anchor="middle">miss rate (identifiers in the next reply hidden by the projection)</text>`,
    );
    out.push(`<text transform="translate(${x0 - 50},${top + ph / 2}) rotate(-90)" text-anchor="middle">cost vs raw-with-cache</text>`);
    // the frontier as a step line
    const front = points.filter((p) => p.frontier[price]).sort((a, b) => missOf(a.row) - missOf(b.row));
    if (front.length > 1) {
      let d = `M${x(missOf(front[0]!.row))},${y(front[0]!.row.cost[price]!)}`;
      for (const p of front.slice(1)) d += ` H${x(missOf(p.row))} V${y(p.row.cost[price]!)}`;
      out.push(`<path d="${d}" fill="none" stroke="#555" stroke-dasharray="3 3"/>`);
    }
    // points drawn on the same spot share one label
    const labels = new Map<string, string[]>();
    for (const p of points) {
      if (p.kind === 'sweep') continue;
      const key = `${x(missOf(p.row)).toFixed(0)},${y(p.row.cost[price]!).toFixed(0)}`;
      labels.set(key, [...(labels.get(key) ?? []), p.name.replace(/^preset /, '')]);
    }
    for (const [key, names] of labels) {
      const [lx, ly] = key.split(',').map(Number) as [number, number];
      out.push(`<text x="${lx + 7}" y="${ly + 4}" font-size="10" fill="#333">${esc(names.join(' = '))}</text>`);
    }
    for (const p of points) {
      const s = KIND_STYLE[p.kind];
      const cx = x(missOf(p.row)),
        cy = y(p.row.cost[price]!);
      out.push(
        `<circle cx="${cx.toFixed(1)}" cy="${cy.toFixed(1)}" r="${p.kind === 'default' ? 6 : 4}" fill="${s.fill}" stroke="#000" stroke-width="${p.frontier[price] ? 1.2 : 0.3}"><title>${esc(`${p.name}: cost ${pct(p.row.cost[price])}, miss ${pct(p.row.missRate)}`)}</title></circle>`,
      );
    }
  });
  // legend
  const ly = H - 22;
  let lx = left;
  for (const k of Object.keys(KIND_STYLE) as PointKind[]) {
    if (!points.some((p) => p.kind === k)) continue;
    out.push(
      `<circle cx="${lx}" cy="${ly - 4}" r="5" fill="${KIND_STYLE[k].fill}" stroke="#000" stroke-width="0.3"/><text x="${lx + 9}" y="${ly}">${esc(KIND_STYLE[k].label)}</text>`,
    );
    lx += 30 + KIND_STYLE[k].label.length * 6.5;
  }
  out.push('</svg>');
  return out.join('\n') + '\n';
}
