/**
 * `spillway proxy` without VS Code: starts the proxy, says where it listens and how to point
 * agents at it, logs to standard error, and runs until SIGINT or SIGTERM.
 */
import { startProxy, type ProxyOptions } from './server';
import { codexRouteText, geminiRouteText, mcpRouteText } from './env';

export interface StandaloneIO {
  out: (text: string) => void;
  err: (text: string) => void;
}

const defaultIO: StandaloneIO = {
  out: (t) => {
    process.stdout.write(t);
  },
  err: (t) => {
    process.stderr.write(t);
  },
};

/** Resolves once the proxy has been stopped by a signal and has closed. */
export async function runStandaloneProxy(options: ProxyOptions, io: StandaloneIO = defaultIO): Promise<void> {
  const proxy = await startProxy({ ...options, log: (line) => io.err(`${new Date().toISOString()} ${line}\n`) });
  io.out(
    [
      `spillway proxy listening on ${proxy.url}`,
      `  OpenAI upstream:    ${proxy.openaiUpstream}`,
      `  Anthropic upstream: ${proxy.anthropicUpstream}`,
      `  ChatGPT upstream:   ${proxy.chatgptUpstream} (Codex signed in with ChatGPT, under /backend-api/)`,
      `  Gemini upstream:    ${proxy.geminiUpstream}`,
      `  recordings:         ${proxy.sessionsDir ?? 'off'}`,
      `  mode:               ${proxy.mode === 'observe' ? 'observe (requests go upstream byte for byte; recordings show what Spillway would have sent)' : 'project'}`,
      `  WebSocket mode:     ${proxy.websockets === 'refuse' ? 'refused (426: clients use HTTP)' : 'projected (new items only; see docs/proxy.md)'}`,
      `  read-backs:         ${proxy.answerReads ? 'answered by the proxy (--answer-reads; HTTP only, see docs/answer-reads.md)' : "the agent's own (spillway read, MCP)"}`,
      'point agents at it with (Claude Code: ANTHROPIC_BASE_URL; other OpenAI clients: OPENAI_BASE_URL):',
      ...proxy.environment().map((l) => '  ' + l),
      ...codexRouteText(proxy.url),
      ...geminiRouteText(proxy.url),
      ...(options.storeDir !== undefined ? mcpRouteText({ command: 'spillway', args: ['mcp', '--store', options.storeDir] }) : []),
      '',
    ].join('\n'),
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      io.err(`${new Date().toISOString()} proxy: ${signal}, closing\n`);
      void proxy.close().then(resolve, resolve);
    };
    const onInt = () => stop('SIGINT');
    const onTerm = () => stop('SIGTERM');
    process.on('SIGINT', onInt);
    process.on('SIGTERM', onTerm);
  });
}
