/**
 * The sessions under a folder: what `spillway replay DIR` replays. Every file below it, at any depth,
 * whose name and first bytes a transcript reader recognises (readers/detect.ts), and every JSON
 * document too long to classify from its head (a trajectory whose first 64 KB is one long string):
 * the reader decides those when it parses them whole, and the caller counts one it refuses
 * (`unknown-format`) as skipped. Markdown (the corpus's README and sources tables) and hidden files
 * and folders are passed over without being opened; other files in no known format are counted.
 * Symbolic links count as what they point to (a folder of links to sessions kept elsewhere is
 * replayed), each folder and file taken once; a broken link is passed over.
 * A Copilot chat session VS Code keeps twice, as its older `<id>.json` and the `<id>.jsonl` log it
 * was converted to, is replayed once, from the log (as the editor's Browse Agent Sessions lists it).
 */
import { closeSync, openSync, readdirSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { join, relative } from 'node:path';
import { SpillwayError } from '../engine/types';
import { supersededByChatLog } from './readers/copilot-chat';
import { DETECT_HEAD_BYTES, sniffTranscript } from './readers/detect';

export interface SessionFiles {
  /** absolute paths, in name order (folders walked in name order too) */
  files: string[];
  /** files that were opened and recognised as no transcript format */
  skipped: string[];
  /** Copilot chat `.json` files left out for the `.jsonl` log of the same session beside them */
  superseded: string[];
}

function head(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const buf = new Uint8Array(DETECT_HEAD_BYTES);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/** What a symbolic link points to, or undefined when it points nowhere. */
function linkTarget(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** The transcript files under `dir` (see the module comment). */
export function sessionFilesIn(dir: string): SessionFiles {
  const out: SessionFiles = { files: [], skipped: [], superseded: [] };
  const copilotChats = new Set<string>();
  // folders walked and files taken, by their real path: a symbolic link back up the tree is not
  // walked twice, and a session reached twice (itself and a link to it) is replayed once
  const walked = new Set<string>();
  const taken = new Set<string>();
  const walk = (d: string) => {
    const real = realpathSync(d);
    if (walked.has(real)) return;
    walked.add(real);
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.name.startsWith('.')) continue;
      const path = join(d, e.name);
      // a symbolic link counts as what it points to (sessions linked into a folder are replayed); a broken one is passed over
      const kind = e.isSymbolicLink() ? linkTarget(path) : e;
      if (kind?.isDirectory()) walk(path);
      else if (kind?.isFile() && !/\.md$/i.test(e.name) && !/^readme/i.test(e.name)) {
        const real = realpathSync(path);
        if (taken.has(real)) continue;
        taken.add(real);
        try {
          const sniff = sniffTranscript(path, head(path));
          if (sniff.format === 'copilot-chat') copilotChats.add(path);
          if (sniff.format !== undefined || sniff.kind === 'document') out.files.push(path);
          else out.skipped.push(relative(dir, path));
        } catch (err) {
          if (!(err instanceof SpillwayError)) throw err;
          out.skipped.push(relative(dir, path));
        }
      }
    }
  };
  walk(dir);
  const older = (path: string) => copilotChats.has(path) && supersededByChatLog(path, (log) => copilotChats.has(log));
  out.superseded = out.files.filter(older).map((path) => relative(dir, path));
  if (out.superseded.length > 0) out.files = out.files.filter((path) => !older(path));
  return out;
}
