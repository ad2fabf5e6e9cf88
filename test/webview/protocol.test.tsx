// The protocol and the inspector's host side (no DOM, no vscode): validation on both sides, the ready
// handshake, the session sources of each origin, and the agent session discovery.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, mkdirSync, rmSync, utimesSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine, parseConfig, type Projection } from '../../src/engine';
import { MemoryStore } from '../../src/store';
import { Recorder, type Turn } from '../../src/proxy/recording';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { command, errorResponse, notification, parseHostMessage, parseWebviewMessage, request, response } from '../../src/protocol';
import { InspectorService, mergeCaps, type InspectorActions } from '../../src/extension/inspector/service';
import { ReplaySource } from '../../src/extension/inspector/replaySource';
import { ProxySource } from '../../src/extension/inspector/proxySource';
import { ApiSource } from '../../src/extension/inspector/apiSource';
import { agentSessions, claudeProjectNames } from '../../src/extension/inspector/agentSessions';
import { contentSecurityPolicy, inspectorHtml } from '../../src/extension/inspector/html';
import { Host } from '../../webview/host';
import { SyntheticSession, SyntheticSource } from '../../bench/inspector-fixture';
import { expectSome, failing } from '../support/expect';
import { SHORT_SESSIONS } from '../support/corpus';

const HANDLE = 'sw_0123456789abcdef01234567';
const config = parseConfig({ defaultCap: 1200, previewChars: 400 }).config;
const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), 'spillway-inspector-'));
  temps.push(d);
  return d;
};
afterEach(() => {
  for (const d of temps.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('protocol', () => {
  it('accepts the messages a webview may send, with typed params', () => {
    const r = parseWebviewMessage(request(3, 'turn/detail', { sessionId: 'replay:x', turn: 2 }));
    expect(r).toEqual({ ok: true, message: { kind: 'request', id: 3, method: 'turn/detail', params: { sessionId: 'replay:x', turn: 2 } } });
    expect(parseWebviewMessage(command('webview/ready', {})).ok).toBe(true);
  });

  it('refuses unknown methods, bad params, a handle with a path in it, and host-only kinds', () => {
    expect(parseWebviewMessage({ kind: 'command', method: 'result/delete', params: {} })).toMatchObject({
      ok: false,
      error: 'unknown command result/delete',
    });
    expect(parseWebviewMessage(request(1, 'turn/detail', { sessionId: 'x', turn: -1 } as never))).toMatchObject({ ok: false });
    expect(parseWebviewMessage(command('result/openStored', { handle: '../../etc/passwd' }))).toMatchObject({ ok: false });
    expect(
      parseWebviewMessage(request(1, 'text/page', { sessionId: 'x', handle: HANDLE, side: 'original', offset: 0, limit: 10_000_000 })),
    ).toMatchObject({ ok: false });
    expect(parseWebviewMessage(notification('host/progress', { message: null }))).toMatchObject({
      ok: false,
      error: 'a webview may not send a notification',
    });
    expect(parseWebviewMessage('hello')).toMatchObject({ ok: false });
    expect(parseWebviewMessage({ kind: 'command', method: 'Not A Method', params: {} })).toMatchObject({ ok: false });
  });

  it('validates what the host sends, responses included', () => {
    expect(parseHostMessage(notification('host/showSession', { sessionId: 'a' })).ok).toBe(true);
    expect(parseHostMessage(response(1, 'search/results', { turns: [1, 2], truncated: false })).ok).toBe(true);
    expect(parseHostMessage({ kind: 'response', id: 1, method: 'search/results', ok: true, result: { turns: ['x'] } })).toMatchObject({
      ok: false,
    });
    expect(parseHostMessage(errorResponse(1, 'turn/detail', 'no such turn'))).toMatchObject({
      ok: true,
      message: { ok: false, error: 'no such turn' },
    });
    expect(parseHostMessage(command('webview/ready', {}))).toMatchObject({ ok: false });
  });
});

describe('the webview Host', () => {
  function fakeWindow() {
    const listeners: ((e: MessageEvent) => void)[] = [];
    return {
      w: {
        addEventListener: (_: string, l: (e: MessageEvent) => void) => listeners.push(l),
        removeEventListener: () => undefined,
      } as unknown as Window,
      deliver: (data: unknown) => listeners.forEach((l) => l({ data } as MessageEvent)),
    };
  }
  it('correlates responses with requests by id and rejects error responses', async () => {
    const sent: { id: number }[] = [];
    const { w, deliver } = fakeWindow();
    const host = new Host({ postMessage: (m) => sent.push(m as { id: number }), getState: () => null, setState: () => undefined }, w);
    const a = host.request('search/results', { sessionId: 's', query: 'x' });
    const b = host.request('turn/detail', { sessionId: 's', turn: 0 });
    deliver(errorResponse(sent[1]!.id, 'turn/detail', 'gone'));
    deliver(response(sent[0]!.id, 'search/results', { turns: [4], truncated: false }));
    await expect(a).resolves.toEqual({ turns: [4], truncated: false });
    await expect(b).rejects.toThrow('gone');
  });
  it('drops an invalid message from the host and tells the host log', () => {
    const sent: { method: string }[] = [];
    const { w, deliver } = fakeWindow();
    const host = new Host({ postMessage: (m) => sent.push(m as { method: string }), getState: () => null, setState: () => undefined }, w);
    let called = 0;
    host.on('sessions/changed', () => called++);
    deliver({ kind: 'notification', method: 'sessions/changed', params: { sessions: [{ id: 1 }] } });
    expect(called).toBe(0);
    expect(host.dropped).toBe(1);
    expect(sent.at(-1)!.method).toBe('webview/log');
  });
});

describe('InspectorService', () => {
  function service() {
    const source = new SyntheticSource();
    source.add(new SyntheticSession('replay:s', 5, config));
    const posted: { kind: string; method: string; ok?: boolean; error?: string }[] = [];
    const logs: string[] = [];
    const actions: InspectorActions = {
      config: () => config,
      openStored: async () => undefined,
      compare: async () => undefined,
      copyHandle: async () => undefined,
      saveCaps: async () => ({}),
      log: (l, line) => logs.push(`${l}: ${line}`),
    };
    const s = new InspectorService([source], actions, (m) => posted.push(m as never));
    return { s, posted, logs, source };
  }
  it('posts nothing before ready, then the sessions first and the held notifications after', async () => {
    const { s, posted, source } = service();
    source.append('replay:s');
    s.notify('host/showSession', { sessionId: 'replay:s' });
    expect(posted).toEqual([]);
    await s.receive(command('webview/ready', {}));
    expect(posted.map((m) => m.method)).toEqual(['sessions/changed', 'session/turnsAppended', 'host/showSession']);
  });
  it('logs and drops an invalid message, never acting on it', async () => {
    const { s, posted, logs } = service();
    await s.receive({ kind: 'request', id: 1, method: 'session/open', params: {} });
    await s.receive({ kind: 'command', method: 'result/compare', params: { handle: 'x' } });
    expect(s.dropped).toBe(2);
    expect(posted).toEqual([]);
    expect(logs.join('\n')).toMatch(/dropped an invalid message from the webview: session\/open: sessionId/);
  });
  it('answers a failing request with an error response', async () => {
    const { s, posted } = service();
    await s.receive(request(7, 'session/open', { sessionId: 'replay:nope' }));
    expect(posted[0]).toMatchObject({ kind: 'response', method: 'session/open', ok: false, error: 'no session replay:nope' });
  });
  it('merges cap changes over the settings, `default` removing an override', () => {
    expect(mergeCaps({ bash: 100, grep: 5 }, { bash: 'unlimited', grep: 'default', sql: 9 })).toEqual({ bash: 'unlimited', sql: 9 });
  });
});

describe('session sources', () => {
  it('replays a transcript: details, both texts, search, and a dry run under other caps', async () => {
    // the files the agent cats are offloaded on arrival (the default keeps reads whole while in use), so some turn misses what a preview hid
    const config = parseConfig({ defaultCap: 1200, previewChars: 400, 'offload.keepReads': 0 }).config;
    const store = new MemoryStore();
    const t = await readTranscript(SHORT_SESSIONS['mini-swe-agent__deepseek_bench1__django__django-14752.traj.json']!);
    const source = new ReplaySource({ store: () => store, config: () => config });
    const s = source.add('/x/t.traj.json', t, replay(t, { config, store, detail: true }), 1, '2026-01-01T00:00:00Z');
    expect(source.list()[0]!.turns).toBe(31);
    const turns = s.turns();
    const k = turns.findIndex((x) => x.reductions > 0);
    const d = s.detail(k);
    const r = d.results[0]!;
    expect(s.text(r.handle, 'original', 0, 100_000).text).toBe(store.get(r.handle));
    expect(s.text(r.handle, 'projected', 0, 100_000).text).toContain(r.handle);
    expect(s.text(r.handle, 'original', 10, 5)).toMatchObject({ offset: 10, total: store.get(r.handle).length });
    expectSome(turns, (x) => x.missed > 0);
    const missedTurn = turns.find((x) => x.missed > 0)!;
    expectSome(s.detail(missedTurn.index).missed, (m) => m.handle);
    expect(s.search(store.get(r.handle).slice(0, 30), 100).turns).toContain(k);
    const dry = await s.dryRun({ ...config, defaultCap: 'unlimited' });
    expect(
      failing(dry, (x) => x.reductions === 0 || x.missed === 0),
      'elements that break the rule',
    ).toEqual([]);
    expect(dry.reduce((a, x) => a + x.projectedTokens, 0)).toBeGreaterThan(turns.reduce((a, x) => a + x.projectedTokens, 0));
  });

  it('remembers replayed transcripts, lists them after a reload and replays one when it is opened', async () => {
    let paths: string[] = [];
    const memory = { get: () => paths, set: (p: string[]) => void (paths = p) };
    const store = new MemoryStore();
    const file = SHORT_SESSIONS['SWE-agent__ctf_crypto_katy.traj']!;
    const t = await readTranscript(file);
    new ReplaySource({ store: () => store, config: () => config }, memory).add(file, t, replay(t, { config, store, detail: true }), 1, 'x');
    expect(paths).toEqual([file]);
    const after = new ReplaySource({ store: () => store, config: () => config }, memory);
    expect(after.list()).toMatchObject([{ id: `replay:${file}`, turns: 0 }]);
    const s = await after.open(`replay:${file}`);
    expect(s!.info.turns).toBe(18);
    expect(await after.open('replay:/not/remembered.jsonl')).toBeUndefined();
  });

  it('reads proxy recordings, takes a result from the recorded body when the store lacks it, and sees new turns', async () => {
    const dir = temp();
    const rec = new Recorder(dir);
    const engine = createEngine(config, { store: new MemoryStore() });
    const body = (n: number) =>
      JSON.stringify({
        model: 'm',
        messages: [
          { role: 'user', content: 'go' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: `c${n}`, type: 'function', function: { name: 'bash', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: `c${n}`, content: `output ${n}\n`.repeat(400) },
        ],
      });
    const record = async (n: number) => {
      const p = engine.project(body(n), 'openai-chat', { session: 's' });
      const turn: Turn = {
        v: 1,
        session: 'sess1',
        turn: n,
        time: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString(),
        path: '/v1/chat/completions',
        format: 'openai-chat',
        originalBytes: body(n).length,
        projectedBytes: String(p.request).length,
        originalTokens: p.stats.originalTokens,
        projectedTokens: p.stats.projectedTokens,
        reductions: p.reductions,
        stats: p.stats,
        usage: { cachedTokens: n > 1 ? 10 : 0 },
        status: 200,
        durationMs: 5,
        requestRef: await rec.putBody(Buffer.from(body(n))),
        projectionRef: await rec.putBody(Buffer.from(String(p.request))),
      };
      rec.append(turn);
    };
    await record(1);
    const source = new ProxySource({ store: () => new MemoryStore(), config: () => config }, () => dir, 60_000);
    try {
      expect(source.list().map((s) => [s.id, s.turns])).toEqual([['proxy:sess1', 1]]);
      const s = (await source.open('proxy:sess1'))!;
      const r = s.detail(0).results[0]!;
      expect(s.text(r.handle, 'original', 0, 100_000).text).toBe(`output 1\n`.repeat(400));
      expect(s.text(r.handle, 'projected', 0, 100_000).text).toContain(r.handle);
      const appended: number[] = [];
      source.onDidChange((e) => e.appended && appended.push(...e.appended.map((t) => t.index)));
      await record(2);
      source.refresh();
      expect(appended).toEqual([1]);
      expect(s.turns()[1]!.cacheStable).toBe(true);
      const dry = await s.dryRun({ ...config, toolCaps: { bash: 'unlimited' } });
      expect(dry.map((t) => t.reductions)).toEqual([0, 0]);
    } finally {
      source.dispose();
    }
  });

  it('makes a live session of API projections', () => {
    const source = new ApiSource({ store: () => new MemoryStore(), config: () => config });
    const engine = createEngine(config, { store: new MemoryStore() });
    const seen: string[] = [];
    source.onDidChange((e) => seen.push(e.appended ? 'appended' : 'list'));
    const req = {
      model: 'm',
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c', content: 'y'.repeat(5000) },
      ],
    };
    source.record('chat-1', req, engine.project(req, 'auto') as Projection);
    source.record('chat-1', req, engine.project(req, 'auto') as Projection);
    expect(source.list()).toMatchObject([{ id: 'api:chat-1', turns: 2, live: true }]);
    expect(seen).toEqual(['appended', 'list', 'appended']);
  });
});

describe('agent sessions', () => {
  it('finds Claude Code sessions under the folder name Claude Code derives from the cwd', () => {
    expect(claudeProjectNames('/home/me/my.project')).toEqual(['-home-me-my.project', '-home-me-my-project']);
  });
  it('lists the Claude Code and Codex sessions of a folder, newest first, and only those', () => {
    const home = temp();
    const cwd = '/work/proj';
    const cc = join(home, '.claude/projects/-work-proj');
    mkdirSync(cc, { recursive: true });
    writeFileSync(join(cc, 'a.jsonl'), '{}\n');
    writeFileSync(join(cc, 'notes.txt'), 'x');
    const cx = join(home, '.codex/sessions/2025/10/21');
    mkdirSync(cx, { recursive: true });
    const meta = (c: string) => JSON.stringify({ type: 'session_meta', payload: { id: 'x', cwd: c } }) + '\n';
    writeFileSync(join(cx, 'rollout-1.jsonl'), meta('/work/proj'));
    writeFileSync(join(cx, 'rollout-2.jsonl'), meta('/elsewhere'));
    writeFileSync(join(cx, 'other.jsonl'), meta('/work/proj'));
    utimesSync(join(cc, 'a.jsonl'), new Date('2025-01-01'), new Date('2025-01-01'));
    const found = agentSessions(home, cwd);
    expect(found.map((f) => [f.agent, f.file.slice(home.length)])).toEqual([
      ['codex', '/.codex/sessions/2025/10/21/rollout-1.jsonl'],
      ['claude-code', '/.claude/projects/-work-proj/a.jsonl'],
    ]);
    expect(found[0]!.bytes).toBe(readFileSync(join(cx, 'rollout-1.jsonl')).length);
  });
});

describe('the panel HTML', () => {
  it('has a strict CSP: scripts only with the nonce, no inline style, nothing else', () => {
    const csp = contentSecurityPolicy({ cspSource: 'https://x.vscode-cdn.net', nonce: 'abc' });
    expect(csp).toBe(
      "default-src 'none'; img-src https://x.vscode-cdn.net data:; style-src https://x.vscode-cdn.net 'nonce-abc'; font-src https://x.vscode-cdn.net; script-src 'nonce-abc'",
    );
    const html = inspectorHtml({
      cspSource: 'https://x',
      nonce: 'abc',
      scriptUri: 'https://x/dist/webview.js',
      styleUri: 'https://x/dist/webview.css',
    });
    expect(html).toContain('<script nonce="abc" src="https://x/dist/webview.js"></script>');
    expect(html).not.toMatch(/unsafe-(inline|eval)/);
  });
});
