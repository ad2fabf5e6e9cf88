/**
 * The engine on real agent sessions (test/fixtures/sessions, copied from public repositories):
 * every model call of every session, in the wire format the agent used, through every preset.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createEngine,
  MemorySink,
  observationOption,
  PRESET_NAMES,
  readRequest,
  resultText,
  type ObservationOption,
} from '../../src/engine';
import { CallMap } from '../../src/engine/formats';
import { readTranscript, requestForCall, type Transcript } from '../../src/replay/readers';
import { SHORT_SESSIONS } from '../support/corpus';

const files = Object.keys(SHORT_SESSIONS);
const transcripts = new Map<string, Transcript>();
beforeAll(async () => {
  for (const f of files) transcripts.set(f, await readTranscript(SHORT_SESSIONS[f]!));
});

function isUserTurn(m: unknown): boolean {
  const x = m as { role?: string; type?: string; content?: unknown };
  if (x.role !== 'user') return false;
  return !(Array.isArray(x.content) && x.content.some((b) => (b as { type?: string }).type === 'tool_result'));
}

/** The text without the results' contents and without the inputs of the calls named `item:id` in `inputs`. */
function withoutResults(
  text: string,
  format: Parameters<typeof readRequest>[1],
  observations: ObservationOption = 'off',
  inputs: ReadonlySet<string> = new Set(),
): string {
  const req = readRequest(text, format, undefined, observations);
  const spans: Array<{ start: number; end: number }> = [];
  // an observation's reducible part is its body: the template around it must stay
  for (const r of req.results) if (r.content) spans.push(r.observation ?? { start: r.content.start, end: r.content.end });
  const calls = req.calls instanceof CallMap ? req.calls.all : [...req.calls.values()];
  for (const c of calls) if (c.input && inputs.has(`${c.item}:${c.id}`)) spans.push(c.input);
  spans.sort((a, b) => a.start - b.start);
  let out = '',
    at = 0;
  for (const s of spans) {
    out += text.slice(at, s.start);
    at = s.end;
  }
  return out + text.slice(at);
}

/** The input of call `id` in item `item`, as the store keeps it (a string input decoded). */
function inputText(text: string, format: Parameters<typeof readRequest>[1], item: number, id: string): string | undefined {
  const req = readRequest(text, format);
  const calls = req.calls instanceof CallMap ? req.calls.all : [...req.calls.values()];
  const c = calls.find((x) => x.item === item && x.id === id);
  if (!c?.input) return undefined;
  return c.input.kind === 'string'
    ? (JSON.parse(text.slice(c.input.start, c.input.end)) as string)
    : text.slice(c.input.start, c.input.end);
}

describe.each(files)('real session %s', (file) => {
  it('projects every call byte for byte unchanged when nothing is over a limit', () => {
    const t = transcripts.get(file)!;
    const engine = createEngine({ defaultCap: 'unlimited', clear: { enabled: false }, inputs: { enabled: false } });
    for (let k = 0; k < t.calls.length; k++) {
      for (const indent of [0, 2]) {
        const text = JSON.stringify(requestForCall(t, k), null, indent);
        expect(engine.project(text, t.wire).request).toBe(text);
      }
    }
  });

  it.each(PRESET_NAMES)('under the %s preset every reduction is recoverable, idempotent, and touches only tool results', (preset) => {
    const t = transcripts.get(file)!;
    // small caps so the presets have something to do on these short sessions; the spillway preset's
    // clear on its trigger alone, else the payback rule leaves these short sessions' reads whole (kept
    // while in use) and its file inputs in place, and nothing of its clears would be checked
    const config = {
      preset,
      ...(preset === 'spillway'
        ? {
            defaultCap: 500,
            // reads up to 2,000 chars kept whole while in use, larger ones offloaded: both paths run
            offload: { keepReads: 2_000 },
            inputs: { minTokens: 2_000 },
            clear: { triggerTokens: 2_000, clearAtLeastTokens: 500, schedule: 'trigger', inUseCalls: 1 },
          }
        : {}),
    };
    const store = new MemorySink();
    const engine = createEngine(config, { store });
    let reduced = 0;
    for (let k = 0; k < t.calls.length; k++) {
      const text = JSON.stringify(requestForCall(t, k));
      const marks = t.observations ? { observations: t.observations } : {};
      const option = observationOption(engine.config, t.observations);
      const p = engine.project(text, t.wire, { session: 's', ...marks });
      const req = readRequest(text, t.wire, undefined, option);
      for (const r of p.reductions) {
        expect(store.get(r.handle)).toBe(resultText(req, req.results[r.result]!));
        // a result shorter than any marker ("File created") is sent as it was when a clear replaces only its file input
        if (r.inputHandle && r.projectedChars === r.originalChars) expect(p.request).not.toContain(store.get(r.inputHandle)!);
        else expect(r.projectedChars).toBeLessThan(r.originalChars);
        // a file input a clear replaced with its call's result (inputs.when: clear) reads back exactly
        if (r.inputHandle) {
          const res = req.results[r.result]!;
          expect(store.get(r.inputHandle)).toBe(inputText(text, t.wire, res.call!.item, res.callId));
        }
      }
      reduced += p.reductions.length;
      // projecting the projection changes nothing (a fresh engine over the same store)
      const again = createEngine(config, { store }).project(p.request, t.wire);
      expect(again.request).toBe(p.request);
      expect(again.reductions).toHaveLength(0);
      // a replaced file input reads back exactly as it was sent
      for (const x of p.inputs) expect(store.get(x.handle)).toBe(inputText(text, t.wire, x.item, x.callId));
      // outside the tool results' content and the replaced file inputs, the projection is the request byte for byte
      const inputs = new Set(p.inputs.map((x) => `${x.item}:${x.callId}`));
      for (const r of p.reductions) if (r.inputHandle) inputs.add(`${req.results[r.result]!.call!.item}:${r.callId}`);
      if (!engine.config.clear.clearToolInputs)
        expect(withoutResults(p.request, t.wire, option, inputs)).toBe(withoutResults(text, t.wire, option, inputs));
    }
    // clark/ai-agent/eino caps (12-50 KB) are above every output here, and the trimmer's window
    // counts user turns: a one-task agent session has a single user message, so nothing is "old"
    // (the presets reduce tool results only, as their seeds do: a text-mode session's observations are
    // user messages to them, so on the SWE-agent session they have nothing to do)
    if (preset === 'spillway' || (preset === 'oracle-offload' && !t.observations?.length)) expect(reduced).toBeGreaterThan(0);
    else if (preset === 'oracle-offload') expect(reduced).toBe(0);
    else if (preset === 'openai-trimmer' && t.items.filter((m) => isUserTurn(m)).length < 2) expect(reduced).toBe(0);
  });
});
