/**
 * A scripted model provider on 127.0.0.1 that speaks like the real ones, for the real agents to talk
 * to through `spillway proxy`: Anthropic Messages (JSON or SSE, as Claude Code asks), OpenAI Chat
 * Completions (JSON or SSE, for Qwen Code), the Gemini API (`…:generateContent` JSON and
 * `…:streamGenerateContent?alt=sse`, under `/gemini`) and OpenAI Responses over HTTP/SSE and, when the
 * script says `websockets`, over the Responses WebSocket mode
 * (`GET /v1/responses` upgraded; `response.create` messages continued by `previous_response_id`, the
 * conversation kept here per response id, as the real service does). Otherwise upgrades are answered
 * 426, so a client falls back to HTTP. Under `/backend-api/` it plays the ChatGPT backend of Codex
 * signed in with ChatGPT: `codex/responses` over HTTP and (with `websockets`) the WebSocket, the
 * tools read from the request's `additional_tools` item, the shell called through Codex's `exec`.
 *
 * The script is stateless over HTTP: the step is the number of tool results in the request (over the
 * WebSocket, in the conversation the request continues). Step k < N asks the
 * agent to run `commands[k]` with its shell tool; step N answers with the final text, or first, with
 * `readBack`, reads the first output back through Spillway's MCP tool page by page. Requests that
 * offer no shell tool (Claude Code's and OpenCode's side calls: titles, topic checks) get a short text answer.
 * With `subAgent`, Claude Code's main conversation hands the commands to a sub-agent through its
 * `Agent` tool (Copilot's CLI's, through its `task` tool), and the sub-agent's conversation is the
 * one that runs them.
 * Every request body is kept for the assertions.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';

interface Received {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** the parsed JSON body, when it is JSON */
  json?: any;
  /** which upstream base the request came in under: `/openai/v1/…`, `/anthropic/…`, `/gemini/…` or the ChatGPT backend's `/backend-api/…` */
  upstream: 'openai' | 'anthropic' | 'gemini' | 'chatgpt' | 'none';
  /** `websocket`: a `response.create` message, recorded with the whole input it continues */
  transport: 'http' | 'websocket' | 'websocket-refused';
}

export interface ScriptedProvider {
  /** the server; give agents' upstreams as `${url}/openai/v1`, `${url}/anthropic` and `${url}/gemini` */
  url: string;
  received: Received[];
  close(): Promise<void>;
}

export interface Script {
  commands: string[];
  finalAnswer: string;
  /**
   * After the commands: read the first command's output back through this MCP tool (as the agent
   * names it, e.g. `mcp__spillway__read_output`), page by page with `offset` and `limit`, following
   * each answer's `next:` until there is none; then the final answer.
   */
  readBack?: { tool: string; page: number };
  /** speak the Responses WebSocket mode on the OpenAI side (otherwise upgrades get 426) */
  websockets?: boolean;
  /**
   * Hand the commands to a sub-agent (Anthropic side): the main conversation's first reply calls
   * Claude Code's `Agent` tool with `prompt`; a conversation whose first user message holds `prompt`
   * is the sub-agent's, which runs the commands and answers `report`; the main conversation gives the
   * final answer once the report is in its messages.
   */
  subAgent?: { prompt: string; report: string; tool?: 'Agent' | 'task' };
}

/** The shell tool on the Anthropic side: Claude Code's `Bash`, OpenCode's and pi's `bash`. */
const ANTHROPIC_SHELLS = ['Bash', 'bash'];
/** Codex's model calls on the ChatGPT backend (signed in with ChatGPT), HTTP and WebSocket. */
const CHATGPT_RESPONSES = '/backend-api/codex/responses';
/** Codex's shell tools over the versions, in the order they are preferred. */
const CODEX_SHELLS = ['exec_command', 'shell_command', 'shell', 'local_shell', 'bash', 'Bash'];

function sse(res: ServerResponse, events: Array<{ event: string; data: unknown }>): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const e of events) res.write(`event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}

let seq = 0;
const id = (prefix: string) => `${prefix}_${(++seq).toString(16).padStart(8, '0')}${Date.now().toString(16)}`;

/** Tool results in an Anthropic request (tool_result blocks in user messages). */
function anthropicStep(body: any): number {
  let n = 0;
  for (const m of body.messages ?? []) {
    if (m.role === 'user' && Array.isArray(m.content)) n += m.content.filter((b: any) => b?.type === 'tool_result').length;
  }
  return n;
}

/** A Spillway handle in a text. */
const HANDLE = /sw_[0-9a-f]{24}/;
/** The read tool's answer header: `[spillway sw_…: … ; next: offset N, limit M]`. */
const NEXT_PAGE = /; next: offset (\d+), limit (\d+)\]$/;

/** The text of a tool result block or item. */
function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((c: any) => (typeof c?.text === 'string' ? c.text : '')).join('');
  return '';
}

/**
 * The next read-back call, from the results so far (texts in order, with the tool each answered):
 * the first read starts at 0 on the handle in the first result; each next one where the last
 * answer's header says; undefined when the last answer has no next page.
 */
function nextRead(results: Array<{ tool: string; text: string }>, script: Script): Record<string, unknown> | 'done' {
  const rb = script.readBack!;
  const reads = results.filter((r) => r.tool === rb.tool);
  const handle = HANDLE.exec(results[0]?.text ?? '')?.[0];
  if (!handle) return 'done';
  if (reads.length === 0) return { handle, offset: 0, limit: rb.page };
  const header = reads[reads.length - 1]!.text.split('\n', 1)[0]!;
  const next = NEXT_PAGE.exec(header);
  return next ? { handle, offset: Number(next[1]), limit: Number(next[2]) } : 'done';
}

/** Tool results of an Anthropic request, in order, with the name of the tool each answers. */
function anthropicResults(body: any): Array<{ tool: string; text: string }> {
  const names = new Map<string, string>();
  const out: Array<{ tool: string; text: string }> = [];
  for (const m of body.messages ?? []) {
    if (!Array.isArray(m.content)) continue;
    for (const b of m.content) {
      if (b?.type === 'tool_use') names.set(b.id, b.name);
      if (b?.type === 'tool_result') out.push({ tool: names.get(b.tool_use_id) ?? '', text: resultText(b.content) });
    }
  }
  return out;
}

/** The text of an Anthropic request's first user message (what a conversation was started with). */
export function firstUserText(body: any): string {
  const first = (body?.messages ?? []).find((m: any) => m?.role === 'user');
  return first ? resultText(first.content) : '';
}

function anthropicReply(body: any, script: Script): { content: any[]; stop: string } {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const shell = tools.find((t) => ANTHROPIC_SHELLS.includes(t?.name));
  if (!shell) return { content: [{ type: 'text', text: 'Scripted side answer.' }], stop: 'end_turn' };
  const sub = script.subAgent;
  if (sub && !firstUserText(body).includes(sub.prompt)) {
    // the main conversation: hand the work over once, then answer when the report is in (Claude Code
    // 2.1.332 runs the sub-agent in the background and sends its report as a notification later)
    const tool = sub.tool ?? 'Agent';
    if (anthropicResults(body).some((r) => r.tool === tool)) {
      const reported = JSON.stringify(body.messages).includes(sub.report);
      return { content: [{ type: 'text', text: reported ? script.finalAnswer : 'Waiting for the sub-agent.' }], stop: 'end_turn' };
    }
    // Claude Code's `Agent` takes a `subagent_type`, Copilot's CLI's `task` an `agent_type` and a name
    const input =
      tool === 'Agent'
        ? { description: 'Run the scripted commands', prompt: sub.prompt, subagent_type: 'general-purpose' }
        : { description: 'Run the scripted commands', prompt: sub.prompt, agent_type: 'general-purpose', name: 'runner' };
    return { content: [{ type: 'tool_use', id: id('toolu'), name: tool, input }], stop: 'tool_use' };
  }
  const step = anthropicStep(body);
  if (script.readBack && step >= script.commands.length) {
    const read = nextRead(anthropicResults(body), script);
    if (read !== 'done') {
      return { content: [{ type: 'tool_use', id: id('toolu'), name: script.readBack.tool, input: read }], stop: 'tool_use' };
    }
  }
  if (step < script.commands.length) {
    return {
      content: [
        {
          type: 'tool_use',
          id: id('toolu'),
          name: shell.name,
          // a description only where the tool declares one (OpenCode's and pi's do not)
          input: {
            command: script.commands[step],
            ...(shell.input_schema?.properties?.description ? { description: `step ${step + 1}` } : {}),
          },
        },
      ],
      stop: 'tool_use',
    };
  }
  return { content: [{ type: 'text', text: sub ? sub.report : script.finalAnswer }], stop: 'end_turn' };
}

function anthropic(res: ServerResponse, body: any, script: Script): void {
  const { content, stop } = anthropicReply(body, script);
  const msgId = id('msg');
  const usage = { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
  const message = {
    id: msgId,
    type: 'message',
    role: 'assistant',
    model: body.model ?? 'claude-scripted',
    content,
    stop_reason: stop,
    stop_sequence: null,
    usage,
  };
  if (!body.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(message));
    return;
  }
  const events: Array<{ event: string; data: unknown }> = [
    {
      event: 'message_start',
      data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
    },
  ];
  content.forEach((block, index) => {
    if (block.type === 'text') {
      events.push({
        event: 'content_block_start',
        data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } },
      });
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text: block.text } },
      });
    } else {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { ...block, input: {} } } });
      events.push({
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } },
      });
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({
    event: 'message_delta',
    data: { type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 20 } },
  });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  sse(res, events);
}

/** Shell tools on the Chat Completions side: Qwen Code's `run_shell_command`, Cline's `run_commands` (a list), and the common names. */
const CHAT_SHELLS = ['run_shell_command', 'run_commands', 'bash', 'shell'];

/** Tool results in a Chat Completions request (`role: "tool"` messages). */
function chatStep(body: any): number {
  return (Array.isArray(body.messages) ? body.messages : []).filter((m: any) => m?.role === 'tool').length;
}

/**
 * A Chat Completions answer: the next command as a call of the shell tool the request offers (its
 * arguments shaped by the parameters the tool declares), or the final text; streamed as
 * `chat.completion.chunk` events ending in `[DONE]` (with a usage chunk when asked) or one JSON body.
 */
function chat(res: ServerResponse, body: any, script: Script): void {
  const tools: any[] = Array.isArray(body.tools) ? body.tools : [];
  const shell = tools.find((t) => CHAT_SHELLS.includes(t?.function?.name))?.function;
  const step = chatStep(body);
  const props = shell?.parameters?.properties ?? {};
  const call =
    shell && step < script.commands.length
      ? {
          id: id('call'),
          type: 'function',
          function: {
            name: shell.name as string,
            arguments: JSON.stringify({
              ...(props.commands?.type === 'array' ? { commands: [script.commands[step]] } : { command: script.commands[step] }),
              ...(props.description ? { description: `step ${step + 1}` } : {}),
              ...(props.is_background ? { is_background: false } : {}),
            }),
          },
        }
      : undefined;
  const text = !shell ? 'Scripted side answer.' : step < script.commands.length ? 'No shell tool was offered.' : script.finalAnswer;
  const base = { id: id('chatcmpl'), created: Math.floor(Date.now() / 1000), model: body.model ?? 'gpt-scripted' };
  const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120, prompt_tokens_details: { cached_tokens: 0 } };
  const finish = call ? 'tool_calls' : 'stop';
  if (!body.stream) {
    const message = call ? { role: 'assistant', content: null, tool_calls: [call] } : { role: 'assistant', content: text };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ...base, object: 'chat.completion', choices: [{ index: 0, message, finish_reason: finish }], usage }));
    return;
  }
  const chunk = (choices: any[], extra: Record<string, unknown> = {}) =>
    `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  res.write(chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]));
  if (call) res.write(chunk([{ index: 0, delta: { tool_calls: [{ index: 0, ...call }] }, finish_reason: null }]));
  else res.write(chunk([{ index: 0, delta: { content: text }, finish_reason: null }]));
  res.write(chunk([{ index: 0, delta: {}, finish_reason: finish }]));
  if (body.stream_options?.include_usage) res.write(chunk([], { usage }));
  res.end('data: [DONE]\n\n');
}

/** Tool outputs in a Responses request. */
function responsesStep(body: any): number {
  return (Array.isArray(body.input) ? body.input : []).filter(
    (i: any) => i?.type === 'function_call_output' || i?.type === 'custom_tool_call_output',
  ).length;
}

/**
 * The tools a Responses request offers: `tools`, and (Codex signed in with ChatGPT) the tools of its
 * `additional_tools` input items, namespaces flattened.
 */
function offeredTools(body: any): any[] {
  const flat = (ts: any[]): any[] => ts.flatMap((t) => (t?.type === 'namespace' && Array.isArray(t.tools) ? flat(t.tools) : [t]));
  const extra = (Array.isArray(body.input) ? body.input : []).filter((i: any) => i?.type === 'additional_tools' && Array.isArray(i.tools));
  return flat([...(Array.isArray(body.tools) ? body.tools : []), ...extra.flatMap((i: any) => i.tools)]);
}

/**
 * Codex's code-mode `exec` (its shell when signed in with ChatGPT): a custom tool whose input is
 * JavaScript; `text(result)` answers with the nested tool's JSON (`{…,"exit_code":0,"output":"…"}`).
 * The pragma and `max_output_tokens` lift Codex's own cut of the output.
 */
function execInput(command: string): string {
  return `// @exec: {"max_output_tokens": 50000}\ntext(await tools.exec_command({cmd: ${JSON.stringify(command)}, max_output_tokens: 50000}));`;
}

/** The arguments for Codex's shell tool, shaped by the parameters the tool declares. */
function shellCall(tools: any[], command: string): { name: string; arguments: string; custom?: true } | undefined {
  if (tools.some((t) => t?.type === 'custom' && t.name === 'exec')) return { name: 'exec', arguments: execInput(command), custom: true };
  for (const name of CODEX_SHELLS) {
    const tool = tools.find((t) => t?.type === 'function' && t.name === name);
    if (!tool) continue;
    const props = tool.parameters?.properties ?? {};
    // Codex cuts outputs to max_output_tokens itself (a few thousand by default): ask for all of it
    if (props.cmd)
      return { name, arguments: JSON.stringify({ cmd: command, ...(props.max_output_tokens ? { max_output_tokens: 50_000 } : {}) }) };
    if (props.command?.type === 'array') return { name, arguments: JSON.stringify({ command: ['bash', '-lc', command] }) };
    if (props.command) return { name, arguments: JSON.stringify({ command }) };
  }
  return undefined;
}

/**
 * The text of a Responses tool output: a string (maybe the JSON of content parts), or an array of
 * parts. Codex sends an MCP tool's answer as parts, its own "Wall time: …\nOutput:" first and the
 * tool's content last: the tool's text is the last part.
 */
export function outputText(output: unknown): string {
  if (Array.isArray(output)) {
    const texts = output.filter((p: any) => typeof p?.text === 'string').map((p: any) => p.text as string);
    return texts[texts.length - 1] ?? '';
  }
  if (typeof output === 'string') {
    try {
      const parts = JSON.parse(output) as unknown;
      if (Array.isArray(parts) && parts.every((p: any) => typeof p?.text === 'string')) return parts.map((p: any) => p.text).join('');
      const content = (parts as any)?.content;
      if (Array.isArray(content)) return content.map((p: any) => (typeof p?.text === 'string' ? p.text : '')).join('');
    } catch {
      /* plain text */
    }
    return output;
  }
  return resultText(output);
}

/** Tool outputs of a Responses request, in order, with the name of the tool each answers. */
function responsesResults(body: any): Array<{ tool: string; text: string }> {
  const names = new Map<string, string>();
  const out: Array<{ tool: string; text: string }> = [];
  for (const i of Array.isArray(body.input) ? body.input : []) {
    if (i?.type === 'function_call' || i?.type === 'custom_tool_call')
      names.set(i.call_id, i.namespace ? `${i.namespace}.${i.name}` : i.name);
    if (i?.type === 'function_call_output' || i?.type === 'custom_tool_call_output')
      out.push({ tool: names.get(i.call_id) ?? '', text: outputText(i.output) });
  }
  return out;
}

/** The events of one scripted response (the same over SSE and WebSocket), and the response itself. */
function responseEvents(body: any, script: Script): { events: Array<{ event: string; data: any }>; response: any } {
  const respId = id('resp');
  const step = responsesStep(body);
  let call: { name: string; arguments: string; custom?: true } | undefined =
    step < script.commands.length ? shellCall(offeredTools(body), script.commands[step]!) : undefined;
  if (script.readBack && step >= script.commands.length) {
    const read = nextRead(responsesResults(body), script);
    if (read !== 'done') call = { name: script.readBack.tool, arguments: JSON.stringify(read) };
  }
  // a tool in a namespace (`mcp__spillway.read_output`) is called by its own name, with the namespace beside it
  const dot = call ? call.name.lastIndexOf('.') : -1;
  const named = call && dot > 0 ? { name: call.name.slice(dot + 1), namespace: call.name.slice(0, dot) } : call ? { name: call.name } : {};
  const item = call?.custom
    ? { type: 'custom_tool_call', id: id('ctc'), call_id: id('call'), name: call.name, input: call.arguments, status: 'completed' }
    : call
      ? { type: 'function_call', id: id('fc'), call_id: id('call'), ...named, arguments: call.arguments, status: 'completed' }
      : {
          type: 'message',
          id: id('msg'),
          role: 'assistant',
          status: 'completed',
          content: [
            {
              type: 'output_text',
              text: step < script.commands.length ? 'No shell tool was offered.' : script.finalAnswer,
              annotations: [],
            },
          ],
        };
  const usage = {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 20,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 120,
  };
  const base = {
    id: respId,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    model: body.model ?? 'gpt-scripted',
    status: 'in_progress',
    output: [] as any[],
  };
  let n = 0;
  const events: Array<{ event: string; data: any }> = [
    { event: 'response.created', data: { type: 'response.created', sequence_number: n++, response: base } },
    { event: 'response.in_progress', data: { type: 'response.in_progress', sequence_number: n++, response: base } },
    {
      event: 'response.output_item.added',
      data: {
        type: 'response.output_item.added',
        sequence_number: n++,
        output_index: 0,
        item:
          item.type === 'message'
            ? { ...item, status: 'in_progress', content: [] }
            : item.type === 'custom_tool_call'
              ? { ...item, status: 'in_progress', input: '' }
              : { ...item, status: 'in_progress', arguments: '' },
      },
    },
  ];
  if (item.type === 'message') {
    const text = (item as any).content[0].text as string;
    events.push({
      event: 'response.content_part.added',
      data: {
        type: 'response.content_part.added',
        sequence_number: n++,
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      },
    });
    events.push({
      event: 'response.output_text.delta',
      data: { type: 'response.output_text.delta', sequence_number: n++, item_id: item.id, output_index: 0, content_index: 0, delta: text },
    });
    events.push({
      event: 'response.output_text.done',
      data: { type: 'response.output_text.done', sequence_number: n++, item_id: item.id, output_index: 0, content_index: 0, text },
    });
    events.push({
      event: 'response.content_part.done',
      data: {
        type: 'response.content_part.done',
        sequence_number: n++,
        item_id: item.id,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text, annotations: [] },
      },
    });
  } else if (item.type === 'custom_tool_call') {
    events.push({
      event: 'response.custom_tool_call_input.delta',
      data: {
        type: 'response.custom_tool_call_input.delta',
        sequence_number: n++,
        item_id: item.id,
        output_index: 0,
        delta: (item as any).input,
      },
    });
    events.push({
      event: 'response.custom_tool_call_input.done',
      data: {
        type: 'response.custom_tool_call_input.done',
        sequence_number: n++,
        item_id: item.id,
        output_index: 0,
        input: (item as any).input,
      },
    });
  } else {
    events.push({
      event: 'response.function_call_arguments.delta',
      data: {
        type: 'response.function_call_arguments.delta',
        sequence_number: n++,
        item_id: item.id,
        output_index: 0,
        delta: (item as any).arguments,
      },
    });
    events.push({
      event: 'response.function_call_arguments.done',
      data: {
        type: 'response.function_call_arguments.done',
        sequence_number: n++,
        item_id: item.id,
        output_index: 0,
        arguments: (item as any).arguments,
      },
    });
  }
  events.push({
    event: 'response.output_item.done',
    data: { type: 'response.output_item.done', sequence_number: n++, output_index: 0, item },
  });
  events.push({
    event: 'response.completed',
    data: { type: 'response.completed', sequence_number: n++, response: { ...base, status: 'completed', output: [item], usage } },
  });
  void n; // the sequence ends here
  return { events, response: { ...base, status: 'completed', output: [item], usage } };
}

function responses(res: ServerResponse, body: any, script: Script): void {
  const { events, response } = responseEvents(body, script);
  if (body.stream === false) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(response));
    return;
  }
  sse(res, events);
}

/**
 * The Responses WebSocket mode, as the real service speaks it: each `response.create` carries only the
 * new input items plus `previous_response_id`, and the provider keeps the conversation (earlier input
 * and its own output) under the response id. Every event of the response is one text message. A
 * `response.create` with `generate: false` (a warm-up) is answered with an empty completed response.
 */
function serveResponsesSocket(
  ws: WebSocket,
  path: string,
  headers: IncomingMessage['headers'],
  received: Received[],
  script: Script,
  upstream: 'openai' | 'chatgpt',
): void {
  const conversations = new Map<string, any[]>();
  ws.on('message', (data: Buffer, binary: boolean) => {
    let msg: any;
    try {
      msg = binary ? undefined : JSON.parse(data.toString('utf8'));
    } catch {
      msg = undefined;
    }
    if (msg?.type !== 'response.create') {
      ws.send(
        JSON.stringify({
          type: 'error',
          status: 400,
          error: { type: 'invalid_request_error', message: 'scripted provider: expected response.create' },
        }),
      );
      return;
    }
    const { type: _type, ...body } = msg;
    const earlier = typeof body.previous_response_id === 'string' ? conversations.get(body.previous_response_id) : undefined;
    if (typeof body.previous_response_id === 'string' && !earlier) {
      ws.send(
        JSON.stringify({
          type: 'error',
          status: 400,
          error: {
            type: 'invalid_request_error',
            code: 'previous_response_not_found',
            message: `no response ${body.previous_response_id}`,
          },
        }),
      );
      return;
    }
    const input = [...(earlier ?? []), ...(Array.isArray(body.input) ? body.input : [])];
    // what the provider now holds for this turn: recorded with the whole input, as an HTTP request would carry it
    received.push({
      method: 'WS',
      path,
      headers,
      body: data.toString('utf8'),
      json: { ...body, input },
      upstream,
      transport: 'websocket',
    });
    if (body.generate === false) {
      const response = {
        id: id('resp'),
        object: 'response',
        created_at: Math.floor(Date.now() / 1000),
        model: body.model ?? 'gpt-scripted',
        status: 'completed',
        output: [],
        usage: {
          input_tokens: 0,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 0,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 0,
        },
      };
      conversations.set(response.id, input);
      ws.send(JSON.stringify({ type: 'response.created', sequence_number: 0, response: { ...response, status: 'in_progress' } }));
      ws.send(JSON.stringify({ type: 'response.completed', sequence_number: 1, response }));
      return;
    }
    const { events, response } = responseEvents({ ...body, input }, script);
    conversations.set(response.id, [...input, ...response.output]);
    for (const e of events) ws.send(JSON.stringify(e.data));
  });
}

/** A Gemini API model call: `/v1beta/models/<model>:<method>`. */
const GEMINI_CALL = /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;
/** Gemini CLI's shell tool. */
const GEMINI_SHELL = 'run_shell_command';

/** The function declarations of a Gemini request's tools. */
function geminiTools(body: any): string[] {
  const names: string[] = [];
  for (const t of Array.isArray(body.tools) ? body.tools : [])
    for (const d of Array.isArray(t?.functionDeclarations) ? t.functionDeclarations : [])
      if (typeof d?.name === 'string') names.push(d.name);
  return names;
}

/** How Gemini CLI (0.61) frames what a tool returned: `<untrusted_context>\n…\n</untrusted_context>`. */
const UNTRUSTED = /^<untrusted_context>\n([\s\S]*)\n<\/untrusted_context>$/;

/**
 * The text of a functionResponse: `response.output` (Gemini CLI; an MCP tool's text without the
 * `<untrusted_context>` frame Gemini CLI puts around it), else `response.error`, else the response as JSON.
 */
function geminiResponseText(fr: any): string {
  const r = fr?.response;
  if (typeof r?.output === 'string')
    return typeof fr.name === 'string' && fr.name.startsWith('mcp_') ? (UNTRUSTED.exec(r.output)?.[1] ?? r.output) : r.output;
  if (typeof r?.error === 'string') return r.error;
  return JSON.stringify(r ?? null);
}

/** Function responses of a Gemini request, in order, with the name of the tool each answers (the call before it at its position). */
export function geminiResults(body: any): Array<{ tool: string; text: string }> {
  const out: Array<{ tool: string; text: string }> = [];
  let calls: string[] = [];
  for (const c of Array.isArray(body.contents) ? body.contents : []) {
    const parts: any[] = Array.isArray(c?.parts) ? c.parts : [];
    if (c?.role === 'model') {
      calls = parts.filter((p) => p?.functionCall).map((p) => p.functionCall.name as string);
      continue;
    }
    let k = 0;
    for (const p of parts)
      if (p?.functionResponse) out.push({ tool: calls[k++] ?? p.functionResponse.name, text: geminiResponseText(p.functionResponse) });
  }
  return out;
}

/**
 * One scripted Gemini answer. A request without the shell tool is a side call: one that asks for JSON
 * (Gemini CLI's model router and next-speaker check) gets a JSON object holding every field those
 * read, any other a short text. Otherwise as the other providers: a shell call per command, the
 * read-back pages, then the final answer. Calls carry no `id`, as the real API sends them.
 */
function geminiParts(body: any, script: Script): any[] {
  if (!geminiTools(body).includes(GEMINI_SHELL)) {
    const json = body.generationConfig?.responseMimeType === 'application/json' || body.generationConfig?.responseJsonSchema;
    const text = json
      ? JSON.stringify({
          reasoning: 'scripted',
          model_choice: 'flash',
          complexity_reasoning: 'scripted',
          complexity_score: 1,
          next_speaker: 'user',
        })
      : 'Scripted side answer.';
    return [{ text }];
  }
  const results = geminiResults(body);
  const step = results.length;
  if (script.readBack && step >= script.commands.length) {
    const read = nextRead(results, script);
    if (read !== 'done') return [{ functionCall: { name: script.readBack.tool, args: read } }];
  }
  if (step < script.commands.length)
    return [{ functionCall: { name: GEMINI_SHELL, args: { command: script.commands[step], description: `step ${step + 1}` } } }];
  return [{ text: script.finalAnswer }];
}

function geminiAnswer(res: ServerResponse, method: string, body: any, script: Script): void {
  if (method === 'countTokens') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ totalTokens: Math.ceil(JSON.stringify(body).length / 4) }));
    return;
  }
  const parts = geminiParts(body, script);
  const usageMetadata = { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 };
  const answer = {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata,
    modelVersion: 'gemini-scripted',
    responseId: id('gresp'),
  };
  if (method === 'generateContent') {
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8' });
    res.end(JSON.stringify(answer));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  res.end(`data: ${JSON.stringify(answer)}\r\n\r\n`);
}

export async function startScriptedProvider(script: Script): Promise<ScriptedProvider> {
  const received: Received[] = [];
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: any;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const full = (req.url ?? '/').split('?')[0]!;
      const m = /^\/(openai|anthropic|gemini)(\/.*)?$/.exec(full);
      const chatgpt = full.startsWith('/backend-api/');
      const upstream = m ? (m[1] as 'openai' | 'anthropic' | 'gemini') : chatgpt ? 'chatgpt' : 'none';
      const path = m ? (m[1] === 'openai' ? (m[2] ?? '/') : (m[2] ?? '/')) : full;
      received.push({ method: req.method ?? '', path, headers: req.headers, body, json, upstream, transport: 'http' });
      try {
        const gemini = upstream === 'gemini' ? GEMINI_CALL.exec(path) : null;
        if (req.method === 'POST' && gemini) return geminiAnswer(res, gemini[2]!, json ?? {}, script);
        if (req.method === 'POST' && path === '/v1/messages') return anthropic(res, json ?? {}, script);
        if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ input_tokens: Math.ceil(body.length / 4) }));
        }
        if (req.method === 'POST' && (path === '/v1/responses' || path === '/responses' || path === CHATGPT_RESPONSES))
          return responses(res, json ?? {}, script);
        if (req.method === 'POST' && (path === '/v1/chat/completions' || path === '/chat/completions'))
          return chat(res, json ?? {}, script);
        if (req.method === 'GET' && (path === '/v1/models' || path === '/models')) {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ object: 'list', data: [] }));
        }
        if (req.method === 'HEAD') {
          res.writeHead(200);
          return res.end();
        }
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'not_found', message: `scripted provider: no ${req.method} ${path}` } }));
      } catch (e) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { type: 'server_error', message: String(e) } }));
      }
    });
  });
  // WebSocket upgrades: the Responses WebSocket mode on the OpenAI side when the script offers it,
  // otherwise (and on any other path) refused with 426 so the client falls back to HTTP
  const sockets = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    const full = (req.url ?? '/').split('?')[0]!;
    const path = full.replace(/^\/openai/, '');
    if (
      script.websockets &&
      ((full.startsWith('/openai') && (path === '/v1/responses' || path === '/responses')) || full === CHATGPT_RESPONSES)
    ) {
      sockets.handleUpgrade(req, socket, head, (ws) =>
        serveResponsesSocket(ws, path, req.headers, received, script, full === CHATGPT_RESPONSES ? 'chatgpt' : 'openai'),
      );
      return;
    }
    received.push({
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: '',
      upstream: 'none',
      transport: 'websocket-refused',
    });
    socket.end(
      'HTTP/1.1 426 Upgrade Required\r\ncontent-type: text/plain\r\ncontent-length: 22\r\nconnection: close\r\n\r\nuse HTTP, not a socket',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const ws of sockets.clients) ws.terminate();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
