/**
 * Each price model's column replayed as if the session were sent to that model's provider.
 *
 * The engine holds a session to "never dearer" under the prices of the provider its requests go to
 * (the route: `ProjectOptions.provider`, else the provider of the request's model). A replay of a
 * Claude Code session is routed to Anthropic, so its GPT-5 column prices a projection the engine
 * never weighed under GPT-5's prices: what that session would cost if the same decisions were sent
 * to OpenAI, which no proxy would make. Here every other provider the ledger prices gets a replay of
 * its own, routed there, and its column of the result is taken from that replay: the cost the
 * session would have if its requests went there. Misses, reductions and every call's detail stay
 * those of the session's own route; each other route's misses are kept beside (`routedAs`).
 */
import { PROVIDERS, providerOfModel } from '../engine/clear-schedule';
import { MemoryStore } from '../store';
import { PRICE_MODELS } from './metrics';
import type { Transcript } from './readers';
import { replay, replayAsync, type ReplayOptions, type ReplayResult, type ReplayTotals } from './replay';

/** The provider a transcript's requests go to: the one given, else its model's; undefined when neither is known. */
export function routeOf(t: Transcript, provider?: string): string | undefined {
  return provider ?? providerOfModel(typeof t.base.model === 'string' ? t.base.model : undefined);
}

/**
 * The providers among `families` (price model families) that want a replay of their own: those the
 * ledger prices, other than the session's route. None when the route is unknown: the engine then
 * holds every price model the ledger knows at once.
 */
export function otherRoutes(route: string | undefined, families: readonly string[]): string[] {
  if (route === undefined) return [];
  return [...new Set(families)].filter((f) => f !== route && PROVIDERS.includes(f));
}

/** A column replayed under its own route: that replay's totals, and per call its cost of that column. */
export interface RoutedColumn {
  provider: string;
  totals: ReplayTotals;
  calls?: readonly Pick<ReplayResult['calls'][number], 'cost'>[];
}

/**
 * `totals` with the columns of each routed replay's price models taken from that replay: cost, cost
 * with read-backs and cold calls. The same session, so the raw side is the same in both; only the
 * projection's bill changes. `routedAs` names each such price model, with the misses of its replay.
 */
export function withRouteColumns(totals: ReplayTotals, routed: readonly RoutedColumn[]): ReplayTotals {
  const out: ReplayTotals = {
    ...totals,
    cost: { ...totals.cost },
    costWithReadBacks: { ...totals.costWithReadBacks },
    ...(totals.coldCalls ? { coldCalls: { ...totals.coldCalls } } : {}),
    routedAs: { ...totals.routedAs },
  };
  for (const r of routed) {
    for (const name of Object.keys(r.totals.cost)) {
      if (!(name in totals.cost)) continue;
      out.cost[name] = r.totals.cost[name]!;
      out.costWithReadBacks[name] = r.totals.costWithReadBacks[name]!;
      if (out.coldCalls && r.totals.coldCalls?.[name] !== undefined) out.coldCalls[name] = r.totals.coldCalls[name];
      out.routedAs![name] = { provider: r.provider, missedIds: r.totals.missedIds, referencedIds: r.totals.referencedIds };
    }
  }
  if (!Object.keys(out.routedAs!).length) delete out.routedAs;
  return out;
}

/** The options of a replay routed to `provider`: the price models of that provider only, a store of its own. */
function routedOptions(opts: ReplayOptions, provider: string): ReplayOptions {
  const prices = (opts.prices ?? PRICE_MODELS).filter((pm) => pm.name === provider);
  // only the figures are wanted: nothing of the caller's store, callbacks or detail
  const { store: _store, detail: _detail, onCall: _onCall, onProjection: _onProjection, ...rest } = opts;
  return { ...rest, store: new MemoryStore(), prices, provider };
}

/** Replays `t` routed to `provider` for the price models of that provider only, with a store of its own. */
export function replayRouted(t: Transcript, opts: ReplayOptions, provider: string): ReplayResult {
  return replay(t, routedOptions(opts, provider));
}

/** `replayRouted` off the event loop's way (`replayAsync`): the inspector's host, stopped by `opts.signal`. */
export function replayRoutedAsync(t: Transcript, opts: ReplayOptions, provider: string): Promise<ReplayResult> {
  return replayAsync(t, routedOptions(opts, provider));
}

/**
 * `replay(t, opts)`, with every other provider's columns replayed under that provider's route
 * (`spillway replay --each-route`, the benchmark's held-out table). One replay more per such provider.
 */
export function replayEachRoute(t: Transcript, opts: ReplayOptions): ReplayResult {
  const result = replay(t, opts);
  const others = otherRoutes(
    routeOf(t, opts.provider),
    (opts.prices ?? PRICE_MODELS).map((pm) => pm.name),
  );
  if (!others.length) return result;
  const routed: RoutedColumn[] = others.map((provider) => {
    const r = replayRouted(t, opts, provider);
    return { provider, totals: r.totals, calls: r.calls };
  });
  const calls = result.calls.map((c, k) => {
    const cost = { ...c.cost };
    for (const r of routed) for (const [name, v] of Object.entries(r.calls?.[k]?.cost ?? {})) if (name in cost) cost[name] = v;
    return { ...c, cost };
  });
  return { ...result, calls, totals: withRouteColumns(result.totals, routed) };
}
