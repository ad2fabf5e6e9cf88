/**
 * The pi coding agent's model configuration, as Spillway edits it: `models.json` in pi's agent folder
 * (`$PI_CODING_AGENT_DIR`, default `~/.pi/agent`), where `providers.<name>.baseUrl` sends a built-in
 * provider's calls elsewhere while keeping its models and sign-in.
 *
 * pi's Anthropic client is Anthropic's SDK, whose base URL has no version (it posts `<base>/v1/messages`),
 * and its OpenAI client the OpenAI SDK, whose base URL has it: so `anthropic` gets `<proxy>` and
 * `openai` gets `<proxy>/v1`. A baseUrl the user set stays theirs (baseUrlConfig.ts).
 * No `vscode` import: the real-agent suite writes the file with this code.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { routeBaseUrls, unrouteBaseUrls, type BaseUrlEdit, type BaseUrlSetting } from './baseUrlConfig';
import type { JsonEdit } from './jsonFile';

const SETTINGS: readonly BaseUrlSetting[] = [
  { provider: 'anthropic', path: ['providers', 'anthropic', 'baseUrl'], value: (url) => url },
  { provider: 'openai', path: ['providers', 'openai', 'baseUrl'], value: (url) => `${url}/v1` },
];

/** pi's models.json. */
export function piModelsPath(env: NodeJS.ProcessEnv = process.env, home = homedir()): string {
  const raw = env.PI_CODING_AGENT_DIR;
  const dir = !raw ? join(home, '.pi', 'agent') : raw === '~' ? home : raw.startsWith('~/') ? join(home, raw.slice(2)) : raw;
  return join(dir, 'models.json');
}

/** Points pi's `anthropic` and `openai` providers at the proxy at `proxyUrl`, replacing only what Spillway wrote for `earlier`. */
export function routePi(text: string, proxyUrl: string, earlier: readonly string[], what = 'models.json'): BaseUrlEdit {
  return routeBaseUrls(text, SETTINGS, proxyUrl, earlier, what, 'pi');
}

/** Takes back the route to any of the proxy URLs in `ours`. */
export function unroutePi(text: string, ours: readonly string[], what = 'models.json'): JsonEdit {
  return unrouteBaseUrls(text, SETTINGS, ours, what);
}
