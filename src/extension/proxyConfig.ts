/**
 * The proxy's side of the extension, without `vscode`: its settings (declared once here, for
 * package.json and for reading them back), which shell the agent environment is written for, and
 * the texts the status bar and the warnings show. src/extension/proxy.ts wires it to VS Code.
 */
import { DEFAULT_ANTHROPIC_UPSTREAM, DEFAULT_GEMINI_UPSTREAM, DEFAULT_OPENAI_UPSTREAM, parseUpstream } from '../proxy/routes';
import type { Shell } from '../proxy/env';
import { z } from 'zod';
import { SECTION, integerRangeProblem, userValue, type ConfigKeyInfo, type InspectedValue, type SettingProblem } from './pure/settings';
import { formatCount } from './pure/format';

/** The same default as `spillway proxy` (src/proxy/server.ts); repeated so this file stays light. */
export const DEFAULT_PORT = 8417;

const PORT = z.number().int().min(0).max(65535);
const WEBSOCKETS = z.enum(['project', 'refuse']);
/** the proxy's modes (src/proxy/observe.ts PROXY_MODES; test/unit/proxy-config.test.ts pins the two together) */
const MODE = z.enum(['project', 'observe']);

/** `spillway.proxy.*`, in the order the Settings UI shows them. */
export const PROXY_KEYS: readonly ConfigKeyInfo[] = [
  {
    key: 'proxy.enabled',
    schema: z.boolean(),
    default: false,
    description:
      'Run the Spillway proxy in this window: a base URL on 127.0.0.1 that coding agents (Claude Code, Codex, aider, the OpenAI and ' +
      'Anthropic SDKs) point at, so their model calls pass through the engine and are recorded for the inspector. ' +
      'Use **Spillway: Copy Agent Environment** to get the variables.',
  },
  {
    key: 'proxy.port',
    schema: PORT,
    default: DEFAULT_PORT,
    description:
      'Port of the proxy on 127.0.0.1. `0` picks a free port each time the proxy starts (the status bar and Copy Agent Environment name it).',
  },
  {
    key: 'proxy.openaiUpstream',
    schema: z.string(),
    default: DEFAULT_OPENAI_UPSTREAM,
    description:
      'Where OpenAI-style calls go, as you would give the OpenAI SDK its base URL (with `/v1`); an OpenAI-compatible gateway works too.',
  },
  {
    key: 'proxy.anthropicUpstream',
    schema: z.string(),
    default: DEFAULT_ANTHROPIC_UPSTREAM,
    description: 'Where Anthropic-style calls go, as you would give the Anthropic SDK its base URL (without `/v1`).',
  },
  {
    key: 'proxy.geminiUpstream',
    schema: z.string(),
    default: DEFAULT_GEMINI_UPSTREAM,
    description:
      'Where Gemini API calls go (`/v1beta/models/…:generateContent`, Gemini CLI), as you would give Gemini CLI its `GOOGLE_GEMINI_BASE_URL` (without `/v1beta`).',
  },
  {
    key: 'proxy.mode',
    schema: MODE,
    default: 'project',
    description:
      '`project`: model calls through the proxy are sent projected. `observe`: every request goes upstream byte for byte, and the ' +
      'inspector shows each session with what Spillway would have sent and saved: the safe way to try Spillway on your own work. ' +
      'Switching takes effect at the next call (the proxy is not restarted); see docs/trust.md for what the provider cache sees.',
  },
  {
    key: 'proxy.websockets',
    schema: WEBSOCKETS,
    default: 'project',
    description:
      'How the proxy answers the Responses WebSocket mode (`GET /v1/responses` upgraded; Codex uses it first). `project`: relay it and ' +
      'project each `response.create` on arrival (offload and dedupe of its new items; items sent earlier live with the provider and cannot ' +
      'change, so window, budget and clear cannot act). `refuse`: answer 426 so the client falls back to HTTP, where every stage applies.',
  },
  {
    key: 'proxy.answerReads',
    schema: z.boolean(),
    default: false,
    description:
      'Let the proxy answer read-backs itself, for agents with neither a shell nor MCP (most SDK-built agents): it adds the ' +
      '`spillway_read_output` tool to each request and, when the model asks only for that, answers from the store and asks again ' +
      'within the same request; the agent sees only the final answer, with the usage of every round summed. See docs/answer-reads.md.',
  },
  {
    key: 'proxy.configureTerminals',
    schema: z.boolean(),
    default: true,
    description:
      'While the proxy runs, set `OPENAI_BASE_URL`, `OPENAI_API_BASE` and `ANTHROPIC_BASE_URL` (and `GOOGLE_GEMINI_BASE_URL` while Gemini CLI ' +
      'is routed through Spillway) in new integrated terminals, so an agent started there goes through Spillway with no setup.',
  },
];

/**
 * Settings only the user may set: where the agents' API keys are sent. A folder's
 * .vscode/settings.json must not be able to send them elsewhere, so these are `machine`-scoped
 * (user settings only) and a workspace value is ignored with a warning.
 */
const USER_ONLY_KEYS: readonly string[] = ['proxy.openaiUpstream', 'proxy.anthropicUpstream', 'proxy.geminiUpstream'];

/** Extra JSON schema for the proxy keys (settings.json validation, scope). */
export const PROXY_EXTRA_SCHEMA: Record<string, Record<string, unknown>> = {
  'proxy.openaiUpstream': {
    pattern: '^https?://',
    patternErrorMessage: 'an http(s) URL, e.g. https://api.openai.com/v1',
    scope: 'machine',
  },
  'proxy.anthropicUpstream': {
    pattern: '^https?://',
    patternErrorMessage: 'an http(s) URL, e.g. https://api.anthropic.com',
    scope: 'machine',
  },
  'proxy.geminiUpstream': {
    pattern: '^https?://',
    patternErrorMessage: 'an http(s) URL, e.g. https://generativelanguage.googleapis.com',
    scope: 'machine',
  },
};

export interface ProxySettings {
  enabled: boolean;
  port: number;
  openaiUpstream: string;
  anthropicUpstream: string;
  geminiUpstream: string;
  configureTerminals: boolean;
  websockets: 'project' | 'refuse';
  mode: 'project' | 'observe';
  answerReads: boolean;
}

/** Reads and checks `spillway.proxy.*`; a bad value is a problem naming the setting, and its default is used. */
export function readProxySettings(inspect: (key: string) => InspectedValue | undefined): {
  settings: ProxySettings;
  problems: SettingProblem[];
  /** warnings about workspace values of user-only settings, which are ignored */
  ignored: string[];
} {
  const problems: SettingProblem[] = [];
  const ignored: string[] = [];
  const info = (key: string) => PROXY_KEYS.find((k) => k.key === key)!;
  const read = <T>(key: string, check: (v: unknown) => string | undefined): T => {
    const fallback = info(key).default as T;
    let inspected = inspect(key);
    if (
      USER_ONLY_KEYS.includes(key) &&
      inspected &&
      (inspected.workspaceValue !== undefined || inspected.workspaceFolderValue !== undefined)
    ) {
      ignored.push(
        `Spillway: ${SECTION}.${key} is set in this workspace's settings, which may not choose where your API keys are sent; ` +
          'it is ignored (set it in your user settings).',
      );
      inspected = { globalValue: inspected.globalValue };
    }
    const { set, value } = userValue(inspected);
    if (!set) return fallback;
    const problem = check(value);
    if (problem === undefined) return (typeof value === 'string' ? value.trim() : value) as T;
    problems.push({ setting: `${SECTION}.${key}`, message: problem });
    return fallback;
  };
  const bool = (v: unknown) => (typeof v === 'boolean' ? undefined : `expected true or false, got ${JSON.stringify(v)}`);
  const url = (what: string) => (v: unknown) => {
    if (typeof v !== 'string') return `expected an http(s) URL, got ${JSON.stringify(v)}`;
    try {
      parseUpstream(v.trim(), what);
      return undefined;
    } catch (e) {
      return (e as Error).message;
    }
  };
  return {
    settings: {
      enabled: read<boolean>('proxy.enabled', bool),
      port: read<number>('proxy.port', (v) => (PORT.safeParse(v).success ? undefined : integerRangeProblem(PORT, v, 'a port'))),
      openaiUpstream: read<string>('proxy.openaiUpstream', url('the OpenAI upstream')),
      anthropicUpstream: read<string>('proxy.anthropicUpstream', url('the Anthropic upstream')),
      geminiUpstream: read<string>('proxy.geminiUpstream', url('the Gemini upstream')),
      configureTerminals: read<boolean>('proxy.configureTerminals', bool),
      websockets: read<'project' | 'refuse'>('proxy.websockets', (v) => enumProblem(WEBSOCKETS, v)),
      mode: read<'project' | 'observe'>('proxy.mode', (v) => enumProblem(MODE, v)),
      answerReads: read<boolean>('proxy.answerReads', bool),
    },
    problems,
    ignored,
  };
}

function enumProblem(schema: z.ZodEnum<Record<string, string>>, v: unknown): string | undefined {
  return schema.safeParse(v).success
    ? undefined
    : `expected ${schema.options.map((o) => JSON.stringify(o)).join(' or ')}, got ${JSON.stringify(v)}`;
}

/**
 * What the running proxy depends on: when this changes the proxy restarts. `undefined` means it
 * should not run. configureTerminals is not part of it (it only touches the terminals' variables).
 */
export function proxyRunKey(s: ProxySettings, sessionsDir: string): string | undefined {
  if (!s.enabled) return undefined;
  return JSON.stringify([s.port, s.openaiUpstream, s.anthropicUpstream, s.geminiUpstream, sessionsDir]);
}

/**
 * The shell the agent environment is written for, from a shell path (the terminal profile's
 * `vscode.env.shell`, or the active terminal's) and, without one, the platform.
 */
export function shellKind(shellPath: string | undefined, platform: string): Shell {
  const name = (shellPath ?? '')
    .trim()
    .split(/[\\/]/)
    .pop()!
    .toLowerCase()
    .replace(/\.exe$/, '');
  if (name === 'fish') return 'fish';
  if (name === 'pwsh' || name.startsWith('pwsh-') || name === 'powershell' || name === 'powershell_ise') return 'powershell';
  if (name === 'cmd') return 'cmd';
  if (name) return 'posix';
  return platform === 'win32' ? 'powershell' : 'posix';
}

export const SHELL_LABEL: Record<Shell, string> = { posix: 'bash/zsh/sh', fish: 'fish', powershell: 'PowerShell', cmd: 'cmd.exe' };

/** An upstream for the log and the tooltip: origin and path only (a gateway's query may carry a key). */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.origin}${u.pathname === '/' ? '' : u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

export interface ProxyStatusState {
  /** the listening URL, when running */
  url?: string;
  port?: number;
  /** why an enabled proxy is not running */
  failure?: string;
  /** the port it was asked for (for the failure text) */
  wantedPort: number;
  turns: number;
  sessions: number;
  savedTokens: number;
  openaiUpstream: string;
  anthropicUpstream: string;
  /** observe mode: requests go upstream unchanged (the status bar says so, so nobody mistakes it for savings made) */
  observe?: boolean;
}

const plural = (n: number, one: string, many = `${one}s`) => `${formatCount(n)} ${n === 1 ? one : many}`;

/** The proxy's status bar item: text and tooltip. */
export function proxyStatus(s: ProxyStatusState): { text: string; tooltip: string } {
  if (!s.url) {
    return {
      text: `$(warning) Spillway proxy :${s.wantedPort} not running`,
      tooltip: `The Spillway proxy could not start: ${s.failure ?? 'unknown reason'}\nClick to change spillway.proxy.port.`,
    };
  }
  const lines = [
    `Spillway proxy at ${s.url}${s.observe ? ' (observe mode: requests go upstream unchanged; the inspector shows what Spillway would have saved)' : ''}`,
    `${plural(s.turns, 'turn')} recorded in this window (${plural(s.sessions, 'session')}), ${formatCount(s.savedTokens)} tokens kept out of model calls`,
    `OpenAI upstream: ${displayUrl(s.openaiUpstream)}`,
    `Anthropic upstream: ${displayUrl(s.anthropicUpstream)}`,
    'Click to copy the agent environment (OPENAI_BASE_URL, ANTHROPIC_BASE_URL).',
  ];
  return { text: `$(radio-tower) Spillway proxy :${s.port}${s.observe ? ' (observe)' : ''}`, tooltip: lines.join('\n') };
}

/** The warning for a proxy that could not start: which port, what to do. */
export function startFailureMessage(port: number, error: string): string {
  if (/already in use/i.test(error)) {
    return (
      `Spillway: the proxy could not start because port ${port} on 127.0.0.1 is already in use ` +
      '(another VS Code window, a `spillway proxy`, or another program). ' +
      `Set ${SECTION}.proxy.port to a free port, or to 0 to let Spillway pick one.`
    );
  }
  if (/not allowed/i.test(error)) {
    return (
      `Spillway: the proxy could not start: not allowed to listen on port ${port} on 127.0.0.1. ` +
      `Set ${SECTION}.proxy.port to a port above 1024, or to 0 to let Spillway pick one.`
    );
  }
  return `Spillway: the proxy could not start on port ${port}: ${error}`;
}

/** The terminals' description of the variables Spillway sets. */
export function terminalDescription(url: string): string {
  return `Spillway proxy at ${url}: OPENAI_BASE_URL, OPENAI_API_BASE and ANTHROPIC_BASE_URL point agents started here at it`;
}
