/**
 * Compactions: what the projection does to the moments a long session's agent replaced its history
 * by a summary. Claude Code, Codex and pi compact when the context the provider reports passes a
 * threshold; behind the proxy the provider reports the projected context, so a projection that
 * keeps the context under the threshold postpones the compaction, and one that keeps it under to
 * the session's end removes it (with its summarising call, the cache it rewrites, and whatever the
 * summary loses).
 *
 * The readers list each compaction the log records (`Transcript.compactions`) and keep the full
 * history across it, so the replay's calls after a compaction are the requests the agent would have
 * sent had it not compacted. Per compaction this module reports, at the first call after it, the
 * raw context against the projected one, and whether the projection stays under the agent's
 * threshold from there to the session's end. The threshold rules, each from the agent's source,
 * are in `thresholdOf` and docs/replay-and-cost.md (*Compactions*).
 *
 * The replay counts tokens with its own tokenizer and the agent's captured prelude; the agent
 * counted with the provider's usage. Both count the same history at the session's first
 * compaction, so the projection is put on the agent's scale by their ratio there. No agent's log
 * records the summarising call's usage, so a compaction's cost is not priced; its summary's size
 * is reported.
 */
import type { Transcript, TranscriptCompaction } from './readers';

/** One compaction of a session, as the projection would have met it. */
export interface CompactionReport {
  /**
   * the call the compaction came before (the first the agent sent from its summary; the last call
   * when the session ends at the compaction), replayed with the full history: what the agent would
   * have sent had it not compacted
   */
  call: number;
  /** the line of the compaction record in the log */
  line: number;
  trigger: 'auto' | 'manual';
  /** the log does not say; the trigger is read from the agent's rule (over the threshold: auto) */
  triggerInferred?: true;
  /** the replay's count of that call's request, raw history and projection */
  rawTokens: number;
  projectedTokens: number;
  /** the agent's own count when it compacted, when its log records one */
  agentTokens?: number;
  /** the projected context on the agent's scale (the agent's count over the replay's at the first compaction) */
  projectedAgentTokens: number;
  /** the context at which the agent compacts on its own, and the rule it comes from */
  threshold: number;
  rule: string;
  /**
   * an automatic compaction that the projection keeps under the threshold from this call to the
   * session's end: behind the proxy the agent would not have compacted (a manual one never is)
   */
  postponed: boolean;
  /** the first call from this one on whose projection reaches the threshold (absent: none does, or manual) */
  reachedAt?: number;
  /** tokens of the summary the agent continued from (the summarising call's output), chars / 4 */
  summaryTokens: number;
}

/** Claude Code's context window for the models it runs by default (the 1M-context variants are opt-in). */
const CLAUDE_CODE_WINDOW = 200_000;
/** Claude Code's margin under the effective window (cli.js `13000`, quoted in anthropics/claude-code#12004). */
const CLAUDE_CODE_MARGIN = 13_000;
/**
 * The output Claude Code reserves from the window. Its source is not published: assumed from the
 * autocompact buffer its `/context` shows (45,000 before 2.1, 33,000 in 2.1; jarrodwatts/claude-hud#184)
 * less the margin; the corpus' automatic compactions fit (155,121 and 155,548 under 2.0.76, 174,834 under 2.1.29).
 */
const CLAUDE_CODE_RESERVE_2_1 = 20_000;
const CLAUDE_CODE_RESERVE_2_0 = 32_000;
/** Codex: the context window of the gpt-5 and codex- families, and the share of it at which it compacts (model_family.rs). */
const CODEX_WINDOW = 272_000;
const CODEX_SHARE = 0.9;
/** pi: `reserveTokens` of DEFAULT_COMPACTION_SETTINGS (packages/coding-agent/src/core/compaction). */
const PI_RESERVE = 16_384;

/**
 * Copilot's chat in VS Code summarises when a request would pass 85% of the model's prompt budget
 * less its tool declarations (vscode-copilot-chat agentIntent.ts `budgetThreshold`). The budget is
 * the model's `max_prompt_tokens` as Copilot's endpoint lists it, not in the session file: 128,000
 * assumed, and the tools' share (not in the file either) left out.
 */
const COPILOT_PROMPT_BUDGET = 128_000;
const COPILOT_SHARE = 0.85;

/** Major and minor of a version string ('2.1.14' → [2, 1]); undefined when it does not start with them. */
function majorMinor(v: string | undefined): [number, number] | undefined {
  const m = v === undefined ? null : /^(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** pi's context window for a model (packages/ai's models.generated.ts: Claude 200,000; GPT-5 400,000). */
function piWindow(model: string | undefined): { window: number; known: boolean } {
  if (model !== undefined && /claude/i.test(model)) return { window: 200_000, known: true };
  if (model !== undefined && /^gpt-5/i.test(model)) return { window: 400_000, known: true };
  return { window: 200_000, known: false };
}

/**
 * The context at which the agent compacts on its own, with the rule it comes from. Claude Code: its
 * window less the output it reserves and a 13,000-token margin (167,000 from 2.1, 155,000 before;
 * the reserve is assumed, see CLAUDE_CODE_RESERVE_2_1). Codex: 90% of the
 * model's context window (codex-rs model_family.rs `default_auto_compact_limit`; 272,000 for the
 * gpt-5 and codex- families). Copilot in VS Code: 85% of the model's prompt budget (assumed, see
 * COPILOT_PROMPT_BUDGET). pi (and every other agent): the window less `reserveTokens` (16,384 by default).
 */
export function thresholdOf(
  format: Transcript['source'],
  c: Pick<TranscriptCompaction, 'model' | 'version' | 'contextWindow'>,
): {
  threshold: number;
  rule: string;
} {
  if (format === 'claude-code') {
    const v = majorMinor(c.version);
    const before21 = v !== undefined && (v[0] < 2 || (v[0] === 2 && v[1] < 1));
    const reserve = before21 ? CLAUDE_CODE_RESERVE_2_0 : CLAUDE_CODE_RESERVE_2_1;
    return {
      threshold: CLAUDE_CODE_WINDOW - reserve - CLAUDE_CODE_MARGIN,
      rule: `Claude Code ${before21 ? 'before 2.1' : '2.1'}: 200,000 − ${reserve.toLocaleString('en-US')} reserved for output (assumed) − 13,000`,
    };
  }
  if (format === 'codex') {
    const family = c.model === undefined || /^(gpt-5|codex-)/i.test(c.model);
    const window = family || c.contextWindow === undefined ? CODEX_WINDOW : c.contextWindow;
    return {
      threshold: Math.floor(window * CODEX_SHARE),
      rule: `Codex: 90% of the ${window.toLocaleString('en-US')}-token context window`,
    };
  }
  if (format === 'copilot-chat') {
    return {
      threshold: Math.floor(COPILOT_PROMPT_BUDGET * COPILOT_SHARE),
      rule: `Copilot in VS Code: 85% of the model's prompt budget (${COPILOT_PROMPT_BUDGET.toLocaleString('en-US')} assumed, its tools' share left out)`,
    };
  }
  const { window, known } = piWindow(c.model);
  return {
    threshold: window - PI_RESERVE,
    rule: `pi: ${window.toLocaleString('en-US')}-token window${known ? '' : ' (assumed)'} − 16,384 reserved`,
  };
}

/** What the report needs of each replayed call. */
interface CallTokens {
  originalTokens: number;
  projectedTokens: number;
}

/** The compactions of a replayed session, or [] when its log records none. */
export function compactionReports(t: Pick<Transcript, 'source' | 'compactions'>, calls: readonly CallTokens[]): CompactionReport[] {
  const list = t.compactions ?? [];
  if (!list.length || !calls.length) return [];
  const at = (c: TranscriptCompaction) => Math.min(c.calls, calls.length - 1);
  // the agent's scale: its count over the replay's where both count the same history (the first compaction)
  const first = list[0]!;
  const firstRaw = calls[at(first)]!.originalTokens;
  const scale = first.tokens !== undefined && firstRaw > 0 ? first.tokens / firstRaw : 1;
  return list.map((c) => {
    const call = at(c);
    const { threshold, rule } = thresholdOf(t.source, c);
    const logged = c.trigger;
    const trigger = logged ?? ((c.tokens ?? calls[call]!.originalTokens * scale) > threshold ? 'auto' : 'manual');
    let reachedAt: number | undefined;
    if (trigger === 'auto') {
      for (let j = call; j < calls.length && reachedAt === undefined; j++)
        if (calls[j]!.projectedTokens * scale >= threshold) reachedAt = j;
    }
    return {
      call,
      line: c.line,
      trigger,
      ...(logged === undefined ? { triggerInferred: true as const } : {}),
      rawTokens: calls[call]!.originalTokens,
      projectedTokens: calls[call]!.projectedTokens,
      ...(c.tokens !== undefined ? { agentTokens: c.tokens } : {}),
      projectedAgentTokens: Math.round(calls[call]!.projectedTokens * scale),
      threshold,
      rule,
      postponed: trigger === 'auto' && reachedAt === undefined,
      ...(reachedAt !== undefined ? { reachedAt } : {}),
      summaryTokens: Math.ceil(c.summary.length / 4),
    };
  });
}

/** One line for people: how many compactions, and what the projection did to them. */
export function compactionLine(reports: readonly CompactionReport[]): string | undefined {
  if (!reports.length) return undefined;
  const k = (n: number) => `${Math.round(n / 1000)}k`;
  const each = reports
    .map(
      (r) =>
        `call ${r.call} ${r.trigger}${r.triggerInferred ? '?' : ''} ${k(r.agentTokens ?? r.rawTokens)}→${k(r.projectedAgentTokens)}` +
        (r.trigger === 'manual' ? '' : r.postponed ? ' postponed' : r.reachedAt === r.call ? ' kept' : ` postponed to call ${r.reachedAt}`),
    )
    .join('; ');
  const postponed = reports.filter((r) => r.postponed).length;
  return `compactions: ${reports.length}, ${postponed} postponed past the end (threshold ${k(reports[0]!.threshold)}; raw→sent): ${each}`;
}

/** One line for a folder of sessions: its compactions, pooled, by what the projection did to them. */
export function pooledCompactionLine(perSession: readonly (readonly CompactionReport[])[]): string | undefined {
  const all = perSession.flat();
  if (!all.length) return undefined;
  const auto = all.filter((r) => r.trigger === 'auto');
  const past = auto.filter((r) => r.postponed).length;
  const later = auto.filter((r) => !r.postponed && r.reachedAt !== r.call).length;
  const sessions = perSession.filter((l) => l.length > 0).length;
  return (
    `compactions: ${all.length} in ${sessions} session${sessions === 1 ? '' : 's'}, ${auto.length} automatic: ` +
    `${past} postponed past the end, ${later} to a later call, ${auto.length - past - later} kept`
  );
}
