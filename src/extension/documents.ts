/**
 * The read-only `spillway:` file system: stored outputs as ordinary editor tabs (search, folding,
 * copy all work because the editor sees a normal read-only file).
 *
 * The handle in the URI is checked for its exact shape before the store is asked, so a URI with
 * `..` or extra slashes can never name a path on disk. A missing, malformed or damaged output fails
 * with a FileSystemError that carries the reason, and the user is told in a message: the editor never
 * opens an empty tab.
 */
import * as vscode from 'vscode';
import { inputDocument, parseDocumentPath, readToolText } from './pure/documents';
import { errorCode, errorText, type SpillwayHost } from './host';
import { toMillis } from './pure/format';

/** The same failure is reported once per this many milliseconds (the editor stats a file repeatedly). */
const REPEAT_NOTICE_MS = 5_000;
/** Claude Code's file-reading tool, whose results number every line (`    12→text`). */
const CLAUDE_CODE_READ = 'Read';

export class StoredOutputFileSystem implements vscode.FileSystemProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  private readonly lastNotice = new Map<string, number>();

  constructor(private readonly host: SpillwayHost) {
    host.onDidChangeStore(() =>
      this.emitter.fire([{ type: vscode.FileChangeType.Changed, uri: vscode.Uri.from({ scheme: 'spillway', path: '/' }) }]),
    );
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    if (uri.path === '/' || uri.path === '') {
      return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0, permissions: vscode.FilePermission.Readonly };
    }
    const { handle, projected, isDir, marker } = this.resolve(uri);
    if (isDir) return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0, permissions: vscode.FilePermission.Readonly };
    try {
      if (projected) {
        const m = this.projectedMarker(handle, marker);
        const t = toMillis(m.time) ?? 0;
        return {
          type: vscode.FileType.File,
          ctime: t,
          mtime: t,
          size: Buffer.byteLength(m.text, 'utf8'),
          permissions: vscode.FilePermission.Readonly,
        };
      }
      const meta = this.host.store.meta(handle);
      // an output without a readable index entry is still served (the store checks it against its handle);
      // a Read result is shown without its line numbers and a file input as text, so their size is that of the text shown
      const shownAsStored = meta && meta.tool !== CLAUDE_CODE_READ && !this.isInput(handle);
      const size = shownAsStored ? meta.bytes : Buffer.byteLength(this.originalText(handle), 'utf8');
      const ctime = toMillis(meta?.time) ?? 0;
      const mtime = toMillis(meta?.used) ?? ctime;
      return { type: vscode.FileType.File, ctime, mtime, size, permissions: vscode.FilePermission.Readonly };
    } catch (e) {
      throw this.fail(uri, handle, e);
    }
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const { handle, projected, isDir, marker } = this.resolve(uri);
    if (isDir) throw vscode.FileSystemError.FileIsADirectory(uri);
    try {
      const text = projected ? this.projectedMarker(handle, marker).text : this.originalText(handle);
      return Buffer.from(text, 'utf8');
    } catch (e) {
      throw this.fail(uri, handle, e);
    }
  }

  readDirectory(uri: vscode.Uri): [string, vscode.FileType][] {
    if (uri.path === '/' || uri.path === '') {
      return this.host.store.list().map((e) => [e.handle, vscode.FileType.Directory]);
    }
    const { handle, projected, marker } = this.resolve(uri);
    const path = this.host.documentUri(handle, projected, marker?.slice(2)).path.split('/');
    const depth = uri.path.replace(/\/$/, '').split('/').length;
    const name = path[depth] ?? 'output.log';
    return [[name, depth === path.length - 1 ? vscode.FileType.File : vscode.FileType.Directory]];
  }

  private resolve(uri: vscode.Uri): { handle: string; projected: boolean; isDir: boolean; marker?: string } {
    const parsed = parseDocumentPath(uri.path);
    if (!parsed.ok) {
      const message = `Spillway cannot open ${uri.toString(true)}: ${parsed.reason}.`;
      this.report(uri, 'error', message);
      throw vscode.FileSystemError.FileNotFound(message);
    }
    return { handle: parsed.handle, projected: parsed.projected, isDir: parsed.isDir, ...(parsed.marker ? { marker: parsed.marker } : {}) };
  }

  /** A file input (what the agent wrote to a file), not a tool result. */
  private isInput(handle: string): boolean {
    return this.host.record(handle)?.input ?? this.host.store.meta(handle)?.stage === 'input';
  }

  /**
   * The stored output as its document shows it: a Claude Code Read at the file's own line numbers, a
   * file input as the text it wrote (a heredoc's command, a Write's content), else as stored.
   */
  private originalText(handle: string): string {
    const text = this.host.store.get(handle);
    if (this.isInput(handle)) return inputDocument(text)?.text ?? text;
    const tool = this.host.record(handle)?.tool ?? this.host.store.meta(handle)?.tool;
    return (tool === CLAUDE_CODE_READ && readToolText(text)) || text;
  }

  /** The marker a projected document names (`m-<id>`), else the output's newest. */
  private projectedMarker(handle: string, segment: string | undefined) {
    const id = segment?.slice(2);
    const m = this.host.marker(handle, id ? { id } : undefined);
    if (!m || (id && m.id !== id)) {
      const which = id ? `the marker ${id} of ${handle}` : `a projection of ${handle}`;
      throw Object.assign(new Error(`${which} was not recorded in this workspace`), { code: 'not-found' });
    }
    return m;
  }

  /** Turns a store error into the FileSystemError the editor shows, and tells the user once. */
  private fail(uri: vscode.Uri, handle: string, e: unknown): vscode.FileSystemError {
    const code = errorCode(e);
    let message: string;
    let err: (m: string) => vscode.FileSystemError;
    if (code === 'not-found') {
      message = `Spillway has no stored output ${handle} (it may have been pruned, cleared, or stored in another workspace): ${errorText(e)}`;
      err = vscode.FileSystemError.FileNotFound;
    } else if (code === 'bad-handle') {
      message = `Spillway cannot open ${uri.toString(true)}: ${errorText(e)}`;
      err = vscode.FileSystemError.FileNotFound;
    } else if (code === 'corrupt') {
      message = `Spillway's stored output ${handle} was changed on disk after it was stored and no longer matches its hash, so it is not shown: ${errorText(e)}`;
      err = vscode.FileSystemError.Unavailable;
    } else {
      message = `Spillway could not read the stored output ${handle}: ${errorText(e)}`;
      err = vscode.FileSystemError.Unavailable;
    }
    this.report(uri, 'error', message);
    return err(message);
  }

  private report(uri: vscode.Uri, level: 'error', message: string): void {
    const key = `${uri.toString()}\n${message}`;
    const now = Date.now();
    if ((this.lastNotice.get(key) ?? 0) + REPEAT_NOTICE_MS > now) return;
    this.lastNotice.set(key, now);
    this.host.log.error(message);
    this.host.notify(level, message);
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  writeFile(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  delete(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}
