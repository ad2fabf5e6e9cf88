/**
 * `spillway`: the command line. `project` reduces one request read from stdin, `read` prints (part
 * of) a stored output. Bad input of any kind exits with status 2 and one line that says what was
 * wrong and where; a stack trace means a bug in Spillway, reported with status 1.
 */
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import {
  createEngine,
  isWireFormat,
  PRESET_NAMES,
  PROVIDERS,
  SpillwayError,
  validateConfig,
  type FormatOption,
  type Reduction,
} from '../engine';
import { FileStore, MemoryStore } from '../store';
import { readTranscript, TRANSCRIPT_FORMATS, type TranscriptFormat } from '../replay/readers';
import { poolReplays, replay, type ReplayOptions, type ReplayResult, type ReplayTotals } from '../replay/replay';
import { measureLimits } from '../replay/limits';
import { replayEachRoute } from '../replay/routes';
import { sessionFilesIn } from '../replay/sessions-folder';
import type { OutputStore } from '../store/entry';
import { DEFAULT_PROXY_PORT, runStandaloneProxy } from '../proxy';
import { WEBSOCKET_MODES, type WebSocketMode } from '../proxy/websocket';
import { int, parseArgs, str, type ParsedArgs } from './args';
import { serveMcp } from './mcp';
import { progressLine, type Progress } from './progress';
import { folderSummary, ReductionCollector, sessionSummary, worstCalls, type CallOf, type FolderSession } from './replay-summary';

/** Each command's usage, printed by `spillway COMMAND --help`; together they are `USAGE`. */
export const COMMAND_USAGE: Record<string, string> = {
  project: `  spillway project [--format auto|openai-chat|openai-responses|anthropic-messages|gemini] [--config FILE] [--preset NAME]
                   [--store DIR] [--report FILE] [--session ID] < request.json`,
  read: `  spillway read HANDLE [--store DIR] [--lines A:B] [--grep REGEX] [--context N] [--ignore-case]
                       [--offset N --limit N] [--json]`,
  replay: `  spillway replay TRANSCRIPT|DIR [--format auto|claude-code|codex|swe-agent|openai-chat|anthropic-messages|openai-responses|openhands|pi|gemini|gemini-cli|copilot-cli|copilot-chat|cline|cline-task|qwen-code|opencode|continue]
                  [--config FILE] [--preset NAME] [--store DIR] [--instance ID] [--agent-prelude on|off] [--provider NAME] [--each-route] [--limits] [--json]`,
  proxy: `  spillway proxy [--port N] [--store DIR] [--sessions DIR] [--openai-upstream URL] [--anthropic-upstream URL]
                 [--chatgpt-upstream URL] [--gemini-upstream URL] [--config FILE] [--preset NAME] [--websockets project|refuse]
                 [--observe] [--answer-reads]`,
  mcp: `  spillway mcp [--store DIR]    an MCP server over stdio: the read_output and find_outputs tools`,
};
const STORE_NOTE = 'the store defaults to $SPILLWAY_STORE, else ~/.spillway/store';
const STATUS_NOTE = 'exit status: 0 done, 2 bad input (one line on stderr), 3 read --grep found no match, 1 a bug in spillway';
export const USAGE = `usage:\n${Object.values(COMMAND_USAGE).join('\n')}\n${STORE_NOTE}\n${STATUS_NOTE}`;
/** `spillway read --grep` that matched nothing: not an error, but not a success a script should miss. */
export const NO_MATCH_STATUS = 3;

/** Thrown by a command that finished but has a distinct status to report (after its one line). */
class CommandStatus extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export function defaultStoreDir(): string {
  return process.env.SPILLWAY_STORE || join(homedir(), '.spillway', 'store');
}

function storeFrom(a: ParsedArgs, command: string): FileStore {
  const dir = resolve(str(a, 'store') ?? defaultStoreDir());
  const store = new FileStore(dir);
  // a path that exists but is not a folder can never hold a store: say so before any work is done
  let isFolder = true;
  try {
    isFolder = statSync(dir).isDirectory();
  } catch {
    /* missing: created on the first put */
  }
  if (!isFolder) throw new SpillwayError(`${command}: the store ${dir} is not a folder (--store DIR, or $SPILLWAY_STORE)`, 'usage');
  return store;
}

/** Reads and validates `--config FILE` and `--preset NAME` into one strict configuration. */
export function configFrom(a: ParsedArgs, command: string): ReturnType<typeof validateConfig> {
  const file = str(a, 'config');
  let raw: Record<string, unknown> = {};
  if (file) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      throw new SpillwayError(
        `${command}: cannot read --config ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        'usage',
      );
    }
    try {
      raw = JSON.parse(text) as Record<string, unknown>;
    } catch (e) {
      throw new SpillwayError(`${command}: --config ${file} is not valid JSON: ${(e as Error).message}`, 'bad-config');
    }
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
      throw new SpillwayError(`${command}: --config ${file} must hold a JSON object`, 'bad-config');
  }
  const preset = str(a, 'preset');
  if (preset !== undefined) {
    if (!(PRESET_NAMES as readonly string[]).includes(preset))
      throw new SpillwayError(`${command}: unknown --preset ${preset} (known: ${PRESET_NAMES.join(', ')})`, 'usage');
    raw = { ...raw, preset };
  }
  return validateConfig(raw, file ? `--config ${file}` : 'config');
}

export function formatFrom(a: ParsedArgs, command: string, allowed: readonly string[] = ['auto']): FormatOption {
  const f = str(a, 'format') ?? 'auto';
  if (f === 'auto' || isWireFormat(f) || allowed.includes(f)) return f as FormatOption;
  throw new SpillwayError(
    `${command}: unknown --format ${f} (known: auto, openai-chat, openai-responses, anthropic-messages, gemini)`,
    'usage',
  );
}

function readStdin(): string {
  try {
    return readFileSync(0, 'utf8');
  } catch (e) {
    throw new SpillwayError(`cannot read the request from standard input: ${(e as Error).message}`, 'usage');
  }
}

/** The request format a body's own traits prove, with the trait; undefined when its shape allows more than one. */
export function provenFormat(body: unknown): { format: string; because: string } | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if (!('messages' in b) && 'input' in b) return { format: 'openai-responses', because: 'it has "input" and no "messages"' };
  if (!('messages' in b) && Array.isArray(b.contents)) return { format: 'gemini', because: 'it has "contents" and no "messages"' };
  if (!Array.isArray(b.messages)) return undefined;
  if ('input' in b) return undefined;
  if ('system' in b) return { format: 'anthropic-messages', because: 'it has a top-level "system"' };
  for (const m of b.messages as unknown[]) {
    if (!m || typeof m !== 'object') continue;
    const msg = m as Record<string, unknown>;
    if (typeof msg.role === 'string' && ['system', 'developer', 'tool', 'function'].includes(msg.role))
      return { format: 'openai-chat', because: `a message has role "${msg.role}"` };
    if ('tool_calls' in msg) return { format: 'openai-chat', because: 'a message has "tool_calls"' };
    if (Array.isArray(msg.content)) {
      for (const part of msg.content as unknown[]) {
        const type = part && typeof part === 'object' ? (part as { type?: unknown }).type : undefined;
        if (type === 'tool_use' || type === 'tool_result')
          return { format: 'anthropic-messages', because: `a message has a "${type}" block` };
      }
    }
  }
  return undefined;
}

function project(argv: string[]): void {
  const a = parseArgs(
    argv,
    {
      format: { kind: 'string' },
      config: { kind: 'string' },
      preset: { kind: 'string' },
      store: { kind: 'string' },
      report: { kind: 'string' },
      session: { kind: 'string' },
    },
    'project',
  );
  if (a.positional.length)
    throw new SpillwayError(
      `project: unexpected argument ${JSON.stringify(a.positional[0])}; the request is read from standard input`,
      'usage',
    );
  const config = configFrom(a, 'project');
  const format = formatFrom(a, 'project');
  const report = str(a, 'report');
  // a report that cannot be written is known before anything is projected or stored
  if (report !== undefined) {
    let folder = false;
    try {
      folder = statSync(dirname(resolve(report))).isDirectory();
    } catch {
      /* missing */
    }
    if (!folder)
      throw new SpillwayError(`project: cannot write --report ${report}: the folder ${dirname(resolve(report))} does not exist`, 'usage');
  }
  const store = storeFrom(a, 'project');
  const input = readStdin();
  if (input.trim() === '')
    throw new SpillwayError('project: standard input is empty; pipe a request body in, e.g. spillway project < request.json', 'usage');
  if (format !== 'auto') {
    let body: unknown;
    try {
      body = JSON.parse(input);
    } catch {
      /* the engine says where the JSON is broken */
    }
    const proven = provenFormat(body);
    if (proven && proven.format !== format) {
      throw new SpillwayError(
        `project: --format ${format} does not match the request: it is ${proven.format} (${proven.because}); pass --format ${proven.format} or --format auto`,
        'usage',
      );
    }
  }
  const engine = createEngine(config, { store });
  let result;
  try {
    result = engine.project(input, format, { session: str(a, 'session') });
  } catch (e) {
    // a store that fails names itself; anything else is about the request
    if (e instanceof SpillwayError)
      throw new SpillwayError(e.code === 'io' ? `project: ${e.message}` : `project: standard input: ${e.message}`, e.code);
    throw e;
  }
  if (report) {
    try {
      writeFileSync(
        report,
        JSON.stringify(
          {
            reductions: result.reductions.map((r) => ({ callId: r.callId, tool: r.tool, stage: r.stage, ...reported(r) })),
            // file inputs replaced by a marker, whatever replaced them (on arrival, or a clear with their call's result)
            inputs: result.inputs.map((r) => ({ callId: r.callId, tool: r.tool, by: r.by, ...reported(r) })),
            stats: result.stats,
          },
          null,
          2,
        ) + '\n',
      );
    } catch (e) {
      throw new SpillwayError(
        `project: cannot write --report ${report}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        'usage',
      );
    }
  }
  // exactly the projected bytes: with nothing to reduce they are the input's, byte for byte
  process.stdout.write(result.request as string);
}

function read(argv: string[]): void {
  const a = parseArgs(
    argv,
    {
      store: { kind: 'string' },
      lines: { kind: 'string' },
      grep: { kind: 'string' },
      context: { kind: 'int', min: 0 },
      offset: { kind: 'int', min: 0 },
      limit: { kind: 'int', min: 0 },
      json: { kind: 'bool' },
      'ignore-case': { kind: 'bool' },
    },
    'read',
  );
  const [handle, extra] = a.positional;
  if (!handle) throw new SpillwayError('read: missing HANDLE, e.g. spillway read sw_0123456789abcdef01234567', 'usage');
  if (extra !== undefined) throw new SpillwayError(`read: unexpected argument ${JSON.stringify(extra)} after the handle`, 'usage');
  const store = storeFrom(a, 'read');
  const options = {
    ...(str(a, 'lines') !== undefined ? { lines: str(a, 'lines') } : {}),
    ...(str(a, 'grep') !== undefined ? { grep: str(a, 'grep') } : {}),
    ...(int(a, 'context') !== undefined ? { context: int(a, 'context') } : {}),
    ...(int(a, 'offset') !== undefined ? { offset: int(a, 'offset') } : {}),
    ...(int(a, 'limit') !== undefined ? { limit: int(a, 'limit') } : {}),
    ...(a.flags.get('ignore-case') ? { ignoreCase: true } : {}),
  };
  const result = store.read(handle, options);
  const lines = options.lines !== undefined ? /^(\d+)/.exec(options.lines.trim()) : null;
  if (lines && Number(lines[1]) > result.totalLines) {
    throw new SpillwayError(`read: --lines ${options.lines} starts past the end: ${handle} has ${result.totalLines} line(s)`, 'usage');
  }
  if (a.flags.get('json')) {
    const meta = store.meta(handle);
    process.stdout.write(JSON.stringify({ ...result, meta, path: store.locate(handle) }, null, 2) + '\n');
  } else {
    process.stdout.write(result.text);
  }
  if (options.grep !== undefined && result.matches === 0) {
    throw new CommandStatus(
      `read: --grep ${JSON.stringify(options.grep)} matched no line of ${handle} (${result.totalLines} line(s))`,
      NO_MATCH_STATUS,
    );
  }
}

/** Serves the local proxy on 127.0.0.1 until SIGINT/SIGTERM (see src/proxy). */
async function proxy(argv: string[]): Promise<void> {
  const a = parseArgs(
    argv,
    {
      port: { kind: 'int', min: 0 },
      store: { kind: 'string' },
      'openai-upstream': { kind: 'string' },
      'anthropic-upstream': { kind: 'string' },
      'chatgpt-upstream': { kind: 'string' },
      'gemini-upstream': { kind: 'string' },
      config: { kind: 'string' },
      preset: { kind: 'string' },
      sessions: { kind: 'string' },
      websockets: { kind: 'string' },
      observe: { kind: 'bool' },
      'answer-reads': { kind: 'bool' },
    },
    'proxy',
  );
  if (a.positional.length) throw new SpillwayError(`proxy: unexpected argument ${JSON.stringify(a.positional[0])}`, 'usage');
  const port = int(a, 'port') ?? DEFAULT_PROXY_PORT;
  if (port > 65535) throw new SpillwayError(`proxy: --port must be at most 65535, got ${port}`, 'usage');
  const config = configFrom(a, 'proxy');
  const sessions = str(a, 'sessions');
  const websockets = str(a, 'websockets');
  if (websockets !== undefined && !(WEBSOCKET_MODES as readonly string[]).includes(websockets)) {
    throw new SpillwayError(`proxy: unknown --websockets ${websockets} (known: ${WEBSOCKET_MODES.join(', ')})`, 'usage');
  }
  try {
    await runStandaloneProxy({
      port,
      config,
      storeDir: resolve(str(a, 'store') ?? defaultStoreDir()),
      ...(sessions !== undefined ? { sessionsDir: resolve(sessions) } : {}),
      ...(websockets !== undefined ? { websockets: websockets as WebSocketMode } : {}),
      // forward every request byte for byte; record what Spillway would have sent
      ...(a.flags.get('observe') === true ? { mode: 'observe' as const } : {}),
      ...(a.flags.get('answer-reads') === true ? { answerReads: true } : {}),
      ...(str(a, 'openai-upstream') !== undefined ? { openaiUpstream: str(a, 'openai-upstream') } : {}),
      ...(str(a, 'anthropic-upstream') !== undefined ? { anthropicUpstream: str(a, 'anthropic-upstream') } : {}),
      ...(str(a, 'chatgpt-upstream') !== undefined ? { chatgptUpstream: str(a, 'chatgpt-upstream') } : {}),
      ...(str(a, 'gemini-upstream') !== undefined ? { geminiUpstream: str(a, 'gemini-upstream') } : {}),
    });
  } catch (e) {
    if (e instanceof SpillwayError) throw new SpillwayError(`proxy: ${e.message}`, e.code);
    throw e;
  }
}

/** The flags of `spillway replay`. */
const REPLAY_FLAGS = {
  format: { kind: 'string' },
  config: { kind: 'string' },
  preset: { kind: 'string' },
  store: { kind: 'string' },
  instance: { kind: 'string' },
  'agent-prelude': { kind: 'string' },
  limits: { kind: 'bool' },
  provider: { kind: 'string' },
  'each-route': { kind: 'bool' },
  json: { kind: 'bool' },
} as const;

/** One session read and replayed, with what the summary needs of its reductions. */
async function replayOne(
  file: string,
  opts: {
    format: string;
    instance?: string;
    config: ReplayOptions['config'];
    store: OutputStore;
    prelude: boolean;
    limits: boolean;
    provider?: string;
    eachRoute: boolean;
  },
  progress: Progress,
  label: string,
): Promise<{ result: ReplayResult; figures: ReductionCollector }> {
  const transcript = await readTranscript(file, {
    format: opts.format as TranscriptFormat | 'auto',
    ...(opts.instance !== undefined ? { instance: opts.instance } : {}),
    onProgress: (read, total) => progress.update(`${label}: reading ${total ? Math.round((read / total) * 100) : 0}%`),
  });
  if (transcript.calls.length === 0 && transcript.skipped.total > 0) {
    const hint = opts.format === 'auto' ? '' : `; is it really ${opts.format}? try --format auto`;
    throw new SpillwayError(
      `replay: ${file} gave 0 calls as ${transcript.source} (${transcript.skipped.total} record(s) skipped, e.g. ${transcript.skipped.notes[0] ?? 'none'})${hint}`,
      'usage',
    );
  }
  const figures = new ReductionCollector();
  const replayOpts: ReplayOptions = {
    config: opts.config,
    store: opts.store,
    prelude: opts.prelude,
    ...(opts.provider !== undefined ? { provider: opts.provider } : {}),
    onProjection: (k, c) => figures.add(k, c.projection),
    onCall: (k, n) => progress.update(`${label}: call ${k + 1} of ${n}`),
  };
  // --each-route: every other provider's columns from a replay routed there (one more replay each)
  const result = opts.eachRoute ? replayEachRoute(transcript, replayOpts) : replay(transcript, replayOpts);
  if (opts.limits) {
    // the oracle (with and without its hindsight clears) and the floor replay the session three times more, each with a store of its own (never --store)
    progress.update(`${label}: the oracle and the floor`);
    result.totals.limits = measureLimits(transcript, { config: opts.config, prelude: opts.prelude });
  }
  return { result, figures };
}

/** Today's machine output of one replay (`--json`), with the session's model and family. */
function replayJson(r: ReplayResult): string {
  return (
    JSON.stringify(
      {
        format: r.format,
        ...(r.model !== undefined ? { model: r.model } : {}),
        ...(r.family !== undefined ? { family: r.family } : {}),
        prelude: r.prelude ?? null,
        calls: r.calls.map((c) => ({
          index: c.index,
          originalTokens: c.originalTokens,
          projectedTokens: c.projectedTokens,
          reductions: c.reductions,
          cachedPrefixTokens: c.cachedPrefixTokens,
          cacheStable: c.cacheStable,
          referencedIds: c.referencedIds,
          missedIds: c.missedIds,
          referencedIdsBefore: c.referencedIdsBefore,
          missedIdsBefore: c.missedIdsBefore,
          missed: c.missed,
          readBacks: c.readBacks,
          cost: c.cost,
          ...(c.gapMs !== undefined ? { gapMs: c.gapMs } : {}),
          ...(c.coldFor ? { coldFor: c.coldFor } : {}),
        })),
        totals: r.totals,
        skipped: r.skipped,
      },
      null,
      2,
    ) + '\n'
  );
}

/** Serves the store over MCP on stdin/stdout until the client closes it (see ./mcp.ts). */
async function mcp(argv: string[]): Promise<void> {
  const a = parseArgs(argv, { store: { kind: 'string' } }, 'mcp');
  if (a.positional.length) throw new SpillwayError(`mcp: unexpected argument ${JSON.stringify(a.positional[0])}`, 'usage');
  await serveMcp(storeFrom(a, 'mcp'));
}

async function replayCommand(argv: string[]): Promise<void> {
  const a = parseArgs(argv, REPLAY_FLAGS, 'replay');
  const [target, extra] = a.positional;
  if (!target)
    throw new SpillwayError('replay: missing TRANSCRIPT or DIR, e.g. spillway replay ~/.claude/projects/my-app/1234.jsonl', 'usage');
  if (extra !== undefined) throw new SpillwayError(`replay: unexpected argument ${JSON.stringify(extra)} after the transcript`, 'usage');
  const format = str(a, 'format') ?? 'auto';
  if (format !== 'auto' && !(TRANSCRIPT_FORMATS as readonly string[]).includes(format)) {
    throw new SpillwayError(`replay: unknown --format ${format} (known: auto, ${TRANSCRIPT_FORMATS.join(', ')})`, 'usage');
  }
  const config = configFrom(a, 'replay');
  const instance = str(a, 'instance');
  const store = str(a, 'store') ? new FileStore(resolve(str(a, 'store')!)) : new MemoryStore();
  const json = a.flags.get('json') === true;
  const preludeFlag = str(a, 'agent-prelude') ?? 'on';
  if (preludeFlag !== 'on' && preludeFlag !== 'off')
    throw new SpillwayError(`replay: --agent-prelude is on or off, not ${JSON.stringify(preludeFlag)}`, 'usage');
  const prelude = preludeFlag === 'on';
  const limits = a.flags.get('limits') === true;
  const eachRoute = a.flags.get('each-route') === true;
  const provider = str(a, 'provider');
  if (provider !== undefined && !PROVIDERS.includes(provider))
    throw new SpillwayError(`replay: --provider is one of ${PROVIDERS.join(', ')}, not ${JSON.stringify(provider)}`, 'usage');
  const routing = { ...(provider !== undefined ? { provider } : {}), eachRoute };
  let isFolder = false;
  try {
    isFolder = statSync(target).isDirectory();
  } catch {
    /* not there: readTranscript says so, naming it */
  }
  const progress = progressLine(process.stderr);
  try {
    if (!isFolder) {
      const { result, figures } = await replayOne(
        target,
        { format, ...(instance !== undefined ? { instance } : {}), config, store, prelude, limits, ...routing },
        progress,
        basename(target),
      );
      progress.done();
      process.stdout.write(json ? replayJson(result) : sessionSummary(target, result, figures, prelude));
      return;
    }
    if (instance !== undefined)
      throw new SpillwayError(
        'replay: --instance picks one OpenHands instance or Copilot CLI sub-agent of one file, not of a folder',
        'usage',
      );
    const found = sessionFilesIn(target);
    if (found.files.length === 0) {
      throw new SpillwayError(
        `replay: ${target} holds no transcript (${found.skipped.length} file(s) in no known format, Markdown not counted)`,
        'usage',
      );
    }
    const sessions: FolderSession[] = [];
    const results: { totals: ReplayTotals }[] = [];
    // the corpus' worst calls for misses, kept as the sessions go (a folder's calls are not all held)
    let worst: CallOf[] = [];
    for (const [i, file] of found.files.entries()) {
      const name = relative(target, file);
      try {
        const { result } = await replayOne(
          file,
          { format, config, store, prelude, limits, ...routing },
          progress,
          `session ${i + 1} of ${found.files.length}, ${name}`,
        );
        sessions.push({
          file: name,
          format: result.format,
          ...(result.model !== undefined ? { model: result.model } : {}),
          ...(result.prelude ? { prelude: result.prelude } : {}),
          totals: result.totals,
        });
        results.push(result);
        worst = worstCalls([...worst, ...result.calls.map((call) => ({ file: name, call }))]);
      } catch (err) {
        // a session that cannot be read is a row that says why; the others still count
        if (!(err instanceof SpillwayError)) throw err;
        if (err.code === 'unknown-format') {
          found.skipped.push(name);
          continue;
        }
        sessions.push({ file: name, error: err.message.split('\n')[0]!.replace(/^replay: /, '') });
      }
    }
    progress.done();
    const pooled = poolReplays(results);
    process.stdout.write(
      json
        ? JSON.stringify(
            {
              dir: target,
              sessions,
              pooled,
              worstCalls: worst.map((w) => ({ file: w.file, ...w.call })),
              skippedFiles: found.skipped,
              ...(found.superseded.length > 0 ? { supersededFiles: found.superseded } : {}),
            },
            null,
            2,
          ) + '\n'
        : folderSummary(target, sessions, pooled, { skipped: found.skipped.length, superseded: found.superseded.length }, worst, prelude),
    );
  } finally {
    progress.done();
  }
}

export type Command = (argv: string[]) => void | Promise<void>;
export const COMMANDS: Record<string, Command> = { project, read, replay: replayCommand, proxy, mcp };

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE + '\n');
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (run && rest.some((r) => r === '--help' || r === '-h')) {
    process.stdout.write(`usage:\n${COMMAND_USAGE[command]}\n${STORE_NOTE}\n${STATUS_NOTE}\n`);
    return 0;
  }
  try {
    if (!run) throw new SpillwayError(`unknown command ${JSON.stringify(command)} (known: ${Object.keys(COMMANDS).join(', ')})`, 'usage');
    await run(rest);
    return 0;
  } catch (e) {
    if (e instanceof CommandStatus) {
      process.stderr.write(`spillway: ${e.message}\n`);
      return e.status;
    }
    if (e instanceof SpillwayError) {
      process.stderr.write(`spillway: ${e.message.split('\n')[0]}\n`);
      return 2;
    }
    process.stderr.write(`spillway: internal error (a bug, please report it): ${(e as Error).stack ?? e}\n`);
    return 1;
  }
}

if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) {
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}

/** What `--report` says of a reduced result or a replaced input, beside which it was. */
function reported(r: Pick<Reduction, 'reason' | 'originalChars' | 'projectedChars' | 'originalTokens' | 'projectedTokens' | 'handle'>) {
  return {
    reason: r.reason,
    originalChars: r.originalChars,
    projectedChars: r.projectedChars,
    originalTokens: r.originalTokens,
    projectedTokens: r.projectedTokens,
    handle: r.handle,
  };
}
