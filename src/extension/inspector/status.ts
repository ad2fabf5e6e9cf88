/**
 * The status bar's text and tooltip from the inspector's sessions, without `vscode`: what the
 * sessions Spillway knows in this workspace saved (tokens sent, and the inspector's headline cost:
 * input cost under caching with read-backs relative to raw history, src/protocol/cost.ts), counting
 * the demo's and replayed sessions as well as live ones, and the same in dollars at each session's
 * own model's price. A click opens the inspector.
 */
import { DEFAULT_COST_MODEL, formatChange, formatDollars, headline, dollars, type SessionInfo } from '../../protocol';
import { modelPrice } from '../../replay/prices';
import { formatCount } from '../pure/format';

const ORIGIN_NAME: Record<string, string> = { proxy: 'proxy', replay: 'replayed', api: 'API' };
/** Dollars for a session whose model is unknown or unpriced: the model most sessions in the corpus ran. */
const FALLBACK_MODEL = 'claude-sonnet-4-5';

export function sessionsStatus(sessions: readonly SessionInfo[]): { text: string; tooltip: string } {
  let original = 0;
  let projected = 0;
  let raw = 0;
  let cost = 0;
  let rawDollars = 0;
  let costDollars = 0;
  let guessed = false;
  const byOrigin = new Map<string, number>();
  for (const s of sessions) {
    if (!s.totals) continue;
    original += s.totals.originalTokens;
    projected += s.totals.projectedTokens;
    const c = s.totals.cost?.[s.costModel ?? DEFAULT_COST_MODEL] ?? s.totals.cost?.[DEFAULT_COST_MODEL];
    if (c) {
      const h = headline(c);
      raw += h.raw;
      cost += h.withReadBacks;
      const price = modelPrice(s.model);
      guessed ||= !price;
      const perMTok = (price ?? modelPrice(FALLBACK_MODEL)!).inputPerMTok;
      rawDollars += dollars(h.raw, perMTok);
      costDollars += dollars(h.withReadBacks, perMTok);
    }
    byOrigin.set(s.origin, (byOrigin.get(s.origin) ?? 0) + 1);
  }
  const saved = Math.max(0, original - projected);
  const change = raw > 0 ? formatChange(cost / raw - 1) : '';
  const text = `$(fold) Spillway: ${formatCount(saved)} tokens saved${raw > 0 ? ` · cost ${change}` : ''}`;
  const counted = [...byOrigin].map(([o, n]) => `${n} ${ORIGIN_NAME[o] ?? o}`).join(', ');
  const money =
    raw > 0
      ? `; input cost under caching with read-backs ${change} (${formatDollars(rawDollars)} → ${formatDollars(costDollars)}` +
        `${guessed ? `, ${FALLBACK_MODEL} prices where the model is unknown` : ''})`
      : '';
  const tooltip =
    original > 0
      ? `Spillway in this workspace (${counted} session${byOrigin.size === 1 && [...byOrigin.values()][0] === 1 ? '' : 's'}): ` +
        `${formatCount(original)} → ${formatCount(projected)} tokens sent${money}. Click to open the inspector.`
      : 'Spillway has no sessions in this workspace yet. Click to open the inspector.';
  return { text, tooltip };
}
