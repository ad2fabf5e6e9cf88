/**
 * Copilot through Spillway: the `spillway` chat model vendor (VS Code 1.104+), its models from
 * `spillway.languageModels`, their keys in SecretStorage, and the Add / Manage commands. On an
 * older VS Code nothing is registered but the commands, hidden from the palette there
 * (`spillway.lmProviderAvailable`, pure/features.ts), which say why when run anyway.
 */
import * as vscode from 'vscode';
import type { SpillwayHost } from '../host';
import { SECTION } from '../pure/settings';
import { API_LABEL, CHAT_APIS, MODELS_SETTING, ModelEntry, VENDOR, modelId, parseModels, type ChatApi, type ChatModel } from './models';
import { ModelKeys } from './secrets';
import { ChatRecorder, copilotSessionsDir } from './sessions';
import { SpillwayChatProvider } from './provider';
import { lmApi } from './lmApi';
import { pruneRecordings } from '../../proxy/recording';

const CHAT_COMMANDS = {
  add: 'spillway.addLanguageModel',
  manage: 'spillway.manageLanguageModels',
} as const;

export interface ChatRegistration extends vscode.Disposable {
  /** whether this VS Code has the provider API (and the vendor is registered); the caller logs why not (pure/features.ts) */
  readonly registered: boolean;
  readonly sessionsDir: () => string;
}

export function registerChat(host: SpillwayHost, onDidRecord: () => void): ChatRegistration {
  const disposables: vscode.Disposable[] = [];
  const keys = new ModelKeys(host.context.secrets);
  const changed = new vscode.EventEmitter<void>();
  disposables.push(changed);
  let models: ChatModel[] = [];
  const warned = new Set<string>();
  const load = () => {
    const r = parseModels(vscode.workspace.getConfiguration(SECTION).get(MODELS_SETTING));
    models = r.models;
    for (const p of r.problems) {
      host.log.warn(p);
      if (!warned.has(p)) host.notify('warning', p);
      warned.add(p);
    }
    host.log.info(`chat models: ${models.map((m) => `${m.name} (${m.api} ${m.model})`).join(', ') || 'none'}`);
  };
  load();
  disposables.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(`${SECTION}.${MODELS_SETTING}`)) return;
      load();
      changed.fire();
    }),
  );
  const sessionsDir = () => copilotSessionsDir(host.storeDir);
  const recorder = new ChatRecorder(sessionsDir, (line) => host.log.warn(line));
  // recordings follow the store's retention, like the proxy's: first a minute after activation, then hourly
  const prune = () => {
    try {
      const r = pruneRecordings(sessionsDir(), {
        maxAgeDays: host.storage.retentionDays,
        maxBodyBytes: host.storage.maxMegabytes * 1024 * 1024,
      });
      if (r.sessions + r.bodies > 0) host.log.info(`pruned the Copilot recordings: ${r.sessions} sessions, ${r.bodies} bodies`);
    } catch (e) {
      host.log.error(`pruning the Copilot recordings failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  const first = setTimeout(prune, 60_000);
  const every = setInterval(prune, 60 * 60 * 1000);
  disposables.push({ dispose: () => (clearTimeout(first), clearInterval(every)) });
  const api = lmApi();
  if (api) {
    const provider = new SpillwayChatProvider({
      host,
      models: () => models,
      keys,
      recorder,
      onDidRecord,
      onDidChangeModels: changed.event,
    });
    disposables.push(api.registerLanguageModelChatProvider(VENDOR, provider));
    host.log.info(`registered the ${VENDOR} language model vendor`);
  }
  disposables.push(
    vscode.commands.registerCommand(CHAT_COMMANDS.add, () => addModel(host, keys)),
    vscode.commands.registerCommand(CHAT_COMMANDS.manage, () => manageModels(host, keys, () => models)),
  );
  return { registered: !!api, sessionsDir, dispose: () => disposables.splice(0).forEach((d) => d.dispose()) };
}

// ---------------------------------------------------------------- commands

async function writeEntries(entries: unknown[]): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update(MODELS_SETTING, entries, vscode.ConfigurationTarget.Global);
}

function currentEntries(): unknown[] {
  const v = vscode.workspace.getConfiguration(SECTION).get(MODELS_SETTING);
  return Array.isArray(v) ? [...v] : [];
}

async function askEntry(start?: ModelEntry): Promise<ModelEntry | undefined> {
  const api = await vscode.window.showQuickPick(
    CHAT_APIS.map((a) => ({ label: API_LABEL[a], api: a, picked: a === start?.api })),
    { title: 'Spillway: endpoint kind', ignoreFocusOut: true },
  );
  if (!api) return undefined;
  const defaults: Record<ChatApi, string> = {
    'openai-responses': 'https://api.openai.com/v1',
    'openai-chat': 'https://api.openai.com/v1',
    anthropic: 'https://api.anthropic.com',
  };
  const baseUrl = await vscode.window.showInputBox({
    title: 'Spillway: base URL',
    value: start?.baseUrl ?? defaults[api.api],
    ignoreFocusOut: true,
    validateInput: (v) => (ModelEntry.shape.baseUrl.safeParse(v).success ? undefined : 'an http(s) URL, e.g. https://api.openai.com/v1'),
  });
  if (!baseUrl) return undefined;
  const model = await vscode.window.showInputBox({
    title: 'Spillway: model id',
    value: start?.model,
    prompt: 'e.g. gpt-5, claude-sonnet-4-5, qwen3-coder',
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'a model id'),
  });
  if (!model) return undefined;
  const name = await vscode.window.showInputBox({
    title: 'Spillway: name in the model picker',
    value: start?.name ?? model,
    ignoreFocusOut: true,
    validateInput: (v) => (v.trim() ? undefined : 'a name'),
  });
  if (!name) return undefined;
  const max = await vscode.window.showInputBox({
    title: 'Spillway: context size in tokens (empty: 128000)',
    value: start?.maxInputTokens ? String(start.maxInputTokens) : '',
    ignoreFocusOut: true,
    validateInput: (v) => (v === '' || /^[1-9]\d*$/.test(v) ? undefined : 'a whole number'),
  });
  if (max === undefined) return undefined;
  return { name: name.trim(), api: api.api, baseUrl: baseUrl.trim(), model: model.trim(), ...(max ? { maxInputTokens: Number(max) } : {}) };
}

async function askKey(host: SpillwayHost, keys: ModelKeys, id: string, name: string): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: `Spillway: API key for ${name} (empty: send none)`,
    password: true,
    ignoreFocusOut: true,
    prompt: "Kept in VS Code's secret storage only",
  });
  if (key === undefined) return;
  await keys.set(id, key.trim() || undefined);
  host.log.info(`${name}: key ${key.trim() ? 'stored in secret storage' : 'removed'}`);
}

async function addModel(host: SpillwayHost, keys: ModelKeys): Promise<void> {
  const entry = await askEntry();
  if (!entry) return;
  await askKey(host, keys, modelId(entry), entry.name);
  await writeEntries([...currentEntries(), entry]);
  host.notify('info', `${entry.name} · Spillway is in the chat model picker${lmApi() ? '' : ' on VS Code 1.104 or later'}.`);
}

async function manageModels(host: SpillwayHost, keys: ModelKeys, models: () => ChatModel[]): Promise<void> {
  const list = models();
  const pick = await vscode.window.showQuickPick(
    [
      ...list.map((m) => ({ label: m.name, description: `${m.api} · ${m.model}`, detail: m.baseUrl, model: m as ChatModel | undefined })),
      { label: '$(add) Add Language Model…', model: undefined },
    ],
    { title: 'Spillway: language models' },
  );
  if (!pick) return;
  if (!pick.model) return addModel(host, keys);
  const m = pick.model;
  const action = await vscode.window.showQuickPick(['Edit', 'Set API Key', 'Remove'], { title: `Spillway: ${m.name}` });
  const entries = currentEntries();
  const index = entries.findIndex((e) => {
    const r = ModelEntry.safeParse(e);
    return r.success && modelId(r.data) === m.id;
  });
  if (action === 'Set API Key') return askKey(host, keys, m.id, m.name);
  if (action === 'Remove') {
    if (index >= 0) entries.splice(index, 1);
    await keys.delete(m.id);
    await writeEntries(entries);
    return;
  }
  if (action === 'Edit') {
    const { id: _id, ...start } = m;
    const entry = await askEntry(start);
    if (!entry) return;
    const newId = modelId(entry);
    if (newId !== m.id) {
      // the key follows the model to its new id
      const key = await keys.get(m.id);
      await keys.set(newId, key);
      await keys.delete(m.id);
    }
    if (index >= 0) entries[index] = entry;
    else entries.push(entry);
    await writeEntries(entries);
  }
}
