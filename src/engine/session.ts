/**
 * Session memory: what one call of a conversation leaves for the next.
 *
 * Why: within a session, a result reduced in call k must stay reduced the same way in call k+1
 * (stickiness), so the projected prefix stays byte-stable and the provider's prompt cache keeps
 * hitting, even when a stage's boundary moves (window, budget) or the configuration changes. It also
 * makes the next call cheap: token counts and the parse of the unchanged prefix are reused.
 *
 * Where it sits: the run (run.ts) recalls the previous call's decisions into its ledger before the
 * first stage, so stages only decide on results no earlier call decided; after the projection, the
 * engine (engine.ts) remembers this call's decisions for the next.
 */
import type { BackoffRecord } from './backoff';
import { readBackAnswerTokens, type GuaranteeRecord, type ReductionKind } from './guarantee';
import type { ParsedRequest, ToolResult } from './formats';
import { reusableNodes, type JValue } from './json';
import type { ReferencesMemory } from './stages/references';
import type { Decision, InputDecision, PartsMemory, Results, Span } from './stages/results';

/** Session memories by session id; opaque to callers. */
export interface SessionStore {
  readonly memories: Map<string, unknown>;
}

export function createSessionStore(): SessionStore {
  return { memories: new Map() };
}

export interface SessionMemory {
  text: string;
  /** decisions by result key, with where the decided content sat in `text` */
  decisions: Map<string, { decision: Decision; start: number; end: number }>;
  /** token counts of items and fixed parts, with their spans in `text` */
  items: Span[];
  fixed: Span[];
  /** the previous parse, for reuse where the text did not change */
  nodes: Map<number, JValue>;
  /** this call's place in the session (0-based: the model calls the request shows before it) */
  call: number;
  /** read-backs per tool, and the handles already counted as read back (backoff.ts) */
  backoff: BackoffRecord;
  readBack: Set<string>;
  /** read-backs charged to the session's ledger, by call and kind, and the kinds stopped (../guarantee.ts) */
  guarantee: GuaranteeRecord;
  /** the file inputs this call replaced: their handles, so a read-back of one is known as a file input's */
  inputs: Array<Pick<InputDecision, 'handle' | 'tool' | 'originalTokens' | 'originalChars'>>;
  /** Spillway's read tool as the session's agent names it, once a request offered it (sticky: ../read-tool.ts) */
  readTool?: string;
  /** which results the agent referred to, for extending rather than redoing (stages/references.ts) */
  references?: ReferencesMemory;
  /** per result: its item and the tokens of its text parts, where counted */
  parts?: PartsMemory;
}

/**
 * Length of the common prefix of two texts, compared in doubling chunks (native comparisons, no
 * copies), so finding that a 5 MB request starts with the previous 4.9 MB one takes well under a
 * millisecond.
 */
export function commonPrefixLength(a: string, b: string, hint = 0): number {
  const n = Math.min(a.length, b.length);
  let at = 0;
  // one comparison up to the hint (where the previous request's items ended) settles most calls
  if (hint > 0 && hint <= n && a.slice(0, hint) === b.slice(0, hint)) at = hint;
  let step = 4096;
  while (at < n) {
    const len = Math.min(step, n - at);
    if (a.slice(at, at + len) === b.slice(at, at + len)) {
      at += len;
      step *= 2;
      continue;
    }
    if (len <= 64) {
      while (at < n && a.charCodeAt(at) === b.charCodeAt(at)) at++;
      return at;
    }
    step = len >> 1;
  }
  return at;
}

/** Keys of the results across calls: the call id, with `#k` for its k-th repeat in one request. */
export function resultKeys(results: readonly ToolResult[]): string[] {
  const seen = new Map<string, number>();
  return results.map((r) => {
    const k = seen.get(r.callId) ?? 0;
    seen.set(r.callId, k + 1);
    return k === 0 ? r.callId : `${r.callId}#${k}`;
  });
}

/**
 * The decisions an earlier call of the session made on the same results (same key, same content),
 * per result. A genuine marker in the request is left alone.
 */
export function recall(
  req: ParsedRequest,
  keys: readonly string[],
  markers: ReadonlyArray<string | undefined>,
  memory: SessionMemory,
  samePrefix: number,
): Array<Decision | undefined> {
  return req.results.map((r, i) => {
    const m = memory.decisions.get(keys[i]!);
    const c = r.content;
    if (!m || !c || markers[i]) return undefined;
    if (c.end - c.start !== m.end - m.start) return undefined;
    // inside the unchanged prefix at the same place it is the same content; elsewhere compare
    const same = (c.start === m.start && c.end < samePrefix) || req.text.slice(c.start, c.end) === memory.text.slice(m.start, m.end);
    return same ? m.decision : undefined;
  });
}

/** What this call leaves for the next one of its session. */
export function remember(
  results: Results,
  keys: readonly string[],
  decisions: ReadonlyArray<Decision | undefined>,
  session: Pick<SessionMemory, 'call' | 'backoff' | 'readBack' | 'guarantee' | 'inputs'>,
): SessionMemory {
  const req = results.req;
  const kept = new Map<string, { decision: Decision; start: number; end: number }>();
  decisions.forEach((decision, i) => {
    const c = req.results[i]!.content;
    if (decision && c) kept.set(keys[i]!, { decision, start: c.start, end: c.end });
  });
  const tokens = results.originalItemTokens();
  const items = req.items.map((it, i) => ({ start: it.start, end: it.end, tokens: tokens[i]! }));
  const memory: SessionMemory = {
    text: req.text,
    decisions: kept,
    items,
    fixed: results.fixedSpanTokens(),
    nodes: reusableNodes(req.root, 2),
    parts: results.partsMemory(),
    ...session,
  };
  if (results.readTool) memory.readTool = results.readTool;
  if (results.references) memory.references = results.references;
  return memory;
}

/**
 * What `handle` holds, as this session reduced it: the tool, the kind of reduction that hid it and
 * the tokens a read-back of it returns (undefined when the session issued no such handle).
 */
export function handleOrigin(memory: SessionMemory, handle: string): { tool: string; kind: ReductionKind; answer: number } | undefined {
  for (const { decision: d } of memory.decisions.values()) {
    // (a clear that also replaced its call's file input, `inputs.when: clear`, hid both)
    if (d.handle === handle || d.inputHandle === handle)
      return { tool: d.tool, kind: d.stage, answer: readBackAnswerTokens(d.originalTokens, d.originalChars) };
  }
  for (const d of memory.inputs) {
    if (d.handle === handle) return { tool: d.tool, kind: 'input', answer: readBackAnswerTokens(d.originalTokens, d.originalChars) };
  }
  return undefined;
}
