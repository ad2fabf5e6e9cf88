/**
 * The models the inspector can price a session's cost at, in dollars: the session's own model first
 * when its price is known (src/replay/prices.ts), then a few common ones for the picker, so a session
 * whose model is unknown (or priced differently) can still be read in money.
 */
import { costModelFor, type Price, type SessionInfo } from '../../protocol';
import { familyOf, modelPrice } from '../../replay/prices';

/** A session's model and the cost record its family bills under, for its SessionInfo (nothing when unknown). */
export function modelFields(model: string | undefined): Pick<SessionInfo, 'model' | 'costModel'> {
  if (!model) return {};
  const family = familyOf(model);
  return { model, ...(family ? { costModel: costModelFor(family) } : {}) };
}

/** The picker's choices beyond the session's own model: current models of each price family the replay bills. */
const PICKER_MODELS = [
  'claude-sonnet-4-5',
  'claude-opus-4-5',
  'claude-haiku-4-5',
  'gpt-5',
  'gpt-5-mini',
  'gpt-4o',
  'deepseek-chat',
  'gemini-3-pro-preview',
] as const;

export function priceChoices(sessionModel: string | undefined): Price[] {
  const out: Price[] = [];
  const seen = new Set<string>();
  for (const name of [sessionModel, ...PICKER_MODELS]) {
    const p = modelPrice(name);
    if (!p || seen.has(p.model)) continue;
    seen.add(p.model);
    out.push({ model: p.model, family: p.family, inputPerMTok: p.inputPerMTok, source: p.source });
  }
  return out;
}
