/**
 * Stage 3, budget: every tool result but the newest is held to its tool's cap; a tool whose cap is
 * `"unlimited"` stays verbatim (seed 001, clark_agent's ToolResultBudget).
 *
 * Why: offload already caps a result when it arrives, but a preset may leave offload off or let the
 * latest round stay verbatim above the cap (`offload.latestCap`); once a newer result exists, the
 * older one has been read and is held to the cap like the rest. The newest result is exempt: it is
 * what the model is about to read.
 *
 * Where it sits: after window (window.ts), on what offload and window left verbatim; clear
 * (clear.ts) comes last.
 */
import { formatInt as fmt } from '../format-number';
import { reduceOn } from './reduce';
import { Draft, type Ledger, type Results, type StageOutcome } from './results';

export function budget(results: Results, ledger: Ledger): StageOutcome {
  const draft = new Draft(results, ledger);
  const unit = results.cfg.capUnit;
  const newest = results.length - 1;
  for (let i = 0; i < newest; i++) {
    if (!draft.open(i)) continue;
    const r = results.list[i]!;
    const cap = results.capOf(i);
    const size = results.overCap(i, cap);
    if (size !== undefined)
      reduceOn(
        draft,
        i,
        'budget',
        `${fmt(size)} ${unit} over ${r.tool}'s cap of ${fmt(cap as number)} (not the newest result)`,
        undefined,
        cap as number,
      );
  }
  return draft.outcome;
}
