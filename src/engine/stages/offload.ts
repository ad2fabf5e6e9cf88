/**
 * Stage 1, offload: a tool result over its tool's cap is stored in full and replaced by a marker
 * with a preview, the newest result too (seeds 002, 003 truncation, 004).
 *
 * Why first: it is the cheapest and least disruptive reduction. It is decided when a result
 * arrives, from the result alone, so the decision never changes in a later call and the projected
 * prefix stays byte-stable for the provider's prompt cache. Two more decisions live here because
 * they are made on arrival too: a custom reducer (Eino's per-tool handlers) gives the preview for
 * its tool, and `offload.dedupe` turns a result that repeats an earlier verbatim one into a
 * reference to it (agents re-run the same command, re-read the same file): one short line when it
 * is identical, the earlier one's line ranges and the lines that differ when it mostly repeats it
 * (../repeats.ts).
 *
 * Where it sits: after recognition and the session's recalled decisions, with file inputs
 * (inputs.ts) in the same slot; window (window.ts) sees only what it leaves verbatim.
 */
import { capFor, toolListed } from '../config';
import { hintForResult, requestedRead } from '../previews';
import { formatInt as fmt } from '../format-number';
import type { CustomReducer } from '../types';
import { paysOwnReadBack, readBackAnswerTokens, readCallTokens, stopped } from '../guarantee';
import { encodeRepeat, withoutLineNumber } from '../repeats';
import { deferredToClear } from './after-use';
import { reduceOn, reduceResult } from './reduce';
import { Draft, type Ledger, type Results, type StageOutcome } from './results';

/** Results shorter than this are never replaced by a reference: the marker would not save much. */
const DEDUPE_MIN_CHARS = 600;
/** How a reference's reason starts: `identical to the output of call X` (`isReference` reads it back). */
const REFERENCE_REASON = 'identical to the output of call ';
/** How a repeat's reason starts: `repeats the output of call X, with changes` (`isReference` too). */
const REPEAT_REASON = 'repeats the output of call ';
const REPEAT_REASON_END = ', with changes';
/** A repeat is sent when at least this share of the output's characters is found in the earlier one... */
const REPEAT_MIN_COPIED = 0.6;
/** ...and what is sent in its place is at most this share of its characters. */
const REPEAT_MAX_SENT = 0.5;
/** How many earlier outputs (of DEDUPE_MIN_CHARS or more, verbatim) a new output is compared with, newest first. */
const REPEAT_CANDIDATES = 48;
/** Lines of a new output looked up in an earlier one before the whole comparison... */
const REPEAT_PROBES = 12;
/** ...of which at least this share must be found there. */
const REPEAT_PROBE_SHARE = 0.4;

/**
 * Whether a reduction is a reference to an earlier output it repeats (`offload.dedupe`) rather than a
 * preview: its marker points at the earlier copy and carries no preview of its own (a repeat with
 * changes carries the lines that differ). Read from the reason this stage gave it, which a recalled
 * decision keeps.
 */
export function isReference(r: { stage: string; reason: string }): boolean {
  return r.stage === 'offload' && (r.reason.startsWith(REFERENCE_REASON) || r.reason.startsWith(REPEAT_REASON));
}

/** The call id of the earlier output a reference points at (`isReference`), read from its reason. */
export function referenceTarget(r: { stage: string; reason: string }): string | undefined {
  if (r.stage !== 'offload') return undefined;
  if (r.reason.startsWith(REFERENCE_REASON)) return r.reason.slice(REFERENCE_REASON.length);
  if (r.reason.startsWith(REPEAT_REASON)) return r.reason.slice(REPEAT_REASON.length, r.reason.lastIndexOf(REPEAT_REASON_END));
  return undefined;
}

export function offload(results: Results, ledger: Ledger, reducers: Record<string, CustomReducer>): StageOutcome {
  const draft = new Draft(results, ledger);
  const cfg = results.cfg;
  const unit = cfg.capUnit;
  // first verbatim result per content key, for dedupe
  const dedupe = cfg.offload.enabled && cfg.offload.dedupe ? new Map<string, number>() : undefined;
  // repeats with changes need the spillway marker's wording (the seed styles have none for them)
  const repeats = dedupe !== undefined && cfg.markerStyle === 'spillway';
  const latestCap = cfg.offload.latestCap;
  const lastAssistant = results.req.kinds.lastIndexOf('assistant');
  const deferToClear = deferredToClear(cfg);
  const sent = new SentBefore(results);
  for (let i = 0; i < results.length; i++) {
    if (!draft.open(i)) continue;
    const r = results.list[i]!;
    const cap = results.capOf(i);
    // the session's bank can no longer cover a read-back of what would arrive reduced (../guarantee.ts),
    // unless the offload pays for its own read-back in the call it arrives in
    if (stopped(results.guarantee, 'offload', results.callOf(r.item))) {
      if (cfg.offload.enabled && cap !== 'unlimited' && !keptRead(results, i)) offloadPayingItsReadBack(draft, i, cap, sent);
      continue;
    }
    const custom = reducerFor(reducers, r.names);
    if (custom) {
      const numericCap = cap === 'unlimited' ? Number.POSITIVE_INFINITY : cap;
      const pv = custom({
        tool: r.tool,
        callId: r.callId,
        text: results.text(i),
        cap: numericCap,
        previewChars: cfg.previewChars,
        stage: 'offload',
        isError: r.isError,
      });
      if (pv !== null && pv !== undefined) reduceOn(draft, i, 'offload', `custom reducer for ${r.tool}`, pv, numericCap);
      continue;
    }
    if (!cfg.offload.enabled) continue;
    // an output that arrives mostly repeating an earlier verbatim one is sent as that one's line
    // ranges and the lines that differ, whatever its size: nothing is left out
    if (repeats && cap !== 'unlimited' && results.isNew(i) && repeatOne(draft, i)) continue;
    // what the agent asked to read reaches it whole: the clear stage reduces it once it is no longer in use
    if (keptRead(results, i)) continue;
    // with the payback schedule the clear stage's walk of the session decides these: whole while
    // the model reads them and reduced after use when the session can pay for it (after-use.ts)
    if (
      deferToClear &&
      cap !== 'unlimited' &&
      results.overCap(i, cap) !== undefined &&
      results.overCap(i, cfg.offload.afterUseCap) === undefined
    )
      continue;
    // the latest round is what the model reads next: it may stay verbatim up to latestCap
    const latest = r.item > lastAssistant && latestCap > 0 && cap !== 'unlimited' ? Math.max(cap, latestCap) : cap;
    const size = results.overCap(i, latest);
    if (size !== undefined) {
      reduceOn(
        draft,
        i,
        'offload',
        `${fmt(size)} ${unit} over ${r.tool}'s cap of ${fmt(latest as number)}${latest !== cap ? ' for the latest round' : ''}`,
        undefined,
        cap as number,
      );
    } else if (
      dedupe &&
      cap !== 'unlimited' &&
      results.rawLen[i]! >= DEDUPE_MIN_CHARS &&
      results.text(i).length >= DEDUPE_MIN_CHARS &&
      (latest === cap || results.overCap(i, cap) === undefined)
    ) {
      // (a latest-round result over the normal cap is offloaded next call; a reference now would
      // change into an offload marker then)
      // (rawLen only bounds the length from above: escapes such as \u00e9 make it longer)
      dedupeOne(draft, i, dedupe);
    }
  }
  return draft.outcome;
}

/**
 * Whether result i is a read the agent asked for, over its cap and within `offload.keepReads`
 * (`offload.keepEarlyReads` in the session's first `offload.earlyCalls` calls): left
 * whole on arrival, for the clear stage to reduce once the agent is no longer using it (clear-result.ts
 * gives it the preview it would have had on arrival). Without a clear stage (`clear.enabled` off,
 * the Responses WebSocket route) nothing could reduce it later, so it is offloaded on arrival.
 */
export function keptRead(results: Results, i: number): boolean {
  const cfg = results.cfg;
  if (!cfg.offload.enabled || !cfg.clear.enabled) return false;
  const upTo = keptReadsUpTo(results, i);
  if (upTo <= 0) return false;
  const cap = results.capOf(i);
  return (
    cap !== 'unlimited' &&
    results.overCap(i, cap) !== undefined &&
    results.overCap(i, upTo) === undefined &&
    // with reduce after use on, it decides what reaches the model whole (after-use.ts), reads included
    !deferredToClear(cfg) &&
    requestedRead(hintForResult(results.req, results.list[i]!))
  );
}

/**
 * Why result i, over its tool's cap, reached the model whole in this call, in the words of the
 * setting that kept it so (a read the agent asked for: `offload.keepReads`): `reason` with its size
 * and cap, `why` the clause alone; undefined when it is not over its cap. Asked only of results no
 * stage reduced; `noGain` when a stage found a marker would not be shorter. The inspector shows it
 * instead of "under its cap", which would mislead a user tuning caps.
 */
export function whyWhole(results: Results, i: number, noGain: boolean): { reason: string; why: string } | undefined {
  const cfg = results.cfg;
  const r = results.list[i]!;
  const nominal = capFor(cfg, r.names);
  if (nominal === 'unlimited') return undefined;
  const size = results.overCap(i, nominal);
  if (size === undefined) return undefined;
  const why = wholeClause(results, i, noGain);
  return { reason: `${fmt(size)} ${cfg.capUnit}, over ${r.tool}'s cap of ${fmt(nominal)}; ${why}`, why };
}

function wholeClause(results: Results, i: number, noGain: boolean): string {
  const cfg = results.cfg;
  const r = results.list[i]!;
  const unit = cfg.capUnit;
  if (noGain) return 'sent whole: a marker would not be shorter';
  if (!cfg.offload.enabled) return 'sent whole: the offload stage is off';
  const cap = results.capOf(i);
  if (cap === 'unlimited' || results.overCap(i, cap) === undefined)
    return `sent whole: ${r.tool}'s cap was raised to ${cap === 'unlimited' ? 'unlimited' : fmt(cap)} after the agent read back its outputs (offload.backoff)`;
  if (keptRead(results, i)) {
    const upTo = keptReadsUpTo(results, i);
    const key = upTo === cfg.offload.keepReads ? 'offload.keepReads' : 'offload.keepEarlyReads';
    return `kept whole while in use: a read the agent asked for stays whole up to ${fmt(upTo)} ${unit} (${key}) and is cleared once no longer used`;
  }
  if (deferredToClear(cfg) && results.overCap(i, cfg.offload.afterUseCap) === undefined)
    return 'whole in the call it arrives in, reduced after use when the session can pay for it (offload.afterUseCap)';
  if (stopped(results.guarantee, 'offload', results.callOf(r.item)))
    return "sent whole: the session's savings so far could not pay for reading it back";
  const lastAssistant = results.req.kinds.lastIndexOf('assistant');
  if (r.item > lastAssistant && cfg.offload.latestCap > 0 && results.overCap(i, Math.max(cap, cfg.offload.latestCap)) === undefined)
    return `the latest round stays whole up to ${fmt(cfg.offload.latestCap)} ${unit} (offload.latestCap); offloaded from the next call on`;
  return 'sent whole';
}

/** The largest read kept whole at result i's call: `offload.keepEarlyReads` in the session's first `offload.earlyCalls` calls. */
function keptReadsUpTo(results: Results, i: number): number {
  const o = results.cfg.offload;
  return o.keepEarlyReads > o.keepReads && results.callOf(results.list[i]!.item) < o.earlyCalls ? o.keepEarlyReads : o.keepReads;
}

/** The reducer for a tool: by exact or bare name first, then the first `*` pattern that matches. */
function reducerFor(reducers: Record<string, CustomReducer>, names: readonly string[]): CustomReducer | undefined {
  for (const n of names) if (reducers[n]) return reducers[n];
  const pattern = Object.keys(reducers).find((p) => p.includes('*') && toolListed([p], names));
  return pattern ? reducers[pattern] : undefined;
}

/**
 * A result identical to an earlier verbatim one becomes a reference to it: the second copy tells
 * the model nothing new. Decided on arrival, so it never changes a prefix already sent.
 */
function dedupeOne(draft: Draft, i: number, seen: Map<string, number>): void {
  const results = draft.results;
  const text = results.text(i);
  const key = `${text.length}:${text.slice(0, 64)}:${text.slice(-64)}`;
  const first = seen.get(key);
  if (first === undefined || draft.decisions[first] || results.text(first) !== text) {
    if (first === undefined || draft.decisions[first]) seen.set(key, i);
    return;
  }
  const f = results.list[first]!;
  // the spillway marker says which result it repeats, with no preview: that result is above,
  // verbatim; a seed style has no words for it, and gets a note in the preview's place (within
  // the preview budget, so markers stay bounded by previewChars + header)
  const note = `(identical to the ${f.tool} output of call ${f.callId} above; nothing new in it)`;
  const preview = results.cfg.markerStyle !== 'spillway' && note.length <= results.cfg.previewChars ? note : '';
  referTo(draft, i, first, preview, false);
}

/**
 * A new output that mostly repeats an earlier one still verbatim in this projection becomes a
 * reference to it carrying the whole output as that one's line ranges and the lines that differ
 * (../repeats.ts). The earlier output compared is the one that leaves the least to send; an
 * identical one makes it a plain reference, as `dedupeOne` would, also for a read kept whole over its
 * cap, which `dedupeOne` never sees. Decided on arrival only, so it never changes a prefix already sent.
 */
function repeatOne(draft: Draft, i: number): boolean {
  const results = draft.results;
  const text = results.text(i);
  if (text.length < DEDUPE_MIN_CHARS) return false;
  const probes = probeLines(text);
  if (probes.length === 0) return false;
  // a marker's body is bounded like a preview's, so the marker is recognised as one (recognise.ts)
  const maxBody = Math.min(REPEAT_MAX_SENT * text.length, results.cfg.previewChars);
  let best: { j: number; body: string } | undefined;
  for (let j = i - 1, looked = 0; j >= 0 && looked < REPEAT_CANDIDATES; j--) {
    if (draft.decisions[j] || results.fixedAsIs(j)) continue;
    const earlier = results.text(j);
    if (earlier.length < DEDUPE_MIN_CHARS) continue;
    looked++;
    // an identical output is a plain reference, whatever its size: a read the agent asked for again
    // included (kept whole on its own, it would be sent twice)
    if (earlier === text) return referTo(draft, i, j, '', false);
    let found = 0;
    for (const p of probes) if (earlier.includes(p)) found++;
    // (a quick look before the whole comparison: a repeat has most of its characters there)
    if (found < REPEAT_PROBE_SHARE * probes.length) continue;
    const rep = encodeRepeat(earlier, text, REPEAT_MIN_COPIED * text.length);
    if (rep && rep.body.length <= maxBody && (!best || rep.body.length < best.body.length)) best = { j, body: rep.body };
  }
  return best ? referTo(draft, i, best.j, best.body, true) : false;
}

/**
 * Sends result i as a reference to the earlier result j, with `body` in the preview's place: its
 * reason names j's call (`referenceTarget` reads it back) and so does its marker; `changes` for a
 * repeat that carries ranges and the lines that differ, not for an identical output.
 */
function referTo(draft: Draft, i: number, j: number, body: string, changes: boolean): boolean {
  const f = draft.results.list[j]!;
  const reason = changes ? `${REPEAT_REASON}${f.callId}${REPEAT_REASON_END}` : `${REFERENCE_REASON}${f.callId}`;
  return reduceOn(draft, i, 'offload', reason, body, undefined, { tool: f.tool, callId: f.callId, ...(changes ? { changes: true } : {}) });
}

/**
 * Up to REPEAT_PROBES lines of `text`, at evenly spaced characters (a long line is looked up as often as
 * its share of the characters says), without a read tool's line number; lines under 12 characters say too little.
 */
function probeLines(text: string): string[] {
  const out: string[] = [];
  for (let k = 0; k < REPEAT_PROBES; k++) {
    const at = Math.floor(((k + 0.5) * text.length) / REPEAT_PROBES);
    const start = text.lastIndexOf('\n', at - 1) + 1;
    const end = text.indexOf('\n', at);
    const line = withoutLineNumber(text.slice(start, end < 0 ? text.length : end));
    if (line.trim().length >= 12) out.push(line);
  }
  return out;
}

/**
 * Tokens of the request as the agent sent it up to the end of each call: what a read-back in the
 * next call reads again at most (a projection is never longer). Counted once per projection.
 */
class SentBefore {
  private sums?: number[];
  constructor(private readonly results: Results) {}

  /** Tokens of the fixed parts and of every item first sent at or before call `call`. */
  upToCall(call: number): number {
    const results = this.results;
    if (!this.sums) {
      const tok = results.originalItemTokens();
      this.sums = [];
      let total = results.fixedTokens();
      tok.forEach((t, x) => {
        const c = results.callOf(x);
        while (this.sums!.length <= c) this.sums!.push(total);
        total += t;
        this.sums![c] = total;
      });
    }
    return this.sums[Math.min(call, this.sums.length - 1)] ?? results.fixedTokens();
  }
}

/**
 * A result over its cap that arrives after the offload kind stopped (../guarantee.ts) is offloaded
 * only if what it spares its own call covers the read-back it may cause (`paysOwnReadBack`).
 */
function offloadPayingItsReadBack(draft: Draft, i: number, cap: number, sent: SentBefore): void {
  const results = draft.results;
  const size = results.overCap(i, cap);
  const g = results.guarantee;
  if (size === undefined || !g) return;
  const r = results.list[i]!;
  const call = results.callOf(r.item);
  const why = `${fmt(size)} ${results.cfg.capUnit} over ${r.tool}'s cap of ${fmt(cap)}; it pays for its own read-back`;
  const out = reduceResult(results, i, 'offload', why, undefined, cap, draft.decisions[i]);
  if (typeof out === 'string') return;
  const d = out.decision;
  const own = { ask: readCallTokens(results.counter), answer: readBackAnswerTokens(d.originalTokens, d.originalChars) };
  if (!paysOwnReadBack(g, 'offload', call, d.originalTokens - d.projectedTokens, sent.upToCall(call), own)) return;
  draft.record(i, d, [out.write]);
}
