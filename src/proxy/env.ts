/**
 * The environment variables that point coding agents at the proxy.
 *
 * OpenAI-style clients take a base URL that includes `/v1` (the official SDKs, Codex with an API
 * key, and `OPENAI_API_BASE` for aider and other LiteLLM-based tools); Anthropic-style clients take
 * one without it (the official SDKs, Claude Code). See routes.ts for how the proxy maps both.
 */
export type Shell = 'posix' | 'fish' | 'powershell' | 'cmd';

export interface EnvVar { name: string; value: string }

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
      case 'posix': return `export ${name}=${value}`;
      case 'fish': return `set -gx ${name} ${value}`;
      case 'powershell': return `$env:${name} = "${value}"`;
      case 'cmd': return `set ${name}=${value}`;
    }
  });
}
