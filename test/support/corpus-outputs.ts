/**
 * Real tool outputs from the corpus (test/fixtures/sessions), with the hint their call gives, for
 * the preview tests: a preview is judged on what agents really printed, not on made-up logs.
 */
import { join } from 'node:path';
import { sessionResults, type SessionResult } from '../../bench/preview-kinds';
import { readTranscript } from '../../src/replay/readers';
import { CORPUS } from './corpus';

const cache = new Map<string, Promise<SessionResult[]>>();

/** Every tool result of the corpus session at `path` (relative to the corpus). */
function resultsOf(path: string): Promise<SessionResult[]> {
  let p = cache.get(path);
  if (!p) cache.set(path, (p = readTranscript(join(CORPUS, path)).then(sessionResults)));
  return p;
}

/**
 * The first result of session `path` whose command matches `command` and whose text satisfies
 * `text`; throws, naming what was looked for, when there is none (the corpus changed).
 */
export async function corpusOutput(path: string, command: RegExp, text: (t: string) => boolean = () => true): Promise<SessionResult> {
  const found = (await resultsOf(path)).find((r) => command.test(r.hint.command ?? '') && text(r.text));
  if (!found) throw new Error(`no result of a command matching ${command} in ${path}`);
  return found;
}

/** The first result of session `path` from tool `tool` whose text satisfies `text`. */
export async function corpusToolOutput(path: string, tool: string, text: (t: string) => boolean): Promise<SessionResult> {
  const found = (await resultsOf(path)).find((r) => r.tool === tool && text(r.text));
  if (!found) throw new Error(`no ${tool} result in ${path} that fits`);
  return found;
}
