/**
 * `spillway mcp`: the store as an MCP server over stdio, so any agent with MCP (Claude Code, Codex,
 * VS Code's agents, the SDK-built ones) reads back what a marker hides through a tool call: no
 * shell, no file outside the project, no permission prompt per read once the tool is allowed.
 *
 * Three tools, all answering from the same store the proxy and the extension write:
 * - `read_output`: `spillway read` for a model (src/store/read.ts `readAnswer`), capped per answer
 *   and saying which part of how much it shows, with the options that read the next part;
 * - `find_outputs`: the stored outputs, newest first, by session, tool, call id or text
 *   (src/store/find.ts);
 * - `extract_output`: a question asked of an output, answered by the client's own model through MCP
 *   sampling (src/extract/sampling.ts); a client without sampling gets a tool error saying so.
 * Every failure (a handle that is not one, and so can never name a path outside the store; an
 * unknown handle; a bad regex; a limit over the cap) is a tool result with `isError` and the reason:
 * the model reads it and tries again, and the server keeps serving.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { formatInt } from '../engine/format-number';
import { MCP_READ_TOOL, MCP_SERVER_NAME } from '../engine/read-tool';
import { SpillwayError } from '../engine/types';
import { ExtractInput } from '../extract/extract';
import { EXTRACT_TOOL, extractOverMcp } from '../extract/sampling';
import { readStored } from '../store/read';
import {
  answerText,
  DEFAULT_FIND_LIMIT,
  findOutputs,
  MAX_ANSWER_CHARS,
  MAX_FIND_LIMIT,
  readAnswer,
  type OutputStore,
  type StoreEntry,
} from '../store';

const MCP_FIND_TOOL = 'find_outputs';
/** Reported to clients in the handshake; follows package.json's version. */
const SERVER_VERSION = '0.1.0';

const HANDLE_WORDS =
  'A handle (sw_ followed by 24 hex digits) names one full tool output that Spillway kept out of the context: ' +
  'a tool result that was too long shows as a marker "[spillway: … handle sw_…]" with a short preview.';

const READ_DESCRIPTION =
  `Read a stored tool output back by its handle. ${HANDLE_WORDS} ` +
  'Call this when the preview in a marker leaves out something you need (an error message, a line, a value); read only the part you need. ' +
  'Give one of: lines "A:B" (1-based, inclusive; "A:" to the end), grep (a JavaScript regex, with context lines and ignore_case), ' +
  `or offset and limit (chars). Each answer is at most ${formatInt(MAX_ANSWER_CHARS)} chars; its first line says which part of how much ` +
  'it shows and, when there is more, the options that read the next part. The text after that first line is the output exactly.';

const FIND_DESCRIPTION =
  `List the tool outputs Spillway has stored, newest first, with their handles, tools, call ids and sizes. ${HANDLE_WORDS} ` +
  'Call this when you need an earlier output but no longer have its handle; filter by session, tool, call_id or text (a substring of the output, ignoring case), ' +
  'then read one with read_output.';

const readInput = {
  handle: z.string().describe('the handle from the marker, e.g. sw_0123456789abcdef01234567'),
  lines: z.string().optional().describe('lines to read, "A:B" (1-based, inclusive), "A:" (to the end), ":B" or "N"'),
  grep: z.string().optional().describe('a JavaScript regular expression: the matching lines, numbered like grep -n'),
  context: z.number().int().min(0).optional().describe('with grep: lines of context before and after each match'),
  ignore_case: z.boolean().optional().describe('with grep: match without regard to case'),
  offset: z.number().int().min(0).optional().describe('first char to read (0-based)'),
  limit: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(`most chars to return (at most ${MAX_ANSWER_CHARS}); with lines or grep, a cut at a line boundary`),
};

const findInput = {
  session: z.string().optional().describe('only outputs of this session'),
  tool: z.string().optional().describe('only outputs of this tool (its name, or the bare name of a namespaced tool)'),
  call_id: z.string().optional().describe('only the output of this tool call id'),
  text: z.string().optional().describe('only outputs containing this text (ignoring case)'),
  limit: z.number().int().min(1).max(MAX_FIND_LIMIT).optional().describe(`most outputs to list (default ${DEFAULT_FIND_LIMIT})`),
};

function text(value: string): CallToolResult {
  return { content: [{ type: 'text', text: value }] };
}

function failure(e: unknown): CallToolResult {
  const reason = e instanceof Error ? e.message : String(e);
  return { content: [{ type: 'text', text: reason }], isError: true };
}

/** One listing line: handle, tool, call id, size and when it was last produced. */
function listingLine(e: StoreEntry): string {
  const sessions = [...new Set(e.calls.map((c) => c.session).filter((s): s is string => s !== undefined))];
  const session = sessions.length ? ` · session ${sessions.join(', ')}` : '';
  return `${e.handle} · ${e.tool} · call ${e.callId} · ${formatInt(e.chars)} chars, ${formatInt(e.lines)} lines · ${e.used}${session}`;
}

/** The MCP server on `store`; the caller connects it to a transport. */
export function createMcpServer(store: Pick<OutputStore, 'get' | 'list'>): McpServer {
  const server = new McpServer({ name: MCP_SERVER_NAME, version: SERVER_VERSION });
  server.registerTool(
    MCP_READ_TOOL,
    {
      title: 'Read a Spillway output',
      description: READ_DESCRIPTION,
      inputSchema: readInput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) => {
      try {
        const options = {
          lines: input.lines,
          grep: input.grep,
          context: input.context,
          ignoreCase: input.ignore_case,
          offset: input.offset,
          limit: input.limit,
        };
        return text(answerText(readAnswer(input.handle, options, (h) => store.get(h))));
      } catch (e) {
        return failure(e);
      }
    },
  );
  server.registerTool(
    MCP_FIND_TOOL,
    {
      title: 'Find Spillway outputs',
      description: FIND_DESCRIPTION,
      inputSchema: findInput,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) => {
      try {
        const found = findOutputs(store, {
          session: input.session,
          tool: input.tool,
          callId: input.call_id,
          text: input.text,
          limit: input.limit,
        });
        if (found.entries.length === 0) return text('no stored output matches');
        const more = found.more ? `\n[more outputs match: narrow the filter or raise limit (at most ${MAX_FIND_LIMIT})]` : '';
        return text(found.entries.map(listingLine).join('\n') + more);
      } catch (e) {
        return failure(e);
      }
    },
  );
  // extract: a question asked of an output, answered by the client's model through sampling (src/extract)
  server.registerTool(
    EXTRACT_TOOL.name,
    {
      title: 'Ask about a Spillway output',
      description: `${EXTRACT_TOOL.description} ${HANDLE_WORDS}`,
      inputSchema: ExtractInput.shape,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    (input) => extractOverMcp(input, server.server, (h, o) => readStored(h, o, (x) => store.get(x))),
  );
  return server;
}

/** Serves `store` over stdin/stdout until the client closes the pipe. */
export async function serveMcp(store: Pick<OutputStore, 'get' | 'list'>): Promise<void> {
  const server = createMcpServer(store);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((done) => {
    transport.onclose = () => done();
    process.stdin.once('end', () => done());
  });
  try {
    await server.connect(transport);
  } catch (e) {
    throw new SpillwayError(`mcp: cannot serve over stdio: ${(e as Error).message}`, 'io');
  }
  await closed;
  await server.close();
}
