/**
 * Markers: the text that replaces a reduced tool result.
 *
 * A marker is a bounded header (tool, original size in chars, lines and tokens, the handle and how
 * to read the rest) followed by the preview. Every style carries the handle and is recognised on
 * sight by `recogniseMarker`, which is what makes projection idempotent: a marker is never reduced
 * again. The header never exceeds HEADER_BUDGET characters, so a marker is at most the preview plus
 * that budget, however long tool names get.
 *
 * A marker names no file: the handle, with `spillway read` or Spillway's MCP read tool, is the way
 * back. The store's path depends on where the store lives (a workspace's storage, `--store DIR`), and
 * a path in the marker made the same session cost different tokens, and take different decisions,
 * from one store to another.
 */
import type { MarkerStyle } from './config';
import { HANDLE_IN_TEXT } from './handle';
import type { StageName } from './types';
import { formatInt as grouped } from './format-number';

/** Most characters a marker adds around its preview. Room for sizes, handle and read hint. */
export const HEADER_BUDGET = 480;
/** clark_agent's MARKER_BUDGET_CHARS: its marker "must not itself be a budget problem". */
const CLARK_MARKER_BUDGET = 256;
/** Longest tool name shown in a header; longer names are cut with an ellipsis. */
const MAX_TOOL_NAME = 64;

/**
 * What a marker may add beyond its preview and HEADER_BUDGET: the trimmer style wraps its preview
 * in "\n" and "...", the others at most a "\n" between header and preview.
 */
const MARKER_SLACK = 4;

/**
 * The longest text accepted as an existing marker when previews are `previewChars` long: anything
 * longer is not a marker this engine could have written, whatever it starts with, and goes through
 * the stages like any other output (a forged or pasted marker cannot smuggle a long output past them).
 */
export function markerBound(previewChars: number): number {
  return previewChars + HEADER_BUDGET + MARKER_SLACK;
}

/**
 * The earlier output a reference points at. `changes`: the output is a repeat with changes
 * (../repeats.ts), and the preview is the whole of it as ranges of that output and the lines that differ.
 */
export interface SameAs {
  tool: string;
  callId: string;
  changes?: boolean;
}

export interface MarkerInfo {
  style: MarkerStyle;
  language: 'en' | 'zh';
  stage: StageName;
  tool: string;
  callId: string;
  handle: string;
  chars: number;
  bytes: number;
  lines: number;
  tokens: number;
  tokensEstimated: boolean;
  /**
   * a dedupe reference: the earlier result this one repeats (offload.ts). The spillway style then says
   * so in one line and carries no preview (the earlier result, verbatim above, is what the model
   * reads); the seed styles, which have no wording for it, get a note as their preview
   */
  sameAs?: SameAs;
  /**
   * Spillway's MCP read tool as the agent names it (read-tool.ts), when its requests offer it: the
   * marker then says to call it with the handle instead of running `spillway read`
   */
  readTool?: string;
  preview: string;
  /** chars (or bytes, with capUnit bytes) the preview leaves out */
  omitted: number;
  unit: 'chars' | 'bytes';
  cap?: number;
}

function toolName(name: string): string {
  return name.length > MAX_TOOL_NAME ? name.slice(0, MAX_TOOL_NAME - 1) + '…' : name;
}

const VERB_EN: Record<StageName, string> = { offload: 'offloaded', window: 'trimmed', budget: 'clipped', clear: 'cleared' };
const VERB_ZH: Record<StageName, string> = { offload: '已转存', window: '已裁剪', budget: '已截断', clear: '已清除' };

/** Renders the marker; the caller checks it is shorter than the original, in characters and tokens. */
export function renderMarker(m: MarkerInfo): string {
  // the seed systems print plain integers; our own header groups thousands for reading
  const fmt = m.style === 'spillway' || m.style === 'eino' ? grouped : (n: number) => String(n);
  const tool = toolName(m.tool);
  const tokens = `${m.tokensEstimated ? '~' : ''}${fmt(m.tokens)}`;
  // the way back: the agent's MCP read tool when it has one, else the command
  const read = m.readTool ? `${m.readTool} with handle ${m.handle}` : `spillway read ${m.handle}`;
  const preview = m.preview;
  const withBody = (header: string) => (preview ? `${header}\n${preview}` : header);
  const fit = (full: string, short: string) => (full.length <= HEADER_BUDGET ? full : short.slice(0, HEADER_BUDGET));
  switch (m.style) {
    case 'spillway': {
      const zh = m.language === 'zh';
      if (m.sameAs?.changes) {
        // mostly a repeat of an earlier result the model still has verbatim: one line, then the
        // output as that result's line ranges and the lines that differ (nothing left out)
        const same = toolName(m.sameAs.tool);
        const full = zh
          ? `[spillway: ${tool} 输出大部分与上方调用 ${m.sameAs.callId} 的 ${same} 输出相同；以下为其行号范围与不同的行 · ${fmt(m.chars)} 字符 · ${tokens} tokens · 读取：${read}]`
          : `[spillway: ${tool} output repeats the ${same} output of call ${m.sameAs.callId} above; below, its line ranges and the lines that differ · ${fmt(m.chars)} chars · ${tokens} tokens · read it back: ${read}]`;
        const short = zh
          ? `[spillway: ${tool} 输出大部分与上方一次输出相同；以下为其行号范围与不同的行 · 读取：${read}]`
          : `[spillway: ${tool} output repeats an output above; below, its line ranges and the lines that differ · read it back: ${read}]`;
        return withBody(fit(full, short));
      }
      if (m.sameAs) {
        // a repeat of an earlier result, which the model still has verbatim: one line, no preview
        const same = toolName(m.sameAs.tool);
        const full = zh
          ? `[spillway: ${tool} 输出与上方调用 ${m.sameAs.callId} 的 ${same} 输出相同 · ${fmt(m.chars)} 字符 · ${tokens} tokens · 读取：${read}]`
          : `[spillway: ${tool} output identical to the ${same} output of call ${m.sameAs.callId} above · ${fmt(m.chars)} chars · ${tokens} tokens · read it back: ${read}]`;
        const short = zh
          ? `[spillway: ${tool} 输出与上方一次输出相同 · ${fmt(m.chars)} 字符 · ${tokens} tokens · 读取：${read}]`
          : `[spillway: ${tool} output identical to an output above · ${fmt(m.chars)} chars · ${tokens} tokens · read it back: ${read}]`;
        return fit(full, short);
      }
      if (m.stage === 'clear' && !preview) {
        // cleared results pile up over a long session: one short line each, handle and how to read
        return zh
          ? `[spillway: ${tool} 输出已清除 · ${fmt(m.chars)} 字符 · ${tokens} tokens · 读取：${read}]`
          : `[spillway: ${tool} output cleared · ${fmt(m.chars)} chars · ${tokens} tokens · read it back: ${read}]`;
      }
      const line1 = zh
        ? `[spillway: ${tool} 输出${VERB_ZH[m.stage]} · ${fmt(m.chars)} 字符 · ${fmt(m.lines)} 行 · ${tokens} tokens · 句柄 ${m.handle}]`
        : `[spillway: ${tool} output ${VERB_EN[m.stage]} · ${fmt(m.chars)} chars · ${fmt(m.lines)} lines · ${tokens} tokens · handle ${m.handle}]`;
      // "preview below" only when a preview follows
      const shown = preview
        ? zh
          ? `以下为预览，省略 ${fmt(m.omitted)} ${m.unit === 'bytes' ? '字节' : '字符'}`
          : `preview below, ${fmt(m.omitted)} ${m.unit} left out`
        : '';
      const how = m.readTool
        ? zh
          ? `调用 \`${m.readTool}\`，handle ${m.handle}（可加 lines "A:B"、grep 正则）`
          : `call \`${m.readTool}\` with handle ${m.handle} (and lines "A:B" or grep "REGEX")`
        : zh
          ? `\`${read}\`（--lines A:B、--grep 正则）`
          : `\`${read}\` (--lines A:B, --grep REGEX)`;
      const hint = zh ? `[${shown ? shown + '；' : ''}读取全部或部分：${how}]` : `[${shown ? shown + '; ' : ''}read all or part: ${how}]`;
      const header = `${line1}\n${hint}`;
      return withBody(fit(header, header));
    }
    case 'trimmer': {
      // OpenAI Agents' ToolOutputTrimmer wording, plus the handle that makes it recoverable
      const header = `[Trimmed: ${tool} output — ${fmt(m.chars)} chars → ${fmt(preview.length)} char preview; full output: ${read}]`;
      return `${fit(header, header)}\n${preview}...`;
    }
    case 'clark': {
      // clark_agent's ToolResultBudget wording (marker only), with the handle instead of "rerun"
      // held to clark's own MARKER_BUDGET_CHARS (256), not HEADER_BUDGET: a long tool_call_id drops out
      const body = `[tool_result_budget: clipped ${tool} result of ${fmt(m.chars)} chars to ${fmt(m.cap ?? 0)} cap; tool_call_id=${m.callId}; read the original with ${read}]`;
      const short = `[tool_result_budget: clipped ${tool} result of ${fmt(m.chars)} chars; read the original with ${read}]`;
      return withBody(body.length <= CLARK_MARKER_BUDGET ? body : short.slice(0, CLARK_MARKER_BUDGET));
    }
    case 'ai-agent': {
      // ai-agent's handle message: bytes, lines and tokens, then how to extract
      const options = m.readTool ? 'grep, lines "A:B"' : '--grep PATTERN, --lines A:B';
      const header = `Tool output is too large (${fmt(m.bytes)} bytes, ${fmt(m.lines)} lines, ${tokens} tokens).\nRead it with \`${read}\` (${options}). Handle: ${m.handle}.`;
      return withBody(fit(header, header));
    }
    case 'eino': {
      // Eino names the file it saved to; ours is named by its handle, wherever the store lives
      const zh = m.language === 'zh';
      const cleared = m.stage === 'clear';
      const where = m.handle;
      const header = zh
        ? cleared
          ? `<工具 ${tool} 的结果已清除，完整内容保存在 ${where}，句柄 ${m.handle}，可用 ${read} 读取>`
          : `<工具 ${tool} 的输出过长已截断，完整内容保存在 ${where}，句柄 ${m.handle}，可用 ${read} 读取>`
        : cleared
          ? `<result of ${tool} cleared; the full content is saved at ${where} (handle ${m.handle}); read it with ${read}>`
          : `<output of ${tool} truncated; the full content is saved at ${where} (handle ${m.handle}); read it with ${read}>`;
      const short = zh
        ? `<工具 ${tool} 的输出${cleared ? '已清除' : '已截断'}，句柄 ${m.handle}，可用 ${read} 读取>`
        : `<output of ${tool} ${cleared ? 'cleared' : 'truncated'} (handle ${m.handle}); read it with ${read}>`;
      return withBody(fit(header, short));
    }
    case 'oracle': {
      // the offload-and-fetch pattern: preview, then the bytes left out and how to fetch them
      return `${preview} ...[+${fmt(m.omitted)} ${m.unit}. full output: ${read}]`;
    }
  }
}

const PREFIXES = [
  '[spillway: ',
  '[Trimmed: ',
  '[tool_result_budget: clipped ',
  'Tool output is too large (',
  '<output of ',
  '<result of ',
  '<工具 ',
];
/** The same prefixes as they may appear inside a JSON string (non-ASCII escaped, as Python does). */
const RAW_PREFIXES = [...PREFIXES, '<\\u5de5\\u5177 '];
const ORACLE_TAIL = new RegExp(
  String.raw`\.\.\.\[\+[\d,]+ (?:bytes|chars)\. full output: (?:spillway read |[\w.:/-]+ with handle )(${HANDLE_IN_TEXT.source})\]$`,
);

/**
 * The handle of a marker, or undefined when `text` is not one. Checks the start (every style but
 * oracle opens with a fixed prefix and names the handle in its header) and the end (oracle).
 */
export function recogniseMarker(text: string): string | undefined {
  if (PREFIXES.some((p) => text.startsWith(p))) {
    const m = HANDLE_IN_TEXT.exec(text.slice(0, HEADER_BUDGET + 16));
    if (m) return m[0];
  }
  const tail = ORACLE_TAIL.exec(text.slice(-160));
  return tail ? tail[1] : undefined;
}

/** The call a reference marker (`sameAs`) names in its first line, in either language. */
const SAME_AS_CALL = / output of call (\S+) above|上方调用 (\S+) 的/;

/**
 * The call id of the earlier output a reference marker points at (a projection projected again:
 * the clear stage keeps that output in use as it does for a reference it made itself), or undefined
 * when the marker names none (not a reference, or the short form without the call).
 */
export function referencedCall(marker: string): string | undefined {
  const firstLine = marker.slice(0, Math.min(marker.length, HEADER_BUDGET + 16)).split('\n', 1)[0]!;
  if (!firstLine.startsWith('[spillway: ')) return undefined;
  const m = SAME_AS_CALL.exec(firstLine);
  return m ? (m[1] ?? m[2]) : undefined;
}

/**
 * `recogniseMarker` on a string as it sits, still encoded, in JSON text (between the quotes at
 * `start` and `end - 1`), without decoding it: a marker's prefix, handle and oracle tail are plain
 * ASCII, so a long output is ruled out by looking at its first and last few hundred characters.
 */
export function recogniseRawMarker(json: string, start: number, end: number): string | undefined {
  const from = start + 1,
    to = end - 1;
  if (RAW_PREFIXES.some((p) => json.startsWith(p, from))) {
    const m = HANDLE_IN_TEXT.exec(json.slice(from, Math.min(to, from + HEADER_BUDGET * 2)));
    if (m) return m[0];
  }
  const tail = ORACLE_TAIL.exec(json.slice(Math.max(from, to - 200), to));
  return tail ? tail[1] : undefined;
}

/** How Claude Code wraps a tool result it saved to a file itself (outputs over about 30 kB). */
export const PERSISTED_OUTPUT_TAG = '<persisted-output>';
const PERSISTED_FILE = /(?:Full output|Tool result|Output) saved to: *([^\n]+?) *(?:\n|$)/;

/**
 * When `text` is a result Claude Code already reduced (`<persisted-output>` … `Full output saved to:
 * <file>` … `Preview (first 2KB)` …), the file it names ('' if none is named); else undefined. Such a
 * result is a preview plus the agent's own pointer to the full output: Spillway never reduces it again.
 */
export function recognisePersistedOutput(text: string): string | undefined {
  if (!text.startsWith(PERSISTED_OUTPUT_TAG)) return undefined;
  const m = PERSISTED_FILE.exec(text.slice(0, 4096));
  return m ? m[1]! : '';
}

/** How GitHub Copilot's CLI opens a tool output it saved itself (over 20 kB by default). */
export const COPILOT_SAVED_OPENING = 'Output too large to read at once (';
const COPILOT_SAVED = /^Output too large to read at once \([\d.,]+ ?[KMG]?B\)\. Saved to: *([^\n]+?) *(?:\n|$)/;

/**
 * When `text` is a result GitHub Copilot's CLI already saved (`Output too large to read at once (29.0
 * KB). Saved to: <file>`, advice on reading it, `Preview (first 500 chars):` and the preview), the
 * file it names; else undefined. Like Claude Code's persisted output, it is a preview plus the
 * agent's own pointer to the full output: Spillway never reduces it again.
 */
export function recogniseCopilotSaved(text: string): string | undefined {
  return COPILOT_SAVED.exec(text)?.[1];
}

/** How GitHub Copilot's chat in VS Code opens a tool output it wrote to a file itself (text over 8 KiB by default). */
export const COPILOT_CHAT_WRITTEN_OPENING = 'Large tool result (';
const COPILOT_CHAT_WRITTEN =
  /^Large tool result \(\d+KB\) written to file\. Use the [\w-]+ tool to access the content at: *([^\n]+?) *(?:\n|$)/;

/**
 * When `text` is a result Copilot's chat in VS Code already wrote to a file (`Large tool result (29KB)
 * written to file. Use the read_file tool to access the content at: <file>`, and for JSON the schema's
 * file), the file it names; else undefined. It is all the model sees of that output, with the agent's
 * own pointer to the whole: Spillway never reduces it again.
 */
export function recogniseCopilotChatWritten(text: string): string | undefined {
  return COPILOT_CHAT_WRITTEN.exec(text)?.[1];
}

/** How Gemini CLI wraps a tool output it masked itself (its tool output masking: large outputs in older turns). */
export const MASKED_OUTPUT_TAG = '<tool_output_masked>';
const MASKED_OUTPUT_END = '</tool_output_masked>';
/**
 * The file line of a masked output, right before the closing tag: `Output too large. Full output
 * available at: <file>` (Gemini CLI's ToolOutputMaskingService) or `[Tool … masked to preserve context
 * window. Full string saved to: <file>]` (its context pipeline's ToolMaskingProcessor).
 */
const MASKED_FILES = [
  /\nOutput too large\. Full output available at: *([^\n]+?) *\n<\/tool_output_masked>\s*$/,
  /Full string saved to: *([^\n]+?)\] *\n<\/tool_output_masked>\s*$/,
];

/**
 * When `text` is a result Gemini CLI already masked (`<tool_output_masked>` … a head and tail with
 * `[TRUNCATED]` or lines omitted … `Output too large. Full output available at: <file>` …
 * `</tool_output_masked>`), the file it names ('' if none is named); else undefined. Like Claude
 * Code's persisted output, it is a preview plus the agent's own pointer to the full output: Spillway
 * never reduces it again. Both tags must be there, at the start and the end, as Gemini CLI writes them.
 */
export function recogniseMaskedOutput(text: string): string | undefined {
  if (!text.startsWith(MASKED_OUTPUT_TAG) || !text.trimEnd().endsWith(MASKED_OUTPUT_END)) return undefined;
  const end = text.slice(-4096);
  for (const re of MASKED_FILES) {
    const m = re.exec(end);
    if (m) return m[1]!;
  }
  return '';
}
