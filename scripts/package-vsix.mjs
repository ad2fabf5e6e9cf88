#!/usr/bin/env node
// Builds the extension and packages it with vsce into a .vsix (default .harness/spillway.vsix).
//   usage: node scripts/package-vsix.mjs [OUT.vsix]
//
// The build goes to a staging folder (.harness/package/), not to the shared dist/: other builds
// (npm run build, the unit tests' setup, a watcher) may write dist/ at the same moment, and vsce
// fails on a file that changes while it zips it. The esbuild options are esbuild.mjs's for the
// extension host and webview bundles. What goes into the .vsix is decided by .vscodeignore.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = resolve(process.argv[2] ?? join(root, '.harness/spillway.vsix'));
const stage = join(root, '.harness/package');
const started = Date.now();

rmSync(stage, { recursive: true, force: true });
mkdirSync(join(stage, 'dist'), { recursive: true });
mkdirSync(dirname(out), { recursive: true });
const common = { bundle: true, sourcemap: false, logLevel: 'warning', legalComments: 'none' };
const builds = [
  esbuild.build({ ...common, platform: 'node', target: 'node20', format: 'cjs', entryPoints: [join(root, 'src/extension/extension.ts')],
    outfile: join(stage, 'dist/extension.js'), external: ['vscode'] }),
];
if (existsSync(join(root, 'webview/main.tsx'))) {
  builds.push(esbuild.build({ ...common, platform: 'browser', format: 'iife', target: 'chrome114', minify: true,
    entryPoints: [join(root, 'webview/main.tsx')], outfile: join(stage, 'dist/webview.js'), define: { 'process.env.NODE_ENV': '"production"' } }));
}
await Promise.all(builds);
for (const f of ['package.json', '.vscodeignore', 'LICENSE', 'LICENSE.md', 'LICENSE.txt']) {
  if (existsSync(join(root, f))) cpSync(join(root, f), join(stage, f));
}
// The packaged README has no repository to resolve relative links and images against (vsce refuses
// them, and the benchmark charts are SVG, which it refuses too): they become plain text naming the
// file in the repository.
const readme = readFileSync(join(root, 'README.md'), 'utf8')
  .replace(/!\[([^\]]*)\]\((?!https?:)([^)\s]+)\)/g, '*$1: `$2` in the repository*')
  .replace(/(?<!!)\[([^\]]+)\]\((?!https?:|#)([^)\s]+)\)/g, '$1 (`$2`)');
writeFileSync(join(stage, 'README.md'), readme);
if (existsSync(join(root, 'media'))) cpSync(join(root, 'media'), join(stage, 'media'), { recursive: true });

const args = [join(root, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--no-update-package-json', '-o', out];
if (!['LICENSE', 'LICENSE.md', 'LICENSE.txt'].some((f) => existsSync(join(root, f)))) args.push('--skip-license');
const r = spawnSync(process.execPath, args, { cwd: stage, encoding: 'utf8', timeout: 120_000 });
if (r.status !== 0) {
  process.stderr.write(`vsce package failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stdout ?? ''}\n${r.stderr ?? ''}\n`);
  process.exit(1);
}
console.log(`${out} (${(statSync(out).size / 1024).toFixed(0)} KB) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
