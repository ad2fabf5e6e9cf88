/**
 * What the extension keeps about each reduction so Compare Original and Projected can show both
 * sides later: the marker text the model was sent, and the file the tool call named (for the
 * document's language). Records live beside the store's objects, in `<store>/projected/<handle>.json`.
 */
import type { InputReduction, Reduction } from '../../engine/types';
import { markerTextFor, toolInputPaths } from './documents';

export interface ProjectedRecord {
  handle: string;
  tool: string;
  callId: string;
  stage: string;
  reason: string;
  /** the marker text that replaced the result in the projected request */
  marker: string;
  /** the file named by the tool call's input, if any (picks the document's language) */
  sourcePath?: string;
  /** the shell command the tool call ran, if any (titles the document) */
  command?: string;
  time: string;
}

export const PROJECTED_DIR = 'projected';

/** What a record needs of a reduction: a result's (`Reduction`), or a file input's with its stage named. */
export type RecordedReduction = Pick<Reduction, 'handle' | 'tool' | 'callId' | 'reason'> & { stage: string };

/** File inputs as records (and the log) name them: with their stage, `input`. */
export function withInputStage<T extends InputReduction>(inputs: readonly T[]): (T & { stage: 'input' })[] {
  return inputs.map((i) => ({ ...i, stage: 'input' as const }));
}

/** Records for the reductions of one projection; reductions whose marker cannot be found are skipped. */
export function projectedRecords(
  request: unknown,
  projected: unknown,
  reductions: readonly RecordedReduction[],
  time: string,
): ProjectedRecord[] {
  if (reductions.length === 0) return [];
  const commands = new Map<string, string>();
  const paths = toolInputPaths(request, commands);
  const out: ProjectedRecord[] = [];
  for (const r of reductions) {
    const marker = markerTextFor(projected, r.handle);
    if (marker === undefined) continue;
    const record: ProjectedRecord = { handle: r.handle, tool: r.tool, callId: r.callId, stage: r.stage, reason: r.reason, marker, time };
    const sourcePath = paths.get(r.callId);
    if (sourcePath) record.sourcePath = sourcePath;
    const command = commands.get(r.callId);
    if (command) record.command = command;
    out.push(record);
  }
  return out;
}
