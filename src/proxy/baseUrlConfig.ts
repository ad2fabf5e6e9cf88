/**
 * Base URL routes in an agent's JSON configuration (OpenCode's opencode.json, pi's models.json): a
 * string at a path per provider that Spillway points at the proxy and later takes back.
 *
 * Ownership is by value: a setting holds Spillway's route when its value is what Spillway would write
 * for one of the proxy URLs the caller remembers having routed to. Such a value is replaced (the proxy
 * moved) or removed (the route stopped); any other value is the user's, and that provider is left
 * alone with a warning. The edits themselves are jsonFile.ts's: every other byte of the file kept, a
 * file that is not plain JSON reported and never rewritten.
 */
import { JsonFileError, removeMember, setMember, type JsonEdit } from './jsonFile';

/** One setting a route writes: where, and its value for a proxy at a given URL. */
export interface BaseUrlSetting {
  /** the provider's name, for messages */
  provider: string;
  path: readonly string[];
  value: (proxyUrl: string) => string;
}

export interface BaseUrlEdit extends JsonEdit {
  /** providers left alone, and why */
  warnings: string[];
}

const trimmed = (url: string) => url.replace(/\/+$/, '');

/** Whether `v` is what `setting` holds for one of the proxy URLs in `ours`. */
function owned(setting: BaseUrlSetting, ours: readonly string[]): (v: unknown) => boolean {
  const values = new Set(ours.map((u) => setting.value(trimmed(u))));
  return (v) => typeof v === 'string' && values.has(v);
}

/**
 * Points every setting at the proxy at `proxyUrl`, replacing only values Spillway wrote for one of
 * `earlier`. `agent` names the agent in warnings. A file that is not JSON throws (a JsonFileError).
 */
export function routeBaseUrls(
  text: string,
  settings: readonly BaseUrlSetting[],
  proxyUrl: string,
  earlier: readonly string[],
  what: string,
  agent: string,
): BaseUrlEdit {
  let out = text;
  const warnings: string[] = [];
  for (const s of settings) {
    try {
      out = setMember(out, s.path, s.value(trimmed(proxyUrl)), owned(s, earlier), what).text;
    } catch (e) {
      if (!(e instanceof JsonFileError) || e.reason !== 'user-value') throw e;
      warnings.push(`${e.message}; ${agent}'s ${s.provider} provider does not go through Spillway`);
    }
  }
  return { text: out, changed: out !== text, warnings };
}

/** Takes back every setting whose value Spillway wrote for one of `ours` (objects it leaves empty go too). */
export function unrouteBaseUrls(text: string, settings: readonly BaseUrlSetting[], ours: readonly string[], what: string): JsonEdit {
  let out = text;
  for (const s of settings) out = removeMember(out, s.path, owned(s, ours), what).text;
  return { text: out, changed: out !== text };
}
