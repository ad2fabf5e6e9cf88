/**
 * The cost story of one turn and of the session, told in words and dollars: the headline figure of
 * src/protocol/cost.ts (cost under caching with read-backs, relative to raw history with caching)
 * priced at the chosen model, what in the turn caused it (previews, clears, a rewritten cache, read-
 * backs) and, for a turn that costs more than raw history, the turn by which it has paid for itself.
 */
import { dollars, formatChange, formatDollars, headline, type Headline, type Price, type TurnSummary } from '../src/protocol';
import { compact, count } from './format';

/** How the inspector prices cost: which cost record (price model), and the model's dollar price when chosen. */
export interface CostLens {
  costModel: string;
  price?: Price | undefined;
}

export function turnHeadline(t: TurnSummary | undefined, costModel: string): Headline | undefined {
  const c = t?.cost?.[costModel];
  return c ? headline(c) : undefined;
}

/** Cost units as money at the lens's price, or as units when no price is chosen. */
export function money(units: number, lens: CostLens, signed = false): string {
  if (lens.price) return formatDollars(dollars(units, lens.price.inputPerMTok), signed);
  const s = compact(Math.abs(units));
  return `${signed ? (units > 0 ? '+' : units < 0 ? '−' : '±') : ''}${s} units`;
}

const plural = (n: number, one: string, many: string) => `${count(n)} ${n === 1 ? one : many}`;

/**
 * The first turn (0-based) at or after `from` by which the extra cost of turn `from` has been won
 * back: the running sum of (cost with read-backs − raw) from `from` on comes back to zero or below.
 * Undefined when it never does within the session.
 */
export function paybackTurn(turns: readonly TurnSummary[], from: number, costModel: string): number | undefined {
  let sum = 0;
  for (let i = from; i < turns.length; i++) {
    const h = turnHeadline(turns[i], costModel);
    if (!h) continue;
    sum += h.withReadBacks - h.raw;
    if (i > from && sum <= 0) return i;
  }
  return undefined;
}

/**
 * One turn's cost explained: "+378.0% this turn ($0.12 → $0.57): 31 results cleared, the cache is
 * rewritten after its first 12k of 80k tokens; it pays back by turn 61". Undefined without cost.
 */
export function explainTurnCost(turns: readonly TurnSummary[], index: number, lens: CostLens): string | undefined {
  const t = turns[index];
  const h = turnHeadline(t, lens.costModel);
  if (!t || !h) return undefined;
  if (t.error) return `The call failed, so it was not billed as a cached call: ${t.error}`;
  const lead = `${formatChange(h.change)} this turn (${money(h.raw, lens)} raw → ${money(h.withReadBacks, lens)})`;
  const causes: string[] = [];
  if ((t.previews ?? 0) > 0) causes.push(`${plural(t.previews!, 'output became a preview', 'outputs became previews')} with a handle`);
  if ((t.references ?? 0) > 0)
    causes.push(`${plural(t.references!, 'output became a reference', 'outputs became references')} to an earlier one`);
  if ((t.clears ?? 0) > 0) causes.push(`${plural(t.clears!, 'result', 'results')} cleared`);
  if ((t.inputs ?? 0) > 0) causes.push(`${plural(t.inputs!, 'file input', 'file inputs')} replaced by a marker`);
  if (index > 0 && !t.cacheStable && t.cachedPrefixTokens !== undefined)
    causes.push(`the cache is rewritten after its first ${compact(t.cachedPrefixTokens)} of ${compact(t.projectedTokens)} tokens`);
  else if (index > 0 && t.cacheStable) causes.push('the cached prefix held');
  const readBack = t.cost?.[lens.costModel]?.readBack ?? 0;
  if (readBack > 0) causes.push(`${money(readBack, lens)} to read back ${plural(t.missed, 'missed identifier', 'missed identifiers')}`);
  let outcome = '';
  if (h.withReadBacks > h.raw) {
    const k = paybackTurn(turns, index, lens.costModel);
    outcome = k === undefined ? '; it never pays back in this session' : `; it pays back by turn ${k + 1}`;
  } else if (h.withReadBacks < h.raw) outcome = `; saves ${money(h.raw - h.withReadBacks, lens)}`;
  return `${lead}${causes.length ? `: ${causes.join(', ')}` : ''}${outcome}.`;
}

/**
 * The plain sentence above the header: "The agent produced 2.6M tokens of context over 54 calls;
 * Spillway sent 1.8M: 5 outputs became previews with a handle, 26 old results were cleared, 3 file
 * inputs were replaced by a marker. Click a turn to see what the model saw."
 */
export function sessionSentence(turns: readonly TurnSummary[]): string {
  let original = 0;
  let projected = 0;
  let previews = 0;
  let references = 0;
  let clears = 0;
  let inputs = 0;
  let failed = 0;
  for (const t of turns) {
    if (!t) continue;
    original += t.originalTokens;
    projected += t.projectedTokens;
    previews += t.previews ?? 0;
    references += t.references ?? 0;
    clears += t.clears ?? 0;
    inputs += t.inputs ?? 0;
    if (t.error) failed++;
  }
  const did: string[] = [];
  if (previews > 0) did.push(`${plural(previews, 'output became a preview', 'outputs became previews')} with a handle`);
  if (references > 0) did.push(`${plural(references, 'output became a reference', 'outputs became references')} to an earlier one`);
  if (clears > 0) did.push(`${plural(clears, 'old result was', 'old results were')} cleared`);
  if (inputs > 0) did.push(`${plural(inputs, 'file input was', 'file inputs were')} replaced by a marker`);
  const what = did.length ? `: ${did.join(', ')}` : ', every result whole (nothing was over its limit)';
  const failures = failed ? ` ${plural(failed, 'call', 'calls')} failed upstream.` : '';
  return (
    `The agent produced ${compact(original)} tokens of context over ${plural(turns.length, 'call', 'calls')}; ` +
    `Spillway sent ${compact(projected)}${what}.${failures} Click a turn to see what the model saw.`
  );
}

/**
 * Whether the host can replay the session as sent to the provider the picker prices it at
 * (`session/routed`): a replayed session lists the providers the engine holds prices for.
 */
export function routableTo(session: { routes?: string[] | undefined }, lens: CostLens): lens is CostLens & { price: Price } {
  return !!lens.price && !!session.routes?.includes(lens.costModel);
}

/**
 * When the picker prices a session at a model another provider serves: the figures are the
 * projection made for the session's own provider, priced there. Sent to that provider, the engine
 * would have held its decisions to that provider's prices: the header offers to replay it so when the
 * host can (`routableTo`), else `spillway replay --each-route` measures it (docs/cli.md). Undefined
 * when the session's own price model is unknown or is the one shown.
 */
export function pricedElsewhere(
  session: { model?: string | undefined; costModel?: string | undefined; routes?: string[] | undefined },
  lens: CostLens,
): string | undefined {
  if (!session.costModel || !lens.price || lens.costModel === session.costModel) return undefined;
  const said = `Priced at ${lens.price.model}: the projection made for ${session.model ?? `a ${session.costModel} model`}, billed under ${lens.costModel}'s cache rules. Sent to ${lens.price.model}, Spillway would decide under its prices instead`;
  return routableTo(session, lens) ? `${said}.` : `${said}: \`spillway replay --each-route\` measures that.`;
}
