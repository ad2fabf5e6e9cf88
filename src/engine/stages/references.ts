/**
 * References: which later model calls used a tool result, judged from the agent's own requests.
 *
 * Why: the clear stage must not take what the agent is still working from. A result is in use while
 * the agent keeps writing what it could only have taken from it (a path, a qualified name, a number,
 * an error code) in its replies: its text, and the inputs of its tool calls. A result the agent
 * referred to in one of its last few calls is likely to be referred to again; one it has not
 * referred to for a while has been moved on from. Measured on the corpus, clears that took results
 * the agent referred to recently caused most of the clear stage's misses (docs/savings.md).
 *
 * What counts as a reference is deliberately narrow: tokens a model would not write from its own
 * knowledge (an underscore, a dot or slash inside the word, an inner capital, letters mixed with
 * digits), at least MIN_TOKEN_CHARS long. Common English words never make a result look in use.
 *
 * Where it sits: a helper of the clear stage (clear.ts), computed once per projection and only when
 * the clear stage protects results in use (`clear.inUseCalls`). The token sets of results are kept
 * across projections (a session sends the same results again on every call) in a bounded cache.
 */
import { owned, type Results } from './results';

/** Shorter tokens say too little: `a.b`, `x_1` appear in every program. */
const MIN_TOKEN_CHARS = 5;
/** A result longer than this is scanned only in its first and last half of this: a log's middle repeats its ends. */
const SCAN_MAX_CHARS = 400_000;
/** Token sets kept across projections, keyed by a result's identity; dropped whole when full. */
const CACHE_MAX = 20_000;
const TOKEN = /[A-Za-z_$][\w$]*(?:[./:-][\w$]+)*|\d[\w.]*/g;

const cache = new Map<string, ReadonlySet<string>>();

/** Is this a token the agent could only have taken from what it read? */
export function distinctive(t: string): boolean {
  if (t.length < MIN_TOKEN_CHARS) return false;
  if (/[_./:$]/.test(t.slice(1, -1))) return /[A-Za-z]/.test(t);
  if (/[a-z][A-Z]/.test(t)) return true;
  return /\d/.test(t) && /[A-Za-z]/.test(t);
}

/** The distinctive tokens of a text, trailing punctuation taken off. */
export function tokensOf(text: string): Set<string> {
  const out = new Set<string>();
  const scan = text.length > SCAN_MAX_CHARS ? text.slice(0, SCAN_MAX_CHARS / 2) + '\n' + text.slice(-SCAN_MAX_CHARS / 2) : text;
  for (const m of scan.matchAll(TOKEN)) {
    const t = m[0].replace(/[.:-]+$/, '');
    // a copy: a match is a view of the text it was found in, and a cached token would keep that text
    // (for an undecoded result or an assistant item, the whole request body) alive
    if (distinctive(t) && !out.has(t)) out.add(owned(t));
  }
  return out;
}

/** The tokens of a text, from the cache when the same text (by its id, length and ends) was read before. */
function cachedTokens(id: string, text: () => string, length: number, ends: () => string): ReadonlySet<string> {
  // a copy, as the tokens are: a key built of slices of the request text kept that whole text alive
  // for as long as the entry (measured: every request body of a 1,000-call session, 3 GB)
  const key = owned(`${id}\u0000${length}\u0000${ends()}`);
  let s = cache.get(key);
  if (!s) {
    if (cache.size >= CACHE_MAX) cache.clear();
    s = tokensOf(text());
    cache.set(key, s);
  }
  return s;
}

function resultTokens(results: Results, i: number): ReadonlySet<string> {
  const text = results.text(i);
  return cachedTokens(
    results.list[i]!.callId,
    () => text,
    text.length,
    () => text.slice(0, 48) + '\u0000' + text.slice(-48),
  );
}

/**
 * A references walk, kept for the session's next call. The walk is the same in every call of a
 * session up to where the request changed, so the next call extends it rather than redoing it: a
 * walk redone on every call made the clear stage's time grow with the session (every result's text
 * decoded and its tokens filed again at every call). The next call takes it and changes it in place.
 */
export interface ReferencesMemory {
  /** whether a token referred only to the latest result holding it (`clear.inUseLatest`) */
  readonly latest: boolean;
  /** per result: the item it sits in, whether it was scanned, the extra text scanned with it */
  readonly item: number[];
  readonly candidate: boolean[];
  readonly extra: Array<string | undefined>;
  /** per result: the token sets filed for it in `holders` (its text's, its extra text's) */
  readonly tokens: Array<ReadonlyArray<ReadonlySet<string>>>;
  /** which results hold each token, ascending */
  readonly holders: Map<string, number[]>;
  /** per result, the assistant items that refer to it, ascending */
  readonly refs: number[][];
}

function emptyWalk(latest: boolean): ReferencesMemory {
  return { latest, item: [], candidate: [], extra: [], tokens: [], holders: new Map(), refs: [] };
}

/**
 * How much of the previous call's walk holds for this request: the results in its leading unchanged
 * items, with the same eligibility and extra text (0 when none, or when any of them changed: then the
 * walk starts over). Takes out of `w` what does not hold.
 */
function keepWalk(
  w: ReferencesMemory,
  results: Results,
  sameItems: number,
  candidate: (i: number) => boolean,
  extra: ((i: number) => string | undefined) | undefined,
): number {
  const list = results.list;
  let kept = 0;
  while (kept < list.length && kept < w.item.length && list[kept]!.item < sameItems) {
    if (w.item[kept] !== list[kept]!.item) return 0;
    const c = candidate(kept);
    if (c !== w.candidate[kept]) return 0;
    if (c) {
      const more = extra?.(kept);
      if (more !== w.extra[kept]) return 0;
      // the equal string of this request: the memory then keeps no earlier request's text alive
      w.extra[kept] = more;
    }
    kept++;
  }
  // a result in those items the previous call did not have: the items are not what they were
  if (kept < list.length && list[kept]!.item < sameItems) return 0;
  // the results after those: out of the holders (the lists are ascending: theirs are at the ends)
  for (let i = kept; i < w.item.length; i++)
    for (const set of w.tokens[i]!)
      for (const t of set) {
        const h = w.holders.get(t);
        if (!h) continue;
        while (h.length && h[h.length - 1]! >= kept) h.pop();
        if (!h.length) w.holders.delete(t);
      }
  for (const a of [w.item, w.candidate, w.extra, w.tokens, w.refs]) a.length = kept;
  // and the references from items that changed
  for (const r of w.refs) while (r.length && r[r.length - 1]! >= sameItems) r.pop();
  return kept;
}

/**
 * For each result, the items (assistant items after it, in order) that refer to it. Results that
 * `candidate` rejects are not scanned (their list stays empty). With `latest`, a token refers only
 * to the latest scanned result before the item that holds it (the copy the agent reads it from: a
 * path every command names refers to the last output that printed it, not to every earlier one);
 * without, to every result that holds it. In a session, the previous call's walk is extended
 * (ReferencesMemory); the lists are the same as a walk over the whole request.
 */
export function referencesOf(
  results: Results,
  candidate: (i: number) => boolean,
  extra?: (i: number) => string | undefined,
  latest = false,
): number[][] {
  const { req } = results;
  const n = results.length;
  const prev = results.takeReferences();
  let w = prev && prev.memory.latest === latest ? prev.memory : emptyWalk(latest);
  const from = prev && w === prev.memory ? keepWalk(w, results, prev.sameItems, candidate, extra) : 0;
  if (from === 0) w = emptyWalk(latest);
  // assistant items before `sameItems` were walked already, over results in items before them
  const itemsFrom = from > 0 ? prev!.sameItems : 0;
  const holders = w.holders;
  for (let i = from; i < n; i++) {
    w.item.push(results.list[i]!.item);
    w.refs.push([]);
    const c = candidate(i);
    w.candidate.push(c);
    if (!c) {
      w.extra.push(undefined);
      w.tokens.push([]);
      continue;
    }
    const more = extra?.(i);
    w.extra.push(more);
    const add = (t: string) => {
      const h = holders.get(t);
      if (!h) holders.set(t, [i]);
      else if (h[h.length - 1] !== i) h.push(i);
    };
    const sets = [resultTokens(results, i)];
    if (more)
      sets.push(
        cachedTokens(
          `\u0002input:${results.list[i]!.callId}`,
          () => more,
          more.length,
          () => more.slice(0, 48) + '\u0000' + more.slice(-48),
        ),
      );
    for (const set of sets) for (const t of set) add(t);
    w.tokens.push(sets);
  }
  results.references = w;
  const refs = w.refs;
  if (!holders.size) return refs;
  for (let a = itemsFrom; a < req.items.length; a++) {
    if (req.kinds[a] !== 'assistant') continue;
    const it = req.items[a]!;
    const seen = new Set<number>();
    const raw = () => req.text.slice(it.start, it.end);
    const ends = () =>
      req.text.slice(it.start, Math.min(it.end, it.start + 48)) + '\u0000' + req.text.slice(Math.max(it.start, it.end - 48), it.end);
    for (const t of cachedTokens('\u0001assistant', () => raw().replace(/\\n/g, '\n'), it.end - it.start, ends)) {
      const held = holders.get(t);
      if (!held) continue;
      if (latest) {
        // the last holder before this item (holders ascend, and so do their items)
        let j = held.length - 1;
        while (j >= 0 && results.list[held[j]!]!.item >= a) j--;
        const i = j >= 0 ? held[j]! : -1;
        if (i >= 0 && !seen.has(i)) {
          seen.add(i);
          refs[i]!.push(a);
        }
        continue;
      }
      for (const i of held) {
        if (seen.has(i) || results.list[i]!.item >= a) continue;
        seen.add(i);
        refs[i]!.push(a);
      }
    }
  }
  return refs;
}
