/**
 * The guarantee's ledger: what a session has cost so far under each price model, as the agent's
 * own requests (raw history) and as projected, both with caching, and what its read-backs cost.
 * The clear stage (stages/clear.ts) keeps one while it walks the session's calls and takes a
 * cache-breaking decision only when the ledger can pay for it: after the call that carries it, the
 * projection has cost no more than raw history under every price model of the session's route (the
 * provider its requests go to; every model when that is not known), even if the session ended
 * right there. There is no overrun allowance: a saving still expected may be a reason to clear,
 * never room to go over raw. Savings banked by earlier reductions (offloads on arrival, earlier
 * clears) are what a rewrite spends.
 *
 * Read-backs: each read-back the engine sees or is told of (run.ts, engine.ts) is charged at the
 * call it happened, as the replay prices it (READ_BACK_*, src/replay/metrics.ts). The kind of
 * reduction whose handle was read back (an offload, a file input, a clear) is recorded, and a kind
 * stops, from the next call it could decide in, while the bank (raw minus projected minus
 * read-backs, under the worst price model) cannot cover the next read-back it may cause (`stopsAt`),
 * and goes on once it can again. A stop changes only decisions still to come, never what was sent.
 *
 * The arithmetic is the providers' caching reduced to what the engine knows: a call reads from the
 * cache the prefix it shares with the previous call and writes the rest, nothing is cached under the
 * providers' minimum (clear-schedule.ts names the prices), and a call sent after the provider's cache
 * surely expired (`coldAfter`, from the times the host gives) reads nothing, raw or projected. OpenAI's cache steps are left out
 * (docs/savings.md, "The guarantee", says what that leaves of the bound as the replay's meter bills it).
 */
import { CACHE_PRICES, type CachePrices } from './clear-schedule';
import type { SpillwayConfig } from './config';
import type { TokenCounter } from './tokens';
import type { StageName } from './types';

/**
 * What a call reads from the cache, by how the provider caches. `read`: the prefix it shares with the
 * previous call (OpenAI, DeepSeek and Gemini cache the longest prefix they have seen). `atBreakpoint`:
 * only up to the last cache breakpoint within that prefix; Anthropic caches up to the breakpoints the
 * agent marks, and agents (Claude Code) mark the end of each request, so after a rewrite in the middle
 * the cache is read up to the end of the last earlier request before it, not up to the rewrite.
 */
export interface CacheRead {
  read: number;
  atBreakpoint: number;
}

/** One call as the cache sees it: tokens read from the previous call's prefix, and all tokens sent. */
export interface CallTokens {
  read: number;
  /** what a cache at breakpoints reads (`read` when omitted: the previous request is whole) */
  atBreakpoint?: number;
  total: number;
}

/** The price models whose cache is at the agent's breakpoints (see CacheRead). */
export const BREAKPOINT_CACHES: ReadonlySet<string> = new Set(['anthropic']);

/** The tokens a call reads from the cache under `pm`. */
function readOf(c: CallTokens | CacheRead, pm: CachePrices): number {
  return BREAKPOINT_CACHES.has(pm.family) && c.atBreakpoint !== undefined ? c.atBreakpoint : c.read;
}

/** Of a prefix of `tokens` the cache holds, what the provider reads: nothing under its minimum (as the replay's `billInput`). */
function cachedPart(tokens: number, pm: CachePrices): number {
  return tokens < pm.minCached ? 0 : tokens;
}

/** The input cost of one call under `pm`, in uncached-token units: a request under the minimum is not cached at all. */
function callCost(c: CallTokens, pm: CachePrices): number {
  if (c.total < pm.minCached) return Math.max(0, c.total);
  const read = cachedPart(Math.min(Math.max(0, readOf(c, pm)), c.total), pm);
  return read * pm.cachedRead + (c.total - read) * pm.cacheWrite;
}

/**
 * At most this many characters of a stored output come back in one read-back: the agent greps the
 * output with a few lines of context, not the whole of it (the replay's meter cuts a read-back's
 * answer to the same, src/replay/metrics.ts).
 */
export const READ_BACK_MAX_CHARS = 2_000;
/** Tokens a read call and its answer cost as items beyond their text (the engine's 4 per item, twice). */
export const READ_BACK_ITEM_TOKENS = 8;
/**
 * The read call the model writes, as the replay writes it (`readBackCall`): the handle, a grep for the
 * identifier and the context lines. Its tokens are counted once per counter from this text.
 */
const READ_BACK_CALL_TEXT = '{"handle":"sw_000000000000000000000000","grep":"an_identifier_the_agent_missed_00","context":5}';

const readCallCounts = new WeakMap<TokenCounter, number>();
/** The tokens of the read call (READ_BACK_CALL_TEXT) under `counter`, counted once per counter. */
export function readCallTokens(counter: TokenCounter): number {
  let n = readCallCounts.get(counter);
  if (n === undefined) readCallCounts.set(counter, (n = counter.count(READ_BACK_CALL_TEXT)));
  return n;
}
/**
 * Output prices relative to an uncached input token, per price model of CACHE_PRICES: the read call
 * is output the model writes (Anthropic Sonnet 4.5 5x, GPT-5 8x, GPT-4o 4x: src/replay/prices.ts).
 * A model not named here is charged the dearest.
 */
const OUTPUT_PRICE: Readonly<Record<string, number>> = { anthropic: 5, openai: 8, 'openai-4o': 4 };
const DEAREST_OUTPUT = Math.max(...Object.values(OUTPUT_PRICE));

/** What hid an output the agent read back: a stage's reduction of a result, or a file input. */
export type ReductionKind = StageName | 'input';

/** One read-back charged to the session, at the call it happened. */
export interface ReadBack {
  /** the call (0-based) whose request carries the read, or that the host told of it before */
  call: number;
  kind: ReductionKind;
  /** tokens of the read call the model wrote (output) */
  ask: number;
  /** tokens of what the read returns, at most READ_BACK_MAX_CHARS of the output */
  answer: number;
}

/** Where a session's ledger stood after the last call the clear stage's walk charged. */
export interface Bank {
  call: number;
  /** raw minus projected minus read-backs, per price model (CACHE_PRICES order) */
  banked: number[];
  /** projected tokens of that call: what the next read-back reads again */
  running: number;
  /** tokens earlier read-backs added to the agent's history, carried by every later call */
  carried: number;
}

/** What the guarantee keeps in the session memory (session.ts). */
export interface GuaranteeRecord {
  readBacks: ReadBack[];
  /**
   * per kind, the calls at which it stopped and went on again, in turn and ascending: stopped from
   * the first, going on from the second, stopped again from the third, ...
   */
  stops: Partial<Record<ReductionKind, number[]>>;
  bank?: Bank;
  /**
   * when each call of the session was sent (ms since the epoch), by call: a gap longer than a
   * provider keeps its cache idle leaves that call cold, for raw history and projection alike
   */
  at?: Array<number | undefined>;
  /** the price models the session's provider bills by (its route, ProjectOptions.provider); absent: every model */
  route?: string;
}

/** Whether the guarantee holds the session: the clear stage on with the payback schedule keeps the ledger. */
export function guaranteed(cfg: SpillwayConfig): boolean {
  return cfg.clear.enabled && cfg.clear.schedule === 'payback';
}

/** A session's record to extend in this call: a copy of the one remembered, or an empty one. */
export function copyGuarantee(g: GuaranteeRecord | undefined): GuaranteeRecord {
  if (!g) return { readBacks: [], stops: {} };
  const stops: GuaranteeRecord['stops'] = {};
  for (const [kind, calls] of Object.entries(g.stops) as [ReductionKind, number[]][]) stops[kind] = [...calls];
  return {
    readBacks: [...g.readBacks],
    stops,
    ...(g.at ? { at: [...g.at] } : {}),
    ...(g.bank ? { bank: g.bank } : {}),
    ...(g.route ? { route: g.route } : {}),
  };
}

/** True when `kind` is stopped at call `call`: it decides nothing there. */
export function stopped(g: GuaranteeRecord | undefined, kind: ReductionKind, call: number): boolean {
  const s = g?.stops[kind];
  if (!s) return false;
  let n = 0;
  while (n < s.length && s[n]! <= call) n++;
  return n % 2 === 1;
}

/**
 * The tokens a read-back of one output returns: READ_BACK_MAX_CHARS of its characters at the
 * output's own tokens per character, or the whole output when shorter.
 */
export function readBackAnswerTokens(tokens: number, chars: number): number {
  if (chars <= READ_BACK_MAX_CHARS) return tokens;
  return Math.ceil((tokens * READ_BACK_MAX_CHARS) / chars);
}

/**
 * What the read-backs made at one call cost under `pm`: one extra model call (an agent asks for all
 * it missed together) that reads the projected context it re-sends, `prefix` tokens, from the cache,
 * writes each read call and its answer, and outputs the read calls. As the replay's `readBackCost`.
 */
export function readBackCost(prefix: number, reads: readonly Pick<ReadBack, 'ask' | 'answer'>[], pm: CachePrices): number {
  if (reads.length === 0) return 0;
  const added = reads.reduce((a, r) => a + readBackTokens(r), 0);
  const asked = reads.reduce((a, r) => a + r.ask, 0);
  return prefix * pm.cachedRead + added * pm.cacheWrite + asked * (OUTPUT_PRICE[pm.family] ?? DEAREST_OUTPUT);
}

/**
 * What the session's clears still owe: the handles they hid that the agent has not read back, the
 * tokens those read-backs would return, and the most one of them would. Each is a read-back the
 * agent may still make, at any later call, one a call (see `owedCost`).
 */
export interface Owed {
  handles: number;
  answers: number;
  /** the largest answer among them (or an estimate of it: their mean, for a clear only planned) */
  largest: number;
}

/** No handle owed. */
export const NOTHING_OWED: Readonly<Owed> = { handles: 0, answers: 0, largest: 0 };

/** The sum of two debts. */
export function addOwed(a: Readonly<Owed>, b: Readonly<Owed>): Owed {
  return { handles: a.handles + b.handles, answers: a.answers + b.answers, largest: Math.max(a.largest, b.largest) };
}

/** A debt less one read-back made of it (its largest answer is kept: it may be another handle's). */
export function payOwed(a: Readonly<Owed>, answer: number): Owed {
  return a.handles <= 1 ? NOTHING_OWED : { handles: a.handles - 1, answers: Math.max(0, a.answers - answer), largest: a.largest };
}

/**
 * The tokens read-backs of `handles` of the owed handles add to the agent's history, carried by every
 * later call: each read call, and each answer at the largest, up to all the answers owed.
 */
export function owedTokens(owed: Readonly<Owed>, handles: number, ask: number): number {
  return handles * (ask + READ_BACK_ITEM_TOKENS) + Math.min(owed.answers, handles * owed.largest);
}

/**
 * What the bank must still hold for late read-backs of what clears hid, under `pm`. The agent may read
 * back any owed handle at any later call, one a call, each in an extra call that re-reads a context
 * of `prefix` tokens and writes the read call and its answer (carried by every later call). Each of
 * those calls also reads `unsent` tokens fewer than raw history does (what the projection leaves out
 * of its context), less what those read-backs will carry (`owedTokens`), so a read-back costs the bank
 * only what it re-reads beyond that.
 *
 * How many: `covered` read-backs (`clear.readBacksCovered`) besides the one the bound allows the
 * session (docs/savings.md), each of the dearest answer; while the session has made no read-back
 * (`spent` false) that one is still to come and is left out. `Infinity` covers every owed handle: the
 * bound then holds for any agent, and the corpus loses most of its clears
 * (docs/log/2026-12-01-late-read-backs.md).
 */
export function owedCost(
  prefix: number,
  owed: Readonly<Owed>,
  covered: number,
  ask: number,
  spent: boolean,
  unsent: number,
  pm: CachePrices,
): number {
  const read = Math.min(owed.handles, covered + 1);
  const handles = read - (spent ? 0 : 1);
  if (handles <= 0) return 0;
  const saving = unsent - owedTokens(owed, read, ask);
  const answers = Math.min(owed.answers, handles * owed.largest);
  const each = readBackCost(prefix, [{ ask, answer: 0 }], pm) - Math.max(0, saving) * pm.cachedRead;
  return Math.max(0, handles * each + answers * pm.cacheWrite);
}

/** The tokens one read-back adds to the agent's history, carried by every later call. */
export function readBackTokens(r: Pick<ReadBack, 'ask' | 'answer'>): number {
  return r.ask + r.answer + READ_BACK_ITEM_TOKENS;
}

export class CostLedger {
  private readonly raw: number[];
  private readonly projected: number[];
  /** tokens of read-backs so far, re-read from the cache by every later call */
  private carried = 0;
  /** per price model, whether the call being charged finds the cache gone (it reads nothing from it) */
  private cold: boolean[];

  constructor(private readonly prices: readonly CachePrices[] = CACHE_PRICES) {
    this.raw = prices.map(() => 0);
    this.projected = prices.map(() => 0);
    this.cold = prices.map(() => false);
  }

  /** Sets which price models find the cache cold at the call about to be charged. */
  setCold(cold: (pm: CachePrices) => boolean): void {
    this.cold = this.prices.map(cold);
  }

  /** A call's cost under price model i, read nothing from the cache where it is cold. */
  private costOf(i: number, c: CallTokens): number {
    const pm = this.prices[i]!;
    return callCost(this.cold[i] ? { read: 0, atBreakpoint: 0, total: c.total } : c, pm);
  }

  /** Raw and projected cost after this call under price model i, read-backs carried included. */
  private after(i: number, raw: CallTokens, projected: CallTokens): { raw: number; projected: number } {
    const pm = this.prices[i]!;
    return {
      raw: this.raw[i]! + this.costOf(i, raw),
      projected: this.projected[i]! + this.costOf(i, projected) + this.carried * pm.cachedRead,
    };
  }

  /**
   * True when, with this call charged, the projection has cost no more than raw under every price
   * model, and can also pay now for a change the next call will make: without it that call would
   * read this one's `next.total` tokens from the cache; with it, it reads only `next.kept` and sends
   * `next.freed` tokens fewer, writing the rest again. What that costs over the call unchanged is
   * paid for here.
   */
  affords(raw: CallTokens, projected: CallTokens, next?: { total: number; kept: CacheRead; freed: number }): boolean {
    return this.prices.every((pm, i) => {
      const a = this.after(i, raw, projected);
      const extra = next
        ? (cachedPart(next.total, pm) - cachedPart(readOf(next.kept, pm), pm)) * (pm.cacheWrite - pm.cachedRead) -
          next.freed * pm.cacheWrite
        : 0;
      return a.projected + Math.max(0, extra) <= a.raw;
    });
  }

  /**
   * True when a decision that costs this call `projected` (against raw's `raw`) leaves the
   * projection no dearer than raw even if the session ended right after this call, with `reserve(pm)`
   * still banked (what its read-backs may yet cost: `owedCost`), and the saving
   * it is expected to bring over the calls the session can still be expected to make,
   * `expectedSaving(pm)`, at least makes up what it spends of the bank in this call, under every
   * price model. The expected saving is a reason to decide, never room to go over raw.
   */
  paysBack(
    raw: CallTokens,
    projected: CallTokens,
    expectedSaving: (pm: CachePrices) => number,
    reserve: (pm: CachePrices) => number = () => 0,
  ): boolean {
    return this.prices.every((pm, i) => {
      const a = this.after(i, raw, projected);
      return a.projected + reserve(pm) <= a.raw && expectedSaving(pm) >= this.costOf(i, projected) - this.costOf(i, raw);
    });
  }

  charge(raw: CallTokens, projected: CallTokens): void {
    this.prices.forEach((pm, i) => {
      const a = this.after(i, raw, projected);
      this.raw[i] = a.raw;
      this.projected[i] = a.projected;
    });
  }

  /** Charges the read-backs made at one call, which re-read `prefix` projected tokens; later calls carry them. */
  chargeReadBacks(prefix: number, reads: readonly ReadBack[]): void {
    if (reads.length === 0) return;
    this.prices.forEach((pm, i) => {
      this.projected[i]! += readBackCost(prefix, reads, pm);
    });
    this.carried += reads.reduce((a, r) => a + readBackTokens(r), 0);
  }

  /** What the projection has saved so far under each price model (raw minus projected; negative when dearer). */
  banked(): Record<string, number> {
    return Object.fromEntries(this.prices.map((pm, i) => [pm.name, this.raw[i]! - this.projected[i]!]));
  }

  /** Where the ledger stands after call `call`, whose projection sent `running` tokens. */
  bank(call: number, running: number): Bank {
    return { call, banked: this.prices.map((_, i) => this.raw[i]! - this.projected[i]!), running, carried: this.carried };
  }
}

/** The dearest read-back of `kind` made up to call `call`: the one that adds the most tokens. */
function dearestReadBack(g: GuaranteeRecord, kind: ReductionKind, call: number): ReadBack | undefined {
  let dearest: ReadBack | undefined;
  for (const r of g.readBacks)
    if (r.kind === kind && r.call <= call && (!dearest || readBackTokens(r) > readBackTokens(dearest))) dearest = r;
  return dearest;
}

/**
 * True when a reduction made on arrival at call `call`, which spares that call writing `saved`
 * tokens, pays in that call for the read-back it may cause, under every price model: the dearest
 * read-back of `kind` so far, and this output's own (`own`), each priced as an extra call that reads
 * a context of `prefix` tokens again. Such a decision brings its read-back into the bank before the
 * agent could make it (an output is read back at the earliest in the next call), so a kind that has
 * stopped may still take it: the bound is kept, and a session whose offloads stopped early does not
 * send a 900,000-character output whole for the rest of its calls.
 */
export function paysOwnReadBack(
  g: GuaranteeRecord,
  kind: ReductionKind,
  call: number,
  saved: number,
  prefix: number,
  own: Pick<ReadBack, 'ask' | 'answer'>,
  prices: readonly CachePrices[] = CACHE_PRICES,
): boolean {
  if (saved <= 0) return false;
  const sofar = dearestReadBack(g, kind, call);
  const dearest = sofar && readBackTokens(sofar) > readBackTokens(own) ? sofar : own;
  return prices.every((pm) => saved * pm.cacheWrite >= readBackCost(prefix, [dearest], pm));
}

/**
 * The kinds that stop, or go on again, from call `call`, given where the bank stood after the last
 * call the walk charged and the read-backs noted since (charged now, as the walk will charge them).
 * A kind whose outputs were read back must find its next read-back in the bank, priced as its
 * dearest so far; one never read back may go on while the bank is not below zero: the bound allows
 * the session one read-back over raw (docs/savings.md), and this is where it is spent. A stopped
 * kind goes on again once the bank covers that again (savings the session banked since, by the
 * kinds still deciding). Without a bank (no call charged yet) nothing changes.
 */
export function stopsAt(g: GuaranteeRecord, call: number, prices: readonly CachePrices[] = CACHE_PRICES): ReductionKind[] {
  const bank = g.bank;
  if (!bank) return [];
  const since = g.readBacks.filter((r) => r.call > bank.call && r.call <= call);
  const carried = bank.carried + since.reduce((a, r) => a + readBackTokens(r), 0);
  const left = prices.map((pm, i) => bank.banked[i]! - readBackCost(bank.running, since, pm) - carried * pm.cachedRead);
  const kinds: ReductionKind[] = ['offload', 'input', 'window', 'budget', 'clear'];
  return kinds.filter((kind) => {
    const dearest = dearestReadBack(g, kind, call);
    const short = prices.some((pm, i) => left[i]! < (dearest ? readBackCost(bank.running, [dearest], pm) : 0));
    return short !== stopped(g, kind, call);
  });
}
