/**
 * The status bar's text and tooltip from the inspector's sessions, without `vscode`: what the
 * sessions Spillway knows in this workspace saved (tokens sent, and input cost under caching at
 * Anthropic's prices, the price model whose cache writes make savings hardest), counting the demo's
 * and replayed sessions as well as live ones. A click opens the inspector.
 */
import type { SessionInfo } from '../../protocol';
import { formatCount } from '../pure/format';

const ORIGIN_NAME: Record<string, string> = { proxy: 'proxy', replay: 'replayed', api: 'API' };

export function sessionsStatus(sessions: readonly SessionInfo[]): { text: string; tooltip: string } {
  let original = 0;
  let projected = 0;
  let raw = 0;
  let cost = 0;
  const byOrigin = new Map<string, number>();
  for (const s of sessions) {
    if (!s.totals) continue;
    original += s.totals.originalTokens;
    projected += s.totals.projectedTokens;
    const c = s.totals.cost?.['anthropic'];
    if (c) {
      raw += c.raw;
      cost += c.projected;
    }
    byOrigin.set(s.origin, (byOrigin.get(s.origin) ?? 0) + 1);
  }
  const saved = Math.max(0, original - projected);
  const costSaved = raw > 0 ? (raw - cost) / raw : 0;
  const pct = `${(costSaved * 100).toFixed(1)}%`;
  const text = `$(fold) Spillway: ${formatCount(saved)} tokens saved${raw > 0 ? ` · cost −${pct}` : ''}`;
  const counted = [...byOrigin].map(([o, n]) => `${n} ${ORIGIN_NAME[o] ?? o}`).join(', ');
  const tooltip =
    original > 0
      ? `Spillway in this workspace (${counted} session${byOrigin.size === 1 && [...byOrigin.values()][0] === 1 ? '' : 's'}): ` +
        `${formatCount(original)} → ${formatCount(projected)} tokens sent${raw > 0 ? `; input cost under caching ${pct} lower (Anthropic prices)` : ''}. Click to open the inspector.`
      : 'Spillway has no sessions in this workspace yet. Click to open the inspector.';
  return { text, tooltip };
}
