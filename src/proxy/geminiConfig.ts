/**
 * Gemini CLI's user settings, as Spillway edits them: `~/.gemini/settings.json` (under
 * `$GEMINI_CLI_HOME` instead of the home folder when that is set, as Gemini CLI itself does).
 *
 * Why these two entries:
 * - The sign-in: Gemini CLI reads its base URL from `GOOGLE_GEMINI_BASE_URL` only (no setting holds
 *   it), and with that variable set it picks its "gateway" sign-in, which its headless mode refuses
 *   (exit 41). `security.auth.selectedType: "gemini-api-key"` makes it sign in with the API key
 *   (`GEMINI_API_KEY`) and still send to the base URL. Only an absent value is written: a user who
 *   signs in otherwise (Google login, Vertex AI) talks to other endpoints than the Gemini API, which
 *   the proxy does not serve, and is told so rather than switched.
 * - The read-back: `mcpServers.spillway` launches `spillway mcp` on the store, with `trust: true`
 *   (its two tools only read: no confirmation per read). Gemini CLI names them
 *   `mcp_spillway_read_output` and `mcp_spillway_find_outputs`.
 *
 * Every edit keeps every other byte of the file (jsonFile.ts) and removes only what Spillway wrote.
 * A settings file with comments (Gemini CLI accepts them) is not JSON to jsonFile.ts: it is reported
 * and left alone. No `vscode` import: the extension and the real-agent suite write the file with the
 * same code.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import { MCP_SERVER_NAME } from '../engine/read-tool';
import { launchesSpillwayMcp, type McpLaunch } from './claudeConfig';
import { JsonFileError, removeMember, setMember, type JsonEdit } from './jsonFile';

/** The sign-in that sends to `GOOGLE_GEMINI_BASE_URL` with the API key. */
export const GEMINI_API_KEY_AUTH = 'gemini-api-key';
const SELECTED_TYPE = ['security', 'auth', 'selectedType'];

/** `~/.gemini/settings.json`, or `$GEMINI_CLI_HOME/.gemini/settings.json`. */
export function geminiSettingsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.GEMINI_CLI_HOME || homedir(), '.gemini', 'settings.json');
}

/** Adds (or updates) `mcpServers.spillway` in settings.json's text. */
export function addGeminiMcpServer(text: string, launch: McpLaunch, what = 'settings.json'): JsonEdit {
  const entry = { command: launch.command, args: launch.args, ...(launch.env ? { env: launch.env } : {}), trust: true };
  return setMember(text, ['mcpServers', MCP_SERVER_NAME], entry, launchesSpillwayMcp, what);
}

/** Removes Spillway's `mcpServers.spillway` (a user's own `spillway` server stays). */
export function removeGeminiMcpServer(text: string, what = 'settings.json'): JsonEdit {
  return removeMember(text, ['mcpServers', MCP_SERVER_NAME], launchesSpillwayMcp, what);
}

/**
 * Chooses the API key sign-in in settings.json's text when none is chosen. `added` says whether this
 * edit wrote it (the caller keeps that, to take it back with the route). A sign-in the user chose
 * other than the API key is a JsonFileError ('user-value') naming it: the proxy serves the Gemini
 * API only.
 */
export function routeGeminiCli(text: string, what = 'settings.json'): JsonEdit & { added: boolean } {
  try {
    const edit = setMember(text, SELECTED_TYPE, GEMINI_API_KEY_AUTH, (v) => v === GEMINI_API_KEY_AUTH, what);
    return { ...edit, added: edit.changed };
  } catch (e) {
    if (e instanceof JsonFileError && e.reason === 'user-value')
      throw new JsonFileError(
        `${what} signs Gemini CLI in otherwise (security.auth.selectedType); Spillway carries the Gemini API key sign-in only ("${GEMINI_API_KEY_AUTH}"), so it was left unchanged`,
        'user-value',
      );
    throw e;
  }
}

/** Takes back the sign-in Spillway chose (only when `added`, and only while it is still the API key). */
export function unrouteGeminiCli(text: string, added: boolean, what = 'settings.json'): JsonEdit {
  if (!added) return { text, changed: false };
  return removeMember(text, SELECTED_TYPE, (v) => v === GEMINI_API_KEY_AUTH, what);
}
