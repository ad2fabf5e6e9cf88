/**
 * Recognition: which tool results are already reduced before any stage looks at them.
 *
 * Why: projecting a projection must change nothing (idempotence), so a result that is one of our
 * markers is left alone; and a result the agent reduced itself (Claude Code's `<persisted-output>`
 * preview) is not reduced again. But a marker is only trusted when it could be one: no longer than
 * a marker can be (all its text parts together) and with a handle the store holds or this engine
 * issued. Anything else that merely looks like a marker (a log or saved projection the agent read,
 * a real marker with output pasted after it) is ordinary text and goes through the stages, so no
 * output slips past them.
 *
 * Where it sits: the first step of a run (../run.ts), after the request is read and before the
 * session's decisions are recalled; its answer is fixed for the rest of the projection.
 */
import type { SpillwayConfig } from '../config';
import { resultRawLength, resultString, resultText, type ParsedRequest, type ToolResult } from '../formats';
import { markerBound, PERSISTED_OUTPUT_TAG, recognisePersistedOutput, recogniseRawMarker } from '../markers';

/** A JSON string escape is at most 6 characters (\uXXXX) for one decoded character. */
const MAX_ESCAPE = 6;

export interface Recognised {
  /** per result: the handle when the result is a genuine marker (a projection projected again) */
  markers: ReadonlyArray<string | undefined>;
  /** per result: the file the agent saved the full output to ('' when it names none), when it did */
  agentSaved: ReadonlyArray<string | undefined>;
  /** genuine markers found */
  markersSeen: number;
  /** results that looked like markers but were not (too long, or an unknown handle): treated as text */
  forged: number;
}

export function recognise(req: ParsedRequest, cfg: SpillwayConfig, known: (handle: string) => boolean): Recognised {
  const markers: Array<string | undefined> = [];
  const agentSaved: Array<string | undefined> = [];
  let markersSeen = 0,
    forged = 0;
  for (const r of req.results) {
    let marker: string | undefined, saved: string | undefined;
    const first = r.textParts[0];
    // an observation's body (or an embedded output) is a span inside its string: the marker, if any, is that span
    const at = resultString(req, r);
    const handle = at && recogniseRawMarker(at.src, at.start, at.end);
    if (handle && genuine(req, r, cfg, handle, known)) {
      marker = handle;
      markersSeen++;
    } else if (handle) forged++;
    else if (
      r.embedded
        ? at!.src.startsWith(PERSISTED_OUTPUT_TAG, at!.start + 1)
        : first && req.text.startsWith(PERSISTED_OUTPUT_TAG, first.start + 1)
    ) {
      saved = recognisePersistedOutput(resultText(req, r));
    }
    markers.push(marker);
    agentSaved.push(saved);
  }
  return { markers, agentSaved, markersSeen, forged };
}

/** Within the marker bound for its style (all text parts together), and a handle we know. */
function genuine(req: ParsedRequest, r: ToolResult, cfg: SpillwayConfig, handle: string, known: (handle: string) => boolean): boolean {
  const bound = markerBound(cfg.previewChars);
  const rawLen = resultRawLength(r);
  if (rawLen > bound * MAX_ESCAPE) return false;
  if (rawLen > bound && resultText(req, r).length > bound) return false;
  return known(handle);
}
