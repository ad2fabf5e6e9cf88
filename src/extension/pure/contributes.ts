/**
 * Everything Spillway declares in package.json's `contributes`, built from one source.
 *
 * Settings come from the engine's CONFIG_KEYS (defaults from the `spillway` preset), so the
 * Settings UI can never drift from what the engine accepts. `node scripts/gen-contributes.mjs`
 * writes this into package.json; test/unit/extension-contributes.test.ts fails when they differ.
 */
import { CONFIG_KEYS, DEFAULT_CONFIG, configValue } from '../../engine/config';
import { READ_TOOL_INPUT_SCHEMA } from '../../proxy/readLoop';
import { EXTRACT_DESCRIPTION, EXTRACT_INPUT_SCHEMA } from '../../extract/extract';
import { configurationContribution } from './settings';
import { PROXY_EXTRA_SCHEMA, PROXY_KEYS } from '../proxyConfig';
import { MODELS_SETTING, VENDOR, modelsSettingSchema } from '../chat/models';
import { FEATURE_CONTEXT, GATED_COMMANDS } from './features';

export const CATEGORY = 'Spillway';

/** The MCP server definition provider's id (src/extension/mcp.ts registers it under this). */
export const MCP_PROVIDER_ID = 'spillway.mcp';

export const COMMAND_TITLES = {
  'spillway.setToolCap': 'Set Cap for Tool…',
  'spillway.openStoredOutput': 'Open Stored Output…',
  'spillway.compareOriginalAndProjected': 'Compare Original and Projected',
  'spillway.clearStoredOutputs': 'Clear Stored Outputs',
  'spillway.showLog': 'Show Log',
  'spillway.openInspector': 'Open Inspector',
  'spillway.openTranscript': 'Open Transcript…',
  'spillway.browseAgentSessions': 'Browse Agent Sessions',
  'spillway.copyAgentEnvironment': 'Copy Agent Environment',
  'spillway.routeCodex': 'Route Codex Through Spillway',
  'spillway.unrouteCodex': 'Stop Routing Codex Through Spillway',
  'spillway.routeClaudeCode': 'Route Claude Code Through Spillway',
  'spillway.unrouteClaudeCode': 'Stop Routing Claude Code Through Spillway',
  'spillway.routeOpenCode': 'Route OpenCode Through Spillway',
  'spillway.unrouteOpenCode': 'Stop Routing OpenCode Through Spillway',
  'spillway.routeKilo': 'Route Kilo Through Spillway',
  'spillway.unrouteKilo': 'Stop Routing Kilo Through Spillway',
  'spillway.routePi': 'Route pi Through Spillway',
  'spillway.unroutePi': 'Stop Routing pi Through Spillway',
  'spillway.routeGeminiCli': 'Route Gemini CLI Through Spillway',
  'spillway.unrouteGeminiCli': 'Stop Routing Gemini CLI Through Spillway',
  'spillway.addClaudeMcpServer': "Add Spillway's MCP Server for Claude Code",
  'spillway.removeClaudeMcpServer': "Remove Spillway's MCP Server for Claude Code",
  'spillway.addLanguageModel': 'Add Language Model…',
  'spillway.manageLanguageModels': 'Manage Language Models…',
} as const;

/** Files Open Transcript accepts from the explorer: agent logs, request bodies, trajectories. */
export const TRANSCRIPT_FILE_WHEN = 'resourceScheme == file && resourceExtname =~ /^\\.(jsonl|json|traj)$/';

/** The inspector's own settings, added to the generated ones. */
export const INSPECTOR_SETTINGS = {
  'spillway.inspector.openOnStartup': {
    type: 'boolean',
    default: false,
    markdownDescription:
      'Open the Spillway inspector on the most recent session when the window starts. The demo workspace of `npm start` sets it; off otherwise.',
    scope: 'window',
  },
} as const;

/**
 * The first-run walkthrough (Help → Get Started): observe first (the proxy in observe mode changes
 * nothing and shows what Spillway would have saved: the safe first step), see a session of yours in the inspector, route an
 * agent through Spillway, set a cap from a dry run, open a stored output. Each step's text is a
 * Markdown file under media/walkthrough/, so it renders in the Welcome page with its links.
 */
export const WALKTHROUGH = {
  id: 'spillway.firstRun',
  title: 'Get started with Spillway',
  description: 'See what your coding agent sent and what it could have sent, route it through Spillway, and tune the caps.',
  steps: [
    {
      id: 'observe',
      title: 'Try it safely: observe first',
      description:
        'In observe mode the local proxy sends every request exactly as your agent wrote it and shows, per session, what Spillway would have sent and saved. Nothing changes until you switch to project.\n[Set the Proxy Mode](command:workbench.action.openSettings?%5B%22spillway.proxy.mode%22%5D)',
      media: { markdown: 'media/walkthrough/observe.md' },
      completionEvents: ['onSettingChanged:spillway.proxy.mode'],
    },
    {
      id: 'inspect',
      title: 'See a session of yours in the inspector',
      description:
        'Pick a Claude Code, Codex, Gemini CLI, Copilot CLI, Cline, pi, Qwen Code, Continue or OpenCode session that ran in this folder; Spillway replays it and shows, turn by turn, what it cost and what it would have saved.\n[Browse Agent Sessions](command:spillway.browseAgentSessions)\n[Open Transcript…](command:spillway.openTranscript)',
      media: { markdown: 'media/walkthrough/inspect.md' },
      completionEvents: ['onCommand:spillway.browseAgentSessions', 'onCommand:spillway.openTranscript', 'onCommand:spillway.openInspector'],
    },
    {
      id: 'route',
      title: 'Route an agent through Spillway',
      description:
        'Claude Code and Codex read a base URL: the local proxy projects every call on its way. Copilot agent mode can use the Spillway models.\n[Copy Agent Environment](command:spillway.copyAgentEnvironment)',
      media: { markdown: 'media/walkthrough/route.md' },
      completionEvents: ['onCommand:spillway.copyAgentEnvironment'],
    },
    {
      id: 'cap',
      title: 'Set a cap from the dry run',
      description:
        'In the inspector, open Caps per tool and type a new cap: the session is re-projected at once and the change in tokens and cost is shown. Save writes it to your settings.\n[Open Inspector](command:spillway.openInspector)',
      media: { markdown: 'media/walkthrough/cap.md' },
      completionEvents: ['onSettingChanged:spillway.toolCaps'],
    },
    {
      id: 'read',
      title: 'Open a stored output',
      description:
        'Every reduced result is kept whole and readable by its handle, in the editor or by the agent.\n[Open Stored Output…](command:spillway.openStoredOutput)',
      media: { markdown: 'media/walkthrough/read.md' },
      completionEvents: ['onCommand:spillway.openStoredOutput', 'onCommand:spillway.compareOriginalAndProjected'],
    },
  ],
} as const;

export function contributes(): Record<string, unknown> {
  const configuration = configurationContribution(
    CONFIG_KEYS,
    (key) => configValue(DEFAULT_CONFIG, key),
    PROXY_KEYS,
    PROXY_EXTRA_SCHEMA,
  ) as { properties: Record<string, unknown> };
  configuration.properties[`spillway.${MODELS_SETTING}`] = modelsSettingSchema();
  Object.assign(configuration.properties, INSPECTOR_SETTINGS);
  return {
    configuration,
    commands: Object.entries(COMMAND_TITLES).map(([command, title]) => ({
      command,
      title,
      category: CATEGORY,
      ...(command === 'spillway.openStoredOutput' ? { icon: '$(fold)' } : {}),
      ...(command === 'spillway.openInspector' ? { icon: '$(graph)' } : {}),
      ...(command === 'spillway.copyAgentEnvironment' ? { icon: '$(radio-tower)' } : {}),
    })),
    menus: {
      'explorer/context': [{ command: 'spillway.openTranscript', when: TRANSCRIPT_FILE_WHEN, group: 'navigation@90' }],
      // what needs an API this VS Code may lack is offered only where the extension found it (pure/features.ts)
      commandPalette: Object.entries(GATED_COMMANDS).map(([command, feature]) => ({ command, when: FEATURE_CONTEXT[feature] })),
    },
    // VS Code 1.104+: Spillway's models in the chat model picker (older versions ignore this)
    languageModelChatProviders: [{ vendor: VENDOR, displayName: 'Spillway', managementCommand: 'spillway.manageLanguageModels' }],
    // VS Code 1.101+: `spillway mcp` on the workspace's store (src/extension/mcp.ts registers the provider)
    mcpServerDefinitionProviders: [{ id: MCP_PROVIDER_ID, label: 'Spillway' }],
    walkthroughs: [WALKTHROUGH],
    languageModelTools: [
      {
        name: 'spillway_read_output',
        displayName: 'Read Spillway Output',
        toolReferenceName: 'spillwayRead',
        canBeReferencedInPrompt: true,
        icon: '$(fold)',
        userDescription: 'Reads a tool output that Spillway stored in full and replaced with a preview and a handle.',
        modelDescription:
          'Reads the full text of a tool output that Spillway reduced to a preview. Markers in tool results name a handle ' +
          '(sw_ followed by 24 hex digits). Pass it as `handle`; narrow the answer with `lines` ("A:B", 1-based), `grep` ' +
          '(a regex, with `context` lines around each match) or `offset`/`limit` (characters). Answers are capped at ' +
          '8,000 characters and start with a line saying which part of how much is shown; ask again for other parts.',
        inputSchema: READ_TOOL_INPUT_SCHEMA,
      },
      {
        name: 'spillway_extract',
        displayName: 'Ask About Spillway Output',
        toolReferenceName: 'spillwayExtract',
        canBeReferencedInPrompt: true,
        icon: '$(search)',
        userDescription: 'Answers a question about a stored tool output with your language model, reading it in chunks or grepping first.',
        modelDescription: EXTRACT_DESCRIPTION,
        inputSchema: EXTRACT_INPUT_SCHEMA,
      },
    ],
  };
}
