/**
 * The quick-start demo workspace (`npm start`) in a real VS Code: its settings point Spillway at
 * the store the replayed session filled, and every output and projection in it opens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { HARNESS_DIR, inspectorFrame, launch, waitUntil, type Harness } from './harness';
import { makeDemoWorkspace, type DemoWorkspace } from './demo';
import { ROOT } from './harness';
import { failing } from '../support/expect';

let vs: Harness;
let demo: DemoWorkspace;

beforeAll(async () => {
  demo = await makeDemoWorkspace(join(HARNESS_DIR, 'runs', `demo-workspace-${process.pid}`), ROOT);
  vs = await launch({ name: 'demo', workspace: demo.dir });
});

afterAll(async () => {
  await vs?.close();
});

describe('the demo workspace', () => {
  let frame: Frame;

  it('opens on the inspector showing its replayed session, with no command typed', async () => {
    expect(demo.replayed?.calls).toBe(31);
    frame = await inspectorFrame(vs.page);
    await frame.locator('.session-head h1', { hasText: 'transcript.traj.json' }).waitFor({ timeout: 30_000 });
    await frame.locator('.totals', { hasText: '31 turns' }).waitFor();
    // money first: cost under caching at both price models, then the tokens
    expect(await frame.locator('[data-testid="totals-cost"]').textContent()).toMatch(
      /^Cost under caching Anthropic [−+±][\d.]+%( \([−+±][\d.]+% with read-backs\))? · OpenAI [−+±][\d.]+%( \([−+±][\d.]+% with read-backs\))?/,
    );
    // the list says the real turn count of the kept replay, and the session is selected
    expect(await frame.locator('button.session.selected').textContent()).toMatch(/31 turns/);
    // it opens on a turn where something happened, not on turn 1
    const heading = await frame.locator('.details h2').textContent();
    expect(heading).not.toBe('Turn 1');
  });

  it('shows in the status bar what the sessions saved, tokens and cost, and opens the inspector from it', async () => {
    const item = vs.page.locator('.statusbar-item', { hasText: 'Spillway:' }).filter({ hasText: 'tokens saved' }).first();
    await item.waitFor({ state: 'visible' });
    const text = (await item.textContent()) ?? '';
    const saved = demo.replayed!.originalTokens - demo.replayed!.projectedTokens;
    expect(text).toContain(`${saved.toLocaleString('en-US')} tokens saved`);
    expect(text).toMatch(/cost −[\d.]+%/);
    // put another editor in front, then the status bar brings the inspector back
    await vs.run(
      async ({ vscode }, file) => vscode.window.showTextDocument(vscode.Uri.file(file), { viewColumn: vscode.ViewColumn.Active }),
      join(demo.dir, 'README.md'),
    );
    await waitUntil(
      'the README in front',
      async () => (await vs.run(({ vscode }) => vscode.window.tabGroups.activeTabGroup.activeTab?.label)) === 'README.md',
    );
    await item.click();
    await waitUntil(
      'the inspector in front',
      async () => (await vs.run(({ vscode }) => vscode.window.tabGroups.activeTabGroup.activeTab?.label)) === 'Spillway Inspector',
    );
    frame = await inspectorFrame(vs.page);
  });

  it('selects the turn under the pointer when the chart is clicked', async () => {
    const chart = frame.locator('[data-testid="chart"]');
    const box = (await chart.boundingBox())!;
    // 31 calls, one column each: the last column is turn 31, the middle one turn 16
    await chart.click({ position: { x: box.width - 2, y: box.height / 2 } });
    await frame.locator('.details h2', { hasText: 'Turn 31' }).waitFor();
    await chart.click({ position: { x: box.width / 2, y: box.height / 2 } });
    await frame.locator('.details h2', { hasText: 'Turn 16' }).waitFor();
    expect(await frame.locator('.timeline').getAttribute('aria-activedescendant')).toBe('turn-15');
  });

  it('moves through turns and results with the keyboard', async () => {
    await frame.locator('.timeline').focus();
    await vs.page.keyboard.press('Home');
    await frame.locator('.details h2', { hasText: 'Turn 1' }).waitFor();
    await vs.page.keyboard.press('ArrowDown');
    await frame.locator('.details h2', { hasText: 'Turn 2' }).waitFor();
    await vs.page.keyboard.press('End');
    await frame.locator('.details h2', { hasText: 'Turn 31' }).waitFor();
    // Tab reaches the results; Enter expands one, and it shows original and projection side by side
    const head = frame.locator('.result-head').first();
    await head.focus();
    await vs.page.keyboard.press('Enter');
    await waitUntil('the result to expand', async () => (await head.getAttribute('aria-expanded')) === 'true');
    await frame.locator('.pager-original .pager-text').waitFor();
    await frame.locator('.pager-projected .pager-text').waitFor();
  });

  it('holds a few stored outputs from a replayed session', () => {
    expect(demo.outputs).toBeGreaterThanOrEqual(3);
    expect(demo.projections).toBeGreaterThanOrEqual(3);
  });

  it('points Spillway at its store through spillway.storage.folder', async () => {
    const state = await vs.run(({ host }) => ({
      storeDir: host.storeDir,
      outputs: host.store.list().length,
      records: host.recordsNewestFirst().length,
      problems: host.problems,
    }));
    expect(state).toEqual({ storeDir: demo.storeDir, outputs: demo.outputs, records: demo.outputs, problems: [] });
  });

  it('lists every stored output in Open Stored Output… (checked in the page)', async () => {
    await vs.runCommand('Spillway: Open Stored Output');
    const rows = vs.page.locator('.quick-input-list .monaco-list-row:visible');
    await rows.first().waitFor({ state: 'visible' });
    const texts = await rows.allTextContents();
    expect(texts.length).toBe(Math.min(demo.outputs, texts.length));
    expect(
      failing(texts, (t) => t.startsWith('bash · call_')),
      'elements that break the rule',
    ).toEqual([]);
    await vs.page.keyboard.press('Escape');
  });

  it('opens the output of `cat some.py` as Python and compares it with its marker', async () => {
    const r = await vs.run(async ({ vscode, api, host }) => {
      const record = host.recordsNewestFirst().find((x) => x.sourcePath?.endsWith('.py'));
      if (!record) return null;
      const doc = await vscode.workspace.openTextDocument(api.documentUri(record.handle));
      await vscode.commands.executeCommand('spillway.compareOriginalAndProjected', record.handle);
      const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
      const modified = input instanceof vscode.TabInputTextDiff ? (await vscode.workspace.openTextDocument(input.modified)).getText() : '';
      return { languageId: doc.languageId, handle: record.handle, modified, original: doc.getText().length };
    });
    expect(r).not.toBeNull();
    expect(r!.languageId).toBe('python');
    expect(r!.modified).toContain(r!.handle);
    expect(r!.modified.length).toBeLessThan(r!.original);
  });
});
