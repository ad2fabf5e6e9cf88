#!/usr/bin/env node
// Writes package.json's `contributes` from src/extension/pure/contributes.ts (settings generated
// from the engine's CONFIG_KEYS, commands, the language model tool). Run after changing any of
// them; test/unit/extension-contributes.test.ts fails until package.json matches.
//   usage: node scripts/gen-contributes.mjs [--check]
import * as esbuild from 'esbuild';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(join(tmpdir(), 'spillway-contributes-'));
try {
  const out = join(tmp, 'contributes.mjs');
  await esbuild.build({
    entryPoints: [join(root, 'src/extension/pure/contributes.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    outfile: out,
    logLevel: 'warning',
  });
  const { contributes } = await import(pathToFileURL(out).href);
  const pkgPath = join(root, 'package.json');
  const text = readFileSync(pkgPath, 'utf8');
  const pkg = JSON.parse(text);
  const want = contributes();
  if (process.argv.includes('--check')) {
    const same = JSON.stringify(pkg.contributes) === JSON.stringify(want);
    console.log(
      same ? 'package.json contributes is up to date' : 'package.json contributes is stale: run node scripts/gen-contributes.mjs',
    );
    process.exit(same ? 0 : 1);
  }
  pkg.contributes = want;
  writeFileSync(pkgPath, JSON.stringify(pkg, null, 2) + '\n');
  console.log(
    `package.json contributes: ${Object.keys(want.configuration.properties).length} settings, ${want.commands.length} commands, ${want.languageModelTools.length} tool`,
  );
} finally {
  rmSync(tmp, { recursive: true, force: true });
}
