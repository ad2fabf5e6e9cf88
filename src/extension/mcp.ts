/**
 * `spillway mcp` where each agent looks for it, with no hand-editing:
 * - VS Code (1.101+): an MCP server definition provider (`vscode.lm.registerMcpServerDefinitionProvider`),
 *   so Copilot agent mode and every MCP client in the editor gets `read_output` and `find_outputs`
 *   on this workspace's store. Older VS Code has no such API: the language model tool
 *   `spillway_read_output` (readTool.ts) stays the way back there.
 * - Claude Code: Add Spillway's MCP Server for Claude Code writes `.mcp.json`'s `spillway` server and,
 *   in `.claude/settings.local.json`, enables it and allows its two read-only tools once; Route
 *   Claude Code Through Spillway sets `env.ANTHROPIC_BASE_URL` (and `ENABLE_TOOL_SEARCH`) there, for
 *   Claude Code's own VS Code extension, which never sees the integrated terminal's environment.
 *   Each has a Stop twin that removes only what Spillway wrote; the edits are src/proxy/claudeConfig.ts.
 *
 * The server is the CLI bundled in the extension, launched as pure/mcpLaunch.ts says.
 */
import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import {
  addMcpJsonServer,
  allowMcpTools,
  claudeSettingsPath,
  disallowMcpTools,
  mcpJsonPath,
  removeMcpJsonServer,
  routeClaudeCode,
  unrouteClaudeCode,
  type McpLaunch,
} from '../proxy/claudeConfig';
import { MCP_SERVER_NAME } from '../engine/read-tool';
import { errorText, type SpillwayHost } from './host';
import { writeAtomic } from './pure/writeAtomic';
import { MCP_PROVIDER_ID } from './pure/contributes';
import { mcpLaunch } from './pure/mcpLaunch';

const ADD_CLAUDE_MCP = 'spillway.addClaudeMcpServer';
const REMOVE_CLAUDE_MCP = 'spillway.removeClaudeMcpServer';
const ROUTE_CLAUDE = 'spillway.routeClaudeCode';
const UNROUTE_CLAUDE = 'spillway.unrouteClaudeCode';
/** workspaceState: the base URLs Spillway wrote into settings.local.json, and whether it added ENABLE_TOOL_SEARCH. */
const CLAUDE_ROUTE_STATE = 'spillway.claudeRoute';

/** How this extension starts `spillway mcp` on `storeDir` (pure/mcpLaunch.ts). */
export function launchFor(host: SpillwayHost): McpLaunch {
  return mcpLaunch(process.execPath, host.context.extensionPath, host.storeDir);
}

/** The parts of VS Code's MCP API (1.101+) used here; absent from older `vscode` typings and editors. */
interface McpApi {
  registerMcpServerDefinitionProvider(
    id: string,
    provider: { onDidChangeMcpServerDefinitions?: vscode.Event<void>; provideMcpServerDefinitions(): unknown[] },
  ): vscode.Disposable;
}
type StdioDefinition = new (label: string, command: string, args?: string[], env?: Record<string, string>, version?: string) => unknown;

/** The MCP server definition provider's registration: whether this VS Code took it, and why not. */
export interface McpRegistration extends vscode.Disposable {
  readonly registered: boolean;
  readonly why?: string;
}

const NOT_REGISTERED = (why: string): McpRegistration => ({ registered: false, why, dispose: () => undefined });
/** Where agents in the editor read back without the provider. */
const FALLBACK = 'agents in the editor read back through spillway_read_output';

/**
 * Registers the MCP server definition provider where the API exists. Without it, the caller's one
 * line about features says why (pure/features.ts); with it, the log says it is registered.
 */
export function registerMcpProvider(host: SpillwayHost): McpRegistration {
  const lm = vscode.lm as unknown as Partial<McpApi> | undefined;
  const Definition = (vscode as unknown as { McpStdioServerDefinition?: StdioDefinition }).McpStdioServerDefinition;
  if (typeof lm?.registerMcpServerDefinitionProvider !== 'function' || typeof Definition !== 'function') {
    return NOT_REGISTERED(`this VS Code has no MCP server definition API (1.101+); ${FALLBACK}`);
  }
  // VS Code 1.100 has a preview of this API that wants another contribution point and throws: fail open
  // to the language model tool, as on editors without the API, and say why
  let registration: vscode.Disposable;
  const changed = new vscode.EventEmitter<void>();
  try {
    registration = lm.registerMcpServerDefinitionProvider(MCP_PROVIDER_ID, {
      onDidChangeMcpServerDefinitions: changed.event,
      provideMcpServerDefinitions: () => {
        const launch = launchFor(host);
        const version = String((host.context.extension?.packageJSON as { version?: unknown } | undefined)?.version ?? '');
        return [new Definition('Spillway', launch.command, launch.args, launch.env, version)];
      },
    });
  } catch (e) {
    changed.dispose();
    return NOT_REGISTERED(`this VS Code refused the MCP server definition provider (${errorText(e)}); ${FALLBACK}`);
  }
  let served = host.storeDir;
  // the store folder follows settings and workspace folders: a new one is a new server definition
  const watch = host.onDidChangeEngine(() => {
    if (host.storeDir !== served) {
      served = host.storeDir;
      changed.fire();
    }
  });
  host.log.info(`registered the MCP server definition provider ${MCP_PROVIDER_ID} (spillway mcp on ${host.storeDir})`);
  const all = vscode.Disposable.from(registration, watch, changed);
  return { registered: true, dispose: () => all.dispose() };
}

function readOrEmpty(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

/** What a Claude Code command did: the files it changed. */
export interface ClaudeEditResult {
  changed: string[];
}

interface RouteState {
  urls: string[];
  toolSearch: boolean;
}

export class ClaudeCodeSetup implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly host: SpillwayHost,
    private readonly proxyUrl: () => string | undefined,
  ) {
    this.disposables = [
      vscode.commands.registerCommand(ADD_CLAUDE_MCP, () => this.addMcpServer()),
      vscode.commands.registerCommand(REMOVE_CLAUDE_MCP, () => this.removeMcpServer()),
      vscode.commands.registerCommand(ROUTE_CLAUDE, () => this.route()),
      vscode.commands.registerCommand(UNROUTE_CLAUDE, () => this.unroute(false)),
    ];
  }

  private workspace(): string | undefined {
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder?.uri.scheme === 'file' ? folder.uri.fsPath : undefined;
  }

  /** Applies `edits` (file → new text from old) atomically per file; reports what changed or why not. */
  private apply(edits: Array<[string, (text: string) => { text: string; changed: boolean }]>): ClaudeEditResult | undefined {
    const out: Array<[string, string]> = [];
    try {
      // every edit is computed (and checked) before any file is written
      for (const [file, edit] of edits) {
        const r = edit(readOrEmpty(file));
        if (r.changed) out.push([file, r.text]);
      }
      for (const [file, text] of out) writeAtomic(file, text);
    } catch (e) {
      this.host.notify('warning', `Spillway: ${errorText(e)}`);
      return undefined;
    }
    return { changed: out.map(([file]) => file) };
  }

  private noFolder(): undefined {
    this.host.notify('warning', "Spillway: open a folder first; Claude Code's project settings live in the workspace folder.");
    return undefined;
  }

  /** Adds the `spillway` server to `.mcp.json` and allows its tools once in `.claude/settings.local.json`. */
  addMcpServer(): ClaudeEditResult | undefined {
    const ws = this.workspace();
    if (!ws) return this.noFolder();
    const launch = launchFor(this.host);
    const r = this.apply([
      [mcpJsonPath(ws), (t) => addMcpJsonServer(t, launch, mcpJsonPath(ws))],
      [claudeSettingsPath(ws), (t) => allowMcpTools(t, claudeSettingsPath(ws))],
    ]);
    if (r) {
      this.host.log.info(`claude: added the ${MCP_SERVER_NAME} MCP server (${r.changed.join(', ') || 'already there'})`);
      this.host.notify(
        'info',
        `Spillway: Claude Code in this folder now has Spillway's read_output and find_outputs tools, allowed without a prompt (${r.changed.length ? r.changed.join(', ') : 'already set up'}).`,
      );
    }
    return r;
  }

  removeMcpServer(): ClaudeEditResult | undefined {
    const ws = this.workspace();
    if (!ws) return this.noFolder();
    const r = this.apply([
      [mcpJsonPath(ws), (t) => (t === '' ? { text: t, changed: false } : removeMcpJsonServer(t, mcpJsonPath(ws)))],
      [claudeSettingsPath(ws), (t) => (t === '' ? { text: t, changed: false } : disallowMcpTools(t, claudeSettingsPath(ws)))],
    ]);
    if (r) {
      this.host.notify(
        'info',
        r.changed.length
          ? `Spillway: removed Spillway's MCP server (${r.changed.join(', ')}).`
          : 'Spillway: Claude Code has no MCP server from Spillway here; nothing to remove.',
      );
    }
    return r;
  }

  private state(): RouteState {
    const s = this.host.context.workspaceState.get<RouteState>(CLAUDE_ROUTE_STATE);
    return { urls: Array.isArray(s?.urls) ? s.urls : [], toolSearch: s?.toolSearch === true };
  }

  /** Sets ANTHROPIC_BASE_URL (and ENABLE_TOOL_SEARCH) in `.claude/settings.local.json`'s env. */
  async route(): Promise<ClaudeEditResult | undefined> {
    const ws = this.workspace();
    if (!ws) return this.noFolder();
    const url = this.proxyUrl();
    if (!url) {
      this.host.notify(
        'warning',
        'Spillway: the proxy is not running; enable spillway.proxy.enabled first, then route Claude Code through it.',
      );
      return undefined;
    }
    const file = claudeSettingsPath(ws);
    const before = this.state();
    let added = false;
    const r = this.apply([
      [
        file,
        (t) => {
          const edit = routeClaudeCode(t, url, before.urls, file);
          added = edit.toolSearchAdded;
          return edit;
        },
      ],
    ]);
    if (!r) return undefined;
    await this.host.context.workspaceState.update(CLAUDE_ROUTE_STATE, {
      urls: [...new Set([...before.urls, url])],
      toolSearch: before.toolSearch || added,
    });
    this.host.log.info(`claude: ANTHROPIC_BASE_URL = ${url} in ${file}`);
    this.host.notify(
      'info',
      `Spillway: Claude Code sessions started in this folder now go through Spillway (${file}: env.ANTHROPIC_BASE_URL, and ENABLE_TOOL_SEARCH so MCP tool search stays on). The Claude Code extension's claudeCode.environmentVariables setting is the per-user alternative.`,
    );
    return r;
  }

  /** Removes what Route Claude Code Through Spillway wrote. `quiet` when the proxy stops. */
  unroute(quiet: boolean): ClaudeEditResult | undefined {
    const ws = this.workspace();
    if (!ws) return quiet ? undefined : this.noFolder();
    const file = claudeSettingsPath(ws);
    const s = this.state();
    if (quiet && s.urls.length === 0) return { changed: [] };
    const r = this.apply([[file, (t) => (t === '' ? { text: t, changed: false } : unrouteClaudeCode(t, s.urls, s.toolSearch, file))]]);
    if (!r) return undefined;
    void this.host.context.workspaceState.update(CLAUDE_ROUTE_STATE, undefined);
    if (!quiet || r.changed.length) {
      this.host.notify(
        'info',
        r.changed.length
          ? `Spillway: Claude Code no longer goes through Spillway (${file}).`
          : `Spillway: ${file} has no route from Spillway; nothing to remove.`,
      );
    }
    return r;
  }

  /** After a restart on another port: moves Spillway's ANTHROPIC_BASE_URL (if routed) to the new URL. */
  follow(url: string): void {
    const ws = this.workspace();
    const s = this.state();
    if (!ws || s.urls.length === 0 || s.urls.includes(url)) return;
    const file = claudeSettingsPath(ws);
    try {
      const edit = routeClaudeCode(readOrEmpty(file), url, s.urls, file);
      if (edit.changed) writeAtomic(file, edit.text);
      void this.host.context.workspaceState.update(CLAUDE_ROUTE_STATE, {
        urls: [...s.urls, url],
        toolSearch: s.toolSearch || edit.toolSearchAdded,
      });
      this.host.log.info(`claude: the proxy moved; ${file} now points Claude Code at ${url}`);
    } catch (e) {
      this.host.log.warn(`claude: could not update ${file}: ${errorText(e)}`);
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
