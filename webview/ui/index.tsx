/**
 * The one place the webview imports `@vscode/webview-ui-toolkit`. Components elsewhere use these
 * wrappers, so swapping the toolkit (it is deprecated upstream) means changing this file only.
 */
import * as React from 'react';
import { VSCodeButton, VSCodeDropdown, VSCodeOption } from '@vscode/webview-ui-toolkit/react';

type Common = { className?: string; title?: string; id?: string; 'aria-label'?: string; 'data-testid'?: string };

export function Button(
  props: Common & { children?: React.ReactNode; onClick?: () => void; appearance?: 'primary' | 'secondary' | 'icon'; disabled?: boolean },
) {
  const { onClick, children, ...rest } = props;
  return (
    <VSCodeButton {...rest} onClick={() => onClick?.()}>
      {children}
    </VSCodeButton>
  );
}

/**
 * A native input in the toolkit's look rather than the toolkit's text field: the toolkit's field keeps
 * its input in a shadow root that does not take the host's aria-label, so a screen reader heard every
 * one as "Text field". A native input carries its own accessible name.
 */
export function TextField(
  props: Common & {
    value: string;
    placeholder?: string;
    size?: number;
    onChange: (value: string) => void;
    onEnter?: () => void;
    children?: React.ReactNode;
    type?: 'text' | 'search';
    'aria-invalid'?: boolean;
    'aria-describedby'?: string;
  },
) {
  const { value, onChange, onEnter, children, className, type, ...rest } = props;
  return (
    <span className={`ui-field ${className ?? ''}`}>
      <input
        {...rest}
        type={type ?? 'text'}
        className="ui-input"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') onEnter?.();
        }}
      />
      {children}
    </span>
  );
}

/** A two-or-more-way switch (radio buttons drawn as a segmented control), keyboard-operable with the arrows. */
export function Segmented<T extends string>(props: {
  label: string;
  value: T;
  options: { value: T; label: string }[];
  onChange: (v: T) => void;
  'data-testid'?: string;
}) {
  const { label, value, options, onChange } = props;
  return (
    <span className="ui-segmented" role="radiogroup" aria-label={label} data-testid={props['data-testid']}>
      {options.map((o) => (
        <label key={o.value} className={o.value === value ? 'on' : ''}>
          <input type="radio" name={label} value={o.value} checked={o.value === value} onChange={() => onChange(o.value)} />
          {o.label}
        </label>
      ))}
    </span>
  );
}

export function Dropdown(
  props: Common & { value: string; options: { value: string; label: string }[]; onChange: (value: string) => void },
) {
  const { value, options, onChange, ...rest } = props;
  return (
    <VSCodeDropdown {...rest} value={value} onChange={(e: unknown) => onChange(((e as Event).target as HTMLSelectElement).value)}>
      {options.map((o) => (
        <VSCodeOption key={o.value} value={o.value} selected={o.value === value}>
          {o.label}
        </VSCodeOption>
      ))}
    </VSCodeDropdown>
  );
}

/**
 * Badge and Spinner are drawn here rather than taken from the toolkit: the toolkit's badge and
 * progress ring templates set inline `style` attributes, which the inspector's CSP (no
 * 'unsafe-inline') refuses.
 */
export function Badge(props: Common & { children?: React.ReactNode }) {
  const { className, ...rest } = props;
  return <span {...rest} className={`ui-badge ${className ?? ''}`} />;
}

export function Spinner(props: Common) {
  const { className, ...rest } = props;
  return <span role="progressbar" {...rest} className={`ui-spinner ${className ?? ''}`} />;
}
