/**
 * The inspector: sessions on the left (on top when the panel is narrow); for the chosen session its
 * totals led by cost under caching, the chart (context size or cumulative cost) with the turns that
 * matter marked, the caps per tool (collapsible), the filters and the search, the (windowed) timeline
 * of turns and the chosen turn's tool results. It opens on the most recent session, on the turn that
 * saved the most. The host sends summaries first; a turn's details and a result's text are asked for
 * when shown.
 */
import * as React from 'react';
import {
  costModelFor,
  formatChange,
  headline,
  totalsOf,
  type CapChoice,
  type ClearSettings,
  type SearchMatch,
  type SessionInfo,
  type SessionView,
  type TextPage,
  type Totals,
  type TurnDetail,
  type TurnSummary,
} from '../src/protocol';
import type { Host } from './host';
import { compact, count, percent, wouldHaveSaved } from './format';
import { money, pricedElsewhere, routableTo, sessionSentence, explainTurnCost, type CostLens } from './cost';
import { Glossary, Term } from './components/Glossary';
import { LimitAction } from './components/Limit';
import { RouteAction } from './components/Route';
import { Badge, Button, Dropdown, Spinner, TextField } from './ui';
import { firstInteresting, MARK_LABEL, marksOf, type MarkKind } from './marks';
import { CapsPanel } from './components/CapsPanel';
import { explainDryRun } from './dryRun';
import { Chart, type ChartMode } from './components/Chart';
import { SessionList } from './components/SessionList';
import { Timeline } from './components/Timeline';
import { TurnDetails } from './components/TurnDetails';

/** Where the timeline and the details sit side by side and fill the panel's height (styles.css, the 1100 px break). */
const WIDE_LAYOUT = '(min-width: 1101px)';
/** Pause after the last keystroke before a dry run or a search is asked for. */
const DEBOUNCE_MS = 300;
/** A turn's details whose top is less than this far above the panel's bottom edge count as out of view (a heading alone is not "in view"). */
const REVEAL_MARGIN_PX = 80;

function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = React.useState(value);
  React.useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

export function App(props: { host: Host }) {
  const { host } = props;
  const initial = React.useMemo(() => host.getState(), [host]);
  const [sessions, setSessions] = React.useState<SessionInfo[]>([]);
  const [sessionId, setSessionId] = React.useState<string | undefined>(initial.sessionId);
  const [view, setView] = React.useState<SessionView>();
  const [turns, setTurns] = React.useState<TurnSummary[]>([]);
  const [selected, setSelected] = React.useState(-1);
  const [detail, setDetail] = React.useState<TurnDetail>();
  const [detailError, setDetailError] = React.useState<string>();
  const [expanded, setExpanded] = React.useState<string | undefined>(initial.expanded);
  const [tool, setTool] = React.useState('');
  const [reducedOnly, setReducedOnly] = React.useState(false);
  const [markFilter, setMarkFilter] = React.useState<MarkKind | ''>('');
  const [query, setQuery] = React.useState('');
  const [hits, setHits] = React.useState<Set<number> | null>(null);
  /** where the search found its text, per turn (the timeline and the details show and mark it) */
  const [matches, setMatches] = React.useState<ReadonlyMap<number, SearchMatch[]>>(new Map());
  const [changes, setChanges] = React.useState<Record<string, CapChoice>>({});
  const [dryResult, setDryResult] = React.useState<{
    turns: TurnSummary[];
    totals: Totals;
    perTool?: Record<string, Totals>;
    clear?: ClearSettings;
  }>();
  const [dryPending, setDryPending] = React.useState(false);
  const [chartMode, setChartMode] = React.useState<ChartMode>(initial.chart ?? 'tokens');
  /** the model the cost is priced at, when the user picked one (else the session's own, else the first listed) */
  const [model, setModel] = React.useState<string | undefined>(initial.model);
  const [capsOpen, setCapsOpen] = React.useState<boolean>(initial.capsOpen ?? false);
  const [progress, setProgress] = React.useState<string | null>(null);
  const [error, setError] = React.useState<string>();
  const [saving, setSaving] = React.useState(false);
  const [notice, setNotice] = React.useState<string>();
  const sessionRef = React.useRef(sessionId);
  sessionRef.current = sessionId;
  const selectedRef = React.useRef(selected);
  selectedRef.current = selected;
  const pendingTurn = React.useRef<number | undefined>(initial.turn);
  /** bumped each time the session's figures are (re)loaded, so the open turn's details are asked for again (a save re-runs the replay) */
  const [loaded, setLoaded] = React.useState(0);
  const autoOpened = React.useRef(!!initial.sessionId);
  /** the session whose turn the panel has chosen (an open of it again keeps that turn) */
  const chosenFor = React.useRef<string | undefined>(undefined);
  /** session/open requests in flight: the panel says it is busy (aria-busy) until they are answered */
  const [opening, setOpening] = React.useState(0);

  const open = React.useCallback(
    async (id: string, turn?: number) => {
      autoOpened.current = true;
      if (sessionRef.current !== id) {
        setHits(null);
        setQuery('');
        setTool('');
        setReducedOnly(false);
        setMarkFilter('');
        setChanges({});
        if (sessionRef.current !== undefined) setExpanded(undefined);
        // another session's figures are not shown under this one's title while it opens
        setView(undefined);
        setTurns([]);
        setSelected(-1);
        setDetail(undefined);
      }
      setSessionId(id);
      sessionRef.current = id;
      setError(undefined);
      setDryResult(undefined);
      setOpening((n) => n + 1);
      try {
        const v = await host.request('session/open', { sessionId: id });
        if (sessionRef.current !== id) return;
        setView(v);
        setTurns(v.turns);
        setLoaded((n) => n + 1);
        const want = turn ?? pendingTurn.current;
        pendingTurn.current = undefined;
        // the same session opened again (the host's showSession answered after the panel's own open,
        // a click on the session shown): the turn chosen since stays, rather than jumping back
        const now = selectedRef.current;
        const kept = chosenFor.current === id && now >= 0 && now < v.turns.length ? now : undefined;
        setSelected(want !== undefined && want < v.turns.length ? want : (kept ?? firstInteresting(v.turns)));
        chosenFor.current = id;
      } catch (e) {
        chosenFor.current = undefined;
        setView(undefined);
        setTurns([]);
        setError(e instanceof Error ? e.message : String(e));
      } finally {
        setOpening((n) => n - 1);
      }
    },
    [host],
  );

  // handlers first, then ready: nothing the host sends is missed
  React.useEffect(() => {
    const offs = [
      host.on('sessions/changed', (p) => {
        setSessions(p.sessions);
        // the inspector opens on the most recent session when it was not showing one
        if (!autoOpened.current && p.sessions[0]) void open(p.sessions[0].id);
      }),
      host.on('session/turnsAppended', (p) => {
        if (p.sessionId !== sessionRef.current) return;
        setTurns((old) => {
          const next = old.slice();
          for (const t of p.turns) next[t.index] = t;
          return next;
        });
      }),
      host.on('session/reloaded', (p) => {
        if (p.sessionId !== sessionRef.current) return;
        // recomputed figures keep the turn the user was on
        pendingTurn.current = selectedRef.current >= 0 ? selectedRef.current : undefined;
        void open(p.sessionId);
      }),
      host.on('caps/changed', (p) => setView((v) => (v ? { ...v, caps: p.caps, defaultCap: p.defaultCap } : v))),
      host.on('host/showSession', (p) => void open(p.sessionId, p.turn)),
      host.on('host/progress', (p) => setProgress(p.message)),
    ];
    host.ready();
    const restore = host.getState().sessionId;
    if (restore) void open(restore);
    return () => offs.forEach((off) => off());
  }, [host, open]);

  React.useEffect(() => {
    host.setState({
      ...(sessionId ? { sessionId } : {}),
      ...(selected >= 0 ? { turn: selected } : {}),
      ...(expanded ? { expanded } : {}),
      chart: chartMode,
      capsOpen,
      ...(model ? { model } : {}),
    });
  }, [host, sessionId, selected, expanded, chartMode, capsOpen, model]);

  // the chosen turn's details, on demand
  React.useEffect(() => {
    if (!sessionId || selected < 0 || selected >= turns.length) {
      setDetail(undefined);
      return;
    }
    let live = true;
    setDetailError(undefined);
    host.request('turn/detail', { sessionId, turn: selected }).then(
      (d) => {
        if (live) setDetail(d);
      },
      (e: Error) => live && setDetailError(e.message),
    );
    return () => {
      live = false;
    };
  }, [host, sessionId, selected, turns.length, loaded]);

  // dry run under the changed caps
  const debouncedChanges = useDebounced(changes, DEBOUNCE_MS);
  React.useEffect(() => {
    if (!sessionId) return;
    if (Object.keys(debouncedChanges).length === 0) {
      setDryResult(undefined);
      setDryPending(false);
      return;
    }
    let live = true;
    setDryPending(true);
    host.request('caps/dryRun', { sessionId, caps: debouncedChanges }).then(
      (r) => {
        if (!live) return;
        setDryResult(r);
        setDryPending(false);
      },
      (e: Error) => {
        if (!live) return;
        setDryPending(false);
        setError(`dry run failed: ${e.message}`);
      },
    );
    return () => {
      live = false;
    };
  }, [host, sessionId, debouncedChanges]);

  // search in the results' text
  const debouncedQuery = useDebounced(query.trim(), DEBOUNCE_MS);
  React.useEffect(() => {
    if (!sessionId || debouncedQuery === '') {
      setHits(null);
      setMatches(new Map());
      return;
    }
    let live = true;
    host.request('search/results', { sessionId, query: debouncedQuery }).then(
      (r) => {
        if (!live) return;
        const byTurn = new Map<number, SearchMatch[]>();
        for (const m of r.matches ?? []) byTurn.set(m.turn, [...(byTurn.get(m.turn) ?? []), m]);
        setMatches(byTurn);
        setHits(new Set(r.turns));
      },
      (e: Error) => live && setError(`search failed: ${e.message}`),
    );
    return () => {
      live = false;
    };
  }, [host, sessionId, debouncedQuery, loaded]);

  const dry = dryResult?.turns;
  const shown = dry && dry.length === turns.length ? dry : undefined;
  // one cost story: the headline (cost with read-backs against raw, src/protocol/cost.ts) priced at one model
  const prices = view?.prices ?? [];
  const price = prices.find((p) => p.model === model) ?? prices[0];
  const lens: CostLens = React.useMemo(() => ({ costModel: costModelFor(price?.family), price }), [price]);
  // in a dry run the marks (clears, misses, savings) are the dry run's, as the lines are
  const marks = React.useMemo(() => marksOf(shown ?? turns, lens.costModel), [shown, turns, lens.costModel]);
  const visible = React.useMemo(() => {
    const out: number[] = [];
    const marked = markFilter ? new Set(marks[markFilter]) : undefined;
    for (const t of turns) {
      if (!t) continue;
      if (tool && !(t.resultTools ?? t.tools).includes(tool)) continue;
      if (reducedOnly && !(tool ? t.tools.includes(tool) : t.reductions > 0)) continue;
      if (hits && !hits.has(t.index)) continue;
      if (marked && !marked.has(t.index)) continue;
      out.push(t.index);
    }
    return out;
  }, [turns, tool, reducedOnly, hits, markFilter, marks]);
  // a filter keeps the details in step with what is listed
  React.useEffect(() => {
    if (visible.length > 0 && !visible.includes(selected)) setSelected(visible[0]!);
  }, [visible, selected]);
  const cumulative = React.useMemo(() => {
    const out: number[] = [];
    let sum = 0;
    for (const t of turns) {
      const p = shown?.[t.index]?.projectedTokens ?? t.projectedTokens;
      sum += t.originalTokens - p;
      out.push(sum);
    }
    return out;
  }, [turns, shown]);
  const totals = React.useMemo(() => totalsOf(turns), [turns]);
  const dryTotals = React.useMemo(() => (shown ? totalsOf(shown) : undefined), [shown]);
  const explained = React.useMemo(
    () =>
      view && shown && dryTotals
        ? explainDryRun({
            base: turns,
            dry: shown,
            baseTotals: totals,
            dryTotals,
            clear: dryResult?.clear,
            changes,
            caps: view.caps,
            defaultCap: view.defaultCap,
            costModel: lens.costModel,
          })
        : undefined,
    [view, shown, dryTotals, turns, totals, dryResult, changes, lens.costModel],
  );
  const tools = React.useMemo(() => [...new Set(turns.flatMap((t) => [...t.tools, ...(t.resultTools ?? [])]))].sort(), [turns]);
  const providerCached = React.useMemo(() => {
    let n = 0;
    let any = false;
    for (const t of turns) {
      if (t?.providerCachedTokens === undefined) continue;
      any = true;
      n += t.providerCachedTokens;
    }
    return any ? n : undefined;
  }, [turns]);

  const loadText = React.useCallback(
    (
      handle: string,
      side: 'original' | 'projected',
      offset: number,
      limit: number,
      at?: { turn: number; callId: string },
    ): Promise<TextPage> => host.request('text/page', { sessionId: sessionRef.current!, handle, side, offset, limit, ...(at ?? {}) }),
    [host],
  );
  const loadWhole = React.useCallback(
    (turn: number, callId: string, offset: number, limit: number): Promise<TextPage> =>
      host.request('result/page', { sessionId: sessionRef.current!, turn, callId, offset, limit }),
    [host],
  );

  const save = async () => {
    setSaving(true);
    try {
      // the host asks workspace or user, and confirms in a notification
      const r = await host.request('caps/save', { caps: changes, target: 'ask' });
      if (r.cancelled) return;
      setChanges({});
      setNotice(undefined);
      if (sessionId) {
        pendingTurn.current = selectedRef.current >= 0 ? selectedRef.current : undefined;
        await open(sessionId);
      }
    } catch (e) {
      setError(`saving the caps failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      setSaving(false);
    }
  };

  const selectTurn = (turn: number) => {
    if (turn !== selectedRef.current) setExpanded(undefined);
    setSelected(turn);
  };
  // a turn clicked (timeline, chart, marks) brings its details into view when they are below the fold
  // (a narrow panel stacks them under the timeline); the arrow keys only select, so the list stays put
  const detailsRef = React.useRef<HTMLDivElement>(null);
  const reveal = React.useRef(false);
  const openTurn = (turn: number) => {
    selectTurn(turn);
    reveal.current = true;
  };
  React.useEffect(() => {
    const el = detailsRef.current;
    if (!reveal.current || !el || !detail || detail.index !== selected) return;
    reveal.current = false;
    const box = el.getBoundingClientRect();
    const viewport = window.innerHeight || document.documentElement.clientHeight;
    if (box.top > viewport - REVEAL_MARGIN_PX || box.bottom < 0) el.scrollIntoView({ block: 'start', behavior: 'smooth' });
  }, [detail, selected]);

  // a result opened to be read gets the panel: what is above the toolbar scrolls away and the timeline
  // and the details fill the height (side by side; stacked narrow, where they flow with the page anyway)
  const splitRef = React.useRef<HTMLDivElement>(null);
  const expand = (key: string | undefined) => {
    setExpanded(key);
    const el = splitRef.current;
    if (!key || !el || !window.matchMedia?.(WIDE_LAYOUT).matches) return;
    const main = el.closest('.main');
    const toolbar = main?.querySelector('.toolbar')?.getBoundingClientRect().height ?? 0;
    if (main && el.getBoundingClientRect().top - main.getBoundingClientRect().top > toolbar + 1) el.scrollIntoView({ block: 'start' });
  };

  const session = sessions.find((s) => s.id === sessionId) ?? view?.session;
  // the figures are the projection made for the session's own provider: said when priced at another's
  const elsewhere = session && pricedElsewhere(session, lens);
  const filtered = !!(tool || hits || markFilter || reducedOnly);
  return (
    <div className="app">
      <SessionList sessions={sessions} selected={sessionId} onSelect={(id) => void open(id)} />
      <main className="main" aria-busy={opening > 0}>
        {progress && (
          <div className="progress" role="status">
            <Spinner aria-label="working" /> {progress}
          </div>
        )}
        {error && (
          <div className="error" role="alert">
            {error}
          </div>
        )}
        {notice && (
          <div className="notice" role="status">
            {notice}
          </div>
        )}
        {!session || !view ? (
          <p className="muted intro">{sessions.length ? (sessionId ? 'Opening the session…' : 'Choose a session.') : ''}</p>
        ) : (
          <>
            <p className="story" data-testid="story">
              {sessionSentence(turns)}
            </p>
            <header className="session-head">
              <h1>{session.title}</h1>
              <span className="muted session-detail" title={session.detail}>
                <DetailLine text={session.detail} />
              </span>
              {session.observed && (
                <p
                  className="observed"
                  data-testid="would-have-saved"
                  title="Observe mode: every request went upstream byte for byte; the figures are what Spillway would have sent"
                >
                  Observed, sent unchanged: {wouldHaveSaved(totals)}
                </p>
              )}
              <div className="totals" data-testid="totals">
                {totals.cost?.[lens.costModel] && (
                  <HeadlineCost cost={totals.cost[lens.costModel]!} lens={lens} prices={prices} own={session.model} onModel={setModel} />
                )}
                <span>
                  {compact(totals.originalTokens)} → <b>{compact(totals.projectedTokens)}</b> tokens (saved{' '}
                  {percent(totals.originalTokens - totals.projectedTokens, totals.originalTokens)})
                </span>
                <span>{count(turns.length)} turns</span>
                {dryTotals && (
                  <span className="dry-text" data-testid="dry-totals">
                    dry run: {compact(dryTotals.projectedTokens)} tokens (saved{' '}
                    {percent(dryTotals.originalTokens - dryTotals.projectedTokens, dryTotals.originalTokens)})
                    {dryTotals.cost?.[lens.costModel] && <>, cost {formatChange(headline(dryTotals.cost[lens.costModel]!).change)}</>}
                  </span>
                )}
                <span>
                  <Term word="cache-stable" /> {percent(totals.cacheStableShare, 1)}
                </span>
                {providerCached !== undefined && (
                  <span
                    data-testid="provider-cached"
                    title="prompt tokens the provider reported as read from its cache, over the proxied turns"
                  >
                    provider cached {compact(providerCached)} ({percent(providerCached, totals.projectedTokens)})
                  </span>
                )}
                {totals.missed > 0 ? (
                  <Badge data-testid="missed-answer">
                    {count(totals.missed)} <Term word="miss">missed identifiers</Term> in {count(marks.missed.length)} turn
                    {marks.missed.length === 1 ? '' : 's'}
                  </Badge>
                ) : (
                  // the third question the panel answers (which turn needed something it hid), answered when the answer is none
                  <span data-testid="missed-answer">
                    <Term word="miss">Misses</Term>: none: no turn needed anything it hid
                  </span>
                )}
                {session.origin === 'replay' && !session.live && (
                  // a replayed session only: measuring replays it three times more on the host, so it waits to be asked
                  <LimitAction key={`${session.id}:${loaded}`} measure={() => host.request('session/limits', { sessionId: session.id })} />
                )}
                <Glossary />
              </div>
              {elsewhere && (
                <p className="muted" data-testid="priced-elsewhere">
                  {elsewhere}
                  {routableTo(session, lens) && (
                    // replays the session once more on the host, so it waits to be asked
                    <>
                      {' '}
                      <RouteAction
                        key={`${session.id}:${loaded}:${lens.costModel}`}
                        lens={lens}
                        model={lens.price.model}
                        measure={() => host.request('session/routed', { sessionId: session.id, costModel: lens.costModel })}
                      />
                    </>
                  )}
                </p>
              )}
            </header>
            <Chart
              turns={turns}
              dry={shown}
              selected={selected}
              onSelect={openTurn}
              mode={chartMode}
              onMode={setChartMode}
              marks={marks}
              lens={lens}
            />
            <CapsPanel
              caps={view.caps}
              defaultCap={view.defaultCap}
              capUnit={view.capUnit}
              changes={changes}
              saving={saving}
              open={capsOpen}
              onToggle={setCapsOpen}
              base={totals}
              {...(dryResult && shown ? { dry: dryResult.totals } : {})}
              {...(dryResult?.perTool ? { perTool: dryResult.perTool } : {})}
              pending={dryPending}
              lens={lens}
              explain={explained}
              onChange={(t, cap) =>
                setChanges((old) => {
                  const next = { ...old };
                  if (cap === undefined) delete next[t];
                  else next[t] = cap;
                  return next;
                })
              }
              onSave={() => void save()}
              onRevert={() => setChanges({})}
            />
            <div className="toolbar">
              <Dropdown
                aria-label="Filter by tool"
                value={tool}
                options={[{ value: '', label: 'All tools' }, ...tools.map((t) => ({ value: t, label: t }))]}
                onChange={setTool}
              />
              <label className="check">
                <input
                  type="checkbox"
                  data-testid="reduced-only"
                  checked={reducedOnly}
                  onChange={(e) => setReducedOnly(e.currentTarget.checked)}
                />{' '}
                reduced only
              </label>
              <Dropdown
                aria-label="Show turns"
                data-testid="mark-filter"
                value={markFilter}
                options={[
                  { value: '', label: 'All turns' },
                  ...(['clears', 'missed', 'savings'] as const).map((k) => ({ value: k, label: `${MARK_LABEL[k]} (${marks[k].length})` })),
                ]}
                onChange={(v) => setMarkFilter(v as MarkKind | '')}
              />
              <TextField
                aria-label="Search tool results"
                type="search"
                placeholder="Search in tool results"
                value={query}
                onChange={setQuery}
              />
              {filtered && (
                <span className="muted" data-testid="filter-count">
                  {count(visible.length)} of {count(turns.length)} turns
                </span>
              )}
              {(tool || query || markFilter || reducedOnly) && (
                <Button appearance="secondary" onClick={() => (setTool(''), setQuery(''), setMarkFilter(''), setReducedOnly(false))}>
                  Clear filter
                </Button>
              )}
            </div>
            <div className="split" ref={splitRef}>
              <Timeline
                turns={turns}
                visible={visible}
                cumulative={cumulative}
                dry={shown}
                selected={selected}
                onSelect={selectTurn}
                onActivate={openTurn}
                lens={lens}
                {...(hits ? { matches } : {})}
              />
              <div className="details-anchor" ref={detailsRef} data-testid="details-anchor">
                <TurnDetails
                  detail={detail && detail.index === selected ? detail : undefined}
                  summary={turns[selected]}
                  costText={explainTurnCost(shown ?? turns, selected, lens)}
                  dryRun={!!shown}
                  error={detailError}
                  loadText={loadText}
                  loadWhole={loadWhole}
                  expanded={expanded}
                  onExpanded={expand}
                  {...(hits && debouncedQuery ? { highlight: debouncedQuery, matches: matches.get(selected) } : {})}
                  onOpen={(handle, find) => host.command('result/openStored', { handle, ...(find ? { find } : {}) })}
                  onCompare={(handle, at) => host.command('result/compare', { handle, ...(at ?? {}) })}
                  onSelectTurn={openTurn}
                  onCopy={(handle) => {
                    host.command('result/copyHandle', { handle });
                    setNotice(`Copied ${handle}`);
                  }}
                />
              </div>
            </div>
          </>
        )}
      </main>
    </div>
  );
}

/** The session's detail line, with "records skipped" (a replay's) explained on hover. */
function DetailLine(props: { text: string }) {
  const m = /(\d[\d,]*) records skipped/.exec(props.text);
  if (!m) return <>{props.text}</>;
  return (
    <>
      {props.text.slice(0, m.index)}
      {m[1]} <Term word="records skipped" />
      {props.text.slice(m.index + m[0].length)}
    </>
  );
}

/**
 * The headline cost: raw history → the projection with read-backs, in dollars at the chosen model,
 * the change (the figure every other place shows), the change before read-backs beside it, and the
 * model picker (the session's own model first when known).
 */
function HeadlineCost(props: {
  cost: { raw: number; projected: number; readBack?: number | undefined };
  lens: CostLens;
  prices: readonly { model: string; inputPerMTok: number; source: string }[];
  own: string | undefined;
  onModel: (model: string) => void;
}) {
  const { cost, lens, prices, own } = props;
  const h = headline(cost);
  const p = lens.price;
  return (
    <span className="totals-cost-group">
      {prices.length > 0 && (
        <Dropdown
          aria-label="Price at model"
          data-testid="price-model"
          value={p?.model ?? ''}
          options={prices.map((x) => ({
            value: x.model,
            label: `${x.model} ($${x.inputPerMTok}/M)${own && own.toLowerCase().startsWith(x.model) ? ' · this session' : ''}`,
          }))}
          onChange={props.onModel}
        />
      )}{' '}
      <span className="totals-cost" data-testid="totals-cost">
        <b>Input cost</b>{' '}
        <span
          data-testid="cost-headline"
          title={`input cost under prompt caching${p ? ` at ${p.model}'s list price (${p.source})` : ''}: raw history ${money(h.raw, lens)}, Spillway's projection ${money(h.withoutReadBacks, lens)}, plus ${money(h.withReadBacks - h.withoutReadBacks, lens)} for read-backs`}
        >
          {money(h.raw, lens)} → <b>{money(h.withReadBacks, lens)}</b> <b>{formatChange(h.change)}</b> with{' '}
          <Term word="read-back">read-backs</Term>
        </span>{' '}
        <span className="muted" data-testid="cost-before-readbacks">
          ({formatChange(h.changeWithout)} before)
        </span>
      </span>
    </span>
  );
}
