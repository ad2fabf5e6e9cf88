/**
 * The one configuration that drives every stage, validated with zod.
 *
 * The same keys appear in a `--config` JSON file (nested objects or dotted keys) and, flattened, as
 * the extension's `spillway.*` settings. A preset fills every key; keys the user sets override it.
 * Two ways in: `validateConfig` (strict, for files and the module API: the first problem is an
 * error naming the key) and `parseConfig` (lenient, for editor settings: each bad key falls back to
 * the preset's value and is reported, so one typo never turns Spillway off).
 */
import { z } from 'zod';
import { SpillwayError } from './types';
import { FILE_WRITE_TOOLS, SHELL_TOOLS } from './file-inputs';
import { OBSERVATION_MODES, type ObservationMode } from './formats/observations';

export const PRESET_NAMES = ['spillway', 'openai-trimmer', 'clark-budget', 'ai-agent', 'eino', 'oracle-offload'] as const;
export type PresetName = (typeof PRESET_NAMES)[number];
export const MARKER_STYLES = ['spillway', 'trimmer', 'clark', 'ai-agent', 'eino', 'oracle'] as const;
export type MarkerStyle = (typeof MARKER_STYLES)[number];
export const PREVIEW_KINDS = ['smart', 'head', 'head-tail', 'json', 'cut'] as const;
export type PreviewKind = (typeof PREVIEW_KINDS)[number];
export const TOKENIZERS = ['o200k_base', 'cl100k_base', 'approximate'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

/** Largest cap accepted: 1 GB of text is beyond any request a provider takes. */
const MAX_CAP = 1_000_000_000;

export type Cap = number | 'unlimited';
/** How far ahead a clear must pay back (`clear.paybackHorizon`; clear-schedule.ts, `expectedRemainingCalls`). */
export type PaybackHorizon = 'corpus' | 'third' | 'same';

export interface SpillwayConfig {
  preset: PresetName;
  defaultCap: Cap;
  capUnit: 'chars' | 'bytes';
  toolCaps: Record<string, Cap>;
  /** tools whose result is a report another agent wrote for this one: see REPORT_TOOLS */
  reportTools: string[];
  previewChars: number;
  preview: PreviewKind;
  markerStyle: MarkerStyle;
  language: 'en' | 'zh';
  tokenizer: TokenizerName;
  /** which user messages are observations (a command's output, text-mode agents): see formats/observations.ts */
  observations: ObservationMode;
  offload: {
    enabled: boolean;
    dedupe: boolean;
    latestCap: number;
    afterUseCap: number;
    backoff: boolean;
    keepReads: number;
    keepEarlyReads: number;
    earlyCalls: number;
  };
  window: { enabled: boolean; recentTurns: number; maxOutputChars: number; tools: string[] };
  budget: { enabled: boolean };
  inputs: { enabled: boolean; when: 'arrival' | 'clear'; keepRounds: number; minTokens: number; tools: string[]; shellTools: string[] };
  clear: {
    enabled: boolean;
    triggerTokens: number;
    keep: number;
    keepUnit: 'results' | 'rounds';
    clearAtLeastTokens: number | 'all';
    excludeTools: string[];
    clearToolInputs: boolean;
    staleFirst: boolean;
    schedule: 'trigger' | 'payback';
    paybackHorizon: PaybackHorizon;
    readBacksCovered: number | 'all';
    minFreedTokens: number;
    inUseCalls: number;
    inUseLatest: boolean;
    keepGathered: boolean;
  };
}

const cap = z.union([z.number().int().min(1).max(MAX_CAP), z.literal('unlimited')]);
const toolList = z.array(z.string().min(1));

/**
 * One schema per leaf key: the unit of validation, fallback and the settings UI. The settings'
 * types, bounds and enums in package.json are derived from `schema` (src/extension/pure/settingSchema.ts),
 * so they are written here only; `description` is the Settings UI's text.
 */
export interface ConfigKey {
  key: string;
  schema: z.ZodType;
  description: string;
}

export const CONFIG_KEYS: readonly ConfigKey[] = [
  {
    key: 'preset',
    schema: z.enum(PRESET_NAMES),
    description:
      'Starting point for every other setting: `spillway` (our default), or one of the seed systems reproduced (`openai-trimmer`, `clark-budget`, `ai-agent`, `eino`, `oracle-offload`). Settings you set override the preset.',
  },
  {
    key: 'defaultCap',
    schema: cap,
    description:
      'Size above which a tool result is offloaded (or clipped by the budget stage), for tools without their own cap, in `capUnit`s; or "unlimited".',
  },
  {
    key: 'capUnit',
    schema: z.enum(['chars', 'bytes']),
    description: 'Whether caps and previews count characters or UTF-8 bytes.',
  },
  {
    key: 'toolCaps',
    schema: z.record(z.string().min(1), cap),
    description:
      'Per-tool caps: tool name (exact, bare name of a namespaced tool, or a pattern with *) to a size or "unlimited" (kept verbatim).',
  },
  {
    key: 'reportTools',
    schema: z.array(z.string().min(1)),
    description:
      "Tools whose result is a report another agent wrote for this one (a sub-agent's findings or plan): never offloaded on arrival, unless `toolCaps` gives the tool a cap; a clear takes it like any result once the agent has moved on from it (list the tool in `clear.excludeTools` to keep it for good). Tool names as in `toolCaps`.",
  },
  {
    key: 'previewChars',
    schema: z.number().int().min(0).max(100_000),
    description: 'How much of a reduced result the model still sees, as a preview under the marker header.',
  },
  {
    key: 'preview',
    schema: z.enum(PREVIEW_KINDS),
    description:
      'Preview shape: `smart` (head, error and path lines, tail; JSON skeleton for JSON), `head` (ends at a line break near the limit), `head-tail`, `json` (valid JSON: keys, types, first elements, counts), or `cut` (exactly the first previewChars, as the seed systems cut).',
  },
  {
    key: 'markerStyle',
    schema: z.enum(MARKER_STYLES),
    description:
      "Wording of the marker that replaces a reduced result. Presets pick their seed system's wording; every style names the handle.",
  },
  {
    key: 'language',
    schema: z.enum(['en', 'zh']),
    description: 'Language of marker text: English or Chinese.',
  },
  {
    key: 'tokenizer',
    schema: z.enum(TOKENIZERS),
    description: 'How tokens are counted: real counts with `o200k_base` or `cl100k_base`, or `approximate` (characters / 4).',
  },
  {
    key: 'observations',
    schema: z.enum(OBSERVATION_MODES),
    description:
      "Text-mode agents (mini-swe-agent, SWE-agent) send each command's output as a user message. `auto` reduces such a message like a tool result (under the tool its action implies, e.g. `bash`) when it follows an assistant message with a fenced-code action and matches a known observation template (mini-swe-agent's `<returncode>…</returncode>` + `<output>…</output>` and its long-output and timeout forms, SWE-agent's `OBSERVATION:` and `(Open file: …)` prompt); only the output inside the template is reduced. `off`: user messages are never reduced (the seed systems' presets say `off`: they reduce tool results only). Replayed transcripts use their reader's marks instead of `auto`.",
  },
  {
    key: 'offload.enabled',
    schema: z.boolean(),
    description:
      "Offload stage: a result over its tool's cap is stored in full and replaced by a marker with a preview, the newest result too.",
  },
  {
    key: 'offload.latestCap',
    schema: z.number().int().min(0).max(MAX_CAP),
    description:
      'Offload stage: results of the latest round (what the model is about to read) stay verbatim up to this size and are offloaded to the normal cap from the next call on; 0 applies the normal cap at once.',
  },
  {
    key: 'offload.afterUseCap',
    schema: z.number().int().min(0).max(MAX_CAP),
    description:
      "Reduce after use: a result over its tool's cap but not over this size reaches the model whole in the call it arrives in and is offloaded from the next call on, where the rewrite touches only the end of the request, when the session's savings so far pay for that rewrite (else it is offloaded on arrival). Needs `clear.enabled` with `clear.schedule: payback`; 0 offloads on arrival. While on, it decides for reads too (`offload.keepReads` steps aside) and file inputs are replaced on arrival (`inputs.when: clear` steps aside).",
  },
  {
    key: 'offload.backoff',
    schema: z.boolean(),
    description:
      "Back off on read-backs: when the agent reads back an output Spillway offloaded on arrival (`spillway read`, the store file, or a read tool with its handle), that tool's cap is raised for the rest of the session (4x per read-back, unlimited from the third). A read-back of what a clear took does not count. Markers already sent never change.",
  },
  {
    key: 'offload.keepReads',
    schema: z.number().int().min(0).max(MAX_CAP),
    description:
      "What the agent asked to read reaches it whole: a file read (a read tool, `cat`, `sed -n`, `head`), `git show` or a fetched page over its tool's cap but not over this size is not offloaded on arrival; the clear stage reduces it once the agent is no longer using it (see `clear.inUseCalls`). 0 offloads reads on arrival like any result, and so does a session without the clear stage (`clear.enabled` off, or the Responses WebSocket route).",
  },
  {
    key: 'offload.keepEarlyReads',
    schema: z.number().int().min(0).max(MAX_CAP),
    description:
      'Reads early in a session: in its first `offload.earlyCalls` model calls, a read the agent asked for is kept whole (as `offload.keepReads` describes) up to this size instead. What an agent reads first is usually what it was sent to work from (a sub-agent reads a dozen files, then writes its report from all of them); a larger read offloaded then is what it misses. 0 uses `offload.keepReads` throughout.',
  },
  {
    key: 'offload.earlyCalls',
    schema: z.number().int().min(0).max(1_000_000),
    description: 'How many model calls from the start of a session count as early for `offload.keepEarlyReads`.',
  },
  {
    key: 'offload.dedupe',
    schema: z.boolean(),
    description:
      "Offload stage: a result identical to an earlier one in the conversation becomes a short reference to it (stored once, same handle); one that arrives mostly repeating an earlier one still sent whole (a file read again after an edit) becomes a reference with that output's line ranges and the lines that differ (the spillway marker style only).",
  },
  {
    key: 'window.enabled',
    schema: z.boolean(),
    description:
      'Window stage: results older than the last `window.recentTurns` user messages and over `window.maxOutputChars` become a preview. Rewrites old turns as the window moves, which costs prompt-cache hits.',
  },
  {
    key: 'window.recentTurns',
    schema: z.number().int().min(1).max(10_000),
    description: 'Window stage: user messages (counted from the end) whose turns are never touched.',
  },
  {
    key: 'window.maxOutputChars',
    schema: z.number().int().min(1).max(MAX_CAP),
    description: 'Window stage: results longer than this (characters) are candidates.',
  },
  {
    key: 'window.tools',
    schema: toolList,
    description: 'Window stage: only these tools are trimmed; empty means every tool.',
  },
  {
    key: 'budget.enabled',
    schema: z.boolean(),
    description: "Budget stage: every result but the newest is held to its tool's cap.",
  },
  {
    key: 'clear.enabled',
    schema: z.boolean(),
    description: 'Clear stage: when the projected request exceeds `clear.triggerTokens`, the oldest results are cleared in one batch.',
  },
  {
    key: 'clear.triggerTokens',
    schema: z.number().int().min(1).max(100_000_000),
    description: 'Clear stage: projected request size (tokens) that triggers clearing.',
  },
  {
    key: 'clear.keep',
    schema: z.number().int().min(0).max(100_000),
    description: 'Clear stage: how many of the most recent results (or rounds, see `clear.keepUnit`) are never cleared.',
  },
  {
    key: 'clear.keepUnit',
    schema: z.enum(['results', 'rounds']),
    description: 'Clear stage: whether `clear.keep` counts tool results or assistant tool-call rounds.',
  },
  {
    key: 'clear.clearAtLeastTokens',
    schema: z.union([z.number().int().min(0).max(100_000_000), z.literal('all')]),
    description:
      'Clear stage: tokens to free each time it fires, so clears are rare and large and the prompt cache keeps hitting in between; "all" clears every eligible result. At a call after a pause longer than the provider keeps its cache (which writes the whole request again anyway) any clearable result is cleared, however little it frees.',
  },
  {
    key: 'clear.staleFirst',
    schema: z.boolean(),
    description:
      'Clear stage: clear stale results first (a file read or written again, or the same command run again, later in the conversation), then the oldest.',
  },
  {
    key: 'clear.inUseCalls',
    schema: z.number().int().min(0).max(10_000),
    description:
      'Clear stage: a result the agent received or referred to (wrote a path, name or number only it held) in its last this many model calls is in use and is not cleared; 0 clears by age alone.',
  },
  {
    key: 'clear.inUseLatest',
    schema: z.boolean(),
    description:
      'Clear stage: a path, name or number the agent writes keeps in use only the latest result that shows it (the copy it reads from), not every earlier output that printed it too; off, every result that shows it stays in use (see `clear.inUseCalls`).',
  },
  { key: 'clear.excludeTools', schema: toolList, description: 'Clear stage: tools whose results are never cleared.' },
  {
    key: 'clear.clearToolInputs',
    schema: z.boolean(),
    description: 'Clear stage: also replace the inputs of cleared tool calls (stored and recoverable like results).',
  },
  {
    key: 'clear.schedule',
    schema: z.enum(['trigger', 'payback']),
    description:
      "Clear stage: `trigger` clears whenever the request is over `clear.triggerTokens` and enough is clearable; `payback` (the guarantee) also waits until the saving over the calls the session can still be expected to make (learned from real sessions) pays back the prompt-cache rewrite, and clears only when the session, read-backs charged, has then cost no more than sending everything under the prices of the provider its model goes to (Anthropic, OpenAI GPT-5 and GPT-4o prices at once for another model) even if it ended right after; a call after a pause longer than that provider keeps its cache is charged cold, and a clear there costs no rewrite; it also stops a kind of reduction while the session's savings cannot cover that kind's next read-back (see docs/savings.md).",
  },
  {
    key: 'clear.paybackHorizon',
    schema: z.enum(['corpus', 'third', 'same']),
    description:
      "Clear stage, `payback` schedule: the calls a clear must pay back its prompt-cache rewrite within. `corpus`: the calls that three in four of the real sessions in Spillway's corpus that got as far still made; `third`: a third of the calls the session has made so far (what three in four sessions still make when a session that has lasted n calls is as likely to last n more as not); `same`: as many calls again as made so far (even odds). Longer horizons clear more, and sooner.",
  },
  {
    key: 'clear.readBacksCovered',
    schema: z.union([z.number().int().min(0).max(1_000), z.literal('all')]),
    description:
      "Clear stage, `payback` schedule: how many read-backs of cleared outputs, made at any later call, one a call, the session's savings must still hold after a clear, besides the one read-back the guarantee allows; with more, the session can go over that bound. `all` holds them for every output the session's clears hid, whatever the agent reads back later, which leaves most clears of real sessions unaffordable (see docs/savings.md).",
  },
  {
    key: 'clear.minFreedTokens',
    schema: z.number().int().min(0).max(1_000_000),
    description:
      'Clear stage: a result whose clear would free fewer tokens than this is never cleared (its file input stays with it). A short output costs little to keep and is dense in the names an agent writes later: on the corpus, 500 leaves about a third fewer misses for about 5 points of cost (see docs/configuration.md). 0 clears results of any size.',
  },
  {
    key: 'inputs.enabled',
    schema: z.boolean(),
    description:
      'File inputs: the inputs of file-writing tool calls (Write, Edit, apply_patch, ...) are replaced by a marker that keeps the path and a handle to the stored input; the file on disk holds the content.',
  },
  {
    key: 'inputs.when',
    schema: z.enum(['arrival', 'clear']),
    description:
      'File inputs: `arrival` replaces an input the first time it is sent back (no prompt-cache rewrite, but the agent may still quote what it wrote); `clear` leaves inputs whole and lets the clear stage replace them with the result of their call once the agent has not referred to them for `clear.inUseCalls` calls, superseded ones (the file read or written again) first, under the same payback rule as clears. Without the clear stage (`clear.enabled` off, or the Responses WebSocket route) inputs are replaced on arrival.',
  },
  {
    key: 'inputs.keepRounds',
    schema: z.number().int().min(0).max(10_000),
    description:
      'File inputs: model calls after the one that wrote the file during which its input stays whole; 0 replaces it in the first request that sends it back (no prompt-cache rewrite).',
  },
  {
    key: 'inputs.minTokens',
    schema: z.number().int().min(0).max(100_000_000),
    description:
      'File inputs: only calls made when the conversation before them was over this many tokens (as the agent sent it) have their inputs replaced; short sessions keep every input.',
  },
  {
    key: 'inputs.tools',
    schema: toolList,
    description: 'File inputs: the file-writing tools whose inputs are replaced (exact, bare or `*` pattern names).',
  },
  {
    key: 'inputs.shellTools',
    schema: toolList,
    description:
      "File inputs: shell tools whose commands write files through heredocs (`cat > path << 'EOF'`); each such heredoc's body is replaced by one line naming the file and a handle to the stored input, the rest of the command is kept (exact, bare or `*` pattern names).",
  },
  {
    key: 'clear.keepGathered',
    schema: z.boolean(),
    description:
      'Clear stage: what the agent gathered (the results of reads, searches, fetches and listings) is not cleared before the agent has written from it: through the replies of the agent that write or edit files or write a report, from the first one after it to the last one in a row, or until, outside a sub-agent, a reply does anything else than gather. A sub-agent searches and reads, then writes its report from all of it at once; clearing the first searches before the report hides what it cites.',
  },
];

const KEY_INDEX = new Map(CONFIG_KEYS.map((k) => [k.key, k]));

const DEFAULT_CLEAR: SpillwayConfig['clear'] = {
  enabled: false,
  triggerTokens: 100_000,
  keep: 3,
  keepUnit: 'results',
  clearAtLeastTokens: 0,
  excludeTools: [],
  clearToolInputs: false,
  staleFirst: false,
  schedule: 'trigger',
  paybackHorizon: 'corpus',
  readBacksCovered: 4,
  minFreedTokens: 0,
  inUseCalls: 0,
  inUseLatest: false,
  keepGathered: false,
};

/**
 * Claude Code's sub-agent tools. Their result is already a reduction: the report a sub-agent wrote
 * after its own exploration, which the agent delegated to get and then works from (a plan it
 * implements over the following calls). Offloading it on arrival hides what the agent reuses most:
 * on the corpus one 37,000-character plan, offloaded and later cleared, was behind most of one
 * session's misses (cosmic-applet: 241 of 1,214 references missed; 35 without it). Clearing it once
 * the agent no longer refers to it (the clear's in-use and gathered rules) misses little: reports
 * were never cleared until 2026-12-01 (docs/log/2026-12-01-reports-cleared.md).
 */
const REPORT_TOOLS = ['Task', 'Agent'];

/**
 * The `spillway` preset. The reasoning for each number is in docs/configuration.md ("Why the defaults");
 * in short: offload only what is clearly bulk (so most results stay verbatim and the prompt cache
 * keeps hitting), keep previews big enough to hold errors and paths, and clear old results in rare,
 * large batches once the context is big enough that a clear pays for its cache miss.
 */
const SPILLWAY: SpillwayConfig = {
  preset: 'spillway',
  defaultCap: 8_000,
  capUnit: 'chars',
  toolCaps: {},
  reportTools: [...REPORT_TOOLS],
  previewChars: 1_200,
  preview: 'smart',
  markerStyle: 'spillway',
  language: 'en',
  tokenizer: 'o200k_base',
  observations: 'auto',
  offload: {
    enabled: true,
    dedupe: true,
    latestCap: 0,
    afterUseCap: 0,
    backoff: true,
    keepReads: 64_000,
    keepEarlyReads: 0,
    earlyCalls: 8,
  },
  window: { enabled: false, recentTurns: 10, maxOutputChars: 2_000, tools: [] },
  budget: { enabled: false },
  inputs: { enabled: true, when: 'clear', keepRounds: 0, minTokens: 30_000, tools: [...FILE_WRITE_TOOLS], shellTools: [...SHELL_TOOLS] },
  clear: {
    enabled: true,
    triggerTokens: 20_000,
    keep: 3,
    keepUnit: 'results',
    clearAtLeastTokens: 10_000,
    excludeTools: [],
    clearToolInputs: false,
    staleFirst: true,
    schedule: 'payback',
    paybackHorizon: 'corpus',
    readBacksCovered: 4,
    minFreedTokens: 0,
    inUseCalls: 6,
    inUseLatest: true,
    keepGathered: true,
  },
};

function preset(over: Partial<SpillwayConfig> & Pick<SpillwayConfig, 'preset'>): SpillwayConfig {
  return {
    ...SPILLWAY,
    // the seed systems reduce tool results only; a text-mode agent's output is a user message to them
    observations: 'off',
    toolCaps: {},
    reportTools: [],
    offload: {
      enabled: false,
      dedupe: false,
      latestCap: 0,
      afterUseCap: 0,
      backoff: false,
      keepReads: 0,
      keepEarlyReads: 0,
      earlyCalls: 8,
    },
    window: { ...SPILLWAY.window, enabled: false },
    budget: { enabled: false },
    inputs: { ...SPILLWAY.inputs, enabled: false, tools: [...FILE_WRITE_TOOLS], shellTools: [...SHELL_TOOLS] },
    clear: { ...DEFAULT_CLEAR },
    ...over,
  };
}

/** Each seed system's documented defaults and behaviour (see docs/configuration.md, "Presets"). */
export const PRESETS: Record<PresetName, SpillwayConfig> = {
  spillway: SPILLWAY,
  // OpenAI Agents' ToolOutputTrimmer: recent_turns 2, max_output_chars 500, preview_chars 200
  'openai-trimmer': preset({
    preset: 'openai-trimmer',
    defaultCap: 'unlimited',
    previewChars: 200,
    preview: 'cut',
    markerStyle: 'trimmer',
    tokenizer: 'o200k_base',
    window: { enabled: true, recentTurns: 2, maxOutputChars: 500, tools: [] },
  }),
  // clark_agent's ToolResultBudget: 32,000-char default cap, newest result verbatim, marker only
  'clark-budget': preset({
    preset: 'clark-budget',
    defaultCap: 32_000,
    previewChars: 0,
    preview: 'head',
    markerStyle: 'clark',
    budget: { enabled: true },
  }),
  // ai-agent: toolResponseMaxBytes 12,288, stored and replaced by a handle message
  'ai-agent': preset({
    preset: 'ai-agent',
    defaultCap: 12_288,
    capUnit: 'bytes',
    previewChars: 0,
    preview: 'head',
    markerStyle: 'ai-agent',
    offload: { enabled: true, dedupe: false, latestCap: 0, afterUseCap: 0, backoff: false, keepReads: 0, keepEarlyReads: 0, earlyCalls: 8 },
  }),
  // Eino ToolReduction: truncate over 50,000 chars and store; clear over 30,000 tokens (chars/4),
  // keeping the most recent round
  eino: preset({
    preset: 'eino',
    defaultCap: 50_000,
    previewChars: 2_000,
    preview: 'cut',
    markerStyle: 'eino',
    tokenizer: 'approximate',
    offload: { enabled: true, dedupe: false, latestCap: 0, afterUseCap: 0, backoff: false, keepReads: 0, keepEarlyReads: 0, earlyCalls: 8 },
    clear: { ...DEFAULT_CLEAR, enabled: true, triggerTokens: 30_000, keep: 1, keepUnit: 'rounds', clearAtLeastTokens: 'all' },
  }),
  // the offload-and-fetch pattern: outputs over 600 bytes keep a 600-byte preview, then the number
  // of bytes left out and the handle
  'oracle-offload': preset({
    preset: 'oracle-offload',
    defaultCap: 600,
    capUnit: 'bytes',
    previewChars: 600,
    preview: 'cut',
    markerStyle: 'oracle',
    offload: { enabled: true, dedupe: false, latestCap: 0, afterUseCap: 0, backoff: false, keepReads: 0, keepEarlyReads: 0, earlyCalls: 8 },
  }),
};

export const DEFAULT_CONFIG: SpillwayConfig = PRESETS.spillway;

export interface ConfigProblem {
  key: string;
  message: string;
}

/** Turns nested objects and dotted keys alike into a flat map of dotted keys. */
export function flattenConfig(input: Record<string, unknown>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  const walk = (obj: Record<string, unknown>, prefix: string) => {
    for (const [k, v] of Object.entries(obj)) {
      const key = prefix ? `${prefix}.${k}` : k;
      if (!KEY_INDEX.has(key) && v !== null && typeof v === 'object' && !Array.isArray(v)) walk(v as Record<string, unknown>, key);
      else out.set(key, v);
    }
  };
  walk(input, '');
  return out;
}

function describeIssue(issue: z.core.$ZodIssue | undefined, value: unknown): string {
  const got = JSON.stringify(value);
  return `${issue?.message ?? 'invalid value'} (got ${got === undefined ? String(value) : got.length > 60 ? got.slice(0, 57) + '...' : got})`;
}

function setPath(target: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let obj = target;
  for (const p of parts.slice(0, -1)) obj = obj[p] as Record<string, unknown>;
  obj[parts[parts.length - 1]!] = value;
}

function clone(c: SpillwayConfig): SpillwayConfig {
  return JSON.parse(JSON.stringify(c)) as SpillwayConfig;
}

/**
 * Lenient: every key that fails validation falls back to the preset's value and is reported.
 * An unknown or invalid preset falls back to `spillway`.
 */
export function parseConfig(input: unknown): { config: SpillwayConfig; problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  if (input === undefined || input === null) return { config: clone(DEFAULT_CONFIG), problems };
  if (typeof input !== 'object' || Array.isArray(input)) {
    return {
      config: clone(DEFAULT_CONFIG),
      problems: [{ key: '(config)', message: `expected an object of settings, got ${Array.isArray(input) ? 'an array' : typeof input}` }],
    };
  }
  const flat = flattenConfig(input as Record<string, unknown>);
  let presetName: PresetName = 'spillway';
  if (flat.has('preset')) {
    const r = KEY_INDEX.get('preset')!.schema.safeParse(flat.get('preset'));
    if (r.success) presetName = r.data as PresetName;
    else problems.push({ key: 'preset', message: describeIssue(r.error.issues[0], flat.get('preset')) + `; using "spillway"` });
  }
  const config = clone(PRESETS[presetName]) as unknown as Record<string, unknown>;
  for (const [key, value] of flat) {
    if (key === 'preset') continue;
    const spec = KEY_INDEX.get(key);
    if (!spec) {
      problems.push({ key, message: `unknown setting; known settings are ${CONFIG_KEYS.map((k) => k.key).join(', ')}` });
      continue;
    }
    if (value === undefined) continue;
    const r = spec.schema.safeParse(value);
    if (r.success) setPath(config, key, r.data);
    else problems.push({ key, message: describeIssue(r.error.issues[0], value) + '; using the default' });
  }
  return { config: config as unknown as SpillwayConfig, problems };
}

/** Strict: any problem is a SpillwayError naming the key, e.g. for `--config FILE`. */
export function validateConfig(input: unknown, where = 'config'): SpillwayConfig {
  const { config, problems } = parseConfig(input);
  const first = problems[0];
  if (first) {
    const more = problems.length > 1 ? ` (and ${problems.length - 1} more problem${problems.length > 2 ? 's' : ''})` : '';
    throw new SpillwayError(
      `${where}: ${first.key}: ${first.message.replace(/; using (the default|"spillway")$/, '')}${more}`,
      'bad-config',
    );
  }
  return config;
}

/** Reads a setting by dotted key from a resolved config. */
export function configValue(config: SpillwayConfig, key: string): unknown {
  return key.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], config);
}

/**
 * The cap in force for a tool: an exact entry for one of its names wins, then the longest
 * matching `*` pattern, then unlimited for a report tool, then the default.
 */
export function capFor(config: SpillwayConfig, names: readonly string[]): Cap {
  for (const n of names) {
    const c = config.toolCaps[n];
    if (c !== undefined) return c;
  }
  let best: { len: number; cap: Cap } | undefined;
  for (const [pattern, c] of Object.entries(config.toolCaps)) {
    if (!pattern.includes('*')) continue;
    const re = new RegExp('^' + pattern.split('*').map(escapeRe).join('.*') + '$');
    if (names.some((n) => re.test(n)) && (!best || pattern.length > best.len)) best = { len: pattern.length, cap: c };
  }
  if (best) return best.cap;
  return toolListed(config.reportTools, names) ? 'unlimited' : config.defaultCap;
}

/** True when `names` match a tool list entry (exact or `*` pattern). */
export function toolListed(list: readonly string[], names: readonly string[]): boolean {
  return list.some((p) =>
    p.includes('*') ? names.some((n) => new RegExp('^' + p.split('*').map(escapeRe).join('.*') + '$').test(n)) : names.includes(p),
  );
}

/** `s` as a literal inside a regular expression. */
export function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
