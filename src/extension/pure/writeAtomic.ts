/**
 * Writes an agent's settings file (Codex's config.toml, Claude Code's .mcp.json and
 * settings.local.json) the way the route commands must: to a temp file beside it, then renamed over
 * it, so the agent reading it at that moment sees the old file or the new one, never part of one.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export function writeAtomic(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.spillway-${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}
