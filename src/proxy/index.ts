/**
 * The local proxy, as a module: `startProxy(options)` serves on 127.0.0.1 and returns
 * `{ port, url, close(), on('turn', …), environment() }`. The extension and `spillway proxy` both
 * use it; recordings are read back with `readSession` / `listSessions` / `readBody`.
 * Nothing here imports `vscode`.
 */
export { startProxy, DEFAULT_PROXY_PORT, PROXY_HOST, UNREADABLE_SESSION, type ProxyOptions, type RunningProxy } from './server';
export { agentEnvironment, agentEnvironmentLines, type EnvVar, type Shell } from './env';
export {
  Recorder,
  readSession,
  listSessions,
  readBody,
  pruneRecordings,
  defaultSessionsDir,
  BODIES_DIR,
  SESSION_SUFFIX,
  TURN_VERSION,
  type Turn,
  type SessionInfo,
  type RecorderOptions,
  type PruneRecordingsOptions,
  type PruneRecordingsResult,
} from './recording';
export {
  DEFAULT_OPENAI_UPSTREAM,
  DEFAULT_ANTHROPIC_UPSTREAM,
  SESSION_HEADER,
  RECORDED_REQUEST_HEADERS,
  routeFor,
  upstreamUrl,
  parseUpstream,
  forwardHeaders,
  type Provider,
  type Route,
} from './routes';
export { readOpening, sessionFromHeader } from './session';
export { UsageTap, mergeUsage, type TurnUsage } from './usage';
export { DEFAULT_MAX_BODY_BYTES } from './body';
export { runStandaloneProxy, type StandaloneIO } from './standalone';
export {
  createUpgradeHandler,
  projectCreate,
  arrivalEngine,
  refusalBody,
  isResponsesWebSocketPath,
  newSessionContext,
  WEBSOCKET_MODES,
  DEFAULT_WEBSOCKET_MODE,
  RESPONSES_WEBSOCKET_PATHS,
  type WebSocketMode,
  type SessionContext,
  type CreateProjection,
} from './websocket';
