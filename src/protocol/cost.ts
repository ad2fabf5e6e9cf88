/**
 * The inspector's one cost story, in one place so the header, the status bar, the dry run and the
 * turn rows cannot disagree (issue 22: a turn read "+378%" under "Largest savings", the dry run
 * compared one figure while the header led with another).
 *
 * The headline is the input cost under prompt caching WITH read-backs (what the agent pays to read
 * back the outputs a reduction hid from it), relative to raw history with caching: DESIGN.md's first
 * figure. The cost before read-backs is shown beside it where there is room. Money is that cost in
 * dollars for one model: the cost records count units of one uncached input token at the base price
 * (src/replay/metrics.ts), so dollars are units × the model's input price per token.
 *
 * Pure, imports nothing: both the host (status bar) and the webview use it.
 */

/** One turn's or one session's input cost under one price model, in uncached-input-token units. */
export interface CostFigure {
  raw: number;
  projected: number;
  readBack?: number | undefined;
}

export interface Headline {
  /** raw history, with caching */
  raw: number;
  /** the projection with caching, plus the read-backs its misses cause: the headline */
  withReadBacks: number;
  /** the projection with caching alone */
  withoutReadBacks: number;
  /** withReadBacks relative to raw, minus one: −0.19 is "19% cheaper" */
  change: number;
  /** the same before read-backs */
  changeWithout: number;
}

export function headline(c: CostFigure): Headline {
  const withReadBacks = c.projected + (c.readBack ?? 0);
  return {
    raw: c.raw,
    withReadBacks,
    withoutReadBacks: c.projected,
    change: c.raw > 0 ? withReadBacks / c.raw - 1 : 0,
    changeWithout: c.raw > 0 ? c.projected / c.raw - 1 : 0,
  };
}

/** Anthropic's, when the family is unknown: its cache writes (1.25x) make savings hardest to claim. */
export const DEFAULT_COST_MODEL = 'anthropic';

/**
 * The cost record a model family is billed under: a family (src/replay/prices.ts `familyOf`) is the
 * name of the price model whose caching rules bill it (src/replay/metrics.ts PRICE_MODELS).
 */
export function costModelFor(family: string | undefined): string {
  return family || DEFAULT_COST_MODEL;
}

/** Price lists quote dollars per million tokens. */
const TOKENS_PER_PRICE_UNIT = 1_000_000;

/** Cost units (uncached input tokens at the base price) in dollars at `inputPerMTok`. */
export function dollars(units: number, inputPerMTok: number): number {
  return (units * inputPerMTok) / TOKENS_PER_PRICE_UNIT;
}

/** "$12.34", "$0.042", "−$1.20" with `signed`: cents when a dollar or more, three significant digits below. */
export function formatDollars(n: number, signed = false): string {
  const a = Math.abs(n);
  const body =
    a >= 1 ? a.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : a === 0 ? '0' : a.toPrecision(2);
  const sign = signed ? (n > 0 ? '+' : n < 0 ? '−' : '±') : n < 0 ? '−' : '';
  return `${sign}$${body}`;
}

/** A relative change as "+12.3%" / "−4.5%" (a true minus sign), "±0%" when it rounds to nothing. */
export function formatChange(change: number): string {
  const v = change * 100;
  if (Math.abs(v) < 0.05) return '±0%';
  return `${v > 0 ? '+' : '−'}${Math.abs(v).toFixed(1)}%`;
}
