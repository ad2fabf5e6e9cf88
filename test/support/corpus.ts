/**
 * Where the real sessions live: test/fixtures/sessions/, the repository's copy of the development
 * corpus (55 real sessions with their sources and licenses). Tests and the benchmark read it from
 * here and nowhere else, so a clone with nothing beside it passes `npm test`.
 */
import { join } from 'node:path';

export const CORPUS = join(__dirname, '../fixtures/sessions');

/** The four short real sessions, one per wire format, keyed by file name. */
export const SHORT_SESSIONS: Record<string, string> = {
  'claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl': join(
    CORPUS,
    'anthropic/claude-code-viewer__5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl',
  ),
  'ai-sessions__codex-pomodor-timer.jsonl': join(CORPUS, 'responses/ai-sessions__codex-pomodor-timer.jsonl'),
  'mini-swe-agent__deepseek_bench1__django__django-14752.traj.json': join(
    CORPUS,
    'openai-chat/mini-swe-agent__deepseek_bench1__django__django-14752.traj.json',
  ),
  'SWE-agent__ctf_crypto_katy.traj': join(CORPUS, 'swe-agent/SWE-agent__ctf_crypto_katy.traj'),
};

/** The long real sessions. */
export const LONG = join(CORPUS, 'long');
/** The long real Claude Code session (also the demo's session). */
export const LONG_CLAUDE_CODE = join(LONG, 'claude-code/session-share__general-tool-calls.jsonl');

/** Sessions unlike the corpus (test/fixtures/unseen/): judged on by `npm run bench:unseen`, never tuned on. */
export const UNSEEN = join(__dirname, '../fixtures/unseen');
