/**
 * The environment variables that point coding agents at the proxy.
 *
 * OpenAI-style clients take a base URL that includes `/v1` (the official SDKs, Codex with an API
 * key, and `OPENAI_API_BASE` for aider and other LiteLLM-based tools); Anthropic-style clients take
 * one without it (the official SDKs, Claude Code). See routes.ts for how the proxy maps both.
 */
import { claudeMcpAddCommand, type McpLaunch } from './claudeConfig';
import { codexChatgptBaseUrl } from './codexConfig';

export type Shell = 'posix' | 'fish' | 'powershell' | 'cmd';

export interface EnvVar {
  name: string;
  value: string;
}

/** The variables, for a proxy listening at `url` (e.g. `http://127.0.0.1:8417`). */
export function agentEnvironment(url: string): EnvVar[] {
  const base = url.replace(/\/+$/, '');
  return [
    { name: 'OPENAI_BASE_URL', value: `${base}/v1` },
    { name: 'OPENAI_API_BASE', value: `${base}/v1` },
    { name: 'ANTHROPIC_BASE_URL', value: base },
  ];
}

/** The variables as lines to paste into a shell. */
export function agentEnvironmentLines(url: string, shell: Shell = 'posix'): string[] {
  return agentEnvironment(url).map(({ name, value }) => {
    switch (shell) {
      case 'posix':
        return `export ${name}=${value}`;
      case 'fish':
        return `set -gx ${name} ${value}`;
      case 'powershell':
        return `$env:${name} = "${value}"`;
      case 'cmd':
        return `set ${name}=${value}`;
    }
  });
}

/**
 * Current Codex ignores `OPENAI_BASE_URL`: it reads `openai_base_url` from `$CODEX_HOME/config.toml`
 * or from `-c openai_base_url="…"` (see codexConfig.ts). These are the lines that say so, for the
 * proxy's start-up text.
 */
export function codexRouteText(url: string): string[] {
  const base = `${url.replace(/\/+$/, '')}/v1`;
  return [
    'Codex (reads openai_base_url from its config, not OPENAI_BASE_URL):',
    `  codex -c openai_base_url="${base}"`,
    '  or this line in $CODEX_HOME/config.toml (default ~/.codex/config.toml), above any [table]:',
    `  openai_base_url = "${base}"`,
    'Codex signed in with ChatGPT (its own model provider, which sends the ChatGPT tokens to the proxy):',
    `  codex -c 'model_providers.spillway={name="Spillway",base_url="${codexChatgptBaseUrl(url)}",wire_api="responses",requires_openai_auth=true,supports_websockets=true}' -c model_provider=spillway`,
  ];
}

/** The Codex route as lines to paste into a shell: an alias that passes `-c openai_base_url=…`, or a comment where the shell has no simple alias. */
export function codexShellLines(url: string, shell: Shell = 'posix'): string[] {
  const base = `${url.replace(/\/+$/, '')}/v1`;
  const arg = `openai_base_url="${base}"`;
  const why = 'Codex reads openai_base_url, not OPENAI_BASE_URL (or run Spillway: Route Codex Through Spillway)';
  switch (shell) {
    case 'posix':
      return [`# ${why}`, `alias codex='command codex -c ${arg}'`];
    case 'fish':
      return [`# ${why}`, `alias codex 'command codex -c ${arg}'`];
    case 'powershell':
      return [`# ${why}: codex -c '${arg}'`];
    case 'cmd':
      return [`REM ${why}: codex -c ${arg}`];
  }
}

/**
 * Gemini CLI reads its base URL from `GOOGLE_GEMINI_BASE_URL` (no `/v1beta`: its SDK adds that).
 * Kept out of `agentEnvironment` (and so out of the integrated terminals' variables): with it set,
 * Gemini CLI picks its "gateway" sign-in, which its headless mode refuses (exit 41) unless
 * `~/.gemini/settings.json` chooses `security.auth.selectedType: "gemini-api-key"`, which
 * **Spillway: Route Gemini CLI Through Spillway** writes (geminiConfig.ts).
 */
export function geminiBaseUrl(url: string): string {
  return url.replace(/\/+$/, '');
}

/** The Gemini CLI route, for the proxy's start-up text. */
export function geminiRouteText(url: string): string[] {
  return [
    'Gemini CLI (reads GOOGLE_GEMINI_BASE_URL; ~/.gemini/settings.json must choose the API key sign-in):',
    `  export GOOGLE_GEMINI_BASE_URL=${geminiBaseUrl(url)}`,
    '  and in ~/.gemini/settings.json: "security": { "auth": { "selectedType": "gemini-api-key" } }',
  ];
}

/** The Gemini CLI route as lines to paste into a shell: the variable, after a comment naming the setting it needs. */
export function geminiShellLines(url: string, shell: Shell = 'posix'): string[] {
  const comment = shell === 'cmd' ? 'REM' : '#';
  const why = `${comment} Gemini CLI: needs security.auth.selectedType "gemini-api-key" in ~/.gemini/settings.json (Spillway: Route Gemini CLI Through Spillway writes it)`;
  const name = 'GOOGLE_GEMINI_BASE_URL';
  const value = geminiBaseUrl(url);
  switch (shell) {
    case 'posix':
      return [why, `export ${name}=${value}`];
    case 'fish':
      return [why, `set -gx ${name} ${value}`];
    case 'powershell':
      return [why, `$env:${name} = "${value}"`];
    case 'cmd':
      return [why, `set ${name}=${value}`];
  }
}

/**
 * How agents read back over MCP (`spillway mcp`, docs/read-back.md): the `claude mcp add` line and
 * Codex's table, for the proxy's start-up text. `launch` is how this install starts the server.
 */
export function mcpRouteText(launch: McpLaunch): string[] {
  const args = launch.args.map((a) => JSON.stringify(a)).join(', ');
  return [
    'Read-backs over MCP (no shell, no prompt per read; docs/read-back.md):',
    `  Claude Code: ${claudeMcpAddCommand(launch)}`,
    `  Codex: [mcp_servers.spillway] command = ${JSON.stringify(launch.command)}, args = [${args}], default_tools_approval_mode = "approve"`,
  ];
}

/** The `claude mcp add` line as a comment for a pasted environment block (run it once; it is not an environment variable). */
export function mcpShellLines(launch: McpLaunch, shell: Shell = 'posix'): string[] {
  const comment = shell === 'cmd' ? 'REM' : '#';
  return [`${comment} Claude Code reads back through Spillway's MCP server after, once: ${claudeMcpAddCommand(launch)}`];
}
