/**
 * Recognition: which tool results are already reduced before any stage looks at them.
 *
 * Why: projecting a projection must change nothing (idempotence), so a result that is one of our
 * markers is left alone; and a result the agent reduced itself (Claude Code's `<persisted-output>`
 * preview, Gemini CLI's `<tool_output_masked>`) is not reduced again. But a marker is only trusted when it could be one: no longer than
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
import {
  markerBound,
  COPILOT_CHAT_WRITTEN_OPENING,
  COPILOT_SAVED_OPENING,
  MASKED_OUTPUT_TAG,
  PERSISTED_OUTPUT_TAG,
  recogniseCopilotChatWritten,
  recogniseCopilotSaved,
  recogniseMaskedOutput,
  recognisePersistedOutput,
  recogniseRawMarker,
} from '../markers';
import type { SavedByAgent } from '../types';

/** A JSON string escape is at most 6 characters (\uXXXX) for one decoded character. */
const MAX_ESCAPE = 6;

export interface Recognised {
  /** per result: the handle when the result is a genuine marker (a projection projected again) */
  markers: ReadonlyArray<string | undefined>;
  /** per result: the agent that saved the full output itself and the file it names ('' when none), when one did */
  agentSaved: ReadonlyArray<AgentSaved | undefined>;
  /** genuine markers found */
  markersSeen: number;
  /** results that looked like markers but were not (too long, or an unknown handle): treated as text */
  forged: number;
}

/** An output the agent reduced itself, and the file it says holds the whole. */
interface AgentSaved {
  agent: SavedByAgent['agent'];
  file: string;
}

/**
 * The agents' own wrappers of an output they saved: the tag it opens with, how to read it, and whose
 * it is. Qwen Code writes Claude Code's tag too, with a digest line of its own
 * (`persistAndTruncateToolResult`, 0.24: `Full output sha256: …`). GitHub Copilot's CLI has no tag:
 * its first line (`Output too large to read at once (… KB). Saved to: <file>`) is the wrapper; nor
 * has Copilot's chat in VS Code (`Large tool result (… KB) written to file. …: <file>`).
 */
const AGENT_WRAPPERS: ReadonlyArray<{
  tag: string;
  agent: (text: string) => SavedByAgent['agent'];
  read: (text: string) => string | undefined;
}> = [
  {
    tag: PERSISTED_OUTPUT_TAG,
    agent: (text) => (QWEN_DIGEST.test(text.slice(0, 4096)) ? 'qwen-code' : 'claude-code'),
    read: recognisePersistedOutput,
  },
  { tag: MASKED_OUTPUT_TAG, agent: () => 'gemini-cli', read: recogniseMaskedOutput },
  { tag: COPILOT_SAVED_OPENING, agent: () => 'copilot-cli', read: recogniseCopilotSaved },
  { tag: COPILOT_CHAT_WRITTEN_OPENING, agent: () => 'copilot-chat', read: recogniseCopilotChatWritten },
];
/** Qwen Code's line after the file in its `<persisted-output>`. */
const QWEN_DIGEST = /\nFull output sha256: [0-9a-f]{64}\n/;

export function recognise(req: ParsedRequest, cfg: SpillwayConfig, known: (handle: string) => boolean): Recognised {
  const markers: Array<string | undefined> = [];
  const agentSaved: Array<AgentSaved | undefined> = [];
  let markersSeen = 0,
    forged = 0;
  for (const r of req.results) {
    let marker: string | undefined, saved: AgentSaved | undefined;
    const first = r.textParts[0];
    // an observation's body (or an embedded output) is a span inside its string: the marker, if any, is that span
    const at = resultString(req, r);
    const handle = at && recogniseRawMarker(at.src, at.start, at.end);
    if (handle && genuine(req, r, cfg, handle, known)) {
      marker = handle;
      markersSeen++;
    } else if (handle) forged++;
    else {
      // a cheap look at the raw start first: only a result that opens with a wrapper's tag is decoded
      const opens = (tag: string) =>
        r.embedded ? at!.src.startsWith(tag, at!.start + 1) : !!first && req.text.startsWith(tag, first.start + 1);
      const wrapper = AGENT_WRAPPERS.find((w) => opens(w.tag));
      if (wrapper) {
        const text = resultText(req, r);
        const file = wrapper.read(text);
        if (file !== undefined) saved = { agent: wrapper.agent(text), file };
      }
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
