/**
 * The JSON Schema validator the bundled MCP server uses, in place of the SDK's default.
 *
 * Why: the SDK's server imports its Ajv provider, and Ajv compiles every schema with `new Function`.
 * The CLI ships inside the .vsix (the extension launches `cli.js mcp`), and nothing Spillway ships
 * evaluates generated code (test/unit/package.test.ts). The SDK's own `@cfworker/json-schema`
 * provider validates without eval (it exists for runtimes that forbid it), so the build points the
 * SDK's Ajv import here (scripts/esbuild-plugins.mjs). `spillway mcp` validates tool input with zod
 * and never asks the client for structured input, so no schema of its own goes through either.
 */
export { CfWorkerJsonSchemaValidator as AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/cfworker';
