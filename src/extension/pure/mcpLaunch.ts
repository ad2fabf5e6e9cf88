/**
 * How the extension starts `spillway mcp`: the CLI bundled in the extension (dist/cli.js, shipped in
 * the .vsix), run by the extension host's own executable as Node (`ELECTRON_RUN_AS_NODE=1`, as VS
 * Code documents for Node-based servers), so no Node install is needed. No `vscode` here: the VS Code
 * tests compute the exact launch the commands write.
 */
import { join } from 'node:path';
import type { McpLaunch } from '../../proxy/claudeConfig';

/** `spillway mcp` on `storeDir`, for an extension installed at `extensionPath`, run by `execPath`. */
export function mcpLaunch(execPath: string, extensionPath: string, storeDir: string): McpLaunch {
  return {
    command: execPath,
    args: [join(extensionPath, 'dist', 'cli.js'), 'mcp', '--store', storeDir],
    env: { ELECTRON_RUN_AS_NODE: '1' },
  };
}
