/**
 * Claude Code's files, as Spillway edits them: the workspace's `.mcp.json` (where Claude Code finds
 * project MCP servers) and `.claude/settings.local.json` (the workspace's personal settings, not
 * checked in, whose `env` Claude Code applies to every session, also the one its VS Code extension
 * starts, which never sees the integrated terminal's environment).
 *
 * - The MCP server: `mcpServers.spillway` in `.mcp.json` launches `spillway mcp` on the store; in
 *   `settings.local.json`, `enabledMcpjsonServers` gets "spillway" (so Claude Code does not ask
 *   whether to trust the project's server) and `permissions.allow` gets Spillway's two read-only
 *   tools (so no read asks for permission: the allow-once of docs/read-back.md).
 * - The route: `env.ANTHROPIC_BASE_URL` points at the proxy, and `env.ENABLE_TOOL_SEARCH` is "true",
 *   because Claude Code turns its MCP tool search off when the base URL is not Anthropic's own
 *   (anthropics/claude-code#32378, musistudio/claude-code-router#1392) and Spillway forwards every
 *   request to Anthropic unchanged but for the reductions.
 *
 * Every edit keeps every other byte of the file (jsonFile.ts) and removes only what Spillway wrote.
 * No `vscode` import: the extension and the real-agent suite write these files with the same code.
 */
import { join } from 'node:path';
import { MCP_READ_TOOL, MCP_SERVER_NAME } from '../engine/read-tool';
import { addToArray, removeFromArray, removeMember, setMember, type JsonEdit } from './jsonFile';

/** How to start `spillway mcp`: a program, its arguments and extra environment. */
export interface McpLaunch {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** Spillway's tools as Claude Code names them, for `permissions.allow`. */
export const CLAUDE_MCP_TOOLS = [`mcp__${MCP_SERVER_NAME}__${MCP_READ_TOOL}`, `mcp__${MCP_SERVER_NAME}__find_outputs`];

export function mcpJsonPath(workspace: string): string {
  return join(workspace, '.mcp.json');
}

export function claudeSettingsPath(workspace: string): string {
  return join(workspace, '.claude', 'settings.local.json');
}

/** `launch` as an `.mcp.json` server entry. */
function mcpEntry(launch: McpLaunch): Record<string, unknown> {
  return { type: 'stdio', command: launch.command, args: launch.args, ...(launch.env ? { env: launch.env } : {}) };
}

/** An entry that launches `spillway mcp` (by the `spillway` bin or a Spillway cli.js): Spillway's to replace or remove. */
export function launchesSpillwayMcp(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const v = value as { command?: unknown; args?: unknown };
  const args = Array.isArray(v.args) ? v.args.filter((a): a is string => typeof a === 'string') : [];
  const program = [typeof v.command === 'string' ? v.command : '', ...args];
  return args.includes('mcp') && program.some((p) => /(^|[\\/])spillway(\.cmd|\.exe)?$|[\\/]dist[\\/]cli\.js$/.test(p));
}

/** Adds (or updates) `mcpServers.spillway` in `.mcp.json`'s text. */
export function addMcpJsonServer(text: string, launch: McpLaunch, what = '.mcp.json'): JsonEdit {
  return setMember(text, ['mcpServers', MCP_SERVER_NAME], mcpEntry(launch) as never, launchesSpillwayMcp, what);
}

/** Removes Spillway's `mcpServers.spillway` from `.mcp.json`'s text (a user's own `spillway` server stays). */
export function removeMcpJsonServer(text: string, what = '.mcp.json'): JsonEdit {
  return removeMember(text, ['mcpServers', MCP_SERVER_NAME], launchesSpillwayMcp, what);
}

/** Runs `edits` in turn on `text`, each on the last one's result. */
function chain(text: string, edits: Array<(text: string) => JsonEdit>): JsonEdit {
  let out = text;
  for (const edit of edits) out = edit(out).text;
  return { text: out, changed: out !== text };
}

/** Enables the project's `spillway` server and allows its tools once, in `settings.local.json`'s text. */
export function allowMcpTools(text: string, what = 'settings.local.json'): JsonEdit {
  return chain(text, [
    (t) => addToArray(t, ['enabledMcpjsonServers'], MCP_SERVER_NAME, what),
    ...CLAUDE_MCP_TOOLS.map((tool) => (t: string) => addToArray(t, ['permissions', 'allow'], tool, what)),
  ]);
}

/** Takes back what `allowMcpTools` added. */
export function disallowMcpTools(text: string, what = 'settings.local.json'): JsonEdit {
  return chain(text, [
    (t) => removeFromArray(t, ['enabledMcpjsonServers'], MCP_SERVER_NAME, what),
    ...CLAUDE_MCP_TOOLS.map((tool) => (t: string) => removeFromArray(t, ['permissions', 'allow'], tool, what)),
  ]);
}

const BASE_URL = ['env', 'ANTHROPIC_BASE_URL'];
const TOOL_SEARCH = ['env', 'ENABLE_TOOL_SEARCH'];

/**
 * Points Claude Code at the proxy in `settings.local.json`'s text: `env.ANTHROPIC_BASE_URL = url`
 * (replacing only a URL Spillway wrote before, one of `earlier`) and `env.ENABLE_TOOL_SEARCH = "true"`
 * unless the file sets it already (the user's value wins). `toolSearchAdded` says whether this edit
 * added it, so the caller knows to take it back with the route.
 */
export function routeClaudeCode(
  text: string,
  url: string,
  earlier: readonly string[],
  what = 'settings.local.json',
): JsonEdit & { toolSearchAdded: boolean } {
  const routed = setMember(text, BASE_URL, url, (v) => typeof v === 'string' && earlier.includes(v), what);
  let out = routed.text;
  try {
    out = setMember(out, TOOL_SEARCH, 'true', () => false, what).text;
  } catch {
    // the user's own ENABLE_TOOL_SEARCH stays
  }
  return { text: out, changed: out !== text, toolSearchAdded: out !== routed.text };
}

/** Takes back the route: `ANTHROPIC_BASE_URL` when it is one of `ours`, `ENABLE_TOOL_SEARCH` when `toolSearch` (Spillway set it). */
export function unrouteClaudeCode(text: string, ours: readonly string[], toolSearch: boolean, what = 'settings.local.json'): JsonEdit {
  return chain(text, [
    (t) => removeMember(t, BASE_URL, (v) => typeof v === 'string' && ours.includes(v), what),
    ...(toolSearch ? [(t: string) => removeMember(t, TOOL_SEARCH, (v) => v === 'true', what)] : []),
  ]);
}

/** A word for a POSIX shell: as is when safe, else single-quoted. */
function shellWord(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** `claude mcp add spillway … -- <launch>`: the command that registers the server with Claude Code (user or project scope). */
export function claudeMcpAddCommand(launch: McpLaunch): string {
  const env = Object.entries(launch.env ?? {}).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
  return ['claude', 'mcp', 'add', MCP_SERVER_NAME, ...env, '--', launch.command, ...launch.args].map(shellWord).join(' ');
}
