/**
 * Staleness: which tool results show an outdated copy, because a later call read or wrote the same
 * file, or ran the same command again (a test run, a build, a status check).
 *
 * Why: a stale result is the cheapest thing to clear: the model has a newer copy further down, so
 * clearing it hides nothing it needs (`clear.staleFirst`). It is a fact of the request's tool
 * calls, not a decision, so it is computed once and only when the clear stage asks.
 *
 * Where it sits: a helper of the clear stage (clear.ts), which clears stale results before the
 * oldest ones and plans its payback schedule with them.
 */
import type { ParsedRequest } from '../formats';
import { decodeString, toValue, type JValue } from '../json';

/** Input fields that name the file a tool call works on (read, edit, write tools of common agents). */
const PATH_KEYS = ['path', 'file_path', 'filePath', 'filename', 'file', 'target_file', 'notebook_path', 'absolute_path'];
/** Input fields that hold the command a shell tool ran (Bash, shell, exec_command, run_terminal_cmd). */
const COMMAND_KEYS = ['command', 'cmd'];

/**
 * For each result, the item index of the next call that names the same file or command (so from
 * there on the result shows an outdated copy), or Infinity.
 */
export function staleAt(req: ParsedRequest): number[] {
  const results = req.results;
  const lastUse = new Map<string, number>();
  const out = new Array<number>(results.length).fill(Number.POSITIVE_INFINITY);
  const calls = [...req.calls.values()].sort((a, b) => a.item - b.item);
  const pathOf = new Map<string, string>();
  for (const call of calls) {
    const p = pathArgument(req.text, call.input);
    if (p) pathOf.set(call.id, p);
  }
  // walk results from the newest back, remembering the latest call per path seen so far
  const byItemDesc = calls.slice().reverse();
  let ci = 0;
  for (let i = results.length - 1; i >= 0; i--) {
    const r = results[i]!;
    const own = r.call ?? req.calls.get(r.callId);
    const ownItem = own?.item ?? r.item;
    while (ci < byItemDesc.length && byItemDesc[ci]!.item > ownItem) {
      const p = pathOf.get(byItemDesc[ci]!.id);
      if (p) lastUse.set(p, byItemDesc[ci]!.item);
      ci++;
    }
    const p = own ? pathOf.get(own.id) : undefined;
    if (p && lastUse.has(p)) out[i] = lastUse.get(p)!;
  }
  return out;
}

/** The file a call works on, or its command (keyed so it cannot collide with a path). */
function pathArgument(text: string, input: JValue | undefined): string | undefined {
  if (!input) return undefined;
  let obj: unknown;
  try {
    obj = input.kind === 'string' ? JSON.parse(decodeString(text, input)) : input.kind === 'object' ? toValue(text, input) : undefined;
  } catch {
    return undefined;
  }
  if (!obj || typeof obj !== 'object') return undefined;
  for (const k of PATH_KEYS) {
    const v = (obj as Record<string, unknown>)[k];
    if (typeof v === 'string' && v.length > 0) return v;
  }
  // the same command run again: its earlier output is superseded
  for (const k of COMMAND_KEYS) {
    const v = (obj as Record<string, unknown>)[k];
    const cmd = typeof v === 'string' ? v : Array.isArray(v) && v.every((x) => typeof x === 'string') ? v.join(' ') : undefined;
    if (cmd && cmd.trim().length > 0) return `\0cmd:${cmd.trim()}`;
  }
  return undefined;
}
