import { describe, expect, it } from 'vitest';
import { upstreamErrorMessage } from '../../src/proxy/recording';
import { recordedTurn } from '../support/turns';
import { proxyRecord } from '../../src/extension/inspector/proxySource';
import { agentOf, folderOf, sessionTitle } from '../../src/extension/pure/sessionTitle';

const turn = recordedTurn;

describe('a failed proxied call', () => {
  it("shows as an error with the upstream's message, not as a turn forwarded unchanged", () => {
    const s = proxyRecord(
      turn({ status: 0, error: 'the upstream https://api.anthropic.com could not be reached: ECONNREFUSED' }),
      0,
    ).summary;
    expect(s.error).toBe('the upstream https://api.anthropic.com could not be reached: ECONNREFUSED');
    expect(s.note).toBeUndefined();
  });

  it('shows an error status with what the upstream said', () => {
    const s = proxyRecord(turn({ status: 529, upstreamMessage: 'overloaded_error: Overloaded' }), 0).summary;
    expect(s.error).toBe('HTTP 529: overloaded_error: Overloaded');
  });

  it('is not an error when the call succeeded', () => {
    expect(proxyRecord(turn(), 0).summary.error).toBeUndefined();
  });
});

describe('why a proxied turn sent results whole', () => {
  it('carries the recorded groups into the turn, and none for a turn recorded before they were', () => {
    const held = [
      { reason: 'unaffordable' as const, results: 4, tokens: 9_000 },
      { reason: 'in-use' as const, results: 2, tokens: 1_200 },
    ];
    expect(proxyRecord(turn({ held }), 0).held).toEqual(held);
    expect(proxyRecord(turn(), 0).held).toBeUndefined();
  });
});

describe("an upstream's error message", () => {
  it("reads Anthropic's and OpenAI's JSON error shapes", () => {
    expect(upstreamErrorMessage(Buffer.from('{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'))).toBe(
      'overloaded_error: Overloaded',
    );
    expect(
      upstreamErrorMessage(
        Buffer.from('{"error":{"message":"Rate limit reached for gpt-5","type":"requests","code":"rate_limit_exceeded"}}'),
      ),
    ).toBe('requests: Rate limit reached for gpt-5');
  });

  it('takes the first line of a body that is not JSON, bounded, and nothing from a compressed body', () => {
    expect(upstreamErrorMessage(Buffer.from('Bad Gateway\n<html>…'))).toBe('Bad Gateway');
    expect(upstreamErrorMessage(Buffer.from('x'.repeat(2000)))!.length).toBe(500);
    expect(upstreamErrorMessage(Buffer.from('{}'), 'gzip')).toBeUndefined();
  });
});

describe('a proxied session is named by agent, folder and start time', () => {
  it('knows the agents by their User-Agent', () => {
    expect(agentOf('claude-cli/2.0.64 (external, cli)', 'proxy')).toBe('Claude Code');
    expect(agentOf('codex_cli_rs/0.58.0 (Ubuntu 24.04; x86_64)', 'proxy')).toBe('Codex');
    expect(agentOf(undefined, 'copilot')).toBe('Copilot');
    expect(agentOf('curl/8.5.0', 'proxy')).toBe('Agent');
    expect(agentOf('GeminiCLI/0.61.0/gemini-3.8-flash (linux; x64; terminal) google-genai-sdk/1.30.0 gl-node/v24.21.0', 'proxy')).toBe(
      'Gemini CLI',
    );
  });

  it("finds the folder in Claude Code's environment block and in Codex's <cwd>", () => {
    expect(
      folderOf(JSON.stringify({ system: 'Here is useful information:\n<env>\nWorking directory: /home/ann/spillway\nIs git repo: yes' })),
    ).toBe('spillway');
    expect(folderOf(JSON.stringify({ input: '<environment_context>\n  <cwd>/Users/yo/dev/pomodoro/codex</cwd>' }))).toBe('codex');
    expect(folderOf(JSON.stringify({ system: 'Working directory: C:\\\\Users\\\\ann\\\\proj' }))).toBe('proj');
    // Claude Code 2.1.332: the environment is a system message of its own
    const env =
      '# Environment\nYou have been invoked in the following environment: \n - Primary working directory: /tmp/sw/claude-sub/work\n - Is a git repository: false';
    expect(
      folderOf(
        JSON.stringify({
          messages: [
            { role: 'user', content: 'go' },
            { role: 'system', content: env },
          ],
        }),
      ),
    ).toBe('work');
    const gemini = {
      contents: [
        {
          role: 'user',
          parts: [{ text: '<session_context>\n- **Workspace Directories:**\n  - /tmp/gfix/fixture-project\n- **Directory Structure:**' }],
        },
      ],
    };
    expect(folderOf(JSON.stringify(gemini))).toBe('fixture-project');
    expect(folderOf('{"messages":[]}')).toBeUndefined();
  });

  it('joins what it knows, and never shows the fingerprint', () => {
    const title = sessionTitle({
      origin: 'proxy',
      userAgent: 'claude-cli/2.0.64',
      firstBody: '{"system":"Working directory: /w/app"}',
      start: '2026-11-24T23:12:00.000Z',
    });
    expect(title).toMatch(/^Claude Code · app · Nov 24, \d\d:\d\d$/);
    expect(title).not.toContain('s_');
  });
});
