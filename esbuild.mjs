// Bundles every runnable piece of Spillway: the VS Code extension, the `spillway` CLI, the
// inspector webview and the benchmarks. One file so that `npm run build` is the only build step.
import * as esbuild from 'esbuild';
import { existsSync, chmodSync } from 'node:fs';
import { mcpValidatorWithoutEval } from './scripts/esbuild-plugins.mjs';

const watch = process.argv.includes('--watch');
const common = { bundle: true, sourcemap: true, logLevel: 'warning', legalComments: 'none' };
// node bundles are minified (source maps keep stack traces readable) and load each tokenizer
// encoding from its own file, dist/tokenizer-NAME.js, on first use (src/engine/tokens.ts); strings
// stay quoted with \n escapes rather than becoming template literals with raw line breaks (the agents'
// prelude, bundled for the replay, is hundreds of lines of prompt text)
const node = {
  ...common,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  supported: { 'template-literal': false },
  define: { SPILLWAY_TOKENIZER_FILES: 'true' },
};
/** One bundle per tokenizer encoding, loaded only when a count with that encoding is made. */
const TOKENIZER_ENCODINGS = ['o200k_base', 'cl100k_base'];

const builds = [
  // the extension host: `vscode` is provided by the editor at run time
  { ...node, entryPoints: ['src/extension/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  // the CLI: a single file with a shebang, exposed as the `spillway` bin
  {
    ...node,
    entryPoints: ['src/cli/main.ts'],
    outfile: 'dist/cli.js',
    banner: { js: '#!/usr/bin/env node' },
    plugins: [mcpValidatorWithoutEval],
  },
  ...TOKENIZER_ENCODINGS.map((name) => ({
    ...node,
    entryPoints: [`src/engine/tokenizers/${name}.ts`],
    outfile: `dist/tokenizer-${name}.js`,
  })),
];
// the inspector webview (browser, React) and the benchmarks exist from later issues on
if (existsSync('webview/main.tsx')) {
  builds.push({
    ...common,
    platform: 'browser',
    format: 'iife',
    target: 'chrome114',
    minify: true,
    entryPoints: ['webview/main.tsx'],
    outfile: 'dist/webview.js',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
}
if (existsSync('bench/main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/main.ts'], outfile: 'dist/bench.js' });
}
if (existsSync('bench/peers-worker.ts')) {
  // one job of the run above (a session, or a point of the sweep), in a worker process (bench/workers.ts)
  builds.push({ ...node, entryPoints: ['bench/peers-worker.ts'], outfile: 'dist/bench-peers-worker.js' });
}
if (existsSync('bench/proxy-main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/proxy-main.ts'], outfile: 'dist/bench-proxy.js' });
}
if (existsSync('bench/hostblock.ts')) {
  builds.push({ ...node, entryPoints: ['bench/hostblock.ts'], outfile: 'dist/bench-hostblock.js' });
}
if (existsSync('bench/kinds-main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/kinds-main.ts'], outfile: 'dist/bench-kinds.js' });
}
if (existsSync('bench/held-main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/held-main.ts'], outfile: 'dist/bench-held.js' });
}
if (existsSync('bench/whole-main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/whole-main.ts'], outfile: 'dist/bench-whole.js' });
}
if (existsSync('bench/heldout-main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/heldout-main.ts'], outfile: 'dist/bench-heldout.js' });
}
if (existsSync('bench/unseen-main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/unseen-main.ts'], outfile: 'dist/bench-unseen.js' });
}
if (existsSync('bench/peer-main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/peer-main.ts'], outfile: 'dist/bench-peer.js' });
}
if (existsSync('bench/hashes-main.ts')) {
  builds.push({ ...node, entryPoints: ['bench/hashes-main.ts'], outfile: 'dist/bench-hashes.js' });
}
if (existsSync('bench/tune.ts')) {
  builds.push({ ...node, entryPoints: ['bench/tune.ts'], outfile: 'dist/bench-tune.js' });
}
if (existsSync('bench/inspector.ts')) {
  // the browser automation stays a runtime dependency (it ships its own driver files)
  builds.push({ ...node, entryPoints: ['bench/inspector.ts'], outfile: 'dist/bench-inspector.js', external: ['playwright-core'] });
}
const present = builds.filter((b) => b.entryPoints.every((e) => existsSync(e)));

if (watch) {
  for (const b of present) await (await esbuild.context(b)).watch();
} else {
  await Promise.all(present.map((b) => esbuild.build(b)));
  if (existsSync('dist/cli.js')) chmodSync('dist/cli.js', 0o755);
}
