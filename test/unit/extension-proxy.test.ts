/**
 * The extension's proxy, the parts without `vscode` (src/extension/proxyConfig.ts): its settings as
 * declared and as read back (bad values warned about and replaced by the default), when the proxy
 * restarts, which shell the agent environment is written for, the status bar and warning texts.
 * The proxy inside a real VS Code is test/vscode/proxy.test.ts.
 */
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from 'vitest';
import { contributes } from '../../src/extension/pure/contributes';
import { problemWarning, type InspectedValue } from '../../src/extension/pure/settings';
import {
  DEFAULT_PORT,
  PROXY_KEYS,
  displayUrl,
  proxyRunKey,
  proxyStatus,
  readProxySettings,
  shellKind,
  startFailureMessage,
  terminalDescription,
} from '../../src/extension/proxyConfig';
import { agentEnvironmentLines, DEFAULT_PROXY_PORT, startProxy } from '../../src/proxy';

const inspectOf =
  (values: Record<string, unknown>) =>
  (key: string): InspectedValue | undefined =>
    key in values ? { globalValue: values[key] } : undefined;

describe('spillway.proxy.* settings', () => {
  it('are declared in package.json with a description, a default and bounds', () => {
    const props = (contributes().configuration as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(props['spillway.proxy.enabled']).toMatchObject({ type: 'boolean', default: false });
    expect(props['spillway.proxy.port']).toMatchObject({ type: 'integer', default: 8417, minimum: 0, maximum: 65535 });
    expect(props['spillway.proxy.openaiUpstream']).toMatchObject({
      type: 'string',
      default: 'https://api.openai.com/v1',
      pattern: '^https?://',
    });
    expect(props['spillway.proxy.anthropicUpstream']).toMatchObject({ type: 'string', default: 'https://api.anthropic.com' });
    expect(props['spillway.proxy.configureTerminals']).toMatchObject({ type: 'boolean', default: true });
    expect(props['spillway.proxy.websockets']).toMatchObject({ type: 'string', default: 'project', enum: ['project', 'refuse'] });
    for (const k of PROXY_KEYS) {
      expect(String(props[`spillway.${k.key}`]?.markdownDescription).length, k.key).toBeGreaterThan(40);
      // the proxy settings do not follow the preset
      expect(String(props[`spillway.${k.key}`]?.markdownDescription)).not.toContain('spillway.preset');
    }
    expect(DEFAULT_PORT).toBe(DEFAULT_PROXY_PORT);
    const cmd = (contributes().commands as { command: string; title: string; category: string }[]).find(
      (c) => c.command === 'spillway.copyAgentEnvironment',
    );
    expect(cmd).toMatchObject({ title: 'Copy Agent Environment', category: 'Spillway' });
  });

  it('read back as their defaults when nothing is set', () => {
    const r = readProxySettings(() => undefined);
    expect(r.problems).toEqual([]);
    expect(r.settings).toEqual({
      enabled: false,
      port: 8417,
      openaiUpstream: 'https://api.openai.com/v1',
      anthropicUpstream: 'https://api.anthropic.com',
      geminiUpstream: 'https://generativelanguage.googleapis.com',
      configureTerminals: true,
      websockets: 'project',
      mode: 'project',
      answerReads: false,
    });
  });

  it('take valid values, the innermost scope winning', () => {
    const r = readProxySettings(
      (key) =>
        (
          ({
            'proxy.enabled': { globalValue: false, workspaceValue: true },
            'proxy.port': { globalValue: 8000, workspaceFolderValue: 9000 },
            'proxy.openaiUpstream': { globalValue: ' http://127.0.0.1:1234/openai/v1 ' },
            'proxy.anthropicUpstream': { globalValue: 'https://gw.example/anthropic' },
            'proxy.geminiUpstream': { globalValue: 'https://gw.example/google' },
            'proxy.configureTerminals': { globalValue: false },
            'proxy.websockets': { globalValue: 'project', workspaceValue: 'refuse' },
            'proxy.mode': { globalValue: 'project', workspaceValue: 'observe' },
            'proxy.answerReads': { globalValue: true },
          }) as Record<string, InspectedValue>
        )[key],
    );
    expect(r.problems).toEqual([]);
    expect(r.settings).toEqual({
      enabled: true,
      port: 9000,
      openaiUpstream: 'http://127.0.0.1:1234/openai/v1',
      anthropicUpstream: 'https://gw.example/anthropic',
      geminiUpstream: 'https://gw.example/google',
      configureTerminals: false,
      websockets: 'refuse',
      mode: 'observe',
      answerReads: true,
    });
    expect(readProxySettings(inspectOf({ 'proxy.port': 0 })).settings.port).toBe(0);
  });

  it('fall back to the default with a warning naming the setting when a value is bad', () => {
    const r = readProxySettings(
      inspectOf({
        'proxy.enabled': 'yes',
        'proxy.port': 70000,
        'proxy.openaiUpstream': 'ftp://example.com',
        'proxy.anthropicUpstream': 'https://user:sk-secret@gw.example',
        'proxy.configureTerminals': 1,
        'proxy.websockets': 'off',
      }),
    );
    expect(r.settings).toEqual(readProxySettings(() => undefined).settings);
    expect(r.problems.map((p) => p.setting)).toEqual([
      'spillway.proxy.enabled',
      'spillway.proxy.port',
      'spillway.proxy.openaiUpstream',
      'spillway.proxy.anthropicUpstream',
      'spillway.proxy.configureTerminals',
      'spillway.proxy.websockets',
    ]);
    expect(r.problems[5]!.message).toBe('expected "project" or "refuse", got "off"');
    const warnings = r.problems.map(problemWarning);
    expect(warnings[1]).toBe(
      'Spillway: the setting spillway.proxy.port is invalid (expected a port from 0 to 65535, got 70000), so it falls back to its default.',
    );
    expect(warnings[2]).toMatch(/spillway\.proxy\.openaiUpstream is invalid \(the OpenAI upstream must be an http or https URL/);
    expect(warnings[3]).toMatch(/must not carry credentials/);
    // the warning never repeats a credential it refused
    expect(warnings.join('\n')).not.toContain('sk-secret');
    for (const bad of [1.5, -1, '8417', null]) {
      expect(readProxySettings(inspectOf({ 'proxy.port': bad })).problems, String(bad)).toHaveLength(1);
    }
    expect(readProxySettings(inspectOf({ 'proxy.openaiUpstream': 'not a url' })).problems[0]!.message).toMatch(/absolute http\(s\) URL/);
  });
});

describe('where API keys go is a user setting', () => {
  it("declares the upstreams machine-scoped, so a folder's settings cannot set them", () => {
    const props = (contributes().configuration as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(props['spillway.proxy.openaiUpstream']!.scope).toBe('machine');
    expect(props['spillway.proxy.anthropicUpstream']!.scope).toBe('machine');
    expect(props['spillway.proxy.geminiUpstream']!.scope).toBe('machine');
    expect(props['spillway.proxy.enabled']!.scope).toBeUndefined();
  });

  it("ignores a workspace value of an upstream with a warning, keeping the user's", () => {
    const r = readProxySettings(
      (key) =>
        (
          ({
            'proxy.openaiUpstream': { globalValue: 'https://gw.example/v1', workspaceValue: 'http://attacker.example/v1' },
            'proxy.anthropicUpstream': { workspaceFolderValue: 'http://attacker.example' },
            'proxy.port': { workspaceValue: 9001 },
          }) as Record<string, InspectedValue>
        )[key],
    );
    expect(r.settings.openaiUpstream).toBe('https://gw.example/v1');
    expect(r.settings.anthropicUpstream).toBe('https://api.anthropic.com');
    expect(r.settings.port).toBe(9001);
    expect(r.problems).toEqual([]);
    expect(r.ignored).toHaveLength(2);
    expect(r.ignored[0]).toMatch(
      /spillway\.proxy\.openaiUpstream is set in this workspace's settings.*ignored \(set it in your user settings\)/,
    );
    expect(r.ignored.join('\n')).not.toContain('attacker');
  });
});

describe('when the proxy restarts', () => {
  const base = readProxySettings(() => undefined).settings;
  it('runs only when enabled, and restarts when the port, an upstream or the recordings folder changes', () => {
    expect(proxyRunKey(base, '/s')).toBeUndefined();
    const on = { ...base, enabled: true };
    const key = proxyRunKey(on, '/s');
    expect(key).toBeDefined();
    expect(proxyRunKey({ ...on, configureTerminals: false }, '/s')).toBe(key);
    expect(proxyRunKey({ ...on, port: 9000 }, '/s')).not.toBe(key);
    expect(proxyRunKey({ ...on, openaiUpstream: 'http://x/v1' }, '/s')).not.toBe(key);
    expect(proxyRunKey({ ...on, anthropicUpstream: 'http://x' }, '/s')).not.toBe(key);
    expect(proxyRunKey(on, '/other')).not.toBe(key);
  });
});

describe('the shell the agent environment is written for', () => {
  it('follows the terminal profile, then the platform', () => {
    expect(shellKind('/bin/bash', 'linux')).toBe('posix');
    expect(shellKind('/usr/bin/zsh', 'darwin')).toBe('posix');
    expect(shellKind('/opt/homebrew/bin/fish', 'darwin')).toBe('fish');
    expect(shellKind('C:\\Program Files\\PowerShell\\7\\pwsh.exe', 'win32')).toBe('powershell');
    expect(shellKind('C:\\WINDOWS\\System32\\WindowsPowerShell\\v1.0\\powershell.exe', 'win32')).toBe('powershell');
    expect(shellKind('/usr/local/bin/pwsh', 'linux')).toBe('powershell');
    expect(shellKind('C:\\WINDOWS\\System32\\cmd.exe', 'win32')).toBe('cmd');
    expect(shellKind('C:\\Program Files\\Git\\bin\\bash.exe', 'win32')).toBe('posix');
    expect(shellKind('', 'win32')).toBe('powershell');
    expect(shellKind(undefined, 'linux')).toBe('posix');
  });

  it("gets the three variables in that shell's syntax", () => {
    const url = 'http://127.0.0.1:8417';
    expect(agentEnvironmentLines(url, shellKind('/bin/zsh', 'darwin'))).toEqual([
      'export OPENAI_BASE_URL=http://127.0.0.1:8417/v1',
      'export OPENAI_API_BASE=http://127.0.0.1:8417/v1',
      'export ANTHROPIC_BASE_URL=http://127.0.0.1:8417',
    ]);
    expect(agentEnvironmentLines(url, shellKind('fish', 'linux'))[2]).toBe('set -gx ANTHROPIC_BASE_URL http://127.0.0.1:8417');
    expect(agentEnvironmentLines(url, shellKind('pwsh.exe', 'win32'))[0]).toBe('$env:OPENAI_BASE_URL = "http://127.0.0.1:8417/v1"');
  });
});

describe('the status bar and the warnings', () => {
  const state = {
    wantedPort: 8417,
    turns: 0,
    sessions: 0,
    savedTokens: 0,
    openaiUpstream: 'https://api.openai.com/v1',
    anthropicUpstream: 'https://gw.example/a?key=sk-hidden',
  };

  it('names the port, the URL, the turns recorded and the click', () => {
    const s = proxyStatus({ ...state, url: 'http://127.0.0.1:8417', port: 8417, turns: 3, sessions: 1, savedTokens: 12345 });
    expect(s.text).toBe('$(radio-tower) Spillway proxy :8417');
    expect(s.tooltip).toContain('Spillway proxy at http://127.0.0.1:8417');
    expect(s.tooltip).toContain('3 turns recorded in this window (1 session), 12,345 tokens kept out of model calls');
    expect(s.tooltip).toContain('Click to copy the agent environment');
    // an upstream's query string (a gateway key) is not shown
    expect(s.tooltip).toContain('Anthropic upstream: https://gw.example/a');
    expect(s.tooltip).not.toContain('sk-hidden');
    expect(proxyStatus({ ...state, url: 'http://127.0.0.1:9', port: 9, turns: 1, sessions: 1 }).tooltip).toContain('1 turn recorded');
  });

  it('says when the enabled proxy is not running, and why', () => {
    const s = proxyStatus({ ...state, failure: 'port 8417 on 127.0.0.1 is already in use; pick another port' });
    expect(s.text).toBe('$(warning) Spillway proxy :8417 not running');
    expect(s.tooltip).toContain('already in use');
  });

  it('turns a taken port into a warning with the port and what to do', () => {
    const m = startFailureMessage(8417, 'port 8417 on 127.0.0.1 is already in use; pick another port');
    expect(m).toMatch(/port 8417 on 127\.0\.0\.1 is already in use/);
    expect(m).toMatch(/Set spillway\.proxy\.port to a free port, or to 0/);
    expect(startFailureMessage(80, 'not allowed to listen on port 80 on 127.0.0.1')).toMatch(/above 1024/);
    expect(startFailureMessage(1, 'boom')).toBe('Spillway: the proxy could not start on port 1: boom');
    expect(terminalDescription('http://127.0.0.1:1')).toMatch(/OPENAI_BASE_URL.*ANTHROPIC_BASE_URL/);
  });

  it('recognises what the proxy reports for a port that is really taken', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const error = await startProxy({ port, sessionsDir: false }).then(
        () => 'started',
        (e: Error) => e.message,
      );
      expect(startFailureMessage(port, error)).toContain(`port ${port} on 127.0.0.1 is already in use`);
      expect(startFailureMessage(port, error)).toContain('spillway.proxy.port');
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it('shows upstreams as origin and path only', () => {
    expect(displayUrl('https://api.openai.com/v1')).toBe('https://api.openai.com/v1');
    expect(displayUrl('https://api.anthropic.com')).toBe('https://api.anthropic.com');
    expect(displayUrl('https://gw.example/openai/v1?api-key=sk-x')).toBe('https://gw.example/openai/v1');
    expect(displayUrl('nope')).toBe('(invalid URL)');
  });
});
