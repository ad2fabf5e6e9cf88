/**
 * Spillway: Route Codex Through Spillway, and Stop Routing Codex Through Spillway.
 *
 * Current Codex ignores `OPENAI_BASE_URL`; it reads `$CODEX_HOME/config.toml` (default `~/.codex`).
 * How Codex is signed in decides what goes there, read from the mode in `auth.json` (never its
 * tokens): with an API key, one `openai_base_url` line pointing at the running proxy; with ChatGPT,
 * Spillway's own model provider (a `model_provider` line and a `[model_providers.spillway]` block,
 * base URL the proxy's `/backend-api/codex`). Either goes in after a modal confirmation that shows
 * the exact entries, the file and the sign-in found; stopping (on demand, or when the proxy is turned
 * off) removes only what Spillway added, recognised by its marker comments. The editing itself is
 * src/proxy/codexConfig.ts (no `vscode`), the same code the real-agent suite writes Codex's config with.
 * Next to the line, under the same rules, goes Spillway's `[mcp_servers.spillway]` table, so Codex
 * reads back what markers hide through `spillway mcp` (allowed once: no approval per read).
 * A file that does not parse as TOML is reported, never rewritten. Writes are atomic (temp + rename).
 */
import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import {
  addCodexBaseUrl,
  addCodexChatgptRoute,
  addCodexMcpServer,
  codexAuthMode,
  codexAuthPath,
  codexBaseUrl,
  codexChatgptBaseUrl,
  codexConfigPath,
  codexLine,
  CodexConfigError,
  codexProviderBlock,
  codexProviderLine,
  removeCodexBaseUrl,
  removeCodexChatgptRoute,
  removeCodexMcpServer,
  spillwayCodexBaseUrl,
  spillwayCodexProviderUrl,
  type CodexEdit,
  type CodexSignIn,
} from '../proxy/codexConfig';
import { errorText, type SpillwayHost } from './host';
import { writeAtomic } from './pure/writeAtomic';
import { launchFor } from './mcp';

const ROUTE_CODEX = 'spillway.routeCodex';
const UNROUTE_CODEX = 'spillway.unrouteCodex';
const ADD = 'Add Line';
const ADD_PROVIDER = 'Add Provider';

export interface CodexRouteResult {
  file: string;
  /** the entries added (the line, or the provider line and block), or undefined when nothing was written */
  line?: string;
  changed: boolean;
  /** how Codex is signed in, as auth.json says: which entries were chosen */
  signIn?: 'chatgpt' | 'apikey' | 'none' | 'other';
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

  /**
   * Routes Codex through the running proxy after the user confirms the exact entries: how Codex is
   * signed in (the mode in auth.json, never its tokens) decides them. An API key (or no sign-in
   * Spillway can see): the `openai_base_url` line. ChatGPT: Spillway's own model provider, which
   * sends the ChatGPT tokens to the proxy's `/backend-api/codex` (codexConfig.ts says why).
   */
  async route(): Promise<CodexRouteResult | undefined> {
    const url = this.proxyUrl();
    const file = codexConfigPath();
    if (!url) {
      this.host.notify('warning', 'Spillway: the proxy is not running; enable spillway.proxy.enabled first, then route Codex through it.');
      return undefined;
    }
    const authFile = codexAuthPath();
    let signIn: CodexSignIn;
    try {
      signIn = codexAuthMode(existsSync(authFile) ? readFileSync(authFile, 'utf8') : undefined);
    } catch (e) {
      this.host.notify('warning', `Spillway: ${authFile}: ${errorText(e)}; Codex was not routed.`);
      return { file, changed: false };
    }
    if (typeof signIn === 'object') {
      this.host.notify(
        'warning',
        `Spillway: Codex is signed in with "${signIn.other}" (${authFile}); Spillway routes Codex signed in with an API key or with ChatGPT, so ${file} was left unchanged.`,
      );
      return { file, changed: false, signIn: 'other' };
    }
    const chatgpt = signIn === 'chatgpt';
    const plan = (from: string): CodexEdit =>
      this.withMcpServer(
        chatgpt
          ? addCodexChatgptRoute(from, url, file)
          : addCodexBaseUrl(removeCodexChatgptRoute(from, file).text, codexBaseUrl(url), file),
        file,
      );
    const line = chatgpt
      ? `${codexProviderLine()}\n\n${codexProviderBlock(codexChatgptBaseUrl(url)).trimEnd()}`
      : codexLine(codexBaseUrl(url));
    const how = chatgpt
      ? `Codex is signed in with ChatGPT (${authFile}): it gets Spillway's own model provider, which sends its ChatGPT sign-in to the proxy at ${codexChatgptBaseUrl(url)}`
      : `Codex ${signIn === 'apikey' ? 'is signed in with an API key' : `has no sign-in in ${authFile} (an API key in its environment is assumed)`}: openai_base_url sends its model calls to the proxy`;
    let text: string;
    try {
      text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    } catch (e) {
      this.host.notify('error', `Spillway: cannot read ${file}: ${errorText(e)}`);
      return undefined;
    }
    let edit;
    try {
      edit = plan(text);
    } catch (e) {
      this.host.notify(e instanceof CodexConfigError ? 'warning' : 'error', `Spillway: ${errorText(e)}`);
      return { file, changed: false, signIn };
    }
    if (!edit.changed) {
      this.host.notify('info', `Spillway: Codex already goes through Spillway (${file} has Spillway's entries).`);
      return { file, line, changed: false, signIn };
    }
    const add = chatgpt ? ADD_PROVIDER : ADD;
    const answer = await vscode.window.showWarningMessage(
      `Add ${chatgpt ? 'these entries' : 'this line'} to ${file}? ${how}; Codex started afterwards sends its model calls through the Spillway proxy.`,
      {
        modal: true,
        detail: `${line}\n\nand, at the end, Spillway's [mcp_servers.spillway] table (read-backs through spillway mcp).\n\nThe rest of the file stays as it is; Spillway: Stop Routing Codex Through Spillway (or turning the proxy off) removes ${chatgpt ? 'them' : 'both'}.`,
      },
      add,
    );
    if (answer !== add) return { file, changed: false, signIn };
    try {
      // read again: the file may have changed while the dialog was open
      const now = existsSync(file) ? readFileSync(file, 'utf8') : '';
      const fresh = now === text ? edit : plan(now);
      writeAtomic(file, fresh.text);
    } catch (e) {
      this.host.notify(e instanceof CodexConfigError ? 'warning' : 'error', `Spillway: ${errorText(e)}`);
      return { file, changed: false, signIn };
    }
    for (const w of edit.warnings) this.host.notify('warning', `Spillway: ${w}`);
    if (chatgpt) {
      this.host.log.info(
        `codex: signed in with ChatGPT (auth_mode in ${authFile}); added model_provider = "spillway" and [model_providers.spillway] with base_url = "${codexChatgptBaseUrl(url)}" to ${file}`,
      );
      this.host.notify(
        'info',
        `Spillway: Codex (signed in with ChatGPT) now goes through Spillway: ${file} selects Spillway's model provider, which sends its model calls and ChatGPT sign-in to ${codexChatgptBaseUrl(url)}.`,
      );
    } else {
      this.host.log.info(`codex: added openai_base_url = "${codexBaseUrl(url)}" to ${file}`);
      this.host.notify('info', `Spillway: Codex now goes through Spillway (${file}: openai_base_url = "${codexBaseUrl(url)}").`);
    }
    return { file, line, changed: true, signIn };
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
      const providerGone = removeCodexChatgptRoute(lineGone.text, file);
      const serverGone = removeCodexMcpServer(providerGone.text, file);
      const edit = { text: serverGone.text, changed: lineGone.changed || providerGone.changed || serverGone.changed };
      if (edit.changed) {
        writeAtomic(file, edit.text);
        this.host.log.info(`codex: removed Spillway's ${providerGone.changed ? 'model provider' : 'openai_base_url line'} from ${file}`);
      }
      if (!quiet || edit.changed) {
        this.host.notify(
          'info',
          edit.changed
            ? `Spillway: Codex no longer goes through Spillway (removed Spillway's entries from ${file}).`
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
      const provider = spillwayCodexProviderUrl(text);
      if (provider !== undefined) {
        if (provider === codexChatgptBaseUrl(url)) return;
        writeAtomic(file, addCodexChatgptRoute(text, url, file).text);
        this.host.log.info(`codex: the proxy moved; ${file} now points Spillway's model provider at ${codexChatgptBaseUrl(url)}`);
        return;
      }
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
