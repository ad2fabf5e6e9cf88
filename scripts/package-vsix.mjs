#!/usr/bin/env node
// Builds the extension and packages it with vsce into a .vsix (default .harness/spillway.vsix).
//   usage: node scripts/package-vsix.mjs [--test-bridge] [OUT.vsix]
//
// --test-bridge packages the TEST build used by the real-VS-Code harness instead: its entry is
// test/vscode/bridge/extension.ts (the shipped extension plus the bridge the tests run code
// through) and its manifest adds `onStartupFinished`, so the bridge is up as soon as the window
// is. Without the flag, the entry is src/extension/extension.ts: nothing test-only is in it
// (test/unit/package.test.ts unpacks the .vsix to check).
//
// The build goes to a staging folder (.harness/package-NAME/), not to the shared dist/: other builds
// (npm run build, the unit tests' setup, a watcher) may write dist/ at the same moment, and vsce
// fails on a file that changes while it zips it. The esbuild options are esbuild.mjs's for the
// extension host and webview bundles. What goes into the .vsix is decided by .vscodeignore.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { mcpValidatorWithoutEval } from './esbuild-plugins.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const testBridge = args.includes('--test-bridge');
const out = resolve(args.find((a) => !a.startsWith('--')) ?? join(root, '.harness/spillway.vsix'));
// one staging folder per output, so a test build and a release build can be made at the same time
const stage = join(root, '.harness', `package-${basename(out, '.vsix')}`);
const started = Date.now();

rmSync(stage, { recursive: true, force: true });
mkdirSync(join(stage, 'dist'), { recursive: true });
mkdirSync(dirname(out), { recursive: true });
const common = { bundle: true, sourcemap: false, logLevel: 'warning', legalComments: 'none' };
// as esbuild.mjs: minified, each tokenizer encoding in its own file loaded on first use
const node = { ...common, platform: 'node', target: 'node20', format: 'cjs', minify: true, define: { SPILLWAY_TOKENIZER_FILES: 'true' } };
const entry = testBridge ? 'test/vscode/bridge/extension.ts' : 'src/extension/extension.ts';
const builds = [
  // the test build marks when its bundle starts loading, so the harness can report load + activate time
  esbuild.build({
    ...node,
    entryPoints: [join(root, entry)],
    outfile: join(stage, 'dist/extension.js'),
    external: ['vscode'],
    ...(testBridge ? { banner: { js: 'globalThis.__spillwayLoadStart = performance.now();' } } : {}),
  }),
  // the CLI: the extension launches its `mcp` command as the MCP server it registers (src/extension/mcp.ts)
  esbuild.build({
    ...node,
    entryPoints: [join(root, 'src/cli/main.ts')],
    outfile: join(stage, 'dist/cli.js'),
    plugins: [mcpValidatorWithoutEval],
  }),
  ...['o200k_base', 'cl100k_base'].map((name) =>
    esbuild.build({
      ...node,
      entryPoints: [join(root, `src/engine/tokenizers/${name}.ts`)],
      outfile: join(stage, `dist/tokenizer-${name}.js`),
    }),
  ),
];
if (existsSync(join(root, 'webview/main.tsx'))) {
  builds.push(
    esbuild.build({
      ...common,
      platform: 'browser',
      format: 'iife',
      target: 'chrome114',
      minify: true,
      entryPoints: [join(root, 'webview/main.tsx')],
      outfile: join(stage, 'dist/webview.js'),
      define: { 'process.env.NODE_ENV': '"production"' },
    }),
  );
}
await Promise.all(builds);
for (const f of ['package.json', '.vscodeignore', 'LICENSE', 'LICENSE.md', 'LICENSE.txt']) {
  if (existsSync(join(root, f))) cpSync(join(root, f), join(stage, f));
}
if (testBridge) {
  const manifest = JSON.parse(readFileSync(join(stage, 'package.json'), 'utf8'));
  manifest.activationEvents = [...new Set([...(manifest.activationEvents ?? []), 'onStartupFinished'])];
  writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
}
// The packaged README has no repository to resolve relative links and images against (vsce refuses
// them, and the benchmark charts are SVG, which it refuses too): they become plain text naming the
// file in the repository.
const readme = readFileSync(join(root, 'README.md'), 'utf8')
  .replace(/!\[([^\]]*)\]\((?!https?:)([^)\s]+)\)/g, '*$1: `$2` in the repository*')
  .replace(/(?<!!)\[([^\]]+)\]\((?!https?:|#)([^)\s]+)\)/g, '$1 (`$2`)');
writeFileSync(join(stage, 'README.md'), readme);
if (existsSync(join(root, 'media'))) cpSync(join(root, 'media'), join(stage, 'media'), { recursive: true });

const vsce = [join(root, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--no-update-package-json', '-o', out];
if (!['LICENSE', 'LICENSE.md', 'LICENSE.txt'].some((f) => existsSync(join(root, f)))) vsce.push('--skip-license');
const r = spawnSync(process.execPath, vsce, { cwd: stage, encoding: 'utf8', timeout: 120_000 });
if (r.status !== 0) {
  process.stderr.write(`vsce package failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout ?? ''}\n${r.stderr ?? ''}\n`);
  process.exit(1);
}
console.log(
  `${out}${testBridge ? ' (test build)' : ''} (${(statSync(out).size / 1024).toFixed(0)} KB) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
