/**
 * Debian's Chromium and the flags that keep it quiet on a closed network (see
 * ../shared/vscode-harness/README.md): one place for the inspector benchmark, the browser suite and
 * the VS Code harness, which all drive the same browser.
 */
export const CHROMIUM = process.env.SPILLWAY_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
