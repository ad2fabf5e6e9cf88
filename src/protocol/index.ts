/**
 * The messages between the extension host and the inspector webview, and nothing else: the webview
 * imports only this folder from the rest of Spillway, and the host validates what the webview sends
 * with the same schemas the webview validates what the host sends.
 *
 * Shaped after GitLens' webview IPC: every message is keyed `scope/method` and is one of
 * - a **command** (webview → host, fire and forget),
 * - a **request** (webview → host, id-correlated) answered by exactly one **response** carrying the
 *   request's id and either the typed result or an error text,
 * - a **notification** (host → webview).
 * The webview sends `webview/ready` once it listens; the host posts nothing before that (the
 * handshake of vscode-pull-request-github), so no message is lost to a webview still loading.
 * A message that fails its schema is logged and dropped by the receiver, never acted on.
 */
import { z } from 'zod';

export * from './cost';

// ---- shared shapes -------------------------------------------------------------------------

const ORIGINS = ['proxy', 'replay', 'api', 'copilot'] as const;
export const Origin = z.enum(ORIGINS);
export type Origin = z.infer<typeof Origin>;

/**
 * A handle: the engine's HANDLE_PATTERN (src/engine/handle.ts), written again because the protocol
 * imports only zod; test/unit/handle-pattern.test.ts checks the two accept the same strings.
 */
export const Handle = z.string().regex(/^sw_[0-9a-f]{24}$/);
/** the engine's largest cap (src/engine/config.ts MAX_CAP); test/unit/handle-pattern.test.ts pins the two together */
export const CapValue = z.union([z.number().int().positive().max(1_000_000_000), z.literal('unlimited')]);
export type CapValue = z.infer<typeof CapValue>;
/** what the inspector may write for one tool: a cap, or `default` to remove the override */
export const CapChoice = z.union([CapValue, z.literal('default')]);
export type CapChoice = z.infer<typeof CapChoice>;

export const SessionInfo = z.object({
  id: z.string().min(1),
  origin: Origin,
  title: z.string(),
  /** a second line: the file, the format, the model */
  detail: z.string(),
  turns: z.number().int().nonnegative(),
  /** ISO 8601, the newest turn or the file's modification time */
  modified: z.string(),
  bytes: z.number().nonnegative().optional(),
  /** still being written (proxy recordings, API sessions) */
  live: z.boolean(),
  /** the model the session's agent called, when known (prices its cost in dollars) */
  model: z.string().optional(),
  /** the cost record (price model) the model's family bills under, when the model is known */
  costModel: z.string().optional(),
  /** a replayed session's other providers it can be replayed as sent to (`session/routed`): those the engine holds prices for */
  routes: z.array(z.string()).optional(),
  /**
   * Recorded by the proxy in observe mode: every request went upstream byte for byte, and the
   * projection figures are what Spillway would have sent (the inspector says "would have saved").
   */
  observed: z.boolean().optional(),
  /** what the session saved, when its turns are known: tokens sent, and input cost under caching per price model */
  totals: z
    .object({
      originalTokens: z.number().nonnegative(),
      projectedTokens: z.number().nonnegative(),
      cost: z
        .record(
          z.string(),
          z.object({ raw: z.number().nonnegative(), projected: z.number().nonnegative(), readBack: z.number().nonnegative().optional() }),
        )
        .optional(),
    })
    .optional(),
});
export type SessionInfo = z.infer<typeof SessionInfo>;

/**
 * One turn's input cost under prompt caching for one price model, in units of one uncached input
 * token at the base price (src/replay/metrics.ts callCost): raw history (what the agent sent, with
 * caching) and the projection. `readBack` is the cost of the agent reading reduced outputs back
 * (replay reports it once it models read-backs); projected + readBack is the cost with read-backs.
 */
const CostFigures = z.object({
  raw: z.number().nonnegative(),
  projected: z.number().nonnegative(),
  readBack: z.number().nonnegative().optional(),
});
type CostFigures = z.infer<typeof CostFigures>;
/** price model name (`anthropic`, `openai`) → figures */
export const Cost = z.record(z.string(), CostFigures);
export type Cost = z.infer<typeof Cost>;

export const TurnSummary = z.object({
  index: z.number().int().nonnegative(),
  originalTokens: z.number().nonnegative(),
  projectedTokens: z.number().nonnegative(),
  /** the previous turn's projection is a prefix of this one (the prompt cache keeps hitting) */
  cacheStable: z.boolean(),
  cachedPrefixTokens: z.number().nonnegative().optional(),
  /** tool results in the request, when known, and how many the projection reduced */
  toolResults: z.number().int().nonnegative().optional(),
  reductions: z.number().int().nonnegative(),
  /** tools whose results this turn reduced */
  tools: z.array(z.string()),
  /** tools of the turn's own new results, reduced or not (the tool filter); absent when not known */
  resultTools: z.array(z.string()).optional(),
  /** identifiers the agent wrote next that the projection had hidden */
  missed: z.number().int().nonnegative(),
  time: z.string().optional(),
  model: z.string().optional(),
  /** why the turn was forwarded unchanged (proxy fail-open) */
  note: z.string().optional(),
  /** the call failed (upstream unreachable, an error status): the upstream's message */
  error: z.string().optional(),
  /** input cost under caching, per price model */
  cost: Cost.optional(),
  /** prompt tokens the provider reported as served from its cache (proxied turns) */
  providerCachedTokens: z.number().nonnegative().optional(),
  /** results this turn cleared (clear stage, decided in this turn) */
  clears: z.number().int().nonnegative().optional(),
  /** outputs this turn replaced by a preview and a handle (offload, window, budget; decided in this turn) */
  previews: z.number().int().nonnegative().optional(),
  /** outputs this turn replaced by a reference to an earlier output they repeat (`offload.dedupe`; not counted in `previews`) */
  references: z.number().int().nonnegative().optional(),
  /**
   * file inputs this turn replaced by a marker with a handle (the content of a Write, an Edit, an
   * apply_patch or a heredoc that writes a file; decided in this turn)
   */
  inputs: z.number().int().nonnegative().optional(),
  /**
   * tokens saved by what this turn decided: its fresh reductions (previews and clears) and its fresh
   * file inputs; the turn's "saving" (largest savings, the turn opened on, the details' summary)
   */
  freshSaved: z.number().nonnegative().optional(),
});
export type TurnSummary = z.infer<typeof TurnSummary>;

export const ResultInfo = z.object({
  tool: z.string(),
  callId: z.string(),
  stage: z.string(),
  reason: z.string(),
  originalChars: z.number().nonnegative(),
  projectedChars: z.number().nonnegative(),
  originalTokens: z.number().nonnegative(),
  projectedTokens: z.number().nonnegative(),
  handle: Handle,
  /**
   * what the model was sent in its place: a `preview` (offload, window, budget), a `reference` to an
   * earlier output it repeats (offload's dedupe), a `clear`; absent from older hosts (then read from `stage`)
   */
  kind: z.enum(['preview', 'reference', 'clear']).optional(),
  /** made by this turn, not carried over from an earlier one */
  fresh: z.boolean(),
  /** the file the call read (a file input: wrote), else the command it ran (`$ npm test`): what the row is named by */
  source: z.string().optional(),
  /** a later turn reduced it again (a preview cleared): that turn (0-based) and its stage; this turn's marker is not the last */
  later: z.object({ turn: z.number().int().nonnegative(), stage: z.string() }).optional(),
});
export type ResultInfo = z.infer<typeof ResultInfo>;

/**
 * A tool call's input replaced by a marker with a handle (a file-writing call's content, or a shell
 * command's heredoc body): the original is what the agent wrote, the projected side the marker.
 * `by` says what replaced it: `arrival` (the file inputs stage) or `clear` (the clear stage, with its
 * call's result); absent in records made before inputs a clear replaced were listed (then `arrival`).
 */
const InputInfo = ResultInfo.omit({ stage: true }).extend({ by: z.enum(['arrival', 'clear']).optional() });
export type InputInfo = z.infer<typeof InputInfo>;

/**
 * A tool result of a turn that was sent whole (no reduction, so no handle): listed beside the
 * reduced ones, its text asked for with `result/page` (the same text on both sides).
 */
export const WholeResult = z.object({
  tool: z.string(),
  callId: z.string(),
  /** the file the call read, else the command it ran */
  source: z.string().optional(),
  chars: z.number().int().nonnegative(),
  tokens: z.number().nonnegative().optional(),
  /**
   * why the engine sent it whole: `over` when it is over its tool's cap and was kept whole all the same
   * (a read the agent asked for, kept while in use: `offload.keepReads`), with the engine's reason;
   * absent when the source cannot tell
   */
  why: z.object({ over: z.boolean(), reason: z.string() }).optional(),
});
export type WholeResult = z.infer<typeof WholeResult>;

/**
 * An identifier the agent wrote next that the projection had hidden: the handle that holds it, what
 * hid it (`cause`: the stage of the reduction, `offload-after-use`, `input` for a file input,
 * `unheld` when no stored output holds it), the tool and the turn that made the reduction.
 */
const Missed = z.object({
  id: z.string(),
  handle: Handle.optional(),
  cause: z.string().optional(),
  /** the cause in words, as `spillway replay` prints it (src/replay/misses.ts): the one place they are kept */
  causeLabel: z.string().optional(),
  tool: z.string().optional(),
  /** the file or command of the call whose output holds it (`$ go test ./...`, `src/a.ts`), when known */
  source: z.string().optional(),
  /** what the agent wrote around it in the reply that used it, on one line, cut short */
  wrote: z.string().optional(),
  since: z.number().int().nonnegative().optional(),
});
type Missed = z.infer<typeof Missed>;

/** A tool result the agent had already reduced itself (Claude Code's `<persisted-output>`): left alone, shown as saved by the agent. */
const SavedByAgentInfo = z.object({
  tool: z.string(),
  callId: z.string(),
  agent: z.string(),
  /** where the agent saved the full output ('' when it names no file) */
  file: z.string(),
  chars: z.number().nonnegative(),
});
type SavedByAgentInfo = z.infer<typeof SavedByAgentInfo>;

/** A tool result new in the turn that the agent had cut to a head and a tail itself: what it says it left out, and where the whole is. */
const TruncatedByAgentInfo = z.object({
  tool: z.string(),
  callId: z.string(),
  agent: z.string(),
  /** how much it says it left out, in `unit`s; absent when it does not say */
  omitted: z.number().nonnegative().optional(),
  unit: z.enum(['chars', 'lines', 'tokens']),
  /** where the agent says the whole output is ('' when it keeps none) */
  file: z.string(),
});

/**
 * The results a turn's request sent whole, grouped by why the clear stage left them so at that call
 * (`reason`, src/engine/types.ts `ClearHold`; `label`, its words from src/replay/held.ts), with the
 * tokens they sent: what is left to clear, and what stopped it.
 */
const HeldInfo = z.object({
  reason: z.string(),
  label: z.string(),
  results: z.number().int().positive(),
  tokens: z.number().nonnegative(),
});

export const TurnDetail = z.object({
  index: z.number().int().nonnegative(),
  results: z.array(ResultInfo),
  missed: z.array(Missed),
  savedByAgent: z.array(SavedByAgentInfo).optional(),
  truncatedByAgent: z.array(TruncatedByAgentInfo).optional(),
  /** the turn's own new tool results that were sent whole (absent when the request was not kept) */
  whole: z.array(WholeResult).optional(),
  /** call ids of the reduced results that are this turn's own (new in this turn) */
  own: z.array(z.string()).optional(),
  /** why `whole` is missing */
  wholeUnavailable: z.string().optional(),
  /** tool call inputs replaced by a marker in this turn's projection (decided in it or kept from earlier) */
  inputs: z.array(InputInfo).optional(),
  /** read-backs the missed identifiers would have cost the agent: one per stored output, one per identifier no output holds */
  readBacks: z.number().int().nonnegative().optional(),
  /** every result the request sent whole, earlier turns' included, by the clear stage's reason (absent when the source does not know) */
  held: z.array(HeldInfo).optional(),
});
export type TurnDetail = z.infer<typeof TurnDetail>;

const SIDES = ['original', 'projected'] as const;
export const Side = z.enum(SIDES);
export type Side = z.infer<typeof Side>;

/** Most characters of a text the host sends in one page: a 10 MB output is never sent whole. */
const MAX_PAGE_CHARS = 64 * 1024;

export const TextPage = z.object({
  text: z.string(),
  offset: z.number().int().nonnegative(),
  /** length of the whole text in characters */
  total: z.number().int().nonnegative(),
  /** set when the text cannot be shown (pruned, not recorded) */
  unavailable: z.string().optional(),
});
export type TextPage = z.infer<typeof TextPage>;

export const ToolCap = z.object({
  tool: z.string(),
  /** the cap in force under the current settings */
  cap: CapValue,
  /** set explicitly in spillway.toolCaps (rather than the default cap) */
  explicit: z.boolean(),
  /** turns of the open session whose results of this tool were reduced */
  reducedTurns: z.number().int().nonnegative(),
  /**
   * results of this tool over the cap that the engine sent whole all the same, and the reason most of
   * them share (a read the agent asked for, kept whole while in use: `offload.keepReads`)
   */
  keptWhole: z.object({ results: z.number().int().positive(), why: z.string() }).optional(),
});
export type ToolCap = z.infer<typeof ToolCap>;

export const Totals = z.object({
  originalTokens: z.number().nonnegative(),
  projectedTokens: z.number().nonnegative(),
  cacheStableShare: z.number().min(0).max(1),
  missed: z.number().int().nonnegative(),
  /** summed over the turns that carry cost, per price model; relative = projected / raw */
  cost: z
    .record(z.string(), z.object({ raw: z.number(), projected: z.number(), relative: z.number(), readBack: z.number().optional() }))
    .optional(),
});
export type Totals = z.infer<typeof Totals>;

/**
 * A session's totals from its turn summaries. Host and webview both compute them (the webview for
 * dry runs), so the rule lives here: the first call has no predecessor and cannot be cache-stable.
 */
export function totalsOf(turns: readonly TurnSummary[]): Totals {
  const later = turns.slice(1);
  const cost: NonNullable<Totals['cost']> = {};
  for (const t of turns) {
    for (const [name, c] of Object.entries(t.cost ?? {})) {
      const sum = (cost[name] ??= { raw: 0, projected: 0, relative: 1 });
      sum.raw += c.raw;
      sum.projected += c.projected;
      if (c.readBack !== undefined) sum.readBack = (sum.readBack ?? 0) + c.readBack;
    }
  }
  for (const c of Object.values(cost)) c.relative = c.raw > 0 ? c.projected / c.raw : 1;
  return {
    originalTokens: turns.reduce((a, t) => a + t.originalTokens, 0),
    projectedTokens: turns.reduce((a, t) => a + t.projectedTokens, 0),
    cacheStableShare: later.length ? later.filter((t) => t.cacheStable).length / later.length : 1,
    missed: turns.reduce((a, t) => a + t.missed, 0),
    ...(Object.keys(cost).length ? { cost } : {}),
  };
}

/** A model's list price (src/replay/prices.ts), so the inspector can show cost in dollars. */
export const Price = z.object({
  model: z.string().min(1),
  family: z.string(),
  inputPerMTok: z.number().positive(),
  /** where the price comes from (the provider's pricing page) */
  source: z.string(),
});
export type Price = z.infer<typeof Price>;

export const SessionView = z.object({
  session: SessionInfo,
  /** the models the cost can be priced at (the session's own first, when known) */
  prices: z.array(Price).optional(),
  turns: z.array(TurnSummary),
  caps: z.array(ToolCap),
  defaultCap: CapValue,
  capUnit: z.string(),
});
export type SessionView = z.infer<typeof SessionView>;

/**
 * Where a search found its text in one of a turn's results: the result, which of its texts held the
 * match, and a short snippet around it (the match at `at`, `length` long) the panel shows and marks.
 */
export const SearchMatch = z.object({
  turn: z.number().int().nonnegative(),
  tool: z.string(),
  callId: z.string(),
  /** the handle of the result (a reduced one or a file input); absent for a result sent whole */
  handle: Handle.optional(),
  /**
   * what held the match: the tool's name, the command the call ran or the file it named, the call id,
   * the handle, the original text, the text the model was sent
   */
  where: z.enum(['tool', 'command', 'file', 'call id', 'handle', 'original', 'projected']),
  snippet: z.string().max(400),
  at: z.number().int().nonnegative(),
  length: z.number().int().nonnegative(),
});
export type SearchMatch = z.infer<typeof SearchMatch>;

/**
 * The clear stage's settings a dry run ran under, so the panel can say why a clear moved (the
 * trigger reached later, or a clear that frees too little to pay back its cache rewrite).
 */
export const ClearSettings = z.object({
  enabled: z.boolean(),
  triggerTokens: z.number().nonnegative(),
  /** `trigger` or `payback` (src/engine/config.ts clear.schedule) */
  schedule: z.string(),
});
export type ClearSettings = z.infer<typeof ClearSettings>;

/**
 * The limit of a replayed session under one price model (src/replay/limits.ts), in the units of the
 * cost figures: raw history, the default's cost with read-backs priced (`kept`), the hindsight
 * oracle's and the floor's, and the share of the oracle's saving the default keeps,
 * (raw − kept) / (raw − oracle), absent when the oracle saves nothing.
 */
export const LimitFigures = z.object({
  raw: z.number().nonnegative(),
  kept: z.number().nonnegative(),
  oracle: z.number().nonnegative(),
  floor: z.number().nonnegative(),
  share: z.number().optional(),
});
export type LimitFigures = z.infer<typeof LimitFigures>;

export const SessionLimits = z.object({
  /** per price model (`anthropic`, `openai`, …) */
  models: z.record(z.string(), LimitFigures),
  /** identifiers the oracle missed: 0 by construction, shown when not */
  oracleMisses: z.number().int().nonnegative(),
});
export type SessionLimits = z.infer<typeof SessionLimits>;

/**
 * A replayed session replayed again as if its requests went to another provider (src/replay/routes.ts):
 * the engine then holds its decisions to that provider's prices, as the proxy would. The figures are
 * that replay's, under that provider's price model (`costModel`), in the units of the session's cost
 * figures: raw history, what Spillway sent, the read-backs its misses imply, and those misses.
 */
export const RoutedFigures = z.object({
  /** the price model, and the provider it was routed to (`anthropic`, `openai`, `openai-4o`) */
  costModel: z.string().min(1),
  raw: z.number().nonnegative(),
  projected: z.number().nonnegative(),
  readBack: z.number().nonnegative(),
  missedIds: z.number().int().nonnegative(),
  referencedIds: z.number().int().nonnegative(),
});
export type RoutedFigures = z.infer<typeof RoutedFigures>;

// ---- the message catalogue -------------------------------------------------------------------

const empty = z.object({}).strict();
const SessionRef = z.object({ sessionId: z.string().min(1) });

/** webview → host, no answer */
const commands = {
  'webview/ready': empty,
  'webview/log': z.object({ level: z.enum(['info', 'warn', 'error']), message: z.string().max(4000) }),
  /** `find`: open at the first line that holds this text (a missed identifier) */
  'result/openStored': z.object({ handle: Handle, find: z.string().min(1).max(500).optional() }),
  /** `turn` and `callId`: compare with the marker the model was sent in that turn (else the newest recorded) */
  'result/compare': z.object({ handle: Handle, turn: z.number().int().nonnegative().optional(), callId: z.string().min(1).optional() }),
  'result/copyHandle': z.object({ handle: Handle }),
} as const;

/** webview → host, each answered with its result type */
const requests = {
  'sessions/list': { params: empty, result: z.object({ sessions: z.array(SessionInfo) }) },
  'session/open': { params: SessionRef, result: SessionView },
  'turn/detail': { params: SessionRef.extend({ turn: z.number().int().nonnegative() }), result: TurnDetail },
  /** the projected side is the marker sent in `turn` for the call `callId` (each turn keeps its own); without them, the newest */
  'text/page': {
    params: SessionRef.extend({
      handle: Handle,
      side: Side,
      turn: z.number().int().nonnegative().optional(),
      callId: z.string().min(1).optional(),
      offset: z.number().int().nonnegative(),
      limit: z.number().int().positive().max(MAX_PAGE_CHARS),
    }),
    result: TextPage,
  },
  /** re-projects the session under other caps without saving them; null caps returns to the settings */
  'caps/dryRun': {
    params: SessionRef.extend({ caps: z.record(z.string(), CapChoice).nullable() }),
    /** perTool: the session's totals with only that tool's change applied (each changed tool, up to a few) */
    result: z.object({
      turns: z.array(TurnSummary),
      totals: Totals,
      perTool: z.record(z.string(), Totals).optional(),
      /** the clear stage's settings in force for the dry run */
      clear: ClearSettings.optional(),
    }),
  },
  'caps/save': {
    /** target `ask`: the host asks the user (workspace or user settings) and may be cancelled (toolCaps null) */
    params: z.object({ caps: z.record(z.string(), CapChoice), target: z.enum(['workspace', 'user', 'ask']).optional() }),
    result: z.object({ toolCaps: z.record(z.string(), CapValue), cancelled: z.boolean().optional() }),
  },
  /** one page of a result sent whole (no handle): the same text on both sides */
  'result/page': {
    params: SessionRef.extend({
      turn: z.number().int().nonnegative(),
      callId: z.string().min(1),
      offset: z.number().int().nonnegative(),
      limit: z.number().int().positive().max(MAX_PAGE_CHARS),
    }),
    result: TextPage,
  },
  /** the limit of a replayed session (the oracle and the floor replayed on the host, cancellable); an error for live sessions */
  'session/limits': { params: SessionRef, result: SessionLimits },
  /** a replayed session replayed as sent to another provider (`costModel`), cancellable; an error for live sessions and providers the engine holds no prices for */
  'session/routed': { params: SessionRef.extend({ costModel: z.string().min(1).max(40) }), result: RoutedFigures },
  /** turns whose own tool results (original text, the text the model was sent, tool, call id) contain `query` */
  'search/results': {
    params: SessionRef.extend({ query: z.string().min(1).max(500) }),
    /** matches: where the text was found, a few per turn, with a snippet to show */
    result: z.object({ turns: z.array(z.number().int().nonnegative()), truncated: z.boolean(), matches: z.array(SearchMatch).optional() }),
  },
} as const;

/** host → webview */
const notifications = {
  'sessions/changed': z.object({ sessions: z.array(SessionInfo) }),
  'session/turnsAppended': z.object({ sessionId: z.string(), turns: z.array(TurnSummary) }),
  /** the session's figures were recomputed (settings changed, replay re-run) */
  'session/reloaded': z.object({ sessionId: z.string() }),
  'caps/changed': z.object({ caps: z.array(ToolCap), defaultCap: CapValue }),
  /** show this session (Open Transcript, Browse Agent Sessions); `turn` selects a turn */
  'host/showSession': z.object({ sessionId: z.string(), turn: z.number().int().nonnegative().optional() }),
  /** a replay or dry run is working / done (null) */
  'host/progress': z.object({ message: z.string().nullable() }),
} as const;

export type CommandMethod = keyof typeof commands;
export type RequestMethod = keyof typeof requests;
export type NotificationMethod = keyof typeof notifications;
export type CommandParams<M extends CommandMethod> = z.infer<(typeof commands)[M]>;
export type RequestParams<M extends RequestMethod> = z.infer<(typeof requests)[M]['params']>;
export type RequestResult<M extends RequestMethod> = z.infer<(typeof requests)[M]['result']>;
export type NotificationParams<M extends NotificationMethod> = z.infer<(typeof notifications)[M]>;

// ---- envelopes -------------------------------------------------------------------------------

const Method = z.string().regex(/^[a-z][A-Za-z]*\/[a-z][A-Za-z]*$/);
const Envelope = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('command'), method: Method, params: z.unknown() }),
  z.object({ kind: z.literal('request'), id: z.number().int().nonnegative(), method: Method, params: z.unknown() }),
  z.object({
    kind: z.literal('response'),
    id: z.number().int().nonnegative(),
    method: Method,
    ok: z.boolean(),
    result: z.unknown().optional(),
    error: z.string().optional(),
  }),
  z.object({ kind: z.literal('notification'), method: Method, params: z.unknown() }),
]);

export type CommandMessage = { [M in CommandMethod]: { kind: 'command'; method: M; params: CommandParams<M> } }[CommandMethod];
export type RequestMessage = { [M in RequestMethod]: { kind: 'request'; id: number; method: M; params: RequestParams<M> } }[RequestMethod];
type ResponseMessage = {
  [M in RequestMethod]: { kind: 'response'; id: number; method: M } & (
    { ok: true; result: RequestResult<M> } | { ok: false; error: string }
  );
}[RequestMethod];
type NotificationMessage = {
  [M in NotificationMethod]: { kind: 'notification'; method: M; params: NotificationParams<M> };
}[NotificationMethod];
/** what the webview may send */
export type WebviewMessage = CommandMessage | RequestMessage;
/** what the host may send */
export type HostMessage = ResponseMessage | NotificationMessage;

export type Parsed<T> = { ok: true; message: T } | { ok: false; error: string };

function problem(e: z.ZodError): string {
  return e.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`)
    .join('; ');
}

const has = <T extends object>(o: T, k: string): k is Extract<keyof T, string> => Object.prototype.hasOwnProperty.call(o, k);

/** Validates a message the webview sent (the host calls this on everything it receives). */
export function parseWebviewMessage(data: unknown): Parsed<WebviewMessage> {
  const env = Envelope.safeParse(data);
  if (!env.success) return { ok: false, error: `not a Spillway message: ${problem(env.error)}` };
  const m = env.data;
  if (m.kind === 'command') {
    if (!has(commands, m.method)) return { ok: false, error: `unknown command ${m.method}` };
    const p = commands[m.method].safeParse(m.params);
    if (!p.success) return { ok: false, error: `${m.method}: ${problem(p.error)}` };
    return { ok: true, message: { kind: 'command', method: m.method, params: p.data } as CommandMessage };
  }
  if (m.kind === 'request') {
    if (!has(requests, m.method)) return { ok: false, error: `unknown request ${m.method}` };
    const p = requests[m.method].params.safeParse(m.params);
    if (!p.success) return { ok: false, error: `${m.method}: ${problem(p.error)}` };
    return { ok: true, message: { kind: 'request', id: m.id, method: m.method, params: p.data } as RequestMessage };
  }
  return { ok: false, error: `a webview may not send a ${m.kind}` };
}

/** Validates a message the host sent (the webview calls this on everything it receives). */
export function parseHostMessage(data: unknown): Parsed<HostMessage> {
  const env = Envelope.safeParse(data);
  if (!env.success) return { ok: false, error: `not a Spillway message: ${problem(env.error)}` };
  const m = env.data;
  if (m.kind === 'notification') {
    if (!has(notifications, m.method)) return { ok: false, error: `unknown notification ${m.method}` };
    const p = notifications[m.method].safeParse(m.params);
    if (!p.success) return { ok: false, error: `${m.method}: ${problem(p.error)}` };
    return { ok: true, message: { kind: 'notification', method: m.method, params: p.data } as NotificationMessage };
  }
  if (m.kind === 'response') {
    if (!has(requests, m.method)) return { ok: false, error: `response to unknown request ${m.method}` };
    if (!m.ok)
      return {
        ok: true,
        message: { kind: 'response', id: m.id, method: m.method, ok: false, error: m.error ?? 'failed' } as ResponseMessage,
      };
    const p = requests[m.method].result.safeParse(m.result);
    if (!p.success) return { ok: false, error: `${m.method} response: ${problem(p.error)}` };
    return { ok: true, message: { kind: 'response', id: m.id, method: m.method, ok: true, result: p.data } as ResponseMessage };
  }
  return { ok: false, error: `a host may not send a ${m.kind}` };
}

// ---- type guards and constructors ------------------------------------------------------------

export function isCommand<M extends CommandMethod>(m: WebviewMessage, method: M): m is Extract<CommandMessage, { method: M }> {
  return m.kind === 'command' && m.method === method;
}

export function command<M extends CommandMethod>(method: M, params: CommandParams<M>) {
  return { kind: 'command' as const, method, params };
}
export function request<M extends RequestMethod>(id: number, method: M, params: RequestParams<M>) {
  return { kind: 'request' as const, id, method, params };
}
export function notification<M extends NotificationMethod>(method: M, params: NotificationParams<M>) {
  return { kind: 'notification' as const, method, params };
}
export function response<M extends RequestMethod>(id: number, method: M, result: RequestResult<M>) {
  return { kind: 'response' as const, id, method, ok: true as const, result };
}
export function errorResponse(id: number, method: string, error: string) {
  return { kind: 'response' as const, id, method, ok: false as const, error };
}

/** Validates a result before the host sends it (a bug in the host shows as a clear error, not as a silent drop). */
export function checkResult<M extends RequestMethod>(method: M, result: unknown): RequestResult<M> {
  return requests[method].result.parse(result) as RequestResult<M>;
}
