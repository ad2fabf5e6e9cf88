/**
 * Inspector sessions kept on disk, so a session made through the API, replayed from a transcript or
 * fed by any other source (the chat model provider) is still there after a window reload.
 *
 * One JSON Lines file per session, `<dir>/<origin>/<name>.jsonl`, where `dir` sits next to the store
 * (`inspector-sessions/`, beside the proxy's `sessions/`): a header line, then one line per turn
 * (its summary, the reductions in force, the missed identifiers and the turn's own results). A
 * session that grows (API) appends a line per turn, written with one `write` call, so a crash leaves
 * at most a torn last line, which reading skips; a session written at once (a replay) is written to
 * a temp file and renamed. Files not written for `retentionDays` are pruned with the store.
 *
 * Keyed by origin and free of any one source's types: a new source only needs a name and records.
 */
import * as fs from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import type { HeldGroup, InputReduction, Reduction, SavedByAgent, TruncatedByAgent } from '../../engine';
import { recordedHeld, recordedInputs } from '../../proxy/recording';
import { mkdirPrivate, PRIVATE_FILE_MODE } from '../../store/private';
import type { Origin } from '../../protocol';
import type { KeptMarker, KeptWholeRecord, MissedRecord, OwnResultRecord, TurnRecord } from './session';

/** Where the archive of a store lives: next to the store folder, like the proxy's `sessions/`. */
export function defaultArchiveDir(storeDir: string): string {
  return join(dirname(resolve(storeDir)), 'inspector-sessions');
}

export interface ArchiveHeader {
  v: 1;
  origin: string;
  name: string;
  title: string;
  detail: string;
  created: string;
  /** the transcript a replay was made from */
  path?: string;
  bytes?: number;
  /** the configuration the figures were computed under (a replay is re-run when it changed) */
  config?: string;
  /** the model the session's agent called (prices the session in the status bar before it is opened) */
  model?: string;
}

export interface ArchivedTurn {
  summary: TurnRecord['summary'];
  reductions: Reduction[];
  missed: MissedRecord[];
  readBacks?: number;
  own?: OwnResultRecord[];
  /** tool call inputs replaced by a marker (absent in files kept before they were) */
  inputs?: InputReduction[];
  /** the markers the turn's own decisions sent (API sessions; absent in files kept before they were) */
  markers?: KeptMarker[];
  /** the turn's new results over their cap sent whole, and why (absent in files kept before they were) */
  keptWhole?: KeptWholeRecord[];
  /** the turn's new results the agent had truncated itself (absent in files kept before they were) */
  truncatedByAgent?: TruncatedByAgent[];
  /** the results the turn sent that the agent had saved itself (absent in files kept before they were) */
  savedByAgent?: SavedByAgent[];
  /** every result the turn's request sent whole, by the clear stage's reason (absent in files kept before they were) */
  held?: HeldGroup[];
}

export interface ArchivedSession {
  header: ArchiveHeader;
  turns: ArchivedTurn[];
  file: string;
  modified: string;
}

/** A file name for any session name: readable when it is safe, hashed when it is not. */
export function fileNameFor(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80);
  return `${safe}-${createHash('sha256').update(name).digest('hex').slice(0, 12)}.jsonl`;
}

export class SessionArchive {
  /** files read, by path, with the size and time they had: a listing re-reads only what changed */
  private readonly cache = new Map<string, { mtimeMs: number; size: number; session: ArchivedSession | undefined }>();

  constructor(
    private readonly dir: () => string,
    private readonly log?: (line: string) => void,
  ) {}

  fileOf(origin: Origin | string, name: string): string {
    return join(this.dir(), origin, fileNameFor(name));
  }

  /** Starts (or restarts) a session that will grow turn by turn. */
  begin(header: ArchiveHeader): void {
    this.writeAll(header, []);
  }

  /** Adds one turn to a session started with `begin` (one write: a crash tears at most this line). */
  append(origin: string, name: string, turn: ArchivedTurn): void {
    const file = this.fileOf(origin, name);
    try {
      fs.appendFileSync(file, JSON.stringify(turn) + '\n', { mode: PRIVATE_FILE_MODE });
    } catch (e) {
      this.log?.(`inspector: could not keep a turn of ${origin} session ${name}: ${String(e)}`);
    }
  }

  /** Writes a whole session at once (temp file, then rename). */
  writeAll(header: ArchiveHeader, turns: readonly ArchivedTurn[]): void {
    const file = this.fileOf(header.origin, header.name);
    try {
      mkdirPrivate(dirname(file));
      const tmp = `${file}.${process.pid}.tmp`;
      // owner-only, like the store: turns name handles, tools and the identifiers the agent used
      fs.writeFileSync(tmp, [header, ...turns].map((x) => JSON.stringify(x)).join('\n') + '\n', { mode: PRIVATE_FILE_MODE });
      fs.renameSync(tmp, file);
    } catch (e) {
      this.log?.(`inspector: could not keep ${header.origin} session ${header.name}: ${String(e)}`);
    }
  }

  /** Every kept session of one origin (damaged lines are skipped, a damaged header skips the file). */
  read(origin: string): ArchivedSession[] {
    const folder = join(this.dir(), origin);
    let names: string[];
    try {
      names = fs.readdirSync(folder).filter((n) => n.endsWith('.jsonl'));
    } catch {
      return [];
    }
    const out: ArchivedSession[] = [];
    for (const n of names) {
      const file = join(folder, n);
      let st: fs.Stats;
      try {
        st = fs.statSync(file);
      } catch {
        continue;
      }
      const hit = this.cache.get(file);
      if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) {
        if (hit.session) out.push(hit.session);
        continue;
      }
      const session = this.readFile(file, origin, st);
      this.cache.set(file, { mtimeMs: st.mtimeMs, size: st.size, session });
      if (session) out.push(session);
    }
    return out;
  }

  private readFile(file: string, origin: string, st: fs.Stats): ArchivedSession | undefined {
    try {
      const lines = fs.readFileSync(file, 'utf8').split('\n');
      const header = JSON.parse(lines[0] ?? '') as ArchiveHeader;
      if (header?.v !== 1 || header.origin !== origin || typeof header.name !== 'string') return undefined;
      const turns: ArchivedTurn[] = [];
      for (const line of lines.slice(1)) {
        if (!line.trim()) continue;
        try {
          const t = JSON.parse(line) as ArchivedTurn;
          if (t && typeof t.summary === 'object' && Array.isArray(t.reductions)) {
            // a damaged inputs list or held group is dropped, not the turn
            const { inputs: rawInputs, markers: rawMarkers, held: rawHeld, ...rest } = t;
            const inputs = recordedInputs(rawInputs);
            const markers = Array.isArray(rawMarkers)
              ? rawMarkers.filter((m) => typeof m?.text === 'string' && typeof m.callId === 'string' && typeof m.handle === 'string')
              : [];
            const held = recordedHeld(rawHeld);
            turns.push({
              ...rest,
              summary: { ...t.summary, index: turns.length },
              ...(inputs ? { inputs } : {}),
              ...(markers.length ? { markers } : {}),
              ...(held ? { held } : {}),
            });
          }
        } catch {
          /* a torn last line */
        }
      }
      return { header, turns, file, modified: st.mtime.toISOString() };
    } catch {
      return undefined; // unreadable: skipped
    }
  }

  remove(origin: string, name: string): void {
    fs.rmSync(this.fileOf(origin, name), { force: true });
  }

  /** Removes sessions not written for `maxAgeDays` (and stale temp files); returns how many. */
  prune(maxAgeDays: number, now = Date.now()): number {
    let removed = 0;
    let origins: string[];
    try {
      origins = fs.readdirSync(this.dir());
    } catch {
      return 0;
    }
    const cutoff = now - maxAgeDays * 24 * 60 * 60 * 1000;
    for (const o of origins) {
      let names: string[];
      try {
        names = fs.readdirSync(join(this.dir(), o));
      } catch {
        continue;
      }
      for (const n of names) {
        const file = join(this.dir(), o, n);
        try {
          if (fs.statSync(file).mtimeMs < cutoff) {
            fs.rmSync(file, { force: true });
            removed++;
          }
        } catch {
          /* gone already */
        }
      }
    }
    return removed;
  }
}
