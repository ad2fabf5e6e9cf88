/**
 * The features of Spillway that need an API only newer VS Code has. The extension sets one context
 * key per feature from what the running VS Code actually accepted (features.ts), package.json's
 * `when` clauses hide what is missing (contributes.ts), and the log says once what is not offered
 * and why. No `vscode` here: unit-tested and read by scripts/gen-contributes.mjs.
 */

/** The context keys, true when the feature's API is present and its registration succeeded. */
export const FEATURE_CONTEXT = {
  /** `vscode.lm.registerLanguageModelChatProvider` (VS Code 1.104+): Spillway's models in Copilot's model picker */
  lmProvider: 'spillway.lmProviderAvailable',
  /** `vscode.lm.registerMcpServerDefinitionProvider` (VS Code 1.101+): `spillway mcp` for the editor's MCP clients */
  mcpProvider: 'spillway.mcpProviderAvailable',
} as const;

export type FeatureId = keyof typeof FEATURE_CONTEXT;

/** The commands offered only with a feature: hidden from the palette without it. */
export const GATED_COMMANDS: Readonly<Record<string, FeatureId>> = {
  'spillway.addLanguageModel': 'lmProvider',
  'spillway.manageLanguageModels': 'lmProvider',
};

/** What the running VS Code made of one feature. */
export interface FeatureState {
  id: FeatureId;
  available: boolean;
  /** why not, when not: which API is missing, or what VS Code said when it refused it */
  why?: string;
}

/** What each feature is called in the log. */
const FEATURE_NAME: Record<FeatureId, string> = {
  lmProvider: 'Copilot models through Spillway (Add Language Model…, Manage Language Models…)',
  mcpProvider: "Spillway's MCP server for the editor's agents",
};

/** The one log line about features: what is not offered in this VS Code and why, or that everything is. */
export function featuresLogLine(version: string, features: readonly FeatureState[]): string {
  const missing = features.filter((f) => !f.available);
  if (missing.length === 0)
    return `VS Code ${version} offers every Spillway feature: ${features.map((f) => FEATURE_NAME[f.id]).join('; ')}`;
  return `VS Code ${version}: not offered here: ${missing.map((f) => `${FEATURE_NAME[f.id]}: ${f.why ?? 'its API is missing'}`).join('; ')}`;
}
