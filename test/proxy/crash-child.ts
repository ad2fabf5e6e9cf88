/**
 * The proxy as the VS Code extension runs it, in a process of its own so a test can SIGKILL it:
 * the store the extension opens (openBackgroundStore: background writes, flushed before rename),
 * an engine over it, and startProxy with that engine and recordings beside the store, exactly as
 * src/extension/proxy.ts starts it. Bundled by crash.test.ts; prints the line `listening on URL`.
 *
 * argv: STORE_DIR OPENAI_UPSTREAM ANTHROPIC_UPSTREAM
 */
import { createEngine } from '../../src/engine/engine';
import { defaultSessionsDir } from '../../src/proxy/recording';
import { startProxy } from '../../src/proxy/server';
import { openBackgroundStore } from '../../src/store/store';

const [storeDir, openaiUpstream, anthropicUpstream] = process.argv.slice(2) as [string, string, string];
const warn = (line: string) => process.stderr.write(line + '\n');
void startProxy({
  port: 0,
  engine: createEngine({}, { store: openBackgroundStore(storeDir, warn) }),
  sessionsDir: defaultSessionsDir(storeDir),
  openaiUpstream,
  anthropicUpstream,
  log: warn,
}).then((p) => process.stdout.write(`listening on ${p.url}\n`));
