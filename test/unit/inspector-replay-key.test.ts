/**
 * A session inside another's file (a Copilot CLI sub-agent, replayed with `--instance`) is known to
 * the inspector by its file and instance: listed after a reload by the file's time, and opened by
 * replaying that sub-agent, not the file's own conversation.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/engine';
import { replayKey, ReplaySource, type ReplaySession, transcriptOf } from '../../src/extension/inspector/replaySource';
import { MemoryStore } from '../../src/store';
import { copilotSubAgentLog } from '../support/copilot-log';

const dir = mkdtempSync(join(tmpdir(), 'sw-replay-key-'));
/** A Copilot CLI log whose main conversation hands a command to a sub-agent (its task tool). */
function log(): string {
  const file = join(dir, 'events.jsonl');
  writeFileSync(file, copilotSubAgentLog('/w'));
  return file;
}

describe('a replay of a session inside another file', () => {
  it('is keyed by the file and its instance, and a path is a path even when it holds the mark', () => {
    expect(transcriptOf(replayKey('/a/events.jsonl', 'call #1'))).toEqual({ path: '/a/events.jsonl', instance: 'call #1' });
    expect(transcriptOf(replayKey('/a/events.jsonl'))).toEqual({ path: '/a/events.jsonl' });
    const odd = join(dir, 'x#instance=y');
    writeFileSync(odd, '{}');
    expect(transcriptOf(odd)).toEqual({ path: odd });
  });

  it("is listed after a reload by its file's size and time, named as a sub-agent, and opens as the sub-agent's calls", async () => {
    const file = log();
    const key = replayKey(file, 't1');
    const { config } = parseConfig({});
    const store = new MemoryStore();
    let remembered: string[] = [key];
    const source = new ReplaySource({ store: () => store, config: () => config }, { get: () => remembered, set: (p) => (remembered = p) });
    const [listed] = source.list();
    expect(listed).toMatchObject({ id: `replay:${key}`, origin: 'replay', turns: 0 });
    expect(listed!.title).toMatch(/^sub-agent t1 of Delegate the count · w · /);
    const opened = (await source.open(`replay:${key}`)) as ReplaySession;
    // the sub-agent's two calls, not the main conversation's two
    expect(opened.turns().length).toBe(2);
    expect(JSON.stringify(opened.transcript.items)).toContain('SUB: count');
    expect(JSON.stringify(opened.transcript.items)).not.toContain('main system');
  });
});
