/**
 * The way back an agent has: whether its request offers Spillway's MCP read tool.
 *
 * Why: a marker is only as good as the agent's way back to what it hides. An agent that has
 * `spillway mcp` among its tools reads back with one tool call and no permission prompt, while
 * `spillway read` in a shell costs it a Bash permission (Claude Code) or is impossible (no shell), so
 * a marker names the tool when the request carries it, and the command otherwise.
 *
 * Where it sits: the run (run.ts) asks `findReadTool` once per call, unless the session already
 * found the tool, and hands the name to the markers (markers.ts). The session keeps it (session.ts):
 * once a session has offered the tool, later markers keep naming it even on a request that does not
 * list it (a side request for a title, a sub-agent), and markers already sent are recalled as they
 * were, so the projected prefix never changes.
 *
 * Clients name an MCP tool their own way: Claude Code `mcp__spillway__read_output`, Codex
 * `read_output` in the Responses namespace `mcp__spillway` (`mcp__spillway.read_output`),
 * VS Code `mcp_spillway_read_output`, others `spillway__read_output`, `spillway.read_output` or
 * `spillway/read_output`; the VS Code language model tool is `spillway_read_output`. All of them
 * are the same tool over the same store, and are matched here.
 */
import type { ParsedRequest, ToolResult } from './formats';
import { decodeString, get, getString, type JValue } from './json';

/** The MCP server's name, which clients put in front of its tools' names. */
export const MCP_SERVER_NAME = 'spillway';
/** The read tool's own name inside the server. */
export const MCP_READ_TOOL = 'read_output';

/** Every form of `spillway` + `read_output` that clients give the tool (see the module comment). */
const READ_TOOL_NAME = new RegExp(`^(?:mcp(?:__|_|\\.))?${MCP_SERVER_NAME}(?:__|_|\\.|/|:)${MCP_READ_TOOL}$`);

/** True when `name` is Spillway's read tool as some client names it. */
export function isReadToolName(name: string): boolean {
  return READ_TOOL_NAME.test(name);
}

/** The read tool as Codex's code mode exposes it to `exec`'s JavaScript (`tools.mcp__spillway__read_output(…)`). */
const READ_TOOL_IN_CODE = new RegExp(`\\b(?:mcp__)?${MCP_SERVER_NAME}_{1,2}${MCP_READ_TOOL}\\s*\\(`);

/**
 * True when the result answers a call whose code calls the read tool: Codex signed in with ChatGPT
 * reaches MCP tools only through its `exec` tool (JavaScript), so a read-back comes back as `exec`'s
 * answer, not under the read tool's name. Only results with an embedded output (`exec`'s JSON) and a
 * string input are looked at.
 */
export function isReadBackInCode(text: string, r: ToolResult): boolean {
  const input = r.embedded ? r.call?.input : undefined;
  return input?.kind === 'string' && READ_TOOL_IN_CODE.test(decodeString(text, input));
}

/** The name of a tool definition in the OpenAI and Anthropic formats (`name`, or `function.name`). */
function toolName(text: string, tool: JValue): string | undefined {
  return getString(text, tool, 'name') ?? getString(text, get(tool, 'function'), 'name');
}

/** The longest name of the read tool in any client's form (see READ_TOOL_NAME): where to look back for its line's start. */
const MAX_NAME = 40;

/**
 * A deferred tool: Claude Code (with tool search) sends MCP tools' schemas only on demand and lists
 * their names, one a line, in a system message ("…load tool schemas before calling them:\n…\n
 * mcp__spillway__read_output\n…"). In the JSON text those line breaks are `\n` escapes, so a listed
 * name runs from just after an escaped newline to just before another one (or the string's end).
 * Found with `indexOf`, so a request of megabytes costs one native scan.
 */
function listedReadTool(text: string, unchangedBefore: number): string | undefined {
  // a listed name is judged on the characters from MAX_NAME before it to two after it: one judged
  // on characters of the unchanged part only would have been found in the earlier request
  const start = Math.max(0, unchangedBefore - MCP_READ_TOOL.length - 1);
  for (let at = text.indexOf(MCP_READ_TOOL, start); at >= 0; at = text.indexOf(MCP_READ_TOOL, at + 1)) {
    const end = at + MCP_READ_TOOL.length;
    // only the few chars a name can span are looked at, whatever the length of the line
    const from = Math.max(0, at - MAX_NAME);
    const lineStart = text.slice(from, at).lastIndexOf('\\n');
    if (lineStart < 0) continue;
    const name = text.slice(from + lineStart + 2, end);
    const after = text.slice(end, end + 2);
    if ((after === '\\n' || after[0] === '"') && isReadToolName(name)) return name;
  }
  return undefined;
}

/**
 * The name the request gives Spillway's read tool (among its tools, or listed as a deferred tool), or
 * undefined. `unchangedBefore`: the request's text up to there is that of an earlier request of the
 * session in which no read tool was found, so a deferred listing is looked for only after it (a long
 * session's request is megabytes; the scan of the whole text was a fifth of a call's time).
 */
export function findReadTool(req: ParsedRequest, unchangedBefore = 0): string | undefined {
  for (const key of ['tools', 'functions']) {
    const list = get(req.root, key);
    if (list?.kind !== 'array') continue;
    for (const tool of list.items) {
      // the Gemini API groups function declarations in a tool (Gemini CLI names MCP tools `mcp_spillway_read_output`)
      const declarations = get(tool, 'functionDeclarations') ?? get(tool, 'function_declarations');
      if (declarations?.kind === 'array') {
        for (const d of declarations.items) {
          const declared = getString(req.text, d, 'name');
          if (declared !== undefined && isReadToolName(declared)) return declared;
        }
      }
      const name = toolName(req.text, tool);
      if (name !== undefined && isReadToolName(name)) return name;
      // a Responses namespace (Codex groups each MCP server's tools in one: `mcp__spillway` holding `read_output`)
      const inner = get(tool, 'tools');
      if (name === undefined || getString(req.text, tool, 'type') !== 'namespace' || inner?.kind !== 'array') continue;
      for (const t of inner.items) {
        const full = `${name}.${toolName(req.text, t) ?? ''}`;
        if (isReadToolName(full)) return full;
      }
    }
  }
  return listedReadTool(req.text, unchangedBefore);
}
