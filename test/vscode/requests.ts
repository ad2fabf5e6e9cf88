// Requests the real-VS-Code tests project. Plain data, built here and sent to the extension host.

/** A test log of `n` lines: clearly bulk, well over the default cap of 8,000 chars. */
export function testLog(n: number, tag = 'PASS'): string {
  return Array.from({ length: n }, (_, i) => `line ${i + 1}: ${tag} src/module${i}.test.ts (${i} ms)`).join('\n') + '\n';
}

/** An Anthropic Messages request with one tool call and its (large) result. */
export function anthropicRequest(tool: string, callId: string, output: string, input: Record<string, unknown> = { command: 'npm test' }) {
  return {
    model: 'claude-sonnet-4-5',
    max_tokens: 1024,
    messages: [
      { role: 'user', content: 'Run the tests and fix what fails.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: callId, name: tool, input }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: callId, content: output }] },
    ],
  };
}

/** An OpenAI Chat Completions request with one tool call and its result. */
export function openaiChatRequest(tool: string, callId: string, output: string, args: Record<string, unknown>) {
  return {
    model: 'gpt-4.1',
    messages: [
      { role: 'user', content: 'Look at the code.' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: callId, type: 'function', function: { name: tool, arguments: JSON.stringify(args) } }],
      },
      { role: 'tool', tool_call_id: callId, content: output },
    ],
  };
}
