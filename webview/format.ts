/**
 * Number formatting for the inspector: exact with separators when short, compact when long.
 * `count` stays a copy of the engine's `formatInt` (src/engine/format-number.ts): the webview may
 * import only src/protocol and its own folder, and src/protocol imports only zod.
 */
export function count(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

export function compact(n: number): string {
  const a = Math.abs(n);
  if (a >= 1e6) return `${(n / 1e6).toFixed(a >= 1e7 ? 0 : 1)}M`;
  if (a >= 1e4) return `${(n / 1e3).toFixed(0)}k`;
  if (a >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

export function percent(part: number, whole: number): string {
  if (whole <= 0) return '0%';
  return `${((part / whole) * 100).toFixed(1)}%`;
}

export function capText(cap: number | 'unlimited'): string {
  return cap === 'unlimited' ? 'unlimited' : count(cap);
}

/** Parses a cap typed in the inspector: a positive whole number (commas, `k`), `unlimited` or `default`. */
export function parseCap(text: string): number | 'unlimited' | 'default' | undefined {
  const t = text
    .trim()
    .toLowerCase()
    .replace(/[,_\s]/g, '');
  if (t === 'unlimited' || t === 'default') return t;
  const m = /^(\d+(?:\.\d+)?)(k?)$/.exec(t);
  if (!m) return undefined;
  const n = Math.round(Number(m[1]) * (m[2] ? 1000 : 1));
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/** A signed change: "+62k", "−1.3k" (a true minus sign). */
export function signed(n: number, fmt: (n: number) => string = compact): string {
  if (Math.round(n) === 0) return '±0';
  return `${n > 0 ? '+' : '−'}${fmt(Math.abs(n))}`;
}

/** A signed percentage of `whole`: "+1.3%", "−25.7%". */
export function signedPercent(part: number, whole: number): string {
  if (whole <= 0) return '±0%';
  const v = (part / whole) * 100;
  if (Math.abs(v) < 0.05) return '±0%';
  return `${v > 0 ? '+' : '−'}${Math.abs(v).toFixed(1)}%`;
}

/**
 * The price models the panel shows cost under: Anthropic's and OpenAI's current (GPT-5) prices. The
 * replay reports more (the GPT-4o generation, DeepSeek, Gemini; docs/replay-and-cost.md); they stay
 * in the session's figures for whoever wants them, but two columns of percentages are what a header
 * line holds.
 */
const SHOWN_PRICE_MODELS: readonly string[] = ['anthropic', 'openai'];

/** Only the shown price models of a cost record, in its own order. */
function shownCosts<T>(cost: Record<string, T>): [string, T][] {
  return Object.entries(cost).filter(([name]) => SHOWN_PRICE_MODELS.includes(name));
}

/** The replay's price models (src/replay/metrics.ts PRICE_MODELS) as the panel names them. */
const PRICE_LABEL: Record<string, string> = {
  anthropic: 'Anthropic',
  openai: 'OpenAI',
  'openai-4o': 'OpenAI GPT-4o',
  deepseek: 'DeepSeek',
  gemini: 'Gemini',
};

/**
 * What an observed session (nothing was changed) would have saved: the first price model's cost
 * under caching with read-backs, else the tokens.
 */
export function wouldHaveSaved(t: {
  originalTokens: number;
  projectedTokens: number;
  cost?: Record<string, { raw: number; projected: number; readBack?: number }>;
}): string {
  const first = shownCosts(t.cost ?? {})[0];
  if (first) {
    const [name, c] = first;
    const paid = c.projected + (c.readBack ?? 0);
    const what = `of the cost under caching (${PRICE_LABEL[name] ?? name} prices${c.readBack !== undefined ? ', read-backs included' : ''})`;
    return paid <= c.raw
      ? `would have saved ${percent(c.raw - paid, c.raw)} ${what}`
      : `would have cost ${percent(paid - c.raw, c.raw)} more ${what}`;
  }
  return `would have saved ${percent(t.originalTokens - t.projectedTokens, t.originalTokens)} of the tokens sent`;
}
