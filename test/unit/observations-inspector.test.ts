/**
 * The inspector lists reduced observations like tool results: a replayed text-mode session's turns
 * name the tool (`bash`) and the call (`obs-<message index>`), and a result's two sides are the
 * exact original output and the user message as the model saw it, template and marker.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/engine';
import { ReplaySource } from '../../src/extension/inspector/replaySource';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { MemoryStore } from '../../src/store';

const FILE = join(
  __dirname,
  '../fixtures/sessions/long/mini-swe-agent-text/gruckion-mini-swe-agent__gemini-3-pro__pylint-dev__pylint-6528.traj.json',
);

describe('inspector: a replayed mini-swe-agent text-mode session', () => {
  it('lists reduced observations with their tool and call id, and shows both sides', async () => {
    const { config } = parseConfig({});
    const store = new MemoryStore();
    const t = await readTranscript(FILE);
    const source = new ReplaySource({ store: () => store, config: () => config });
    const s = source.add(FILE, t, replay(t, { config, store, detail: true }), 1, '2026-01-01T00:00:00Z');
    const turns = s.turns();
    const k = turns.findIndex((x) => x.reductions > 0);
    expect(k).toBeGreaterThanOrEqual(0);
    expect(turns[k]!.tools).toContain('bash');
    const r = s.detail(k).results[0]!;
    expect(r.tool).toBe('bash');
    expect(r.callId).toMatch(/^obs-\d+$/);
    const item = Number(r.callId.slice(4));
    const original = s.text(r.handle, 'original', 0, 100_000).text;
    expect(original).toBe(store.get(r.handle));
    expect((t.items[item] as { content: string }).content).toContain(original);
    const projected = s.text(r.handle, 'projected', 0, 100_000).text;
    expect(projected).toContain(r.handle);
    expect(projected).toMatch(/^<returncode>-?\d+<\/returncode>\n/);
  });
});
