/**
 * Test-only: lets the real-VS-Code tests (test/vscode/) run code inside this extension host.
 *
 * Never shipped: it is bundled only into the test build of the extension (test/vscode/bridge/
 * extension.ts, packaged by `scripts/package-vsix.mjs --test-bridge` for the harness), and
 * test/unit/package.test.ts unpacks the real .vsix to prove it is absent. Even in the test build it
 * does nothing unless SPILLWAY_TEST_OUT names a folder (the harness sets it when it starts code-server). The harness drops
 * `inbox/<id>.json` = `{ fn: "async (t, ...args) => …", args: [...] }`; the bridge runs it through the
 * hidden command `spillway.test.run` with `t = { vscode, api, context, host }` and writes
 * `outbox/<id>.json` = `{ ok: true, value }` or `{ ok: false, error }`. Assertions are made by the
 * tests against what the real `vscode` API returned.
 */
import * as vscode from 'vscode';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SpillwayHost } from '../../../src/extension/host';

const TEST_COMMAND = 'spillway.test.run';
const POLL_MS = 50;

interface TestRequest {
  fn: string;
  args?: unknown[];
}

/** How long Spillway took to load its bundle and to run `activate`, in ms (performance marks). */
export interface ActivationTiming {
  loadMs: number;
  activateMs: number;
  totalMs: number;
}

export function registerTestBridge(
  context: vscode.ExtensionContext,
  host: SpillwayHost,
  api: unknown,
  inspector?: unknown,
  timing?: ActivationTiming,
): vscode.Disposable[] {
  const out = process.env.SPILLWAY_TEST_OUT;
  if (!out) return [];
  const inbox = join(out, 'inbox');
  const outbox = join(out, 'outbox');
  mkdirSync(inbox, { recursive: true });
  mkdirSync(outbox, { recursive: true });

  const run = async (request: TestRequest): Promise<unknown> => {
    const fn = new Function(`return (${request.fn});`)() as (t: unknown, ...args: unknown[]) => unknown;
    return await fn({ vscode, api, context, host, inspector, require }, ...(request.args ?? []));
  };
  const command = vscode.commands.registerCommand(TEST_COMMAND, run);

  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    let names: string[];
    try {
      names = readdirSync(inbox)
        .filter((n) => n.endsWith('.json'))
        .sort();
    } catch {
      return;
    }
    if (names.length === 0) return;
    busy = true;
    void (async () => {
      for (const name of names) {
        const file = join(inbox, name);
        let reply: unknown;
        try {
          const request = JSON.parse(readFileSync(file, 'utf8')) as TestRequest;
          rmSync(file, { force: true });
          const value = await vscode.commands.executeCommand(TEST_COMMAND, request);
          reply = { ok: true, value: value === undefined ? null : value };
        } catch (e) {
          rmSync(file, { force: true });
          reply = {
            ok: false,
            error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
            code: (e as { code?: unknown })?.code ?? null,
          };
        }
        const target = join(outbox, name);
        let text: string;
        try {
          text = JSON.stringify(reply);
        } catch (e) {
          text = JSON.stringify({ ok: false, error: `result is not JSON: ${String(e)}` });
        }
        writeFileSync(`${target}.tmp`, text);
        renameSync(`${target}.tmp`, target);
      }
      busy = false;
    })();
  }, POLL_MS);

  writeFileSync(
    join(out, 'activated.json'),
    JSON.stringify({
      version: vscode.version,
      storageUri: context.storageUri?.fsPath ?? null,
      globalStorageUri: context.globalStorageUri.fsPath,
      time: new Date().toISOString(),
      timing: timing ?? null,
    }),
  );
  return [command, { dispose: () => clearInterval(timer) }];
}
