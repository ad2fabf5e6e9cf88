/**
 * OpenCode's configuration, as Spillway edits it: the user's global `opencode.json`
 * (`$XDG_CONFIG_HOME/opencode/opencode.json`, default `~/.config/opencode/opencode.json`), where
 * `provider.<id>.options.baseURL` moves a provider's calls to another base URL.
 *
 * OpenCode builds its providers on the Vercel AI SDK, whose base URLs include the API version
 * (`https://api.anthropic.com/v1`, `https://api.openai.com/v1`): it posts `<base>/messages` and
 * `<base>/responses`. So the route sets both Spillway-served providers, `anthropic` and `openai`, to
 * `<proxy>/v1`; the proxy sends `/v1/messages` to the Anthropic upstream and `/v1/responses` to the
 * OpenAI one, each projected. A baseURL the user set (one Spillway did not write, by the URLs the
 * caller remembers) stays theirs: that provider is left alone and a warning says so.
 *
 * Every edit keeps every other byte of the file (jsonFile.ts); a file that is not plain JSON (an
 * `opencode.jsonc` with comments, say) is reported, never rewritten. No `vscode` import: the extension
 * and the real-agent suite write the file with the same code.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { JsonFileError, removeMember, setMember, type JsonEdit } from './jsonFile';

/** The providers Spillway serves, as OpenCode names them. */
const OPENCODE_PROVIDERS = ['anthropic', 'openai'] as const;

const baseUrlPath = (provider: string) => ['provider', provider, 'options', 'baseURL'];

/** The global config file OpenCode reads (it follows XDG on every platform). */
export function opencodeConfigPath(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  const config = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(config, 'opencode', 'opencode.json');
}

/** The base URL OpenCode's providers take for a proxy at `url`: with the version, as the AI SDK expects. */
export function opencodeBaseUrl(url: string): string {
  return `${url.replace(/\/+$/, '')}/v1`;
}

export interface OpenCodeEdit extends JsonEdit {
  /** providers left alone, and why */
  warnings: string[];
}

/**
 * Points OpenCode's `anthropic` and `openai` providers at `base` in `opencode.json`'s text, replacing
 * only a baseURL Spillway wrote before (one of `earlier`). A provider whose baseURL the user set is
 * skipped with a warning; a file that is not JSON throws (a JsonFileError), leaving it unchanged.
 */
export function routeOpenCode(text: string, base: string, earlier: readonly string[], what = 'opencode.json'): OpenCodeEdit {
  let out = text;
  const warnings: string[] = [];
  for (const provider of OPENCODE_PROVIDERS) {
    try {
      out = setMember(out, baseUrlPath(provider), base, (v) => typeof v === 'string' && earlier.includes(v), what).text;
    } catch (e) {
      if (!(e instanceof JsonFileError) || e.reason !== 'user-value') throw e;
      warnings.push(`${e.message}; OpenCode's ${provider} provider does not go through Spillway`);
    }
  }
  return { text: out, changed: out !== text, warnings };
}

/** Takes back the route: each provider's baseURL when it is one of `ours` (objects it leaves empty go too). */
export function unrouteOpenCode(text: string, ours: readonly string[], what = 'opencode.json'): JsonEdit {
  let out = text;
  for (const provider of OPENCODE_PROVIDERS) {
    out = removeMember(out, baseUrlPath(provider), (v) => typeof v === 'string' && ours.includes(v), what).text;
  }
  return { text: out, changed: out !== text };
}
