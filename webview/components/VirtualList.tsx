/**
 * A windowed list: only the rows in view (plus a few either side) are in the DOM, so a session of
 * 10,000 turns renders as fast as one of 30 and scrolls without layout work for the rest. Rows have
 * one fixed height. The list is one tab stop, a `listbox` whose active row follows the arrow keys,
 * Page Up/Down, Home and End; Enter activates it.
 */
import * as React from 'react';

export interface VirtualListProps {
  count: number;
  rowHeight: number;
  active: number;
  onActive: (index: number) => void;
  onActivate?: (index: number) => void;
  renderRow: (index: number, active: boolean) => React.ReactNode;
  /** for the row ids and aria label */
  idPrefix: string;
  label: string;
  /** rows drawn beyond the viewport on each side */
  overscan?: number;
  className?: string;
}

/** Used when the container has no measured height yet (jsdom, a hidden panel). */
const FALLBACK_HEIGHT = 600;

export function VirtualList(props: VirtualListProps) {
  const { count, rowHeight, active, onActive, onActivate, renderRow, idPrefix, label, overscan = 8 } = props;
  const ref = React.useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = React.useState(0);
  const [height, setHeight] = React.useState(FALLBACK_HEIGHT);
  const frame = React.useRef(0);

  React.useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setHeight(el.clientHeight || FALLBACK_HEIGHT);
    measure();
    if (typeof ResizeObserver === 'undefined') return;
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  const onScroll = React.useCallback(() => {
    if (frame.current) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = 0;
      if (ref.current) setScrollTop(ref.current.scrollTop);
    });
  }, []);
  React.useEffect(() => () => cancelAnimationFrame(frame.current), []);

  // keep the active row in view
  React.useEffect(() => {
    const el = ref.current;
    if (!el || active < 0 || active >= count) return;
    const top = active * rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + (el.clientHeight || FALLBACK_HEIGHT))
      el.scrollTop = top + rowHeight - (el.clientHeight || FALLBACK_HEIGHT);
    setScrollTop(el.scrollTop);
  }, [active, count, rowHeight]);

  const first = Math.max(0, Math.floor(scrollTop / rowHeight) - overscan);
  const last = Math.min(count, Math.ceil((scrollTop + height) / rowHeight) + overscan);
  const perPage = Math.max(1, Math.floor(height / rowHeight) - 1);

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (count === 0) return;
    let next: number;
    switch (e.key) {
      case 'ArrowDown':
        next = Math.min(count - 1, active + 1);
        break;
      case 'ArrowUp':
        next = Math.max(0, active - 1);
        break;
      case 'PageDown':
        next = Math.min(count - 1, active + perPage);
        break;
      case 'PageUp':
        next = Math.max(0, active - perPage);
        break;
      case 'Home':
        next = 0;
        break;
      case 'End':
        next = count - 1;
        break;
      case 'Enter':
      case ' ':
        e.preventDefault();
        if (active >= 0) onActivate?.(active);
        return;
      default:
        return;
    }
    e.preventDefault();
    if (next < 0) next = 0;
    onActive(next);
  };

  const rows: React.ReactNode[] = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <div
        key={i}
        id={`${idPrefix}-${i}`}
        role="option"
        aria-selected={i === active}
        aria-posinset={i + 1}
        aria-setsize={count}
        className={`vrow${i === active ? ' active' : ''}`}
        style={{ transform: `translateY(${i * rowHeight}px)`, height: rowHeight }}
        onClick={() => {
          onActive(i);
          onActivate?.(i);
        }}
      >
        {renderRow(i, i === active)}
      </div>,
    );
  }
  return (
    <div
      ref={ref}
      className={`vlist ${props.className ?? ''}`}
      role="listbox"
      tabIndex={0}
      aria-label={label}
      aria-activedescendant={active >= 0 && active < count ? `${idPrefix}-${active}` : undefined}
      onScroll={onScroll}
      onKeyDown={onKeyDown}
      data-first={first}
      data-last={last}
    >
      <div className="vlist-inner" style={{ height: count * rowHeight }}>
        {rows}
      </div>
    </div>
  );
}
