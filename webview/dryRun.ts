/**
 * A dry run explained when its effect is not the obvious one. Lowering a cap makes previews smaller,
 * yet the session can cost more: the request grows more slowly, so the clear (which removes old
 * results in one batch) fires later, or finds less to free and waits until a clear pays back its
 * cache rewrite; the turns in between send the old results again. The figures alone ("+61k tokens")
 * read as a mistake; this says which clear moved, from which turn to which, why, and where the
 * tokens went. The panel (CapsPanel) shows it under the dry run's figures.
 */
import { headline, type CapChoice, type ClearSettings, type ToolCap, type Totals, type TurnSummary } from '../src/protocol';
import { compact, signed } from './format';

/** Turns (0-based) where a clear fired. */
function clearTurns(turns: readonly TurnSummary[]): number[] {
  return turns.filter((t) => t && (t.clears ?? 0) > 0).map((t) => t.index);
}

const turnList = (ts: readonly number[]) =>
  ts.length === 0 ? 'none' : ts.length === 1 ? `turn ${ts[0]! + 1}` : `turns ${ts.map((t) => t + 1).join(', ')}`;

/** "+82k tokens in turns 22–31, −21k in the others": where the dry run's tokens moved. */
function whereTokensWent(base: readonly TurnSummary[], dry: readonly TurnSummary[], from: number, to: number): string {
  let inside = 0;
  let outside = 0;
  for (let i = 0; i < base.length; i++) {
    const d = (dry[i]?.projectedTokens ?? 0) - (base[i]?.projectedTokens ?? 0);
    if (i >= from && i < to) inside += d;
    else outside += d;
  }
  const span = to - from === 1 ? `turn ${from + 1}` : `turns ${from + 1}–${to}`;
  return `${signed(inside)} tokens in ${span}, ${signed(outside)} in the others`;
}

/** The first turn in [from, to) whose dry-run request is over the trigger, or undefined. */
function firstOver(dry: readonly TurnSummary[], from: number, to: number, trigger: number): number | undefined {
  for (let i = from; i < to; i++) if ((dry[i]?.projectedTokens ?? 0) > trigger) return i;
  return undefined;
}

/** Why a clear waits once the request is over the trigger, under the schedule in force. */
function waitsWhy(clear: ClearSettings): string {
  return clear.schedule === 'payback'
    ? 'a clear waits until it frees enough to pay back its cache rewrite (the payback rule)'
    : 'a clear waits until it frees enough tokens (clear.clearAtLeastTokens)';
}

/**
 * Which clear moved and why: undefined when the dry run fires its clears at the same turns. `base`
 * and `dry` are the same session's turns under the settings and under the changed caps.
 */
export function explainClearMove(
  base: readonly TurnSummary[],
  dry: readonly TurnSummary[],
  clear: ClearSettings | undefined,
): string | undefined {
  if (dry.length !== base.length) return undefined;
  const was = clearTurns(base);
  const now = clearTurns(dry);
  if (was.length === now.length && was.every((t, i) => now[i] === t)) return undefined;
  const trigger = clear ? `the clear trigger (${compact(clear.triggerTokens)} tokens)` : 'the clear trigger';
  const k = was[0];
  const m = now[0];
  const others = was.length > 1 || now.length > 1 ? ` (clears: ${turnList(was)} before, ${turnList(now)} now)` : '';
  if (k !== undefined && m !== undefined && m > k) {
    // later: the request stays under the trigger longer, or it is over but a clear frees too little
    let why = '';
    if (clear) {
      const over = firstOver(dry, k, m, clear.triggerTokens);
      if (over === undefined) why = `the request stays under ${trigger} until then`;
      else if (over === k)
        why = `the request passes ${trigger} at turn ${k + 1} as before, but less of it can be cleared, and ${waitsWhy(clear)}`;
      else why = `the request stays under ${trigger} until turn ${over + 1}, and from there ${waitsWhy(clear)}`;
    }
    return (
      `The first clear moves from turn ${k + 1} to turn ${m + 1}${why ? `: ${why}` : ''}. ` +
      `Until it fires, the old results it would have cleared are sent again: ${whereTokensWent(base, dry, k, m)}${others}.`
    );
  }
  if (k !== undefined && m !== undefined) {
    // earlier (or the same first clear, later ones changed)
    if (m === k) return `The first clear stays at turn ${k + 1}; the later ones move${others}.`;
    return (
      `The first clear moves from turn ${k + 1} to turn ${m + 1}: the request passes ${trigger} sooner. ` +
      `Clearing earlier: ${whereTokensWent(base, dry, m, k)}${others}.`
    );
  }
  if (k !== undefined) {
    let why = '';
    if (clear) {
      const over = firstOver(dry, k, dry.length, clear.triggerTokens);
      why =
        over === undefined
          ? `: the request never passes ${trigger}`
          : `: from turn ${over + 1} the request is over ${trigger}, but ${waitsWhy(clear)}, and none does`;
    }
    return `The clear at turn ${k + 1} no longer fires${why}. The old results stay: ${whereTokensWent(base, dry, k, dry.length)}${others}.`;
  }
  return `A clear now fires at turn ${m! + 1}: the request passes ${trigger}. ${whereTokensWent(base, dry, m!, dry.length)}${others}.`;
}

/** Whether every change lowers a cap (a smaller number than the one in force), or every one raises it. */
function direction(
  changes: Record<string, CapChoice>,
  caps: readonly ToolCap[],
  defaultCap: number | 'unlimited',
): 'lower' | 'raise' | undefined {
  const size = (c: number | 'unlimited') => (c === 'unlimited' ? Number.POSITIVE_INFINITY : c);
  let lower = 0;
  let raise = 0;
  for (const [tool, choice] of Object.entries(changes)) {
    const now = caps.find((c) => c.tool === tool)?.cap ?? defaultCap;
    const next = choice === 'default' ? defaultCap : choice;
    if (size(next) < size(now)) lower++;
    else if (size(next) > size(now)) raise++;
  }
  if (lower > 0 && raise === 0) return 'lower';
  if (raise > 0 && lower === 0) return 'raise';
  return undefined;
}

/** The headline cost (with read-backs) the change adds, in cost units; undefined without cost. */
export function costAdded(base: Totals, dry: Totals, costModel: string): number | undefined {
  const b = base.cost?.[costModel];
  const d = dry.cost?.[costModel];
  if (!b || !d) return undefined;
  return headline(d).withReadBacks - headline(b).withReadBacks;
}

/**
 * The dry run explained: a lead when the effect runs against the change ("Lowering Read's cap costs
 * more, not less."), then the clear that moved. Undefined when there is nothing to explain.
 */
export function explainDryRun(opts: {
  base: readonly TurnSummary[];
  dry: readonly TurnSummary[];
  baseTotals: Totals;
  dryTotals: Totals;
  clear: ClearSettings | undefined;
  changes: Record<string, CapChoice>;
  caps: readonly ToolCap[];
  defaultCap: number | 'unlimited';
  costModel: string;
}): string | undefined {
  const move = explainClearMove(opts.base, opts.dry, opts.clear);
  const tokens = opts.dryTotals.projectedTokens - opts.baseTotals.projectedTokens;
  const cost = costAdded(opts.baseTotals, opts.dryTotals, opts.costModel) ?? tokens;
  const dir = direction(opts.changes, opts.caps, opts.defaultCap);
  const tools = Object.keys(opts.changes);
  const whose = tools.length === 1 ? `${tools[0]}'s cap` : 'these caps';
  let lead = '';
  if (dir === 'lower' && cost > 0) lead = `Lowering ${whose} costs more, not less.`;
  else if (dir === 'raise' && cost < 0) lead = `Raising ${whose} costs less, not more.`;
  if (!lead && !move) return undefined;
  return [lead, move ?? ''].filter(Boolean).join(' ');
}
