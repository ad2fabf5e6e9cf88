/**
 * Progress of a long command on stderr: one line rewritten in place, shown only when stderr is a
 * terminal (a pipe or a log file gets nothing) and only once the work has taken over a second (a
 * short replay prints no flicker). The command's output on stdout is never touched.
 */

/** A replay shorter than this shows no progress at all. */
export const PROGRESS_AFTER_MS = 1000;
/** The line is rewritten at most this often: a terminal does not need a frame per model call. */
const REDRAW_MS = 100;

export interface ProgressStream {
  isTTY?: boolean;
  write(text: string): unknown;
}

export interface Progress {
  update(text: string): void;
  /** clears the line if one was shown */
  done(): void;
}

export function progressLine(stream: ProgressStream, now: () => number = Date.now): Progress {
  const started = now();
  let shown = false;
  let last = -Infinity;
  return {
    update(text) {
      if (!stream.isTTY) return;
      const t = now();
      if (t - started < PROGRESS_AFTER_MS || t - last < REDRAW_MS) return;
      last = t;
      shown = true;
      stream.write(`\r${text}\x1b[K`);
    },
    done() {
      if (shown) stream.write('\r\x1b[K');
      shown = false;
    },
  };
}
