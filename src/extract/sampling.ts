/**
 * `extract` over MCP: the model is the client's, reached through MCP sampling
 * (`sampling/createMessage`, the SDK's `server.createMessage`), so the agent's own model and account
 * answer the question and Spillway needs no key. A client that does not offer sampling gets a tool
 * error that says so and what to use instead.
 *
 * The MCP server (`spillway mcp`, src/cli) registers EXTRACT_TOOL and answers its calls with
 * `extractOverMcp`; this module only needs the two methods of the SDK's `Server` it uses, so it is
 * tested with a scripted stand-in and does not tie src/extract to the SDK.
 */
import { extract, EXTRACT_DESCRIPTION, EXTRACT_INPUT_SCHEMA, ExtractInput, type ExtractModel } from './extract';
import type { ReadOptions, ReadResult } from '../store/read';

/** The parts of the MCP SDK's `Server` that sampling needs. */
export interface SamplingServer {
  getClientCapabilities(): { sampling?: object } | undefined;
  createMessage(params: {
    messages: { role: 'user' | 'assistant'; content: { type: 'text'; text: string } }[];
    systemPrompt?: string;
    maxTokens: number;
    includeContext?: 'none' | 'thisServer' | 'allServers';
  }): Promise<{ content: unknown }>;
}

/**
 * Tokens a sampled answer may use: a chunk's answer is a list of items, and the merge repeats them
 * all; 4,000 fits a long list while keeping one call's cost bounded.
 */
const SAMPLING_MAX_TOKENS = 4_000;

export const EXTRACT_TOOL = {
  name: 'extract_output',
  description: EXTRACT_DESCRIPTION,
  inputSchema: EXTRACT_INPUT_SCHEMA,
} as const;

/** A tool result in MCP's shape. */
export interface McpToolResult {
  content: { type: 'text'; text: string }[];
  isError?: boolean;
  /** MCP results are open objects (`_meta` and the like) */
  [key: string]: unknown;
}

/** The client's model, through sampling; throws the reason when the client offers none. */
export function samplingModel(server: SamplingServer): ExtractModel {
  if (!server.getClientCapabilities()?.sampling)
    throw new Error(
      'extract_output needs a model, and this MCP client does not offer one (it did not declare the sampling capability): ' +
        'read the output with read_output instead (grep or lines narrow it), or ask in a client that supports sampling',
    );
  return {
    async ask({ system, user }) {
      const result = await server.createMessage({
        messages: [{ role: 'user', content: { type: 'text', text: user } }],
        systemPrompt: system,
        maxTokens: SAMPLING_MAX_TOKENS,
        includeContext: 'none',
      });
      const parts = Array.isArray(result.content) ? result.content : [result.content];
      const text = parts
        .map((p) =>
          typeof p === 'object' && p !== null && (p as { type?: unknown }).type === 'text' ? String((p as { text: unknown }).text) : '',
        )
        .join('');
      if (!text) throw new Error('the MCP client answered the sampling request with no text');
      return text;
    },
  };
}

/** Answers one extract_output call: the answer, or a tool error with the reason (bad input, unknown handle, no sampling). */
export async function extractOverMcp(
  args: unknown,
  server: SamplingServer,
  read: (handle: string, options: ReadOptions) => ReadResult,
): Promise<McpToolResult> {
  const parsed = ExtractInput.safeParse(args);
  if (!parsed.success)
    return {
      isError: true,
      content: [
        {
          type: 'text',
          text: `extract_output: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ')}`,
        },
      ],
    };
  try {
    const answer = await extract(parsed.data, read, samplingModel(server));
    return { content: [{ type: 'text', text: answer.text }] };
  } catch (e) {
    return {
      isError: true,
      content: [{ type: 'text', text: `extract_output could not answer about ${parsed.data.handle}: ${(e as Error).message}` }],
    };
  }
}
