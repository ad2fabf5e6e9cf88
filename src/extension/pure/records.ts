/**
 * What the extension keeps about each reduced output so Compare Original and Projected can show both
 * sides later: every distinct marker text the model was sent in its place (an output offloaded in
 * one turn and cleared in a later one was sent two markers; each turn's is kept once, however many
 * turns carried it), every call that produced it (identical content shares one handle), and the file
 * or command the call named (for the document's title and language). Records live beside the store's
 * objects, in `<store>/projected/<handle>.json`.
 */
import { createHash } from 'node:crypto';
import type { InputReduction, Reduction } from '../../engine/types';
import { markerTextsFor, resultTextFor } from './documents';
import { callSources } from '../../engine/names';

/** One marker an output was replaced by, in the turns that sent it. */
export interface MarkerRecord {
  /** the first hex digits of the marker text's SHA-256 (a projected document names its marker by it) */
  id: string;
  /** the marker text that replaced the result in the projected request */
  text: string;
  stage: string;
  reason: string;
  /** when it was first recorded (ISO 8601) */
  time: string;
  /** the turn (0-based) of `session` that decided it, when known */
  turn?: number;
  session?: string;
}

export interface ProjectedRecord {
  handle: string;
  /** the first call that produced the output */
  tool: string;
  callId: string;
  /** every call that produced it, oldest first (more than one when several calls returned the same text) */
  calls?: { tool: string; callId: string }[];
  /** the markers it was sent as, oldest first, each text once */
  markers: MarkerRecord[];
  /** the file named by the tool call's input, if any (titles the document, picks its language) */
  sourcePath?: string;
  /** the shell command the tool call ran, if any (titles the document) */
  command?: string;
  /** a file input (what the agent wrote to a file), not a tool result */
  input?: boolean;
  /** when a marker was last added (ISO 8601); the records list newest first by it */
  time: string;
}

export const PROJECTED_DIR = 'projected';
/** Hex digits of a marker id: enough to tell an output's few markers apart. */
const MARKER_ID_DIGITS = 12;
/** Markers kept per output (offload, clear, and a few re-decisions under changed settings); older ones go first. */
const MAX_MARKERS = 16;
/** Calls kept per output; the store's index lists them all. */
const MAX_CALLS = 50;

export function markerId(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, MARKER_ID_DIGITS);
}

/** What a record needs of a reduction: a result's (`Reduction`), or a file input's with its stage named. */
export type RecordedReduction = Pick<Reduction, 'handle' | 'tool' | 'callId' | 'reason' | 'inputOnly'> & { stage: string; fresh?: boolean };

/**
 * File inputs as records (and the log) name them: with their stage, `input`, whatever replaced them
 * (on arrival, or a clear with their call's result: the projection lists both in `inputs`).
 */
export function withInputStage<T extends InputReduction>(inputs: readonly T[]): (T & { stage: 'input' })[] {
  return inputs.map((i) => ({ ...i, stage: 'input' as const }));
}

/** Where a projection was made: the session and turn, when the caller knows them. */
export interface RecordedAt {
  session?: string;
  turn?: number;
}

/**
 * Records for the reductions of one projection; reductions whose marker cannot be found are skipped.
 * Reductions that share a handle (identical outputs of several calls) take the handle's markers in
 * the request's order, the order the reductions come in: pass them all, and `keep` the ones to record
 * (those decided in this projection), so a decision is not given the marker of a call it shares the
 * handle with.
 */
export function projectedRecords(
  request: unknown,
  projected: unknown,
  reductions: readonly RecordedReduction[],
  time: string,
  at: RecordedAt = {},
  keep: (r: RecordedReduction) => boolean = () => true,
): ProjectedRecord[] {
  if (!reductions.some(keep)) return [];
  const sources = callSources(request);
  const texts = new Map<string, string[]>();
  const taken = new Map<string, number>();
  const out: ProjectedRecord[] = [];
  for (const r of reductions) {
    let all = texts.get(r.handle);
    if (!all) texts.set(r.handle, (all = markerTextsFor(projected, r.handle)));
    const n = taken.get(r.handle) ?? 0;
    taken.set(r.handle, n + 1);
    // a clear that replaced only the call's file input sent the result as it was: that text is what it was sent as
    const marker = r.inputOnly ? resultTextFor(projected, r.callId) : all[Math.min(n, all.length - 1)];
    if (marker === undefined || !keep(r)) continue;
    const input = r.stage === 'input';
    const record: ProjectedRecord = {
      handle: r.handle,
      tool: r.tool,
      callId: r.callId,
      markers: [
        {
          id: markerId(marker),
          text: marker,
          stage: r.stage,
          reason: r.reason,
          time,
          ...(at.turn !== undefined ? { turn: at.turn } : {}),
          ...(at.session !== undefined ? { session: at.session } : {}),
        },
      ],
      time,
    };
    const source = sources.get(r.callId);
    // a file input is named by the file it wrote; a result by the file it read, else its command
    const sourcePath = input ? (source?.writes?.[0] ?? source?.path) : source?.path;
    if (sourcePath) record.sourcePath = sourcePath;
    if (source?.command && !(input && sourcePath)) record.command = source.command;
    if (input) record.input = true;
    out.push(record);
  }
  return out;
}

/**
 * One output's record with another's folded in: the calls of both, each marker text once (the first
 * time it was seen), the newest time. A record read from an older version (one `marker` string) is
 * read as a record with that one marker.
 */
export function mergeRecords(a: ProjectedRecord | undefined, b: ProjectedRecord): ProjectedRecord {
  if (!a) return b;
  const calls = [...callsOf(a)];
  for (const c of callsOf(b)) if (!calls.some((x) => x.callId === c.callId)) calls.push(c);
  const markers = [...a.markers];
  for (const m of b.markers) {
    const at = markers.findIndex((x) => x.id === m.id);
    if (at < 0) markers.push(m);
    // the same text decided in another turn: keep the first, learn its turn if it had none
    else if (markers[at]!.turn === undefined && m.turn !== undefined) markers[at] = { ...markers[at]!, turn: m.turn, ...sessionOf(m) };
  }
  const out: ProjectedRecord = {
    ...a,
    ...(a.sourcePath || !b.sourcePath ? {} : { sourcePath: b.sourcePath }),
    ...(a.command || !b.command ? {} : { command: b.command }),
    markers: markers.slice(-MAX_MARKERS),
    time: a.time > b.time ? a.time : b.time,
  };
  if (calls.length > 1) out.calls = calls.slice(0, MAX_CALLS);
  return out;
}

function sessionOf(m: MarkerRecord): { session?: string } {
  return m.session !== undefined ? { session: m.session } : {};
}

function callsOf(r: ProjectedRecord): { tool: string; callId: string }[] {
  return r.calls?.length ? r.calls : [{ tool: r.tool, callId: r.callId }];
}

/**
 * A record as read from disk, or undefined when it is not one: the current shape, or an older
 * version's (a single `marker`, `stage` and `reason`).
 */
export function readRecord(value: unknown, handle: string): ProjectedRecord | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const r = value as Partial<ProjectedRecord> & { marker?: unknown; stage?: unknown; reason?: unknown };
  if (r.handle !== handle || typeof r.tool !== 'string' || typeof r.callId !== 'string') return undefined;
  const time = typeof r.time === 'string' ? r.time : '';
  let markers = Array.isArray(r.markers)
    ? r.markers.filter((m): m is MarkerRecord => !!m && typeof m.text === 'string' && typeof m.id === 'string')
    : [];
  if (markers.length === 0 && typeof r.marker === 'string')
    markers = [
      {
        id: markerId(r.marker),
        text: r.marker,
        stage: typeof r.stage === 'string' ? r.stage : 'offload',
        reason: typeof r.reason === 'string' ? r.reason : '',
        time,
      },
    ];
  if (markers.length === 0) return undefined;
  const out: ProjectedRecord = { handle, tool: r.tool, callId: r.callId, markers, time };
  if (Array.isArray(r.calls)) out.calls = r.calls.filter((c) => typeof c?.callId === 'string' && typeof c.tool === 'string');
  if (typeof r.sourcePath === 'string') out.sourcePath = r.sourcePath;
  if (typeof r.command === 'string') out.command = r.command;
  if (r.input === true || (r as { stage?: unknown }).stage === 'input' || markers.some((m) => m.stage === 'input')) out.input = true;
  return out;
}

/** The record's newest marker, or the newest of `stage` when it has one. */
export function latestMarker(r: ProjectedRecord, stage?: string): MarkerRecord | undefined {
  const pool = stage ? r.markers.filter((m) => m.stage === stage) : [];
  return (pool.length ? pool : r.markers).at(-1);
}

/** The call ids a record names (every call that produced the output). */
export function recordCallIds(r: ProjectedRecord): string[] {
  return callsOf(r).map((c) => c.callId);
}
