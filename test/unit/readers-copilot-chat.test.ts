/**
 * GitHub Copilot's chat in VS Code (src/replay/readers/copilot-chat.ts), on a hand-written session in
 * the shapes VS Code and vscode-copilot-chat write: the same session as VS Code's mutation log
 * (`chatSessions/<id>.jsonl`) and as the older whole document (`<id>.json`). Copilot runs only inside
 * VS Code with a GitHub sign-in, so no agents-suite test runs it.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { recogniseCopilotChatWritten } from '../../src/engine/markers';
import { applyChatMutation, supersededByChatLog, tsxText } from '../../src/replay/readers/copilot-chat';
import { detectTranscriptFormat, readTranscript, requestForCall, type Transcript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { sessionAbout, sessionName } from '../../src/replay/session-title';
import { toolResults, wireProblems } from './readers-wire-checks';

const small = (name: string) => join(__dirname, '..', 'fixtures', 'transcripts', 'small', name);
const LOG = small('copilot-chat-session.jsonl');
const DOC = small('copilot-chat-session.json');
const T0 = 1795000000000;

function allRequestsValid(t: Transcript): string[] {
  return t.calls.flatMap((_, k) => wireProblems(t.wire, requestForCall(t, k).messages as unknown[]).map((p) => `call ${k}: ${p}`));
}

describe("Copilot's chat sessions in VS Code", () => {
  it('are found by auto as a mutation log or a whole document, also from a head that stops inside the first record', async () => {
    expect((await readTranscript(LOG)).source).toBe('copilot-chat');
    expect((await readTranscript(DOC)).source).toBe('copilot-chat');
    const log = readFileSync(LOG, 'utf8');
    expect(detectTranscriptFormat('s.jsonl', log.slice(0, 200))).toBe('copilot-chat');
    expect(detectTranscriptFormat('s.json', readFileSync(DOC, 'utf8').slice(0, 300))).toBe('copilot-chat');
    // a Continue session has a sessionId and a history, a Claude Code record a sessionId: neither is one
    expect(detectTranscriptFormat('c.json', JSON.stringify({ sessionId: 'x', title: 't', workspaceDirectory: '/w', history: [] }))).toBe(
      'continue',
    );
  });

  it('an exported chat (Chat: Export Chat…, no version or id) is one too; a turn without rounds is a call answered by its Markdown', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spillway-copilot-export-'));
    const file = join(dir, 'chat.json');
    const ask = (text: string, answer: unknown) => ({
      requestId: `request_${text.length}`,
      message: { text, parts: [{ kind: 'text', text }] },
      variableData: { variables: [] },
      response: answer,
      isCanceled: false,
      result: {},
    });
    const exported = {
      responderUsername: 'GitHub Copilot',
      responderAvatarIconUri: { id: 'copilot' },
      initialLocation: 'panel',
      requests: [
        ask('Set up the project', [{ kind: 'markdownContent', content: { value: 'Use `src/` and `test/`.' } }]),
        // as older VS Code wrote Markdown: the string in `value`, or in `value.value`
        ask('And the tests?', [
          { value: 'Run ', supportThemeIcons: false },
          { kind: 'markdownContent', value: { value: '`vitest`.' } },
        ]),
      ],
    };
    writeFileSync(file, JSON.stringify(exported, null, 2));
    expect(detectTranscriptFormat(file, readFileSync(file, 'utf8').slice(0, 80))).toBe('copilot-chat');
    const t = await readTranscript(file);
    expect(t.source).toBe('copilot-chat');
    expect(t.items).toEqual([
      { role: 'user', content: '<userRequest>\nSet up the project\n</userRequest>' },
      { role: 'assistant', content: 'Use `src/` and `test/`.' },
      { role: 'user', content: '<userRequest>\nAnd the tests?\n</userRequest>' },
      { role: 'assistant', content: 'Run `vitest`.' },
    ]);
    expect(t.calls.map((c) => c.end)).toEqual([1, 3]);
  });

  it('the log and the document give the same calls, the log after every change VS Code wrote', async () => {
    const a = await readTranscript(LOG);
    const b = await readTranscript(DOC);
    expect(a.items).toEqual(b.items);
    expect(a.calls).toEqual(b.calls);
    expect(a.compactions).toEqual(b.compactions);
    expect(a.skipped).toEqual(b.skipped);
  });

  it("a call per round, each request Copilot's messages so far: global context, rendered prompt, rounds with their results", async () => {
    const t = await readTranscript(LOG);
    expect(t.wire).toBe('openai-chat');
    // the API's name of the model (resolvedModel), not the picker's
    expect(t.base).toEqual({ model: 'claude-sonnet-4-6' });
    expect(t.calls.map((c) => c.end)).toEqual([2, 4, 7, 9, 12]);
    const first = requestForCall(t, 0).messages as { role: string; content: string }[];
    expect(first.map((m) => m.role)).toEqual(['user', 'user']);
    expect(first[0]!.content).toContain('<workspace_info>');
    expect(first[1]!.content).toContain('<reminderInstructions>');
    expect(first[1]!.content).toContain('<userRequest>\nWhy does parse() fail on empty input?');
    // the second turn has no rendered message: its text in <userRequest>, as Copilot's history writes it
    expect(t.items[8]).toEqual({ role: 'user', content: '<userRequest>\nWhere else is lex() called?\n</userRequest>' });
    expect(toolResults(t.wire, t.items).map((r) => r.name)).toEqual([
      'read_file',
      'replace_string_in_file',
      'run_in_terminal',
      'grep_search',
      'file_search',
    ]);
    expect(t.calls[4]!.reply).toBe('`lex()` is called in `src/parser.ts` (line 2) and `src/repl.ts` (line 14).');
    expect(allRequestsValid(t)).toEqual([]);
  });

  it("results rendered as Copilot renders them: a tree's text, the user's part left out, an image as nothing", async () => {
    const t = await readTranscript(LOG);
    const content = (i: number) => (t.items[i] as { content: string }).content;
    expect(content(3)).toBe(
      '```ts\nexport function parse(text: string): Node[] {\n  const tokens = lex(text);\n  return build(tokens);\n}\n```',
    );
    expect(content(5)).toBe('The following files were successfully edited:\n/home/dev/parser/src/parser.ts');
    expect(content(11)).toBe('(empty)');
    expect(t.skipped.notes.join('\n')).toContain('1 image or data part(s) of tool results are left out');
  });

  it('a text result over 8 KiB is the pointer Copilot sent instead, to a file beside the session, which the engine takes as saved by the agent', async () => {
    const t = await readTranscript(LOG);
    const pointer = (t.items[6] as { content: string }).content;
    expect(pointer).toMatch(/^Large tool result \(11KB\) written to file\. Use the read_file tool to access the content at: /);
    expect(recogniseCopilotChatWritten(pointer)).toBe(
      'GitHub.copilot-chat/chat-session-resources/5c1d0e7a-2f4b-4a8e-9d61-0b7f3c2e9a14/toolu_01Test__vscode-1795000000003/content.txt',
    );
    // in VS Code's layout the file is under the workspace's storage, beside chatSessions
    const ws = mkdtempSync(join(tmpdir(), 'spillway-copilot-ws-'));
    mkdirSync(join(ws, 'chatSessions'));
    const file = join(ws, 'chatSessions', '5c1d0e7a-2f4b-4a8e-9d61-0b7f3c2e9a14.jsonl');
    copyFileSync(LOG, file);
    const there = await readTranscript(file);
    expect(recogniseCopilotChatWritten((there.items[6] as { content: string }).content)).toBe(
      join(
        ws,
        'GitHub.copilot-chat',
        'chat-session-resources',
        '5c1d0e7a-2f4b-4a8e-9d61-0b7f3c2e9a14',
        'toolu_01Test__vscode-1795000000003',
        'content.txt',
      ),
    );
    // a JSON result is written pretty-printed, as content.json, with its schema
    const doc = JSON.parse(readFileSync(DOC, 'utf8'));
    doc.requests[0].result.metadata.toolCallResults['toolu_01Test__vscode-1795000000003'].content[0].value = JSON.stringify(
      Array.from({ length: 400 }, (_, i) => ({ test: `case ${i}`, ok: true })),
    );
    const jsonFile = join(ws, 'chatSessions', 'json.json');
    writeFileSync(jsonFile, JSON.stringify(doc));
    const j = (await readTranscript(jsonFile)).items[6] as { content: string };
    expect(j.content).toMatch(/content\.json\n\nData schema found at: .*schema\.json$/);
  });

  it('times from the rounds; a round whose calls have no result, a cancelled request and thinking are left out and said', async () => {
    const t = await readTranscript(LOG);
    expect(t.calls.map((c) => c.at)).toEqual([T0 + 1000, T0 + 6000, T0 + 19000, T0 + 40 * 60000 + 800, T0 + 40 * 60000 + 5000]);
    expect(t.skipped.byReason).toEqual({ 'no-answer': 1 });
    const notes = t.skipped.notes.join('\n');
    expect(notes).toContain('request 3: no model call recorded');
    expect(notes).toContain('1 round(s) whose tool calls have no result are left out');
    expect(notes).toContain('the thinking of 1 round(s) is left out');
    expect(notes).toContain('1 result(s) over 8192 characters are sent as');
    expect(notes).toContain('system prompt, its tool declarations and custom instructions');
  });

  it("a summary is a compaction after its round's call", async () => {
    const t = await readTranscript(LOG);
    expect(t.compactions).toEqual([
      { calls: 4, line: 2, model: 'claude-sonnet-4-6', summary: 'The user fixed parse() on empty input; now looking for lex() callers.' },
    ]);
  });

  it('replays under Anthropic prices, the pause before the second turn billed cold', async () => {
    const r = replay(await readTranscript(LOG), { config: { tokenizer: 'approximate' } });
    expect(r.calls).toHaveLength(5);
    expect(r.totals.compactions?.[0]?.rule).toMatch(/^Copilot in VS Code: 85% of the model's prompt budget/);
    expect(r.calls[3]!.gapMs).toBe(40 * 60000 + 800 - 19000);
  });

  it('named by its title, its folder (workspace.json beside chatSessions) and the day it started', () => {
    const ws = mkdtempSync(join(tmpdir(), 'spillway-copilot-name-'));
    mkdirSync(join(ws, 'chatSessions'));
    writeFileSync(join(ws, 'workspace.json'), JSON.stringify({ folder: 'file:///home/dev/parser' }));
    const file = join(ws, 'chatSessions', 's.jsonl');
    copyFileSync(LOG, file);
    expect(sessionAbout(file)).toEqual({
      title: 'Fix parse() on empty input',
      prompt: 'Why does parse() fail on empty input? Fix it and run the tests.',
      cwd: '/home/dev/parser',
      start: new Date(T0 - 5000).toISOString(),
    });
    expect(sessionName(file)).toMatch(/^Fix parse\(\) on empty input · parser · /);
    expect(sessionAbout(DOC).title).toBe('Fix parse() on empty input');
  });
});

describe("VS Code's mutation log", () => {
  it('sets, cuts and appends, and deletes, as ObjectMutationLog.read does; a path that leads nowhere is refused', () => {
    const s: Record<string, unknown> = { requests: [{ a: 1 }, { a: 2 }, { a: 3 }], title: 'x' };
    expect(applyChatMutation(s, { kind: 2, k: ['requests'], i: 1, v: [{ a: 9 }] })).toBe(true);
    expect(s.requests).toEqual([{ a: 1 }, { a: 9 }]);
    expect(applyChatMutation(s, { kind: 2, k: ['requests'], v: [{ a: 10 }] })).toBe(true);
    expect(applyChatMutation(s, { kind: 1, k: ['requests', 0, 'a'], v: 5 })).toBe(true);
    expect(applyChatMutation(s, { kind: 3, k: ['title'] })).toBe(true);
    expect(s).toEqual({ requests: [{ a: 5 }, { a: 9 }, { a: 10 }], title: undefined });
    expect(applyChatMutation(s, { kind: 1, k: ['nope', 0, 'a'], v: 1 })).toBe(false);
    expect(applyChatMutation(s, { kind: 7, k: ['title'], v: 1 })).toBe(false);
    expect(applyChatMutation(s, { kind: 1, k: [], v: 1 })).toBe(false);
    // a path through a prototype is refused: nothing outside the session changes
    expect(applyChatMutation(s, { kind: 1, k: ['__proto__', 'polluted'], v: 'yes' })).toBe(false);
    expect(applyChatMutation(s, { kind: 2, k: ['requests', 'constructor', 'prototype', 'x'], v: [1] })).toBe(false);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("a change before the session's first record, or to nowhere, is skipped and counted, and the rest still replays", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spillway-copilot-bad-'));
    const file = join(dir, 's.jsonl');
    const lines = readFileSync(LOG, 'utf8').trimEnd().split('\n');
    writeFileSync(
      file,
      [
        JSON.stringify({ kind: 1, k: ['customTitle'], v: 'early' }),
        ...lines,
        JSON.stringify({ kind: 1, k: ['requests', 9, 'result'], v: {} }),
      ].join('\n') + '\n',
    );
    const t = await readTranscript(file);
    expect(t.calls).toHaveLength(5);
    expect(t.skipped.byReason).toEqual({ 'before-start': 1, 'bad-change': 1, 'no-answer': 1 });
  });
});

describe('prompt-tsx text', () => {
  it("breaks a line before a chunk that asks, and before an element's first chunk when the text before came from elsewhere", () => {
    const text = (t: string, lineBreakBefore = false) => ({ type: 2, text: t, lineBreakBefore });
    const el = (...children: unknown[]) => ({ type: 1, ctor: 2, children });
    expect(tsxText(el(text('a'), text('b')))).toBe('ab');
    expect(tsxText(el(text('a'), text('b', true)))).toBe('a\nb');
    // an element's first chunk right after its parent's text is a text sibling (prompt-tsx contentChunks)
    expect(tsxText(el(text('a'), el(text('b')), text('c')))).toBe('abc');
    expect(tsxText(el(el(text('a')), el(text('b'))))).toBe('a\nb');
    // an image or an opaque part sends no text
    expect(tsxText(el(text('a'), { type: 1, ctor: 3, children: [], props: { src: 'x' } }, { type: 3, value: 1 }, text('b')))).toBe('ab');
  });
});

describe('a chat file VS Code converted to a log', () => {
  it('is superseded by the log of the same session beside it, and only by that', () => {
    const logs = new Set(['s/abc.jsonl', 's/def.jsonl']);
    const isLog = (p: string) => logs.has(p);
    expect(supersededByChatLog('s/abc.json', isLog)).toBe(true);
    // the log itself, a session with no log yet, a log of another session, a file of another kind
    expect(supersededByChatLog('s/abc.jsonl', isLog)).toBe(false);
    expect(supersededByChatLog('s/ghi.json', isLog)).toBe(false);
    expect(supersededByChatLog('t/abc.json', isLog)).toBe(false);
    expect(supersededByChatLog('s/def.txt', isLog)).toBe(false);
  });
});
