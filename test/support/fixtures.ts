/** Texts taken from the real sessions of the corpus, for tests that want real tool output. */
import { readFileSync } from 'node:fs';
import { SHORT_SESSIONS } from './corpus';

const CLAUDE_CODE_VIEWER = SHORT_SESSIONS['claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl']!;

/** The biggest tool result of a real Claude Code session (about 10 k characters, over the default cap). */
export function biggestClaudeCodeToolResult(): string {
  let best = '';
  for (const line of readFileSync(CLAUDE_CODE_VIEWER, 'utf8').split('\n')) {
    try {
      const c = JSON.parse(line)?.message?.content;
      if (!Array.isArray(c)) continue;
      for (const b of c) {
        if (b.type !== 'tool_result') continue;
        const t = typeof b.content === 'string' ? b.content : b.content.map((x: { text?: string }) => x.text ?? '').join('');
        if (t.length > best.length) best = t;
      }
    } catch {
      /* not a line */
    }
  }
  return best;
}
