/**
 * Copilot through Spillway, in a real VS Code whose API has the language model chat provider
 * (code-server 4.139.1 = VS Code 1.139, on Node 24 from npm; see scripts/install-code-server-chat.sh).
 *
 * Three `spillway` models point at a scripted endpoint on 127.0.0.1 (OpenAI Responses, Chat
 * Completions, Anthropic Messages, each streaming). The calls go through `vscode.lm` exactly as
 * Copilot makes them: `selectChatModels({ vendor: 'spillway' })`, then `model.sendRequest` with a
 * conversation whose tool results are big (a real Claude Code tool output from the corpus in test/fixtures/sessions).
 * Functions passed to `vs.run` run in the extension host and may only use their arguments and `t`.
 *
 * A test that needs an earlier conversation (the second call of one, the inspector's sessions) sends
 * what this window has not been sent yet itself, so any one runs alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureChatCodeServer, launch, waitUntil, inspectorFrame, type Harness, type HostContext } from './harness';
import { modelId, type ModelEntry } from '../../src/extension/chat/models';
import { tokenCounter } from '../../src/engine';
import { biggestClaudeCodeToolResult } from '../support/fixtures';
import { filesUnder } from '../support/files';
import { failing } from '../support/expect';
import { HANDLE_IN_TEXT } from '../../src/engine/handle';

const KEY = 'sk-spillway-test-0c5e7a1f9b2d4e6f8a0b';

const BIG = biggestClaudeCodeToolResult();

// ---------------------------------------------------------------- the scripted endpoint

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  closedEarly: boolean;
}
type Script = (req: IncomingMessage, res: ServerResponse, body: string) => void;
let server: Server;
let port = 0;
const seen: Seen[] = [];
const scripts: Script[] = [];

function sse(res: ServerResponse, events: unknown[], named = false): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const e of events) res.write(`${named ? `event: ${(e as { type: string }).type}\n` : ''}data: ${JSON.stringify(e)}\n\n`);
}

/** A streamed answer per API: two text deltas, then a tool call (arguments in two pieces), with usage. */
function answer(api: ModelEntry['api'], call: { id: string; name: string; args: object }): Script {
  const args = JSON.stringify(call.args);
  const [a1, a2] = [args.slice(0, 5), args.slice(5)];
  return (_req, res) => {
    if (api === 'openai-chat') {
      sse(res, [
        { choices: [{ delta: { role: 'assistant', content: 'Reading ' } }] },
        { choices: [{ delta: { content: 'the log.' } }] },
        {
          choices: [{ delta: { tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.name, arguments: a1 } }] } }],
        },
        { choices: [{ delta: { tool_calls: [{ index: 0, function: { arguments: a2 } }] } }] },
        { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
        { choices: [], usage: { prompt_tokens: 1200, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 1024 } } },
      ]);
      res.end('data: [DONE]\n\n');
    } else if (api === 'openai-responses') {
      sse(
        res,
        [
          { type: 'response.created', response: { id: 'resp_1' } },
          { type: 'response.output_text.delta', delta: 'Reading ' },
          { type: 'response.output_text.delta', delta: 'the log.' },
          {
            type: 'response.output_item.added',
            item: { type: 'function_call', id: 'fc_1', call_id: call.id, name: call.name, arguments: '' },
          },
          { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: a1 },
          { type: 'response.function_call_arguments.delta', item_id: 'fc_1', delta: a2 },
          {
            type: 'response.output_item.done',
            item: { type: 'function_call', id: 'fc_1', call_id: call.id, name: call.name, arguments: args },
          },
          {
            type: 'response.completed',
            response: { usage: { input_tokens: 1200, output_tokens: 30, input_tokens_details: { cached_tokens: 1024 } } },
          },
        ],
        true,
      );
      res.end();
    } else {
      sse(
        res,
        [
          {
            type: 'message_start',
            message: { id: 'msg_1', usage: { input_tokens: 176, cache_read_input_tokens: 1024, output_tokens: 1 } },
          },
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Reading ' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'the log.' } },
          { type: 'content_block_stop', index: 0 },
          { type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } },
          { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: a1 } },
          { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: a2 } },
          { type: 'content_block_stop', index: 1 },
          { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 30 } },
          { type: 'message_stop' },
        ],
        true,
      );
      res.end();
    }
  };
}

/** A plain text answer. */
function textAnswer(api: ModelEntry['api'], text: string): Script {
  return (_req, res) => {
    if (api === 'openai-chat') {
      sse(res, [{ choices: [{ delta: { content: text } }] }, { choices: [{ delta: {}, finish_reason: 'stop' }] }]);
      res.end('data: [DONE]\n\n');
    } else if (api === 'openai-responses') {
      sse(
        res,
        [
          { type: 'response.output_text.delta', delta: text },
          { type: 'response.completed', response: {} },
        ],
        true,
      );
      res.end();
    } else {
      sse(
        res,
        [
          { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
          { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
          { type: 'content_block_stop', index: 0 },
          { type: 'message_stop' },
        ],
        true,
      );
      res.end();
    }
  };
}

const APIS = ['openai-responses', 'openai-chat', 'anthropic'] as const;
const entries = (p: number): ModelEntry[] =>
  APIS.map((api) => ({
    name: `scripted ${api}`,
    api,
    model: `test-${api}`,
    maxInputTokens: 200_000,
    baseUrl: api === 'anthropic' ? `http://127.0.0.1:${p}` : `http://127.0.0.1:${p}/v1`,
  }));
const idOf = (api: (typeof APIS)[number]) => modelId(entries(port).find((e) => e.api === api)!);

// ---------------------------------------------------------------- the caller, in the extension host

interface PartSpec {
  text?: string;
  call?: { id: string; name: string; input: object };
  result?: { id: string; text: string };
}
interface SendOptions {
  tools?: { name: string; description: string; inputSchema?: object }[];
  cancelAfter?: number;
}
interface SendResult {
  parts: { text?: string; call?: string; name?: string; input?: unknown; other?: string }[];
  error?: string;
}

/** In the extension host: selectChatModels + sendRequest, as Copilot calls a model; collects the streamed parts. */
async function sendInHost(
  t: HostContext,
  id: string,
  spec: { role: 'user' | 'assistant'; parts: PartSpec[] }[],
  opts: SendOptions,
): Promise<SendResult> {
  const vscode = t.vscode;
  const [model] = await vscode.lm.selectChatModels({ vendor: 'spillway', id });
  if (!model) throw new Error(`no spillway model ${id}`);
  const msgs = spec.map((m) => {
    const parts = m.parts.map((p) =>
      p.text !== undefined
        ? new vscode.LanguageModelTextPart(p.text)
        : p.call
          ? new vscode.LanguageModelToolCallPart(p.call.id, p.call.name, p.call.input)
          : new vscode.LanguageModelToolResultPart(p.result!.id, [new vscode.LanguageModelTextPart(p.result!.text)]),
    );
    return m.role === 'user'
      ? vscode.LanguageModelChatMessage.User(parts as never)
      : vscode.LanguageModelChatMessage.Assistant(parts as never);
  });
  const cts = new vscode.CancellationTokenSource();
  const parts: SendResult['parts'] = [];
  try {
    const res = await model.sendRequest(msgs, { tools: opts.tools ?? [] }, cts.token);
    for await (const p of res.stream as AsyncIterable<unknown>) {
      if (p instanceof vscode.LanguageModelTextPart) parts.push({ text: p.value });
      else if (p instanceof vscode.LanguageModelToolCallPart) parts.push({ call: p.callId, name: p.name, input: p.input });
      else parts.push({ other: String((p as object)?.constructor?.name) });
      if (opts.cancelAfter && parts.length >= opts.cancelAfter) cts.cancel();
    }
    return { parts };
  } catch (e) {
    return { parts, error: e instanceof Error ? e.message : String(e) };
  }
}

function send(id: string, spec: { role: 'user' | 'assistant'; parts: PartSpec[] }[], opts: SendOptions = {}): Promise<SendResult> {
  return vs.runSource(sendInHost.toString(), [id, spec, opts], 60_000) as Promise<SendResult>;
}

/** A conversation as Copilot sends it: a prompt, the model's tool call, the big result. */
const conversation = (prompt: string, callId: string) => [
  { role: 'user' as const, parts: [{ text: prompt }] },
  {
    role: 'assistant' as const,
    parts: [{ text: 'Listing the tree.' }, { call: { id: callId, name: 'run_in_terminal', input: { command: 'ls -R' } } }],
  },
  { role: 'user' as const, parts: [{ result: { id: callId, text: BIG } }] },
];
const READ_TOOL = {
  name: 'spillway_read_output',
  description: 'Reads a stored Spillway output by handle.',
  inputSchema: { type: 'object', properties: { handle: { type: 'string' } }, required: ['handle'] },
};
const TERMINAL_TOOL = {
  name: 'run_in_terminal',
  description: 'Runs a command.',
  inputSchema: { type: 'object', properties: { command: { type: 'string' } } },
};

type Api = (typeof APIS)[number];
/** The conversations this window has been sent, per API: what a test that builds on one sends first when run alone. */
const sent = { look: new Set<Api>(), lookAgain: new Set<Api>(), anotherLook: new Set<Api>() };

/** "Look at the repository": the big result projected, the model answering with a terminal call. */
async function look(api: Api): Promise<{ r: SendResult; got: Seen | undefined; before: number }> {
  const before = seen.length;
  scripts.push(answer(api, { id: `call_next_${api}`, name: 'run_in_terminal', args: { command: 'npm test' } }));
  const r = await send(idOf(api), conversation(`Look at the repository (${api}).`, `call_ls_${api}`), { tools: [TERMINAL_TOOL] });
  sent.look.add(api);
  return { r, got: seen[before], before };
}

/** The same conversation again with the read tool listed: the model answers with a call to it. */
async function lookAgain(api: Api): Promise<{ r: SendResult; first: string; body: string }> {
  if (!sent.look.has(api)) await look(api);
  scripts.push(answer(api, { id: `call_read_${api}`, name: 'spillway_read_output', args: { handle: 'HANDLE' } }));
  const before = seen.length;
  // the same conversation: the engine's session keeps the decision, the handle is the same
  const first = await vs.run(({ host }) => host.recordsNewestFirst()[0]?.handle ?? '');
  const r = await send(idOf(api), conversation(`Look at the repository (${api}).`, `call_ls_${api}`), {
    tools: [TERMINAL_TOOL, READ_TOOL],
  });
  sent.lookAgain.add(api);
  return { r, first, body: seen[before]?.body ?? '' };
}

/** "Another look", without the read tool listed: the model reads back, and the provider answers that itself. */
async function anotherLook(api: Api): Promise<{ r: SendResult; before: number }> {
  const before = seen.length;
  scripts.push((req, res, body) => {
    const handle = HANDLE_IN_TEXT.exec(body)![0];
    answer(api, { id: `call_self_${api}`, name: 'spillway_read_output', args: { handle, lines: '1:5' } })(req, res, body);
  });
  scripts.push(textAnswer(api, 'Found it.'));
  const r = await send(idOf(api), conversation(`Another look (${api}).`, `call_ls2_${api}`), { tools: [TERMINAL_TOOL] });
  sent.anotherLook.add(api);
  return { r, before };
}

let vs: Harness;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = { path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), closedEarly: false };
      seen.push(s);
      res.on('close', () => {
        if (!res.writableEnded) s.closedEarly = true;
      });
      const script = scripts.shift();
      if (!script) {
        res.writeHead(500, { 'content-type': 'application/json' });
        res.end('{"error":{"message":"no script"}}');
        return;
      }
      script(req, res, s.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  port = (server.address() as { port: number }).port;
  ensureChatCodeServer();
  vs = await launch({ name: 'chat', codeServer: 'chat', userSettings: { 'spillway.languageModels': entries(port) } });
  // keys go where Add Language Model puts them: SecretStorage
  await vs.run(
    async ({ context }, ids: string[], key: string) => {
      for (const id of ids) await context.secrets.store(`spillway.languageModel.${id}`, key);
    },
    APIS.map(idOf),
    KEY,
  );
}, 40 * 60_000);

afterAll(async () => {
  if (vs) await vs.screenshot('chat-last');
  await vs?.close();
  await new Promise((r) => server?.close(r));
});

describe('Copilot through Spillway (VS Code with the chat provider API)', () => {
  it('lists the spillway models with their names, context sizes and tooltip', async () => {
    const models = await vs.run(async ({ vscode }) => {
      const select = () => vscode.lm.selectChatModels({ vendor: 'spillway' });
      // the vendor lists its models a while after activation (up to 25 s on a loaded machine, within
      // run's 30 s): wait for VS Code to say the models changed, checking again once subscribed
      const list = await new Promise<Awaited<ReturnType<typeof select>>>((resolve, reject) => {
        const check = () =>
          select().then((l) => {
            if (l.length < 3) return;
            sub.dispose();
            resolve(l);
          }, reject);
        const sub = vscode.lm.onDidChangeChatModels(() => void check());
        void check();
      });
      return {
        version: vscode.version,
        models: list.map((m) => ({ id: m.id, name: m.name, vendor: m.vendor, family: m.family, maxInputTokens: m.maxInputTokens })),
      };
    });
    expect(models.version).toMatch(/^1\.1[0-9]{2}\./);
    expect(models.models.map((m) => m.name).sort()).toEqual(APIS.map((a) => `scripted ${a} · Spillway`).sort());
    expect(
      failing(models.models, (m) => m.vendor === 'spillway' && m.maxInputTokens === 200_000),
      'models not of the spillway vendor with 200,000 input tokens',
    ).toEqual([]);
    expect(models.models.map((m) => m.id).sort()).toEqual(APIS.map(idOf).sort());
  });

  it("counts tokens with the engine's tokenizer (o200k_base by default)", async () => {
    const counted = await vs.run(
      async ({ vscode }, id: string, text: string) => {
        const [model] = await vscode.lm.selectChatModels({ vendor: 'spillway', id });
        return model!.countTokens(text);
      },
      idOf('anthropic'),
      BIG,
    );
    expect(counted).toBe(tokenCounter('o200k_base').count(BIG));
  });

  describe.each(APIS)('%s', (api) => {
    it('sends the conversation projected (handle reads back exact), key forwarded, parts streamed in order', async () => {
      const { r, before } = await look(api);
      expect(r.error).toBeUndefined();
      expect(r.parts).toEqual([
        { text: 'Reading ' },
        { text: 'the log.' },
        { call: `call_next_${api}`, name: 'run_in_terminal', input: { command: 'npm test' } },
      ]);
      expect(seen.length).toBe(before + 1);
      const got = seen[before]!;
      expect(got.path).toBe(api === 'openai-responses' ? '/v1/responses' : api === 'openai-chat' ? '/v1/chat/completions' : '/v1/messages');
      expect(api === 'anthropic' ? got.headers['x-api-key'] : got.headers.authorization).toBe(api === 'anthropic' ? KEY : `Bearer ${KEY}`);
      // projected: the big output is not there, a marker naming a handle is
      expect(got.body).not.toContain(BIG.slice(BIG.length / 2, BIG.length / 2 + 400));
      const handle = HANDLE_IN_TEXT.exec(got.body)?.[0];
      expect(handle).toBeDefined();
      expect(got.body.length).toBeLessThan(BIG.length);
      const back = await vs.run(({ api: spillway }, h: string) => spillway.read(h).text, handle!);
      expect(back).toBe(BIG);
      // the model is offered the read tool alongside the caller's
      expect(got.body).toContain('spillway_read_output');
      expect(got.body).toContain('run_in_terminal');
    });

    it('a call to spillway_read_output the caller lists comes back as a tool call, and the tool returns the stored part', async () => {
      const { r, first, body } = await lookAgain(api);
      expect(r.error).toBeUndefined();
      expect(r.parts.at(-1)).toMatchObject({ call: `call_read_${api}`, name: 'spillway_read_output' });
      const handle = HANDLE_IN_TEXT.exec(body)![0];
      expect(handle).toBe(first);
      // the caller (Copilot) invokes the registered tool with the handle the marker names
      const part = await vs.run(async ({ vscode }, h: string) => {
        const res = await vscode.lm.invokeTool('spillway_read_output', {
          input: { handle: h, lines: '1:20' },
          toolInvocationToken: undefined,
        });
        return res.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
      }, handle);
      const lines = BIG.split('\n').slice(0, 20).join('\n');
      expect(part).toContain(lines);
    });

    it('answers read-backs itself when the caller does not list the tool, within the same request', async () => {
      const { r, before } = await anotherLook(api);
      expect(r.error).toBeUndefined();
      // the read-back call is not passed to the caller; the text before it and the final answer are
      expect(r.parts).toEqual([{ text: 'Reading ' }, { text: 'the log.' }, { text: 'Found it.' }]);
      expect(seen.length).toBe(before + 2);
      const second = seen[before + 1]!.body;
      expect(second).toContain(`call_self_${api}`);
      const firstLines = BIG.split('\n').slice(0, 5).join('\n');
      expect(() => JSON.parse(second), 'the second request is JSON').not.toThrow();
      expect(second).toContain(JSON.stringify(firstLines).slice(1, -1));
    });
  });

  it("spillway_extract answers a question about a stored output with the user's model, naming the handle and the part it read", async () => {
    if (!sent.look.has('openai-chat')) await look('openai-chat');
    const handle = await vs.run(({ host }) => host.recordsNewestFirst()[0]?.handle ?? '');
    const before = seen.length;
    // whichever model the tool picks, answer in its API
    scripts.push((req, res, body) => {
      const api: Api = req.url!.endsWith('/responses')
        ? 'openai-responses'
        : req.url!.endsWith('/chat/completions')
          ? 'openai-chat'
          : 'anthropic';
      textAnswer(api, 'The listing names package.json.')(req, res, body);
    });
    const answer = await vs.run(async ({ vscode }, h: string) => {
      const res = await vscode.lm.invokeTool('spillway_extract', {
        input: { handle: h, question: 'where is "package.json" listed?' },
        toolInvocationToken: undefined,
      });
      return res.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
    }, handle);
    expect(answer.split('\n')[0]).toMatch(new RegExp(`^\\[spillway extract ${handle}, read-grep: read \\d+ match`));
    expect(answer.split('\n').slice(1).join('\n')).toBe('The listing names package.json.');
    expect(seen.length).toBe(before + 1);
    // the model was asked about the grep matches, not the whole output
    expect(seen[before]!.body).toContain('package.json');
    expect(seen[before]!.body.length).toBeLessThan(BIG.length);
  });

  it('cancellation aborts the upstream request', async () => {
    let hold: ServerResponse | undefined;
    scripts.push((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ choices: [{ delta: { content: 'first' } }] })}\n\n`);
      hold = res; // never ends on its own
    });
    const before = seen.length;
    const r = await send(idOf('openai-chat'), conversation('Cancel me.', 'call_c'), { cancelAfter: 1 });
    expect(r.parts[0]).toEqual({ text: 'first' });
    await waitUntil('the upstream request to be closed by the provider', () => seen[before]?.closedEarly === true, 10_000, 50);
    hold?.end();
  });

  it('a 401 and a 429 reach the caller as errors naming the provider message (and the retry-after)', async () => {
    scripts.push((_req, res) => {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: { message: 'Incorrect API key provided: sk-spil****4e6f.', type: 'invalid_request_error', code: 'invalid_api_key' },
        }),
      );
    });
    const unauthorized = await send(idOf('openai-responses'), conversation('401 please.', 'call_401'));
    expect(unauthorized.parts).toEqual([]);
    expect(unauthorized.error).toContain('Incorrect API key provided');
    expect(unauthorized.error).toContain('401');
    scripts.push((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '17' });
      res.end(
        JSON.stringify({
          type: 'error',
          error: { type: 'rate_limit_error', message: 'Number of request tokens has exceeded your per-minute rate limit' },
        }),
      );
    });
    const limited = await send(idOf('anthropic'), conversation('429 please.', 'call_429'));
    expect(limited.error).toContain('per-minute rate limit');
    expect(limited.error).toContain('retry after 17 s');
  });

  it('the inspector lists each conversation as a Copilot session with the provider usage', async () => {
    // the conversations it lists: each "Look at the repository" sent twice, each "Another look" once
    for (const api of APIS) {
      if (!sent.lookAgain.has(api)) await lookAgain(api);
      if (!sent.anotherLook.has(api)) await anotherLook(api);
    }
    const sessions = await vs.run(async ({ inspector }) => {
      const list = inspector!.copilot.list();
      const out = [];
      for (const s of list) {
        const open = await inspector!.copilot.open(s.id);
        out.push({
          id: s.id,
          origin: s.origin,
          turns: open!.turns().map((t) => ({
            reductions: t.reductions,
            cached: t.cachedPrefixTokens ?? null,
            original: t.originalTokens,
            projected: t.projectedTokens,
            note: t.note ?? null,
          })),
        });
      }
      return out;
    });
    expect(
      failing(sessions, (s) => s.origin === 'copilot' && s.id.startsWith('copilot:')).map((s) => `${s.origin} ${s.id}`),
      'sessions not of the copilot origin',
    ).toEqual([]);
    // one session per conversation: each "Look at the repository" one was sent twice (two turns, both
    // answered with usage); each "Another look" one had the provider's own read-back round (two calls)
    expect(sessions.filter((s) => s.turns.length === 2 && s.turns.every((t) => t.reductions === 1))).toHaveLength(6);
    const looked = sessions.filter((s) => s.turns.length === 2 && s.turns.every((t) => t.cached === 1024));
    expect(looked.length).toBe(3);
    for (const s of looked) {
      expect(s.turns[0]!.cached).toBe(1024);
      expect(s.turns[0]!.projected).toBeLessThan(s.turns[0]!.original);
    }
    await vs.runCommand('Spillway: Open Inspector');
    const frame = await inspectorFrame(vs.page);
    await frame.getByText('Copilot').first().waitFor({ state: 'visible', timeout: 15_000 });
  });

  it('the key never appears in anything Spillway wrote', async () => {
    // a conversation recorded in this window, with the key forwarded
    if (sent.look.size === 0) await look('anthropic');
    const dirs = await vs.run(({ host }) => [host.baseDir]);
    const files = dirs.flatMap((d) => filesUnder(d));
    const logs = filesUnder(join(vs.userData, 'logs')).filter((p) => /spillway/i.test(p));
    expect(files.some((f) => f.includes('copilot-sessions'))).toBe(true);
    expect(logs.length).toBeGreaterThan(0);
    for (const f of [...files, ...logs, join(vs.userData, 'User/settings.json')]) {
      expect(readFileSync(f).includes(KEY), f).toBe(false);
    }
  });
});
