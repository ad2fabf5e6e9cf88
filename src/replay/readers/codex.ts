/**
 * Codex CLI rollout logs (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as Responses input.
 *
 * Each line is `{timestamp, type, payload}`. The payloads of `response_item` lines are Responses
 * items exactly as Codex sent or received them, so they become the items unchanged (not copied).
 * `session_meta` carries the instructions; `turn_context` (per-turn settings, the model) and
 * `event_msg` (UI events that partly repeat the items) are counted and skipped. A `compacted` line
 * marks where Codex summarised the history: the replay keeps the full history, says so in a note and
 * lists the compaction (`compactions`, with the last `token_count`'s usage as Codex's count). A call is each run of model output (assistant message, reasoning, tool calls) that follows
 * input items; its time (`at`) is the `timestamp` of the line of the last item of its request (a
 * tool output or user message). Older rollouts (bare items, no wrapper, no times) are read too, without times.
 */
import { forEachRecord, type StreamOptions } from './lines';
import { SkipLog, preview } from './skip-log';
import type { Transcript, TranscriptCompaction } from './types';
import { callsBefore, computeCalls, isRecord, parseTime, RESPONSES_INPUT_TYPES, type Json } from './wire';

/** Top-level line types Codex writes that are not items. */
const SKIPPED_TYPES: ReadonlySet<string> = new Set(['turn_context', 'event_msg']);

/** Response item types that are Responses API input. */
const ITEM_TYPES = RESPONSES_INPUT_TYPES;

/** Response items Codex records for itself and never sends to the model (workspace snapshots). */
const LOCAL_ITEM_TYPES: ReadonlySet<string> = new Set(['ghost_snapshot']);

/** `base_instructions` is a string in some CLI versions and `{ text }` in others. */
function instructionsOf(meta: Json): string | undefined {
  for (const value of [meta.base_instructions, meta.instructions]) {
    if (typeof value === 'string' && value !== '') return value;
    if (isRecord(value) && typeof value.text === 'string' && value.text !== '') return value.text;
  }
  return undefined;
}

export async function readCodex(path: string, opts: StreamOptions = {}): Promise<Transcript> {
  const log = new SkipLog();
  const items: unknown[] = [];
  /** per item, its line's time (undefined for a line without a valid `timestamp`, as in old rollouts) */
  const times: (number | undefined)[] = [];
  let instructions: string | undefined;
  let model: string | undefined;
  let sawMeta = false;
  /** the last `token_count` event's usage (total tokens of the last call) and the context window it names */
  let lastUsage: number | undefined;
  let contextWindow: number | undefined;
  const compactions: { items: number; c: Omit<TranscriptCompaction, 'calls'> }[] = [];

  let first = true;
  await forEachRecord(path, opts, log, (record, line) => {
    const type = typeof record.type === 'string' ? record.type : undefined;
    const payload = record.payload;
    const isFirst = first;
    first = false;
    // Rollouts written before Codex wrapped lines in {timestamp, type, payload} (mid 2025): a bare
    // meta object first, then bare items, with {record_type: "state"} lines in between.
    if (!('payload' in record)) {
      if (type !== undefined && ITEM_TYPES.has(type)) {
        items.push(record);
        times.push(undefined);
        return;
      }
      if (type === undefined && record.record_type === 'state') {
        log.skip('state');
        return;
      }
      if (type === undefined && isFirst && 'id' in record && 'timestamp' in record) {
        sawMeta = true;
        instructions = instructionsOf(record);
        return;
      }
    }
    if (type === 'response_item') {
      if (!isRecord(payload)) {
        log.skip('no-payload', `line ${line}: response_item without a payload object`);
        return;
      }
      const itemType = typeof payload.type === 'string' ? payload.type : '(no type)';
      if (ITEM_TYPES.has(itemType)) {
        items.push(payload);
        times.push(parseTime(record.timestamp));
      } else if (LOCAL_ITEM_TYPES.has(itemType)) log.skip(`response_item:${itemType}`);
      else {
        log.skipNoteFirst(
          `unknown:response_item:${itemType}`,
          `line ${line}: unknown response_item type ${preview(itemType)} (skipped; further ones counted only)`,
        );
      }
      return;
    }
    if (type === 'session_meta') {
      if (!sawMeta && isRecord(payload)) {
        sawMeta = true;
        instructions = instructionsOf(payload);
        if (typeof payload.model === 'string') model = payload.model;
      }
      return;
    }
    if (type === 'compacted') {
      log.skip('compacted', `line ${line}: compacted (Codex summarised the history here; later calls are replayed with the full history)`);
      // `{message, replacement_history?}` (codex-rs protocol's CompactedItem): no trigger, no usage
      const message = isRecord(payload) && typeof payload.message === 'string' ? payload.message : '';
      compactions.push({
        items: items.length,
        c: {
          line,
          ...(lastUsage !== undefined ? { tokens: lastUsage } : {}),
          ...(contextWindow !== undefined ? { contextWindow } : {}),
          ...(model !== undefined ? { model } : {}),
          summary: message,
        },
      });
      return;
    }
    if (type !== undefined && SKIPPED_TYPES.has(type)) {
      if (type === 'turn_context' && model === undefined && isRecord(payload) && typeof payload.model === 'string') model = payload.model;
      if (type === 'event_msg' && isRecord(payload) && payload.type === 'token_count' && isRecord(payload.info)) {
        const last = payload.info.last_token_usage;
        if (isRecord(last) && typeof last.total_tokens === 'number') lastUsage = last.total_tokens;
        if (typeof payload.info.model_context_window === 'number') contextWindow = payload.info.model_context_window;
      }
      log.skip(type);
      return;
    }
    const name = type ?? '(no type)';
    log.skipNoteFirst(`unknown:${name}`, `line ${line}: unknown record type ${preview(name)} (skipped; further ones counted only)`);
  });

  const base: Record<string, unknown> = {};
  if (model !== undefined) base.model = model;
  if (instructions !== undefined) base.instructions = instructions;
  const calls = computeCalls('openai-responses', items, false, times);
  const compacted = compactions.map(({ items: n, c }) => ({ calls: callsBefore(calls, n), ...c }));
  return {
    source: 'codex',
    wire: 'openai-responses',
    base,
    items,
    calls,
    ...(compacted.length > 0 ? { compactions: compacted } : {}),
    skipped: log.result(),
  };
}
