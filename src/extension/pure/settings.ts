/**
 * Settings ↔ engine configuration, without `vscode`.
 *
 * The engine's configuration keys are declared once, in the engine (`CONFIG_KEYS`). From that list
 * this module derives two things: the `contributes.configuration` block of package.json (so the
 * Settings UI shows every key with its description, default and bounds, and never drifts from what
 * the engine accepts: a unit test compares them), and the raw config object the engine parses from
 * whatever the user has set.
 *
 * Only keys the user actually set are passed on. A preset fills every key and explicit keys override
 * it, so handing the engine VS Code's defaults for unset keys would silently defeat `spillway.preset`.
 */
import { z } from 'zod';
import { settingJsonSchema } from './settingSchema';

/**
 * One setting: its dotted key under `spillway.`, the zod schema that validates it (package.json's
 * type, bounds and enum are derived from it, settingSchema.ts), its Settings UI text and, for the
 * extension's own keys, its default (the engine's keys take theirs from the `spillway` preset).
 */
export interface ConfigKeyInfo {
  key: string;
  schema: z.ZodType;
  description: string;
  default?: unknown;
}

/** The values VS Code knows for one key at each level (`WorkspaceConfiguration.inspect`). */
export interface InspectedValue {
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

const RETENTION_DAYS = z.number().int().min(1).max(3650);
const MAX_MEGABYTES = z.number().int().min(1).max(102_400);

/** The extension's own settings: where the store lives and how long it keeps things. */
export const STORAGE_KEYS: readonly ConfigKeyInfo[] = [
  {
    key: 'storage.retentionDays',
    schema: RETENTION_DAYS,
    default: 14,
    description: 'Stored outputs older than this many days are deleted in the background, oldest first.',
  },
  {
    key: 'storage.maxMegabytes',
    schema: MAX_MEGABYTES,
    default: 256,
    description: "When this workspace's stored outputs take more than this many megabytes, the oldest are deleted in the background.",
  },
  {
    key: 'storage.folder',
    schema: z.string(),
    default: '',
    description:
      'Folder of the output store, to share one with the `spillway` CLI or proxy (their `--store DIR`). ' +
      "Empty keeps outputs in this workspace's own storage. `${workspaceFolder}` and paths relative to the first workspace folder are accepted.",
  },
];

export interface StorageSettings {
  retentionDays: number;
  maxMegabytes: number;
  /** as the user wrote it; resolve with `resolveStoreFolder` */
  folder: string;
}

export interface SettingProblem {
  /** the full setting id, e.g. `spillway.window.recentTurns` */
  setting: string;
  message: string;
}

export const SECTION = 'spillway';

/** The value in force for a key, if the user set one anywhere (folder beats workspace beats user). */
export function userValue(inspected: InspectedValue | undefined): { set: boolean; value?: unknown } {
  if (!inspected) return { set: false };
  for (const v of [inspected.workspaceFolderValue, inspected.workspaceValue, inspected.globalValue]) {
    if (v !== undefined) return { set: true, value: v };
  }
  return { set: false };
}

/**
 * Builds the raw engine config from the keys the user set. Dotted keys become nested objects
 * (`window.recentTurns: 3` → `{ window: { recentTurns: 3 } }`), the shape of `--config` JSON.
 */
export function configInputFromSettings(
  keys: readonly ConfigKeyInfo[],
  inspect: (key: string) => InspectedValue | undefined,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const info of keys) {
    const { set, value } = userValue(inspect(info.key));
    if (!set) continue;
    setDotted(out, info.key, value);
  }
  return out;
}

function setDotted(target: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let node: Record<string, unknown> = target;
  for (const part of parts.slice(0, -1)) {
    const next = node[part];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[part] = {};
    node = node[part] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}

/** Turns the engine's `{ key, message }` problems into messages that name the VS Code setting. */
export function settingProblems(problems: readonly { key: string; message: string }[]): SettingProblem[] {
  return problems.map((p) => {
    const key = p.key.replace(/^spillway\./, '');
    let message = p.message.startsWith(`${key}:`) ? p.message.slice(key.length + 1).trim() : p.message;
    // the engine says what it falls back to; the warning says it once, in its own words
    message = message.replace(/;\s*using (the default|"spillway")\s*$/, '');
    return { setting: `${SECTION}.${key}`, message };
  });
}

/** The one-line warning shown for a bad setting: which setting, what is wrong, what is used instead. */
export function problemWarning(p: SettingProblem): string {
  const fallback = p.setting === `${SECTION}.preset` ? 'the "spillway" preset' : 'its default';
  return `Spillway: the setting ${p.setting} is invalid (${p.message}), so it falls back to ${fallback}.`;
}

/** What is wrong with a value for an integer setting, with the bounds its schema sets. */
export function integerRangeProblem(schema: z.ZodNumber, value: unknown, what = 'an integer'): string {
  return `expected ${what} from ${schema.minValue} to ${schema.maxValue}, got ${JSON.stringify(value)}`;
}

/** Reads and checks the extension-only storage settings. Bad values fall back to the defaults. */
export function readStorageSettings(inspect: (key: string) => InspectedValue | undefined): {
  settings: StorageSettings;
  problems: SettingProblem[];
} {
  const problems: SettingProblem[] = [];
  const pick = (info: ConfigKeyInfo, schema: z.ZodNumber): number => {
    const fallback = info.default as number;
    const { set, value } = userValue(inspect(info.key));
    if (!set) return fallback;
    if (schema.safeParse(value).success) return value as number;
    problems.push({ setting: `${SECTION}.${info.key}`, message: integerRangeProblem(schema, value) });
    return fallback;
  };
  let folder = '';
  const f = userValue(inspect('storage.folder'));
  if (f.set) {
    if (typeof f.value === 'string') folder = f.value.trim();
    else problems.push({ setting: `${SECTION}.storage.folder`, message: `expected a folder path, got ${JSON.stringify(f.value)}` });
  }
  return {
    settings: { retentionDays: pick(STORAGE_KEYS[0]!, RETENTION_DAYS), maxMegabytes: pick(STORAGE_KEYS[1]!, MAX_MEGABYTES), folder },
    problems,
  };
}

/**
 * The absolute store folder for a `spillway.storage.folder` value, or undefined for the default
 * (the workspace's own storage). `${workspaceFolder}` and relative paths need an open folder.
 */
export function resolveStoreFolder(
  folder: string,
  workspaceFolder: string | undefined,
  isAbsolute: (p: string) => boolean,
  join: (...p: string[]) => string,
): { path?: string; problem?: string } {
  if (!folder) return {};
  const needsFolder = folder.includes('${workspaceFolder}') || !isAbsolute(folder);
  if (needsFolder && !workspaceFolder) return { problem: `"${folder}" needs an open workspace folder` };
  const expanded = folder.split('${workspaceFolder}').join(workspaceFolder ?? '');
  return { path: isAbsolute(expanded) ? expanded : join(workspaceFolder!, expanded) };
}

/** One `contributes.configuration` property. `order` keeps the engine's order in the Settings UI. */
function settingSchema(info: ConfigKeyInfo, defaultValue: unknown, order: number, engineKey: boolean): Record<string, unknown> {
  const { type, ...rest } = settingJsonSchema(info.schema);
  const out: Record<string, unknown> = { type };
  if (defaultValue !== undefined) out.default = defaultValue;
  Object.assign(out, rest);
  const follows =
    engineKey && info.key !== 'preset' ? " Unset, it follows `#spillway.preset#` (the default shown is the `spillway` preset's)." : '';
  out.markdownDescription = info.description + follows;
  out.order = order;
  return out;
}

/**
 * The `contributes.configuration` block: the engine's keys (defaults from the `spillway` preset),
 * then the extension's storage keys. package.json must equal this (test/unit/extension-contributes).
 */
export function configurationContribution(
  engineKeys: readonly ConfigKeyInfo[],
  defaultOf: (key: string) => unknown,
  /** more extension keys after the storage keys (the proxy's), with their extra schema */
  extraKeys: readonly ConfigKeyInfo[] = [],
  extraSchema: Record<string, Record<string, unknown>> = {},
): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  let order = 0;
  for (const info of engineKeys) properties[`${SECTION}.${info.key}`] = settingSchema(info, defaultOf(info.key), order++, true);
  for (const info of STORAGE_KEYS) properties[`${SECTION}.${info.key}`] = settingSchema(info, info.default, order++, false);
  for (const info of extraKeys)
    properties[`${SECTION}.${info.key}`] = { ...settingSchema(info, info.default, order++, false), ...extraSchema[info.key] };
  return { title: 'Spillway', properties };
}

/** The tool caps a user can pick in Set Cap for Tool…, in characters (or bytes, per `capUnit`). */
export const CAP_CHOICES: readonly number[] = [2_000, 4_000, 8_000, 16_000, 32_000, 64_000];

export type CapChoice = number | 'unlimited' | 'default';

/** The new `toolCaps` object after setting (or removing, for `default`) one tool's cap. */
export function updateToolCaps(current: unknown, tool: string, cap: CapChoice): Record<string, number | 'unlimited'> {
  const caps: Record<string, number | 'unlimited'> = {};
  if (current && typeof current === 'object' && !Array.isArray(current)) {
    for (const [k, v] of Object.entries(current as Record<string, unknown>)) {
      if (typeof v === 'number' || v === 'unlimited') caps[k] = v;
    }
  }
  if (cap === 'default') delete caps[tool];
  else caps[tool] = cap;
  return caps;
}

/** Parses a cap typed by the user: a positive integer (commas and `k` allowed) or `unlimited`. */
export function parseCapInput(text: string): CapChoice | undefined {
  const t = text
    .trim()
    .toLowerCase()
    .replace(/[,_\s]/g, '');
  if (t === 'unlimited') return 'unlimited';
  if (t === 'default') return 'default';
  const m = /^(\d+(?:\.\d+)?)(k?)$/.exec(t);
  if (!m) return undefined;
  const n = Math.round(Number(m[1]) * (m[2] ? 1000 : 1));
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}
