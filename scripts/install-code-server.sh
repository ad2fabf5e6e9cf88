#!/usr/bin/env bash
# Installs a real VS Code (code-server 4.100.3 = VS Code 1.100.3, Node extension host) and
# Debian Chromium on a machine that reaches only the npm registry and Debian's packages.
# Spillway's copy of the shared harness recipe (../shared/vscode-harness/install-code-server.sh);
# used by test/vscode/harness.ts (`npm run test:vscode`) and scripts/start.mjs (`npm start`).
#
#   usage: install-code-server.sh [DIR]    (default .harness/code-server; idempotent:
#                                           DIR/.complete marks a finished install)
#   then:  node DIR/node_modules/code-server/out/node/entry.js --auth none \
#            --bind-addr 127.0.0.1:PORT --user-data-dir UD --extensions-dir EXT \
#            --disable-telemetry --disable-update-check WORKSPACE
set -euo pipefail
dir=${1:-"$(cd "$(dirname "$0")/.." && pwd)/.harness/code-server"}
version=4.100.3            # last code-server release whose engines.node is 20 (this machine's Node)
[ -f "$dir/.complete" ] && { echo "code-server $version already in $dir"; exit 0; }

if [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  # headers for VS Code's native modules (kerberos, keytar), ripgrep (its npm package downloads
  # a binary from outside, so we use Debian's), Chromium for driving the workbench
  missing=
  for p in libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev ripgrep chromium fonts-dejavu-core; do
    dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
  done
  [ -z "$missing" ] || { apt-get update -qq; apt-get install -y -qq libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev ripgrep \
    chromium fonts-dejavu-core >/dev/null; }
else
  echo "not root: make sure libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev ripgrep chromium are installed" >&2
fi

mkdir -p "$dir" && cd "$dir"
[ -f package.json ] || echo '{"name":"code-server-harness","private":true}' > package.json
# --ignore-scripts: code-server's postinstall would fetch ripgrep from outside; we do its steps by hand
npm install --no-audit --no-fund --ignore-scripts "code-server@$version"
export npm_config_yes=true             # node-pty's install script runs npx node-gyp
npm rebuild argon2

vs=node_modules/code-server/lib/vscode
( cd "$vs"
  npm install --no-audit --no-fund --omit=dev --ignore-scripts
  mkdir -p node_modules/@vscode/ripgrep/bin
  cp "$(command -v rg)" node_modules/@vscode/ripgrep/bin/rg
  npm rebuild                            # node-pty, spdlog, watcher, kerberos... against Node's headers
  ln -sfn node_modules node_modules.asar
  ( cd bin/remote-cli && ln -sfn code-linux.sh code-server )
  ( cd bin/helpers && ln -sfn browser-linux.sh browser.sh )
  ( cd extensions && npm install --no-audit --no-fund --omit=dev --ignore-scripts ) )
touch .complete
echo "code-server $version installed in $dir"
