/**
 * A transcript replayed as the inspector's host replays it on open (a fresh replay with a store of
 * its own, under `config`), for tests of ReplaySession.
 */
import { statSync } from 'node:fs';
import type { SpillwayConfig } from '../../src/engine/index';
import { MemoryStore } from '../../src/store/memory';
import { readTranscript, type Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { ReplaySession } from '../../src/extension/inspector/replaySource';

export async function replayedSession(
  file: string,
  config: SpillwayConfig,
  modified = '',
): Promise<{ transcript: Transcript; session: ReplaySession; store: MemoryStore }> {
  const store = new MemoryStore();
  const transcript = await readTranscript(file);
  const result = replay(transcript, { config, store, detail: true });
  const session = new ReplaySession(
    { store: () => store, config: () => config },
    `replay:${file}`,
    file,
    transcript,
    result,
    statSync(file).size,
    modified,
  );
  return { transcript, session, store };
}
