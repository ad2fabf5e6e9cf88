/**
 * Clearing one result, for the clear stage: what a clear of result i would free (estimated before
 * the stage decides), and the clear itself on the draft (a marker with the handle, the call's input
 * too where it is replaced).
 *
 * Why a module of its own: the clear stage (clear.ts) is a walk over the session's calls that
 * decides when to clear and which results; what one clear does to one result, and what it leaves in
 * the request, is the same at every call and reads better apart from that walk.
 *
 * Where it sits: a helper of the clear stage; it reduces through reduce.ts like the other stages,
 * and replaces file inputs through inputs.ts (`inputs.when: clear`).
 */
import { readBackAnswerTokens, type Owed } from '../guarantee';
import { handleFor } from '../handle';
import { decodeString } from '../json';
import { outputLines } from '../previews/envelope';
import { renderMarker } from '../markers';
import { stringTokens, type TokenCounter } from '../tokens';
import { deferredToClear } from './after-use';
import { replaceInput } from './inputs';
import { keptRead } from './offload';
import { reduceResult } from './reduce';
import { owned, type Decision, type Draft, type Replacement, type Results, type StoreWrite } from './results';

/** A file input the clear stage replaces with its call's result (`inputs.when: clear`). */
type InputClear = NonNullable<ReturnType<typeof replaceInput>>;

/**
 * What clearing each result would free, in tokens, estimated before the walk decides: the result
 * down to the marker a clear leaves, and its file input where the clear replaces that too. Each
 * estimate is kept until the walk reduces the result otherwise (`forget`).
 */
export class ClearGains {
  private readonly gains: (number | undefined)[];
  private readonly previews = new Map<number, number>();
  private readonly inputs = new Map<number, InputClear | null>();
  // file inputs the clear replaces with their call's result (`inputs.when: clear`), found once
  // (not with reduce after use on: its accounting of what each call saw whole does not cover inputs
  // a clear replaces, and the guarantee property found sessions over raw with both; inputs are then
  // replaced on arrival: inputs.ts)
  private readonly inputsByClear: boolean;
  private inputsStopped = false;

  constructor(private readonly draft: Draft) {
    const cfg = draft.results.cfg;
    this.gains = new Array<number | undefined>(draft.results.length);
    this.inputsByClear = cfg.inputs.enabled && cfg.inputs.when === 'clear' && !deferredToClear(cfg);
  }

  /** Tokens clearing result i would free (its file input's too, until inputs stop). */
  of(i: number): number {
    let gain = this.gains[i];
    if (gain === undefined) {
      const result = Math.max(0, this.tokensNow(i) - this.markerTokens(i));
      const input = this.inputsStopped ? undefined : this.inputOf(i);
      gain = this.gains[i] = result + (input ? input.decision.originalTokens - input.decision.projectedTokens : 0);
    }
    return gain;
  }

  /**
   * Whether a clear replaces file inputs from now on (the guarantee stops them while the bank cannot
   * cover their read-back): every estimate is dropped when that changes. True when estimates changed.
   */
  stopInputs(stopped: boolean): boolean {
    if (this.inputsStopped === stopped || !this.inputsByClear) return false;
    this.inputsStopped = stopped;
    this.gains.fill(undefined);
    return true;
  }

  /**
   * What clearing result i would owe (../guarantee.ts, `Owed`): its handle, and its file input's
   * when the clear replaces that too, each read back as the session prices it (session.ts,
   * `handleOrigin`: the result's original text, cut to a read-back's answer).
   */
  owes(i: number): Owed {
    const d = this.draft.decisions[i];
    const results = this.draft.results;
    const answer = d
      ? readBackAnswerTokens(d.originalTokens, d.originalChars)
      : readBackAnswerTokens(results.partsTokens(i), results.text(i).length);
    const handles = !this.inputsStopped && this.inputOf(i) ? 2 : 1;
    return { handles, answers: handles * answer, largest: answer };
  }

  /** Drops result i's estimate: the walk reduced it otherwise, so clearing it now frees less. */
  forget(i: number): void {
    this.gains[i] = undefined;
  }

  /** The file input that clearing result i replaces too (`inputs.when: clear`), if any. */
  inputOf(i: number): InputClear | undefined {
    if (!this.inputsByClear) return undefined;
    const { results, ledger } = this.draft;
    let x = this.inputs.get(i);
    if (x === undefined) {
      const call = results.list[i]!.call ?? results.req.calls.get(results.list[i]!.callId);
      const d = this.draft.decisions[i];
      x =
        call?.input && !ledger.inputs.has(call.input.start) && !d?.inputReplacement
          ? (replaceInput(results, call, results.callOf(call.item)) ?? null)
          : null;
      this.inputs.set(i, x);
    }
    return x ?? undefined;
  }

  private tokensNow(i: number): number {
    return this.draft.results.resultTokens(i, this.draft.decisions[i]);
  }

  // a read left whole while in use is cleared to the preview it would have had on arrival: its marker is
  // counted as it will be sent (a one-line marker's count would overstate what clearing it frees)
  private markerTokens(i: number): number {
    const results = this.draft.results;
    if (this.draft.decisions[i] || !keptRead(results, i)) return clearedMarkerTokens(results, i);
    let t = this.previews.get(i);
    if (t === undefined) {
      const out = reduceResult(results, i, 'clear', '', undefined, results.capOf(i) as number, undefined);
      t = typeof out === 'string' ? this.tokensNow(i) : out.decision.projectedTokens;
      this.previews.set(i, t);
    }
    return t;
  }
}

/** What a result cleared by `d` owes (../guarantee.ts, `Owed`), as `ClearGains.owes` estimated it. */
export function owedBy(d: Decision): Owed {
  const handles = d.inputHandle ? 2 : 1;
  const answer = readBackAnswerTokens(d.originalTokens, d.originalChars);
  return { handles, answers: handles * answer, largest: answer };
}

/** A clear of one result, made but not yet recorded: what the stage sends and what it frees. */
export interface PreparedClear {
  i: number;
  decision: Decision;
  writes: StoreWrite[];
  /** tokens the result and its file input (if replaced with it) free, as they will be sent */
  freed: number;
  /** the result's own share of `freed` */
  resultFreed: number;
  /** the first item the clear changes: the file input's call when it is replaced too */
  first: number;
}

/**
 * Clears result i (and its call's input with `clear.clearToolInputs`, or as a file input with
 * `inputs.when: clear`), without recording it: the stage decides on what the clear really frees
 * (`ClearGains` only estimates it), then records it (`commitClear`). A file-writing call's result is
 * often shorter than any marker ("File created"): then the result is sent as it was and only the
 * input is replaced. Undefined when nothing would change.
 */
export function prepareClear(draft: Draft, i: number, why: string, input?: InputClear): PreparedClear | undefined {
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
          lines: outputLines(text),
          tokens,
        },
      },
    };
  }
  if (out === 'no-gain') draft.refuse(i);
  if (typeof out === 'string') return undefined;
  const writes: StoreWrite[] = [out.write];
  const resultFreed = results.resultTokens(i, draft.decisions[i]) - results.resultTokens(i, out.decision);
  let freed = resultFreed;
  let first = results.list[i]!.item;
  if (input) {
    out.decision.inputReplacement = input.decision.replacement;
    out.decision.inputHandle = input.decision.handle;
    out.decision.inputTokensSaved = input.decision.originalTokens - input.decision.projectedTokens;
    out.decision.clearedInput = clearedInputFigures(input, why);
    writes.push(input.write);
    freed += out.decision.inputTokensSaved;
    first = Math.min(first, input.decision.item);
  } else if (results.cfg.clear.clearToolInputs) {
    const cleared = clearInput(draft, i, out.decision.handle);
    if (cleared) {
      out.decision.inputReplacement = cleared.replacement;
      writes.push(cleared.write);
    }
  }
  return { i, decision: out.decision, writes, freed, resultFreed, first };
}

/** Records a prepared clear on the draft, marked with the call that made it and the tokens it took. */
export function commitClear(draft: Draft, p: PreparedClear, call: number): void {
  p.decision.clearedAt = { call, tokens: draft.results.resultTokens(p.i, draft.decisions[p.i]) };
  draft.record(p.i, p.decision, p.writes);
}

/**
 * The file input a clear replaces, as the projection reports it (`inputs`, by the run): the figures
 * inputs.ts measured, and a reason that says the clear of its call's result replaced it, and why.
 */
function clearedInputFigures(input: InputClear, why: string): Replacement {
  const d = input.decision;
  return {
    replacement: d.replacement,
    handle: d.handle,
    reason: `${d.reason}; replaced with its call's result by a clear: ${why}`,
    originalChars: d.originalChars,
    originalTokens: d.originalTokens,
    projectedTokens: d.projectedTokens,
    tool: d.tool,
    callId: d.callId,
  };
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
  // fewer tokens too, as for every reduction (reduce.ts), counted as the input's item counts them
  if (stringTokens(JSON.parse(replacement), draft.results.counter) >= draft.results.countNode(input)) return undefined;
  const meta = {
    tool: owned(r.tool),
    callId: owned(r.callId),
    stage: 'input' as const,
    chars: original.length,
    bytes: Buffer.byteLength(original, 'utf8'),
    lines: outputLines(original),
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
