/**
 * Gather, then report: which tool results are material the agent gathered (what a read, a search, a
 * fetch or a listing returned) and has not yet written from, so the clear stage leaves them alone.
 *
 * Why: a research sub-agent makes fifteen web searches, then writes its report citing their URLs.
 * The in-use window (`clear.inUseCalls`, in-use.ts) sees only the agent's last few calls, so a clear
 * at call 13 of 18 took the first searches: 61% of the report's identifiers were missed, and with the
 * read-backs the session cost more than sending everything. That is the ordinary shape of a sub-agent
 * (Claude Code's `Task`/`Agent`) and of any session that explores before it acts: what it gathers is
 * used all at once, at the end, not a little at each call.
 *
 * The rule (`clear.keepGathered`): a gathered result is in use from the call it arrives in until the
 * agent has written from it, that is through the first later reply of the agent that
 * - writes: a file written or edited (a file-writing tool, a heredoc or `>` redirect to a file,
 *   `sed -i`, `apply_patch`), or a report (text of REPORT_MIN_CHARS or more, or a reporting tool),
 *   and through every reply right after it that writes too: the run of writes is the writing from
 *   it (an agent that read five files patches them one reply at a time; the first patch is often a
 *   one-line `mod` declaration, and the next ones are built from what it read);
 * - or, outside a sub-agent, acts in any other way than gathering (runs a test, a build, a script):
 *   the session has moved from finding out to working, and the in-use window takes over.
 * A sub-agent (recognised by its system prompt: SUB_AGENT_MARKS) is sent to find out and report, so
 * only a write or a report ends its gathering; what it runs along the way is still finding out.
 * From the call after that reply on (after a run of writes, from the first call whose request shows
 * the reply after the run), the result is in use only as any result is (in-use.ts). While the latest
 * reply of the request writes, the run has not ended yet.
 *
 * What counts as gathering is the call, not the output: a read, search, fetch or listing tool, or a
 * shell command whose program only looks (GATHERING_PROGRAMS; `cat`, `rg`, `ls`, `git log`, `curl`).
 * Replies whose calls only plan (a to-do list: NEUTRAL_TOOLS) neither gather nor end a gathering.
 * Spillway's own read tool is a read like any other (a read-back), and a delegated sub-agent's
 * report (`Task`, `Agent`) is material gathered for the agent.
 *
 * Where it sits: a helper of the clear stage's in-use rule (in-use.ts), computed once per projection
 * from the request alone, so a later call decides an earlier one as it was decided (stickiness).
 */
import type { ParsedRequest } from '../formats';
import { FILE_WRITE_TOOLS, heredocWrites, SHELL_TOOLS } from '../file-inputs';
import { get, type JValue } from '../json';
import { fileReadKind } from '../previews/file-read';
import { listingKind } from '../previews/listing';
import { mainProgram } from '../previews/command';
import { searchKind } from '../previews/search';
import { hintForResult, type PreviewHint } from '../previews';
import { isReadToolName } from '../read-tool';
import { countUpTo } from './prefix-sums';
import { owned, type Results } from './results';

/**
 * Text of at least this many characters in one reply is a report (or an answer) written from what was
 * gathered. The narration between tool calls is a sentence or two: in the corpus's Claude Code
 * sessions its median is about 100 characters and sub-agents' mid-session notes stay under 1,100,
 * while their final reports run from 2,000 to 7,000.
 */
export const REPORT_MIN_CHARS = 1_500;

/**
 * The system prompt of a Claude Code sub-agent, as the proxy sees it. Claude Code 2.1 marks every
 * sub-agent request in its first system block (`cc_is_subagent=true`; the agents suite checks it on
 * the release it pins, test/agents/agents.test.ts); earlier versions are known by the opening of
 * their built-in agents' prompts (general-purpose, Explore, Plan). Only the start of the system
 * prompt is looked at: SYSTEM_SCAN_CHARS.
 */
const SUB_AGENT_MARKS =
  /\bcc_is_subagent=true\b|You are an agent for Claude Code|You are a file search specialist for Claude Code|You are a software architect and planning specialist for Claude Code/;
/** The marks above sit in the first few hundred characters of the system prompt: no need to read a whole one. */
const SYSTEM_SCAN_CHARS = 4_000;

/** Tools whose call gathers: web searches and fetches (file reads, searches and listings are the previews' kinds). */
const GATHERING_TOOLS =
  /^(web_?search|google_web_search|search_web|web_?fetch|fetch|fetch_url|read_url|url_context|browse|task|agent|taskoutput|notebookread|read_many_files|search_file_content)$/i;
/**
 * Programs that only look: what they print is material, and running them changes nothing. A shell
 * command is gathering when its main program (previews/command.ts) is one of these or reads, searches
 * or lists (the previews' kinds), and it writes no file.
 */
const GATHERING_PROGRAMS = new Set([
  'file',
  'stat',
  'wc',
  'strings',
  'od',
  'xxd',
  'hexdump',
  'which',
  'whereis',
  'type',
  'ldd',
  'readlink',
  'realpath',
  'pwd',
  'printenv',
  'uname',
  'whoami',
  'id',
  'hostname',
  'date',
  'ps',
  'df',
  'free',
  'lsblk',
  'lscpu',
  'jq',
  'yq',
  'curl',
  'wget',
  'man',
  'diff',
  'cmp',
  'md5sum',
  'sha256sum',
  'sort',
  'uniq',
  'cut',
  'awk',
  'basename',
  'dirname',
  'git log',
  'git show',
  'git status',
  'git diff',
  'git blame',
  'git branch',
  'git remote',
  'git rev-parse',
  'git describe',
  'git tag',
  'pip show',
  'pip list',
  'pip freeze',
  'pip3 show',
  'pip3 list',
  'npm ls',
  'npm list',
  'npm view',
  'cargo tree',
]);
/** Package managers' queries (the program alone would also cover installs). */
const PACKAGE_QUERY = /\b(pacman\s+-Q|apt\s+(list|show|search|policy)|apt-cache\s|dpkg\s+-[lLsS]\b|rpm\s+-q)/;
/** Programs that write what they are given: a patch, a file. */
const WRITING_PROGRAMS = new Set(['apply_patch', 'applypatch', 'patch', 'tee']);
/** A redirect of output to a file (not to /dev/null or another descriptor). */
const REDIRECT_TO_FILE = /(?:^|[^0-9&>])>>?[ \t]*(?!&|\/dev\/null)['"]?[\w./~-]/;
/** Tools that hand the agent's report over (Claude Code 2.1's `ReportFindings`, Cline's completion, SWE-agent's submit). */
const REPORTING_TOOLS = /^(reportfindings|report_findings|attempt_completion|submit)$/i;
/** Tools that only plan: a to-do list, a plan update, a tool search. They neither gather nor act. */
const NEUTRAL_TOOLS =
  /^(todowrite|todo_write|todoread|todo_read|update_plan|toolsearch|think|skill|exitplanmode|enterplanmode|bashoutput)$/i;
/** File-writing tools, by their bare name in any case (pi's `edit` and `write`). */
const WRITE_TOOLS = new Set(FILE_WRITE_TOOLS.map((t) => t.toLowerCase()));

/** What one call (a tool result's call) does, for this rule. */
type CallKind = 'gather' | 'write' | 'act' | 'neutral';

/** The kind of the call that produced a result, from its tool and command. */
export function callKind(hint: PreviewHint): CallKind {
  const tool = hint.tool ?? '';
  const bare = tool.replace(/^mcp__.+?__/, '').replace(/^.*\./, '');
  // an editor tool's `view` reads (OpenHands' and SWE-agent's str_replace_editor); its other commands write
  if (WRITE_TOOLS.has(bare.toLowerCase())) return /^view\b/.test(hint.command ?? '') ? 'gather' : 'write';
  if (REPORTING_TOOLS.test(bare)) return 'write';
  if (NEUTRAL_TOOLS.test(bare)) return 'neutral';
  if (GATHERING_TOOLS.test(bare) || isReadToolName(tool)) return 'gather';
  const command = hint.command;
  if (command === undefined) {
    // a shell call whose command is too long to read writes a file: nothing else makes a command that long
    if ((SHELL_TOOLS as readonly string[]).includes(bare)) return 'write';
    return fileReadKind.byCommand('', '', bare) || searchKind.byCommand('', '', bare) || listingKind.byCommand('', '', bare)
      ? 'gather'
      : 'act';
  }
  return commandKind(command, bare);
}

/** The kind of a shell command: it writes a file, only looks, or does something else. */
function commandKind(command: string, tool: string): CallKind {
  const program = mainProgram(command);
  if (heredocWrites(command).length || WRITING_PROGRAMS.has(program) || /\bsed\s+(-\w+\s+)*-i/.test(command)) return 'write';
  if (REDIRECT_TO_FILE.test(command.replace(/<<-?\s*(['"]?)(\w+)\1[^\n]*\n[\s\S]*?\n\s*\2\b/g, ''))) return 'write';
  if (program === '') return 'neutral';
  if (GATHERING_PROGRAMS.has(program) || PACKAGE_QUERY.test(command)) return 'gather';
  if (
    fileReadKind.byCommand(program, command, tool) ||
    searchKind.byCommand(program, command, tool) ||
    listingKind.byCommand(program, command, tool)
  )
    return 'gather';
  return 'act';
}

/** Kinds by call (tool and command), kept across projections: a session sends the same calls again on every call. */
const kindCache = new Map<string, CallKind>();
/** Entries kept before the cache is dropped whole. */
const KIND_CACHE_MAX = 20_000;

function cachedKind(hint: PreviewHint): CallKind {
  const key = `${hint.tool ?? ''}\u0000${hint.command ?? '\u0001'}`;
  let k = kindCache.get(key);
  if (k === undefined) {
    if (kindCache.size >= KIND_CACHE_MAX) kindCache.clear();
    k = callKind(hint);
    // a copy of the key: a slice of the request's text would keep the whole request alive
    kindCache.set(owned(key), k);
  }
  return k;
}

/** Whether the request is a sub-agent's (its system prompt says so: SUB_AGENT_MARKS). */
export function isSubAgent(req: ParsedRequest): boolean {
  return req.fixed.some((node) => SUB_AGENT_MARKS.test(req.text.slice(node.start, Math.min(node.end, node.start + SYSTEM_SCAN_CHARS))));
}

/** About how many characters of text (not tool calls, not thinking) an assistant item holds. */
function textChars(req: ParsedRequest, item: JValue): number {
  const content = get(item, 'content') ?? get(item, 'parts');
  if (!content) return 0;
  if (content.kind === 'string') return content.end - content.start - 2;
  if (content.kind !== 'array') return 0;
  let n = 0;
  for (const part of content.items) {
    const type = get(part, 'type');
    const typeText = type?.kind === 'string' ? req.text.slice(type.start + 1, type.end - 1) : undefined;
    if (typeText !== undefined && typeText !== 'text' && typeText !== 'output_text') continue;
    if (get(part, 'thought')) continue; // a Gemini thought summary
    const t = get(part, 'text');
    if (t?.kind === 'string') n += t.end - t.start - 2;
  }
  return n;
}

/**
 * For each result, the last call (0-based, as the clear stage counts the session's calls from
 * `checkpoints`) through which it is gathered material the agent has not yet written from; -1 for a
 * result that is not gathered (or not a `candidate`), Infinity while the agent has not written since.
 */
export function gatheredUntil(results: Results, checkpoints: readonly number[], candidate: (i: number) => boolean): number[] {
  const req = results.req;
  const list = results.list;
  const calls = checkpoints.length; // the last checkpoint is this call: it has made no reply yet
  const subAgent = isSubAgent(req);
  // what each reply of the agent did: the reply of call r is the run of assistant items at checkpoints[r]
  const writes = new Array<boolean>(calls).fill(false);
  const acts = new Array<boolean>(calls).fill(false);
  const kinds = new Array<CallKind | undefined>(list.length);
  for (let r = 0; r < calls - 1; r++) {
    let text = 0;
    for (let x = checkpoints[r]!; x < req.kinds.length && req.kinds[x] === 'assistant'; x++) text += textChars(req, req.items[x]!);
    if (text >= REPORT_MIN_CHARS) writes[r] = true;
  }
  for (let i = 0; i < list.length; i++) {
    const r = list[i]!;
    // the reply whose call this result answers: the last one before it
    const reply = countUpTo(checkpoints, r.item) - 1;
    if (reply < 0) continue;
    const kind = cachedKind(hintForResult(req, r));
    kinds[i] = kind;
    if (kind === 'write') writes[reply] = true;
    else if (kind === 'act') acts[reply] = true;
  }
  // the last call of the gathering that is under way at call r, for every r (from the end back): the
  // call of the first reply from r on that acts; or, when that reply writes, the call after the run of
  // writes it starts, which still saw the run open (its own reply unknown): so a later request decides
  // that call as it decided itself. The reply of the last call is not known yet (calls - 1), so a run
  // that reaches it is still open (Infinity)
  const ends = (r: number) => writes[r]! || (!subAgent && acts[r]!);
  const nextEnd = new Array<number>(calls + 1).fill(Number.POSITIVE_INFINITY);
  for (let r = calls - 1; r >= 0; r--) {
    if (!ends(r)) nextEnd[r] = nextEnd[r + 1]!;
    else if (!writes[r]!) nextEnd[r] = r;
    else if (r + 1 === calls - 1) nextEnd[r] = Number.POSITIVE_INFINITY;
    else nextEnd[r] = writes[r + 1]! ? nextEnd[r + 1]! : r + 1;
  }
  return list.map((r, i) => {
    if (kinds[i] !== 'gather' || !candidate(i)) return -1;
    // it arrives in the first call after its item; a reply in that call or later may write from it
    const arrives = countUpTo(checkpoints, r.item);
    return arrives < calls ? nextEnd[arrives]! : Number.POSITIVE_INFINITY;
  });
}
