/**
 * File inputs, in offload's slot: the input of a file-writing call (Write, Edit, apply_patch, ...)
 * that `inputs.keepRounds` or more model calls have followed becomes a marker with the path and a
 * handle (what the marker says and which inputs qualify: ../file-inputs.ts). A shell call
 * (`inputs.shellTools`) whose command writes files through heredocs (`cat > f << 'EOF'`) keeps its
 * command, each such body replaced by one line naming the file and the handle.
 *
 * Why here: the content is on disk once the call ran, yet the agent sends it again with every later
 * call; in real Claude Code sessions such inputs are a quarter of the characters. The decision is
 * taken from the call's own input and how many model calls followed it, never from what we project
 * or from later items, so it is the same in every later call (stickiness), like offload's.
 *
 * Where it sits: first in the offload slot of the run (../run.ts), before offload; it decides on
 * tool calls, not tool results, so no stage's decision depends on it except clear's accounting
 * (clear.ts counts the projected tokens and leaves an input already replaced alone).
 */
import { toolListed } from '../config';
import { fileInputMarker, isInputMarker, MIN_INPUT_CHARS, readFileInput, shellWriteMarker } from '../file-inputs';
import { formatInt as fmt } from '../format-number';
import { CallMap, candidateNames, type ToolCall } from '../formats';
import { handleFor } from '../handle';
import { decodeString } from '../json';
import { stringTokens } from '../tokens';
import { readCallTokens, readBackAnswerTokens, readBackTokens, stopped } from '../guarantee';
import { deferredToClear } from './after-use';
import { LONE_SURROGATE, owned, type InputDecision, type Results, type StoreWrite } from './results';
import { countLines } from '../lines';
import type { InputFilter } from '../types';

export interface InputsOutcome {
  inputs: InputDecision[];
  writes: StoreWrite[];
}

export function fileInputs(results: Results, filter?: InputFilter): InputsOutcome {
  const out: InputsOutcome = { inputs: [], writes: [] };
  const { req, cfg } = results;
  const { keepRounds, minTokens, tools, shellTools } = cfg.inputs;
  // with `inputs.when: clear` the clear stage replaces inputs, once the agent is past them (clear.ts);
  // without a clear stage (the Responses WebSocket route) they are replaced on arrival as before
  if (cfg.inputs.when === 'clear' && cfg.clear.enabled && !deferredToClear(cfg)) return out;
  // tokens of the conversation before each item, as the agent sent it (never what we project, so
  // the decision for a call cannot change when other reductions do)
  const before: number[] = [];
  if (minTokens > 0) {
    const tok = results.originalItemTokens();
    let run = results.fixedTokens();
    for (let i = 0; i < tok.length; i++) {
      before.push(run);
      run += tok[i]!;
    }
  }
  const replies = results.replies();
  const calls = req.calls instanceof CallMap ? req.calls.all : [...req.calls.values()];
  for (const call of calls) {
    const input = call.input;
    if (!input || input.end - input.start < MIN_INPUT_CHARS) continue;
    const names = candidateNames(call.name);
    const writer = toolListed(tools, names);
    if (!writer && !toolListed(shellTools, names)) continue;
    // the replies begun after the call's own assistant run
    if (replies - results.callOf(call.item) < keepRounds) continue;
    // decided in the call keepRounds after the one that first sent it; not once the session's bank
    // can no longer cover a read-back of a file input (../guarantee.ts)
    const decidedAt = results.callOf(call.item) + keepRounds;
    if (stopped(results.guarantee, 'input', decidedAt)) continue;
    if (minTokens > 0 && before[call.item]! <= minTokens) continue;
    const d = replaceInput(results, call, decidedAt);
    if (!d) continue;
    // once read back, the read call and its answer ride in every later request: an input that spares
    // fewer tokens than that would leave every later call dearer than sending it whole
    const carried = readBackTokens({
      ask: readCallTokens(results.counter),
      answer: readBackAnswerTokens(d.write.meta.tokens, d.write.meta.chars),
    });
    if (d.decision.originalTokens - d.decision.projectedTokens < carried) continue;
    if (filter && !filter({ tool: d.write.meta.tool, callId: d.write.meta.callId, text: d.write.text })) continue;
    out.writes.push(d.write);
    out.inputs.push(d.decision);
  }
  return out;
}

/**
 * The marker that replaces a file-writing call's input, and the write that keeps the input; undefined
 * when the input is not one we mark (no path, already a marker, not shorter as a marker). Used here on
 * arrival and by the clear stage (clear.ts) with `inputs.when: clear`.
 */
export function replaceInput(
  results: Results,
  call: ToolCall,
  decidedAt: number,
): { decision: InputDecision; write: StoreWrite } | undefined {
  const { req, cfg, counter } = results;
  const text = req.text;
  const input = call.input;
  if (!input || input.end - input.start < MIN_INPUT_CHARS) return undefined;
  const names = candidateNames(call.name);
  const writer = toolListed(cfg.inputs.tools, names);
  if (!writer && !toolListed(cfg.inputs.shellTools, names)) return undefined;
  const original = input.kind === 'string' ? decodeString(text, input) : text.slice(input.start, input.end);
  let value: unknown;
  try {
    value = input.kind === 'string' && !original.trimStart().startsWith('{') ? original : JSON.parse(original);
  } catch {
    return undefined;
  }
  if (isInputMarker(value)) return undefined;
  if (LONE_SURROGATE.test(original)) return undefined;
  const handle = handleFor(original);
  let marker: unknown;
  let what: string;
  if (writer) {
    const f = readFileInput(value);
    if (!f) return undefined;
    marker = fileInputMarker(call.name, f, original.length, handle);
    what = `${fmt(original.length)} chars of ${owned(call.name)} input; the file on disk holds the content`;
  } else {
    // a shell command that wrote files through heredocs: only the bodies go, the command stays
    const shell = shellWriteMarker(value, handle);
    if (!shell) return undefined;
    marker = shell.value;
    what = `${fmt(shell.chars)} chars written to ${shell.paths.length === 1 ? shell.paths[0]!.slice(0, 120) : `${shell.paths.length} files`} by ${owned(call.name)}; the file on disk holds them`;
  }
  const markerText = typeof marker === 'string' ? marker : JSON.stringify(marker);
  const replacement = input.kind === 'string' ? JSON.stringify(markerText) : markerText;
  if (replacement.length >= input.end - input.start) return undefined;
  const originalTokens = results.countNode(input);
  const projectedTokens = typeof marker === 'string' || input.kind === 'string' ? counter.count(markerText) : stringTokens(marker, counter);
  if (projectedTokens >= originalTokens) return undefined;
  return {
    write: {
      handle,
      text: original,
      meta: {
        tool: owned(call.name),
        callId: owned(call.id),
        stage: 'input',
        chars: original.length,
        bytes: Buffer.byteLength(original, 'utf8'),
        lines: countLines(original),
        tokens: counter.count(original),
      },
    },
    decision: {
      callId: owned(call.id),
      tool: owned(call.name),
      item: call.item,
      start: input.start,
      end: input.end,
      call: decidedAt,
      replacement,
      handle,
      reason: what,
      originalChars: input.end - input.start,
      originalTokens,
      projectedTokens,
    },
  };
}
