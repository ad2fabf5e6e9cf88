/**
 * Per-tool caps, in a collapsible section that remembers whether it was open: the cap in force for
 * each tool of the session and a field to change it; at once (after a short pause in typing) a dry
 * run in the host re-projects the session, and the panel says what the change does, per tool and in
 * total, in tokens and in cost under caching ("+62k tokens, +1.3%"). Save (which asks workspace or
 * user settings) and Revert sit in the section's header, always in view, never below the fold of the
 * table's own scroll.
 */
import * as React from 'react';
import { formatChange, headline, type CapChoice, type ToolCap, type Totals } from '../../src/protocol';
import { capText, compact, parseCap, signed, signedPercent } from '../format';
import { money, type CostLens } from '../cost';
import { costAdded } from '../dryRun';
import { Button, TextField } from '../ui';

export interface CapsPanelProps {
  caps: readonly ToolCap[];
  defaultCap: number | 'unlimited';
  capUnit: string;
  changes: Record<string, CapChoice>;
  onChange: (tool: string, cap: CapChoice | undefined) => void;
  onSave: () => void;
  onRevert: () => void;
  saving: boolean;
  /** the section is expanded (default true when not controlled) */
  open?: boolean;
  onToggle?: (open: boolean) => void;
  /** the totals under the settings, and under the changed caps (the dry run), and per changed tool */
  base?: Totals;
  dry?: Totals;
  perTool?: Record<string, Totals>;
  /** a dry run is under way */
  pending?: boolean;
  /** how cost is priced (default: Anthropic's cost record, no dollar price) */
  lens?: CostLens;
  /** the dry run explained when its effect is not the obvious one (webview/dryRun.ts) */
  explain?: string | undefined;
}

const DEFAULT_LENS: CostLens = { costModel: 'anthropic' };

/**
 * "+62k tokens, +1.3% · cost −18.9% → −20.3% (−$0.42)": the headline cost (with read-backs, against
 * raw history) before and after the change, the very figure the header shows, and the difference in money.
 */
export function deltaText(base: Totals, dry: Totals, lens: CostLens = DEFAULT_LENS): string {
  const d = dry.projectedTokens - base.projectedTokens;
  const parts = [`${signed(d)} tokens, ${signedPercent(d, base.projectedTokens)}`];
  const b = base.cost?.[lens.costModel];
  const c = dry.cost?.[lens.costModel];
  if (b && c) {
    const hb = headline(b);
    const hd = headline(c);
    parts.push(`cost ${formatChange(hb.change)} → ${formatChange(hd.change)} (${money(hd.withReadBacks - hb.withReadBacks, lens, true)})`);
  }
  return parts.join(' · ');
}

const INVALID_CAP = 'not a cap: use 12k, unlimited or default';

function CapRow(props: {
  c: ToolCap;
  change: CapChoice | undefined;
  onChange: CapsPanelProps['onChange'];
  onInvalid: (tool: string, invalid: boolean) => void;
  effect?: string | undefined;
}) {
  const { c, change, onChange, onInvalid } = props;
  const [text, setText] = React.useState(change === undefined ? '' : String(change));
  // the change this row last reported: a change made elsewhere (a save) shows in the field, this row's own do not overwrite what was typed
  const sent = React.useRef(change);
  React.useEffect(() => {
    if (change === sent.current) return;
    sent.current = change;
    setText(change === undefined ? '' : String(change));
  }, [change]);
  const parsed = text.trim() === '' ? undefined : parseCap(text);
  const invalid = text.trim() !== '' && parsed === undefined;
  React.useEffect(() => {
    onInvalid(c.tool, invalid);
    return () => onInvalid(c.tool, false);
  }, [c.tool, invalid, onInvalid]);
  const errorId = `cap-error-${c.tool.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return (
    <tr data-tool={c.tool} className={invalid ? 'cap-invalid' : undefined}>
      <th scope="row" title={c.tool}>
        {c.tool}
      </th>
      <td className="cap-current">
        {capText(c.cap)}
        {!c.explicit && <span className="muted"> (default)</span>}
        {c.keptWhole && (
          <span className="cap-kept-whole" data-testid={`cap-kept-whole-${c.tool}`} title={c.keptWhole.why}>
            {' '}
            · {c.keptWhole.results} over it sent whole*
          </span>
        )}
      </td>
      <td className="num">{c.reducedTurns}</td>
      <td>
        <TextField
          aria-label={`New cap for ${c.tool}`}
          data-testid={`cap-input-${c.tool}`}
          value={text}
          placeholder="12k, unlimited"
          size={12}
          {...(invalid ? { 'aria-invalid': true, 'aria-describedby': errorId } : {})}
          onChange={(v) => {
            setText(v);
            const p = v.trim() === '' ? undefined : parseCap(v);
            // an invalid text drops the tool's change: the dry run and Save never use a value the field no longer shows
            sent.current = p;
            onChange(c.tool, p);
          }}
        />
      </td>
      {/* the error takes the effect's cell, so a bad value never reflows the table */}
      <td className={invalid ? 'cap-effect invalid' : 'cap-effect'} data-testid={`cap-effect-${c.tool}`}>
        {invalid ? (
          <span role="alert" id={errorId}>
            {INVALID_CAP}
          </span>
        ) : (
          (props.effect ?? '')
        )}
      </td>
    </tr>
  );
}

export function CapsPanel(props: CapsPanelProps) {
  const { caps, defaultCap, capUnit, changes, onChange, onSave, onRevert, saving, base, dry, perTool } = props;
  const changed = Object.keys(changes).length > 0;
  const [invalid, setInvalid] = React.useState<readonly string[]>([]);
  const onInvalid = React.useCallback(
    (tool: string, bad: boolean) =>
      setInvalid((old) => (bad === old.includes(tool) ? old : bad ? [...old, tool] : old.filter((t) => t !== tool))),
    [],
  );
  /** bumped by Revert: every row starts again from the settings, a bad value typed in one included */
  const [generation, setGeneration] = React.useState(0);
  const [localOpen, setLocalOpen] = React.useState(true);
  const open = props.open ?? localOpen;
  const toggle = () => (props.onToggle ? props.onToggle(!open) : setLocalOpen(!open));
  const lens = props.lens ?? DEFAULT_LENS;
  const total = base && dry && changed ? deltaText(base, dry, lens) : undefined;
  // a change that costs more is not the highlighted action: Save turns secondary and says what it costs
  const added = base && dry && changed && !props.pending ? costAdded(base, dry, lens.costModel) : undefined;
  const dearer = added !== undefined && added > 0;
  const canSave = changed && !saving && invalid.length === 0;
  return (
    <section className={`caps${open ? ' open' : ''}`} aria-label="Caps per tool">
      <div className="caps-head">
        <button type="button" className="caps-toggle" aria-expanded={open} aria-controls="caps-body" onClick={toggle}>
          <span aria-hidden="true">{open ? '▾' : '▸'}</span> Caps per tool
          <span className="muted">
            {' '}
            ({caps.length} tools, default {capText(defaultCap)} {capUnit})
          </span>
        </button>
        {changed && (
          <span className="dry-text caps-total" data-testid="dry-delta" role="status">
            {props.pending ? 'dry run…' : total ? `dry run: ${total}` : ''}
          </span>
        )}
        <span className="caps-actions">
          {invalid.length > 0 && (
            <span className="invalid caps-blocked" data-testid="caps-blocked">
              fix the cap for {invalid.join(', ')} to save
            </span>
          )}
          <Button
            appearance={dearer ? 'secondary' : 'primary'}
            disabled={!canSave}
            onClick={onSave}
            aria-label="Save caps to settings"
            data-testid="caps-save"
            {...(dearer
              ? { title: `Saving these caps costs ${money(added, lens)} more over this session than the settings in force` }
              : {})}
          >
            {dearer ? `Save anyway… (costs ${money(added, lens)} more)` : 'Save…'}
          </Button>
          <Button
            appearance={dearer ? 'primary' : 'secondary'}
            disabled={(!changed && invalid.length === 0) || saving}
            onClick={() => {
              setGeneration((g) => g + 1);
              onRevert();
            }}
            data-testid="caps-revert"
          >
            Revert
          </Button>
        </span>
      </div>
      {changed && !props.pending && props.explain && (
        <p className="dry-explain" data-testid="dry-explain" role="note">
          {props.explain}
        </p>
      )}
      {open && (
        <div className="caps-body" id="caps-body">
          <table>
            <colgroup>
              <col className="col-tool" />
              <col className="col-cap" />
              <col className="col-turns" />
              <col className="col-new" />
              <col className="col-effect" />
            </colgroup>
            <caption className="muted">
              Caps in {capUnit}; tools without their own cap use the default, {capText(defaultCap)}. A new cap re-projects the session at
              once (a dry run); Save writes spillway.toolCaps.
            </caption>
            <thead>
              <tr>
                <th scope="col">tool</th>
                <th scope="col">cap now</th>
                <th scope="col">turns reduced</th>
                <th scope="col">new cap</th>
                <th scope="col">effect (dry run)</th>
              </tr>
            </thead>
            <tbody>
              {caps.map((c) => (
                <CapRow
                  key={`${c.tool}:${generation}`}
                  c={c}
                  change={changes[c.tool]}
                  onChange={onChange}
                  onInvalid={onInvalid}
                  effect={changes[c.tool] !== undefined && base && perTool?.[c.tool] ? deltaText(base, perTool[c.tool]!, lens) : undefined}
                />
              ))}
            </tbody>
          </table>
          {caps.some((c) => c.keptWhole) && (
            <ul className="caps-notes" data-testid="caps-kept-whole">
              {caps
                .filter((c) => c.keptWhole)
                .map((c) => (
                  <li key={c.tool}>
                    * {c.tool}: {c.keptWhole!.results} result{c.keptWhole!.results === 1 ? '' : 's'} over its cap{' '}
                    {c.keptWhole!.results === 1 ? 'was' : 'were'} sent whole: {c.keptWhole!.why}.
                  </li>
                ))}
            </ul>
          )}
        </div>
      )}
      {!open && changed && base && dry && <span className="sr-only">{`${compact(dry.projectedTokens)} tokens under the new caps`}</span>}
    </section>
  );
}
