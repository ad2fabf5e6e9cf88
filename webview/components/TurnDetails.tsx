/**
 * One turn's tool results (asked of the host when the turn is chosen): every result that is new in
 * the turn, reduced or sent whole, then the reductions kept from earlier turns, then the file inputs
 * (what the agent wrote with Write, Edit, apply_patch or a heredoc) replaced by a marker. Each shows tool, call
 * id, what happened to it, sizes and tokens before and after, and what the reduction saved; expanding
 * one shows the original and what the model was sent side by side (the same text for a result sent
 * whole), with buttons to open the stored output, compare it in VS Code's diff editor and copy its
 * handle. Identifiers the agent wrote next that the projection had hidden are listed with the stored
 * output that holds each, named by its file or command, and what the agent wrote around each. The arrow keys, Home and End move between results; Enter expands one.
 */
import * as React from 'react';
import type { InputInfo, ResultInfo, SearchMatch, TextPage, TurnDetail, TurnSummary, WholeResult } from '../../src/protocol';
import { compact, count } from '../format';
import { Button } from '../ui';
import { TextPager } from './TextPager';
import { Term, type GlossaryWord } from './Glossary';
import { Snippet } from './Snippet';

export interface TurnDetailsProps {
  detail: TurnDetail | undefined;
  error?: string;
  /** the turn's summary (its failure, when the call failed) */
  summary?: TurnSummary | undefined;
  /** the turn's cost explained (webview/cost.ts explainTurnCost) */
  costText?: string | undefined;
  /** a page of a stored output, or of the marker the model was sent for it in `at` (the turn and call) */
  loadText: (handle: string, side: 'original' | 'projected', offset: number, limit: number, at?: TextAt) => Promise<TextPage>;
  /** a page of a result sent whole (no handle) */
  loadWhole?: (turn: number, callId: string, offset: number, limit: number) => Promise<TextPage>;
  /** opens the stored output; `find` puts the cursor on the first line that holds it */
  onOpen: (handle: string, find?: string) => void;
  /** compares the output with the marker the model was sent in `at` */
  onCompare: (handle: string, at?: TextAt) => void;
  /** selects another turn (a result reduced again later links to that turn) */
  onSelectTurn?: (turn: number) => void;
  onCopy: (handle: string) => void;
  /** the key of the expanded result (kept by the App so it survives the tab being hidden) */
  expanded?: string | undefined;
  onExpanded?: (key: string | undefined) => void;
  /** the search, highlighted in the texts */
  highlight?: string;
  /**
   * a dry run is shown: the turn's line (costText) is the dry run's, the results listed are the saved
   * run's (the settings in force) and say so
   */
  dryRun?: boolean;
  /** where the search found its text in this turn's results (shown under each) */
  matches?: readonly SearchMatch[] | undefined;
}

/** Where a marker was sent: the turn (0-based) and the call (identical outputs of several calls share a handle). */
interface TextAt {
  turn: number;
  callId: string;
}

/** How a later decision reads: `cleared in turn 22`. */
const LATER_VERB: Record<string, string> = {
  clear: 'cleared',
  offload: 'offloaded',
  window: 'windowed',
  budget: 'cut to its cap',
  input: 'replaced',
};

export const keyOfReduced = (r: ResultInfo) => `r:${r.handle}:${r.callId}`;
const keyOfWhole = (w: WholeResult) => `w:${w.callId}`;
const keyOfInput = (i: InputInfo) => `i:${i.handle}:${i.callId}`;
/** A row's result: a reduced one, or an input replaced by a marker listed like one (stage `input`, with what replaced it). */
type RowResult = ResultInfo & Pick<InputInfo, 'by'>;
/** An input replaced by a marker, listed like a reduced result: its stage is `input`. */
const asResult = (i: InputInfo): RowResult => ({ ...i, stage: 'input' });
type RowKind = 'own' | 'decided' | 'kept' | 'input';

/**
 * The badge of a reduced result says what the model was sent in the glossary's words: a preview
 * (whichever of the offload, window and budget stages made it), a reference to an earlier output
 * it repeats, a clear, a file input. The stage
 * that decided it is in the badge's tooltip.
 */
function StageBadge(props: { stage: string; kind?: ResultInfo['kind']; by?: InputInfo['by'] }) {
  const { stage } = props;
  const word: GlossaryWord = stage === 'input' ? 'file input' : (props.kind ?? (stage === 'clear' ? 'clear' : 'preview'));
  const by =
    stage !== 'input'
      ? `Made by the ${stage} stage.`
      : props.by === 'clear'
        ? "Replaced by the clear stage, together with its call's result."
        : 'Replaced by the file inputs stage.';
  return (
    <Term word={word} className={`stage stage-${stage}`} more={by}>
      {word}
    </Term>
  );
}

/** "1 token", "2.6k tokens" */
const tokens = (n: number) => `${compact(n)} token${n === 1 ? '' : 's'}`;

export function savedText(r: RowResult): string {
  const saved = r.originalTokens - r.projectedTokens;
  if (saved < 0) return `adds ${tokens(-saved)} (the marker counts more tokens than the short result)`;
  if (r.stage === 'clear' || r.by === 'clear')
    return `frees ${tokens(saved)} in every later call (the cached prefix is rewritten from here once)`;
  return `saves ${tokens(saved)} in this and every later call`;
}

/** The row's name: the file or command the call named, else its call id; the call id is in the tooltip either way. */
function CallName(props: { callId: string; source?: string | undefined }) {
  return (
    <span className="result-call" title={props.source ? `${props.source}\ncall ${props.callId}` : `call ${props.callId}`}>
      {props.source ?? props.callId}
    </span>
  );
}

function ResultRow(
  props: {
    r: RowResult;
    turn: number;
    expanded: boolean;
    onToggle: () => void;
    kind: RowKind;
    highlight?: string;
    match?: SearchMatch | undefined;
  } & Pick<TurnDetailsProps, 'loadText' | 'onOpen' | 'onCompare' | 'onCopy' | 'onSelectTurn'>,
) {
  const { r, expanded, onToggle, loadText, kind, turn } = props;
  const loadOriginal = React.useCallback(
    (o: number, l: number) => loadText(r.handle, 'original', o, l, { turn, callId: r.callId }),
    [loadText, r.handle, r.callId, turn],
  );
  // the marker of THIS turn: a preview sent here and cleared later still reads as the preview
  const loadProjected = React.useCallback(
    (o: number, l: number) => loadText(r.handle, 'projected', o, l, { turn, callId: r.callId }),
    [loadText, r.handle, r.callId, turn],
  );
  const later = r.later;
  return (
    <li className={`result${expanded ? ' expanded' : ''}`} data-handle={r.handle} data-call={r.callId} data-kind={kind}>
      <button type="button" className="result-head" aria-expanded={expanded} onClick={onToggle}>
        <span className="chev" aria-hidden="true">
          {expanded ? '▾' : '▸'}
        </span>
        <span className="result-tool">{r.tool}</span>
        <CallName callId={r.callId} source={r.source} />
        <StageBadge stage={r.stage} {...(r.kind ? { kind: r.kind } : {})} {...(r.by ? { by: r.by } : {})} />
        {!r.fresh && <Term word="kept" className="carried" />}
        <span className="result-sizes">
          {count(r.originalChars)} → {count(r.projectedChars)} chars · {compact(r.originalTokens)} → {compact(r.projectedTokens)} tokens
        </span>
      </button>
      <div className="result-reason">
        {r.reason}
        {r.fresh && <span className="result-saved"> · {savedText(r)}</span>}
        {later && (
          <span className="result-later" data-testid="result-later">
            {' '}
            · {LATER_VERB[later.stage] ?? `reduced again (${later.stage})`} in{' '}
            {props.onSelectTurn ? (
              <button
                type="button"
                className="link"
                onClick={() => props.onSelectTurn!(later.turn)}
                title={`Show turn ${later.turn + 1}, where the model was sent another marker for this result`}
              >
                turn {later.turn + 1}
              </button>
            ) : (
              <>turn {later.turn + 1}</>
            )}
          </span>
        )}
      </div>
      {props.match && <Snippet match={props.match} className="result-match" />}
      {expanded && (
        <div className="result-body">
          <div className="result-actions">
            <Button onClick={() => props.onOpen(r.handle)} aria-label="Open stored output">
              Open stored output
            </Button>
            <Button
              appearance="secondary"
              onClick={() => props.onCompare(r.handle, { turn, callId: r.callId })}
              aria-label="Compare original and projected"
            >
              Compare
            </Button>
            <Button appearance="secondary" onClick={() => props.onCopy(r.handle)} aria-label="Copy handle">
              Copy handle
            </Button>
            <code className="handle">{r.handle}</code>
          </div>
          <div className="sides">
            <TextPager
              side="original"
              label={kind === 'input' ? 'Original (what the agent wrote)' : 'Original (what the tool returned)'}
              load={loadOriginal}
              highlight={props.highlight}
            />
            <TextPager
              side="projected"
              label={`Projected (what the model was sent in turn ${turn + 1})`}
              load={loadProjected}
              highlight={props.highlight}
            />
          </div>
        </div>
      )}
    </li>
  );
}

function WholeRow(props: {
  w: WholeResult;
  turn: number;
  expanded: boolean;
  onToggle: () => void;
  load: NonNullable<TurnDetailsProps['loadWhole']>;
  highlight?: string;
  match?: SearchMatch | undefined;
}) {
  const { w, turn, expanded, onToggle, load } = props;
  const loadText = React.useCallback((o: number, l: number) => load(turn, w.callId, o, l), [load, turn, w.callId]);
  return (
    <li className={`result whole${expanded ? ' expanded' : ''}`} data-call={w.callId} data-kind="whole">
      <button type="button" className="result-head" aria-expanded={expanded} onClick={onToggle}>
        <span className="chev" aria-hidden="true">
          {expanded ? '▾' : '▸'}
        </span>
        <span className="result-tool">{w.tool}</span>
        <CallName callId={w.callId} source={w.source} />
        <Term word="sent whole" className="stage stage-whole" />
        {w.why?.over && (
          <span className="over-cap" data-testid="over-cap" title={w.why.reason}>
            over its cap
          </span>
        )}
        <span className="result-sizes">
          {count(w.chars)} chars{w.tokens !== undefined ? ` · ${compact(w.tokens)} tokens` : ''}
        </span>
      </button>
      <div className="result-reason" data-testid="whole-reason">
        {wholeReason(w)}
      </div>
      {props.match && <Snippet match={props.match} className="result-match" />}
      {expanded && (
        <div className="result-body">
          <div className="sides">
            <TextPager side="original" label="Original (what the tool returned)" load={loadText} highlight={props.highlight} />
            <TextPager side="projected" label="Projected (identical: sent whole)" load={loadText} highlight={props.highlight} />
          </div>
        </div>
      )}
    </li>
  );
}

/**
 * Why a result went whole, as the engine decided it (the host sends its reason): over its cap and
 * kept whole on purpose (a read the agent asked for, while in use), under its cap, or, when the source
 * cannot tell, only what is certain.
 */
export function wholeReason(w: WholeResult): string {
  if (w.why?.over) return `${w.why.reason}: the model was sent it as it was (nothing saved in this turn, nothing hidden)`;
  if (w.why) return `${w.why.reason}: the model was sent it as it was (nothing saved, nothing hidden)`;
  return 'the model was sent it as it was (nothing saved, nothing hidden)';
}

/** " (1 preview, 1 reference)" when a turn's reductions are not all previews; "" when they are. */
function kindsOf(rows: readonly ResultInfo[]): string {
  const n = { preview: 0, reference: 0, clear: 0 };
  for (const r of rows) n[r.kind ?? (r.stage === 'clear' ? 'clear' : 'preview')]++;
  if (n.reference === 0 && n.clear === 0) return '';
  const words = [
    n.preview ? `${count(n.preview)} preview${n.preview === 1 ? '' : 's'}` : '',
    n.reference ? `${count(n.reference)} reference${n.reference === 1 ? '' : 's'}` : '',
    n.clear ? `${count(n.clear)} cleared` : '',
  ].filter(Boolean);
  return ` (${words.join(', ')})`;
}

/** Arrow keys, Home and End move the focus between the result heads of a list. */
function onResultsKey(e: React.KeyboardEvent<HTMLElement>) {
  if (!['ArrowDown', 'ArrowUp', 'Home', 'End'].includes(e.key)) return;
  const heads = [...e.currentTarget.querySelectorAll<HTMLButtonElement>('.result-head')];
  const at = heads.indexOf(document.activeElement as HTMLButtonElement);
  if (at < 0 || heads.length === 0) return;
  e.preventDefault();
  const next =
    e.key === 'Home'
      ? 0
      : e.key === 'End'
        ? heads.length - 1
        : e.key === 'ArrowDown'
          ? Math.min(heads.length - 1, at + 1)
          : Math.max(0, at - 1);
  heads[next]!.focus();
}

/**
 * "Read result cleared in turn 12": what hid a missed identifier, in the words of `spillway replay`'s
 * summary (the host sends them: src/replay/misses.ts), with the tool and the turn of the reduction when known.
 */
function hiddenBy(m: TurnDetail['missed'][number]): string {
  const what = m.causeLabel ?? m.cause ?? '';
  const tool = m.tool ? `${m.tool} ${m.cause === 'input' ? '' : 'result '}` : '';
  return `${tool}${what}${m.since !== undefined ? ` in turn ${m.since + 1}` : ''}`;
}

/** What the agent wrote around a missed identifier, the identifier marked: whether the miss mattered is read there. */
function Wrote(props: { text: string; id: string }) {
  const at = props.text.indexOf(props.id);
  return (
    <div className="missed-wrote muted" data-testid="missed-wrote">
      the agent wrote: “
      {at < 0 ? (
        props.text
      ) : (
        <>
          {props.text.slice(0, at)}
          <mark>{props.id}</mark>
          {props.text.slice(at + props.id.length)}
        </>
      )}
      ”
    </div>
  );
}

/** The agents that reduce outputs themselves, by name: saved as their own preview (Claude Code, Qwen Code, Gemini CLI, Copilot CLI, Copilot in VS Code) or truncated (Gemini CLI, Codex, pi, mini-swe-agent, Qwen Code, OpenCode, Cline, Continue). */
const AGENT_NAMES: Record<string, string> = {
  'claude-code': 'Claude Code',
  'qwen-code': 'Qwen Code',
  'copilot-cli': 'Copilot CLI',
  'copilot-chat': 'Copilot',
  'gemini-cli': 'Gemini CLI',
  codex: 'Codex',
  'mini-swe-agent': 'mini-swe-agent',
  pi: 'pi',
  opencode: 'OpenCode',
  cline: 'Cline',
  continue: 'Continue',
};
/**
 * Every result the request sent whole (this turn's and earlier turns'), grouped by why the clear stage
 * left it so at this call: what is left to clear, and what stopped it. Folded to one line: the total
 * and the reason behind most of its tokens.
 */
function HeldSummary(props: { held: NonNullable<TurnDetail['held']> }) {
  const results = props.held.reduce((a, g) => a + g.results, 0);
  const sent = props.held.reduce((a, g) => a + g.tokens, 0);
  const top = props.held[0]!;
  return (
    <details className="held" data-testid="held-summary">
      <summary>
        Sent whole in this request: {count(results)} result{results === 1 ? '' : 's'}, {tokens(sent)}. Why the clear stage left{' '}
        {results === 1 ? 'it' : 'them'}: {top.label}
        {props.held.length > 1 && (
          <>
            {' '}
            ({tokens(top.tokens)}) and {props.held.length - 1} other reason{props.held.length === 2 ? '' : 's'}
          </>
        )}
      </summary>
      <ul>
        {props.held.map((g) => (
          <li key={g.reason} data-testid="held-reason" data-reason={g.reason}>
            {g.label}: {count(g.results)} result{g.results === 1 ? '' : 's'}, {tokens(g.tokens)}
          </li>
        ))}
      </ul>
    </details>
  );
}

function savedByWhom(saved: ReadonlyArray<{ agent: string }>): string {
  const names = [...new Set(saved.map((s) => AGENT_NAMES[s.agent] ?? s.agent))];
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

export function TurnDetails(props: TurnDetailsProps) {
  const { detail, error } = props;
  const [localExpanded, setLocalExpanded] = React.useState<string>();
  const expanded = props.onExpanded ? props.expanded : localExpanded;
  const setExpanded = props.onExpanded ?? setLocalExpanded;
  const toggle = (key: string) => setExpanded(expanded === key ? undefined : key);
  if (error)
    return (
      <section className="details" role="status">
        {error}
      </section>
    );
  if (!detail) return <section className="details muted">Choose a turn to see its tool results.</section>;
  const ownIds = new Set(detail.own ?? detail.results.filter((r) => r.fresh && r.stage !== 'clear').map((r) => r.callId));
  const own = detail.results.filter((r) => ownIds.has(r.callId));
  // decisions this turn made on results of earlier turns (a clear), apart from the ones carried over
  const decided = detail.results.filter((r) => !ownIds.has(r.callId) && r.fresh);
  const kept = detail.results.filter((r) => !ownIds.has(r.callId) && !r.fresh);
  const whole = detail.whole ?? [];
  const inputs = detail.inputs ?? [];
  const freshInputs = inputs.filter((i) => i.fresh);
  const keptInputs = inputs.filter((i) => !i.fresh);
  const row = (r: RowResult, kind: RowKind, key = keyOfReduced(r)) => (
    <ResultRow
      key={key}
      r={r}
      turn={detail.index}
      kind={kind}
      expanded={expanded === key}
      onToggle={() => toggle(key)}
      loadText={props.loadText}
      onOpen={props.onOpen}
      onCompare={props.onCompare}
      onCopy={props.onCopy}
      {...(props.onSelectTurn ? { onSelectTurn: props.onSelectTurn } : {})}
      {...(props.highlight ? { highlight: props.highlight } : {})}
      match={matchOf(r.callId)}
    />
  );
  const matchOf = (callId: string) => props.matches?.find((m) => m.callId === callId);
  const inputRow = (i: InputInfo) => row(asResult(i), 'input', keyOfInput(i));
  // what this turn's own decisions save: its reductions and the file inputs it replaced
  const savedHere = [...own, ...decided, ...freshInputs]
    .filter((r) => r.fresh)
    .reduce((a, r) => a + r.originalTokens - r.projectedTokens, 0);
  return (
    <section className="details" aria-label={`Turn ${detail.index + 1}`}>
      <h2>Turn {detail.index + 1}</h2>
      {props.summary?.error && (
        <div className="turn-failed" role="alert" data-testid="turn-error">
          ✖ The call failed: {props.summary.error}
        </div>
      )}
      {props.costText && (
        <p className={`turn-cost-explained${props.dryRun ? ' dry-text' : ''}`} data-testid="turn-cost-explained">
          {props.dryRun && <b>Dry run: </b>}
          {props.costText}
        </p>
      )}
      {props.dryRun && (
        <p className="saved-run-note" data-testid="saved-run-note" role="note">
          Dry run: the line above is the dry run&apos;s. The results below are the <b>saved run&apos;s</b> (the caps in force), not the dry
          run&apos;s; Save or Revert the caps to see one run.
        </p>
      )}
      <p className="details-summary muted" data-testid="details-summary">
        {count(own.length + whole.length)} new tool result{own.length + whole.length === 1 ? '' : 's'}: {count(own.length)} reduced
        {kindsOf(own)}, {count(whole.length)} <Term word="sent whole" />
        {decided.length > 0 && (
          <>
            {' '}
            · {count(decided.length)} earlier result{decided.length === 1 ? '' : 's'}{' '}
            {decided.every((r) => r.stage === 'clear') ? 'cleared' : 'reduced'} in this turn
          </>
        )}
        {kept.length > 0 && (
          <>
            {' '}
            · {count(kept.length)} reduced earlier and <Term word="kept" />
          </>
        )}
        {freshInputs.length > 0 && (
          <>
            {' '}
            · {count(freshInputs.length)} file input{freshInputs.length === 1 ? '' : 's'} replaced by a marker
          </>
        )}
        {savedHere > 0 && <> · this turn's decisions save {compact(savedHere)} tokens</>}
      </p>
      {(detail.held?.length ?? 0) > 0 && <HeldSummary held={detail.held!} />}
      {detail.missed.length > 0 && (
        <div className="missed" role="note">
          <b>
            ⚠ The agent referred to {detail.missed.length} thing{detail.missed.length === 1 ? '' : 's'} it could no longer see
            {detail.readBacks !== undefined && (
              <>
                {' '}
                ({detail.readBacks} read-back{detail.readBacks === 1 ? '' : 's'} to find {detail.missed.length === 1 ? 'it' : 'them'} again)
              </>
            )}
            :
          </b>
          <ul>
            {detail.missed.map((m) => (
              <li key={m.id} data-testid="missed-id">
                <code>{m.id}</code>
                {m.cause && m.cause !== 'unheld' && <> · {hiddenBy(m)}</>}
                {m.handle ? (
                  <>
                    {' '}
                    in{' '}
                    <button
                      type="button"
                      className="link missed-source"
                      onClick={() => props.onOpen(m.handle!, m.id)}
                      title={`Open the stored output ${m.handle} at the line that holds it`}
                    >
                      {m.source ?? m.handle}
                    </button>
                  </>
                ) : (
                  ' (not in a stored output)'
                )}
                {m.wrote && <Wrote text={m.wrote} id={m.id} />}
              </li>
            ))}
          </ul>
        </div>
      )}
      {(detail.savedByAgent?.length ?? 0) > 0 && (
        <div className="saved-by-agent" role="note">
          <b>
            Saved by {savedByWhom(detail.savedByAgent!)} ({detail.savedByAgent!.length}): the agent kept the full output itself and sent a
            preview; Spillway left it alone.
          </b>
          <ul>
            {detail.savedByAgent!.map((s) => (
              <li key={s.callId}>
                {s.tool} <code>{s.callId}</code>: {s.file ? <code>{s.file}</code> : 'no file named'}
              </li>
            ))}
          </ul>
        </div>
      )}
      {(detail.truncatedByAgent?.length ?? 0) > 0 && (
        <div className="saved-by-agent truncated-by-agent" role="note">
          <b>
            Truncated by {savedByWhom(detail.truncatedByAgent!)} ({detail.truncatedByAgent!.length}): the agent cut these outputs to a head
            and a tail before Spillway saw them; the model never receives what it cut.
          </b>
          <ul>
            {detail.truncatedByAgent!.map((t) => (
              <li key={t.callId}>
                {t.tool} <code>{t.callId}</code>:{' '}
                {t.omitted === undefined ? 'cut (the agent does not say how much)' : `${count(t.omitted)} ${t.unit} cut`};{' '}
                {t.file ? (
                  <>
                    the whole output is in <code>{t.file}</code>
                  </>
                ) : (
                  'the agent kept no copy of the whole'
                )}
              </li>
            ))}
          </ul>
        </div>
      )}
      {own.length + whole.length === 0 && kept.length === 0 && decided.length === 0 && inputs.length === 0 ? (
        <p className="muted">
          {detail.whole === undefined
            ? 'Nothing was reduced in this turn: the model was sent the tool results as they were.'
            : 'This turn brought no new tool results.'}
        </p>
      ) : (
        <ul
          className={`results${props.dryRun ? ' saved-run' : ''}`}
          aria-label={props.dryRun ? 'Tool results of this turn in the saved run' : 'Tool results of this turn'}
          onKeyDown={onResultsKey}
        >
          {own.map((r) => row(r, 'own'))}
          {whole.map((w) =>
            props.loadWhole ? (
              <WholeRow
                key={keyOfWhole(w)}
                w={w}
                turn={detail.index}
                expanded={expanded === keyOfWhole(w)}
                onToggle={() => toggle(keyOfWhole(w))}
                load={props.loadWhole}
                {...(props.highlight ? { highlight: props.highlight } : {})}
                match={matchOf(w.callId)}
              />
            ) : null,
          )}
          {decided.length > 0 && (
            <li className="results-divider" role="presentation">
              Earlier results reduced in this turn
            </li>
          )}
          {decided.map((r) => row(r, 'decided'))}
          {kept.length > 0 && (
            <li className="results-divider" role="presentation">
              Reduced in earlier turns and kept (sticky)
            </li>
          )}
          {kept.map((r) => row(r, 'kept'))}
          {freshInputs.length > 0 && (
            <li className="results-divider" role="presentation">
              File inputs replaced by a marker in this turn (the content is in the file the call wrote)
            </li>
          )}
          {freshInputs.map(inputRow)}
          {keptInputs.length > 0 && (
            <li className="results-divider" role="presentation">
              File inputs replaced in earlier turns and kept (sticky)
            </li>
          )}
          {keptInputs.map(inputRow)}
        </ul>
      )}
      {detail.wholeUnavailable && <p className="muted whole-unavailable">{detail.wholeUnavailable}.</p>}
    </section>
  );
}
