/**
 * Per-kind previews: the preview of a command's output chosen by what the output is.
 *
 * Why: a generic preview (head, lines that look important, tail) keeps what a test log or a file
 * happens to put there; agents come back for specific things per kind of output: the failing test
 * and its location, the diagnostic and its code, the files a search hit, the definitions of a file
 * read. The kind is found from the call (tool name and command, `hint`) first, then from the output;
 * an agent's envelope (`Exit code 1`, `<returncode>`, Codex's JSON) is taken off first and its exit
 * status kept. An output no kind claims, or one whose kind keeps nothing, gets the generic preview
 * (../preview.ts): `kindPreview` returns null then.
 *
 * Every preview here is within its budget (select.ts computes lengths exactly) and a pure function
 * of (text, budget, hint), so a result keeps its preview from call to call.
 */
import { buildKind } from './build';
import { mainProgram } from './command';
import { diagnosticsKind } from './diagnostics';
import { unwrap } from './envelope';
import { fileReadKind } from './file-read';
import { gitKind } from './git';
import type { OutputKind, OutputKindName, PreviewHint } from './kind';
import { listingKind } from './listing';
import { searchKind } from './search';
import { testKind } from './tests';

export { OUTPUT_KINDS, type OutputKindName, type PreviewHint } from './kind';
export { hintForResult } from './hint';

/** Outputs longer than this get the generic preview: scanning every line of them costs more than it is worth. */
const KIND_PREVIEW_MAX_CHARS = 2_000_000;

/** Kinds in the order the command is matched against them (git before search: `git grep` is a search). */
const BY_COMMAND: readonly OutputKind[] = [gitKind, testKind, diagnosticsKind, searchKind, listingKind, buildKind, fileReadKind];
/** Kinds in the order the output is matched against them: the most specific signs first. */
const BY_OUTPUT: readonly OutputKind[] = [gitKind, testKind, diagnosticsKind, buildKind, searchKind, listingKind, fileReadKind];

function kindOf(lines: readonly string[], hint: PreviewHint | undefined): OutputKind | undefined {
  const tool = hint?.tool ?? '';
  const command = hint?.command ?? '';
  const program = mainProgram(command);
  let byCommand = BY_COMMAND.find((k) => k.byCommand(program, command, tool));
  // a build that printed compiler diagnostics is previewed as diagnostics
  if (byCommand === buildKind && diagnosticsKind.byOutput(lines)) byCommand = diagnosticsKind;
  return byCommand ?? BY_OUTPUT.find((k) => k.byOutput(lines));
}

/** The kind of an output (the bench and the inspector use it to group results). */
export function classifyOutput(text: string, hint?: PreviewHint): OutputKindName {
  if (text.length > KIND_PREVIEW_MAX_CHARS) return 'generic';
  return kindOf(unwrap(text).body.split('\n'), hint)?.name ?? 'generic';
}

/** The preview of `text` for its kind within `budget`, or null when the generic preview should be used. */
export function kindPreview(text: string, budget: number, hint?: PreviewHint): string | null {
  if (budget <= 0 || text.length <= budget || text.length > KIND_PREVIEW_MAX_CHARS) return null;
  const { lead, body } = unwrap(text);
  const lines = body.split('\n');
  const kind = kindOf(lines, hint);
  if (!kind) return null;
  const leadText = lead.map((l) => l + '\n').join('');
  if (leadText.length >= budget / 2) return null;
  const p = kind.preview(lines, budget - leadText.length);
  return p === null ? null : leadText + p;
}

/** Tools that fetch a page or document the agent asked for by its address. */
const FETCH_TOOLS = /^(webfetch|web_fetch|fetch|fetch_url|read_url|url_context)$/i;

/**
 * Whether a call asked to read something in order to work with it: a file (a read tool, `cat`,
 * `sed -n`, `head`, a view), a commit (`git show`) or a fetched page. The offload stage leaves such
 * results whole on arrival (`offload.keepReads`): the agent requested them for its next step.
 */
export function requestedRead(hint: PreviewHint): boolean {
  const command = hint.command ?? '';
  const program = mainProgram(command);
  if (fileReadKind.byCommand(program, command, hint.tool ?? '')) return true;
  if (/^git( show)?$/.test(program) && /\bgit\s+(-C\s+\S+\s+)?show\b/.test(command)) return true;
  return FETCH_TOOLS.test(hint.tool ?? '');
}
