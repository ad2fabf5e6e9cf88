/**
 * Generated agent sessions for benchmarks: deterministic (seeded), shaped like real coding-agent
 * work (many small results, some medium, a few huge logs and file dumps, error lines and paths in
 * them), in the OpenAI Chat Completions format.
 */

/** mulberry32: a small, fast, seeded PRNG so every run generates the same sessions. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TOOLS = ['bash', 'read_file', 'grep', 'mcp__github__search_code', 'list_dir'] as const;
const WORDS = [
  'const',
  'return',
  'import',
  'function',
  'value',
  'result',
  'config',
  'handler',
  'request',
  'session',
  'token',
  'stream',
  'buffer',
  'index',
];

function line(r: () => number, i: number, tool: string): string {
  const w = () => WORDS[Math.floor(r() * WORDS.length)]!;
  const roll = r();
  if (roll < 0.02) return `ERROR src/${w()}/${w()}.ts:${i}:${Math.floor(r() * 80)} ${w()} is not defined`;
  if (roll < 0.04) return `    at ${w()}${w()} (src/${w()}.ts:${Math.floor(r() * 400)}:${Math.floor(r() * 40)})`;
  if (tool === 'grep') return `src/${w()}/${w()}_${Math.floor(r() * 90)}.ts:${i}:  ${w()} ${w()} = ${w()}(${w()});`;
  if (tool === 'read_file') return `${String(i).padStart(5)}\t  ${w()} ${w()} = ${w()}.${w()}(${w()}, ${Math.floor(r() * 1000)});`;
  return `[${String(i).padStart(4, '0')}] ${w()} ${w()} ${w()} ok ${Math.floor(r() * 100000)} ms`;
}

function output(r: () => number, chars: number, tool: string): string {
  const lines: string[] = [];
  let n = 0;
  for (let i = 1; n < chars; i++) {
    const l = line(r, i, tool);
    lines.push(l);
    n += l.length + 1;
  }
  return lines.join('\n');
}

/** Size of one tool output: mostly small, some medium, a few huge. */
function outputSize(r: () => number, maxHuge: number): number {
  const roll = r();
  if (roll < 0.7) return 200 + Math.floor(r() * 1800);
  if (roll < 0.95) return 2_000 + Math.floor(r() * 18_000);
  return 20_000 + Math.floor(r() * Math.max(1, maxHuge - 20_000));
}

export interface GeneratedSession {
  /** the conversation items; call k sends messages.slice(0, ends[k]) */
  messages: unknown[];
  ends: number[];
  toolChars: number;
}

/** A session of `calls` model calls with at most `maxToolChars` of tool output in all. */
export function generateSession(calls: number, maxToolChars: number, seed = 1, maxHuge = 200_000): GeneratedSession {
  const r = rng(seed);
  const messages: unknown[] = [
    { role: 'system', content: 'You are a coding agent. Use the tools to inspect and change the repository.' },
    { role: 'user', content: 'The test suite fails on main; find out why and fix it.' },
  ];
  const ends: number[] = [];
  let toolChars = 0;
  for (let k = 0; k < calls; k++) {
    ends.push(messages.length);
    if (k > 0 && k % 25 === 0)
      messages.push({ role: 'user', content: `Status check ${k}: keep going, and tell me what you found so far.` });
    const tool = TOOLS[Math.floor(r() * TOOLS.length)]!;
    const id = `call_${k.toString(36)}_${Math.floor(r() * 1e9).toString(36)}`;
    messages.push({
      role: 'assistant',
      content: k % 3 === 0 ? `Looking at step ${k}.` : null,
      tool_calls: [
        {
          id,
          type: 'function',
          function: { name: tool, arguments: JSON.stringify({ path: `src/module_${k % 40}.ts`, pattern: 'value' }) },
        },
      ],
    });
    const size = Math.min(outputSize(r, maxHuge), Math.max(100, maxToolChars - toolChars));
    const text = output(r, size, tool);
    toolChars += text.length;
    messages.push({ role: 'tool', tool_call_id: id, content: text });
  }
  ends.push(messages.length);
  return { messages, ends, toolChars };
}

export function chatRequest(messages: unknown[]): string {
  return JSON.stringify({
    model: 'gpt-4.1',
    messages,
    tools: [{ type: 'function', function: { name: 'bash', parameters: { type: 'object' } } }],
    stream: true,
  });
}

/** One request body of about `bytes` bytes. */
export function requestOfSize(bytes: number, seed = 7): string {
  const calls = Math.max(4, Math.round(bytes / 9_000));
  const s = generateSession(calls, bytes, seed, Math.min(2_000_000, bytes / 4));
  return chatRequest(s.messages);
}
