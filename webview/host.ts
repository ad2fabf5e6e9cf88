/**
 * The webview's side of the protocol: one `acquireVsCodeApi()` for the page, requests that resolve
 * with their validated, typed result, notifications dispatched by method, and the `ready` command
 * that tells the host it may start posting. Whatever the host sends is validated first; an invalid
 * message is logged (to the console and the host's log) and dropped.
 */
import {
  command,
  parseHostMessage,
  request,
  type CommandMethod,
  type CommandParams,
  type HostMessage,
  type NotificationMethod,
  type NotificationParams,
  type RequestMethod,
  type RequestParams,
  type RequestResult,
} from '../src/protocol';

export interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}

declare global {
  function acquireVsCodeApi(): VsCodeApi;
}

/** What the webview remembers across reloads (and what the panel serializer restores). */
export interface ViewState {
  sessionId?: string;
  turn?: number;
  /** the result expanded in the chosen turn (its key), kept while the tab is hidden */
  expanded?: string;
  /** the chart's measure */
  chart?: 'tokens' | 'cost';
  /** the caps section is open */
  capsOpen?: boolean;
  /** the model the cost is priced at, when the user picked one */
  model?: string;
}

type Handler<M extends NotificationMethod> = (params: NotificationParams<M>) => void;

export class Host {
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; method: string }>();
  private readonly handlers = new Map<string, Set<(p: unknown) => void>>();
  /** messages from the host that failed validation */
  dropped = 0;
  private readonly listener = (e: MessageEvent) => this.receive(e.data);

  constructor(
    private readonly api: VsCodeApi,
    private readonly target: Window = window,
  ) {
    target.addEventListener('message', this.listener);
  }

  /** Tells the host this page listens; call once the first render's handlers are in place. */
  ready(): void {
    this.command('webview/ready', {});
  }

  command<M extends CommandMethod>(method: M, params: CommandParams<M>): void {
    this.api.postMessage(command(method, params));
  }

  request<M extends RequestMethod>(method: M, params: RequestParams<M>): Promise<RequestResult<M>> {
    const id = ++this.seq;
    return new Promise<RequestResult<M>>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, method });
      this.api.postMessage(request(id, method, params));
    });
  }

  on<M extends NotificationMethod>(method: M, handler: Handler<M>): () => void {
    let set = this.handlers.get(method);
    if (!set) this.handlers.set(method, (set = new Set()));
    set.add(handler as (p: unknown) => void);
    return () => set!.delete(handler as (p: unknown) => void);
  }

  getState(): ViewState {
    const s = this.api.getState();
    return s && typeof s === 'object' ? (s as ViewState) : {};
  }

  setState(state: ViewState): void {
    this.api.setState(state);
  }

  receive(data: unknown): void {
    const parsed = parseHostMessage(data);
    if (!parsed.ok) {
      this.dropped++;
      console.warn(`spillway inspector: dropped an invalid message: ${parsed.error}`);
      this.command('webview/log', { level: 'warn', message: `dropped an invalid message from the host: ${parsed.error}`.slice(0, 4000) });
      return;
    }
    const m: HostMessage = parsed.message;
    if (m.kind === 'response') {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (m.ok) p.resolve(m.result);
      else p.reject(new Error(m.error));
      return;
    }
    for (const h of [...(this.handlers.get(m.method) ?? [])]) h(m.params);
  }

  dispose(): void {
    this.target.removeEventListener('message', this.listener);
  }
}
