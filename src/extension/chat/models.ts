/**
 * `spillway.languageModels`: the models the `spillway` chat vendor offers (Copilot's model picker
 * lists them). Each wraps one of the user's endpoints; its key, if any, is in SecretStorage (see
 * secrets.ts), never here. Pure: no `vscode`, so the unit tests read it directly.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { settingJsonSchema } from '../pure/settingSchema';

export const VENDOR = 'spillway';
export const MODELS_SETTING = 'languageModels';
export const CHAT_APIS = ['openai-responses', 'openai-chat', 'anthropic'] as const;
export type ChatApi = (typeof CHAT_APIS)[number];
export const API_LABEL: Record<ChatApi, string> = {
  'openai-responses': 'OpenAI Responses',
  'openai-chat': 'OpenAI Chat Completions (or any compatible server)',
  anthropic: 'Anthropic Messages',
};

/** Context size when the entry does not say: conservative, so Copilot trims before the provider refuses. */
const DEFAULT_MAX_INPUT_TOKENS = 128_000;
const DEFAULT_MAX_OUTPUT_TOKENS = 16_000;

export const ModelEntry = z
  .object({
    name: z.string().trim().min(1).max(80),
    api: z.enum(CHAT_APIS),
    baseUrl: z
      .string()
      .url()
      .refine((u) => /^https?:\/\//i.test(u), 'baseUrl must be an http(s) URL'),
    model: z.string().trim().min(1),
    maxInputTokens: z.number().int().min(1).optional(),
    maxOutputTokens: z.number().int().min(1).optional(),
  })
  .strict();
export type ModelEntry = z.infer<typeof ModelEntry>;

export interface ChatModel extends ModelEntry {
  /** stable id within the vendor (and the SecretStorage key's suffix) */
  id: string;
}

/** The id of an entry: its name, slugged, plus a short hash of name + endpoint + model (so an edit that changes the endpoint is a new model). */
export function modelId(e: Pick<ModelEntry, 'name' | 'baseUrl' | 'model' | 'api'>): string {
  const slug =
    e.name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'model';
  const h = createHash('sha256').update(`${e.name}\n${e.api}\n${e.baseUrl}\n${e.model}`).digest('hex').slice(0, 8);
  return `${slug}-${h}`;
}

/** Reads the setting: good entries become models, each bad one a warning naming it (never a throw). */
export function parseModels(value: unknown): { models: ChatModel[]; problems: string[] } {
  const models: ChatModel[] = [];
  const problems: string[] = [];
  if (value === undefined || value === null) return { models, problems };
  if (!Array.isArray(value)) return { models, problems: [`spillway.${MODELS_SETTING} must be an array of models; ignoring it`] };
  const seen = new Set<string>();
  value.forEach((raw, i) => {
    const name = typeof (raw as { name?: unknown })?.name === 'string' ? JSON.stringify((raw as { name: string }).name) : `#${i + 1}`;
    const r = ModelEntry.safeParse(raw);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      problems.push(
        `spillway.${MODELS_SETTING}[${i}] (${name}): ${issue.path.join('.') || 'entry'}: ${issue.message}; this model is skipped`,
      );
      return;
    }
    const id = modelId(r.data);
    if (seen.has(id)) {
      problems.push(`spillway.${MODELS_SETTING}[${i}] (${name}) repeats an earlier entry; skipped`);
      return;
    }
    seen.add(id);
    models.push({ ...r.data, id });
  });
  return { models, problems };
}

/** What VS Code's `provideLanguageModelChatInformation` returns for a model (LanguageModelChatInformation). */
export function modelInformation(m: ChatModel) {
  return {
    id: m.id,
    name: `${m.name} · Spillway`,
    family: m.model,
    version: `${m.api}:${m.model}`,
    maxInputTokens: m.maxInputTokens ?? DEFAULT_MAX_INPUT_TOKENS,
    maxOutputTokens: m.maxOutputTokens ?? DEFAULT_MAX_OUTPUT_TOKENS,
    detail: API_LABEL[m.api].split(' (')[0],
    tooltip:
      `${m.model} at ${m.baseUrl} (${API_LABEL[m.api]}), through Spillway: big tool results are reduced to a preview ` +
      'plus a handle before each call, and stored in full; the model reads them back with spillway_read_output.',
    capabilities: { toolCalling: true, imageInput: true },
  };
}

/** The endpoint URL for an API: the base URL plus the API's path, unless the base URL already ends with it. */
export function endpointUrl(api: ChatApi, baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  const tail = api === 'openai-responses' ? '/responses' : api === 'openai-chat' ? '/chat/completions' : '/messages';
  if (base.endsWith(tail)) return base;
  if (api === 'anthropic' && !/\/v1$/.test(base)) return `${base}/v1${tail}`;
  return base + tail;
}

/** The Settings UI's text for each field of an entry; the fields' types and bounds come from ModelEntry. */
const ENTRY_TEXT: Record<keyof ModelEntry, Record<string, unknown>> = {
  name: { description: 'Shown in the model picker as "NAME · Spillway".' },
  api: { enumDescriptions: CHAT_APIS.map((a) => API_LABEL[a]), description: "The endpoint's wire format." },
  baseUrl: { description: 'e.g. https://api.openai.com/v1, https://api.anthropic.com, http://127.0.0.1:11434/v1' },
  model: { description: 'The model id the endpoint expects, e.g. gpt-5 or claude-sonnet-4-5.' },
  maxInputTokens: { description: `The model's context size (default ${DEFAULT_MAX_INPUT_TOKENS}).` },
  maxOutputTokens: { description: `Most tokens in one answer (default ${DEFAULT_MAX_OUTPUT_TOKENS}).` },
};

/** The settings.json schema of `spillway.languageModels` (contributes.ts adds it to the configuration), items derived from ModelEntry. */
export function modelsSettingSchema(): Record<string, unknown> {
  const items = settingJsonSchema(ModelEntry) as { properties: Record<string, Record<string, unknown>> };
  for (const [field, text] of Object.entries(ENTRY_TEXT)) Object.assign(items.properties[field]!, text);
  return {
    type: 'array',
    default: [],
    markdownDescription:
      'Chat models Spillway offers to Copilot Chat (vendor `spillway`, VS Code 1.104 or later). Each wraps your own endpoint; ' +
      "every turn is projected by Spillway before it is sent. Keys are kept in VS Code's secret storage, set with " +
      '**Spillway: Add Language Model…**, never here. A model without a key sends none (local servers).',
    items,
    order: 100,
  };
}
