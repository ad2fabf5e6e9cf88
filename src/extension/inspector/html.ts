/**
 * The inspector webview's HTML, without `vscode`: a strict Content Security Policy (no inline
 * script, scripts only with this load's nonce, styles and fonts only from the extension's own
 * resources), the bundled stylesheet and script, and a root element. The browser tests serve this
 * same page with a stub host, so what they check is what VS Code loads.
 */
import { randomBytes } from 'node:crypto';

export interface InspectorHtmlOptions {
  /** `webview.cspSource` */
  cspSource: string;
  nonce: string;
  scriptUri: string;
  styleUri: string;
}

export function newNonce(): string {
  return randomBytes(18)
    .toString('base64')
    .replace(/[^A-Za-z0-9]/g, '');
}

export function contentSecurityPolicy(o: Pick<InspectorHtmlOptions, 'cspSource' | 'nonce'>): string {
  return [
    "default-src 'none'",
    `img-src ${o.cspSource} data:`,
    // the toolkit (FAST) probes :focus-visible with a <style> element that carries the csp-nonce below
    `style-src ${o.cspSource} 'nonce-${o.nonce}'`,
    `font-src ${o.cspSource}`,
    `script-src 'nonce-${o.nonce}'`,
  ].join('; ');
}

const attr = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

export function inspectorHtml(o: InspectorHtmlOptions): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${attr(contentSecurityPolicy(o))}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta property="csp-nonce" content="${attr(o.nonce)}">
<link rel="stylesheet" href="${attr(o.styleUri)}">
<title>Spillway Inspector</title>
</head>
<body>
<div id="root"></div>
<script nonce="${attr(o.nonce)}" src="${attr(o.scriptUri)}"></script>
</body>
</html>
`;
}
