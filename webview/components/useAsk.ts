/**
 * An answer the host gives only when asked, because it replays the session again (the limit, a
 * replay as sent elsewhere): idle until asked, pending, then the answer or a one-line reason why
 * there is none. An answer that comes after the component is gone is dropped.
 */
import * as React from 'react';

export type Asked<T> = { kind: 'idle' } | { kind: 'pending' } | { kind: 'done'; value: T } | { kind: 'failed'; error: string };

/** The state of the answer to `ask`, and the function that asks (again). */
export function useAsk<T>(ask: () => Promise<T>): [Asked<T>, () => void] {
  const [state, setState] = React.useState<Asked<T>>({ kind: 'idle' });
  const live = React.useRef(true);
  React.useEffect(
    () => () => {
      live.current = false;
    },
    [],
  );
  const run = () => {
    setState({ kind: 'pending' });
    ask().then(
      (value) => live.current && setState({ kind: 'done', value }),
      (e: unknown) => live.current && setState({ kind: 'failed', error: (e instanceof Error ? e.message : String(e)).split('\n')[0]! }),
    );
  };
  return [state, run];
}
