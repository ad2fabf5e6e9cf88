/**
 * The proxy's front door: only local agents may use it.
 *
 * The proxy listens on 127.0.0.1, but a web page in the user's browser can still reach it: by
 * DNS rebinding (a name the attacker controls first resolves to their server, then to 127.0.0.1,
 * so the page's requests arrive here with `Host: attacker.example`) or by a plain cross-origin
 * request. Agents' HTTP clients (the OpenAI and Anthropic SDKs, Codex, Claude Code) name the
 * address they connect to in `Host` and send no `Origin`; browsers always send the page's host in
 * `Host` and send `Origin` on cross-origin and POST requests. So a request is refused when its
 * `Host` is not one of the proxy's own loopback names with its port, or when it carries an `Origin`.
 *
 * One function, called first thing by the request handler and meant for the WebSocket upgrade
 * path too: it returns why a request is refused, or undefined to let it through.
 */
import type { IncomingHttpHeaders } from 'node:http';

/** Names that reach the proxy's loopback listener and that a rebinding page cannot put in `Host`. */
const LOOPBACK_NAMES = ['127.0.0.1', 'localhost', '[::1]'];

/** The `Host` values the proxy answers to when it listens on `port`. */
export function allowedHosts(port: number): string[] {
  return LOOPBACK_NAMES.map((n) => `${n}:${port}`);
}

/** Why a request must be refused (for a 403 in the API's error format), or undefined when it may pass. */
export function refuseForeignRequest(headers: IncomingHttpHeaders, port: number): string | undefined {
  const host = headers.host;
  if (typeof host !== 'string' || !allowedHosts(port).includes(host.trim().toLowerCase())) {
    return (
      `spillway proxy: refused a request for host ${JSON.stringify(host ?? '')}: it only answers to ${allowedHosts(port).join(', ')} ` +
      '(a different Host means a web page reached it through DNS rebinding)'
    );
  }
  if (headers.origin !== undefined) {
    return `spillway proxy: refused a request from origin ${JSON.stringify(headers.origin)}: browser pages may not use the proxy (agents send no Origin)`;
  }
  return undefined;
}
