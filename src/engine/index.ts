/**
 * Spillway's engine, as a module: `createEngine(config, { store, tokenizer })` returns an engine
 * whose `project(request, format, { session })` gives `{ request, reductions, stats }`.
 *
 * Everything a host needs is re-exported here; nothing in the engine imports the rest of Spillway
 * or `vscode`, so other programs can embed it as it is.
 */
export {
  createEngine,
  createSessionStore,
  observationOption,
  MemorySink,
  type SessionStore,
  type Engine,
  type EngineOptions,
  type Projection,
  type ProjectionDetail,
  type ProjectOptions,
} from './engine';
export {
  CONFIG_KEYS,
  DEFAULT_CONFIG,
  PRESETS,
  PRESET_NAMES,
  MARKER_STYLES,
  PREVIEW_KINDS,
  TOKENIZERS,
  capFor,
  configValue,
  flattenConfig,
  parseConfig,
  validateConfig,
  type Cap,
  type ConfigKey,
  type ConfigProblem,
  type MarkerStyle,
  type PresetName,
  type PreviewKind,
  type SpillwayConfig,
  type TokenizerName,
} from './config';
export {
  detectFormat,
  isWireFormat,
  readRequest,
  resultText,
  type FormatOption,
  type ParsedRequest,
  type ToolResult,
  type ToolCall,
} from './formats';
export {
  actionOf,
  observationSpan,
  OBSERVATION_MODES,
  type ObservationMark,
  type ObservationMode,
  type ObservationOption,
  type ObservationSpan,
} from './formats/observations';
export { handleFor, isHandle, sha256Hex, handleFromDigest, HANDLE_PATTERN } from './handle';
export { recogniseMarker, recognisePersistedOutput, renderMarker, HEADER_BUDGET } from './markers';
export { preview, jsonPreview } from './preview';
export { isReference } from './stages/offload';
export { newTokenCounter, tokenCounter, type TokenCounter } from './tokens';
export { PROVIDERS } from './clear-schedule';
export * from './types';
