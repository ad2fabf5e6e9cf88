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
 * At each call the walk, in order (the numbered steps in `clear`): takes in what changed since the
 * previous call; counts this call as sent; weighs the results arriving over their cap (reduce after
 * use); decides whether a clear is due and affordable; and clears, stale results first, then the
 * oldest. Each call is charged to the session's cost ledger (../guarantee.ts) as it was sent.
 *
 * Where it sits: after budget (budget.ts), last; it counts tokens as projected by every earlier
 * decision, file inputs (inputs.ts) included. Its helpers are modules beside it: clear-result.ts
 * (clearing one result, and what that would free), clear-planner.ts (what a clear would take at a
 * call, over prefix-sums.ts), clear-recall.ts (earlier projections' clears, at the call that made
 * them), after-use.ts (reduce after use), in-use.ts and stale.ts (which results go last and first).
 */
import { callCheckpoints } from '../calls';
import { toolListed } from '../config';
import { clearPaysBack, coldAfter, expectedRemainingCalls, routePrices, type CachePrices } from '../clear-schedule';
import {
  addOwed,
  BREAKPOINT_CACHES,
  CostLedger,
  NOTHING_OWED,
  owedCost,
  payOwed,
  owedTokens,
  readCallTokens,
  stopped,
  type CacheRead,
  type Owed,
  type ReadBack,
} from '../guarantee';
import { formatInt as fmt } from '../format-number';
import { AfterUse } from './after-use';
import { ClearPlanner } from './clear-planner';
import { RecalledChanges, pushAt } from './clear-recall';
import { ClearGains, commitClear, owedBy, prepareClear, type PreparedClear } from './clear-result';
import { InUse } from './in-use';
import { referenceTarget } from './offload';
import { referencedCall } from '../markers';
import { countUpTo, PrefixSums } from './prefix-sums';
import { Draft, type Ledger, type Results, type StageOutcome } from './results';
import { staleAt as findStale } from './stale';
import type { ClearHold } from '../types';

/** The clear stage: walks the session's calls in order and clears where a clear is due (see the module comment). */
export function clear(results: Results, ledger: Ledger): StageOutcome {
  const draft = new Draft(results, ledger);
  const c = results.cfg.clear;
  const kinds = results.req.kinds;
  const list = results.list;
  const n = results.length;

  const checkpoints = callCheckpoints(kinds);
  // a round is one model call (a run of assistant items: a Responses turn is a message plus one
  // function_call item per parallel call), not each assistant item
  const rounds = checkpoints.slice(0, -1);

  // --- Which results a clear may take, and what clearing each would free ---
  // (estimates kept per result until the walk reduces it otherwise: clear-result.ts)
  const gains = new ClearGains(draft);
  // results the agent referred to (or received) in its last clear.inUseCalls calls: still in use
  // (in-use.ts; a file input the clear would replace with the result stands for it too); and with
  // clear.keepGathered, what it gathered and has not yet written from (gathering.ts)
  const inUse =
    c.inUseCalls > 0 || c.keepGathered
      ? new InUse(
          results,
          c.inUseCalls,
          (i) => !results.fixedAsIs(i),
          checkpoints,
          (i) => gains.inputOf(i)?.write.text,
          c.keepGathered,
          referredBy(draft),
          c.inUseLatest,
        )
      : undefined;
  // with hindsight (the limit's oracle only: ../types.ts), a result is taken only after the last call
  // that needs it, and results become clearable as the walk passes that call
  const hindsight = results.hindsight;
  const neededUntil = hindsight
    ? list.map((r, i) => hindsight.neededUntil({ tool: r.tool, callId: r.callId, text: results.text(i) }))
    : undefined;
  const freedAt = new Map<number, number[]>();
  neededUntil?.forEach((u, i) => {
    if (Number.isFinite(u)) pushAt(freedAt, u + 1, i);
  });
  const needed = (i: number): boolean => neededUntil !== undefined && neededUntil[i]! >= callNo;
  // a sub-agent's report (config.ts, REPORT_TOOLS) arrives whole and is cleared like any result once
  // the agent has moved on from it; `clear.excludeTools` keeps a tool's results for good
  const clearable = (i: number): boolean =>
    !needed(i) &&
    !results.fixedAsIs(i) &&
    !draft.noGain[i] &&
    draft.decisions[i]?.stage !== 'clear' &&
    !toolListed(c.excludeTools, list[i]!.names) &&
    !inUse?.now(i) &&
    !carriesMore(i) &&
    !tooSmall(i);
  /** a result whose clear would free fewer tokens than `clear.minFreedTokens` (its input included) stays */
  const tooSmall = (i: number): boolean => c.minFreedTokens > 0 && gains.of(i) < c.minFreedTokens;
  /**
   * With every late read-back held (`clear.readBacksCovered: all`), a result whose clear frees no more
   * than its read-back would add to the agent's history (the read call and its answer: the whole of a
   * short output) is not cleared: read back, it would leave every later call dearer than raw
   */
  const everyReadBack = c.readBacksCovered === 'all';
  const carriesMore = (i: number): boolean => {
    if (!everyReadBack) return false;
    const o = gains.owes(i);
    return gains.of(i) <= owedTokens(o, o.handles, readCallTokens(results.counter));
  };
  /** what the planner weighs: the gain of each result a clear may take, undefined for the others */
  const plannerGain = (i: number): number | undefined => (clearable(i) ? gains.of(i) : undefined);

  // --- Projected tokens per item, as decided so far, as each call of the session sent them ---
  const itemTok = results.projectedItemTokens(ledger);
  const fixed = results.fixedTokens();
  const originalTok = results.originalItemTokens();
  // what earlier projections of the session cleared or replaced at a later call: as first sent
  // until that call, so that call is charged the rewrite it made (clear-recall.ts)
  const recalled = new RecalledChanges(draft, itemTok);
  // prefix sums answer "tokens before item x"; from here on the walk changes only them
  const sums = new PrefixSums(itemTok);
  const shrink = (item: number, tokens: number) => sums.add(item, -tokens);
  // results reduced after use (after-use.ts): earlier calls saw them whole, this one may let more through
  const afterUse = new AfterUse(draft);

  // --- Where the walk is ---
  let callNo = -1;
  let lastAssistant = -1;
  let upTo = 0; // items counted into `rawTotal`
  let before = 0; // results in items before the checkpoint (results are in item order)
  let roundsBefore = 0;
  let cursor = 0; // every result before it is cleared, ineligible or already tried
  let stale: number[] | undefined;
  // what a clear would take at each call, kept as the walk moves (clear-planner.ts)
  let planner: ClearPlanner | undefined;
  // (without the planner) what clearing every eligible result before protectedFrom would free, kept as the window moves
  let freeSum = 0,
    freeTo = 0;
  const counted = new Uint8Array(n);
  // why the walk made no clear at the current call, or that it made one (ProjectionDetail.held), and
  // the first result the clear.keep rule protected there
  let hold: ClearHold = 'under-trigger';
  let keptFrom = n;

  // --- What the session has cost so far, raw and projected (the guarantee's ledger: ../guarantee.ts) ---
  // the session's read-backs, charged at the call they happened
  const guarantee = results.guarantee;
  // the session's bill is its provider's (its route): the ledger keeps that provider's price models,
  // every model when the route is not known
  const prices = routePrices(guarantee?.route);
  const costs = new CostLedger(prices);
  let hourCache: boolean | undefined; // whether the request asks Anthropic for the 1-hour cache (looked up once, when a gap needs it)
  /** Whether call k finds `pm`'s cache cold: sent longer after the previous call than the provider keeps a prefix unused. */
  const coldAt = (k: number): ((pm: CachePrices) => boolean) => {
    const at = guarantee?.at;
    const gap = k > 0 && at?.[k] !== undefined && at[k - 1] !== undefined ? at[k]! - at[k - 1]! : undefined;
    if (gap === undefined || !prices.some((pm) => coldAfter(gap, pm))) return () => false;
    hourCache ??= HOUR_CACHE.test(results.req.text);
    return (pm) => coldAfter(gap, pm, hourCache);
  };
  const readBacksAt = new Map<number, ReadBack[]>();
  for (const r of guarantee?.readBacks ?? []) pushAt(readBacksAt, r.call, r);
  // what the session's clears still owe: every handle a clear hid may be read back at any later
  // call, one a call, each re-reading the whole context; a clear is taken only when the bank also
  // holds those read-backs (../guarantee.ts, `owedCost`). Earlier projections' clears owe from the
  // call that made them; a read-back of a clear's handle pays one off.
  // The last call an earlier projection of the session cleared in: the calls up to it were sent as
  // those projections decided, so the walk makes no new clear there. Their clears are recalled, so
  // fewer results are clearable at those calls than when each was decided, and a smaller clear
  // could look due; it would first be sent in this request, a rewrite charged to a call long past
  const recalledUpTo = recalled.lastClearCall;
  let owed: Owed = NOTHING_OWED;
  let readBackMade = false; // whether the session has spent the one read-back the bound allows
  const covered = c.readBacksCovered === 'all' ? Number.POSITIVE_INFINITY : c.readBacksCovered;
  /**
   * What this call must still hold in the bank after a clear that leaves `prefix` of raw history's
   * `raw` tokens and owes `more`: the late read-backs `clear.readBacksCovered` asks for, less what each
   * later call saves by sending `raw - prefix` tokens fewer (less the tokens those read-backs carry).
   */
  const reserve = (prefix: number, raw: number, more: Owed) => {
    const all = addOwed(owed, more);
    const ask = readCallTokens(results.counter);
    return (pm: CachePrices): number => owedCost(prefix, all, covered, ask, readBackMade, raw - prefix, pm);
  };
  let lastTotal = 0; // projected tokens of the previous call: what its read-backs read again
  let rawTotal = fixed;
  let rawPrev = 0; // raw tokens the previous call sent (what this one reads from the cache)
  let projPrev: CacheRead = { read: 0, atBreakpoint: 0 }; // projected tokens of the previous call that this one still shares
  // where the cache is at breakpoints (../guarantee.ts), the ends of earlier requests it still holds,
  // in item order: a call that changes item x leaves the ends at or before x and adds its own, as the
  // provider keeps a breakpoint only while the prefix before it is unchanged
  const ends: number[] = [];
  // the first item this call changes of what the previous call sent (Infinity: none)
  let changedAt = Number.POSITIVE_INFINITY;
  let seenBefore = -1; // the previous call's first result reduced after use by a later projection
  // what a call reads from the cache when the projection is unchanged up to item x: all of that
  // prefix, or (at breakpoints) up to the last request end the cache holds within it; `from` asks
  // for the next call, once this one has changed what follows that item
  const cachedUpTo = (x: number, from = Number.POSITIVE_INFINITY): CacheRead => {
    const k = countUpTo(ends, Math.min(x, from));
    return { read: fixed + sums.before(x), atBreakpoint: fixed + sums.before(k > 0 ? ends[k - 1]! : 0) };
  };
  /** The first item of the round that holds item x: a clear of a result there may replace its call's input in it. */
  const roundOf = (x: number): number => {
    const k = countUpTo(rounds, x, roundsBefore);
    return k > 0 ? rounds[k - 1]! : x;
  };

  /** Offloads result i now (after use, or on arrival); returns the tokens freed, undefined when kept. */
  const reduceNow = (i: number, afterUsed: boolean): number | undefined => {
    const saved = afterUse.reduce(i, afterUsed);
    if (saved === undefined) return undefined;
    shrink(list[i]!.item, saved);
    // what clearing it would free is now what clearing its marker would
    if (counted[i]) freeSum -= gains.of(i);
    gains.forget(i);
    if (counted[i]) freeSum += gains.of(i);
    planner?.refresh(i);
    return saved;
  };

  /**
   * The next call's change if `waiting` results are reduced after use: it would read this call's
   * `total` tokens, and keeps only what the cache holds before the first of them, less what they free.
   */
  const nextRewrite = (waiting: readonly number[], total: number): { total: number; kept: CacheRead; freed: number } => ({
    total,
    kept: cachedUpTo(list[waiting[0]!]!.item, changedAt),
    freed: waiting.reduce((a, i) => a + afterUse.gain(i), 0),
  });

  // what is clearable changes from call to call when results are in use or needed later: the planner keeps up
  const moving = inUse !== undefined || neededUntil !== undefined;
  const plannerOwes = (i: number): Owed => gains.owes(i);
  if (moving) planner = new ClearPlanner(n, c.staleFirst ? (stale = findStale(results.req)) : undefined, plannerGain, plannerOwes);
  for (const cp of checkpoints) {
    callNo++;
    keptFrom = n;
    if (inUse) for (const i of inUse.moveTo(callNo)) planner!.refresh(i);
    for (const i of freedAt.get(callNo) ?? []) planner!.refresh(i);
    while (upTo < cp) rawTotal += originalTok[upTo++]!;
    while (before < n && list[before]!.item < cp) before++;
    while (roundsBefore < rounds.length && rounds[roundsBefore]! < cp) roundsBefore++;
    const readBacks = readBacksAt.get(callNo) ?? [];
    costs.chargeReadBacks(lastTotal, readBacks);
    for (const i of recalled.clearedAt(callNo)) owed = addOwed(owed, owedBy(draft.decisions[i]!));
    for (const r of readBacks) {
      readBackMade = true;
      if (r.kind === 'clear') owed = payOwed(owed, r.answer);
    }
    // a call sent after the provider's cache expired writes the whole request again, raw history as
    // much as the projection: the ledger charges it so, and a clear there rewrites nothing more
    const cold = coldAt(callNo);
    costs.setCold(cold);
    const warm = prices.filter((pm) => !cold(pm));
    const coldEnds = prices.some((pm) => cold(pm) && BREAKPOINT_CACHES.has(pm.family));
    const offloadStopped = stopped(guarantee, 'offload', callNo);
    // while file inputs are stopped (../guarantee.ts), a clear does not replace them: what clearing
    // each result would free is the result's own saving, so a plan never counts on them
    // a clear the cold cache makes free leaves file inputs alone: what the agent wrote, it goes on
    // writing from after a pause (docs/log/2026-11-29-cold-calls.md)
    const coldClear = warm.length === 0;
    if (gains.stopInputs(stopped(guarantee, 'input', callNo) || coldClear)) {
      freeSum = 0;
      for (let i = 0; i < n; i++) {
        planner?.refresh(i);
        if (counted[i]) freeSum += gains.of(i);
      }
    }

    // 1. What changed since the previous call: what an earlier projection cleared in this call, and
    // file inputs first replaced in it; and what the previous call let through whole, reduced now
    // that the model has used it. The cache rewrite starts at the first item changed.
    let firstChanged = Number.POSITIVE_INFINITY;
    for (const { item, tokens } of recalled.at(callNo)) {
      shrink(item, tokens);
      firstChanged = Math.min(firstChanged, item);
    }
    const due = afterUse.takeWaiting();
    if (!offloadStopped) {
      for (const i of due) {
        const cut = reduceNow(i, true);
        if (cut !== undefined) firstChanged = Math.min(firstChanged, list[i]!.item);
      }
    }
    changedAt = Math.min(firstChanged, seenBefore < 0 ? Number.POSITIVE_INFINITY : seenBefore);

    // 2. This call as sent, before any clear: the latest round is the items after its last
    // assistant item; results reduced after use by a later call were whole in it
    const roundStart = lastAssistant + 1;
    const seen = afterUse.seenIn(roundStart, cp);
    if (cp < kinds.length) lastAssistant = lastAssistantFrom(kinds, cp);
    const raw = { read: callNo === 0 ? 0 : rawPrev, total: rawTotal };
    let running = fixed + sums.before(cp) + seen.tokens;
    const readNow =
      callNo === 0
        ? all(0)
        : least(least(projPrev, all(running)), firstChanged < Number.POSITIVE_INFINITY ? cachedUpTo(firstChanged) : all(running));

    // 3. Results arriving in this call over their cap (reduce after use): whole now and reduced
    // after use when the ledger can pay for the next call's rewrite of what follows them, else
    // reduced on arrival
    if (afterUse.on && !offloadStopped) {
      const arriving = afterUse.arriving(before, roundStart);
      if (arriving.length) {
        if (costs.affords(raw, { ...readNow, total: running }, nextRewrite(arriving, running))) afterUse.wait(arriving);
        else for (const i of arriving) running -= reduceNow(i, false) ?? 0;
      }
    }
    /**
     * Charges this call as sent (`total` tokens, `read` of them from the cache) and moves on. Results
     * let through whole to be reduced after use are reduced on arrival instead when, with what this
     * call changed (a clear may have), the ledger cannot pay now for the next call's rewrite.
     */
    const settle = (total: number, read: CacheRead) => {
      const waiting = afterUse.waitingNow();
      if (waiting.length && !costs.affords(raw, { ...read, total }, nextRewrite(waiting, total))) {
        for (const i of waiting) total -= reduceNow(i, false) ?? 0;
        afterUse.wait([]);
      }
      costs.charge(raw, { ...read, total });
      lastTotal = total;
      rawPrev = rawTotal;
      // a call the breakpoint cache saw cold wrote the whole request again: no earlier end is held
      if (coldEnds) ends.length = 0;
      while (ends.length && ends[ends.length - 1]! > changedAt) ends.pop();
      ends.push(cp);
      // the next call shares this one up to the first result it will see reduced after use
      projPrev = seen.first < 0 ? all(total) : least(all(total), cachedUpTo(seen.first));
      seenBefore = seen.first;
    };

    // 4. Whether to clear: only at a call no earlier projection has cleared in or before, over the trigger, ...
    if (running <= c.triggerTokens || callNo <= recalledUpTo) {
      hold = running <= c.triggerTokens ? 'under-trigger' : 'earlier-clear';
      settle(running, readNow);
      continue;
    }
    const protectedFrom = c.keepUnit === 'results' ? before - c.keep : firstInLastRounds(results, c.keep, before, rounds, roundsBefore);
    keptFrom = protectedFrom;
    hold = 'too-little';
    // ... when enough is clearable: as Anthropic's context editing does, a clear that cannot free
    // clearAtLeastTokens is not worth the cache it breaks, so it waits until enough is clearable;
    // a call the cache finds cold breaks nothing more, so there any clearable result is worth it
    // (docs/log/2026-11-29-routes.md)
    const atLeast = coldClear && c.clearAtLeastTokens !== 'all' ? Math.min(1, c.clearAtLeastTokens) : c.clearAtLeastTokens;
    if (atLeast !== 'all' && atLeast > 0 && moving) {
      // what is clearable changes from call to call here: the planner's trees know it
      if (planner!.total(cursor, protectedFrom) < atLeast) {
        settle(running, readNow);
        continue;
      }
    } else if (atLeast !== 'all' && atLeast > 0) {
      for (; freeTo < protectedFrom; freeTo++) {
        if (clearable(freeTo)) {
          freeSum += gains.of(freeTo);
          counted[freeTo] = 1;
        }
      }
      if (freeSum < atLeast) {
        settle(running, readNow);
        continue;
      }
    }
    // ... and, with the payback schedule, when it pays: plan the clear first, fire only when it pays
    // back its cache rewrite within the calls the session can be expected to still make, counting
    // what the session has banked, and leaves the session no dearer than raw should it end now,
    // read-backs charged (../guarantee.ts); not once the bank can no longer cover a read-back of a clear
    const remaining = hindsight
      ? hindsight.remainingCalls(callNo)
      : expectedRemainingCalls(callNo + 1, c.paybackHorizon, results.remaining);
    /** Whether a clear that frees `freed` tokens, the cache kept up to `kept`, pays back its rewrite in the calls expected (the schedule). */
    const scheduled = (freed: number, kept: CacheRead): boolean =>
      clearPaysBack({ running, before: kept.read, freed, calls: callNo + 1, horizon: c.paybackHorizon, remaining }, warm);
    /** Of a clear that does not pay: the schedule says it would not pay back, or else the ledger cannot pay for it. */
    const whyNot = (freed: number, kept: CacheRead): ClearHold => (scheduled(freed, kept) ? 'unaffordable' : 'no-payback');
    /**
     * Whether a clear that frees `freed` tokens, the cache kept up to `kept`, pays back and leaves the
     * ledger no dearer than raw, with the read-backs of what it and earlier clears hid (`owes` more) still banked.
     */
    const paysBack = (freed: number, kept: CacheRead, owes: Owed): boolean =>
      scheduled(freed, kept) &&
      costs.paysBack(
        raw,
        { ...least(readNow, kept), total: running - freed },
        (pm) => freed * pm.cachedRead * remaining,
        reserve(running - freed, rawTotal, owes),
      );
    if (c.schedule === 'payback') {
      stale ??= c.staleFirst ? findStale(results.req) : undefined;
      planner ??= new ClearPlanner(n, stale, plannerGain, plannerOwes);
      const need = c.clearAtLeastTokens === 'all' ? Number.POSITIVE_INFINITY : Math.max(c.clearAtLeastTokens, running - c.triggerTokens);
      const plan = planner.plan(cursor, protectedFrom, cp, need);
      // (from the start of its round: clearing a result may replace its call's input, before it)
      const kept = plan ? cachedUpTo(roundOf(list[plan.first]!.item)) : all(0);
      if (stopped(guarantee, 'clear', callNo) || !plan || !paysBack(plan.freed, kept, plan.owes)) {
        hold = stopped(guarantee, 'clear', callNo) ? 'unaffordable' : !plan ? 'too-little' : whyNot(plan.freed, kept);
        settle(running, readNow);
        continue;
      }
    }

    // 5. The clear: stale results first (the file was read or written again later, so this copy is
    // outdated), then the oldest, until enough is freed. Each clear is made before any is recorded,
    // and the schedule's and the ledger's checks are made again on what they really free: the plan
    // only estimates each marker (clear-result.ts), and a ledger that went over raw by an estimate's
    // error would stop every later clear of the session (../guarantee.ts)
    const over = `context at ${fmt(running)} tokens over the trigger of ${fmt(c.triggerTokens)}`;
    const picked: PreparedClear[] = [];
    const taken = new Set<number>();
    let freed = 0;
    let firstCleared = Number.POSITIVE_INFINITY;
    const enough = () => c.clearAtLeastTokens !== 'all' && freed >= c.clearAtLeastTokens && running - freed <= c.triggerTokens;
    /** Drops result i's estimate from what the walk keeps of clearable gains (it was cleared, or cannot be). */
    const forgetEstimate = (i: number) => {
      if (counted[i]) {
        freeSum -= gains.of(i);
        counted[i] = 0;
      }
      planner?.refresh(i);
    };
    const pick = (i: number, why: string) => {
      // (not once the session's bank can no longer cover a read-back of a file input: ../guarantee.ts)
      const p = prepareClear(draft, i, why, stopped(guarantee, 'input', callNo) || coldClear ? undefined : gains.inputOf(i));
      taken.add(i);
      if (!p) return forgetEstimate(i);
      picked.push(p);
      freed += p.freed;
      firstCleared = Math.min(firstCleared, p.first);
    };
    let nextCursor = cursor;
    if (c.staleFirst) {
      stale ??= findStale(results.req);
      for (let i = cursor; i < protectedFrom && !enough(); i++) {
        if (stale[i]! < cp && clearable(i)) pick(i, `${over}; stale: the same file or command was used again later`);
      }
    }
    for (let i = cursor; i < protectedFrom; i++) {
      if (enough()) break;
      if (!taken.has(i) && clearable(i)) pick(i, over);
      // a result in use now may be cleared at a later call: the cursor stays before it
      if (i === nextCursor && !inUse?.now(i) && !needed(i)) nextCursor++;
    }
    const kept = freed > 0 ? cachedUpTo(firstCleared) : readNow;
    const owes = picked.reduce((a, p) => addOwed(a, owedBy(p.decision)), NOTHING_OWED);
    if (c.schedule === 'payback' && freed > 0 && !paysBack(freed, kept, owes)) {
      hold = whyNot(freed, kept);
      settle(running, readNow);
      continue;
    }
    cursor = nextCursor;
    owed = addOwed(owed, owes);
    for (const p of picked) {
      commitClear(draft, p, callNo);
      forgetEstimate(p.i);
      shrink(list[p.i]!.item, p.resultFreed);
      // a file input replaced with it: its call's item shrinks too, and the rewrite starts there
      if (p.freed > p.resultFreed) shrink(gains.inputOf(p.i)!.decision.item, p.freed - p.resultFreed);
    }
    running -= freed;
    hold = freed > 0 ? 'enough' : 'too-little';
    changedAt = Math.min(changedAt, firstCleared);
    settle(running, freed > 0 ? least(readNow, kept) : readNow);
  }
  if (guarantee) draft.outcome.bank = costs.bank(callNo, lastTotal);
  // why each result left as it was stayed so at this call (the walk's last), worked out when asked
  draft.outcome.held = () =>
    list.map((r, i): ClearHold | undefined => {
      if (draft.decisions[i]) return undefined;
      if (results.fixedAsIs(i)) return 'as-is';
      if (draft.noGain[i] || carriesMore(i)) return 'no-gain';
      if (tooSmall(i)) return 'small';
      if (toolListed(c.excludeTools, r.names)) return 'excluded';
      if (needed(i)) return 'in-use';
      if (inUse?.now(i)) return inUse.gatheredNow(i) ? 'gathered' : 'in-use';
      return hold === 'enough' && i >= keptFrom ? 'recent' : hold;
    });
  return draft.outcome;
}

/** A request that asks Anthropic for the 1-hour cache on a breakpoint. */
const HOUR_CACHE = /"ttl"\s*:\s*"1h"/;

/** A cache read of all of `tokens`, at a breakpoint or not. */
function all(tokens: number): CacheRead {
  return { read: tokens, atBreakpoint: tokens };
}

/** The smaller of two cache reads, each figure on its own. */
function least(a: CacheRead, b: CacheRead): CacheRead {
  return { read: Math.min(a.read, b.read), atBreakpoint: Math.min(a.atBreakpoint, b.atBreakpoint) };
}

/**
 * Per result, the items of the later outputs this projection sends as references to it (offload.ts).
 * Only markers that name the earlier output count (the spillway style's "identical to the output of
 * call X"): the seed styles' markers name a handle only, so the model is not sent back to the earlier
 * copy, and a projection projected again could not tell what they refer to (it must decide the same).
 */
function referredBy(draft: Draft): (i: number) => readonly number[] {
  const results = draft.results;
  if (results.cfg.markerStyle !== 'spillway') return () => [];
  const byCallId = new Map<string, number>();
  results.list.forEach((r, i) => byCallId.set(r.callId, i));
  const items = new Map<number, number[]>();
  results.list.forEach((_, i) => {
    const d = draft.decisions[i];
    // a reference this engine made, or one in a projection projected again (a marker it recognised)
    const target = d ? referenceTarget(d) : results.recognised.markers[i] ? referencedCall(results.text(i)) : undefined;
    const j = target === undefined ? undefined : byCallId.get(target);
    if (j === undefined || j >= i) return;
    const list = items.get(j);
    if (list) list.push(results.list[i]!.item);
    else items.set(j, [results.list[i]!.item]);
  });
  return (i) => items.get(i) ?? [];
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
