// The limit of a replayed session over the protocol (`session/limits`): its request and response
// validated on both sides, and the host service answering it from the session, with the host's
// progress, or with an error for a session that cannot measure it (a live one).
import { describe, expect, it } from 'vitest';
import { createEngine, parseConfig, type Projection } from '../../src/engine';
import { MemoryStore } from '../../src/store';
import { command, parseHostMessage, parseWebviewMessage, request, response, type SessionLimits } from '../../src/protocol';
import { InspectorService, type InspectorActions } from '../../src/extension/inspector/service';
import { ApiSource } from '../../src/extension/inspector/apiSource';
import { SyntheticSession, SyntheticSource } from '../../bench/inspector-fixture';
import { wiredService } from './support';

const config = parseConfig({}).config;
const LIMITS: SessionLimits = {
  models: {
    anthropic: { raw: 1000, kept: 900, oracle: 500, floor: 400, share: 0.2 },
    openai: { raw: 800, kept: 800, oracle: 800, floor: 700 },
  },
  oracleMisses: 0,
};

describe('session/limits in the protocol', () => {
  it('accepts the request with a session id and refuses it without one', () => {
    expect(parseWebviewMessage(request(4, 'session/limits', { sessionId: 'replay:x' }))).toMatchObject({
      ok: true,
      message: { method: 'session/limits', params: { sessionId: 'replay:x' } },
    });
    expect(parseWebviewMessage({ kind: 'request', id: 4, method: 'session/limits', params: {} })).toMatchObject({ ok: false });
  });

  it('accepts a response whose share is absent when the oracle saves nothing, and refuses one with a figure missing', () => {
    expect(parseHostMessage(response(4, 'session/limits', LIMITS))).toMatchObject({ ok: true, message: { ok: true, result: LIMITS } });
    const broken = { models: { anthropic: { raw: 1000, kept: 900, floor: 400 } }, oracleMisses: 0 };
    expect(parseHostMessage({ kind: 'response', id: 4, method: 'session/limits', ok: true, result: broken })).toMatchObject({ ok: false });
  });
});

describe('the service answering session/limits', () => {
  const wired = (sources: ConstructorParameters<typeof InspectorService>[0], progress?: InspectorActions['progress']) =>
    wiredService(sources, config, progress);

  it("answers with the session's limits, measured under the host's progress with a signal", async () => {
    const source = new SyntheticSource();
    const session = new SyntheticSession('replay:s', 5, config);
    const seen: { signal?: AbortSignal; reports: string[] } = { reports: [] };
    Object.assign(session, {
      limits: async (signal: AbortSignal, report?: (m: string) => void) => {
        seen.signal = signal;
        report?.('the oracle');
        return LIMITS;
      },
    });
    source.add(session);
    const titles: string[] = [];
    const { s, posted } = wired([source], (title, signal, task) => {
      titles.push(title);
      return task((m) => seen.reports.push(m), signal);
    });
    await s.receive(command('webview/ready', {}));
    await s.receive(request(9, 'session/limits', { sessionId: 'replay:s' }));
    expect(posted.at(-1)).toMatchObject({ kind: 'response', method: 'session/limits', ok: true, result: LIMITS });
    expect(titles).toEqual([`Spillway: measuring the limit of ${session.info.title}`]);
    expect(seen.reports).toEqual(['the oracle']);
    expect(seen.signal?.aborted).toBe(false);
  });

  it('answers a live API session with a one-line error, not a measurement', async () => {
    const source = new ApiSource({ store: () => new MemoryStore(), config: () => config });
    const engine = createEngine(config, { store: new MemoryStore() });
    const req = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    source.record('chat-1', req, engine.project(req, 'auto') as Projection);
    const { s, posted } = wired([source]);
    await s.receive(request(2, 'session/limits', { sessionId: 'api:chat-1' }));
    expect(posted.at(-1)).toMatchObject({ kind: 'response', method: 'session/limits', ok: false });
    expect(posted.at(-1)!.error).toMatch(/^the limit is measured for replayed transcripts only, not for api sessions$/);
  });
});
