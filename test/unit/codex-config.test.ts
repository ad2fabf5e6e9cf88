/**
 * The Codex config editor behind Spillway: Route Codex Through Spillway (and test/agents): one line
 * added, replaced or removed; every other byte of the user's file kept; broken files refused.
 */
import { describe, expect, test } from 'vitest';
import { parse } from 'smol-toml';
import {
  addCodexBaseUrl,
  addCodexChatgptRoute,
  addCodexMcpServer,
  codexAuthMode,
  codexAuthPath,
  codexProviderBlock,
  codexProviderLine,
  removeCodexChatgptRoute,
  spillwayCodexProviderUrl,
  codexBaseUrl,
  codexCommandArgs,
  codexConfigPath,
  codexLine,
  CodexConfigError,
  removeCodexBaseUrl,
  removeCodexMcpServer,
  spillwayCodexBaseUrl,
} from '../../src/proxy/codexConfig';

const URL_A = 'http://127.0.0.1:8417/v1';
const URL_B = 'http://127.0.0.1:9000/v1';

/** A config.toml like the ones Codex users keep: comments, top-level keys, tables, a multi-line array and string. */
const REAL = [
  '# Codex settings',
  'model = "gpt-5.2-codex"',
  'approval_policy = "on-request"',
  'notify = [',
  '  "notify-send",',
  '  ["nested"],',
  ']',
  'instructions = """',
  '[not a table]',
  'line two"""',
  '',
  '# MCP servers',
  '[mcp_servers.docs]',
  'command = "npx"',
  'args = ["-y", "docs-mcp"]',
  '',
  '[profiles.fast]',
  'model = "gpt-5-mini"',
  '',
].join('\n');

describe('adding the line', () => {
  test('goes right after the last top-level key (past a multi-line string), before the first table, the rest byte-identical', () => {
    const r = addCodexBaseUrl(REAL, URL_A);
    expect(r.changed).toBe(true);
    const at = REAL.indexOf('line two"""\n') + 'line two"""\n'.length;
    expect(r.text).toBe(REAL.slice(0, at) + codexLine(URL_A) + '\n' + REAL.slice(at));
    const parsed = parse(r.text) as Record<string, any>;
    expect(parsed.openai_base_url).toBe(URL_A);
    expect(parsed.mcp_servers.docs.openai_base_url).toBeUndefined();
  });

  test('an empty file gets just the line', () => {
    expect(addCodexBaseUrl('', URL_A).text).toBe(codexLine(URL_A) + '\n');
  });

  test('a file of tables only gets the line at the top, where a top-level key must be', () => {
    const text = '[mcp_servers.x]\ncommand = "x"\n';
    expect(addCodexBaseUrl(text, URL_A).text).toBe(codexLine(URL_A) + '\n' + text);
  });

  test('a last line without a newline is not joined to the new line', () => {
    const text = 'model = "o3"';
    const out = addCodexBaseUrl(text, URL_A).text;
    expect(out).toBe(codexLine(URL_A) + '\n' + text);
    expect(parse(out)).toEqual({ openai_base_url: URL_A, model: 'o3' });
  });

  test('CRLF files get a CRLF line', () => {
    const text = 'model = "o3"\r\n\r\n[tools]\r\nweb_search = true\r\n';
    const out = addCodexBaseUrl(text, URL_A).text;
    expect(out).toBe('model = "o3"\r\n' + codexLine(URL_A) + '\r\n\r\n[tools]\r\nweb_search = true\r\n');
    expect(removeCodexBaseUrl(out).text).toBe(text);
  });

  test("Spillway's earlier line is replaced in place (a new port), nothing else moves", () => {
    const once = addCodexBaseUrl(REAL, URL_A).text;
    const twice = addCodexBaseUrl(once, URL_B);
    expect(twice.text).toBe(once.replace(URL_A, URL_B));
    expect(spillwayCodexBaseUrl(twice.text)).toBe(URL_B);
    expect(addCodexBaseUrl(twice.text, URL_B).changed).toBe(false);
  });

  test("a user's own openai_base_url is never overwritten", () => {
    const text = 'openai_base_url = "https://gateway.example/v1"\n';
    expect(() => addCodexBaseUrl(text, URL_A)).toThrow(/already sets openai_base_url = "https:\/\/gateway.example\/v1" itself/);
  });

  test('a provider other than openai is named in a warning', () => {
    expect(addCodexBaseUrl('model_provider = "ollama"\n', URL_A).warnings.join()).toMatch(/model_provider = "ollama"/);
  });

  test('a file that is not TOML is reported and not rewritten', () => {
    const broken = 'model = "o3\n[tables\n';
    let err: unknown;
    try {
      addCodexBaseUrl(broken, URL_A, '/h/.codex/config.toml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CodexConfigError);
    expect((err as CodexConfigError).reason).toBe('invalid-toml');
    expect((err as Error).message).toMatch(/^\/h\/\.codex\/config\.toml is not valid TOML .*left unchanged$/);
    expect(() => removeCodexBaseUrl(broken)).toThrow(CodexConfigError);
  });
});

describe('removing the line', () => {
  test('add then remove gives back the exact bytes', () => {
    for (const text of [REAL, '', 'model = "o3"', '[a]\nb = 1\n', '\uFEFFmodel = "o3"\n', 'a = 1\r\n[b]\r\nc = 2']) {
      expect(removeCodexBaseUrl(addCodexBaseUrl(text, URL_A).text).text).toBe(text);
    }
  });

  test("only Spillway's marked line goes: a user's own line, and a look-alike inside a string, stay", () => {
    const user = 'openai_base_url = "https://gateway.example/v1"\n';
    expect(removeCodexBaseUrl(user)).toEqual({ text: user, changed: false, warnings: [] });
    const inString = `notes = """\n${codexLine(URL_A)}\n"""\n`;
    expect(removeCodexBaseUrl(inString).changed).toBe(false);
  });

  test('a file without the line is unchanged', () => {
    expect(removeCodexBaseUrl(REAL)).toEqual({ text: REAL, changed: false, warnings: [] });
  });
});

test('the command-line way and the paths', () => {
  expect(codexBaseUrl('http://127.0.0.1:8417/')).toBe(URL_A);
  expect(codexCommandArgs(URL_A)).toEqual(['-c', `openai_base_url="${URL_A}"`]);
  expect(codexConfigPath({ CODEX_HOME: '/x/ch' }, '/home/u')).toBe('/x/ch/config.toml');
  expect(codexConfigPath({}, '/home/u')).toBe('/home/u/.codex/config.toml');
});

describe("Spillway's MCP server table", () => {
  const launch = { command: 'spillway', args: ['mcp', '--store', '/home/me/.spillway/store'] };

  test('goes at the end as [mcp_servers.spillway], allowed once, the rest byte-identical', () => {
    const r = addCodexMcpServer(REAL, launch);
    expect(r.text.startsWith(REAL)).toBe(true);
    const parsed = parse(r.text) as Record<string, any>;
    expect(parsed.mcp_servers.spillway).toEqual({ ...launch, default_tools_approval_mode: 'approve' });
    expect(parsed.mcp_servers.docs).toEqual({ command: 'npx', args: ['-y', 'docs-mcp'] });
  });

  test('comes back byte for byte when removed, also next to the route line', () => {
    const both = addCodexBaseUrl(addCodexMcpServer(REAL, launch).text, URL_A).text;
    expect(removeCodexBaseUrl(removeCodexMcpServer(both).text).text).toBe(REAL);
  });

  test('is replaced, not repeated, when added again with a new store', () => {
    const once = addCodexMcpServer(REAL, launch).text;
    const again = addCodexMcpServer(once, { ...launch, args: ['mcp', '--store', '/elsewhere'] }).text;
    expect((parse(again) as Record<string, any>).mcp_servers.spillway.args).toEqual(['mcp', '--store', '/elsewhere']);
    expect(removeCodexMcpServer(again).text).toBe(REAL);
  });

  test('carries the launch environment as its own table', () => {
    const r = addCodexMcpServer('', { ...launch, env: { ELECTRON_RUN_AS_NODE: '1' } });
    expect((parse(r.text) as Record<string, any>).mcp_servers.spillway.env).toEqual({ ELECTRON_RUN_AS_NODE: '1' });
  });

  test('refuses a [mcp_servers.spillway] the user wrote, and never removes it', () => {
    const theirs = '[mcp_servers.spillway]\ncommand = "mine"\n';
    expect(() => addCodexMcpServer(theirs, launch)).toThrow(CodexConfigError);
    expect(removeCodexMcpServer(theirs).changed).toBe(false);
  });

  test('refuses a file that is not TOML', () => {
    expect(() => addCodexMcpServer('model = ', launch)).toThrow(/not valid TOML/);
  });
});

describe('Codex signed in with ChatGPT: how the sign-in is read', () => {
  const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJ0b2tlbiI6InNlY3JldCJ9.c2ln';
  test('the mode in auth.json decides: chatgpt and chatgptAuthTokens are ChatGPT, apikey is an API key', () => {
    expect(codexAuthMode(JSON.stringify({ auth_mode: 'chatgpt', tokens: { access_token: jwt } }))).toBe('chatgpt');
    expect(codexAuthMode(JSON.stringify({ auth_mode: 'chatgptAuthTokens' }))).toBe('chatgpt');
    expect(codexAuthMode(JSON.stringify({ auth_mode: 'apikey', OPENAI_API_KEY: 'sk-x' }))).toBe('apikey');
    expect(codexAuthMode(JSON.stringify({ auth_mode: 'agentIdentity' }))).toEqual({ other: 'agentIdentity' });
  });

  test('a file without a mode is read as Codex reads it: an API key, else tokens mean ChatGPT', () => {
    expect(codexAuthMode(JSON.stringify({ OPENAI_API_KEY: 'sk-x', tokens: null }))).toBe('apikey');
    expect(codexAuthMode(JSON.stringify({ OPENAI_API_KEY: null, tokens: { id_token: jwt } }))).toBe('chatgpt');
    expect(codexAuthMode(JSON.stringify({ personal_access_token: 'p' }))).toEqual({ other: 'personalAccessToken' });
    expect(codexAuthMode(JSON.stringify({}))).toBe('none');
    expect(codexAuthMode(undefined)).toBe('none');
  });

  test('an auth.json that is not a JSON object is an error that quotes nothing of the file', () => {
    for (const bad of [`{"auth_mode":"chatgpt","tokens":{"access_token":"${jwt}"`, '[1]', '"chatgpt"']) {
      let err: unknown;
      try {
        codexAuthMode(bad);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(CodexConfigError);
      expect((err as CodexConfigError).reason).toBe('auth-file');
      expect((err as Error).message).not.toContain(jwt);
    }
  });

  test('auth.json lives in CODEX_HOME, else ~/.codex', () => {
    expect(codexAuthPath({ CODEX_HOME: '/x/codex' }, '/home/u')).toBe('/x/codex/auth.json');
    expect(codexAuthPath({}, '/home/u')).toBe('/home/u/.codex/auth.json');
  });
});

describe('Codex signed in with ChatGPT: the model provider Spillway writes', () => {
  const PROXY = 'http://127.0.0.1:8417';

  test('adds model_provider above the first table and the provider block at the end, every other byte kept', () => {
    const { text, changed } = addCodexChatgptRoute(REAL, PROXY);
    expect(changed).toBe(true);
    const line = codexProviderLine();
    expect(text).toBe(
      REAL.replace('line two"""\n', `line two"""\n${line}\n`) + codexProviderBlock('http://127.0.0.1:8417/backend-api/codex'),
    );
    const parsed = parse(text) as Record<string, any>;
    expect(parsed.model_provider).toBe('spillway');
    expect(parsed.model_providers.spillway).toEqual({
      name: 'Spillway',
      base_url: 'http://127.0.0.1:8417/backend-api/codex',
      wire_api: 'responses',
      requires_openai_auth: true,
      supports_websockets: true,
    });
    expect(spillwayCodexProviderUrl(text)).toBe('http://127.0.0.1:8417/backend-api/codex');
  });

  test('the exact entries, for the docs', () => {
    expect(codexProviderLine()).toBe(
      'model_provider = "spillway" # added by Spillway (Spillway: Stop Routing Codex Through Spillway removes it)',
    );
    expect(codexProviderBlock('http://127.0.0.1:8417/backend-api/codex')).toBe(
      [
        "# Spillway's model provider, added by Spillway (Spillway: Stop Routing Codex Through Spillway removes it)",
        '[model_providers.spillway]',
        'name = "Spillway"',
        'base_url = "http://127.0.0.1:8417/backend-api/codex"',
        'wire_api = "responses"',
        'requires_openai_auth = true',
        'supports_websockets = true',
        "# end of Spillway's model provider",
        '',
      ].join('\n'),
    );
  });

  test('routing again on another port moves only the base URL; routing again on the same port changes nothing', () => {
    const a = addCodexChatgptRoute(REAL, PROXY).text;
    const b = addCodexChatgptRoute(a, 'http://127.0.0.1:9000');
    expect(b.text).toBe(a.replace('127.0.0.1:8417', '127.0.0.1:9000'));
    expect(addCodexChatgptRoute(b.text, 'http://127.0.0.1:9000').changed).toBe(false);
  });

  test("switching from the API-key route removes Spillway's openai_base_url line, and removing restores the file", () => {
    const keyed = addCodexBaseUrl(REAL, URL_A).text;
    const chatgpt = addCodexChatgptRoute(keyed, PROXY).text;
    expect(spillwayCodexBaseUrl(chatgpt)).toBeUndefined();
    expect(removeCodexChatgptRoute(chatgpt).text).toBe(REAL);
  });

  test('CRLF files and files without a final newline get the same entries with their own line endings', () => {
    const crlf = REAL.replace(/\n/g, '\r\n');
    const out = addCodexChatgptRoute(crlf, PROXY).text;
    expect(out.replace(/\r\n/g, '')).not.toContain('\n');
    expect(removeCodexChatgptRoute(out).text).toBe(crlf);
    const bare = 'model = "o3"';
    const added = addCodexChatgptRoute(bare, PROXY).text;
    expect((parse(added) as Record<string, any>).model).toBe('o3');
    expect(removeCodexChatgptRoute(added).text).toBe('model = "o3"\n');
  });

  test("a model_provider or [model_providers.spillway] of the user's own is left alone, and nothing is written", () => {
    for (const own of ['model_provider = "openai"\n', '[model_providers.spillway]\nname = "mine"\nbase_url = "http://x"\n']) {
      let err: unknown;
      try {
        addCodexChatgptRoute(own + REAL.replace(/^# Codex settings\n/, ''), PROXY);
      } catch (e) {
        err = e;
      }
      expect((err as CodexConfigError).reason).toBe('user-value');
    }
    // and removing touches only what Spillway wrote
    const theirs = 'model_provider = "azure"\n[model_providers.azure]\nbase_url = "https://a"\n';
    expect(removeCodexChatgptRoute(theirs)).toEqual({ text: theirs, changed: false, warnings: [] });
  });

  test('a file that is not TOML is refused, never rewritten', () => {
    expect(() => addCodexChatgptRoute('model = "unterminated\n', PROXY)).toThrow(/not valid TOML/);
  });

  test('the MCP server table and the provider block live side by side, each removed on its own', () => {
    const launch = { command: '/usr/bin/node', args: ['/x/cli.js', 'mcp', '--store', '/s'] };
    const both = addCodexMcpServer(addCodexChatgptRoute(REAL, PROXY).text, launch).text;
    const parsed = parse(both) as Record<string, any>;
    expect(parsed.mcp_servers.spillway.command).toBe('/usr/bin/node');
    expect(parsed.model_providers.spillway.base_url).toBe('http://127.0.0.1:8417/backend-api/codex');
    expect(removeCodexMcpServer(removeCodexChatgptRoute(both).text).text).toBe(REAL);
  });
});
