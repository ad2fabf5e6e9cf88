/**
 * Spillway in a real VS Code (code-server 1.100 + Chromium): the extension host, the workspace
 * store, `spillway:` documents, the read tool and the commands, asserted against the real `vscode`
 * API through the test bridge (functions below marked "in the extension host" run there, so they
 * may only use their arguments and `t`), and in the page where a person would look.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join, relative, isAbsolute } from 'node:path';
import { launch, waitUntil, type Harness } from './harness';
import { anthropicRequest, openaiChatRequest, testLog } from './requests';
import { expectSome } from '../support/expect';

let vs: Harness;
/** the output the tests that read one back use; each projects it itself (storedLog), so any test runs alone with -t */
const LOG = testLog(600);

beforeAll(async () => {
  vs = await launch({ name: 'main' });
});

afterAll(async () => {
  if (vs) await vs.screenshot('last');
  await vs?.close();
});

/** Projects `request` through the extension API (in the extension host). */
function project(request: object) {
  return vs.run(async ({ api }, req) => {
    const r = await api.project(req);
    return { reductions: r.reductions, stats: r.stats, request: r.request };
  }, request);
}

/**
 * Projects LOG as bash call toolu_01 under default caps and returns its handle: what a test that
 * reads a stored output back sets up for itself (the handle is the same every time).
 */
/**
 * Runs `body` with reductions on arrival in the workspace settings (`offload.keepReads: 0`: a file read
 * is offloaded when it arrives; `inputs.when: arrival`: a file input is replaced the first time it is
 * sent back), once the engine uses them, and puts the workspace's values back after. The default
 * keeps reads whole while in use and leaves inputs to the clear stage.
 */
async function onArrival<T>(body: () => Promise<T>): Promise<T> {
  const set = (v: Record<string, unknown>) =>
    vs.run(async ({ vscode }, values) => {
      const c = vscode.workspace.getConfiguration('spillway');
      const was: Record<string, unknown> = {};
      for (const [k, value] of Object.entries(values)) {
        was[k] = c.inspect(k)?.workspaceValue ?? null;
        await c.update(k, value === null ? undefined : value, vscode.ConfigurationTarget.Workspace);
      }
      return was;
    }, v);
  const before = await set({ 'offload.keepReads': 0, 'inputs.when': 'arrival' });
  try {
    await waitUntil('the engine to project on arrival', async () =>
      vs.run(({ host }) => host.config.offload.keepReads === 0 && host.config.inputs.when === 'arrival'),
    );
    return await body();
  } finally {
    await set(before);
  }
}

async function storedLog(): Promise<string> {
  await vs.run(async ({ vscode }) => {
    const caps = vscode.workspace.getConfiguration('spillway').inspect('toolCaps');
    if (caps?.workspaceValue !== undefined)
      await vscode.workspace.getConfiguration('spillway').update('toolCaps', undefined, vscode.ConfigurationTarget.Workspace);
  });
  const r = await project(anthropicRequest('bash', 'toolu_01', LOG));
  expect(
    r.reductions.map((x) => x.callId),
    'LOG is reduced under default caps',
  ).toEqual(['toolu_01']);
  return r.reductions[0]!.handle;
}

describe('Spillway in a real VS Code', () => {
  it('activates and reports its workspace storage folder', async () => {
    const state = await vs.run(({ vscode, context }) => ({
      version: vscode.version,
      active: vscode.extensions.getExtension('spillway.spillway')?.isActive ?? false,
      storage: context.storageUri?.fsPath ?? null,
      lmTool: vscode.lm.tools.some((t) => t.name === 'spillway_read_output'),
    }));
    expect(state.active).toBe(true);
    expect(state.version).toMatch(/^1\.\d+\./);
    expect(state.storage).toContain(join(vs.userData, 'User', 'workspaceStorage'));
    expect(state.lmTool).toBe(true);
  });

  it('on a VS Code without the chat provider API (1.100) activates without registering the spillway vendor', async () => {
    const state = await vs.run(async ({ vscode, host }) => {
      const commands = await vscode.commands.getCommands(true);
      return {
        version: vscode.version,
        api: typeof (vscode.lm as unknown as Record<string, unknown>).registerLanguageModelChatProvider,
        models: (await vscode.lm.selectChatModels({ vendor: 'spillway' })).length,
        add: commands.includes('spillway.addLanguageModel'),
        manage: commands.includes('spillway.manageLanguageModels'),
        active: vscode.extensions.getExtension('spillway.spillway')?.isActive ?? false,
        notices: host.notices.map((n) => n.message),
      };
    });
    expect(state.version).toMatch(/^1\.100\./);
    expect(state.api).toBe('undefined');
    expect(state.active).toBe(true);
    expect(state.models).toBe(0);
    expect({ add: state.add, manage: state.manage }).toEqual({ add: true, manage: true });
    expect(state.notices.filter((n) => /languageModels|chat/i.test(n))).toEqual([]);
  });

  it('stores a projected output under the workspace storage folder', async () => {
    await storedLog();
    const r = await project(anthropicRequest('bash', 'toolu_01', LOG));
    expect(r.reductions).toHaveLength(1);
    const handle = r.reductions[0]!.handle;
    expect(r.reductions[0]).toMatchObject({ tool: 'bash', callId: 'toolu_01', stage: 'offload' });
    expect(JSON.stringify(r.request)).toContain(handle);
    // store files are written in the background: flush before looking at the disk
    const where = await vs.run(async ({ host, context }, h) => {
      await host.flush();
      return { file: host.store.locate(h) ?? null, storage: context.storageUri!.fsPath };
    }, handle);
    expect(where.file).not.toBeNull();
    const rel = relative(where.storage, where.file!);
    expect(rel, 'path relative to the storage folder').not.toMatch(/^\.\./);
    expect(isAbsolute(rel), `${rel} is absolute (another drive)`).toBe(false);
    expect(readFileSync(where.file!, 'utf8')).toBe(LOG);
  });

  it('shows the tokens saved in the status bar (checked in the page)', async () => {
    await storedLog();
    const item = vs.page.locator('.statusbar-item', { hasText: /Spillway: [\d,]+ tokens saved/ }).first();
    await item.waitFor({ state: 'visible', timeout: 10_000 });
    expect(Number((await item.textContent())!.replace(/[^\d]/g, ''))).toBeGreaterThan(1000);
  });

  it('applies a spillway.toolCaps change to the very next projection', async () => {
    await vs.run(async ({ vscode }) => {
      await vscode.workspace.getConfiguration('spillway').update('toolCaps', { bash: 'unlimited' }, vscode.ConfigurationTarget.Workspace);
    });
    const unlimited = await project(anthropicRequest('bash', 'toolu_02', LOG));
    expect(unlimited.reductions).toHaveLength(0);
    expect(unlimited.stats.unchanged).toBe(true);
    expect(JSON.parse(readFileSync(join(vs.workspace!, '.vscode/settings.json'), 'utf8'))['spillway.toolCaps']).toEqual({
      bash: 'unlimited',
    });

    // the Set Cap for Tool… command with arguments writes the same setting
    await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.setToolCap', 'bash', 1000, 'workspace'));
    const tight = await project(anthropicRequest('bash', 'toolu_03', testLog(40)));
    expect(tight.reductions.map((x) => x.reason).join()).toMatch(/cap of 1,000/);

    await vs.run(({ vscode }) => vscode.commands.executeCommand('spillway.setToolCap', 'bash', 'default', 'workspace'));
    const back = await project(anthropicRequest('bash', 'toolu_04', testLog(40)));
    expect(back.reductions).toHaveLength(0);
  });

  it('opens a stored output as a spillway: document, byte for byte, titled by the command that printed it', async () => {
    const handle = await storedLog();
    const doc = await vs.run(async ({ vscode, api }, h) => {
      const uri = api.documentUri(h);
      const d = await vscode.workspace.openTextDocument(uri);
      await vscode.window.showTextDocument(d, { preview: false });
      const bytes = await vscode.workspace.fs.readFile(uri);
      return {
        uri: uri.toString(),
        path: uri.path,
        text: d.getText(),
        languageId: d.languageId,
        bytes: Buffer.from(bytes).toString('base64'),
      };
    }, handle);
    expect(doc.text).toBe(LOG);
    expect(Buffer.from(doc.bytes, 'base64').equals(Buffer.from(LOG, 'utf8'))).toBe(true);
    expect(doc.languageId).toBe('log');
    // titled by the command that printed it; the call id is in the path the tab's tooltip shows
    expect(doc.path.split('/').pop()).toBe('$ npm test.log');
    expect(doc.path).toContain('/toolu_01/');

    // in the page: the tab names the command, the editor shows the output
    const title = await vs.waitForTab('$ npm test');
    expect(title).not.toContain('sw_');
    const shown = await vs.activeEditorText();
    expect(shown.split('\n').slice(0, 5)).toEqual(LOG.split('\n').slice(0, 5));
  });

  it('picks the language mode by content and by the file the tool call read', async () => {
    const json = JSON.stringify({ rows: Array.from({ length: 400 }, (_, i) => ({ id: i, name: `row ${i}`, ok: i % 3 === 0 })) }, null, 2);
    const diff =
      'diff --git a/src/a.ts b/src/a.ts\n--- a/src/a.ts\n+++ b/src/a.ts\n@@ -1,3 +1,3 @@\n' +
      Array.from({ length: 800 }, (_, i) => `-old ${i}\n+new ${i}`).join('\n') +
      '\n';
    const source = Array.from({ length: 500 }, (_, i) => `export const value${i}: number = ${i};`).join('\n') + '\n';
    const requests = [
      anthropicRequest('sql', 'toolu_json', json),
      anthropicRequest('git_diff', 'toolu_diff', diff),
      openaiChatRequest('read_file', 'call_src', source, { path: 'src/values.ts' }),
    ];
    // the read_file result is a read: offloaded on arrival here, so the document it opens as can be checked
    const languages = await onArrival(() =>
      vs.run(async ({ vscode, api }, reqs) => {
        const out: Record<string, string> = {};
        for (const req of reqs) {
          const r = await api.project(req);
          for (const red of r.reductions)
            out[red.callId] = (await vscode.workspace.openTextDocument(api.documentUri(red.handle))).languageId;
        }
        return out;
      }, requests),
    );
    expect(languages).toEqual({ toolu_json: 'json', toolu_diff: 'diff', call_src: 'typescript' });
  });

  it('answers vscode.lm.invokeTool(spillway_read_output) with the asked-for lines, bounded', async () => {
    const handle = await storedLog();
    const answer = await vs.run(async ({ vscode }, h) => {
      const read = async (input: object) => {
        const r = await vscode.lm.invokeTool('spillway_read_output', { input, toolInvocationToken: undefined });
        return r.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
      };
      return {
        lines: await read({ handle: h, lines: '3:5' }),
        grep: await read({ handle: h, grep: 'module42\\.', context: 1 }),
        whole: await read({ handle: h }),
      };
    }, handle);
    const [header, ...body] = answer.lines.split('\n');
    expect(header).toContain('lines 3–5 of 600');
    expect(body.join('\n')).toBe(LOG.split('\n').slice(2, 5).join('\n') + '\n');
    expect(answer.grep).toContain('line 43: PASS src/module42.test.ts');
    expect(answer.grep).toContain('line 42:');
    expect(answer.whole.length).toBeLessThanOrEqual(8_500);
    expect(answer.whole).toMatch(/clipped: showing the first 8,000/);
  });

  it('opens a stored output from the command palette (checked in the page)', async () => {
    await storedLog();
    await vs.run(async ({ vscode }) => {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    });
    await vs.runCommand('Spillway: Open Stored Output');
    // named by tool and the command that printed it; the call id is on the row's second line
    await vs.pickQuickItem('bash · $ npm test', 'toolu_01');
    await vs.waitForTab('$ npm test');
    const shown = await vs.activeEditorText();
    expect(shown).toContain('line 1: PASS src/module0.test.ts (0 ms)');
    const active = await vs.run(({ vscode }) => vscode.window.activeTextEditor?.document.uri.scheme ?? null);
    expect(active).toBe('spillway');
  });

  // issue 36: a Read of style.css from line 425 keeps the file's numbers with 424 blank lines above, and opened on a blank screen
  it('opens a stored Read from further down a file at its first line of content, not on the blank lines above it', async () => {
    const css = Array.from({ length: 500 }, (_, i) => `${String(425 + i).padStart(6)}→.rule-${i} { color: red; }`).join('\n');
    const handle = await onArrival(async () => {
      const r = await project(anthropicRequest('Read', 'toolu_css', css, { file_path: '/repo/style.css' }));
      expect(r.reductions.map((x) => x.callId)).toEqual(['toolu_css']);
      return r.reductions[0]!.handle;
    });
    try {
      await vs.run(async ({ vscode }, h) => {
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
        await vscode.commands.executeCommand('spillway.openStoredOutput', h);
      }, handle);
      const at = () =>
        vs.run(({ vscode }) => {
          const e = vscode.window.activeTextEditor;
          if (!e || e.document.uri.scheme !== 'spillway') return null;
          return {
            line: e.selection.active.line,
            text: e.document.lineAt(e.selection.active.line).text,
            top: e.visibleRanges[0]?.start.line ?? 0,
          };
        });
      await waitUntil('the Read to open at its content', async () => ((await at())?.top ?? 0) >= 400);
      const shown = (await at())!;
      expect(shown.line).toBe(424);
      expect(shown.text).toBe('.rule-0 { color: red; }');
    } finally {
      await vs.run(async ({ vscode }) => {
        await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      });
    }
  });

  it('compares the original and the projected result in the diff editor', async () => {
    const handle = await storedLog();
    const diff = await vs.run(async ({ vscode }, h) => {
      await vscode.commands.executeCommand('spillway.compareOriginalAndProjected', h);
      const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
      const input = tab?.input;
      if (!(input instanceof vscode.TabInputTextDiff)) return { label: tab?.label ?? null, original: null, modified: null };
      const original = (await vscode.workspace.openTextDocument(input.original)).getText();
      const modified = (await vscode.workspace.openTextDocument(input.modified)).getText();
      return { label: tab!.label, original, modified };
    }, handle);
    expect(diff.original).toBe(LOG);
    expect(diff.modified).toContain(handle);
    expect(diff.modified!.length).toBeLessThan(LOG.length);
    expect(diff.label).toContain('original ↔ projected');
    await vs.waitForTab('original ↔ projected');
  });

  it('records a file input it replaced, so Compare shows what the agent wrote beside the marker the model got', async () => {
    // a Write deep in a conversation (past inputs.minTokens): its content is on disk, the model gets a marker
    const content = Array.from({ length: 300 }, (_, i) => `export const written${i} = ${i};`).join('\n') + '\n';
    const input = { file_path: '/work/src/written.ts', content };
    const request = {
      model: 'claude-sonnet-4-5',
      max_tokens: 1024,
      messages: [
        { role: 'user', content: Array.from({ length: 9_000 }, (_, i) => `context word ${i}`).join(' ') },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_write1', name: 'Write', input }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_write1', content: 'File created successfully.' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Written.' }] },
        { role: 'user', content: 'Now run the tests.' },
      ],
    };
    // replaced on arrival here (the default leaves it to a clear)
    const out = await onArrival(() =>
      vs.run(async ({ vscode, api }, req) => {
        const r = await api.project(req);
        const handle = r.inputs[0]?.handle;
        if (!handle) return { handle: null, original: null, modified: null, label: null };
        await vscode.commands.executeCommand('spillway.compareOriginalAndProjected', handle);
        const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
        const tabInput = tab?.input;
        if (!(tabInput instanceof vscode.TabInputTextDiff)) return { handle, original: null, modified: null, label: tab?.label ?? null };
        const original = (await vscode.workspace.openTextDocument(tabInput.original)).getText();
        const modified = (await vscode.workspace.openTextDocument(tabInput.modified)).getText();
        return { handle, original, modified, label: tab!.label };
      }, request),
    );
    expect(out.handle).toMatch(/^sw_/);
    // the stored input opens as the file the agent wrote (the store keeps the input as sent); the projected
    // side is the marker's note with the handle; the diff is named by the file
    expect(out.original).toBe(content);
    expect(out.modified).toContain(out.handle);
    expect(out.modified).toContain('Write input cleared by spillway');
    expect(out.modified).not.toContain('written299');
    expect(out.label).toContain('written.ts: original ↔ projected (input');
    const stored = await vs.run(({ host }, h) => host.store.get(h), out.handle!);
    expect(JSON.parse(stored)).toEqual(input);
  });

  it('warns about a malformed setting, naming it, and falls back to its default', async () => {
    const settingsFile = join(vs.workspace!, '.vscode/settings.json');
    mkdirSync(join(vs.workspace!, '.vscode'), { recursive: true });
    writeFileSync(
      settingsFile,
      JSON.stringify({ 'spillway.window.recentTurns': 0, 'spillway.previewChars': 'lots', 'spillway.storage.retentionDays': -1 }, null, 2),
    );
    const notices = await waitUntil(
      'the settings warning',
      async () => {
        const n = await vs.run(({ host }) => host.notices.filter((x) => x.level === 'warning').map((x) => x.message));
        return n.some((m) => m.includes('spillway.window.recentTurns')) ? n : undefined;
      },
      20_000,
      200,
    );
    expect(notices.find((m) => m.includes('spillway.window.recentTurns'))).toMatch(/invalid .*falls back to its default/);
    expectSome(notices, (m) => m.includes('spillway.previewChars'));
    expectSome(notices, (m) => m.includes('spillway.storage.retentionDays'));
    const config = await vs.run(({ host }) => ({
      recentTurns: host.engine.config.window.recentTurns,
      previewChars: host.engine.config.previewChars,
      retention: host.storage.retentionDays,
    }));
    expect(config).toEqual({ recentTurns: 10, previewChars: 1200, retention: 14 });
    // in the page: the warning is shown as a notification
    const toast = vs.page
      .locator('.notifications-toasts .notification-list-item-message', { hasText: 'spillway.window.recentTurns' })
      .first();
    await toast.waitFor({ state: 'visible', timeout: 10_000 });
    writeFileSync(settingsFile, '{}');
    await waitUntil('the settings to be fixed', () => vs.run(({ host }) => host.problems.length === 0), 20_000, 200);
  });

  it('refuses a handle with .. or slashes with a clear message, never an empty tab', async () => {
    const r = await vs.run(async ({ vscode, api, host }) => {
      const attempt = async (f: () => unknown) => {
        try {
          await f();
          return 'opened';
        } catch (e) {
          return String((e as Error).message ?? e);
        }
      };
      const before = host.notices.length;
      const result = {
        dotdot: await attempt(() =>
          vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: 'spillway', path: '/../../../etc/passwd' })),
        ),
        slashes: await attempt(() =>
          vscode.workspace.openTextDocument(vscode.Uri.from({ scheme: 'spillway', path: '/sw_0123/../../x/y.log' })),
        ),
        encoded: await attempt(() => vscode.workspace.openTextDocument(vscode.Uri.parse('spillway:/..%2F..%2Fetc%2Fpasswd/x.log'))),
        read: await attempt(() => api.read('../sw_0123456789abcdef01234567')),
        uri: await attempt(() => api.documentUri('a/b')),
        tool: await attempt(() =>
          vscode.lm.invokeTool('spillway_read_output', { input: { handle: '../../etc/passwd' }, toolInvocationToken: undefined }),
        ),
        editors: vscode.window.visibleTextEditors.filter((e) => e.document.uri.scheme === 'spillway' && e.document.getText() === '').length,
        notices: [] as string[],
      };
      result.notices = host.notices.slice(before).map((n) => n.message);
      return result;
    });
    // the editor refuses to open them; the user is told why in Spillway's own words
    for (const k of ['dotdot', 'slashes', 'encoded'] as const) expect(r[k], k).not.toBe('opened');
    expect(r.notices.filter((m) => /is not a Spillway handle/.test(m)).length).toBeGreaterThanOrEqual(3);
    expect(r.read).toMatch(/not a Spillway handle/);
    expect(r.uri).toMatch(/not a Spillway handle/);
    expect(r.tool).toMatch(/not a Spillway handle/);
    expect(r.editors).toBe(0);
  });

  it('reports a stored output changed on disk behind the index', async () => {
    const text = testLog(500, 'FAIL');
    const r = await project(anthropicRequest('bash', 'toolu_tampered', text));
    const h = r.reductions[0]!.handle;
    const file = await vs.run(async ({ host }, hh) => {
      await host.flush();
      return host.store.locate(hh)!;
    }, h);
    writeFileSync(file, text.replace('line 7: FAIL', 'line 7: PASS'));
    const out = await vs.run(async ({ vscode, api, host }, hh) => {
      let open = 'opened';
      try {
        await vscode.workspace.openTextDocument(api.documentUri(hh));
      } catch (e) {
        open = String((e as Error).message);
      }
      let read = 'read';
      try {
        api.read(hh);
      } catch (e) {
        read = `${(e as { code?: string }).code}: ${(e as Error).message}`;
      }
      return { open, read, notices: host.notices.filter((n) => n.level === 'error').map((n) => n.message) };
    }, h);
    expect(out.open).toMatch(/changed on disk/);
    expect(out.read).toMatch(/^corrupt: .*changed on disk/);
    expectSome(out.notices, (m) => m.includes(h) && m.includes('changed on disk'));
  });

  it('survives a deleted store folder: old handles report not found, new outputs are stored again', async () => {
    const handle = await storedLog();
    const lost = testLog(450, 'SKIP');
    const h = (await project(anthropicRequest('bash', 'toolu_lost', lost))).reductions[0]!.handle;
    // the outputs are written in the background: let them land before the folder goes, or a
    // pending write would put the lost output back after the delete (nothing lost, but not this test)
    const storeDir = await vs.run(async ({ host }) => {
      await host.flush();
      return host.storeDir;
    });
    rmSync(storeDir, { recursive: true, force: true });
    const out = await vs.run(async ({ vscode, api, host }, hh) => {
      const before = host.notices.length;
      let open = 'opened';
      try {
        await vscode.workspace.openTextDocument(api.documentUri(hh));
      } catch (e) {
        open = String((e as Error).message);
      }
      let read = 'read';
      try {
        api.read(hh);
      } catch (e) {
        read = `${(e as { code?: string }).code}: ${(e as Error).message}`;
      }
      return { open, read, notices: host.notices.slice(before).map((n) => n.message) };
    }, h);
    expect(out.open).not.toBe('opened');
    expect(out.read).toMatch(/^not-found: /);
    expectSome(out.notices, (m) => m.includes(h) && m.includes('no stored output'));
    const again = await project(anthropicRequest('bash', 'toolu_01', LOG));
    expect(again.reductions[0]!.handle).toBe(handle);
    const file = await vs.run(async ({ host }, hh) => {
      await host.flush();
      return host.store.locate(hh) ?? null;
    }, handle);
    expect(file, 'the stored file').not.toBeNull();
    expect(existsSync(file!), `${file} exists`).toBe(true);
    expect(readFileSync(file!, 'utf8')).toBe(LOG);
  });

  it('opens the inspector from the status bar item (checked in the page)', async () => {
    await storedLog();
    await vs.page
      .locator('.statusbar-item', { hasText: /tokens saved/ })
      .first()
      .click();
    expect(await vs.waitForTab('Spillway Inspector')).toContain('Spillway Inspector');
    await vs.run(async ({ vscode }) => {
      await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
    });
  });

  it('shows what was reduced and why in the Spillway log (Show Log, checked in the page)', async () => {
    const handle = await storedLog();
    await vs.runCommand('Spillway: Show Log');
    const text = await waitUntil(
      'the log to show a reduction',
      async () => {
        const t = (
          await vs.page
            .locator('.part.panel .monaco-editor .view-lines')
            .first()
            .innerText()
            .catch(() => '')
        ).replace(/\u00a0/g, ' ');
        return /reduced bash toolu_01 \(offload\): .*over bash's cap/.test(t) ? t : undefined;
      },
      15_000,
      250,
    );
    expect(text).toContain(handle);
  });

  it('prunes the least recently used outputs beyond spillway.storage.maxMegabytes', async () => {
    // three distinct outputs of about 0.6 MB each, stored oldest first
    const sizes = await vs.run(async ({ api }) => {
      const handles: string[] = [];
      for (let i = 0; i < 3; i++) {
        const text = `output ${i}\n` + `${i}`.repeat(600_000) + '\n';
        const r = await api.project({
          model: 'm',
          max_tokens: 1,
          messages: [
            { role: 'user', content: 'go' },
            { role: 'assistant', content: [{ type: 'tool_use', id: `toolu_big${i}`, name: 'dump', input: {} }] },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_big${i}`, content: text }] },
          ],
        });
        handles.push(r.reductions[0]!.handle);
        await new Promise((res) => setTimeout(res, 20));
      }
      return handles;
    });
    await vs.run(async ({ vscode }) => {
      await vscode.workspace.getConfiguration('spillway').update('storage.maxMegabytes', 1, vscode.ConfigurationTarget.Workspace);
    });
    // the settings change schedules a background prune
    const left = await waitUntil(
      'the background prune',
      () =>
        vs.run(({ host }, hs) => {
          const alive = hs.filter((h) => host.store.locate(h) !== undefined);
          return alive.length < hs.length ? alive : undefined;
        }, sizes),
      15_000,
      250,
    );
    expect(left).toEqual([sizes[2]]);
    const total = await vs.run(({ host }) => host.store.list().reduce((n, e) => n + e.bytes, 0));
    expect(total).toBeLessThanOrEqual(1024 * 1024);
    await vs.run(async ({ vscode }) => {
      await vscode.workspace.getConfiguration('spillway').update('storage.maxMegabytes', undefined, vscode.ConfigurationTarget.Workspace);
    });
  });

  it('sets a tool cap from the palette: tool, cap, target (checked in the page)', async () => {
    await vs.runCommand('Spillway: Set Cap for Tool');
    await vs.pickQuickItem('bash');
    await vs.pickQuickItem('unlimited');
    await vs.pickQuickItem('Workspace');
    const caps = await waitUntil(
      'spillway.toolCaps to be written',
      () =>
        vs.run(
          ({ vscode }) =>
            (vscode.workspace.getConfiguration('spillway').inspect('toolCaps')?.workspaceValue as Record<string, unknown>) ?? null,
        ),
      10_000,
      200,
    );
    expect(caps).toEqual({ bash: 'unlimited' });
    const r = await project(anthropicRequest('bash', 'toolu_palette', testLog(700)));
    expect(r.reductions).toHaveLength(0);
    await vs.run(async ({ vscode }) => {
      await vscode.workspace.getConfiguration('spillway').update('toolCaps', undefined, vscode.ConfigurationTarget.Workspace);
    });
  });

  it('clears stored outputs after confirmation (checked in the page)', async () => {
    await vs.run(async ({ vscode }) => {
      await vscode.workspace.getConfiguration('spillway').update('toolCaps', undefined, vscode.ConfigurationTarget.Workspace);
    });
    await storedLog();
    const before = await vs.run(({ host }) => host.store.list().length);
    expect(before).toBeGreaterThan(0);
    await vs.runCommand('Spillway: Clear Stored Outputs');
    const dialog = vs.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 10_000 });
    expect(await dialog.textContent()).toContain(`Delete all ${before} stored outputs`);
    await dialog.locator('.monaco-button', { hasText: 'Clear' }).first().click();
    await waitUntil('the store to be empty', () => vs.run(({ host }) => host.store.list().length === 0), 10_000, 200);
  });
});
