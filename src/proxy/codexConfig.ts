/**
 * Points Codex at the proxy through its own config file, the route current Codex actually reads.
 *
 * Codex takes its endpoint from `openai_base_url` in `$CODEX_HOME/config.toml` (default `~/.codex`),
 * or from `-c openai_base_url="…"` on its command line; it ignores `OPENAI_BASE_URL`. Spillway: Route
 * Codex Through Spillway and the real-agent suite both write the file with this module, so what the
 * tests prove is what the command does.
 *
 * The edit is textual and minimal, never a re-serialisation: one line is added (or Spillway's own line
 * replaced, or removed) and every other byte of the user's file stays as it was. The line carries a
 * marker comment, so removal touches only a line Spillway wrote, never a user's own `openai_base_url`.
 * A top-level key must come before the first `[table]` header; a small scanner that knows TOML's
 * strings, comments and multi-line arrays finds that place. Every result is checked with a real TOML
 * parser (smol-toml): the file before must parse (a broken file is reported, never rewritten), and
 * the file after must parse to the same values plus, or minus, the one key.
 *
 * No `vscode` import: the extension, the CLI text and test/agents use it alike.
 */
import { parse } from 'smol-toml';
import { z } from 'zod';
import { isDeepStrictEqual } from 'node:util';
import { homedir } from 'node:os';
import { join } from 'node:path';

const CODEX_KEY = 'openai_base_url';
/** The comment that marks the line as Spillway's: only a line ending with it is ever replaced or removed. */
const SPILLWAY_MARK = '# added by Spillway (Spillway: Stop Routing Codex Through Spillway removes it)';

/** Why an edit was not made; the file is left untouched. */
export class CodexConfigError extends Error {
  constructor(
    message: string,
    readonly reason: 'invalid-toml' | 'user-value' | 'check-failed' | 'auth-file',
  ) {
    super(message);
    this.name = 'CodexConfigError';
  }
}

/** `$CODEX_HOME`, else `~/.codex`. */
function codexHome(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  const h = env.CODEX_HOME;
  return h !== undefined && h !== '' ? h : join(home, '.codex');
}

export function codexConfigPath(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return join(codexHome(env, home), 'config.toml');
}

/** The base URL Codex gets for a proxy at `proxyUrl` (OpenAI-style: with `/v1`). */
export function codexBaseUrl(proxyUrl: string): string {
  return `${proxyUrl.replace(/\/+$/, '')}/v1`;
}

/** The exact line Spillway adds (without its line ending). */
export function codexLine(baseUrl: string): string {
  return `${CODEX_KEY} = ${JSON.stringify(baseUrl)} ${SPILLWAY_MARK}`;
}

/** The command-line way: `codex -c openai_base_url="…"` (a TOML string as the value). */
export function codexCommandArgs(baseUrl: string): string[] {
  return ['-c', `${CODEX_KEY}=${JSON.stringify(baseUrl)}`];
}

function parseToml(text: string, what: string): Record<string, unknown> {
  try {
    return parse(text) as Record<string, unknown>;
  } catch (e) {
    const first = String((e as Error).message ?? e).split('\n')[0];
    throw new CodexConfigError(`${what} is not valid TOML (${first}); it was left unchanged`, 'invalid-toml');
  }
}

interface Layout {
  /** offset of the first `[table]` / `[[array]]` header line, or the text length */
  firstHeader: number;
  /** offset just after the newline that ends the last top-level key/value before the first header (0 if none) */
  afterLastKey: number;
  /** [start, end) of every top-level line (outside strings and multi-line values) before the first header, end including its line ending */
  lines: Array<[number, number]>;
}

/**
 * Scans TOML text for where the top-level section ends. Knows basic and literal strings (single and
 * triple quoted), comments, and brackets inside values, so a `[` that starts a line inside a
 * multi-line array or string is not taken for a table header.
 */
function layout(text: string): Layout {
  const lines: Array<[number, number]> = [];
  let i = 0;
  let depth = 0; // brackets/braces open inside a value
  let lineStart = 0;
  let lineIsTop = true; // the current line began outside any string or value
  let lineHasKey = false;
  let afterLastKey = 0;
  const n = text.length;
  const endLine = (end: number) => {
    if (lineIsTop) lines.push([lineStart, end]);
    if (lineHasKey && depth === 0) afterLastKey = end;
    lineStart = end;
    lineIsTop = depth === 0;
    lineHasKey = lineHasKey && depth > 0;
  };
  while (i < n) {
    const c = text[i]!;
    if (c === '\n') {
      i += 1;
      endLine(i);
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\r') {
      i += 1;
      continue;
    }
    if (c === '#') {
      while (i < n && text[i] !== '\n') i += 1;
      continue;
    }
    if (depth === 0 && c === '[' && lineIsTop && text.slice(lineStart, i).trim() === '' && !lineHasKey) {
      return { firstHeader: lineStart, afterLastKey, lines };
    }
    if (c === '"' || c === "'") {
      const triple = text.startsWith(c.repeat(3), i);
      if (triple) {
        const close = c.repeat(3);
        let j = i + 3;
        for (;;) {
          const k = text.indexOf(close, j);
          if (k < 0) {
            j = n;
            break;
          }
          if (c === '"') {
            let bs = 0;
            for (let b = k - 1; b >= i + 3 && text[b] === '\\'; b--) bs++;
            if (bs % 2 === 1) {
              j = k + 1;
              continue;
            }
          }
          j = k + 3;
          while (text[j] === c) j++; // up to two quotes may end the content
          break;
        }
        // newlines inside the string: the lines they start are not top-level lines
        for (let k = text.indexOf('\n', i); k >= 0 && k < j; k = text.indexOf('\n', k + 1)) {
          lineStart = k + 1;
          lineIsTop = false;
        }
        i = j;
      } else {
        let j = i + 1;
        while (j < n && text[j] !== c && text[j] !== '\n') j += c === '"' && text[j] === '\\' ? 2 : 1;
        i = j + 1;
      }
      lineHasKey = true;
      continue;
    }
    if (c === '[' || c === '{') depth += 1;
    else if ((c === ']' || c === '}') && depth > 0) depth -= 1;
    lineHasKey = true;
    i += 1;
  }
  if (lineStart < n) endLine(n);
  return { firstHeader: n, afterLastKey, lines };
}

const escapeRe = (t: string) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ourLine = (key: string) => new RegExp(`^${key}\\s*=\\s*"[^"\\\\]*"\\s*${escapeRe(SPILLWAY_MARK)}\\s*$`);

/** The top-level `key = "…"` lines Spillway wrote, as [start, end) ranges including their line endings. */
function ourLines(text: string, key = CODEX_KEY): Array<[number, number]> {
  const { lines } = layout(text);
  const re = ourLine(key);
  return lines.filter(([s, e]) => re.test(text.slice(s, e).replace(/\r?\n$/, '')));
}

function withoutKey(obj: Record<string, unknown>, key = CODEX_KEY): Record<string, unknown> {
  const rest = { ...obj };
  delete rest[key];
  return rest;
}

export interface CodexEdit {
  /** the new text of the file */
  text: string;
  /** whether the text changed */
  changed: boolean;
  /** things the user should know (e.g. a `model_provider` that bypasses `openai_base_url`) */
  warnings: string[];
}

/**
 * Sets `openai_base_url` to `baseUrl` with Spillway's line: replaces Spillway's earlier line, or adds
 * one after the last top-level key (before the first table). Throws CodexConfigError, leaving the
 * text alone, when the text is not TOML, when the user set `openai_base_url` themselves, or when the
 * result would not parse to exactly the old values plus the key.
 */
export function addCodexBaseUrl(text: string, baseUrl: string, what = 'config.toml'): CodexEdit {
  const before = parseToml(text, what);
  const warnings: string[] = [];
  const provider = before.model_provider;
  if (typeof provider === 'string' && provider !== 'openai') {
    warnings.push(
      `${what} sets model_provider = ${JSON.stringify(provider)}: Codex uses openai_base_url only for the built-in "openai" provider`,
    );
  }
  const out = withOurLine(text, before, CODEX_KEY, codexLine(baseUrl), what);
  const after = parseToml(out, `${what} as Spillway would write it`);
  if (after[CODEX_KEY] !== baseUrl || !isDeepStrictEqual(withoutKey(after), withoutKey(before))) {
    throw new CodexConfigError(`${what}: adding ${CODEX_KEY} would change other settings; the file was left unchanged`, 'check-failed');
  }
  return { text: out, changed: out !== text, warnings };
}

/**
 * `text` with Spillway's top-level `key` line set to `line`: Spillway's earlier line replaced, or the
 * line added after the last top-level key (before the first table). A key the user set themselves
 * is theirs: CodexConfigError.
 */
function withOurLine(text: string, before: Record<string, unknown>, key: string, line: string, what: string): string {
  const ours = ourLines(text, key);
  if (ours.length > 0) {
    const [s, e] = ours[0]!;
    const ending = text.slice(s, e).match(/\r?\n$/)?.[0] ?? '';
    return text.slice(0, s) + line + ending + text.slice(e);
  }
  if (key in before) {
    throw new CodexConfigError(
      `${what} already sets ${key} = ${JSON.stringify(before[key])} itself; Spillway leaves your own line alone (remove it to let Spillway route Codex)`,
      'user-value',
    );
  }
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const bom = text.startsWith('\uFEFF') ? 1 : 0;
  const { afterLastKey } = layout(text);
  // after the last top-level key when that line ended with a newline; else at the very start
  const at = afterLastKey > 0 && /\n$/.test(text.slice(0, afterLastKey)) ? afterLastKey : bom;
  return text.slice(0, at) + line + eol + text.slice(at);
}

/**
 * Removes the line(s) Spillway added; a user's own `openai_base_url` and everything else stay byte
 * for byte. A file that is not TOML is reported, not rewritten.
 */
export function removeCodexBaseUrl(text: string, what = 'config.toml'): CodexEdit {
  const before = parseToml(text, what);
  const ours = ourLines(text);
  if (ours.length === 0) return { text, changed: false, warnings: [] };
  let out = '';
  let from = 0;
  for (const [s, e] of ours) {
    out += text.slice(from, s);
    from = e;
  }
  out += text.slice(from);
  const after = parseToml(out, `${what} as Spillway would write it`);
  if (CODEX_KEY in after || !isDeepStrictEqual(withoutKey(after), withoutKey(before))) {
    throw new CodexConfigError(
      `${what}: removing Spillway's line would change other settings; the file was left unchanged`,
      'check-failed',
    );
  }
  return { text: out, changed: true, warnings: [] };
}

/** The base URL Spillway's own line sets, if the file has one. */
export function spillwayCodexBaseUrl(text: string): string | undefined {
  const ours = ourLines(text);
  if (ours.length === 0) return undefined;
  const [s, e] = ours[0]!;
  const m = /"([^"\\]*)"/.exec(text.slice(s, e));
  return m?.[1];
}

/** The comments that open and close Spillway's MCP server table; only a block between them is ever replaced or removed. */
const MCP_OPEN = "# Spillway's MCP server, added by Spillway (Spillway: Stop Routing Codex Through Spillway removes it)";
const MCP_CLOSE = "# end of Spillway's MCP server";

/** How Codex starts `spillway mcp` (see claudeConfig.ts's McpLaunch: the same launch for every agent). */
interface CodexMcpLaunch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/**
 * Spillway's `[mcp_servers.spillway]` table as lines. `default_tools_approval_mode = "approve"`
 * allows both tools once (they only read the store), so no read-back waits on an approval, which
 * `codex exec` could not give at all.
 */
function codexMcpBlock(launch: CodexMcpLaunch, eol = '\n'): string {
  const lines = [
    MCP_OPEN,
    '[mcp_servers.spillway]',
    `command = ${JSON.stringify(launch.command)}`,
    `args = [${launch.args.map((a) => JSON.stringify(a)).join(', ')}]`,
    'default_tools_approval_mode = "approve"',
  ];
  const env = Object.entries(launch.env ?? {});
  if (env.length) lines.push('[mcp_servers.spillway.env]', ...env.map(([k, v]) => `${JSON.stringify(k)} = ${JSON.stringify(v)}`));
  lines.push(MCP_CLOSE);
  return lines.join(eol) + eol;
}

/** [start, end) of Spillway's block, end including its last line ending; undefined without one. */
function mcpBlock(text: string): [number, number] | undefined {
  const start = text.indexOf(MCP_OPEN);
  if (start < 0 || (start > 0 && text[start - 1] !== '\n')) return undefined;
  const close = text.indexOf(MCP_CLOSE, start);
  if (close < 0) return undefined;
  const nl = text.indexOf('\n', close);
  return [start, nl < 0 ? text.length : nl + 1];
}

function withoutServer(obj: Record<string, unknown>): Record<string, unknown> {
  const servers = obj.mcp_servers;
  // a copy either way: the parser's objects and a spread copy differ in prototype, which a deep compare sees
  if (servers === null || typeof servers !== 'object') return { ...obj };
  const rest = { ...(servers as Record<string, unknown>) };
  delete rest.spillway;
  const out: Record<string, unknown> = { ...obj, mcp_servers: rest };
  if (Object.keys(rest).length === 0) delete out.mcp_servers;
  return out;
}

function serverOf(obj: Record<string, unknown>): unknown {
  const servers = obj.mcp_servers;
  return servers !== null && typeof servers === 'object' ? (servers as Record<string, unknown>).spillway : undefined;
}

/**
 * Adds (or replaces) Spillway's `[mcp_servers.spillway]` block at the end of the file, under the
 * rules of the route line: a file that is not TOML, or a `spillway` server the user configured
 * themselves, is refused, and the result must parse to the same values plus the one server.
 */
export function addCodexMcpServer(text: string, launch: CodexMcpLaunch, what = 'config.toml'): CodexEdit {
  const before = parseToml(text, what);
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const block = codexMcpBlock(launch, eol);
  const ours = mcpBlock(text);
  let out: string;
  if (ours) {
    out = text.slice(0, ours[0]) + block + text.slice(ours[1]);
  } else {
    if (serverOf(before) !== undefined) {
      throw new CodexConfigError(
        `${what} already configures [mcp_servers.spillway] itself; Spillway leaves your own server alone`,
        'user-value',
      );
    }
    // a table must start on a line of its own: a file without a final newline gets one
    out = text + (text === '' || text.endsWith('\n') ? '' : eol) + block;
  }
  const after = parseToml(out, `${what} as Spillway would write it`);
  const server = serverOf(after) as { command?: unknown; args?: unknown } | undefined;
  if (
    server?.command !== launch.command ||
    !isDeepStrictEqual(server.args, launch.args) ||
    !isDeepStrictEqual(withoutServer(after), withoutServer(before))
  ) {
    throw new CodexConfigError(
      `${what}: adding [mcp_servers.spillway] would change other settings; the file was left unchanged`,
      'check-failed',
    );
  }
  return { text: out, changed: out !== text, warnings: [] };
}

/** Removes Spillway's `[mcp_servers.spillway]` block; a user's own server and every other byte stay. */
export function removeCodexMcpServer(text: string, what = 'config.toml'): CodexEdit {
  const before = parseToml(text, what);
  const ours = mcpBlock(text);
  if (!ours) return { text, changed: false, warnings: [] };
  const out = text.slice(0, ours[0]) + text.slice(ours[1]);
  const after = parseToml(out, `${what} as Spillway would write it`);
  if (serverOf(after) !== undefined || !isDeepStrictEqual(withoutServer(after), withoutServer(before))) {
    throw new CodexConfigError(
      `${what}: removing Spillway's MCP server would change other settings; the file was left unchanged`,
      'check-failed',
    );
  }
  return { text: out, changed: true, warnings: [] };
}

// ---- Codex signed in with ChatGPT ---------------------------------------------------------------
//
// Signed in with ChatGPT, Codex talks to the ChatGPT backend (`https://chatgpt.com/backend-api/codex`)
// with the account's tokens, and `openai_base_url` does not route it usefully: Codex 0.171 first runs
// a workspace routing discovery against `chatgpt_base_url` (which must be https) and, when that
// backend serves the account, sends its model calls there whatever `openai_base_url` says. A model
// provider of its own does not: `[model_providers.spillway]` with `requires_openai_auth = true`
// makes Codex send the same ChatGPT tokens (bearer and `chatgpt-account-id`) to the provider's
// `base_url`, over plain http, with no certificate to make or trust. So Spillway writes that provider
// and selects it with a top-level `model_provider = "spillway"`; its base URL is the proxy's
// `/backend-api/codex`, which the proxy serves as the ChatGPT backend. `supports_websockets = true`
// keeps Codex's own transport (the proxy's `websockets` setting decides, as for the built-in one).

/** Spillway's provider id in `[model_providers]`, and the name Codex shows for it. */
const CODEX_PROVIDER_ID = 'spillway';
const PROVIDER_KEY = 'model_provider';
const PROVIDER_OPEN = "# Spillway's model provider, added by Spillway (Spillway: Stop Routing Codex Through Spillway removes it)";
const PROVIDER_CLOSE = "# end of Spillway's model provider";

/** How Codex is signed in, from the mode in `auth.json` (see codexAuthMode). */
export type CodexSignIn = 'chatgpt' | 'apikey' | 'none' | { other: string };

/** The provider's base URL for a proxy at `proxyUrl`: the ChatGPT backend's Codex path on the proxy. */
export function codexChatgptBaseUrl(proxyUrl: string): string {
  return `${proxyUrl.replace(/\/+$/, '')}/backend-api/codex`;
}

/** The provider table Spillway writes, as TOML values. */
function providerTable(baseUrl: string): Record<string, unknown> {
  return { name: 'Spillway', base_url: baseUrl, wire_api: 'responses', requires_openai_auth: true, supports_websockets: true };
}

/** Spillway's `[model_providers.spillway]` block as lines, between its opening and closing comments. */
export function codexProviderBlock(baseUrl: string, eol = '\n'): string {
  const lines = [
    PROVIDER_OPEN,
    `[model_providers.${CODEX_PROVIDER_ID}]`,
    ...Object.entries(providerTable(baseUrl)).map(([k, v]) => `${k} = ${JSON.stringify(v)}`),
    PROVIDER_CLOSE,
  ];
  return lines.join(eol) + eol;
}

/** The exact `model_provider` line Spillway adds. */
export function codexProviderLine(): string {
  return `${PROVIDER_KEY} = ${JSON.stringify(CODEX_PROVIDER_ID)} ${SPILLWAY_MARK}`;
}

function markedBlock(text: string, open: string, close: string): [number, number] | undefined {
  const start = text.indexOf(open);
  if (start < 0 || (start > 0 && text[start - 1] !== '\n')) return undefined;
  const end = text.indexOf(close, start);
  if (end < 0) return undefined;
  const nl = text.indexOf('\n', end);
  return [start, nl < 0 ? text.length : nl + 1];
}

function providerOf(obj: Record<string, unknown>): unknown {
  const p = obj.model_providers;
  return p !== null && typeof p === 'object' ? (p as Record<string, unknown>)[CODEX_PROVIDER_ID] : undefined;
}

/** `obj` without what the ChatGPT route sets (its line, its provider) and, when asked, without `openai_base_url`. */
function withoutChatgptRoute(obj: Record<string, unknown>, alsoBaseUrl: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = { ...obj };
  delete out[PROVIDER_KEY];
  if (alsoBaseUrl) delete out[CODEX_KEY];
  const p = obj.model_providers;
  if (p !== null && typeof p === 'object') {
    const rest = { ...(p as Record<string, unknown>) };
    delete rest[CODEX_PROVIDER_ID];
    out.model_providers = rest;
    if (Object.keys(rest).length === 0) delete out.model_providers;
  }
  return out;
}

/**
 * Routes Codex signed in with ChatGPT through the proxy at `proxyUrl`: Spillway's `model_provider`
 * line and `[model_providers.spillway]` block, added or updated; Spillway's `openai_base_url` line
 * (the API-key route) removed if it is there. A `model_provider` or `[model_providers.spillway]` the
 * user set is theirs (CodexConfigError, nothing written), and the result must parse to the old values
 * plus exactly Spillway's entries.
 */
export function addCodexChatgptRoute(text: string, proxyUrl: string, what = 'config.toml'): CodexEdit {
  const before = parseToml(text, what);
  const baseUrl = codexChatgptBaseUrl(proxyUrl);
  const block = markedBlock(text, PROVIDER_OPEN, PROVIDER_CLOSE);
  if (!block && providerOf(before) !== undefined) {
    throw new CodexConfigError(
      `${what} already configures [model_providers.${CODEX_PROVIDER_ID}] itself; Spillway leaves your own provider alone`,
      'user-value',
    );
  }
  // the API-key route's line goes: Codex signed in with ChatGPT would not use it
  const hadBaseUrlLine = ourLines(text).length > 0;
  let out = hadBaseUrlLine ? removeCodexBaseUrl(text, what).text : text;
  out = withOurLine(out, withoutKey(before), PROVIDER_KEY, codexProviderLine(), what);
  const eol = out.includes('\r\n') ? '\r\n' : '\n';
  const ours = markedBlock(out, PROVIDER_OPEN, PROVIDER_CLOSE);
  if (ours) out = out.slice(0, ours[0]) + codexProviderBlock(baseUrl, eol) + out.slice(ours[1]);
  else out = out + (out === '' || out.endsWith('\n') ? '' : eol) + codexProviderBlock(baseUrl, eol);
  const after = parseToml(out, `${what} as Spillway would write it`);
  if (
    after[PROVIDER_KEY] !== CODEX_PROVIDER_ID ||
    // a copy: the parser's tables have no prototype, which a deep compare sees
    !isDeepStrictEqual({ ...(providerOf(after) as object) }, providerTable(baseUrl)) ||
    !isDeepStrictEqual(withoutChatgptRoute(after, hadBaseUrlLine), withoutChatgptRoute(before, hadBaseUrlLine))
  ) {
    throw new CodexConfigError(
      `${what}: adding Spillway's model provider would change other settings; the file was left unchanged`,
      'check-failed',
    );
  }
  return { text: out, changed: out !== text, warnings: [] };
}

/** Removes Spillway's `model_provider` line and provider block; a user's own entries and every other byte stay. */
export function removeCodexChatgptRoute(text: string, what = 'config.toml'): CodexEdit {
  const before = parseToml(text, what);
  const lines = ourLines(text, PROVIDER_KEY);
  const block = markedBlock(text, PROVIDER_OPEN, PROVIDER_CLOSE);
  if (lines.length === 0 && !block) return { text, changed: false, warnings: [] };
  const cuts = [...lines, ...(block ? [block] : [])].sort((a, b) => a[0] - b[0]);
  let out = '';
  let from = 0;
  for (const [s, e] of cuts) {
    out += text.slice(from, s);
    from = e;
  }
  out += text.slice(from);
  const after = parseToml(out, `${what} as Spillway would write it`);
  const keptLine = lines.length === 0 && PROVIDER_KEY in before;
  if (
    (!keptLine && PROVIDER_KEY in after) ||
    (block && providerOf(after) !== undefined) ||
    !isDeepStrictEqual(withoutChatgptRoute(after, false), withoutChatgptRoute(before, false))
  ) {
    throw new CodexConfigError(
      `${what}: removing Spillway's model provider would change other settings; the file was left unchanged`,
      'check-failed',
    );
  }
  return { text: out, changed: true, warnings: [] };
}

/** The base URL of Spillway's provider block, if the file has one. */
export function spillwayCodexProviderUrl(text: string): string | undefined {
  const block = markedBlock(text, PROVIDER_OPEN, PROVIDER_CLOSE);
  if (!block) return undefined;
  return /^base_url = "([^"\\]*)"/m.exec(text.slice(block[0], block[1]))?.[1];
}

/**
 * How Codex is signed in, read from `auth.json` in `codexHome`: its `auth_mode`, or, in files written
 * before Codex recorded one, what Codex infers (an `OPENAI_API_KEY` means an API key, tokens mean
 * ChatGPT). Only those fields' presence and the mode string are looked at; the tokens are never read
 * into anything that outlives this call, returned, or logged. `none` without a file (Codex is not
 * signed in, or keeps its credentials in the keyring); a file that is not JSON says so.
 */
export function codexAuthMode(authJson: string | undefined): CodexSignIn {
  if (authJson === undefined) return 'none';
  let parsed: unknown;
  try {
    parsed = JSON.parse(authJson);
  } catch {
    throw new CodexConfigError('auth.json is not JSON; Spillway cannot tell how Codex is signed in', 'auth-file');
  }
  const auth = AUTH_FILE.safeParse(parsed);
  if (!auth.success) throw new CodexConfigError('auth.json is not an object; Spillway cannot tell how Codex is signed in', 'auth-file');
  const mode = auth.data.auth_mode;
  const present = (k: string) => auth.data[k] !== undefined && auth.data[k] !== null;
  if (mode === undefined || mode === null) {
    if (present('personal_access_token')) return { other: 'personalAccessToken' };
    if (present('OPENAI_API_KEY')) return 'apikey';
    return present('tokens') ? 'chatgpt' : 'none';
  }
  if (mode === 'apikey') return 'apikey';
  if (mode === 'chatgpt' || mode === 'chatgptAuthTokens') return 'chatgpt';
  return { other: mode };
}

const AUTH_FILE = z.object({ auth_mode: z.string().nullish() }).catchall(z.unknown());

/** `$CODEX_HOME/auth.json`, else `~/.codex/auth.json`. */
export function codexAuthPath(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return join(codexHome(env, home), 'auth.json');
}
