/**
 * OpenCode's configuration, as Spillway edits it: the user's global `opencode.json`
 * (`$XDG_CONFIG_HOME/opencode/opencode.json`, default `~/.config/opencode/opencode.json`), where
 * `provider.<id>.options.baseURL` moves a provider's calls to another base URL.
 *
 * OpenCode builds its providers on the Vercel AI SDK, whose base URLs include the API version
 * (`https://api.anthropic.com/v1`, `https://api.openai.com/v1`): it posts `<base>/messages` and
 * `<base>/responses`. So the route sets both Spillway-served providers, `anthropic` and `openai`, to
 * `<proxy>/v1`; the proxy sends `/v1/messages` to the Anthropic upstream and `/v1/responses` to the
 * OpenAI one, each projected. A baseURL the user set stays theirs (baseUrlConfig.ts).
 * Kilo's CLI (OpenCode's fork, Kilo Code 7's server) reads the same settings from its own `kilo.json`.
 * No `vscode` import: the extension and the real-agent suite write the file with the same code.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { routeBaseUrls, unrouteBaseUrls, type BaseUrlEdit, type BaseUrlSetting } from './baseUrlConfig';
import type { JsonEdit } from './jsonFile';

const SETTINGS: readonly BaseUrlSetting[] = ['anthropic', 'openai'].map((provider) => ({
  provider,
  path: ['provider', provider, 'options', 'baseURL'],
  value: (url: string) => `${url}/v1`,
}));

/** `<XDG_CONFIG_HOME, else ~/.config>/<dir>/<name>`: OpenCode and Kilo follow XDG on every platform. */
function xdgConfigFile(env: NodeJS.ProcessEnv, home: string, dir: string, name: string): string {
  const config = env.XDG_CONFIG_HOME && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(home, '.config');
  return join(config, dir, name);
}

/** The global config file OpenCode reads. */
export function opencodeConfigPath(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return xdgConfigFile(env, home, 'opencode', 'opencode.json');
}

/**
 * Points OpenCode's `anthropic` and `openai` providers at the proxy at `proxyUrl` in `opencode.json`'s
 * text, replacing only a baseURL Spillway wrote for one of the proxy URLs in `earlier`.
 */
export function routeOpenCode(text: string, proxyUrl: string, earlier: readonly string[], what = 'opencode.json'): BaseUrlEdit {
  return routeBaseUrls(text, SETTINGS, proxyUrl, earlier, what, 'OpenCode');
}

/** Takes back the route to any of the proxy URLs in `ours`. */
export function unrouteOpenCode(text: string, ours: readonly string[], what = 'opencode.json'): JsonEdit {
  return unrouteBaseUrls(text, SETTINGS, ours, what);
}

/**
 * Kilo's global config file (Kilo's CLI, OpenCode's fork, whose server Kilo Code 7 runs): the same
 * schema as OpenCode's, under its own name (`$XDG_CONFIG_HOME/kilo/kilo.json`, default
 * `~/.config/kilo/kilo.json`).
 */
export function kiloConfigPath(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  return xdgConfigFile(env, home, 'kilo', 'kilo.json');
}

/** Points Kilo's `anthropic` and `openai` providers at the proxy in `kilo.json`'s text, as routeOpenCode does OpenCode's. */
export function routeKilo(text: string, proxyUrl: string, earlier: readonly string[], what = 'kilo.json'): BaseUrlEdit {
  return routeBaseUrls(text, SETTINGS, proxyUrl, earlier, what, 'Kilo');
}

/** Takes back Kilo's route to any of the proxy URLs in `ours`. */
export function unrouteKilo(text: string, ours: readonly string[], what = 'kilo.json'): JsonEdit {
  return unrouteBaseUrls(text, SETTINGS, ours, what);
}
