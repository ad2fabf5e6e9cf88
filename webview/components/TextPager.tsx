/**
 * A long text shown a page at a time: the host sends PAGE_CHARS characters per request, and "Show
 * more" asks for the next page, so a 10 MB output never crosses to the webview whole.
 */
import * as React from 'react';
import type { Side, TextPage } from '../../src/protocol';
import { count } from '../format';
import { Button } from '../ui';

export const PAGE_CHARS = 16 * 1024;

/** The text with each case-insensitive occurrence of `query` wrapped in <mark> (at most MAX_MARKS). */
const MAX_MARKS = 500;
function highlighted(text: string, query: string | undefined): React.ReactNode {
  const q = query?.trim().toLowerCase();
  if (!q) return text;
  const lower = text.toLowerCase();
  const out: React.ReactNode[] = [];
  let at = 0;
  for (let n = 0; n < MAX_MARKS; n++) {
    const i = lower.indexOf(q, at);
    if (i < 0) break;
    out.push(text.slice(at, i), <mark key={i}>{text.slice(i, i + q.length)}</mark>);
    at = i + q.length;
  }
  out.push(text.slice(at));
  return out;
}

export function TextPager(props: {
  load: (offset: number, limit: number) => Promise<TextPage>;
  side: Side;
  label: string;
  highlight?: string | undefined;
}) {
  const { load, side, label } = props;
  const [pages, setPages] = React.useState<TextPage[]>([]);
  const [error, setError] = React.useState<string>();
  const [busy, setBusy] = React.useState(false);

  const more = React.useCallback(
    async (offset: number) => {
      setBusy(true);
      try {
        const p = await load(offset, PAGE_CHARS);
        if (p.unavailable) setError(p.unavailable);
        else setPages((old) => (offset === 0 ? [p] : [...old, p]));
      } catch (e) {
        setError(e instanceof Error ? e.message : String(e));
      } finally {
        setBusy(false);
      }
    },
    [load],
  );
  React.useEffect(() => {
    setPages([]);
    setError(undefined);
    void more(0);
  }, [more]);

  // the first match of the search scrolled into the text's own view, so a match far down the page shows
  const pre = React.useRef<HTMLPreElement>(null);
  const joined = pages.map((p) => p.text).join('');
  React.useEffect(() => {
    const el = pre.current;
    const mark = el?.querySelector('mark');
    if (!el || !mark) return;
    // the text is positioned (styles.css), so a mark's offset is from the top of the text
    el.scrollTop = Math.max(0, mark.offsetTop - el.clientHeight / 3);
  }, [joined, props.highlight]);
  const last = pages[pages.length - 1];
  const shown = last ? last.offset + last.text.length : 0;
  const total = last?.total ?? 0;
  return (
    <section className={`pager pager-${side}`} aria-label={label}>
      <header>
        <b>{label}</b>
        {last && (
          <span className="pager-count">{shown < total ? `${count(shown)} of ${count(total)} chars` : `${count(total)} chars`}</span>
        )}
      </header>
      {error ? (
        <p className="pager-error" role="status">
          {error}
        </p>
      ) : (
        <pre className="pager-text" tabIndex={0} data-side={side} ref={pre}>
          {highlighted(joined, props.highlight)}
        </pre>
      )}
      {!error && shown < total && (
        <Button appearance="secondary" disabled={busy} onClick={() => void more(shown)} aria-label={`Show more of the ${side} text`}>
          Show more ({count(Math.min(PAGE_CHARS, total - shown))} chars)
        </Button>
      )}
    </section>
  );
}
