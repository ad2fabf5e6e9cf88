/**
 * Stage 4, clear: when the projected request exceeds `clear.triggerTokens`, the oldest results
 * outside the last `clear.keep` are cleared (a one-line marker with the handle) until at least
 * `clear.clearAtLeastTokens` are freed and the request is back under the trigger;
 * `clear.excludeTools` are never cleared, and `clear.clearToolInputs` also clears the calls' inputs
 * (seed 003's clear, Anthropic's context editing).
 *
 * Why last: it is the most disruptive reduction. A clear changes the request in the middle, so the
 * provider writes everything after the first cleared result to its cache again; it is therefore
 * big and rare, fires only when it frees enough (and, with `clear.schedule: payback`, only when the
 * saving over the rest of the session pays for that rewrite: ../clear-schedule.ts), and takes stale
 * results first (`clear.staleFirst`: stale.ts). It may also clear a result an earlier stage
 * reduced, replacing that marker.
 *
 * Stickiness without state: the stage replays the session inside the request. Every run of
 * assistant items marks a model call the agent made with the items before it; the stage walks
 * those calls in order and clears at the call where the projected size first crossed the trigger,
 * as it would have live. Decisions for an earlier call never depend on later items, so the
 * projected prefix stays byte-stable from call to call.
 *
 * Where it sits: after budget (budget.ts), last; it counts tokens as projected by every earlier
 * decision, file inputs (inputs.ts) included.
 */
import { toolListed } from '../config';
import { clearPaysBack } from '../clear-schedule';
import { formatInt as fmt } from '../format-number';
import { handleFor } from '../handle';
import { decodeString } from '../json';
import { renderMarker } from '../markers';
import { reduceResult } from './reduce';
import { Draft, owned, type Ledger, type Results, type StageOutcome, type StoreWrite } from './results';
import { countLines } from '../lines';
import { staleAt as findStale } from './stale';

export function clear(results: Results, ledger: Ledger): StageOutcome {
  const draft = new Draft(results, ledger);
  const c = results.cfg.clear;
  const kinds = results.req.kinds;
  const list = results.list;
  const n = results.length;
  const itemTok = results.projectedItemTokens(ledger);
  const tokensNow = (i: number) => results.resultTokens(i, draft.decisions[i]);
  const gains = new Array<number | undefined>(n);
  /** tokens clearing result i would free, estimated before deciding */
  const gain = (i: number): number => (gains[i] ??= Math.max(0, tokensNow(i) - clearedMarkerTokens(results, i)));
  const clearable = (i: number): boolean =>
    !results.fixedAsIs(i) && !draft.noGain[i] && draft.decisions[i]?.stage !== 'clear' && !toolListed(c.excludeTools, list[i]!.names);
  // every model call the transcript shows: before each run of assistant items, and this one
  const checkpoints: number[] = [];
  kinds.forEach((k, i) => {
    if (k === 'assistant' && (i === 0 || kinds[i - 1] !== 'assistant')) checkpoints.push(i);
  });
  checkpoints.push(kinds.length);
  // a round is one model call (a run of assistant items: a Responses turn is a message plus one
  // function_call item per parallel call), not each assistant item
  const rounds = checkpoints.slice(0, -1);
  let running = results.fixedTokens();
  let upTo = 0; // items counted into `running`
  let before = 0; // results in items before the checkpoint (results are in item order)
  let roundsBefore = 0;
  let cursor = 0; // every result before it is cleared, ineligible or already tried
  let stale: number[] | undefined;
  // what clearing every eligible result before protectedFrom would free, kept as the window moves
  let freeSum = 0,
    freeTo = 0;
  const counted = new Uint8Array(n);
  let callNo = -1;
  for (const cp of checkpoints) {
    callNo++;
    while (upTo < cp) running += itemTok[upTo++]!;
    while (before < n && list[before]!.item < cp) before++;
    while (roundsBefore < rounds.length && rounds[roundsBefore]! < cp) roundsBefore++;
    if (running <= c.triggerTokens) continue;
    const protectedFrom = c.keepUnit === 'results' ? before - c.keep : firstInLastRounds(results, c.keep, before, rounds, roundsBefore);
    let freed = 0;
    const enough = () => c.clearAtLeastTokens !== 'all' && freed >= c.clearAtLeastTokens && running - freed <= c.triggerTokens;
    const clearOne = (i: number, why: string) => {
      const was = tokensNow(i);
      if (counted[i]) {
        freeSum -= gain(i);
        counted[i] = 0;
      }
      if (clearResult(draft, i, why)) {
        const saved = was - tokensNow(i);
        freed += saved;
        itemTok[list[i]!.item]! -= saved;
      }
    };
    // as Anthropic's context editing does: a clear that cannot free clearAtLeastTokens is not
    // worth the cache it breaks, so it waits until enough is clearable
    if (c.clearAtLeastTokens !== 'all' && c.clearAtLeastTokens > 0) {
      for (; freeTo < protectedFrom; freeTo++) {
        if (clearable(freeTo)) {
          freeSum += gain(freeTo);
          counted[freeTo] = 1;
        }
      }
      if (freeSum < c.clearAtLeastTokens) continue;
    }
    // payback schedule: plan the clear first, fire only when it pays back its cache rewrite
    if (c.schedule === 'payback') {
      stale ??= c.staleFirst ? findStale(results.req) : undefined;
      const plan = planClear(cursor, protectedFrom, cp, running, stale);
      if (
        !plan ||
        !clearPaysBack({
          running,
          before: itemTok.slice(0, list[plan.first]!.item).reduce((a, b) => a + b, 0),
          freed: plan.freed,
          calls: callNo + 1,
        })
      )
        continue;
    }
    const over = `context at ${fmt(running)} tokens over the trigger of ${fmt(c.triggerTokens)}`;
    // stale results first: the file was read or written again later, so this copy is outdated
    if (c.staleFirst) {
      stale ??= findStale(results.req);
      for (let i = cursor; i < protectedFrom && !enough(); i++) {
        if (stale[i]! < cp && clearable(i)) clearOne(i, `${over}; stale: the same file or command was used again later`);
      }
    }
    for (let i = cursor; i < protectedFrom; i++) {
      if (enough()) break;
      if (clearable(i)) clearOne(i, over);
      if (i === cursor) cursor++;
    }
    running -= freed;
  }
  return draft.outcome;

  /**
   * What a clear at checkpoint `cp` would clear, in the order the stage clears (stale first, then
   * oldest), without deciding anything: the first result it touches and the tokens it frees.
   */
  function planClear(
    cursor: number,
    protectedFrom: number,
    cp: number,
    running: number,
    stale: number[] | undefined,
  ): { first: number; freed: number } | undefined {
    let freed = 0,
      first = Number.POSITIVE_INFINITY;
    const enough = () => c.clearAtLeastTokens !== 'all' && freed >= c.clearAtLeastTokens && running - freed <= c.triggerTokens;
    const planned = new Set<number>();
    const take = (i: number) => {
      planned.add(i);
      freed += gain(i);
      first = Math.min(first, i);
    };
    if (stale) for (let i = cursor; i < protectedFrom && !enough(); i++) if (stale[i]! < cp && clearable(i)) take(i);
    for (let i = cursor; i < protectedFrom && !enough(); i++) if (!planned.has(i) && clearable(i)) take(i);
    return planned.size ? { first, freed } : undefined;
  }
}

/** Clears result i on the draft (and its call's input with `clear.clearToolInputs`). */
function clearResult(draft: Draft, i: number, why: string): boolean {
  const results = draft.results;
  const out = reduceResult(results, i, 'clear', why, '', undefined, draft.decisions[i]);
  if (out === 'no-gain') draft.refuse(i);
  if (typeof out === 'string') return false;
  const writes: StoreWrite[] = [out.write];
  if (results.cfg.clear.clearToolInputs) {
    const input = clearInput(draft, i, out.decision.handle);
    if (input) {
      out.decision.inputReplacement = input.replacement;
      writes.push(input.write);
    }
  }
  draft.record(i, out.decision, writes);
  return true;
}

/** What replaces a cleared call's input, and the write that keeps it; undefined keeps the input. */
function clearInput(draft: Draft, i: number, resultHandle: string): { replacement: string; write: StoreWrite } | undefined {
  const { req } = draft.results;
  const r = draft.results.list[i]!;
  const call = r.call ?? req.calls.get(r.callId);
  const input = call?.input;
  if (!input || draft.ledger.inputs.has(input.start)) return undefined;
  const raw = req.text.slice(input.start, input.end);
  const original = input.kind === 'string' ? decodeString(req.text, input) : raw;
  const handle = handleFor(original);
  const note = `input cleared by spillway; spillway read ${handle} (result: ${resultHandle})`;
  const replacement =
    input.kind === 'object'
      ? JSON.stringify({ spillway_cleared: note })
      : JSON.stringify(input.kind === 'string' && original.trimStart().startsWith('{') ? JSON.stringify({ spillway_cleared: note }) : note);
  if (replacement.length >= raw.length) return undefined;
  const meta = {
    tool: owned(r.tool),
    callId: owned(r.callId),
    stage: 'input' as const,
    chars: original.length,
    bytes: Buffer.byteLength(original, 'utf8'),
    lines: countLines(original),
    tokens: draft.results.counter.count(original),
  };
  return { replacement, write: { handle, text: original, meta } };
}

/** What a cleared marker for this result costs, from a marker rendered with sizes of its order. */
function clearedMarkerTokens(results: Results, i: number): number {
  const r = results.list[i]!;
  const rawLen = results.rawLen[i]!;
  const cfg = results.cfg;
  const text = `${rawLen}`;
  return results.counter.count(
    renderMarker({
      style: cfg.markerStyle,
      language: cfg.language,
      stage: 'clear',
      tool: r.tool,
      callId: r.callId,
      handle: 'sw_000000000000000000000000',
      chars: rawLen,
      bytes: rawLen,
      lines: text.length * 100,
      tokens: rawLen,
      tokensEstimated: false,
      preview: '',
      omitted: rawLen,
      unit: cfg.capUnit,
      ...(results.readTool ? { readTool: results.readTool } : {}),
    }),
  );
}

/** Index of the first result inside the last `keep` assistant rounds, among the first `before` results. */
function firstInLastRounds(results: Results, keep: number, before: number, rounds: number[], roundsBefore: number): number {
  if (keep === 0) return before;
  if (roundsBefore < keep) return 0;
  const from = rounds[roundsBefore - keep]!;
  for (let i = 0; i < before; i++) if (results.list[i]!.item > from) return i;
  return before;
}
