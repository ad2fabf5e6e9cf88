/**
 * A GitHub Copilot CLI log (`events.jsonl`, in the shape 1.0.102 writes) whose main conversation
 * hands a command to a sub-agent (its `task` tool, call `t1`), which writes its own conversation into
 * the same log: two calls each. For the tests of listing and replaying such a sub-agent.
 */
export function copilotSubAgentLog(cwd: string, day = '2026-11-30T10:00'): string {
  const ev = (type: string, data: Record<string, unknown>, s: number) =>
    JSON.stringify({ type, data, id: `e${s}-${type}`, timestamp: `${day}:0${s}.000Z`, parentId: null });
  const sub = { parentToolCallId: 't1' };
  return (
    [
      ev('session.start', { producer: 'copilot-agent', selectedModel: 'gpt-5', context: { cwd } }, 0),
      ev('user.message', { content: 'Delegate the count', transformedContent: 'Delegate the count' }, 1),
      ev('system.message', { content: 'main system' }, 1),
      ev('session.usage_record', { usage: { apiEndpoint: '/chat/completions', providerType: 'openai', model: 'gpt-5' } }, 2),
      ev('assistant.message', { content: '', toolRequests: [{ toolCallId: 't1', name: 'task', arguments: { prompt: 'SUB: count' } }] }, 2),
      ev('subagent.started', { toolCallId: 't1', agentName: 'general-purpose', agentDisplayName: 'General purpose' }, 3),
      ev('user.message', { content: 'SUB: count', transformedContent: 'SUB: count' }, 3),
      ev('system.message', { content: 'As a sub-agent…' }, 3),
      ev(
        'assistant.message',
        { content: '', toolRequests: [{ toolCallId: 'b1', name: 'bash', arguments: { command: 'wc -l a' } }], ...sub },
        4,
      ),
      ev('tool.execution_complete', { toolCallId: 'b1', result: { content: '12 a' }, ...sub }, 5),
      ev('assistant.message', { content: 'SUB-REPORT: 12', toolRequests: [], ...sub }, 6),
      ev('tool.execution_complete', { toolCallId: 't1', result: { content: 'SUB-REPORT: 12' } }, 7),
      ev('assistant.message', { content: 'Twelve.', toolRequests: [] }, 8),
    ].join('\n') + '\n'
  );
}
