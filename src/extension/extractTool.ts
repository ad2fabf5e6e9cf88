/**
 * `spillway_extract`: the language model tool that answers a question about a stored output
 * (src/extract) with the user's own model through `vscode.lm`, so an in-editor agent gets the
 * answer ("the failing tests with their first error line") instead of reading the whole output
 * back. A second tool rather than a mode of `spillway_read_output`: reading returns exact text and
 * costs nothing, extracting costs model calls and returns a model's answer, and the agent should
 * choose between them knowingly.
 *
 * The model: the one the tool's caller is using is not known to a tool, so it takes Copilot's
 * first model when there is one, else the first model any extension offers (Spillway's own
 * models included: they are the user's endpoints). None at all is a tool error that says what is
 * missing.
 */
import * as vscode from 'vscode';
import { errorText, type SpillwayHost } from './host';
import { extract, ExtractInput, type ExtractModel } from '../extract/extract';
import { LINE_BREAK } from '../engine/lines';

const EXTRACT_TOOL = 'spillway_extract';

async function userModel(token: vscode.CancellationToken): Promise<ExtractModel> {
  const models = [...(await vscode.lm.selectChatModels({ vendor: 'copilot' })), ...(await vscode.lm.selectChatModels())];
  const model = models[0];
  if (!model)
    throw new Error(
      `${EXTRACT_TOOL} needs a language model and VS Code offers none: sign in to GitHub Copilot, or add one with ` +
        'Spillway: Add Language Model…; spillway_read_output reads the output without one',
    );
  return {
    async ask({ system, user }) {
      const res = await model.sendRequest(
        [vscode.LanguageModelChatMessage.User([system, '', user].join(LINE_BREAK))],
        { justification: 'Spillway answers a question about a stored tool output with your model.' },
        token,
      );
      let text = '';
      for await (const part of res.text) text += part;
      return text;
    },
  };
}

export function registerExtractTool(host: SpillwayHost): vscode.Disposable {
  if (typeof vscode.lm?.registerTool !== 'function') return new vscode.Disposable(() => undefined);
  return vscode.lm.registerTool<unknown>(EXTRACT_TOOL, {
    prepareInvocation(options) {
      const i = options.input as { handle?: unknown; question?: unknown };
      return { invocationMessage: `Asking about Spillway output ${String(i?.handle)}: ${String(i?.question)}` };
    },
    async invoke(options, token) {
      const parsed = ExtractInput.safeParse(options.input);
      if (!parsed.success)
        throw new Error(`${EXTRACT_TOOL}: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'input'}: ${i.message}`).join('; ')}`);
      try {
        const answer = await extract(parsed.data, (h, o) => host.read(h, o), await userModel(token));
        host.log.info(`${EXTRACT_TOOL}: ${answer.handle} ${answer.mode}, ${answer.calls} model call(s), read ${answer.read}`);
        return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(answer.text)]);
      } catch (e) {
        host.log.warn(`${EXTRACT_TOOL}: ${parsed.data.handle}: ${errorText(e)}`);
        // thrown errors reach the model as the tool's answer
        throw new Error(`${EXTRACT_TOOL} could not answer about ${JSON.stringify(parsed.data.handle)}: ${errorText(e)}`, { cause: e });
      }
    },
  });
}
