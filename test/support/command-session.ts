/**
 * A Chat Completions session as the transcript readers give one, for tests that replay a session:
 * call k is sent the items before its reply, which runs command c<k>; that command's output
 * (`output(k)`) arrives in call k + 1. `reply(k)` is what the agent wrote at call k.
 */
import type { Transcript } from '../../src/replay/readers';

export function commandSession(
  calls: number,
  output: (k: number) => string,
  reply: (k: number) => string = (k) => `run c${k}`,
): Transcript {
  const items: Record<string, unknown>[] = [{ role: 'user', content: 'look around, then report' }];
  const list: Transcript['calls'] = [];
  for (let k = 0; k < calls; k++) {
    const id = `c${k}`;
    list.push({ end: items.length, reply: reply(k) });
    items.push({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: `{"command":"run ${id}"}` } }],
    });
    items.push({ role: 'tool', tool_call_id: id, content: output(k) });
  }
  return {
    source: 'openai-chat',
    wire: 'openai-chat',
    base: { model: 'm' },
    items,
    calls: list,
    skipped: { total: 0, byReason: {}, notes: [] },
  };
}

/**
 * The clear stage that clears whenever a clear pays back (as the oracle places them): nothing kept by
 * count, use, gathering or trigger, nothing offloaded on arrival, so the payback schedule and the
 * ledger alone decide.
 */
export const CLEARS_WHEN_THEY_PAY = {
  preset: 'spillway',
  'offload.enabled': false,
  'clear.triggerTokens': 1,
  'clear.keep': 0,
  'clear.clearAtLeastTokens': 0,
  'clear.staleFirst': false,
  'clear.inUseCalls': 0,
  'clear.keepGathered': false,
};
