/**
 * What hid each identifier the agent used and the projection did not show: the reduction whose
 * stored output holds it (a result offloaded on arrival, windowed, held to its cap or cleared), a
 * file input replaced by a marker, or nothing the store holds (the agent would rerun the tool).
 *
 * Why: a miss rate says how often the projection hid something; tuning needs to know which
 * mechanism hid it, and a person reading a replay needs to see what each miss cost the agent: the
 * read-backs it implies, one grep per stored output per call (src/replay/metrics.ts prices them).
 * The replay's meter (replay.ts) attributes each miss with `attributeMiss` as it meters a call;
 * `missCauseTotals` sums a session's calls and `poolMissCauses` several sessions.
 */
import type { StageName } from '../engine/types';

/**
 * What hid a missed identifier: the stage of the reduction that stored it (an offload made in the
 * call the result arrived in is `offload`, one made later, once the model had used it,
 * `offload-after-use`), a file input replaced by a marker, or nothing the store holds.
 */
export type MissCause = StageName | 'offload-after-use' | 'input' | 'unheld';

/** Causes in the order summaries list them, with the words they use (a stage not listed goes by its name). */
const MISS_CAUSE_LABELS: Readonly<Partial<Record<MissCause, string>>> = {
  offload: 'offloaded on arrival',
  'offload-after-use': 'offloaded after use',
  window: 'windowed (an older turn)',
  budget: 'held to its cap',
  clear: 'cleared',
  input: 'file input replaced by a marker',
  unheld: 'held by no stored output',
};

/** The words for a cause. */
export const causeLabel = (cause: string): string => MISS_CAUSE_LABELS[cause as MissCause] ?? cause;

/** One missed identifier: the handle that holds it, what put it there, and since which call. */
export interface Miss {
  id: string;
  handle?: string;
  cause: MissCause;
  /** the tool whose result (or, for a file input, whose input) the handle holds */
  tool?: string;
  /** the call whose result (or input) the handle holds */
  callId?: string;
  /** that call's file or command as people read it (engine/names.ts sourceLabel), when the replay knows it */
  source?: string;
  /** what the agent wrote around the identifier in the reply that used it: one line, cut short (`wroteAround`) */
  wrote?: string;
  /** the call that made the reduction (0-based), when known */
  since?: number;
  /** the call whose request first held the result (0-based), when known (not for file inputs) */
  arrived?: number;
}

/** One read-back a call's misses imply: one grep of one stored output for all it missed there. */
export interface ReadBack {
  handle?: string;
  cause: MissCause;
  tool?: string;
  ids: string[];
  /** tokens the read adds to the agent's history: the read call and its answer */
  tokens: number;
}

/** Per cause, the identifiers it hid and the read-backs they imply. */
export type MissCauseTotals = Partial<Record<MissCause, { ids: number; readBacks: number }>>;

/** What a reduction or a file input says about itself, as far as attribution needs. */
export interface HeldBy {
  handle: string;
  tool: string;
  /** the call whose result (or input) it is */
  callId?: string;
  /** the reduction's stage; absent for a file input */
  stage?: StageName;
  /** the reduction's tool result: its position among the request's tool results; absent for a file input */
  result?: number;
}

/** Where the meter looks up what it knows of a handle. */
export interface MissLookups {
  storedText: (held: HeldBy) => string;
  /** the call that made this reduction (its stage, its handle) */
  since: (held: HeldBy) => number | undefined;
  /** the call whose request first held tool result `result` */
  arrived: (result: number) => number | undefined;
  /** the file or command a call named, as people read it (absent: misses are not named) */
  nameOf?: (held: HeldBy) => string | undefined;
}

/**
 * The miss of `id`: the first of `held` (reductions before file inputs, as the replay lists them)
 * whose stored text holds it; `since` gives the call where that reduction (its stage, its handle) was first made.
 */
export function attributeMiss(id: string, held: readonly HeldBy[], look: MissLookups): Miss {
  for (const h of held) {
    if (!look.storedText(h).includes(id)) continue;
    const since = look.since(h);
    const arrived = h.result === undefined ? undefined : look.arrived(h.result);
    const later = h.stage === 'offload' && since !== undefined && arrived !== undefined && since > arrived;
    const source = look.nameOf?.(h);
    return {
      id,
      handle: h.handle,
      cause: later ? 'offload-after-use' : (h.stage ?? 'input'),
      tool: h.tool,
      ...(h.callId !== undefined ? { callId: h.callId } : {}),
      ...(source !== undefined ? { source } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(arrived !== undefined ? { arrived } : {}),
    };
  }
  return { id, cause: 'unheld' };
}

/** Characters of the agent's reply a miss shows on each side of the identifier. */
const WROTE_SIDE_CHARS = 60;

/**
 * What the agent wrote around `id` in its reply (its text and its tool calls' inputs), on one line:
 * so a person can judge whether the miss mattered (`…the failing test is in html_test.go, line 4…`).
 * Undefined when the reply does not hold it.
 */
export function wroteAround(reply: string, id: string): string | undefined {
  const at = reply.indexOf(id);
  if (at < 0) return undefined;
  const from = Math.max(0, at - WROTE_SIDE_CHARS);
  const to = Math.min(reply.length, at + id.length + WROTE_SIDE_CHARS);
  const text = reply
    .slice(from, to)
    .replace(/\\n|\s+/g, ' ')
    .trim();
  return `${from > 0 ? '…' : ''}${text}${to < reply.length ? '…' : ''}`;
}

/** Sums misses and read-backs by cause over a session's calls. */
export function missCauseTotals(
  calls: readonly { missed: readonly Pick<Miss, 'cause'>[]; readBacks: readonly Pick<ReadBack, 'cause'>[] }[],
) {
  const out: MissCauseTotals = {};
  const slot = (c: MissCause) => (out[c] ??= { ids: 0, readBacks: 0 });
  for (const call of calls) {
    for (const m of call.missed) slot(m.cause).ids++;
    for (const r of call.readBacks) slot(r.cause).readBacks++;
  }
  return out;
}

/** Sums several sessions' totals by cause. */
export function poolMissCauses(totals: readonly (MissCauseTotals | undefined)[]): MissCauseTotals {
  const out: MissCauseTotals = {};
  for (const t of totals) {
    for (const [cause, v] of Object.entries(t ?? {}) as [MissCause, { ids: number; readBacks: number }][]) {
      const s = (out[cause] ??= { ids: 0, readBacks: 0 });
      s.ids += v.ids;
      s.readBacks += v.readBacks;
    }
  }
  return out;
}

/** The causes of a total in the order of MISS_CAUSE_LABELS, with their label; causes that hid nothing left out. */
export function causesInOrder(t: MissCauseTotals): { cause: MissCause; label: string; ids: number; readBacks: number }[] {
  const known = Object.keys(MISS_CAUSE_LABELS) as MissCause[];
  const extra = (Object.keys(t) as MissCause[]).filter((c) => !known.includes(c));
  return [...known, ...extra]
    .filter((c) => (t[c]?.ids ?? 0) > 0 || (t[c]?.readBacks ?? 0) > 0)
    .map((c) => ({ cause: c, label: causeLabel(c), ids: t[c]!.ids, readBacks: t[c]!.readBacks }));
}
