/**
 * What earlier projections of the session changed at a later call than the one that first sent
 * the items they touched: results cleared (recalled from the session's memory), and file inputs
 * replaced a call or more after they were first sent (`inputs.keepRounds`).
 *
 * Why: the clear stage replays the session's calls inside the request and charges each call what
 * it cost (the guarantee's ledger, ../guarantee.ts). A result cleared at call k was sent whole
 * until then, and call k paid for the cache rewrite it made; counting it as cleared from its first
 * call on would make the session look cheaper than it was, and a later clear look affordable when
 * it is not.
 *
 * Where it sits: a helper of the clear stage (clear.ts), built once per projection before its walk:
 * it puts those items back as they were first sent, then tells the walk at each call what changed.
 */
import type { Draft, InputDecision } from './results';

/** One item a call made smaller, and by how many tokens. */
interface Change {
  item: number;
  tokens: number;
}

export class RecalledChanges {
  /** per call, the results it cleared */
  private readonly clears = new Map<number, number[]>();
  /** per call, the file inputs it replaced after they were first sent */
  private readonly lateInputs = new Map<number, InputDecision[]>();

  /** Reads the draft's earlier decisions, and adds back to `itemTokens` what each item had before them. */
  constructor(
    private readonly draft: Draft,
    itemTokens: number[],
  ) {
    const { results, ledger } = draft;
    results.list.forEach((r, i) => {
      const at = draft.decisions[i]?.clearedAt;
      if (draft.decisions[i]?.stage !== 'clear' || !at) return;
      itemTokens[r.item]! += at.tokens - this.tokensNow(i);
      const ii = this.inputItem(i);
      if (ii !== undefined) itemTokens[ii]! += draft.decisions[i]!.inputTokensSaved!;
      pushAt(this.clears, at.call, i);
    });
    for (const d of ledger.inputs.values()) {
      if (d.call <= results.callOf(d.item)) continue;
      itemTokens[d.item]! += d.originalTokens - d.projectedTokens;
      pushAt(this.lateInputs, d.call, d);
    }
  }

  /** What call `call` changed: each item it made smaller, in the order the walk applies them. */
  at(call: number): Change[] {
    const out: Change[] = [];
    for (const i of this.clears.get(call) ?? []) {
      const d = this.draft.decisions[i]!;
      out.push({ item: this.draft.results.list[i]!.item, tokens: d.clearedAt!.tokens - this.tokensNow(i) });
      // (a file input the clear replaced with the result: its call's item too)
      const ii = this.inputItem(i);
      if (ii !== undefined) out.push({ item: ii, tokens: d.inputTokensSaved! });
    }
    for (const d of this.lateInputs.get(call) ?? []) out.push({ item: d.item, tokens: d.originalTokens - d.projectedTokens });
    return out;
  }

  /** The results an earlier projection cleared at call `call`. */
  clearedAt(call: number): readonly number[] {
    return this.clears.get(call) ?? [];
  }

  /** The last call an earlier projection cleared in (-1: none). */
  get lastClearCall(): number {
    let last = -1;
    for (const call of this.clears.keys()) last = Math.max(last, call);
    return last;
  }

  private tokensNow(i: number): number {
    return this.draft.results.resultTokens(i, this.draft.decisions[i]);
  }

  /** The item of result i's call, when a clear replaced that call's file input with the result. */
  private inputItem(i: number): number | undefined {
    const { results, decisions } = this.draft;
    const r = results.list[i]!;
    return decisions[i]?.inputTokensSaved ? (r.call ?? results.req.calls.get(r.callId))?.item : undefined;
  }
}

/** Adds `value` to the list kept under `key`. */
export function pushAt<T>(map: Map<number, T[]>, key: number, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
