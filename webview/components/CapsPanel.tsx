/**
 * Per-tool caps: the cap in force for each tool of the session, a field to change it, and at once
 * (after a short pause in typing) a dry run in the host re-projects the session so the timeline and
 * the chart show what it would have cost. Save writes spillway.toolCaps; Revert drops the changes.
 */
import * as React from 'react';
import type { CapChoice, ToolCap } from '../../src/protocol';
import { capText, parseCap } from '../format';
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
}

function CapRow(props: { c: ToolCap; change: CapChoice | undefined; onChange: CapsPanelProps['onChange'] }) {
  const { c, change, onChange } = props;
  const [text, setText] = React.useState(change === undefined ? '' : String(change));
  React.useEffect(() => setText(change === undefined ? '' : String(change)), [change]);
  const parsed = text.trim() === '' ? undefined : parseCap(text);
  const invalid = text.trim() !== '' && parsed === undefined;
  return (
    <tr data-tool={c.tool}>
      <th scope="row">{c.tool}</th>
      <td className="cap-current">
        {capText(c.cap)}
        {!c.explicit && <span className="muted"> (default)</span>}
      </td>
      <td>{c.reducedTurns}</td>
      <td>
        <TextField
          aria-label={`New cap for ${c.tool}`}
          data-testid={`cap-input-${c.tool}`}
          value={text}
          placeholder="e.g. 4000, unlimited"
          size={14}
          onChange={(v) => {
            setText(v);
            const p = v.trim() === '' ? undefined : parseCap(v);
            if (v.trim() === '' || p !== undefined) onChange(c.tool, p);
          }}
        />
        {invalid && <span className="invalid" role="alert"> a positive number, unlimited or default</span>}
      </td>
    </tr>
  );
}

export function CapsPanel(props: CapsPanelProps) {
  const { caps, defaultCap, capUnit, changes, onChange, onSave, onRevert, saving } = props;
  const changed = Object.keys(changes).length > 0;
  return (
    <section className="caps" aria-label="Caps per tool">
      <table>
        <caption>
          Caps per tool ({capUnit}; tools without their own cap use the default, {capText(defaultCap)})
        </caption>
        <thead>
          <tr>
            <th scope="col">tool</th>
            <th scope="col">cap now</th>
            <th scope="col">turns reduced</th>
            <th scope="col">new cap (dry run)</th>
          </tr>
        </thead>
        <tbody>
          {caps.map((c) => (
            <CapRow key={c.tool} c={c} change={changes[c.tool]} onChange={onChange} />
          ))}
        </tbody>
      </table>
      <div className="caps-actions">
        <Button disabled={!changed || saving} onClick={onSave} aria-label="Save caps to settings">Save to spillway.toolCaps</Button>
        <Button appearance="secondary" disabled={!changed || saving} onClick={onRevert}>Revert</Button>
      </div>
    </section>
  );
}
