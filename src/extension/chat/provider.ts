/**
 * The `spillway` language model chat provider: each model wraps one of the user's endpoints, and
 * every request Copilot makes of it (the whole conversation, tool results included) is converted to
 * the endpoint's wire format, projected by the window's engine under a session per conversation,
 * sent, and streamed back as text, tool-call and thinking parts.
 *
 * Reading back: the model is offered `spillway_read_output`. When the caller's tool list has it
 * (Copilot agent mode with the tool enabled), a call to it is passed back like any other tool call
 * and the caller invokes the registered tool (src/extension/readTool.ts), visibly in the chat. When
 * the caller did not list it, the provider adds its schema and answers the model's calls to it
 * itself, from the store, in a bounded loop within the same request (a round whose calls are all
 * read-backs); a round that mixes read-backs with the caller's tools is passed back whole.
 *
 * Failure: the engine failing sends the original conversation (fail open, logged, recorded). The
 * endpoint failing (HTTP status, network, a stream error event) throws an error that names the
 * model, the status and the provider's own message (429s add the retry-after); never an empty answer.
 */
import * as vscode from 'vscode';
import { createHash } from 'node:crypto';
import type { SpillwayHost } from '../host';
import { errorText } from '../host';
import {
  onlyReads,
  READ_TOOL,
  READ_TOOL_DESCRIPTION,
  READ_TOOL_INPUT_SCHEMA,
  runReadLoop,
  type RoundOutput,
  type ToolCall,
} from '../../proxy/readLoop';
import { tokenCounter, type Projection } from '../../engine';
import { conversationKey, toWire, WIRE_FORMAT, type ChatMessage, type ChatPart, type ChatTool } from './convert';
import { endpointUrl, modelInformation, type ChatModel } from './models';
import { StreamDecoder, errorMessageOf, type StreamEvent } from '../../proxy/streams';
import { authHeaders, redact, type ModelKeys } from './secrets';
import type { ChatRecorder } from './sessions';
import type {
  LanguageModelChatInformation,
  LanguageModelChatProvider,
  LanguageModelChatRequestMessage,
  ProvideLanguageModelChatResponseOptions,
} from './lmApi';
import { thinkingPart } from './lmApi';

type Info = LanguageModelChatInformation & { readonly model: ChatModel };

export interface ProviderDeps {
  host: SpillwayHost;
  models: () => ChatModel[];
  keys: ModelKeys;
  recorder: ChatRecorder;
  onDidRecord: () => void;
  onDidChangeModels: vscode.Event<void>;
}

// ---------------------------------------------------------------- VS Code parts → neutral parts

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;

/** Text of a prompt-tsx tree (LanguageModelPromptTsxPart's value): its text leaves in order. */
function tsxText(v: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 64) return out;
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) tsxText(x, out, depth + 1);
  else if (isObj(v)) {
    if (typeof v.text === 'string') out.push(v.text);
    for (const k of ['children', 'node', 'value']) if (k in v) tsxText(v[k], out, depth + 1);
  }
  return out;
}

function dataOf(p: Record<string, unknown>): Extract<ChatPart, { kind: 'data' }> | undefined {
  if (typeof p.mimeType !== 'string' || !(p.data instanceof Uint8Array)) return undefined;
  const bytes = Buffer.from(p.data.buffer, p.data.byteOffset, p.data.byteLength);
  if (/^(text\/|application\/(json|xml|x-ndjson))/i.test(p.mimeType))
    return { kind: 'data', mimeType: p.mimeType, text: bytes.toString('utf8') };
  return { kind: 'data', mimeType: p.mimeType, base64: bytes.toString('base64') };
}

function toChatMessages(messages: readonly LanguageModelChatRequestMessage[]): ChatMessage[] {
  return messages.map((m) => {
    const parts: ChatPart[] = [];
    for (const p of m.content) {
      if (!isObj(p)) continue;
      if (typeof p.callId === 'string' && typeof p.name === 'string' && 'input' in p)
        parts.push({ kind: 'toolCall', callId: p.callId, name: p.name, input: p.input });
      else if (typeof p.callId === 'string' && Array.isArray(p.content)) {
        const texts: string[] = [];
        const images: { mimeType: string; base64: string }[] = [];
        for (const c of p.content as unknown[]) {
          if (!isObj(c)) continue;
          if (typeof c.value === 'string') texts.push(c.value);
          else if ('mimeType' in c) {
            const d = dataOf(c);
            if (d?.text !== undefined) texts.push(d.text);
            else if (d?.base64 && /^image\//.test(d.mimeType)) images.push({ mimeType: d.mimeType, base64: d.base64 });
          } else if ('value' in c) texts.push(tsxText(c.value).join(''));
        }
        parts.push({ kind: 'toolResult', callId: p.callId, content: texts.join(''), ...(images.length ? { images } : {}) });
      } else if (typeof p.value === 'string') parts.push({ kind: 'text', text: p.value });
      else if ('mimeType' in p) {
        const d = dataOf(p);
        // cache-control hints and the like (application/vnd.*) are not content
        if (d && !/^application\/vnd\./i.test(d.mimeType)) parts.push(d);
      }
      // thinking parts from earlier turns are not sent back
    }
    const role = m.role === 2 ? 'assistant' : m.role === 3 ? 'system' : 'user';
    return { role, parts };
  });
}

// ---------------------------------------------------------------- errors

/** The error a caller sees for an HTTP failure: model, status, the provider's message, retry-after. */
function httpErrorMessage(model: ChatModel, status: number, statusText: string, body: string, retryAfter: string | null): string {
  let msg: string | undefined;
  try {
    msg = errorMessageOf(JSON.parse(body));
  } catch {
    msg = body.trim().slice(0, 500) || undefined;
  }
  const retry = status === 429 && retryAfter ? ` (retry after ${/^\d+$/.test(retryAfter) ? `${retryAfter} s` : retryAfter})` : '';
  return `${model.name} (${model.baseUrl}) answered ${status}${statusText ? ` ${statusText}` : ''}: ${msg ?? 'no message'}${retry}`;
}

function failure(message: string, code: 'NoPermissions' | 'Blocked' | 'NotFound' | undefined): Error {
  const E = vscode.LanguageModelError as unknown as (new (m?: string) => Error) & Record<string, ((m?: string) => Error) | undefined>;
  if (code && typeof E[code] === 'function') return E[code]!(message);
  return typeof E === 'function' ? new E(message) : new Error(message);
}

// ---------------------------------------------------------------- the provider

export class SpillwayChatProvider implements LanguageModelChatProvider<Info> {
  readonly onDidChangeLanguageModelChatInformation: vscode.Event<void>;

  constructor(private readonly d: ProviderDeps) {
    this.onDidChangeLanguageModelChatInformation = d.onDidChangeModels;
  }

  provideLanguageModelChatInformation(): Info[] {
    return this.d.models().map((m) => ({ ...modelInformation(m), model: m }));
  }

  async provideTokenCount(_model: Info, text: string | LanguageModelChatRequestMessage): Promise<number> {
    const counter = tokenCounter(this.d.host.config.tokenizer);
    if (typeof text === 'string') return counter.count(text);
    const [m] = toChatMessages([text]);
    const s = m!.parts
      .map((p) =>
        p.kind === 'text'
          ? p.text
          : p.kind === 'toolResult'
            ? p.content
            : p.kind === 'toolCall'
              ? `${p.name} ${JSON.stringify(p.input)}`
              : (p.text ?? ''),
      )
      .join('\n');
    return counter.count(s);
  }

  async provideLanguageModelChatResponse(
    info: Info,
    messages: readonly LanguageModelChatRequestMessage[],
    options: ProvideLanguageModelChatResponseOptions,
    progress: vscode.Progress<unknown>,
    token: vscode.CancellationToken,
  ): Promise<void> {
    const model = this.d.models().find((m) => m.id === info.id) ?? info.model;
    const log = this.d.host.log;
    const key = await this.d.keys.get(model.id);
    const chat = toChatMessages(messages);
    const session = `copilot-${conversationKey(chat, (s) => createHash('sha256').update(s).digest('hex').slice(0, 16))}`;
    const callerTools: ChatTool[] = (options.tools ?? []).map((t) => ({
      name: t.name,
      description: t.description,
      ...(t.inputSchema ? { inputSchema: t.inputSchema as object } : {}),
    }));
    const callerReads = callerTools.some((t) => t.name === READ_TOOL);
    const tools = callerReads
      ? callerTools
      : [...callerTools, { name: READ_TOOL, description: READ_TOOL_DESCRIPTION, inputSchema: READ_TOOL_INPUT_SCHEMA as object }];
    const extra = Object.fromEntries(
      Object.entries(options.modelOptions ?? {}).filter(([k]) =>
        ['temperature', 'top_p', 'reasoning', 'reasoning_effort', 'thinking'].includes(k),
      ),
    );
    const body = toWire(model.api, chat, {
      model: model.model,
      maxOutputTokens: info.maxOutputTokens,
      tools,
      toolMode: options.toolMode === 2 ? 'required' : 'auto',
      extra,
    });

    const abort = new AbortController();
    const sub = token.onCancellationRequested(() => abort.abort());
    try {
      // the caller that lists the tool answers it itself (maxRounds 0): the loop then only sends
      await runReadLoop({
        format: WIRE_FORMAT[model.api],
        body,
        maxRounds: callerReads ? 0 : undefined,
        send: (b, _round, mayAnswer) => this.round(model, key, session, b, progress, abort.signal, mayAnswer),
        read: (handle, opts) => this.d.host.read(handle, opts),
        onAnswered: (round, answers) =>
          log.info(`chat ${session}: answered ${answers.length} ${READ_TOOL} call(s) in the provider (round ${round + 1})`),
      });
    } catch (e) {
      if (token.isCancellationRequested) throw new vscode.CancellationError();
      throw e;
    } finally {
      sub.dispose();
    }
  }

  /** One model call: project, send, stream. Read-back calls are held back from the caller when `answerReads` and the round asked only for those. */
  private async round(
    model: ChatModel,
    key: string | undefined,
    session: string,
    body: Record<string, unknown>,
    progress: vscode.Progress<unknown>,
    signal: AbortSignal,
    answerReads: boolean,
  ): Promise<RoundOutput> {
    const host = this.d.host;
    const started = Date.now();
    const format = WIRE_FORMAT[model.api];
    const original = JSON.stringify(body);
    let projected = original;
    let projection: Projection | undefined;
    let failOpen: string | undefined;
    try {
      // resolves once the outputs the markers point at are on disk (or with the original and why not)
      const p = await host.project(original, format, { session, silent: true });
      if (p.failOpen) failOpen = p.failOpen;
      else projection = p;
      projected = typeof p.request === 'string' ? p.request : JSON.stringify(p.request);
    } catch (e) {
      failOpen = `engine failed, sent the original: ${errorText(e)}`;
      host.log.error(`chat ${session}: ${failOpen}`);
    }
    const url = endpointUrl(model.api, model.baseUrl);
    const decoder = new StreamDecoder(model.api);
    let status = 0;
    let error: string | undefined;
    let text = '';
    const calls: ToolCall[] = [];
    const held: ToolCall[] = [];
    try {
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...authHeaders(model.api, key) },
          body: projected,
          signal,
        });
      } catch (e) {
        if (signal.aborted) throw e;
        const cause = (e as { cause?: { message?: string; code?: string } }).cause;
        throw failure(`${model.name}: could not reach ${url}: ${redact(cause?.message ?? cause?.code ?? errorText(e), key)}`, undefined);
      }
      status = res.status;
      if (!res.ok) {
        const text = redact(await res.text().catch(() => ''), key);
        const msg = httpErrorMessage(model, res.status, res.statusText, text, res.headers.get('retry-after'));
        throw failure(msg, res.status === 401 || res.status === 403 ? 'NoPermissions' : res.status === 404 ? 'NotFound' : undefined);
      }
      const emit = (ev: StreamEvent) => {
        if (ev.type === 'text') {
          text += ev.text;
          progress.report(new vscode.LanguageModelTextPart(ev.text));
        } else if (ev.type === 'thinking') {
          const part = thinkingPart(ev.text);
          if (part) progress.report(part);
        } else if (ev.type === 'toolCall') {
          calls.push({ callId: ev.callId, name: ev.name, input: ev.input });
          // read-backs we may answer ourselves are held until the round ends
          if (answerReads && ev.name === READ_TOOL) held.push(ev);
          else progress.report(new vscode.LanguageModelToolCallPart(ev.callId, ev.name, (isObj(ev.input) ? ev.input : {}) as object));
        } else throw failure(`${model.name}: ${redact(ev.message, key)}`, undefined);
      };
      const utf8 = new TextDecoder();
      if (!res.body) throw failure(`${model.name}: the endpoint sent no body`, undefined);
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const ev of decoder.push(utf8.decode(chunk, { stream: true }))) emit(ev);
      }
      for (const ev of decoder.end()) emit(ev);
      if (answerReads && onlyReads(calls)) return { text, calls };
      // a round mixing read-backs with the caller's calls: the caller gets them all
      for (const c of held)
        progress.report(new vscode.LanguageModelToolCallPart(c.callId, c.name, (isObj(c.input) ? c.input : {}) as object));
      if (!text && calls.length === 0) host.log.warn(`chat ${session}: ${model.name} answered with nothing`);
      return { text, calls };
    } catch (e) {
      error = signal.aborted ? 'cancelled by the caller' : redact(errorText(e), key);
      if (!signal.aborted) host.log.error(`chat ${session}: ${error}`);
      throw e;
    } finally {
      const u = new URL(url);
      await this.d.recorder.record({
        session,
        path: u.pathname,
        format,
        model: model.model,
        original,
        projected,
        ...(projection ? { projection } : {}),
        ...(failOpen ? { failOpen } : {}),
        ...(error ? { error } : {}),
        status,
        usage: decoder.usage,
        started,
      });
      this.d.onDidRecord();
    }
  }
}
