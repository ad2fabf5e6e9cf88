/**
 * File reads (an agent's Read/view/open tool, `cat`, `head`, `sed -n`, `nl`): the agent reads a
 * file to find where to work. The preview keeps the head (imports, the module comment, SWE-agent's
 * `[File: …]` line), then every top-level definition and signature (classes, functions, types;
 * Markdown headings), then nested ones, then the tail. Line-number prefixes (Claude Code's `  12→`,
 * `cat -n`, SWE-agent's `12:`) stay, so the agent can read back the region it needs by number.
 */
import { DETECT_LINES, shareMatching, type OutputKind } from './kind';
import { headIndices, selectLines, tailIndices } from './select';

const PROGRAMS = /^(cat|head|tail|sed|nl|less|more|bat|batcat|get-content|view|open|goto|scroll_up|scroll_down)$/;
const TOOLS =
  /^(read|read_file|readfile|view|view_file|open|open_file|goto|scroll_up|scroll_down|notebookread|get_file_contents|read_text_file|read_files)$/i;

/** Line-number prefixes of file views: Claude Code (`  12→`), `cat -n` (`  12\t`), SWE-agent (`12:`). */
const NUMBERED = /^\s*\d+(→|\t)|^\d+:/;
/** A definition or signature in source code, after any line-number prefix. */
const DEFINITION =
  /^\s*(export\s+)?(default\s+)?(declare\s+)?(abstract\s+)?(async\s+)?(def|class|function\*?|interface|type\s+\w+|enum|struct|impl|trait|fn|func|module|namespace|pub(\([\w:]+\))?\s+(async\s+)?(fn|struct|enum|trait|mod|type|const)|(const|let|var)\s+\w+\s*=\s*(async\s*)?(\(|function)|(public|private|protected|internal)\s+([\w<>,\s]+\s+)?\w+\s*\(|@\w+|CREATE\s+(TABLE|FUNCTION|VIEW))\b/;
/** A Markdown heading: the definitions of a document (used when the text has no code definitions). */
const HEADING = /^#{1,6} \S/;
/** Source-like text without a command to say so: at least this many definitions, and this share of lines. */
const MIN_DEFINITIONS = 3;
const MIN_DEFINITION_SHARE = 0.03;

function content(line: string): string {
  return line.replace(/^\s*\d+(→|\t)|^\d+:/, '');
}

export const fileReadKind: OutputKind = {
  name: 'file',
  byCommand: (program, command, tool) => PROGRAMS.test(program) || TOOLS.test(tool) || (/editor/i.test(tool) && /^view\b/.test(command)),
  byOutput: (lines) => {
    if (/^\[File: /.test(lines[0] ?? '') || shareMatching(lines, NUMBERED).share >= 0.8) return true;
    const defs = shareMatching(lines.slice(0, DETECT_LINES).map(content), DEFINITION);
    return defs.count >= MIN_DEFINITIONS && defs.share >= MIN_DEFINITION_SHARE;
  },
  preview(lines, budget) {
    const n = lines.length;
    const texts = lines.map(content);
    const code = texts.some((c) => DEFINITION.test(c));
    const top: number[] = [],
      nested: number[] = [];
    for (let i = 0; i < n; i++) {
      const c = texts[i]!;
      if (code ? !DEFINITION.test(c) : !HEADING.test(c)) continue;
      (/^\S/.test(c) ? top : nested).push(i);
    }
    return selectLines(
      lines,
      [...headIndices(n, 6), ...tailIndices(n, 1), ...top, ...nested, ...headIndices(n, 20), ...tailIndices(n, 5)],
      budget,
    );
  },
};
