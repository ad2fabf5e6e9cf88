/**
 * Spillway: Route Codex Through Spillway, and Stop Routing Codex Through Spillway.
 *
 * Current Codex ignores `OPENAI_BASE_URL`; it reads `openai_base_url` from `$CODEX_HOME/config.toml`
 * (default `~/.codex`). Routing adds that one line, pointing at the running proxy, after a modal
 * confirmation that shows the exact line and file; stopping (on demand, or when the proxy is turned
 * off) removes only the line Spillway added, recognised by its marker comment. The editing itself is
 * src/proxy/codexConfig.ts (no `vscode`), the same code the real-agent suite writes Codex's config with.
 * Next to the line, under the same rules, goes Spillway's `[mcp_servers.spillway]` table, so Codex
 * reads back what markers hide through `spillway mcp` (allowed once: no approval per read).
 * A file that does not parse as TOML is reported, never rewritten. Writes are atomic (temp + rename).
 */
import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import {
  addCodexBaseUrl,
  addCodexMcpServer,
  codexBaseUrl,
  codexConfigPath,
  codexLine,
  CodexConfigError,
  removeCodexBaseUrl,
  removeCodexMcpServer,
  spillwayCodexBaseUrl,
  type CodexEdit,
} from '../proxy/codexConfig';
import { errorText, type SpillwayHost } from './host';
import { writeAtomic } from './pure/writeAtomic';
import { launchFor } from './mcp';

const ROUTE_CODEX = 'spillway.routeCodex';
const UNROUTE_CODEX = 'spillway.unrouteCodex';
const ADD = 'Add Line';

export interface CodexRouteResult {
  file: string;
  /** the line added, or undefined when nothing was written */
  line?: string;
  changed: boolean;
}

export class CodexRoute implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly host: SpillwayHost,
    private readonly proxyUrl: () => string | undefined,
  ) {
    this.disposables = [
      vscode.commands.registerCommand(ROUTE_CODEX, () => this.route()),
      vscode.commands.registerCommand(UNROUTE_CODEX, () => this.unroute(false)),
    ];
  }

  /** Adds (or updates) Spillway's `openai_base_url` line after the user confirms it. */
  async route(): Promise<CodexRouteResult | undefined> {
    const url = this.proxyUrl();
    const file = codexConfigPath();
    if (!url) {
      this.host.notify('warning', 'Spillway: the proxy is not running; enable spillway.proxy.enabled first, then route Codex through it.');
      return undefined;
    }
    const base = codexBaseUrl(url);
    const line = codexLine(base);
    let text: string;
    try {
      text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    } catch (e) {
      this.host.notify('error', `Spillway: cannot read ${file}: ${errorText(e)}`);
      return undefined;
    }
    let edit;
    try {
      edit = this.withMcpServer(addCodexBaseUrl(text, base, file), file);
    } catch (e) {
      this.host.notify(e instanceof CodexConfigError ? 'warning' : 'error', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
    if (!edit.changed) {
      this.host.notify('info', `Spillway: Codex already goes through Spillway (${file} has the line).`);
      return { file, line, changed: false };
    }
    const answer = await vscode.window.showWarningMessage(
      `Add this line to ${file}? Codex started afterwards sends its model calls through the Spillway proxy.`,
      {
        modal: true,
        detail: `${line}\n\nand, at the end, Spillway's [mcp_servers.spillway] table (read-backs through spillway mcp).\n\nThe rest of the file stays as it is; Spillway: Stop Routing Codex Through Spillway (or turning the proxy off) removes both.`,
      },
      ADD,
    );
    if (answer !== ADD) return { file, changed: false };
    try {
      // read again: the file may have changed while the dialog was open
      const now = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const fresh = now === text ? edit : this.withMcpServer(addCodexBaseUrl(now, base, file), file);
      writeAtomic(file, fresh.text);
    } catch (e) {
      this.host.notify(e instanceof CodexConfigError ? 'warning' : 'error', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
    for (const w of edit.warnings) this.host.notify('warning', `Spillway: ${w}`);
    this.host.log.info(`codex: added openai_base_url = "${base}" to ${file}`);
    this.host.notify('info', `Spillway: Codex now goes through Spillway (${file}).`);
    return { file, line, changed: true };
  }

  /**
   * `edit` plus Spillway's MCP server table. A `spillway` server the user configured themselves stays
   * theirs: the route goes ahead without the table, and a warning says why.
   */
  private withMcpServer(edit: CodexEdit, file: string): CodexEdit {
    try {
      const server = addCodexMcpServer(edit.text, launchFor(this.host), file);
      return { ...server, changed: edit.changed || server.changed, warnings: edit.warnings };
    } catch (e) {
      if (!(e instanceof CodexConfigError) || e.reason !== 'user-value') throw e;
      return { ...edit, warnings: [...edit.warnings, errorText(e)] };
    }
  }

  /** Removes Spillway's line, if there is one. `quiet` when the proxy stops (no message unless something went wrong). */
  unroute(quiet: boolean): CodexRouteResult {
    const file = codexConfigPath();
    try {
      if (!existsSync(file)) {
        if (!quiet) this.host.notify('info', `Spillway: ${file} does not exist; Codex is not routed through Spillway.`);
        return { file, changed: false };
      }
      const text = readFileSync(file, 'utf8');
      if (quiet && !text.includes('# added by Spillway')) return { file, changed: false };
      const lineGone = removeCodexBaseUrl(text, file);
      const serverGone = removeCodexMcpServer(lineGone.text, file);
      const edit = { text: serverGone.text, changed: lineGone.changed || serverGone.changed };
      if (edit.changed) {
        writeAtomic(file, edit.text);
        this.host.log.info(`codex: removed Spillway's openai_base_url line from ${file}`);
      }
      if (!quiet || edit.changed) {
        this.host.notify(
          'info',
          edit.changed
            ? `Spillway: Codex no longer goes through Spillway (removed the line from ${file}).`
            : `Spillway: ${file} has no line from Spillway; nothing to remove.`,
        );
      }
      return { file, changed: edit.changed };
    } catch (e) {
      this.host.notify('warning', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
  }

  /** After a restart on another port: moves Spillway's line (if the user routed Codex) to the new URL. */
  follow(url: string): void {
    const file = codexConfigPath();
    try {
      if (!existsSync(file)) return;
      const text = readFileSync(file, 'utf8');
      const base = codexBaseUrl(url);
      const current = spillwayCodexBaseUrl(text);
      if (current === undefined || current === base) return;
      writeAtomic(file, addCodexBaseUrl(text, base, file).text);
      this.host.log.info(`codex: the proxy moved; ${file} now points Codex at ${base}`);
    } catch (e) {
      this.host.log.warn(`codex: could not update ${file}: ${errorText(e)}`);
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}
