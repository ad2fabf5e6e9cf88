/**
 * Text the extension shows: sizes, ages, list labels, the status bar.
 * No `vscode` here, so all of it is unit tested.
 */
import { formatInt } from '../../engine/format-number';

/** A count with thousands separators, rounded (costs and averages are not whole). */
export function formatCount(n: number): string {
  return formatInt(Math.round(n));
}

export function formatSize(chars: number): string {
  if (chars < 1_000) return `${chars} chars`;
  if (chars < 1_000_000) return `${(chars / 1_000).toFixed(chars < 10_000 ? 1 : 0)}k chars`;
  return `${(chars / 1_000_000).toFixed(1)}M chars`;
}

/** Accepts epoch milliseconds, epoch seconds or an ISO string. */
export function toMillis(time: unknown): number | undefined {
  if (typeof time === 'number' && Number.isFinite(time)) return time < 1e11 ? time * 1000 : time;
  if (typeof time === 'string') {
    const t = Date.parse(time);
    return Number.isNaN(t) ? undefined : t;
  }
  if (time instanceof Date) return time.getTime();
  return undefined;
}

export function formatAge(time: unknown, now: number = Date.now()): string {
  const ms = toMillis(time);
  if (ms === undefined) return 'unknown time';
  const s = Math.max(0, Math.round((now - ms) / 1000));
  if (s < 60) return 'just now';
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

export interface OutputSummary {
  handle: string;
  tool?: string;
  callId?: string;
  /** every call that produced the output (identical content shares one handle) */
  callIds?: readonly string[];
  /** the file or command that names it (engine/names.ts sourceLabel) */
  source?: string;
  /** a file input (what the agent wrote to a file), not a tool result */
  input?: boolean;
  /** the command the call ran, as the agent wrote it: in the detail when the label shows less of it, so typing any of it finds the row */
  command?: string;
  chars?: number;
  lines?: number;
  tokens?: number;
  time?: unknown;
}

/** Most characters of a command a picker row's detail shows (and the picker matches). */
const MAX_DETAIL_COMMAND = 500;
/** Call ids listed in a picker row's detail; more are counted. */
const MAX_LISTED_CALLS = 3;

/**
 * Label, description and detail of one row in Open Stored Output…: named by its tool and the file or
 * command it came from (`Read · src/foo.ts`, `Bash · $ go test ./...`, `input` for a file input), its size,
 * then its age, handle, the calls that produced it and the command as the agent wrote it.
 */
export function outputPickItem(e: OutputSummary, now: number = Date.now()): { label: string; description: string; detail: string } {
  const calls = e.callIds?.length ? e.callIds : e.callId ? [e.callId] : [];
  const listed =
    calls.slice(0, MAX_LISTED_CALLS).join(', ') + (calls.length > MAX_LISTED_CALLS ? ` +${calls.length - MAX_LISTED_CALLS} more` : '');
  const parts = [
    e.chars !== undefined ? formatSize(e.chars) : undefined,
    e.lines !== undefined ? `${formatCount(e.lines)} line${e.lines === 1 ? '' : 's'}` : undefined,
    e.tokens !== undefined ? `${formatCount(e.tokens)} tokens` : undefined,
  ].filter(Boolean);
  const name = e.source ?? (e.source === undefined && calls.length ? listed : 'unknown call');
  // the label names a command by what it does (`$ go test …`); the detail keeps the whole line (`cd /w && go test …`)
  const line = e.command?.trim().split('\n')[0]?.trim();
  const command =
    line && e.source !== `$ ${line}` ? [`$ ${line.length > MAX_DETAIL_COMMAND ? `${line.slice(0, MAX_DETAIL_COMMAND - 1)}…` : line}`] : [];
  return {
    label: [e.tool ?? 'tool', ...(e.input ? ['input'] : []), name].join(' · '),
    description: parts.join(', '),
    detail: [formatAge(e.time, now), e.handle, ...(e.source !== undefined && calls.length ? [listed] : []), ...command].join(' · '),
  };
}

/** Newest first; entries without a time go last. */
export function newestFirst<T extends { time?: unknown }>(entries: readonly T[]): T[] {
  return [...entries].sort((a, b) => (toMillis(b.time) ?? -Infinity) - (toMillis(a.time) ?? -Infinity));
}

export function statusText(savedTokens: number): string {
  return `$(fold) Spillway: ${formatCount(savedTokens)} tokens saved`;
}
