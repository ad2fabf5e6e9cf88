/**
 * The quick-start demo workspace (`npm start`) in a real VS Code: its settings point Spillway at
 * the store the replayed session filled, the inspector opens on that session (a real 54-call Claude
 * Code session under the default settings) with the figures the replay gave, and every output and
 * projection in it opens. The expected figures come from the demo's own replay (`demo.replayed`),
 * the same numbers `spillway replay` prints for the session.
 *
 * Each test finds the panel on the demo session itself and closes the editors it opened, so any one
 * runs alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Frame } from 'playwright-core';
import { HARNESS_DIR, inspectorFrame, launch, waitUntil, type Harness } from './harness';
import { DEMO_TRANSCRIPT, makeDemoWorkspace, type DemoWorkspace } from './demo';
import { ROOT } from './harness';
import { failing } from '../support/expect';
import { signedPercent } from '../../webview/format';
import { formatInt } from '../../src/engine/format-number';

let vs: Harness;
let demo: DemoWorkspace;
const TITLE = basename(DEMO_TRANSCRIPT);

beforeAll(async () => {
  demo = await makeDemoWorkspace(join(HARNESS_DIR, 'runs', `demo-workspace-${process.pid}`), ROOT);
  vs = await launch({ name: 'demo', workspace: demo.dir });
});

afterAll(async () => {
  await vs?.close();
});

/** The inspector's frame showing the demo session (brought to the front from the palette when it is not). */
async function showDemo(): Promise<Frame> {
  const active = await vs.run(({ vscode }) => vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? null);
  if (active !== 'Spillway Inspector') await vs.runCommand('Spillway: Open Inspector');
  const frame = await inspectorFrame(vs.page);
  const head = frame.locator('.session-head h1', { hasText: TITLE });
  if ((await head.count()) === 0) await frame.locator('button.session', { hasText: TITLE }).click();
  await head.waitFor({ timeout: 30_000 });
  await frame.locator('.timeline .vrow').first().waitFor();
  // a panel just opened chooses its first turn once the session has loaded, which would undo a
  // click made before: wait until the chosen turn has stayed the same for a second
  let last = '';
  await waitUntil(
    'the panel to settle on a turn',
    async () => {
      const now =
        (await frame
          .locator('.details h2')
          .textContent({ timeout: 1_000 })
          .catch(() => null)) ?? '';
      const settled = now !== '' && now === last;
      last = now;
      return settled;
    },
    30_000,
    1_000,
  );
  return frame;
}

/** Closes every editor tab but the inspector's: what a test opened. */
async function closeOtherTabs(): Promise<void> {
  await vs.run(async ({ vscode }) => {
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label !== 'Spillway Inspector');
    await vscode.window.tabGroups.close(tabs);
  });
}

describe('the demo workspace', () => {
  it('replays a long real session where the default saves: cost down at both price models, few misses', () => {
    // `spillway replay test/fixtures/sessions/long/claude-code/session-share__general-tool-calls.jsonl` gives the same figures
    expect(demo.replayed.calls).toBe(54);
    for (const [model, c] of Object.entries(demo.replayed.cost)) expect(c.projected, `${model} cost`).toBeLessThan(c.raw);
    expect(demo.replayed.projectedTokens).toBeLessThan(demo.replayed.originalTokens);
    expect(demo.replayed.missRate).toBeLessThan(0.05);
    expect(demo.replayed.clearTurns.length).toBeGreaterThan(0);
  });

  it('opens on the inspector showing its replayed session, with no command typed', async () => {
    const calls = demo.replayed.calls;
    const frame = await inspectorFrame(vs.page);
    await frame.locator('.session-head h1', { hasText: TITLE }).waitFor({ timeout: 30_000 });
    await frame.locator('.totals', { hasText: `${calls} turns` }).waitFor();
    // money first: cost under caching at both price models, as the replay priced them, then the tokens
    const cost = (await frame.locator('[data-testid="totals-cost"]').textContent()) ?? '';
    expect(cost).toMatch(
      /^Cost under caching Anthropic [−+±][\d.]+%( \([−+±][\d.]+% with read-backs\))? · OpenAI [−+±][\d.]+%( \([−+±][\d.]+% with read-backs\))?/,
    );
    const { anthropic, openai } = demo.replayed.cost;
    expect(cost).toContain(`Anthropic ${signedPercent(anthropic!.projected - anthropic!.raw, anthropic!.raw)}`);
    expect(cost).toContain(`OpenAI ${signedPercent(openai!.projected - openai!.raw, openai!.raw)}`);
    // the list says the real turn count of the kept replay, and the session is selected
    expect(await frame.locator('button.session.selected').textContent()).toMatch(new RegExp(`${calls} turns`));
    // it opens on a turn where something happened, not on turn 1
    const heading = await frame.locator('.details h2').textContent();
    expect(heading).not.toBe('Turn 1');
  });

  it('marks the turns that matter: the clears and the missed identifiers the replay found', async () => {
    const frame = await showDemo();
    const marks = async (kind: string) => frame.locator(`[data-testid="marks-${kind}"] button`).allTextContents();
    expect(await marks('clears')).toEqual(demo.replayed.clearTurns.slice(0, 12).map((n) => `#${n}`));
    expect(await marks('missed')).toEqual(demo.replayed.missedTurns.slice(0, 12).map((n) => `#${n}`));
    expect((await marks('savings')).length).toBeGreaterThan(0);
  });

  it('shows in the status bar what the sessions saved, tokens and cost, and opens the inspector from it', async () => {
    const item = vs.page.locator('.statusbar-item', { hasText: 'Spillway:' }).filter({ hasText: 'tokens saved' }).first();
    await item.waitFor({ state: 'visible' });
    const text = (await item.textContent()) ?? '';
    const saved = demo.replayed.originalTokens - demo.replayed.projectedTokens;
    expect(text).toContain(`${formatInt(saved)} tokens saved`);
    expect(text).toMatch(/cost −[\d.]+%/);
    // the status bar's cost is Anthropic's, over the sessions: here the demo's alone
    const a = demo.replayed.cost['anthropic']!;
    expect(text).toContain(`cost −${(((a.raw - a.projected) / a.raw) * 100).toFixed(1)}%`);
    // put another editor in front, then the status bar brings the inspector back
    try {
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
    } finally {
      await closeOtherTabs();
    }
  });

  it('selects the turn under the pointer when the chart is clicked', async () => {
    const frame = await showDemo();
    const calls = demo.replayed.calls;
    const chart = frame.locator('[data-testid="chart"]');
    const box = (await chart.boundingBox())!;
    // one column per call, the first at the left edge and the last at the right: the last column is the last turn
    await chart.click({ position: { x: box.width - 2, y: box.height / 2 } });
    await frame.locator('.details h2', { hasText: `Turn ${calls}` }).waitFor();
    // and the middle turn's column is where its share of the width says
    const middle = Math.ceil(calls / 2);
    await chart.click({ position: { x: ((middle - 1) / (calls - 1)) * box.width, y: box.height / 2 } });
    await frame.locator('.details h2', { hasText: `Turn ${middle}` }).waitFor();
    expect(await frame.locator('.timeline').getAttribute('aria-activedescendant')).toBe(`turn-${middle - 1}`);
  });

  it('moves through turns and results with the keyboard', async () => {
    const frame = await showDemo();
    // a click in the panel (on the mark of the last clear) gives it the keyboard, as a person's would
    const clear = demo.replayed.clearTurns.at(-1)!;
    await frame.getByRole('button', { name: `Clears: turn ${clear}` }).click();
    await frame.locator('.details h2', { hasText: new RegExp(`^Turn ${clear}$`) }).waitFor();
    await frame.locator('.timeline').focus();
    await vs.page.keyboard.press('Home');
    await frame.locator('.details h2', { hasText: /^Turn 1$/ }).waitFor();
    await vs.page.keyboard.press('ArrowDown');
    await frame.locator('.details h2', { hasText: /^Turn 2$/ }).waitFor();
    await vs.page.keyboard.press('End');
    await frame.locator('.details h2', { hasText: new RegExp(`^Turn ${demo.replayed.calls}$`) }).waitFor();
    // Tab reaches the results; Enter expands one, and it shows original and projection side by side
    const head = frame.locator('.result-head').first();
    await head.focus();
    if ((await head.getAttribute('aria-expanded')) === 'true') {
      // still expanded from an earlier run in this window: Enter folds it first
      await vs.page.keyboard.press('Enter');
      await waitUntil('the result to fold', async () => (await head.getAttribute('aria-expanded')) === 'false');
    }
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
    // each row is titled by the tool and call of a reduction the replay recorded
    const dir = join(demo.storeDir, 'projected');
    const labels = readdirSync(dir).map((n) => {
      const r = JSON.parse(readFileSync(join(dir, n), 'utf8')) as { tool: string; callId: string };
      return `${r.tool} · ${r.callId}`;
    });
    expect(labels.length).toBe(demo.outputs);
    await vs.runCommand('Spillway: Open Stored Output');
    const rows = vs.page.locator('.quick-input-list .monaco-list-row:visible');
    await rows.first().waitFor({ state: 'visible' });
    const texts = await rows.allTextContents();
    expect(texts.length).toBe(Math.min(demo.outputs, texts.length));
    expect(
      failing(texts, (t) => labels.some((l) => t.startsWith(l))),
      'rows that name no recorded reduction',
    ).toEqual([]);
    await vs.page.keyboard.press('Escape');
  });

  it('opens the output of a Python file the agent read as Python and compares it with its marker', async () => {
    try {
      const r = await vs.run(async ({ vscode, api, host }) => {
        const record = host.recordsNewestFirst().find((x) => x.sourcePath?.endsWith('.py'));
        if (!record) return null;
        const doc = await vscode.workspace.openTextDocument(api.documentUri(record.handle));
        await vscode.commands.executeCommand('spillway.compareOriginalAndProjected', record.handle);
        const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
        const modified =
          input instanceof vscode.TabInputTextDiff ? (await vscode.workspace.openTextDocument(input.modified)).getText() : '';
        return { languageId: doc.languageId, handle: record.handle, modified, original: doc.getText().length };
      });
      expect(r).not.toBeNull();
      expect(r!.languageId).toBe('python');
      expect(r!.modified).toContain(r!.handle);
      expect(r!.modified.length).toBeLessThan(r!.original);
    } finally {
      await closeOtherTabs();
    }
  });
});
