/**
 * A hand-written SVG line chart: tokens sent per call over one session, one line per strategy,
 * with axes, ticks and a legend. No dependencies, so the chart is as reproducible as the table.
 */
const COLORS = [
  '#444444',
  '#d62728',
  '#ff7f0e',
  '#bcbd22',
  '#8c564b',
  '#9467bd',
  '#e377c2',
  '#17becf',
  '#7f7f7f',
  '#1f77b4',
  '#2ca02c',
  '#aec7e8',
];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceStep(max: number, ticks: number): number {
  const raw = max / ticks;
  const mag = 10 ** Math.floor(Math.log10(raw || 1));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * mag >= raw) return m * mag;
  return 10 * mag;
}

function fmtTick(n: number): string {
  if (n >= 1e6) return `${+(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${+(n / 1e3).toFixed(1)}k`;
  return String(n);
}

/**
 * `log` puts the y axis on a log scale (powers of ten), for sessions where a few huge outputs would
 * flatten every other line against the axis. A strategy whose line is identical to one drawn on top
 * of it says so in the legend.
 */
export function tokensPerCallSvg(
  title: string,
  series: Record<string, number[]>,
  order: ReadonlyArray<{ name: string; kind: string }>,
  log = false,
): string {
  const W = 1160,
    H = 560,
    left = 80,
    right = 500,
    top = 48,
    bottom = 56;
  const pw = W - left - right,
    ph = H - top - bottom;
  const names = order.map((o) => o.name).filter((n) => series[n]);
  const n = Math.max(...names.map((k) => series[k]!.length));
  const max = Math.max(1, ...names.flatMap((k) => series[k]!));
  const step = niceStep(max, 6);
  const ymax = Math.ceil(max / step) * step;
  const x = (i: number) => left + (n <= 1 ? 0 : (i / (n - 1)) * pw);
  const positive = names.flatMap((k) => series[k]!).filter((v) => v > 0);
  const lo = Math.floor(Math.log10(Math.max(1, Math.min(...positive, max))));
  const hi = Math.max(lo + 1, Math.ceil(Math.log10(max)));
  const y = log
    ? (v: number) => top + ph - ((Math.log10(Math.max(v, 10 ** lo)) - lo) / (hi - lo)) * ph
    : (v: number) => top + ph - (v / ymax) * ph;
  const yTicks: number[] = [];
  if (log) for (let e = lo; e <= hi; e++) yTicks.push(10 ** e);
  else for (let v = 0; v <= ymax + 1e-9; v += step) yTicks.push(v);
  const same = (a: string, b: string) => series[a]!.length === series[b]!.length && series[a]!.every((v, i) => v === series[b]![i]);
  const out: string[] = [];
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12">`,
  );
  out.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  out.push(`<text x="${left}" y="28" font-size="15" font-weight="600">${esc(title)}</text>`);
  // axes and grid
  for (const v of yTicks) {
    out.push(`<line x1="${left}" x2="${left + pw}" y1="${y(v).toFixed(1)}" y2="${y(v).toFixed(1)}" stroke="#e5e5e5"/>`);
    out.push(`<text x="${left - 8}" y="${(y(v) + 4).toFixed(1)}" text-anchor="end" fill="#333">${fmtTick(v)}</text>`);
  }
  const xstep = niceStep(n, 8);
  for (let i = 0; i < n; i += xstep) {
    out.push(`<line x1="${x(i).toFixed(1)}" x2="${x(i).toFixed(1)}" y1="${top + ph}" y2="${top + ph + 5}" stroke="#333"/>`);
    out.push(`<text x="${x(i).toFixed(1)}" y="${top + ph + 18}" text-anchor="middle" fill="#333">${i + 1}</text>`);
  }
  out.push(`<line x1="${left}" x2="${left + pw}" y1="${top + ph}" y2="${top + ph}" stroke="#333"/>`);
  out.push(`<line x1="${left}" x2="${left}" y1="${top}" y2="${top + ph}" stroke="#333"/>`);
  out.push(`<text x="${left + pw / 2}" y="${H - 14}" text-anchor="middle" fill="#333">model call</text>`);
  out.push(
    `<text transform="translate(20 ${top + ph / 2}) rotate(-90)" text-anchor="middle" fill="#333">input tokens sent (o200k_base${log ? ', log scale' : ''})</text>`,
  );
  // lines, the default drawn last so it is on top
  const drawOrder = [...names].sort(
    (a, b) => Number(order.find((o) => o.name === a)!.kind === 'spillway') - Number(order.find((o) => o.name === b)!.kind === 'spillway'),
  );
  for (const name of drawOrder) {
    const i = names.indexOf(name);
    const kind = order.find((o) => o.name === name)!.kind;
    const pts = series[name]!.map((v, j) => `${x(j).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    const dash = kind === 'reference' ? ' stroke-dasharray="6 4"' : kind === 'raw' ? ' stroke-dasharray="2 3"' : '';
    out.push(
      `<polyline fill="none" stroke="${COLORS[i % COLORS.length]}" stroke-width="${kind === 'spillway' ? 3 : 1.5}"${dash} points="${pts}"><title>${esc(name)}</title></polyline>`,
    );
  }
  // legend
  names.forEach((name, i) => {
    const ly = top + 10 + i * 20;
    const kind = order.find((o) => o.name === name)!.kind;
    const dash = kind === 'reference' ? ' stroke-dasharray="6 4"' : kind === 'raw' ? ' stroke-dasharray="2 3"' : '';
    out.push(
      `<line x1="${left + pw + 20}" x2="${left + pw + 48}" y1="${ly}" y2="${ly}" stroke="${COLORS[i % COLORS.length]}" stroke-width="${kind === 'spillway' ? 3 : 1.5}"${dash}/>`,
    );
    const twin = kind === 'spillway' ? undefined : [...drawOrder.slice(drawOrder.indexOf(name) + 1)].reverse().find((o) => same(o, name));
    out.push(
      `<text x="${left + pw + 54}" y="${ly + 4}"${kind === 'spillway' ? ' font-weight="600"' : ''}>${esc(name)}${twin ? `<tspan fill="#777"> (= ${esc(twin)})</tspan>` : ''}</text>`,
    );
  });
  out.push('</svg>');
  return out.join('\n') + '\n';
}
