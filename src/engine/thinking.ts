/**
 * Thinking blocks and reasoning items: what of them a provider bills.
 *
 * Anthropic's `thinking` blocks carry a `signature`, its `redacted_thinking` blocks an encrypted
 * `data` string, and OpenAI's `reasoning` items an `encrypted_content` blob beside their summary.
 * None of these strings is billed as the tokens its characters would make: a provider bills at most
 * the readable text, and only while the block is in the current turn (earlier turns' thinking is
 * dropped from the context). The engine counts a block as its readable text (an upper bound of
 * what it bills), and the replay's meter (src/replay/metrics.ts) bills the same text by turn.
 */

export const THINKING_TYPES: ReadonlySet<string> = new Set(['thinking', 'redacted_thinking', 'reasoning']);

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The readable text of a thinking block or reasoning item (signatures and encrypted content excluded). */
export function thinkingText(b: Record<string, unknown>): string {
  if (typeof b.thinking === 'string') return b.thinking;
  const parts: string[] = [];
  for (const key of ['summary', 'content']) {
    const v = b[key];
    if (Array.isArray(v)) for (const p of v) if (isObj(p) && typeof p.text === 'string') parts.push(p.text);
  }
  return parts.join('\n');
}
