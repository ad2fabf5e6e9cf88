/**
 * The status bar's text and tooltip from the inspector's sessions, without `vscode`: what Spillway
 * saved in this workspace's live sessions (the proxy, the extension API, Copilot: calls that went out
 * projected), in tokens and in the inspector's headline cost (input cost under caching with read-backs
 * relative to raw history, src/protocol/cost.ts), in dollars at each session's own model's price on its
 * face. Replays of transcripts and sessions observed without projecting only show what Spillway would
 * have saved: they are counted apart, never added to the live savings, and the face says "in replays"
 * when they are all there is. A click opens the inspector.
 */
import { DEFAULT_COST_MODEL, formatChange, formatDollars, headline, dollars, type SessionInfo } from '../../protocol';
import { modelPrice } from '../../replay/prices';
import { formatCount } from '../pure/format';

const ORIGIN_NAME: Record<string, string> = { proxy: 'proxy', replay: 'replayed', api: 'API', copilot: 'Copilot' };
/** Dollars for a session whose model is unknown or unpriced: the model most sessions in the corpus ran. */
const FALLBACK_MODEL = 'claude-sonnet-4-5';

/** Whether a session's savings were real: its calls went to the model projected (not a replay, not observe mode). */
function isLive(s: SessionInfo): boolean {
  return s.origin !== 'replay' && !s.observed;
}

/** The savings of a group of sessions: tokens, and the headline cost in cost units and in dollars. */
interface Sum {
  sessions: number;
  byOrigin: Map<string, number>;
  original: number;
  projected: number;
  raw: number;
  cost: number;
  rawDollars: number;
  costDollars: number;
  guessed: boolean;
}

function sum(sessions: readonly SessionInfo[]): Sum {
  const out: Sum = {
    sessions: 0,
    byOrigin: new Map(),
    original: 0,
    projected: 0,
    raw: 0,
    cost: 0,
    rawDollars: 0,
    costDollars: 0,
    guessed: false,
  };
  for (const s of sessions) {
    if (!s.totals) continue;
    out.sessions++;
    out.original += s.totals.originalTokens;
    out.projected += s.totals.projectedTokens;
    const c = s.totals.cost?.[s.costModel ?? DEFAULT_COST_MODEL] ?? s.totals.cost?.[DEFAULT_COST_MODEL];
    if (c) {
      const h = headline(c);
      out.raw += h.raw;
      out.cost += h.withReadBacks;
      const price = modelPrice(s.model);
      out.guessed ||= !price;
      const perMTok = (price ?? modelPrice(FALLBACK_MODEL)!).inputPerMTok;
      out.rawDollars += dollars(h.raw, perMTok);
      out.costDollars += dollars(h.withReadBacks, perMTok);
    }
    const kind = s.origin === 'proxy' && s.observed ? 'observed' : (ORIGIN_NAME[s.origin] ?? s.origin);
    out.byOrigin.set(kind, (out.byOrigin.get(kind) ?? 0) + 1);
  }
  return out;
}

/** "cost −12.3% (−$0.42)": the headline change and the money it is, on the face. */
function costFace(s: Sum): string {
  return s.raw > 0 ? ` · cost ${formatChange(s.cost / s.raw - 1)} (${formatDollars(s.costDollars - s.rawDollars, true)})` : '';
}

/** "1,100 → 700 tokens sent; input cost under caching with read-backs −10.0% ($0.0030 → $0.0027)" */
function figures(s: Sum): string {
  const money =
    s.raw > 0
      ? `; input cost under caching with read-backs ${formatChange(s.cost / s.raw - 1)} (${formatDollars(s.rawDollars)} → ${formatDollars(s.costDollars)}` +
        `${s.guessed ? `, ${FALLBACK_MODEL} prices where the model is unknown` : ''})`
      : '';
  return `${formatCount(s.original)} → ${formatCount(s.projected)} tokens sent${money}`;
}

const counted = (s: Sum) => `${[...s.byOrigin].map(([o, n]) => `${n} ${o}`).join(', ')} session${s.sessions === 1 ? '' : 's'}`;

export function sessionsStatus(sessions: readonly SessionInfo[]): { text: string; tooltip: string } {
  const live = sum(sessions.filter(isLive));
  const other = sum(sessions.filter((s) => !isLive(s)));
  const replaysOnly = live.sessions === 0 && other.sessions > 0;
  const shown = replaysOnly ? other : live;
  const saved = Math.max(0, shown.original - shown.projected);
  const where = replaysOnly ? (other.byOrigin.size === 1 && other.byOrigin.has('observed') ? ' if projected' : ' in replays') : '';
  const text = `$(fold) Spillway: ${formatCount(saved)} tokens saved${where}${costFace(shown)}`;
  const parts: string[] = [];
  if (live.sessions > 0) parts.push(`Spillway in this workspace's live sessions (${counted(live)}): ${figures(live)}.`);
  if (other.sessions > 0)
    parts.push(
      `${live.sessions > 0 ? 'Not counted above: ' : ''}what Spillway would have saved in ${counted(other)} ` +
        `(replays of transcripts, and sessions observed without projecting, whose calls went out unchanged): ${figures(other)}.`,
    );
  const tooltip = parts.length
    ? `${parts.join(' ')} Click to open the inspector.`
    : 'Spillway has no sessions in this workspace yet. Click to open the inspector.';
  return { text, tooltip };
}
