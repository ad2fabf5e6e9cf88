/**
 * Spillway: Route Gemini CLI Through Spillway, and Stop Routing Gemini CLI Through Spillway.
 *
 * Gemini CLI reads its base URL from `GOOGLE_GEMINI_BASE_URL` only, and with it set it refuses to run
 * headless unless its settings choose the API key sign-in. Routing therefore does two things, after a
 * modal confirmation that names the file and the entries:
 * - `~/.gemini/settings.json` (or under `$GEMINI_CLI_HOME`) gets `security.auth.selectedType:
 *   "gemini-api-key"` where no sign-in is chosen yet, and Spillway's `mcpServers.spillway` (read-backs
 *   through `spillway mcp`); the editing is src/proxy/geminiConfig.ts (no `vscode`), the same code
 *   the real-agent suite writes Gemini CLI's settings with; every other byte is kept;
 * - while routed, new integrated terminals get `GOOGLE_GEMINI_BASE_URL` pointing at the proxy
 *   (proxy.ts asks `routed`); elsewhere the user sets it (Copy Agent Environment has the line).
 * Stopping (on demand, or when the proxy is turned off) removes only what Spillway added: the server
 * entry, and the sign-in when Spillway chose it (remembered in the global state). A settings file that
 * is not plain JSON (Gemini CLI accepts comments) is reported, never rewritten. Writes are atomic.
 */
import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import {
  addGeminiMcpServer,
  geminiSettingsPath,
  GEMINI_API_KEY_AUTH,
  removeGeminiMcpServer,
  routeGeminiCli,
  unrouteGeminiCli,
} from '../proxy/geminiConfig';
import { geminiBaseUrl } from '../proxy/env';
import { JsonFileError } from '../proxy/jsonFile';
import { errorText, type SpillwayHost } from './host';
import { writeAtomic } from './pure/writeAtomic';
import { launchFor } from './mcp';

const ROUTE_GEMINI = 'spillway.routeGeminiCli';
const UNROUTE_GEMINI = 'spillway.unrouteGeminiCli';
/** What Spillway did to settings.json: whether it chose the sign-in (so it takes only that back). */
const GEMINI_ROUTE_STATE = 'spillway.geminiRoute';
const ROUTE = 'Route Gemini CLI';

interface RouteState {
  file: string;
  signInAdded: boolean;
}

export interface GeminiRouteResult {
  file: string;
  changed: boolean;
}

export class GeminiRoute implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly host: SpillwayHost,
    private readonly context: vscode.ExtensionContext,
    private readonly proxyUrl: () => string | undefined,
    /** called when routing starts or stops, so the terminals' variables follow */
    private readonly changed: () => void,
  ) {
    this.disposables = [
      vscode.commands.registerCommand(ROUTE_GEMINI, () => this.route()),
      vscode.commands.registerCommand(UNROUTE_GEMINI, () => this.unroute(false)),
    ];
  }

  /** Whether Gemini CLI is routed (new terminals then get GOOGLE_GEMINI_BASE_URL). */
  get routed(): boolean {
    return this.context.globalState.get<RouteState>(GEMINI_ROUTE_STATE) !== undefined;
  }

  /** The edited settings text, and whether the sign-in was added by it. */
  private edit(text: string, file: string): { text: string; changed: boolean; signInAdded: boolean } {
    const signIn = routeGeminiCli(text, file);
    const server = addGeminiMcpServer(signIn.text, launchFor(this.host), file);
    return { text: server.text, changed: signIn.changed || server.changed, signInAdded: signIn.added };
  }

  /** Chooses the API key sign-in and adds Spillway's MCP server, after the user confirms. */
  async route(): Promise<GeminiRouteResult | undefined> {
    const url = this.proxyUrl();
    const file = geminiSettingsPath();
    if (!url) {
      this.host.notify(
        'warning',
        'Spillway: the proxy is not running; enable spillway.proxy.enabled first, then route Gemini CLI through it.',
      );
      return undefined;
    }
    let text: string;
    let edit: ReturnType<GeminiRoute['edit']>;
    try {
      text = existsSync(file) ? readFileSync(file, 'utf8') : '';
      edit = this.edit(text, file);
    } catch (e) {
      this.host.notify(e instanceof JsonFileError ? 'warning' : 'error', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
    const base = geminiBaseUrl(url);
    const answer = await vscode.window.showWarningMessage(
      `Route Gemini CLI through Spillway? ${file} gets Spillway's entries; Gemini CLI started with GOOGLE_GEMINI_BASE_URL=${base} then sends its model calls through the proxy.`,
      {
        modal: true,
        detail:
          `${edit.signInAdded ? `"security": { "auth": { "selectedType": "${GEMINI_API_KEY_AUTH}" } } (sign in with GEMINI_API_KEY)\n` : ''}` +
          `"mcpServers": { "spillway": … } (read-backs through spillway mcp)\n\n` +
          `New integrated terminals get GOOGLE_GEMINI_BASE_URL=${base}; elsewhere set it yourself (Copy Agent Environment). ` +
          'The rest of the file stays as it is; Spillway: Stop Routing Gemini CLI Through Spillway (or turning the proxy off) removes what Spillway added.',
      },
      ROUTE,
    );
    if (answer !== ROUTE) return { file, changed: false };
    try {
      // read again: the file may have changed while the dialog was open
      const now = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const fresh = now === text ? edit : this.edit(now, file);
      if (fresh.changed) writeAtomic(file, fresh.text);
      const before = this.context.globalState.get<RouteState>(GEMINI_ROUTE_STATE);
      await this.context.globalState.update(GEMINI_ROUTE_STATE, { file, signInAdded: fresh.signInAdded || (before?.signInAdded ?? false) });
      this.host.log.info(`gemini: routed Gemini CLI through Spillway in ${file}${fresh.signInAdded ? ' (API key sign-in chosen)' : ''}`);
      this.changed();
      this.host.notify(
        'info',
        `Spillway: Gemini CLI now goes through Spillway from new terminals (GOOGLE_GEMINI_BASE_URL=${base}; ${file} updated).`,
      );
      return { file, changed: fresh.changed };
    } catch (e) {
      this.host.notify(e instanceof JsonFileError ? 'warning' : 'error', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
  }

  /** Removes what Spillway added. `quiet` when the proxy stops (no message unless something changed or failed). */
  unroute(quiet: boolean): GeminiRouteResult {
    const state = this.context.globalState.get<RouteState>(GEMINI_ROUTE_STATE);
    const file = state?.file ?? geminiSettingsPath();
    if (quiet && !state) return { file, changed: false };
    try {
      let changed = false;
      if (existsSync(file)) {
        const text = readFileSync(file, 'utf8');
        const server = removeGeminiMcpServer(text, file);
        const signIn = unrouteGeminiCli(server.text, state?.signInAdded ?? false, file);
        changed = server.changed || signIn.changed;
        if (changed) {
          writeAtomic(file, signIn.text);
          this.host.log.info(`gemini: removed Spillway's entries from ${file}`);
        }
      }
      void this.context.globalState.update(GEMINI_ROUTE_STATE, undefined);
      this.changed();
      if (!quiet || changed) {
        this.host.notify(
          'info',
          changed
            ? `Spillway: Gemini CLI no longer goes through Spillway (removed Spillway's entries from ${file}).`
            : `Spillway: ${file} has nothing from Spillway; nothing to remove.`,
        );
      }
      return { file, changed };
    } catch (e) {
      this.host.notify('warning', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
