/**
 * Spillway: Route OpenCode Through Spillway, Route Kilo Through Spillway and Route pi Through Spillway,
 * with their Stop twins.
 *
 * These agents keep their providers' base URLs in a JSON file of the user's (OpenCode's global
 * opencode.json, Kilo's kilo.json, pi's models.json); routing points the Anthropic and OpenAI providers there at the
 * running proxy after a modal that names the file and the values, and stopping (on demand, or when the
 * proxy is turned off) removes only what Spillway wrote. Which values are Spillway's is told by the
 * proxy URLs it routed to, kept in globalState (the files are global too); a value the user set is left
 * alone with a warning. The editing is src/proxy/opencodeConfig.ts and piConfig.ts (no `vscode`), the
 * code the real-agent suite configures both agents with. Writes are atomic (temp + rename).
 */
import * as vscode from 'vscode';
import { existsSync, readFileSync } from 'node:fs';
import { kiloConfigPath, opencodeConfigPath, routeKilo, routeOpenCode, unrouteKilo, unrouteOpenCode } from '../proxy/opencodeConfig';
import { piModelsPath, routePi, unroutePi } from '../proxy/piConfig';
import type { BaseUrlEdit } from '../proxy/baseUrlConfig';
import type { JsonEdit } from '../proxy/jsonFile';
import { errorText, type SpillwayHost } from './host';
import { writeAtomic } from './pure/writeAtomic';

const ROUTE = 'Route';

/** One agent whose base URLs live in a JSON file. */
interface BaseUrlAgent {
  /** as people name it */
  name: string;
  routeCommand: string;
  unrouteCommand: string;
  /** globalState key: the proxy URLs Spillway routed this agent to */
  stateKey: string;
  file(): string;
  /** the settings the route writes, for the modal */
  describe(url: string): string;
  route(text: string, url: string, earlier: readonly string[], file: string): BaseUrlEdit;
  unroute(text: string, ours: readonly string[], file: string): JsonEdit;
}

/** What the OpenCode-family route writes (OpenCode's and Kilo's files alike), for the modal. */
const openCodeFamilyValues = (url: string) =>
  `provider.anthropic.options.baseURL = "${url}/v1"\nprovider.openai.options.baseURL = "${url}/v1"`;

const AGENTS: readonly BaseUrlAgent[] = [
  {
    name: 'OpenCode',
    routeCommand: 'spillway.routeOpenCode',
    unrouteCommand: 'spillway.unrouteOpenCode',
    stateKey: 'spillway.opencodeRoute',
    file: () => opencodeConfigPath(),
    describe: openCodeFamilyValues,
    route: routeOpenCode,
    unroute: unrouteOpenCode,
  },
  {
    name: 'Kilo',
    routeCommand: 'spillway.routeKilo',
    unrouteCommand: 'spillway.unrouteKilo',
    stateKey: 'spillway.kiloRoute',
    file: () => kiloConfigPath(),
    describe: openCodeFamilyValues,
    route: routeKilo,
    unroute: unrouteKilo,
  },
  {
    name: 'pi',
    routeCommand: 'spillway.routePi',
    unrouteCommand: 'spillway.unroutePi',
    stateKey: 'spillway.piRoute',
    file: () => piModelsPath(),
    describe: (url) => `providers.anthropic.baseUrl = "${url}"\nproviders.openai.baseUrl = "${url}/v1"`,
    route: routePi,
    unroute: unroutePi,
  },
];

interface BaseUrlRouteResult {
  file: string;
  changed: boolean;
}

function readOrEmpty(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

class BaseUrlRoute implements vscode.Disposable {
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly agent: BaseUrlAgent,
    private readonly host: SpillwayHost,
    private readonly proxyUrl: () => string | undefined,
  ) {
    this.disposables = [
      vscode.commands.registerCommand(agent.routeCommand, () => this.route()),
      vscode.commands.registerCommand(agent.unrouteCommand, () => this.unroute(false)),
    ];
  }

  private urls(): string[] {
    const s = this.host.context.globalState.get<unknown>(this.agent.stateKey);
    return Array.isArray(s) ? s.filter((u): u is string => typeof u === 'string') : [];
  }

  /** Points the agent's providers at the proxy after the user confirms it. */
  async route(): Promise<BaseUrlRouteResult | undefined> {
    const { name } = this.agent;
    const url = this.proxyUrl();
    const file = this.agent.file();
    if (!url) {
      this.host.notify(
        'warning',
        `Spillway: the proxy is not running; enable spillway.proxy.enabled first, then route ${name} through it.`,
      );
      return undefined;
    }
    const earlier = this.urls();
    let edit: BaseUrlEdit;
    try {
      edit = this.agent.route(readOrEmpty(file), url, earlier, file);
    } catch (e) {
      this.host.notify('warning', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
    for (const w of edit.warnings) this.host.notify('warning', `Spillway: ${w}`);
    if (!edit.changed) {
      if (edit.warnings.length === 0) this.host.notify('info', `Spillway: ${name} already goes through Spillway (${file}).`);
      return { file, changed: false };
    }
    const answer = await vscode.window.showWarningMessage(
      `Route ${name} through Spillway in ${file}? ${name} started afterwards sends its model calls through the Spillway proxy.`,
      {
        modal: true,
        detail: `${this.agent.describe(url)}\n\nThe rest of the file stays as it is; Stop Routing ${name} Through Spillway (or turning the proxy off) removes these again.`,
      },
      ROUTE,
    );
    if (answer !== ROUTE) return { file, changed: false };
    try {
      // computed again: the file may have changed while the dialog was open
      writeAtomic(file, this.agent.route(readOrEmpty(file), url, earlier, file).text);
    } catch (e) {
      this.host.notify('warning', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
    await this.host.context.globalState.update(this.agent.stateKey, [...new Set([...earlier, url])]);
    this.host.log.info(`${name}: routed to ${url} in ${file}`);
    this.host.notify('info', `Spillway: ${name} now goes through Spillway (${file}).`);
    return { file, changed: true };
  }

  /** Removes what the route wrote. `quiet` when the proxy stops (no message unless something changed or went wrong). */
  unroute(quiet: boolean): BaseUrlRouteResult {
    const { name } = this.agent;
    const file = this.agent.file();
    const ours = this.urls();
    if (quiet && ours.length === 0) return { file, changed: false };
    try {
      const text = readOrEmpty(file);
      const edit = text === '' ? { text, changed: false } : this.agent.unroute(text, ours, file);
      if (edit.changed) writeAtomic(file, edit.text);
      void this.host.context.globalState.update(this.agent.stateKey, undefined);
      if (edit.changed) this.host.log.info(`${name}: removed Spillway's route from ${file}`);
      if (!quiet || edit.changed) {
        this.host.notify(
          'info',
          edit.changed
            ? `Spillway: ${name} no longer goes through Spillway (${file}).`
            : `Spillway: ${file} has no route from Spillway; nothing to remove.`,
        );
      }
      return { file, changed: edit.changed };
    } catch (e) {
      this.host.notify('warning', `Spillway: ${errorText(e)}`);
      return { file, changed: false };
    }
  }

  /** After a restart on another port: moves Spillway's values (if routed) to the new URL. */
  follow(url: string): void {
    const earlier = this.urls();
    if (earlier.length === 0 || earlier.includes(url)) return;
    const file = this.agent.file();
    try {
      const edit = this.agent.route(readOrEmpty(file), url, earlier, file);
      if (edit.changed) writeAtomic(file, edit.text);
      void this.host.context.globalState.update(this.agent.stateKey, [...earlier, url]);
      this.host.log.info(`${this.agent.name}: the proxy moved; ${file} now points at ${url}`);
    } catch (e) {
      this.host.log.warn(`${this.agent.name}: could not update ${file}: ${errorText(e)}`);
    }
  }

  dispose(): void {
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

/** The routes of every agent configured by a JSON base URL, handled together by the proxy's lifecycle. */
export class BaseUrlRoutes implements vscode.Disposable {
  private readonly routes: BaseUrlRoute[];

  constructor(host: SpillwayHost, proxyUrl: () => string | undefined) {
    this.routes = AGENTS.map((a) => new BaseUrlRoute(a, host, proxyUrl));
  }

  unroute(quiet: boolean): void {
    for (const r of this.routes) r.unroute(quiet);
  }

  follow(url: string): void {
    for (const r of this.routes) r.follow(url);
  }

  dispose(): void {
    for (const r of this.routes) r.dispose();
  }
}
