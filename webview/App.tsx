/**
 * The inspector: sessions on the left; for the chosen session its totals, the chart of tokens per
 * call, the caps per tool, the tool filter and the search, the (windowed) timeline of turns and the
 * chosen turn's tool results. The host sends summaries first; a turn's details and a result's text
 * are asked for when shown.
 */
import * as React from 'react';
import { totalsOf, type CapChoice, type SessionInfo, type SessionView, type TextPage, type Totals, type TurnDetail, type TurnSummary } from '../src/protocol';
import type { Host } from './host';
import { compact, count, percent } from './format';
import { Badge, Button, Dropdown, Spinner, TextField } from './ui';
import { CapsPanel } from './components/CapsPanel';
import { Chart } from './components/Chart';
import { SessionList } from './components/SessionList';
import { Timeline } from './components/Timeline';
import { TurnDetails } from './components/TurnDetails';

/** Pause after the last keystroke before a dry run or a search is asked for. */
export const DEBOUNCE_MS = 300;

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
  const [sessions, setSessions] = React.useState<SessionInfo[]>([]);
  const [sessionId, setSessionId] = React.useState<string | undefined>(() => host.getState().sessionId);
  const [view, setView] = React.useState<SessionView>();
  const [turns, setTurns] = React.useState<TurnSummary[]>([]);
  const [selected, setSelected] = React.useState(-1);
  const [detail, setDetail] = React.useState<TurnDetail>();
  const [detailError, setDetailError] = React.useState<string>();
  const [tool, setTool] = React.useState('');
  const [query, setQuery] = React.useState('');
  const [hits, setHits] = React.useState<Set<number> | null>(null);
  const [changes, setChanges] = React.useState<Record<string, CapChoice>>({});
  const [dry, setDry] = React.useState<TurnSummary[]>();
  const [progress, setProgress] = React.useState<string | null>(null);
  const [error, setError] = React.useState<string>();
  const [saving, setSaving] = React.useState(false);
  const [notice, setNotice] = React.useState<string>();
  const sessionRef = React.useRef(sessionId);
  sessionRef.current = sessionId;
  const pendingTurn = React.useRef<number | undefined>(host.getState().turn);

  const open = React.useCallback(
    async (id: string) => {
      setSessionId(id);
      setError(undefined);
      setDetail(undefined);
      setDry(undefined);
      setChanges({});
      setHits(null);
      setQuery('');
      setTool('');
      try {
        const v = await host.request('session/open', { sessionId: id });
        if (sessionRef.current !== id) return;
        setView(v);
        setTurns(v.turns);
        const want = pendingTurn.current;
        pendingTurn.current = undefined;
        setSelected(want !== undefined && want < v.turns.length ? want : v.turns.length ? 0 : -1);
      } catch (e) {
        setView(undefined);
        setTurns([]);
        setError(e instanceof Error ? e.message : String(e));
      }
    },
    [host],
  );

  // handlers first, then ready: nothing the host sends is missed
  React.useEffect(() => {
    const offs = [
      host.on('sessions/changed', (p) => setSessions(p.sessions)),
      host.on('session/turnsAppended', (p) => {
        if (p.sessionId !== sessionRef.current) return;
        setTurns((old) => {
          const next = old.slice();
          for (const t of p.turns) next[t.index] = t;
          return next;
        });
      }),
      host.on('session/reloaded', (p) => {
        if (p.sessionId === sessionRef.current) void open(p.sessionId);
      }),
      host.on('caps/changed', (p) => setView((v) => (v ? { ...v, caps: p.caps, defaultCap: p.defaultCap } : v))),
      host.on('host/showSession', (p) => void open(p.sessionId)),
      host.on('host/progress', (p) => setProgress(p.message)),
    ];
    host.ready();
    const restore = host.getState().sessionId;
    if (restore) void open(restore);
    return () => offs.forEach((off) => off());
  }, [host, open]);

  React.useEffect(() => {
    host.setState({ ...(sessionId ? { sessionId } : {}), ...(selected >= 0 ? { turn: selected } : {}) });
  }, [host, sessionId, selected]);

  // the chosen turn's details, on demand
  React.useEffect(() => {
    if (!sessionId || selected < 0 || selected >= turns.length) {
      setDetail(undefined);
      return;
    }
    let live = true;
    setDetailError(undefined);
    host.request('turn/detail', { sessionId, turn: selected }).then(
      (d) => live && setDetail(d),
      (e: Error) => live && setDetailError(e.message),
    );
    return () => {
      live = false;
    };
  }, [host, sessionId, selected, turns.length]);

  // dry run under the changed caps
  const debouncedChanges = useDebounced(changes, DEBOUNCE_MS);
  React.useEffect(() => {
    if (!sessionId) return;
    if (Object.keys(debouncedChanges).length === 0) {
      setDry(undefined);
      return;
    }
    let live = true;
    host.request('caps/dryRun', { sessionId, caps: debouncedChanges }).then(
      (r) => live && setDry(r.turns),
      (e: Error) => live && setError(`dry run failed: ${e.message}`),
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
      return;
    }
    let live = true;
    host.request('search/results', { sessionId, query: debouncedQuery }).then(
      (r) => live && setHits(new Set(r.turns)),
      (e: Error) => live && setError(`search failed: ${e.message}`),
    );
    return () => {
      live = false;
    };
  }, [host, sessionId, debouncedQuery]);

  const shown = dry && dry.length === turns.length ? dry : undefined;
  const visible = React.useMemo(() => {
    const out: number[] = [];
    for (const t of turns) {
      if (!t) continue;
      if (tool && !t.tools.includes(tool)) continue;
      if (hits && !hits.has(t.index)) continue;
      out.push(t.index);
    }
    return out;
  }, [turns, tool, hits]);
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
  const tools = React.useMemo(() => [...new Set(turns.flatMap((t) => t.tools))].sort(), [turns]);

  const loadText = React.useCallback(
    (handle: string, side: 'original' | 'projected', offset: number, limit: number): Promise<TextPage> =>
      host.request('text/page', { sessionId: sessionRef.current!, handle, side, offset, limit }),
    [host],
  );

  const save = async () => {
    setSaving(true);
    try {
      const r = await host.request('caps/save', { caps: changes });
      setNotice(`Saved spillway.toolCaps: ${JSON.stringify(r.toolCaps)}`);
      setChanges({});
      if (sessionId) {
        const v = await host.request('session/open', { sessionId });
        setView(v);
        setTurns(v.turns);
      }
    } catch (e) {
      setError(`saving the caps failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      setSaving(false);
    }
  };

  const session = sessions.find((s) => s.id === sessionId) ?? view?.session;
  return (
    <div className="app">
      <SessionList sessions={sessions} selected={sessionId} onSelect={(id) => void open(id)} />
      <main className="main">
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
          <p className="muted intro">{sessions.length ? 'Choose a session.' : ''}</p>
        ) : (
          <>
            <header className="session-head">
              <h1>{session.title}</h1>
              <span className="muted session-detail">{session.detail}</span>
              <div className="totals" data-testid="totals">
                <span>{count(turns.length)} turns</span>
                <span>
                  {compact(totals.originalTokens)} → <b>{compact(totals.projectedTokens)}</b> tokens (saved{' '}
                  {percent(totals.originalTokens - totals.projectedTokens, totals.originalTokens)})
                </span>
                {dryTotals && (
                  <span className="dry-text" data-testid="dry-totals">
                    dry run: {compact(dryTotals.projectedTokens)} tokens (saved {percent(dryTotals.originalTokens - dryTotals.projectedTokens, dryTotals.originalTokens)})
                  </span>
                )}
                <span>cache-stable {percent(totals.cacheStableShare, 1)}</span>
                {totals.missed > 0 && <Badge>{totals.missed} missed identifiers</Badge>}
              </div>
            </header>
            <Chart turns={turns} dry={shown} selected={selected} onSelect={setSelected} />
            <CapsPanel
              caps={view.caps}
              defaultCap={view.defaultCap}
              capUnit={view.capUnit}
              changes={changes}
              saving={saving}
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
              <TextField aria-label="Search tool results" placeholder="Search in tool results" value={query} onChange={setQuery} />
              {(tool || hits) && (
                <span className="muted" data-testid="filter-count">
                  {count(visible.length)} of {count(turns.length)} turns
                </span>
              )}
              {(tool || query) && (
                <Button appearance="secondary" onClick={() => (setTool(''), setQuery(''))}>
                  Clear filter
                </Button>
              )}
            </div>
            <div className="split">
              <Timeline turns={turns} visible={visible} cumulative={cumulative} dry={shown} selected={selected} onSelect={setSelected} />
              <TurnDetails
                detail={detail && detail.index === selected ? detail : undefined}
                error={detailError}
                loadText={loadText}
                onOpen={(handle) => host.command('result/openStored', { handle })}
                onCompare={(handle) => host.command('result/compare', { handle })}
                onCopy={(handle) => {
                  host.command('result/copyHandle', { handle });
                  setNotice(`Copied ${handle}`);
                }}
              />
            </div>
          </>
        )}
      </main>
    </div>
  );
}
