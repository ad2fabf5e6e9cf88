/**
 * Outputs the agent truncated itself (src/engine/agent-truncation.ts): recognised in each agent's
 * wording (taken from the agents' code and the corpus's logs), reported for the results new in a
 * request, and still reduced like any other result.
 */
import { describe, expect, it } from 'vitest';
import { recogniseAgentTruncation } from '../../src/engine/agent-truncation';
import { createEngine, MemorySink } from '../../src/engine/engine';

const FILE = '/home/u/.gemini/tmp/4f2a9c/tool-outputs/session-8d1e/run_shell_command_run_shell_command-1764200000000-abc.txt';
const rows = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => `${tag} row ${String(i).padStart(7, '0')} of the build log, lorem ipsum`).join('\n');

/** As Gemini CLI's formatTruncatedToolOutput writes it: a fifth of the limit as head, the rest as tail. */
function geminiTruncated(whole: string, limit = 40_000): string {
  const head = whole.slice(0, limit * 0.2);
  const tail = whole.slice(-(limit - limit * 0.2));
  const omitted = whole.length - head.length - tail.length;
  return `Output too large. Showing first ${head.length.toLocaleString('en-US')} and last ${tail.length.toLocaleString('en-US')} characters. For full output see: ${FILE}\n${head}\n\n... [${omitted.toLocaleString('en-US')} characters omitted] ...\n\n${tail}`;
}

/** Codex's exec output as the corpus's 2025-12 rollout logs it (token truncation). */
const codexTokens = `Exit code: 124\nWall time: 10 seconds\nTotal output lines: 164404\nOutput:\nNow using node v22.20.0 (npm v10.9.3)\n${rows(40, 'chmod')}…7920051 tokens truncated…${rows(40, 'tail')}`;
/** Codex 0.171's exec output, as the agents suite saw it sent (character truncation). */
const codex171 = `Chunk ID: e484f9\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 7420\nOutput:\nWarning: truncated output (original token count: 7420)\nTotal output lines: 560\n\n${rows(90, 'step-21')} …19680 chars truncated… ${rows(90, 'tail')}`;
/** Codex's output as its 2025 releases logged it (line truncation), inside its JSON envelope. */
const codexLines = JSON.stringify({
  output: `Total output lines: 420\n\n${rows(128, 'head')}\n\n[... omitted 164 of 420 lines ...]\n\n${rows(128, 'tail')}`,
  metadata: { exit_code: 0, duration_seconds: 0.1 },
});
/** pi's bash tool keeps the tail and names its log; its read tool keeps the head (the corpus's pi logs). */
const piBash = `${rows(80, 'tail')}\n\n[Showing lines 446-1520 of 1520 (50.0KB limit). Full output: /var/folders/49/l4171l3n219_xwq30fmyzr8w0000gn/T/pi-bash-e5a84f2117a989ec.log]`;
const piRead = `${rows(80, 'head')}\n\n[Showing lines 1-1603 of 2377 (50.0KB limit). Use offset=1604 to continue.]`;
/** mini-swe-agent's observation of a command whose output was too long (its default template). */
const miniSwe = `<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\nPlease try a different command that produces less output.\n</warning>\n<output_head>\n${rows(60, 'head')}\n</output_head>\n<elided_chars>\n10868 characters elided\n</elided_chars>\n<output_tail>\n${rows(60, 'tail')}\n</output_tail>`;

/** Qwen Code 0.24.4's shell result over its 30,000 characters, as the agents suite saw it sent. */
const QWEN_FILE = '/home/u/.qwen/tmp/527d3c79e3e4/run_shell_command_589647f52854.output';
const qwenHeadTail = `Command: seq 1 3000\nDirectory: (root)\nOutput: ${rows(26, 'head')}\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n...t ${rows(110, 'tail')}\nError: (none)\nExit Code: 0`;
const qwen = `Tool output was too large and has been truncated.\nThe full output has been saved to: ${QWEN_FILE}\nTo read the complete output, use the read_file tool with the absolute file path above.\nThe truncated output below shows the beginning and end of the content. The marker '... [CONTENT TRUNCATED] ...' indicates where content was removed.\n\nTruncated part of the output:\n${qwenHeadTail}`;
/** OpenCode 1.18.33: its bash tool keeps the tail (as the agents suite saw it sent); its other tools a head and a tail. */
const OPENCODE_FILE = '/home/u/.local/share/opencode/tool-output/tool_22d779b67001Jj3sBD3Q9Kq';
const opencodeBash = `...output truncated...\n\nFull output saved to: ${OPENCODE_FILE}\n\n${rows(120, 'tail')}`;
const opencodeTool = `${rows(60, 'head')}\n\n... output truncated; full content saved to ${OPENCODE_FILE} ...\n\n${rows(60, 'tail')}`;
const opencodeCompacted = `${rows(60, 'head')}\n[Tool output truncated for compaction: omitted 48210 chars]`;

/** Cline 3.0.65's run_commands result over its 8,000 characters, as the agents suite saw it sent: the gap is inside its JSON list. */
const clineCut = (n: number) =>
  JSON.stringify([
    { query: `seq 1 ${n}`, result: `${rows(70, 'head')}\n\n...[truncated 21714 chars]...\n\n${rows(70, 'tail')}\n`, success: true },
  ]);

describe('outputs the agent truncated itself', () => {
  it("are recognised in each agent's wording, with what it left out and where the whole is", () => {
    expect(recogniseAgentTruncation(geminiTruncated(rows(2600, 'big')))).toEqual({
      agent: 'gemini-cli',
      omitted: rows(2600, 'big').length - 40_000,
      unit: 'chars',
      file: FILE,
    });
    expect(recogniseAgentTruncation(codexTokens)).toEqual({ agent: 'codex', omitted: 7_920_051, unit: 'tokens', file: '' });
    expect(recogniseAgentTruncation(codex171)).toEqual({ agent: 'codex', omitted: 19_680, unit: 'chars', file: '' });
    expect(recogniseAgentTruncation(codexLines)).toEqual({ agent: 'codex', omitted: 164, unit: 'lines', file: '' });
    expect(recogniseAgentTruncation(piBash)).toEqual({
      agent: 'pi',
      omitted: 445,
      unit: 'lines',
      file: '/var/folders/49/l4171l3n219_xwq30fmyzr8w0000gn/T/pi-bash-e5a84f2117a989ec.log',
    });
    expect(recogniseAgentTruncation(piRead)).toEqual({ agent: 'pi', omitted: 774, unit: 'lines', file: '' });
    expect(recogniseAgentTruncation(piRead.replace('continue.]', 'continue]'))).toEqual({
      agent: 'pi',
      omitted: 774,
      unit: 'lines',
      file: '',
    });
    expect(recogniseAgentTruncation(miniSwe)).toEqual({ agent: 'mini-swe-agent', omitted: 10_868, unit: 'chars', file: '' });
  });

  it('are recognised without a count where the agent gives none (Qwen Code, OpenCode)', () => {
    expect(recogniseAgentTruncation(qwen)).toEqual({ agent: 'qwen-code', unit: 'chars', file: QWEN_FILE });
    // Qwen Code could not write its file: the head and the tail alone, and its note
    expect(recogniseAgentTruncation(`${qwenHeadTail}\n[Note: Could not save full output to file]`)).toEqual({
      agent: 'qwen-code',
      unit: 'chars',
      file: '',
    });
    expect(recogniseAgentTruncation(opencodeBash)).toEqual({ agent: 'opencode', unit: 'lines', file: OPENCODE_FILE });
    expect(recogniseAgentTruncation(opencodeTool)).toEqual({ agent: 'opencode', unit: 'lines', file: OPENCODE_FILE });
    // a head only: OpenCode puts its line last
    expect(recogniseAgentTruncation(opencodeTool.slice(0, opencodeTool.lastIndexOf(' ...') + 4))).toEqual({
      agent: 'opencode',
      unit: 'lines',
      file: OPENCODE_FILE,
    });
    expect(recogniseAgentTruncation(opencodeCompacted)).toEqual({ agent: 'opencode', omitted: 48_210, unit: 'chars', file: '' });
  });

  it("are recognised in Continue's CLI's wordings, at the start or the end of what it kept", () => {
    // its Bash tool keeps the tail (the agents suite saw the first one sent)
    expect(recogniseAgentTruncation(`(previous 2001 lines truncated)\n\n${rows(40, 'tail')}`)).toEqual({
      agent: 'continue',
      omitted: 2_001,
      unit: 'lines',
      file: '',
    });
    expect(recogniseAgentTruncation(`(previous 61234 characters truncated)\n\n${rows(40, 'tail')}`)).toEqual({
      agent: 'continue',
      omitted: 61_234,
      unit: 'chars',
      file: '',
    });
    expect(
      recogniseAgentTruncation(
        `(previous output truncated: 4000 lines and 1200 characters removed)\n\n${rows(40, 'tail')}\n\n(Note: output limit reduced due to 2 parallel tool calls. Single-tool limit: 50,000 characters or 1,000 lines.)`,
      ),
    ).toEqual({ agent: 'continue', omitted: 4_000, unit: 'lines', file: '' });
    // its read and diff tools keep the head, its search the first hundred matches
    expect(recogniseAgentTruncation(`${rows(40, 'head')}\n\n(3200 lines of file content truncated)`)).toEqual({
      agent: 'continue',
      omitted: 3_200,
      unit: 'lines',
      file: '',
    });
    expect(recogniseAgentTruncation(`${rows(40, 'head')}\n\n(18000 characters of diff truncated)`)).toMatchObject({
      omitted: 18_000,
      unit: 'chars',
    });
    expect(recogniseAgentTruncation(`Search results:\n\n${rows(100, 'hit')}\n\n[Results truncated: showing 100 of 412 matches]`)).toEqual({
      agent: 'continue',
      omitted: 312,
      unit: 'lines',
      file: '',
    });
    // out of place: a note inside the text, or the search line with nothing left out
    expect(recogniseAgentTruncation(`${rows(3, 'a')}\n(previous 20 lines truncated)\n\n${rows(3, 'b')}`)).toBeUndefined();
    expect(recogniseAgentTruncation(`${rows(3, 'a')}\n\n(3 lines truncated)\nmore`)).toBeUndefined();
    expect(recogniseAgentTruncation(`${rows(3, 'a')}\n\n[Results truncated: showing 100 of 100 matches]`)).toBeUndefined();
  });

  it("are recognised inside Cline's JSON list, every command's gap counted", () => {
    expect(recogniseAgentTruncation(clineCut(560))).toEqual({ agent: 'cline', omitted: 21_714, unit: 'chars', file: '' });
    const two = JSON.stringify([
      { query: 'a', result: `${rows(5, 'a')}\n\n...[truncated 100 chars]...\n\n${rows(5, 'a')}`, success: true },
      {
        query: 'b',
        result: `${rows(5, 'b')}\n\n...[truncated 250 chars to fit provider request budget]...\n\n${rows(5, 'b')}`,
        success: true,
      },
    ]);
    expect(recogniseAgentTruncation(two)).toEqual({ agent: 'cline', omitted: 350, unit: 'chars', file: '' });
    // its wording quoted inside a line, not between a head and a tail
    expect(recogniseAgentTruncation(`gl = (Z) => \`...[truncated \${Z} chars]...\`;\n${rows(3, 'x')}`)).toBeUndefined();
  });

  it('are not recognised from a wording out of its place (a file or log that quotes it)', () => {
    // Gemini CLI's line anywhere but at the start, without its gap
    expect(recogniseAgentTruncation(`log:\n${geminiTruncated(rows(2600, 'big'))}`)).toBeUndefined();
    expect(
      recogniseAgentTruncation(
        `Output too large. Showing first 8,000 and last 32,000 characters. For full output see: ${FILE}\n${rows(5, 'x')}`,
      ),
    ).toBeUndefined();
    // Codex's gap without its header at the top, or its header without a gap
    expect(recogniseAgentTruncation(`${rows(10, 'a')}\nTotal output lines: 12\n…40 tokens truncated…`)).toBeUndefined();
    expect(recogniseAgentTruncation(`Exit code: 0\nWall time: 1 seconds\nTotal output lines: 3\nOutput:\na\nb\nc`)).toBeUndefined();
    // mini-swe-agent's template itself (as its config file shows it), not an observation
    expect(recogniseAgentTruncation('<elided_chars>\n{{ elided_chars }} characters elided\n</elided_chars>')).toBeUndefined();
    expect(recogniseAgentTruncation(rows(100, 'plain'))).toBeUndefined();
    // pi's note anywhere but at the end, or one that shows every line (a whole read of a short file)
    expect(recogniseAgentTruncation(`${piBash}\n${rows(3, 'more')}`)).toBeUndefined();
    expect(recogniseAgentTruncation(`${rows(3, 'a')}\n\n[Showing lines 1-3 of 3. Use offset=4 to continue.]`)).toBeUndefined();
    // Qwen Code's first line anywhere but at the start, its gap alone (its own source quotes it), its note without the gap
    expect(recogniseAgentTruncation(`log:\n${qwen}`)).toBeUndefined();
    expect(recogniseAgentTruncation(`const marker = '... [CONTENT TRUNCATED] ...';\n${rows(5, 'x')}`)).toBeUndefined();
    expect(recogniseAgentTruncation(`${rows(5, 'x')}\n[Note: Could not save full output to file]`)).toBeUndefined();
    // OpenCode's lines quoted inside a line, or its bash line anywhere but at the start
    expect(recogniseAgentTruncation(`B = \`...output truncated...\n\nFull output saved to: \${q}\n\n\` + B;`)).toBeUndefined();
    expect(recogniseAgentTruncation(`x\n${opencodeBash}`)).toBeUndefined();
    expect(recogniseAgentTruncation(`T = \`... output truncated; full content saved to \${x} ...\``)).toBeUndefined();
    expect(recogniseAgentTruncation(`${opencodeCompacted}\n${rows(2, 'more')}`)).toBeUndefined();
  });

  it("are reported for the request's new results only, and reduced like any other result", () => {
    const big = geminiTruncated(rows(2600, 'big'));
    const call = (id: string) => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id, type: 'function', function: { name: 'bash', arguments: '{"command":"make"}' } }],
    });
    const first = {
      model: 'gpt-5',
      messages: [{ role: 'user', content: 'build it' }, call('c1'), { role: 'tool', tool_call_id: 'c1', content: big }],
    };
    const engine = createEngine({ clear: { enabled: false } }, { store: new MemorySink() });
    const one = engine.project(first, 'openai-chat', { session: 's' });
    expect(one.stats.truncatedByAgent).toEqual([
      { result: 0, callId: 'c1', tool: 'bash', agent: 'gemini-cli', omitted: rows(2600, 'big').length - 40_000, unit: 'chars', file: FILE },
    ]);
    // over its cap: offloaded like any result, the preview keeping the agent's pointer to the whole
    expect(one.reductions.map((r) => r.callId)).toEqual(['c1']);
    expect(JSON.stringify(one.request)).toContain(`For full output see: ${FILE}`);
    // Cline's: its command list names the command, its JSON list is taken off for the preview
    const clineRequest = {
      model: 'gpt-5',
      messages: [
        { role: 'user', content: 'count' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'k1', type: 'function', function: { name: 'run_commands', arguments: '{"commands":["seq 1 560"]}' } }],
        },
        { role: 'tool', tool_call_id: 'k1', content: clineCut(560) },
      ],
    };
    const cl = createEngine({ clear: { enabled: false }, defaultCap: 2_000 }, { store: new MemorySink() }).project(
      clineRequest,
      'openai-chat',
      {
        session: 'c',
      },
    );
    expect(cl.stats.truncatedByAgent).toEqual([
      { result: 0, callId: 'k1', tool: 'run_commands', agent: 'cline', omitted: 21_714, unit: 'chars', file: '' },
    ]);
    const sent = (cl.request as { messages: Array<{ content: string }> }).messages[2]!.content;
    expect(sent.split('\n')).toContain(rows(1, 'head'));
    // the next request: c1 is no longer new, c2 is not truncated
    const second = { ...first, messages: [...first.messages, call('c2'), { role: 'tool', tool_call_id: 'c2', content: 'ok' }] };
    expect(engine.project(second, 'openai-chat', { session: 's' }).stats.truncatedByAgent).toBeUndefined();
  });
});
