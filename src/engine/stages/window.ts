/**
 * Stage 2, window: results in turns older than the last `window.recentTurns` user messages, longer
 * than `window.maxOutputChars` and (when `window.tools` is set) of a listed tool, become a preview
 * (seed 000, the OpenAI Agents SDK's ToolOutputTrimmer).
 *
 * Why: old turns matter less to the next reply than recent ones, so their long outputs can shrink
 * to what a preview keeps (errors, paths, the tail). It runs after offload because its boundary
 * moves with every new user message: it changes results already sent, which the provider's prompt
 * cache pays for; offload's decisions are on arrival and cost nothing later.
 *
 * Where it sits: after offload (offload.ts), on the results offload left verbatim; budget
 * (budget.ts) comes next.
 */
import { toolListed } from '../config';
import { formatInt as fmt } from '../format-number';
import { reduceOn } from './reduce';
import { Draft, type Ledger, type Results, type StageOutcome } from './results';

export function window(results: Results, ledger: Ledger): StageOutcome {
  const draft = new Draft(results, ledger);
  const { recentTurns, maxOutputChars, tools } = results.cfg.window;
  const kinds = results.req.kinds;
  // the boundary is the Nth user message from the end; fewer than N means nothing is old
  let boundary = 0,
    seen = 0;
  for (let i = kinds.length - 1; i >= 0; i--) {
    if (kinds[i] === 'user' && ++seen >= recentTurns) {
      boundary = i;
      break;
    }
  }
  if (boundary === 0) return draft.outcome;
  for (let i = 0; i < results.length; i++) {
    const r = results.list[i]!;
    if (r.item >= boundary || !draft.open(i)) continue;
    if (tools.length && !toolListed(tools, r.names)) continue;
    if (results.rawLen[i]! <= maxOutputChars) continue;
    const n = results.text(i).length;
    if (n > maxOutputChars)
      reduceOn(draft, i, 'window', `${fmt(n)} chars in a turn older than the last ${recentTurns} user messages`, undefined, maxOutputChars);
  }
  return draft.outcome;
}
