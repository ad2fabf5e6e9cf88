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
import { toolListed, type SpillwayConfig } from '../config';
import { clearPaysBack, expectedRemainingCalls } from '../clear-schedule';
import { CostLedger, stopped, type CacheRead, type ReadBack } from '../guarantee';
import { formatInt as fmt } from '../format-number';
import { handleFor } from '../handle';
import { decodeString } from '../json';
import { renderMarker } from '../markers';
import { reduceResult, type Reduced } from './reduce';
import { Draft, owned, type InputDecision, type Ledger, type Results, type StageOutcome, type StoreWrite } from './results';
import { countLines } from '../lines';
import type { TokenCounter } from '../tokens';
import { staleAt as findStale } from './stale';
import { InUse } from './in-use';
import { replaceInput } from './inputs';
import { keptRead } from './offload';
import { ClearPlanner } from './clear-planner';
import { PrefixSums } from './prefix-sums';

export function clear(results: Results, ledger: Ledger): StageOutcome {
  const draft = new Draft(results, ledger);
  const c = results.cfg.clear;
  const kinds = results.req.kinds;
  const list = results.list;
  const n = results.length;
  const itemTok = results.projectedItemTokens(ledger);
  const tokensNow = (i: number) => results.resultTokens(i, draft.decisions[i]);
  const gains = new Array<number | undefined>(n);
  // file inputs the clear replaces with their call's result (`inputs.when: clear`), found once
  // (not with reduce after use on: its accounting of what each call saw whole does not cover inputs
  // a clear replaces, and the guarantee property found sessions over raw with both; inputs are then
  // replaced on arrival: inputs.ts)
  const inputsByClear = results.cfg.inputs.enabled && results.cfg.inputs.when === 'clear' && !deferredToClear(results.cfg);
  const inputs = new Map<number, InputClear | null>();
  const inputOf = (i: number): InputClear | undefined => {
    if (!inputsByClear) return undefined;
    let x = inputs.get(i);
    if (x === undefined) {
      const call = list[i]!.call ?? results.req.calls.get(list[i]!.callId);
      const d = draft.decisions[i];
      x =
        call?.input && !ledger.inputs.has(call.input.start) && !d?.inputReplacement
          ? (replaceInput(results, call, results.callOf(call.item)) ?? null)
          : null;
      inputs.set(i, x);
    }
    return x ?? undefined;
  };
  /** tokens clearing result i would free, estimated before deciding (its file input's too) */
  // a read left whole while in use is cleared to the preview it would have had on arrival: its marker is
  // counted as it will be sent (a one-line marker's count would overstate what clearing it frees)
  const previewTokens = new Map<number, number>();
  const markerTokensOf = (i: number): number => {
    if (draft.decisions[i] || !keptRead(results, i)) return clearedMarkerTokens(results, i);
    let t = previewTokens.get(i);
    if (t === undefined) {
      const out = reduceResult(results, i, 'clear', '', undefined, results.capOf(i) as number, undefined);
      t = typeof out === 'string' ? tokensNow(i) : out.decision.projectedTokens;
      previewTokens.set(i, t);
    }
    return t;
  };
  const gain = (i: number): number =>
    (gains[i] ??=
      Math.max(0, tokensNow(i) - markerTokensOf(i)) +
      (inputOf(i) ? inputOf(i)!.decision.originalTokens - inputOf(i)!.decision.projectedTokens : 0));
  // a report tool's result is kept unless the user capped that tool (config.ts, REPORT_TOOLS)
  // (the list is checked first: it is short, and most results are of no report tool)
  const reportKept = (i: number): boolean => toolListed(results.cfg.reportTools, list[i]!.names) && results.capOf(i) === 'unlimited';
  // results the agent referred to (or received) in its last clear.inUseCalls calls: still in use
  const inUseOf = () =>
    c.inUseCalls > 0
      ? new InUse(
          results,
          c.inUseCalls,
          (i) => !results.fixedAsIs(i),
          checkpoints,
          (i) => {
            const input = inputOf(i);
            return input ? input.write.text : undefined;
          },
        )
      : undefined;
  const clearable = (i: number): boolean =>
    !results.fixedAsIs(i) &&
    !draft.noGain[i] &&
    draft.decisions[i]?.stage !== 'clear' &&
    !toolListed(c.excludeTools, list[i]!.names) &&
    !reportKept(i) &&
    !inUse?.now(i);
  // every model call the transcript shows: before each run of assistant items, and this one
  const checkpoints: number[] = [];
  kinds.forEach((k, i) => {
    if (k === 'assistant' && (i === 0 || kinds[i - 1] !== 'assistant')) checkpoints.push(i);
  });
  checkpoints.push(kinds.length);
  // a round is one model call (a run of assistant items: a Responses turn is a message plus one
  // function_call item per parallel call), not each assistant item
  const rounds = checkpoints.slice(0, -1);
  const fixed = results.fixedTokens();
  const originalTok = results.originalItemTokens();
  // results an earlier call of the session cleared (recalled): as they were sent until the call that
  // cleared them, so that call is charged the rewrite it made
  const recalledClears = new Map<number, number[]>();
  // (a file input the clear replaced with the result: its call's item too)
  const inputItem = (i: number): number | undefined =>
    draft.decisions[i]?.inputTokensSaved ? (list[i]!.call ?? results.req.calls.get(list[i]!.callId))?.item : undefined;
  list.forEach((r, i) => {
    const at = draft.decisions[i]?.clearedAt;
    if (draft.decisions[i]?.stage !== 'clear' || !at) return;
    itemTok[r.item]! += at.tokens - tokensNow(i);
    const ii = inputItem(i);
    if (ii !== undefined) itemTok[ii]! += draft.decisions[i]!.inputTokensSaved!;
    pushAt(recalledClears, at.call, i);
  });
  // file inputs replaced a call or more after the input was first sent (inputs.keepRounds): whole
  // until then, and that call is charged the rewrite
  const lateInputs = new Map<number, InputDecision[]>();
  for (const d of ledger.inputs.values()) {
    if (d.call <= results.callOf(d.item)) continue;
    itemTok[d.item]! += d.originalTokens - d.projectedTokens;
    pushAt(lateInputs, d.call, d);
  }
  // projected tokens per item, as decided so far; prefix sums answer "tokens before item x"
  const sums = new PrefixSums(itemTok);
  // what the model saw of a result reduced after use: verbatim in the call whose latest round it
  // was in, so that call is counted (and walked) as it was made live
  const afterUse = new Map<number, number>();
  list.forEach((r, i) => {
    const d = draft.decisions[i];
    if (d?.afterUse) afterUse.set(r.item, (afterUse.get(r.item) ?? 0) + results.partsTokens(i, d) - d.projectedTokens);
  });
  const afterUseItems = [...afterUse.keys()].sort((a, b) => a - b);
  let nextAfterUse = 0;
  const costs = new CostLedger();
  // the session's read-backs, charged at the call they happened (../guarantee.ts)
  const guarantee = results.guarantee;
  const readBacksAt = new Map<number, ReadBack[]>();
  for (const r of guarantee?.readBacks ?? []) pushAt(readBacksAt, r.call, r);
  let lastTotal = 0; // projected tokens of the previous call: what its read-backs read again
  // what a call reads from the cache when the projection is unchanged up to item x: all of that
  // prefix, or (where the cache is at breakpoints: ../guarantee.ts) up to the end of the last earlier
  // request within it
  const cachedUpTo = (x: number): CacheRead => {
    let lo = 0,
      hi = Math.min(callNo, checkpoints.length);
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (checkpoints[mid]! <= x) lo = mid + 1;
      else hi = mid;
    }
    return { read: fixed + sums.before(x), atBreakpoint: fixed + sums.before(lo > 0 ? checkpoints[lo - 1]! : 0) };
  };
  const all = (tokens: number): CacheRead => ({ read: tokens, atBreakpoint: tokens });
  const least = (a: CacheRead, b: CacheRead): CacheRead => ({
    read: Math.min(a.read, b.read),
    atBreakpoint: Math.min(a.atBreakpoint, b.atBreakpoint),
  });
  let rawTotal = fixed;
  let rawPrev = 0; // raw tokens the previous call sent (what this one reads from the cache)
  let projPrev: CacheRead = { read: 0, atBreakpoint: 0 }; // projected tokens of the previous call that this one still shares
  let upTo = 0; // items counted into `rawTotal`
  let before = 0; // results in items before the checkpoint (results are in item order)
  let roundsBefore = 0;
  let cursor = 0; // every result before it is cleared, ineligible or already tried
  let stale: number[] | undefined;
  // what a clear would take at each call, kept as the walk moves (clear-planner.ts)
  let planner: ClearPlanner | undefined;
  // what clearing every eligible result before protectedFrom would free, kept as the window moves
  let freeSum = 0,
    freeTo = 0;
  const counted = new Uint8Array(n);
  let callNo = -1;
  let lastAssistant = -1;
  // reduce after use (offload.afterUseCap with the payback schedule): the offload stage leaves
  // results up to afterUseCap to this walk, which knows what the session can pay for
  const afterUseCap = results.cfg.offload.afterUseCap;
  const deferring = deferredToClear(results.cfg);
  let deferred: number[] = [];
  const sizeOver = (i: number): { size: number; cap: number } | undefined => {
    const cap = results.capOf(i);
    if (cap === 'unlimited') return undefined;
    const size = results.overCap(i, cap);
    return size === undefined || size > afterUseCap ? undefined : { size, cap };
  };
  const deferrable = (i: number) => draft.open(i) && sizeOver(i) !== undefined;
  const markers = new Map<number, Reduced>();
  const offloaded = (i: number, afterUse: boolean): Reduced => {
    let out = markers.get(i);
    if (!out) {
      const { size, cap } = sizeOver(i)!;
      const why = `${fmt(size)} ${results.cfg.capUnit} over ${list[i]!.tool}'s cap of ${fmt(cap)}`;
      out = reduceResult(
        results,
        i,
        'offload',
        afterUse ? `${why}, reduced after the model used it` : why,
        undefined,
        cap,
        draft.decisions[i],
      );
      markers.set(i, out);
    }
    return out;
  };
  const afterUseGain = (i: number): number => {
    const out = offloaded(i, true);
    return typeof out === 'string' ? 0 : Math.max(0, tokensNow(i) - out.decision.projectedTokens);
  };
  /** Offloads result i now (after use, or on arrival); returns the tokens freed, undefined when kept. */
  const reduceNow = (i: number, afterUse: boolean): number | undefined => {
    if (!draft.open(i) || !sizeOver(i)) return undefined;
    markers.delete(i);
    const out = offloaded(i, afterUse);
    if (out === 'no-gain') draft.refuse(i);
    if (typeof out === 'string') return undefined;
    const was = tokensNow(i);
    if (afterUse) out.decision.afterUse = true;
    draft.record(i, out.decision, [out.write]);
    const saved = was - tokensNow(i);
    itemTok[list[i]!.item]! -= saved;
    sums.add(list[i]!.item, -saved);
    // what clearing it would free is now what clearing its marker would
    if (counted[i]) freeSum -= gain(i);
    gains[i] = undefined;
    if (counted[i]) freeSum += gain(i);
    planner?.refresh(i);
    return saved;
  };
  const inUse = inUseOf();
  if (inUse)
    planner = new ClearPlanner(n, c.staleFirst ? (stale = findStale(results.req)) : undefined, (i) => (clearable(i) ? gain(i) : undefined));
  for (const cp of checkpoints) {
    callNo++;
    if (inUse) for (const i of inUse.moveTo(callNo)) planner!.refresh(i);
    while (upTo < cp) rawTotal += originalTok[upTo++]!;
    while (before < n && list[before]!.item < cp) before++;
    while (roundsBefore < rounds.length && rounds[roundsBefore]! < cp) roundsBefore++;
    costs.chargeReadBacks(lastTotal, readBacksAt.get(callNo) ?? []);
    const offloadStopped = stopped(guarantee, 'offload', callNo);
    // what the previous call let through whole is reduced now that the model has used it; what an
    // earlier projection cleared in this call, and file inputs first replaced in it, change it too
    let firstDeferred = Number.POSITIVE_INFINITY;
    for (const i of recalledClears.get(callNo) ?? []) {
      const item = list[i]!.item;
      const saved = draft.decisions[i]!.clearedAt!.tokens - tokensNow(i);
      itemTok[item]! -= saved;
      sums.add(item, -saved);
      firstDeferred = Math.min(firstDeferred, item);
      const ii = inputItem(i);
      if (ii !== undefined) {
        itemTok[ii]! -= draft.decisions[i]!.inputTokensSaved!;
        sums.add(ii, -draft.decisions[i]!.inputTokensSaved!);
        firstDeferred = Math.min(firstDeferred, ii);
      }
    }
    for (const d of lateInputs.get(callNo) ?? []) {
      itemTok[d.item]! -= d.originalTokens - d.projectedTokens;
      sums.add(d.item, d.projectedTokens - d.originalTokens);
      firstDeferred = Math.min(firstDeferred, d.item);
    }
    if (offloadStopped) deferred = [];
    for (const i of deferred) {
      const cut = reduceNow(i, true);
      if (cut !== undefined) firstDeferred = Math.min(firstDeferred, list[i]!.item);
    }
    deferred = [];
    // the latest round of this call: the items after its last assistant item
    const roundStart = lastAssistant + 1;
    let unseen = 0, // tokens that results reduced after use had, verbatim, in this call
      firstAfterUse = -1;
    // rounds only move forward: one pass over the items reduced after use, in item order
    while (nextAfterUse < afterUseItems.length && afterUseItems[nextAfterUse]! < roundStart) nextAfterUse++;
    for (let k = nextAfterUse; k < afterUseItems.length && afterUseItems[k]! < cp; k++) {
      const item = afterUseItems[k]!;
      unseen += afterUse.get(item)!;
      if (firstAfterUse < 0) firstAfterUse = item;
    }
    if (cp < kinds.length) lastAssistant = lastAssistantFrom(kinds, cp);
    const raw = { read: callNo === 0 ? 0 : rawPrev, total: rawTotal };
    let running = fixed + sums.before(cp) + unseen;
    const readNow =
      callNo === 0
        ? all(0)
        : least(least(projPrev, all(running)), firstDeferred < Number.POSITIVE_INFINITY ? cachedUpTo(firstDeferred) : all(running));
    // results arriving in this call over their cap: whole now and reduced after use when the
    // ledger can pay for the next call's rewrite of what follows them, else reduced on arrival
    if (deferring && !offloadStopped) {
      const arriving: number[] = [];
      for (let i = before - 1; i >= 0 && list[i]!.item >= roundStart; i--) if (deferrable(i)) arriving.unshift(i);
      if (arriving.length) {
        const first = list[arriving[0]!]!.item;
        const freedLater = arriving.reduce((a, i) => a + afterUseGain(i), 0);
        const kept = cachedUpTo(first);
        const tail = all(running - freedLater);
        const rewrite = { read: Math.max(0, tail.read - kept.read), atBreakpoint: Math.max(0, tail.atBreakpoint - kept.atBreakpoint) };
        if (costs.affords(raw, { ...readNow, total: running }, rewrite)) deferred = arriving;
        else for (const i of arriving) running -= reduceNow(i, false) ?? 0;
      }
    }
    const settle = (total: number, read: CacheRead) => {
      costs.charge(raw, { ...read, total });
      lastTotal = total;
      rawPrev = rawTotal;
      // the next call shares this one up to the first result it will see reduced after use
      projPrev = firstAfterUse < 0 ? all(total) : least(all(total), cachedUpTo(firstAfterUse));
    };
    if (running <= c.triggerTokens) {
      settle(running, readNow);
      continue;
    }
    const protectedFrom = c.keepUnit === 'results' ? before - c.keep : firstInLastRounds(results, c.keep, before, rounds, roundsBefore);
    let freed = 0;
    let firstCleared = Number.POSITIVE_INFINITY;
    const enough = () => c.clearAtLeastTokens !== 'all' && freed >= c.clearAtLeastTokens && running - freed <= c.triggerTokens;
    const clearOne = (i: number, why: string) => {
      const was = tokensNow(i);
      if (counted[i]) {
        freeSum -= gain(i);
        counted[i] = 0;
      }
      // (not once the session's bank can no longer cover a read-back of a file input: ../guarantee.ts)
      if (clearResult(draft, i, why, stopped(guarantee, 'input', callNo) ? undefined : inputOf(i))) {
        draft.decisions[i]!.clearedAt = { call: callNo, tokens: was };
        const saved = was - tokensNow(i);
        freed += saved;
        itemTok[list[i]!.item]! -= saved;
        sums.add(list[i]!.item, -saved);
        firstCleared = Math.min(firstCleared, list[i]!.item);
        // a file input replaced with it: its call's item shrinks too, and the rewrite starts there
        const input = draft.decisions[i]?.inputTokensSaved ? inputOf(i) : undefined;
        if (input) {
          const s = input.decision.originalTokens - input.decision.projectedTokens;
          freed += s;
          itemTok[input.decision.item]! -= s;
          sums.add(input.decision.item, -s);
          firstCleared = Math.min(firstCleared, input.decision.item);
        }
      }
      planner?.refresh(i);
    };
    // as Anthropic's context editing does: a clear that cannot free clearAtLeastTokens is not
    // worth the cache it breaks, so it waits until enough is clearable
    if (c.clearAtLeastTokens !== 'all' && c.clearAtLeastTokens > 0 && inUse) {
      // what is clearable changes from call to call here: the planner's trees know it
      if (planner!.total(cursor, protectedFrom) < c.clearAtLeastTokens) {
        settle(running, readNow);
        continue;
      }
    } else if (c.clearAtLeastTokens !== 'all' && c.clearAtLeastTokens > 0) {
      for (; freeTo < protectedFrom; freeTo++) {
        if (clearable(freeTo)) {
          freeSum += gain(freeTo);
          counted[freeTo] = 1;
        }
      }
      if (freeSum < c.clearAtLeastTokens) {
        settle(running, readNow);
        continue;
      }
    }
    // payback schedule: plan the clear first, fire only when it pays back its cache rewrite within
    // the calls the session can be expected to still make, counting what the session has banked,
    // and leaves the session no dearer than raw should it end now, read-backs charged (../guarantee.ts);
    // not once the bank can no longer cover a read-back of a clear
    if (c.schedule === 'payback') {
      stale ??= c.staleFirst ? findStale(results.req) : undefined;
      planner ??= new ClearPlanner(n, stale, (i) => (clearable(i) ? gain(i) : undefined));
      const need = c.clearAtLeastTokens === 'all' ? Number.POSITIVE_INFINITY : Math.max(c.clearAtLeastTokens, running - c.triggerTokens);
      const plan = planner.plan(cursor, protectedFrom, cp, need);
      const kept = plan ? cachedUpTo(list[plan.first]!.item) : all(0);
      const remaining = expectedRemainingCalls(callNo + 1);
      if (
        stopped(guarantee, 'clear', callNo) ||
        !plan ||
        !clearPaysBack({ running, before: kept.read, freed: plan.freed, calls: callNo + 1 }) ||
        !costs.paysBack(raw, { ...least(readNow, kept), total: running - plan.freed }, (pm) => plan.freed * pm.cachedRead * remaining)
      ) {
        settle(running, readNow);
        continue;
      }
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
      // a result in use now may be cleared at a later call: the cursor stays before it
      if (i === cursor && !inUse?.now(i)) cursor++;
    }
    running -= freed;
    settle(running, freed > 0 ? least(readNow, cachedUpTo(firstCleared)) : readNow);
  }
  if (guarantee) draft.outcome.bank = costs.bank(callNo, lastTotal);
  return draft.outcome;
}

/** A file input the clear stage replaces with its call's result (`inputs.when: clear`). */
type InputClear = NonNullable<ReturnType<typeof replaceInput>>;

/**
 * Clears result i on the draft (and its call's input with `clear.clearToolInputs`, or as a file
 * input with `inputs.when: clear`). A file-writing call's result is often shorter than any marker
 * ("File created"): then the result is sent as it was and only the input is replaced.
 */
function clearResult(draft: Draft, i: number, why: string, input?: InputClear): boolean {
  const results = draft.results;
  // a result still whole though over its cap (a read left whole while in use: offload.keepReads)
  // gets the preview it would have had on arrival; any other gets a one-line marker
  const cap = results.capOf(i);
  let out =
    !draft.decisions[i] && cap !== 'unlimited' && keptRead(results, i)
      ? reduceResult(results, i, 'clear', `${why}; kept whole while in use`, undefined, cap, undefined)
      : reduceResult(results, i, 'clear', why, '', undefined, draft.decisions[i]);
  if (input && typeof out === 'string' && out !== 'unstorable') {
    const text = results.text(i);
    const tokens = results.partsTokens(i, draft.decisions[i]);
    const r = results.list[i]!;
    out = {
      decision: {
        stage: 'clear',
        replacement: text,
        handle: handleFor(text),
        reason: owned(`${why}; its file input replaced`),
        originalChars: text.length,
        originalTokens: tokens,
        projectedTokens: tokens,
        partsTokens: tokens,
        tool: owned(r.tool),
        callId: owned(r.callId),
        inputOnly: true,
      },
      write: {
        handle: handleFor(text),
        text,
        meta: {
          tool: owned(r.tool),
          callId: owned(r.callId),
          stage: 'clear',
          chars: text.length,
          bytes: Buffer.byteLength(text, 'utf8'),
          lines: countLines(text),
          tokens,
        },
      },
    };
  }
  if (out === 'no-gain') draft.refuse(i);
  if (typeof out === 'string') return false;
  const writes: StoreWrite[] = [out.write];
  if (input) {
    out.decision.inputReplacement = input.decision.replacement;
    out.decision.inputHandle = input.decision.handle;
    out.decision.inputTokensSaved = input.decision.originalTokens - input.decision.projectedTokens;
    writes.push(input.write);
  } else if (results.cfg.clear.clearToolInputs) {
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

/**
 * Token counts of rendered cleared markers, per counter. A marker is shorter than what the counter
 * caches itself (tokens.ts), yet the walk asks what clearing each result would free on every call of
 * a session: counting the same markers again was most of the clear stage's time (1.5 of 4.4 s of
 * engine time over the corpus's 281-call Claude Code session). Dropped whole when full.
 */
const markerTokenCounts = new WeakMap<TokenCounter, Map<string, number>>();
const MARKER_COUNTS_MAX = 100_000;

/** What a cleared marker for this result costs, from a marker rendered with sizes of its order. */
function clearedMarkerTokens(results: Results, i: number): number {
  const r = results.list[i]!;
  const rawLen = results.rawLen[i]!;
  const cfg = results.cfg;
  const text = `${rawLen}`;
  const marker = renderMarker({
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
  });
  let counts = markerTokenCounts.get(results.counter);
  if (!counts) markerTokenCounts.set(results.counter, (counts = new Map()));
  let n = counts.get(marker);
  if (n === undefined) {
    if (counts.size >= MARKER_COUNTS_MAX) counts.clear();
    n = results.counter.count(marker);
    counts.set(marker, n);
  }
  return n;
}

/** Whether the offload stage leaves results over their cap, up to afterUseCap, to this stage's walk. */
export function deferredToClear(cfg: SpillwayConfig): boolean {
  return cfg.offload.enabled && cfg.offload.afterUseCap > 0 && cfg.clear.enabled && cfg.clear.schedule === 'payback';
}

/** Adds `value` to the list kept under `key`. */
function pushAt<T>(map: Map<number, T[]>, key: number, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** The last assistant item of the run of assistant items that starts at `from`. */
function lastAssistantFrom(kinds: readonly string[], from: number): number {
  let i = from;
  while (i + 1 < kinds.length && kinds[i + 1] === 'assistant') i++;
  return i;
}

/** Index of the first result inside the last `keep` assistant rounds, among the first `before` results. */
function firstInLastRounds(results: Results, keep: number, before: number, rounds: number[], roundsBefore: number): number {
  if (keep === 0) return before;
  if (roundsBefore < keep) return 0;
  const from = rounds[roundsBefore - keep]!;
  for (let i = 0; i < before; i++) if (results.list[i]!.item > from) return i;
  return before;
}
