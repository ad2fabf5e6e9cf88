/**
 * Spillway's VS Code extension: hosts the reduction engine, keeps full tool outputs in the
 * workspace store, opens them as `spillway:` documents, and offers them to in-editor agents through
 * the `spillway_read_output` language model tool.
 *
 * `activate()` returns the extension API (see SpillwayApi) for other extensions and for tests.
 */
import * as vscode from 'vscode';
import { SpillwayHost, type ProjectOptions, type ReadOptions } from './host';
import { StoredOutputFileSystem } from './documents';
import { registerCommands } from './commands';
import { registerReadTool } from './readTool';
import { registerExtractTool } from './extractTool';
import { registerMcpProvider } from './mcp';
import { Inspector } from './inspector/panel';
import { ProxyController } from './proxy';
import { registerChat } from './chat';
import { SCHEME } from './pure/documents';
import { FEATURE_CONTEXT, featuresLogLine, type FeatureState } from './pure/features';
import type { WireFormat } from '../engine/types';

export interface SpillwayApi {
  /**
   * Projects a request (JSON text or object) the way Spillway would before a model call. Resolves
   * once the outputs its markers point at are on disk; if they cannot be written, with the original
   * request unchanged and `failOpen` saying why.
   */
  project(request: string | object, format?: WireFormat | 'auto', options?: ProjectOptions): ReturnType<SpillwayHost['project']>;
  /** Reads a stored output, whole or in part (`lines: "A:B"`, `grep`, `context`, `offset`/`limit`). */
  read(handle: string, options?: ReadOptions): ReturnType<SpillwayHost['read']>;
  /** The `spillway:` URI that opens a stored output as a read-only document. */
  documentUri(handle: string): vscode.Uri;
}

/** What `start` builds: the API, and the parts a test build (test/vscode/bridge/) reaches into. */
export interface Started {
  api: SpillwayApi;
  host: SpillwayHost;
  inspector: Inspector;
}

export function activate(context: vscode.ExtensionContext): SpillwayApi {
  return start(context).api;
}

/**
 * Builds everything `activate` does. The real-VS-Code tests build their own entry around this
 * (test/vscode/bridge/extension.ts) that adds their test bridge; the shipped bundle has none.
 */
export function start(context: vscode.ExtensionContext): Started {
  const log = vscode.window.createOutputChannel('Spillway', { log: true });
  context.subscriptions.push(log);
  const host = new SpillwayHost(context, log);
  current = host;
  context.subscriptions.push(host);
  context.subscriptions.push(
    vscode.workspace.registerFileSystemProvider(SCHEME, new StoredOutputFileSystem(host), { isCaseSensitive: true, isReadonly: true }),
    ...registerCommands(host),
    registerReadTool(host),
    registerExtractTool(host),
  );
  // VS Code 1.101+: `spillway mcp` for every MCP client in the editor (the read tool above stays for older ones)
  const mcp = registerMcpProvider(host);
  context.subscriptions.push(mcp);
  const inspector = new Inspector(host);
  context.subscriptions.push(inspector);
  // spillway.proxy.*: records next to the store, where the inspector's proxy source reads; a new turn refreshes it at once
  const proxy = new ProxyController(host, context);
  context.subscriptions.push(
    proxy,
    proxy.onDidRecordTurn(() => inspector.proxy.refresh()),
  );
  // the spillway chat model vendor (VS Code 1.104+): Copilot's turns projected, recorded as copilot sessions
  const chat = registerChat(host, () => inspector.copilot.refresh());
  context.subscriptions.push(chat);
  offerFeatures(host, [
    {
      id: 'lmProvider',
      available: chat.registered,
      why: 'needs the language model chat provider API of VS Code 1.104 or later',
    },
    { id: 'mcpProvider', available: mcp.registered, ...(mcp.why ? { why: mcp.why } : {}) },
  ]);
  const api: SpillwayApi = {
    project: (request, format, options) => host.project(request, format, options),
    read: (handle, options) => host.read(handle, options),
    documentUri: (handle) => host.documentUri(handle),
  };
  log.info(`Spillway activated in VS Code ${vscode.version}`);
  return { api, host, inspector };
}

/**
 * Sets each feature's context key (package.json's `when` clauses hide the commands of a missing one)
 * and says once in the log what this VS Code does not offer and why.
 */
function offerFeatures(host: SpillwayHost, features: FeatureState[]): void {
  for (const f of features) void vscode.commands.executeCommand('setContext', FEATURE_CONTEXT[f.id], f.available);
  host.log.info(featuresLogLine(vscode.version, features));
}

/** The running host, so `deactivate` can wait for its store writes. */
let current: SpillwayHost | undefined;

/** Everything else is in context.subscriptions; VS Code awaits this before the host goes away. */
export function deactivate(): Promise<void> | undefined {
  return current?.flush();
}
