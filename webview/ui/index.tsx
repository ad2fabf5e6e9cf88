/**
 * The one place the webview imports `@vscode/webview-ui-toolkit`. Components elsewhere use these
 * wrappers, so swapping the toolkit (it is deprecated upstream) means changing this file only.
 */
import * as React from 'react';
import { VSCodeButton, VSCodeDivider, VSCodeDropdown, VSCodeOption, VSCodeTextField } from '@vscode/webview-ui-toolkit/react';

type Common = { className?: string; title?: string; id?: string; 'aria-label'?: string; 'data-testid'?: string };

export function Button(props: Common & { children?: React.ReactNode; onClick?: () => void; appearance?: 'primary' | 'secondary' | 'icon'; disabled?: boolean }) {
  const { onClick, children, ...rest } = props;
  return (
    <VSCodeButton {...rest} onClick={() => onClick?.()}>
      {children}
    </VSCodeButton>
  );
}

export function TextField(props: Common & { value: string; placeholder?: string; size?: number; onChange: (value: string) => void; onEnter?: () => void; children?: React.ReactNode }) {
  const { value, onChange, onEnter, children, ...rest } = props;
  return (
    <VSCodeTextField
      {...rest}
      value={value}
      onInput={(e: unknown) => onChange(((e as Event).target as HTMLInputElement).value ?? '')}
      onKeyDown={(e: React.KeyboardEvent) => {
        if (e.key === 'Enter') onEnter?.();
      }}
    >
      {children}
    </VSCodeTextField>
  );
}

export function Dropdown(props: Common & { value: string; options: { value: string; label: string }[]; onChange: (value: string) => void }) {
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

export function Divider() {
  return <VSCodeDivider role="separator" />;
}

export function Spinner(props: Common) {
  const { className, ...rest } = props;
  return <span role="progressbar" {...rest} className={`ui-spinner ${className ?? ''}`} />;
}
