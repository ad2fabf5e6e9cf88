/**
 * The read-back loop: a model that sees a marker asks for the stored output with the
 * `spillway_read_output` tool, and whoever sits between the agent and the provider answers that
 * call from the store and asks the model again, within the same request, so the agent never sees
 * the round. Two places run it: the proxy with `--answer-reads` (answerReads.ts), for agents with
 * neither a shell nor MCP, and the Copilot chat provider (src/extension/chat/provider.ts), when the
 * caller did not list the tool. This module is the one implementation of what they share: the tool
 * (name, description, schema), adding it to a request body, deciding whether a round holds only
 * read-backs, answering the calls from the store (an unreadable handle is a tool error, never an
 * exception), appending the round to the body in its wire format, and the bounded driver.
 *
 * Pure apart from the `send` and `read` functions its callers pass: no HTTP, no `vscode`.
 *
 * Why the agent's later requests stay consistent and cache-stable (docs/answer-reads.md): the read
 * rounds exist only inside one request. The agent's history never holds them, so its next request
 * is its previous one plus what it added; the prefix the provider cached for the first round
 * (tools, system, every agent item) is byte-identical in the next request, because the read tool is
 * always added the same way (appended last to `tools`) and the rounds are only ever appended after
 * the agent's last item. The rounds themselves are paid once, inside the request that needed them.
 */
import { z } from 'zod';
import { HANDLE_PATTERN } from '../engine/handle';
import type { WireFormat } from '../engine/types';
import { boundedAnswer, type ReadOptions, type ReadResult } from '../store/read';

export const READ_TOOL = 'spillway_read_output';

/**
 * Rounds answered within one request. A model reads one or two outputs, in a part or two each,
 * before it acts; eight rounds leave room for that and stop a model that keeps asking from turning
 * one request into an unbounded number of paid calls.
 */
export const MAX_READ_ROUNDS = 8;

export const READ_TOOL_DESCRIPTION =
  'Reads the full text of a tool output that Spillway reduced to a preview. Markers in tool results name a handle ' +
  '(sw_ followed by 24 hex digits). Pass it as `handle`; narrow with `lines` ("A:B", 1-based), `grep` (a regex, with ' +
  '`context` lines) or `offset`/`limit` (characters).';

export const READ_TOOL_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    handle: {
      type: 'string',
      pattern: HANDLE_PATTERN.source,
      description: 'The handle from a Spillway marker, e.g. sw_0123456789abcdef01234567.',
    },
    lines: { type: 'string', description: 'Lines to read, 1-based and inclusive: "A:B", "A:" (to the end), ":B", or "N".' },
    grep: { type: 'string', description: 'A regular expression; only matching lines (plus context) are returned.' },
    context: { type: 'integer', minimum: 0, description: 'With grep: lines shown before and after each match.' },
    offset: { type: 'integer', minimum: 0, description: 'First character to return (0-based).' },
    limit: { type: 'integer', minimum: 1, description: 'Most characters to return.' },
  },
  required: ['handle'],
} as const;

/** A tool call as a round's answer holds it, in any wire format. */
export interface ToolCall {
  callId: string;
  name: string;
  input: unknown;
}

/** What one round of the loop produced: its text, its tool calls, and (when known) its output items verbatim. */
export interface RoundOutput {
  text: string;
  calls: ToolCall[];
  /**
   * The model's answer as the wire format holds it (an OpenAI Chat assistant message, Responses
   * output items, Anthropic content blocks). Sent back verbatim when present, so reasoning items
   * and thinking signatures survive the round; rebuilt from `text` and `calls` otherwise.
   */
  items?: unknown[];
}

export interface ReadAnswer {
  callId: string;
  content: string;
  isError: boolean;
}

/** Reads a stored output (a store's `read`, or the extension host's). */
export type Reader = (handle: string, options: ReadOptions) => ReadResult;

type Body = Record<string, unknown>;
const isObj = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The tool as each wire format declares it. */
function toolFor(format: WireFormat): Body {
  if (format === 'openai-chat')
    return { type: 'function', function: { name: READ_TOOL, description: READ_TOOL_DESCRIPTION, parameters: READ_TOOL_INPUT_SCHEMA } };
  if (format === 'openai-responses')
    return { type: 'function', name: READ_TOOL, description: READ_TOOL_DESCRIPTION, parameters: READ_TOOL_INPUT_SCHEMA };
  return { name: READ_TOOL, description: READ_TOOL_DESCRIPTION, input_schema: READ_TOOL_INPUT_SCHEMA };
}

function toolName(t: unknown): string | undefined {
  if (!isObj(t)) return undefined;
  if (typeof t.name === 'string') return t.name;
  return isObj(t.function) && typeof t.function.name === 'string' ? t.function.name : undefined;
}

/**
 * The body with the read tool appended last to its tools, or undefined when the body already offers
 * a tool of that name (the caller answers it: nothing for the loop to do), its `tools` is not a
 * list, it declares legacy Chat `functions`, or it is a Gemini API body (not answered here). Appending, always last and always the same bytes,
 * keeps the tool list (the head of every provider's cache prefix) identical from one request of the
 * agent to the next.
 */
export function withReadTool(format: WireFormat, body: Body): Body | undefined {
  // not offered on the Gemini API: the agent reads back by its own means (Gemini CLI: `spillway mcp`)
  if (format === 'gemini') return undefined;
  // a Chat body with the legacy `functions` may not have `tools` too
  if (format === 'openai-chat' && body.functions !== undefined) return undefined;
  const tools = body.tools === undefined ? [] : body.tools;
  if (!Array.isArray(tools) || tools.some((t) => toolName(t) === READ_TOOL)) return undefined;
  return { ...body, tools: [...tools, toolFor(format)] };
}

/** Whether a round asked for read-backs and nothing else: only then is it answered here. */
export function onlyReads(calls: readonly ToolCall[]): boolean {
  return calls.length > 0 && calls.every((c) => c.name === READ_TOOL);
}

const ReadInput = z.object({
  handle: z.string({ error: 'handle is missing: pass the handle a marker names (sw_ and 24 hex digits)' }),
  lines: z.string().optional(),
  grep: z.string().optional(),
  context: z.number().int().min(0).optional(),
  ignoreCase: z.boolean().optional(),
  ignore_case: z.boolean().optional(),
  offset: z.number().int().min(0).optional(),
  limit: z.number().int().min(1).optional(),
});

/** Answers one read call; a bad input or an unreadable handle is a tool error the model can act on. */
export function answerRead(call: ToolCall, read: Reader): ReadAnswer {
  const fail = (why: string): ReadAnswer => ({
    callId: call.callId,
    content: `${READ_TOOL} could not read ${isObj(call.input) && call.input.handle !== undefined ? JSON.stringify(call.input.handle) : 'the output'}: ${why}`,
    isError: true,
  });
  if (isObj(call.input) && typeof call.input._unparsedArguments === 'string') return fail('the arguments are not valid JSON');
  const parsed = ReadInput.safeParse(call.input);
  if (!parsed.success) return fail(parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; '));
  const { handle, ignore_case, ...rest } = parsed.data;
  const options: ReadOptions = {
    ...rest,
    ...(ignore_case !== undefined && rest.ignoreCase === undefined ? { ignoreCase: ignore_case } : {}),
  };
  try {
    return { callId: call.callId, content: boundedAnswer(read(handle, options)), isError: false };
  } catch (e) {
    return fail(e instanceof Error ? e.message : String(e));
  }
}

const argsText = (input: unknown) => (typeof input === 'string' ? input : JSON.stringify(input ?? {}));

/** The body with the round (the model's answer, then the read answers) appended after its last item. */
export function appendReadRound(format: WireFormat, body: Body, round: RoundOutput, answers: readonly ReadAnswer[]): Body {
  if (format === 'openai-chat') {
    const assistant = round.items ?? [
      {
        role: 'assistant',
        content: round.text || null,
        tool_calls: round.calls.map((c) => ({ id: c.callId, type: 'function', function: { name: c.name, arguments: argsText(c.input) } })),
      },
    ];
    const results = answers.map((a) => ({ role: 'tool', tool_call_id: a.callId, content: a.isError ? `Error: ${a.content}` : a.content }));
    return { ...body, messages: [...(body.messages as unknown[]), ...assistant, ...results] };
  }
  if (format === 'openai-responses') {
    const input = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : ((body.input as unknown[] | undefined) ?? []);
    const output = round.items ?? [
      ...(round.text ? [{ role: 'assistant', content: [{ type: 'output_text', text: round.text }] }] : []),
      ...round.calls.map((c) => ({ type: 'function_call', call_id: c.callId, name: c.name, arguments: argsText(c.input) })),
    ];
    const results = answers.map((a) => ({
      type: 'function_call_output',
      call_id: a.callId,
      output: a.isError ? `Error: ${a.content}` : a.content,
    }));
    return { ...body, input: [...input, ...output, ...results] };
  }
  const content = round.items ?? [
    ...(round.text ? [{ type: 'text', text: round.text }] : []),
    ...round.calls.map((c) => ({ type: 'tool_use', id: c.callId, name: c.name, input: isObj(c.input) ? c.input : {} })),
  ];
  const results = answers.map((a) => ({
    type: 'tool_result',
    tool_use_id: a.callId,
    content: a.content,
    ...(a.isError ? { is_error: true } : {}),
  }));
  return {
    ...body,
    messages: [...(body.messages as unknown[]), { role: 'assistant', content }, { role: 'user', content: results }],
  };
}

export interface ReadLoopOptions<R extends RoundOutput> {
  format: WireFormat;
  /** the request with the read tool in it */
  body: Body;
  /**
   * One model call. `mayAnswer` says whether a round of only read-backs will be answered here (false
   * on the last round allowed): a caller that streams holds read calls back only when it is true.
   */
  send(body: Body, round: number, mayAnswer: boolean): Promise<R>;
  read: Reader;
  /** rounds answered at most (default MAX_READ_ROUNDS); 0 never answers */
  maxRounds?: number;
  /** told of each answered round (for the log) */
  onAnswered?(round: number, answers: readonly ReadAnswer[]): void;
}

/**
 * Sends, and while the answer holds only read-backs (and rounds remain), answers them and sends
 * again. Returns every round's result, the last one being the answer the caller hands on.
 */
export async function runReadLoop<R extends RoundOutput>(o: ReadLoopOptions<R>): Promise<R[]> {
  const max = o.maxRounds ?? MAX_READ_ROUNDS;
  const rounds: R[] = [];
  let body = o.body;
  for (let round = 0; ; round++) {
    const mayAnswer = round < max;
    const r = await o.send(body, round, mayAnswer);
    rounds.push(r);
    if (!mayAnswer || !onlyReads(r.calls)) return rounds;
    const answers = r.calls.map((c) => answerRead(c, o.read));
    o.onAnswered?.(round, answers);
    body = appendReadRound(o.format, body, r, answers);
  }
}
