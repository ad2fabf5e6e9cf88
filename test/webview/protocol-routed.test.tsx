// A replayed session replayed as sent to another provider, over the protocol (`session/routed`):
// its request and response validated on both sides, and the host service answering it from the
// session, under the host's progress, or with an error for a session that cannot (a live one).
import { describe, expect, it } from 'vitest';
import { createEngine, parseConfig, type Projection } from '../../src/engine';
import { MemoryStore } from '../../src/store';
import { command, parseHostMessage, parseWebviewMessage, request, response, type RoutedFigures } from '../../src/protocol';
import { InspectorService, type InspectorActions } from '../../src/extension/inspector/service';
import { ApiSource } from '../../src/extension/inspector/apiSource';
import { SyntheticSession, SyntheticSource } from '../../bench/inspector-fixture';
import { wiredService } from './support';

const config = parseConfig({}).config;
const FIGURES: RoutedFigures = { costModel: 'openai', raw: 1000, projected: 800, readBack: 5, missedIds: 1, referencedIds: 90 };

describe('session/routed in the protocol', () => {
  it('accepts the request with a session id and a price model, and refuses it without either', () => {
    expect(parseWebviewMessage(request(4, 'session/routed', { sessionId: 'replay:x', costModel: 'openai' }))).toMatchObject({
      ok: true,
      message: { method: 'session/routed', params: { sessionId: 'replay:x', costModel: 'openai' } },
    });
    expect(parseWebviewMessage({ kind: 'request', id: 4, method: 'session/routed', params: { sessionId: 'replay:x' } })).toMatchObject({
      ok: false,
    });
    expect(parseWebviewMessage({ kind: 'request', id: 4, method: 'session/routed', params: { costModel: 'openai' } })).toMatchObject({
      ok: false,
    });
  });

  it('accepts a response with every figure and refuses one with a figure missing or a negative count', () => {
    expect(parseHostMessage(response(4, 'session/routed', FIGURES))).toMatchObject({ ok: true, message: { ok: true, result: FIGURES } });
    const { readBack: _r, ...missing } = FIGURES;
    expect(parseHostMessage({ kind: 'response', id: 4, method: 'session/routed', ok: true, result: missing })).toMatchObject({ ok: false });
    expect(
      parseHostMessage({ kind: 'response', id: 4, method: 'session/routed', ok: true, result: { ...FIGURES, missedIds: -1 } }),
    ).toMatchObject({
      ok: false,
    });
  });
});

describe('the service answering session/routed', () => {
  const wired = (sources: ConstructorParameters<typeof InspectorService>[0], progress?: InspectorActions['progress']) =>
    wiredService(sources, config, progress);

  it("answers with the session's routed figures, replayed under the host's progress with a signal", async () => {
    const source = new SyntheticSource();
    const session = new SyntheticSession('replay:s', 5, config);
    const seen: { costModel?: string; signal?: AbortSignal; reports: string[] } = { reports: [] };
    Object.assign(session, {
      routed: async (costModel: string, signal: AbortSignal, report?: (m: string) => void) => {
        Object.assign(seen, { costModel, signal });
        report?.('the session as sent to openai');
        return FIGURES;
      },
    });
    source.add(session);
    const titles: string[] = [];
    const { s, posted } = wired([source], (title, signal, task) => {
      titles.push(title);
      return task((m) => seen.reports.push(m), signal);
    });
    await s.receive(command('webview/ready', {}));
    await s.receive(request(9, 'session/routed', { sessionId: 'replay:s', costModel: 'openai' }));
    expect(posted.at(-1)).toMatchObject({ kind: 'response', method: 'session/routed', ok: true, result: FIGURES });
    expect(titles).toEqual([`Spillway: replaying ${session.info.title} as sent to openai`]);
    expect(seen).toMatchObject({ costModel: 'openai', reports: ['the session as sent to openai'] });
    expect(seen.signal?.aborted).toBe(false);
  });

  it('stops the replay under way when a newer one is asked for', async () => {
    const source = new SyntheticSource();
    const session = new SyntheticSession('replay:s', 5, config);
    const signals: AbortSignal[] = [];
    let release: (() => void) | undefined;
    Object.assign(session, {
      routed: (_costModel: string, signal: AbortSignal) => {
        signals.push(signal);
        // the first waits until released; the second answers at once
        return signals.length === 1 ? new Promise<RoutedFigures>((ok) => (release = () => ok(FIGURES))) : Promise.resolve(FIGURES);
      },
    });
    source.add(session);
    const { s } = wired([source]);
    const first = s.receive(request(1, 'session/routed', { sessionId: 'replay:s', costModel: 'openai' }));
    await s.receive(request(2, 'session/routed', { sessionId: 'replay:s', costModel: 'openai-4o' }));
    expect(signals).toHaveLength(2);
    expect(signals[0]!.aborted).toBe(true);
    expect(signals[1]!.aborted).toBe(false);
    release!();
    await first;
  });

  it('answers a live API session with a one-line error, not a replay', async () => {
    const source = new ApiSource({ store: () => new MemoryStore(), config: () => config });
    const engine = createEngine(config, { store: new MemoryStore() });
    const req = { model: 'm', messages: [{ role: 'user', content: 'x' }] };
    source.record('chat-1', req, engine.project(req, 'auto') as Projection);
    const { s, posted } = wired([source]);
    await s.receive(request(2, 'session/routed', { sessionId: 'api:chat-1', costModel: 'openai' }));
    expect(posted.at(-1)).toMatchObject({ kind: 'response', method: 'session/routed', ok: false });
    expect(posted.at(-1)!.error).toBe('a session is replayed as sent elsewhere only from its transcript, not for api sessions');
  });
});
