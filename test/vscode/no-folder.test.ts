/** Spillway in a VS Code window with no folder open: the store falls back to globalStorageUri. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { relative, isAbsolute } from 'node:path';
import { launch, type Harness } from './harness';
import { anthropicRequest, testLog } from './requests';

let vs: Harness;

beforeAll(async () => {
  vs = await launch({ name: 'nofolder', workspace: null });
});

afterAll(async () => {
  await vs?.close();
});

describe('Spillway without a workspace folder', () => {
  it('keeps outputs under globalStorageUri and still opens them', async () => {
    const log = testLog(500);
    const r = await vs.run(
      async ({ vscode, api, host, context }, req) => {
        const p = await api.project(req);
        const h = p.reductions[0]!.handle;
        const doc = await vscode.workspace.openTextDocument(api.documentUri(h));
        await host.flush(); // store files are written in the background
        return {
          storageUri: context.storageUri?.fsPath ?? null,
          global: context.globalStorageUri.fsPath,
          file: host.store.locate(h) ?? null,
          text: doc.getText(),
        };
      },
      anthropicRequest('bash', 'toolu_nofolder', log),
    );
    expect(r.storageUri).toBeNull();
    expect(r.file).not.toBeNull();
    const rel = relative(r.global, r.file!);
    expect(rel, 'path relative to the storage folder').not.toMatch(/^\.\./);
    expect(isAbsolute(rel), `${rel} is absolute (another drive)`).toBe(false);
    // a missing file throws ENOENT naming it
    expect(readFileSync(r.file!, 'utf8')).toBe(log);
    expect(r.text).toBe(log);
  });

  it('writes a tool cap to user settings when there is no workspace to write to', async () => {
    try {
      const caps = await vs.run(async ({ vscode }) => {
        await vscode.commands.executeCommand('spillway.setToolCap', 'grep', 4000, 'workspace');
        return vscode.workspace.getConfiguration('spillway').inspect('toolCaps')?.globalValue ?? null;
      });
      expect(caps).toEqual({ grep: 4000 });
    } finally {
      await vs.run(async ({ vscode }) => {
        await vscode.workspace.getConfiguration('spillway').update('toolCaps', undefined, vscode.ConfigurationTarget.Global);
      });
    }
  });
});
