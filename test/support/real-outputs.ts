/**
 * Tool outputs as agents really printed them, for the properties that need realistic text under the
 * engine's real tokenizer (o200k): file reads, greps, shell output from a Claude Code session (the
 * demo's) and a Codex one in the corpus, and short reads: the first lines of those outputs, and
 * windows of this repository's README as an agent reads a markdown file (`sed -n`). Prose and short
 * reads are what a marker is most often no cheaper than: a made-up output (`x` repeated) tokenises
 * unlike any real one, so a rule about tokens is proved on these.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sessionResults } from '../../bench/preview-kinds';
import { readTranscript } from '../../src/replay/readers';
import { CORPUS } from './corpus';

const SESSIONS = ['dev3/claude-code/randlee__claude-history-subagent-a5e7369.jsonl', 'responses/ai-sessions__codex-pomodor-timer.jsonl'];
const README = join(__dirname, '../../README.md');

export interface RealOutput {
  tool: string;
  text: string;
}

/** The first `n` lines of a text. */
const head = (text: string, n: number) => text.split('\n').slice(0, n).join('\n');

/** Distinct non-empty outputs: the sessions', their first lines, windows of the README; shortest first. */
export async function realOutputs(): Promise<RealOutput[]> {
  const seen = new Set<string>();
  const out: RealOutput[] = [];
  const add = (tool: string, text: string) => {
    if (!text.trim() || seen.has(text)) return;
    seen.add(text);
    out.push({ tool, text });
  };
  for (const s of SESSIONS)
    for (const r of sessionResults(await readTranscript(join(CORPUS, s)))) {
      add(r.tool, r.text);
      for (const n of [4, 8, 16]) add(r.tool, head(r.text, n));
    }
  const readme = readFileSync(README, 'utf8').split('\n');
  for (let at = 0; at < readme.length; at += 7) for (const n of [3, 6, 12]) add('Bash', readme.slice(at, at + n).join('\n'));
  return out.sort((a, b) => a.text.length - b.text.length);
}
