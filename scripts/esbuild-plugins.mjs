// esbuild plugins shared by esbuild.mjs and scripts/package-vsix.mjs.
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The MCP SDK's server imports its Ajv validator, which compiles schemas with `new Function`; the
 * CLI ships in the .vsix, where nothing may evaluate code. This resolves that one import to
 * src/cli/schema-validator.ts, the SDK's eval-free @cfworker/json-schema validator under Ajv's name.
 */
export const mcpValidatorWithoutEval = {
  name: 'mcp-validator-without-eval',
  setup(build) {
    build.onResolve({ filter: /[\\/]validation[\\/]ajv-provider\.js$/ }, (args) =>
      args.importer.includes('@modelcontextprotocol') ? { path: join(root, 'src/cli/schema-validator.ts') } : undefined,
    );
  },
};
