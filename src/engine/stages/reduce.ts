/**
 * One reduction: the marker that replaces one tool result, and the store write that keeps it recoverable.
 *
 * Why: every stage ends the same way once it has picked a result: preview the text (or take a
 * custom reducer's preview), name it by its handle, render the marker in the configured style, and
 * give up when the marker would not be shorter than the result, in characters and in tokens. Doing
 * that in one place keeps every marker bounded (`previewChars` plus the header budget), every
 * reduction a saving, and every reduction recoverable.
 *
 * Where it sits: called by the stages (offload.ts, window.ts, budget.ts, clear.ts) for each result
 * they reduce. It decides and writes nothing itself: it returns the decision and the write, and
 * the stage puts both in its outcome for the run (../run.ts) to apply.
 */
import { handleFor } from '../handle';
import { renderMarker, type SameAs } from '../markers';
import { cutBytes, preview } from '../preview';
import { isEstimate } from '../tokens';
import type { StageName } from '../types';
import { LONE_SURROGATE, owned, type Decision, type Draft, type Results, type StoreWrite } from './results';
import { outputLines } from '../previews/envelope';
import { hintForResult } from '../previews';

export type Reduced = { decision: Decision; write: StoreWrite } | 'no-gain' | 'unstorable';

/**
 * The decision to replace result `i` by a marker. 'no-gain' when the marker would not be shorter
 * than the result, in characters and in tokens (no stage tries it again in this projection); 'unstorable' when the text holds a
 * lone surrogate, which cannot be stored as UTF-8 and read back the same (kept verbatim).
 */
export function reduceResult(
  results: Results,
  i: number,
  stage: StageName,
  reasonText: string,
  customPreview: string | undefined,
  cap: number | undefined,
  current: Decision | undefined,
  sameAs?: SameAs,
): Reduced {
  const r = results.list[i]!;
  const text = results.text(i);
  // names and reasons outlive this call (sessions, stores, callers' reduction lists): copies, so
  // they do not keep this request's whole body alive through V8's sliced strings
  const tool = owned(r.tool),
    callId = owned(r.callId),
    reason = owned(reasonText);
  if (LONE_SURROGATE.test(text)) return 'unstorable';
  const cfg = results.cfg;
  const counter = results.counter;
  const unit = cfg.capUnit;
  const bytes = Buffer.byteLength(text, 'utf8');
  let pv: string;
  const hint = () => hintForResult(results.req, r);
  // a clear passes '' (a one-line marker), or no preview for a read kept whole until it is cleared
  if (customPreview !== undefined) pv = customPreview.length > cfg.previewChars ? customPreview.slice(0, cfg.previewChars) : customPreview;
  else
    pv =
      unit === 'bytes'
        ? cutBytes(preview(cfg.preview, text, cfg.previewChars, hint()), cfg.previewChars)
        : preview(cfg.preview, text, cfg.previewChars, hint());
  if (customPreview === undefined && pv.length > cfg.previewChars) pv = pv.slice(0, cfg.previewChars);
  const handle = handleFor(text);
  const tokens = counter.count(text);
  const omitted = unit === 'bytes' ? bytes - Buffer.byteLength(pv, 'utf8') : text.length - pv.length;
  const info = {
    style: cfg.markerStyle,
    language: cfg.language,
    stage,
    tool,
    callId,
    handle,
    chars: text.length,
    bytes,
    lines: outputLines(text),
    tokens,
    tokensEstimated: isEstimate(counter, text.length),
    preview: pv,
    omitted,
    unit,
    cap,
    ...(results.readTool ? { readTool: results.readTool } : {}),
    ...(sameAs ? { sameAs: { tool: owned(sameAs.tool), callId: owned(sameAs.callId), ...(sameAs.changes ? { changes: true } : {}) } } : {}),
  } as const;
  const replacement = renderMarker(info);
  if (replacement.length >= text.length) return 'no-gain';
  // shorter in characters is not enough: a handle's hex digits take more tokens per character than
  // prose or code (a 650-character read of 149 tokens became a dedupe reference of 154). A reduction
  // must send fewer tokens than what it replaces, in every stage (the guarantee's ledger and the
  // cost a user sees count tokens): the result as sent, or the marker already in its place
  const projectedTokens = counter.count(replacement);
  if (projectedTokens >= Math.min(tokens, results.resultTokens(i, current))) return 'no-gain';
  const decision: Decision = {
    stage,
    replacement,
    handle,
    reason,
    tool,
    callId,
    originalChars: text.length,
    originalTokens: tokens,
    projectedTokens,
  };
  decision.partsTokens = results.partsTokens(i, current);
  return { decision, write: { handle, text, meta: { tool, callId, stage, chars: text.length, bytes, lines: info.lines, tokens } } };
}

/** Reduces result `i` on a stage's draft: records the decision, or that a marker would not pay. */
export function reduceOn(
  draft: Draft,
  i: number,
  stage: StageName,
  reason: string,
  customPreview: string | undefined,
  cap: number | undefined,
  sameAs?: SameAs,
): boolean {
  const out = reduceResult(draft.results, i, stage, reason, customPreview, cap, draft.decisions[i], sameAs);
  if (out === 'no-gain') draft.refuse(i);
  if (typeof out === 'string') return false;
  draft.record(i, out.decision, [out.write]);
  return true;
}
