/**
 * `spillway_read_output`: the language model tool that lets an in-editor agent (Copilot agent mode)
 * read what a marker points to. Answers are bounded (MAX_TOOL_ANSWER_CHARS) and always say which
 * part of how much they show, so the model knows whether to ask for more.
 */
import * as vscode from 'vscode';
import { boundedAnswer } from '../store/read';
import { errorText, type SpillwayHost } from './host';
import { READ_TOOL } from '../proxy/readLoop';

interface ReadToolInput {
  handle: string;
  lines?: string;
  grep?: string;
  context?: number;
  offset?: number;
  limit?: number;
}

export function registerReadTool(host: SpillwayHost): vscode.Disposable {
  if (typeof vscode.lm?.registerTool !== 'function') {
    host.log.warn('this VS Code has no language model tools API; spillway_read_output is not available');
    return new vscode.Disposable(() => undefined);
  }
  return vscode.lm.registerTool<ReadToolInput>(READ_TOOL, {
    prepareInvocation(options) {
      const part = options.input.lines ? ` lines ${options.input.lines}` : options.input.grep ? ` matching /${options.input.grep}/` : '';
      return { invocationMessage: `Reading Spillway output ${options.input.handle}${part}` };
    },
    invoke(options) {
      const { handle, ...rest } = options.input ?? ({} as ReadToolInput);
      const readOptions: Record<string, unknown> = {};
      for (const k of ['lines', 'grep', 'context', 'offset', 'limit'] as const) if (rest[k] !== undefined) readOptions[k] = rest[k];
      try {
        const result = host.read(String(handle), readOptions);
        host.log.info(`${READ_TOOL}: ${handle} ${JSON.stringify(readOptions)} → ${result.text.length} chars`);
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(boundedAnswer(result))]);
      } catch (e) {
        host.log.warn(`${READ_TOOL}: ${handle}: ${errorText(e)}`);
        // thrown errors reach the model as the tool's answer; say what to do instead
        throw new Error(`spillway_read_output could not read ${JSON.stringify(handle)}: ${errorText(e)}`, { cause: e });
      }
    },
  });
}
