/**
 * A proxied or Copilot session's name as a person would say it: the agent, the folder it worked in
 * and when it started ("Claude Code · spillway · Nov 24, 23:12"), not the fingerprint the proxy keys
 * it by (`s_3aafffd8e775b635`, kept in the session's detail line). Pure: the agent comes from the
 * recorded User-Agent, the folder from the working directory the agent writes into its own prompt
 * (Claude Code's `Working directory:`, Codex's `<cwd>`, Gemini CLI's workspace directories), each left
 * out when unknown.
 */

/** User-Agent prefixes of the agents the proxy serves, and the name each goes by. */
const AGENTS: readonly [RegExp, string][] = [
  [/^claude-cli\//i, 'Claude Code'],
  [/^codex/i, 'Codex'],
  // `GeminiCLI/<version>/<model> (<platform>; <arch>; <surface>)`
  [/^GeminiCLI/, 'Gemini CLI'],
  [/^opencode\//i, 'opencode'],
  [/^aider\//i, 'aider'],
  [/^Anthropic\//, 'Anthropic SDK'],
  [/^OpenAI\//, 'OpenAI SDK'],
];

/** Only so much of the first request is searched for the working directory: agents put it in the system prompt, near the start. */
const MAX_SCAN_CHARS = 200_000;
/**
 * JSON-escaped working directory markers: Claude Code's environment block (`Working directory:`;
 * 2.1.332, in a system message: ` - Primary working directory:`), Codex's environment context, and
 * Gemini CLI's session context (`- **Workspace Directories:**\n  - /path`, older versions `I'm
 * currently working in the directory: /path`).
 */
const CWD_PATTERNS: readonly RegExp[] = [
  /[Ww]orking directory: ((?:[^\n"<\\]|\\\\)+)/,
  /<cwd>((?:[^<"\\]|\\\\)+)<\/cwd>/,
  /Workspace Directories:\*\*\\n {0,8}- ((?:[^"\\]|\\\\)+)/,
  /working in the directory: ((?:[^"\\]|\\\\)+)/,
];

export function agentOf(userAgent: string | undefined, origin: string): string {
  if (origin === 'copilot') return 'Copilot';
  for (const [re, name] of AGENTS) if (userAgent && re.test(userAgent)) return name;
  return 'Agent';
}

/** The last segment of the working directory the request's prompt names, if any. */
export function folderOf(body: string | undefined): string | undefined {
  if (!body) return undefined;
  const text = body.slice(0, MAX_SCAN_CHARS);
  for (const re of CWD_PATTERNS) {
    const m = re.exec(text);
    // a JSON-escaped Windows path writes each backslash twice
    const dir = m?.[1]
      ?.replace(/\\\\/g, '\\')
      .trim()
      .replace(/[\\/]+$/, '');
    if (dir) return dir.split(/[\\/]/).pop() || dir;
  }
  return undefined;
}

/** "Nov 24, 23:12" in the local time zone of the extension host. */
function startOf(time: string | undefined): string | undefined {
  if (!time) return undefined;
  const d = new Date(time);
  if (Number.isNaN(d.getTime())) return undefined;
  return d.toLocaleString('en-US', { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
}

export function sessionTitle(p: {
  origin: string;
  userAgent?: string | undefined;
  firstBody?: string | undefined;
  start?: string | undefined;
}): string {
  return [agentOf(p.userAgent, p.origin), folderOf(p.firstBody), startOf(p.start)].filter(Boolean).join(' · ');
}
