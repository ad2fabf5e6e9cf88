/**
 * A Chat Completions request written by hand, one tool call and its result at a time, for engine tests
 * that project a single request (a whole session's transcript is test/support/wire.ts).
 */
type Msg = Record<string, unknown>;

/** An assistant message calling `name` with `args`, under call id `id`. */
export const call = (id: string, name: string, args: object): Msg => ({
  role: 'assistant',
  content: null,
  tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
});

/** The tool message answering call `id`. */
export const result = (id: string, content: string): Msg => ({ role: 'tool', tool_call_id: id, content });

/** The request body: a user task, then `messages`. */
export const body = (messages: Msg[]): string => JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'task' }, ...messages] });

/** Each message's content in a projected body. */
export const contents = (out: string): unknown[] => (JSON.parse(out) as { messages: Msg[] }).messages.map((m) => m.content);
