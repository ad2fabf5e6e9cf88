#!/usr/bin/env node
// `npm start`: builds Spillway and opens it in a real VS Code with a demo workspace whose store
// already holds the outputs of a replayed agent session (test/vscode/demo.ts: a real 64-call Claude
// Code sub-agent session from the corpus, test/fixtures/sessions/dev3/claude-code/, under the default
// settings, chosen because the default reduces it visibly: previews with a handle and a clear).
//
// - With a `code` command on PATH: installs the .vsix with `code --install-extension` and opens the
//   demo workspace in it.
// - Otherwise: the newest local code-server the project installs (test/vscode/code-servers.ts picks
//   it: code-server 4.139.1, VS Code 1.139 on Node 24, so every feature is offered), installed on
//   first use by its script (scripts/install-code-server-chat.sh) into $SPILLWAY_CACHE, default
//   ~/.cache/spillway, outside the clone; on 127.0.0.1, printing the URL; runs until Ctrl-C.
//
// `npm start -- --which` prints the choice (JSON) without building or starting anything.
//
// Environment: SPILLWAY_PORT (default 8080, or a free port if taken), SPILLWAY_USE_CODE_SERVER=1
// (use code-server even when `code` exists), SPILLWAY_CODE_SERVER=VERSION (another code-server the
// project installs, e.g. 4.100.3 for VS Code 1.100), SPILLWAY_DEMO_DIR (default .harness/demo).
import * as esbuild from 'esbuild';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const harness = join(root, '.harness');
const vsix = join(harness, 'spillway.vsix');
const demoDir = resolve(process.env.SPILLWAY_DEMO_DIR ?? join(harness, 'demo'));

function run(cmd, args, what, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    console.error(`spillway start: ${what} failed (${r.error?.message ?? `exit ${r.status}`})`);
    process.exit(1);
  }
}

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' }).status === 0;
}

async function portFree(port) {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen(port, '127.0.0.1', () => s.close(() => res(true)));
  });
}

async function pickPort() {
  const wanted = Number(process.env.SPILLWAY_PORT ?? 8080);
  if (await portFree(wanted)) return wanted;
  return new Promise((res) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

// 1. the demo workspace generator and the code-server choice, bundled from TypeScript
const gen = join(harness, 'demo-gen.mjs');
mkdirSync(harness, { recursive: true });
await esbuild.build({
  stdin: {
    contents: `export { makeDemoWorkspace } from './test/vscode/demo';\nexport { codeServers, isInstalled, pickCodeServer, vscodeVersion } from './test/vscode/code-servers';`,
    resolveDir: root,
    loader: 'ts',
  },
  bundle: true,
  platform: 'node',
  format: 'esm',
  outfile: gen,
  logLevel: 'warning',
  banner: { js: "import { createRequire as __spillwayRequire } from 'node:module'; const require = __spillwayRequire(import.meta.url);" },
});
const { makeDemoWorkspace, codeServers, isInstalled, pickCodeServer, vscodeVersion } = await import(pathToFileURL(gen).href);
const useCode = process.env.SPILLWAY_USE_CODE_SERVER !== '1' && onPath('code');
const cache = process.env.SPILLWAY_CACHE ?? join(homedir(), '.cache', 'spillway');
let codeServer;
try {
  codeServer = useCode ? undefined : pickCodeServer(codeServers(root, cache), process.env.SPILLWAY_CODE_SERVER || undefined);
} catch (e) {
  console.error(`spillway start: ${e.message}`);
  process.exit(1);
}
// `npm start -- --which`: say which VS Code it would open, and stop
if (process.argv.includes('--which')) {
  console.log(
    JSON.stringify(
      useCode
        ? { vscode: 'code' }
        : { codeServer: codeServer.version, entry: codeServer.entry, node: codeServer.node, installed: isInstalled(codeServer) },
    ),
  );
  process.exit(0);
}

// 2. build and package
console.log('spillway start: building and packaging the extension…');
run(process.execPath, [join(root, 'esbuild.mjs')], 'the build');
run(process.execPath, [join(root, 'scripts/package-vsix.mjs'), vsix], 'packaging');

// 3. the demo workspace, with a store filled by replaying a session through the engine
const demo = await makeDemoWorkspace(demoDir, root);
console.log(
  `spillway start: demo workspace ${demo.dir}: ${demo.outputs} stored outputs from ${demo.projections} model calls of ${demo.source}`,
);
const pct = (c) => `${c.withReadBacks > c.raw ? '+' : '−'}${((Math.abs(c.raw - c.withReadBacks) / c.raw) * 100).toFixed(1)}%`;
console.log(
  `spillway start: under the default settings: input cost under caching with read-backs ${pct(demo.replayed.cost.anthropic)} (Anthropic) and ${pct(demo.replayed.cost.openai)} (OpenAI), miss rate ${(demo.replayed.missRate * 100).toFixed(1)}%`,
);

// 4a. the user's VS Code (features its version lacks are not offered; the Spillway log says which)
if (useCode) {
  run('code', ['--install-extension', vsix, '--force'], '`code --install-extension`');
  run('code', [demoDir], '`code`');
  console.log('spillway start: opened the demo workspace in VS Code; the Spillway inspector opens on its replayed session.');
  process.exit(0);
}

// 4b. the local code-server: installed once into the cache (a fresh machine gets it here; its Node too)
if (!isInstalled(codeServer))
  console.log(`spillway start: installing code-server ${codeServer.version} into ${cache} (once; it can take many minutes)…`);
run('bash', [codeServer.install.script, ...codeServer.install.args], `installing code-server ${codeServer.version}`, {
  env: { ...process.env, SPILLWAY_CACHE: cache },
});
const { entry, node } = codeServer;
console.log(`spillway start: VS Code ${vscodeVersion(codeServer) ?? '?'} (code-server ${codeServer.version}) on ${node}`);
// one user-data folder per code-server: a newer VS Code migrates its state, which an older one may not read
const userData = join(harness, `start/code-server-${codeServer.version}/user-data`);
const extensions = join(harness, `start/code-server-${codeServer.version}/extensions`);
mkdirSync(join(userData, 'User'), { recursive: true });
const settingsFile = join(userData, 'User/settings.json');
// the inspector (opened by the demo workspace's settings) is what a new user should see first: no
// README preview on top of it (`readme` here put the demo's README in front of the inspector)
if (!existsSync(settingsFile) || /"workbench\.startupEditor": "readme"/.test(readFileSync(settingsFile, 'utf8'))) {
  writeFileSync(
    settingsFile,
    JSON.stringify(
      {
        'security.workspace.trust.enabled': false,
        'workbench.startupEditor': 'none',
        'telemetry.telemetryLevel': 'off',
        'extensions.autoUpdate': false,
        // VS Code 1.139 opens its Chat view beside the editor in a new workspace: the inspector needs the width
        'workbench.secondarySideBar.defaultVisibility': 'hidden',
      },
      null,
      2,
    ),
  );
}
rmSync(extensions, { recursive: true, force: true });
run(
  node,
  [entry, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', vsix, '--force'],
  'installing the extension into code-server',
  { stdio: ['ignore', 'ignore', 'inherit'] },
);
const port = await pickPort();
const server = spawn(
  node,
  [
    entry,
    '--auth',
    'none',
    '--bind-addr',
    `127.0.0.1:${port}`,
    '--user-data-dir',
    userData,
    '--extensions-dir',
    extensions,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    demoDir,
  ],
  { stdio: ['ignore', 'ignore', 'inherit'], detached: true },
);
const stop = (code) => {
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
  process.exit(code);
};
process.on('SIGINT', () => {
  console.log('\nspillway start: stopping code-server');
  stop(0);
});
process.on('SIGTERM', () => stop(0));
server.on('exit', (code) => {
  console.error(`spillway start: code-server exited (${code})`);
  process.exit(code ?? 1);
});

for (let i = 0; i < 300; i++) {
  try {
    if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
  } catch {
    /* not yet */
  }
  await new Promise((r) => setTimeout(r, 200));
}
console.log(
  `\nSpillway is running in VS Code (code-server) at:\n\n  http://127.0.0.1:${port}/?folder=${encodeURIComponent(demoDir)}\n\nOpen it in a browser. Press Ctrl-C to stop.`,
);
