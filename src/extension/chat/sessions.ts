/**
 * Copilot turns, recorded the way the proxy records its turns (src/proxy/recording.ts: one JSON
 * line per model call, request bodies by handle), in their own folder beside the proxy's
 * (`<store>/../copilot-sessions`). The inspector lists that folder as origin `copilot` with the
 * proxy's reader, so these sessions are files: live while the chat runs, still there after a reload.
 * Bodies hold the request only; keys travel in headers, which are never recorded.
 */
import * as path from 'node:path';
import { Recorder, type Turn } from '../../proxy/recording';
import type { Projection, WireFormat } from '../../engine';
import type { TurnUsage } from '../../proxy/usage';

export function copilotSessionsDir(storeDir: string): string {
  return path.join(path.dirname(path.resolve(storeDir)), 'copilot-sessions');
}

export interface ChatTurn {
  session: string;
  path: string;
  format: WireFormat;
  model: string;
  original: string;
  projected: string;
  projection?: Projection;
  failOpen?: string;
  error?: string;
  status: number;
  usage: TurnUsage;
  started: number;
}

export class ChatRecorder {
  private recorder: Recorder | undefined;

  constructor(
    private readonly dir: () => string,
    private readonly log: (line: string) => void,
  ) {}

  private current(): Recorder {
    const d = this.dir();
    if (this.recorder?.dir !== path.resolve(d)) this.recorder = new Recorder(d);
    return this.recorder;
  }

  /** Appends one turn; a recording failure is logged, never thrown at the chat. */
  async record(t: ChatTurn): Promise<Turn | undefined> {
    try {
      const r = this.current();
      const original = Buffer.from(t.original, 'utf8');
      const projected = t.projected === t.original ? original : Buffer.from(t.projected, 'utf8');
      const requestRef = await r.putBody(original);
      const projectionRef = projected === original ? requestRef : await r.putBody(projected);
      const s = t.projection?.stats;
      const turn: Turn = {
        v: 1,
        session: t.session,
        turn: r.nextTurn(t.session),
        time: new Date(t.started).toISOString(),
        path: t.path,
        format: t.format,
        model: t.model,
        originalBytes: original.length,
        projectedBytes: projected.length,
        ...(s ? { originalTokens: s.originalTokens, projectedTokens: s.projectedTokens, stats: s } : {}),
        reductions: t.projection?.reductions ? [...t.projection.reductions] : [],
        ...(Object.keys(t.usage).length ? { usage: t.usage } : {}),
        status: t.status,
        durationMs: Date.now() - t.started,
        ...(t.failOpen ? { failOpen: t.failOpen } : {}),
        ...(t.error ? { error: t.error } : {}),
        ...(requestRef ? { requestRef } : {}),
        ...(projectionRef ? { projectionRef } : {}),
      };
      r.append(turn);
      return turn;
    } catch (e) {
      this.log(`could not record the Copilot turn of ${t.session}: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
  }
}
