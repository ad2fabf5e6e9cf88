/**
 * Each turn shows what the model was sent in that turn, in a real VS Code, on the `npm start` demo
 * (a real 41-call Claude Code session). Under the default that session is reduced nowhere, so the
 * workspace is built with reductions on arrival (`ON_ARRIVAL_SETTINGS`, written to its settings),
 * where a turn offloads Read results to previews with a handle, a later turn clears the same results,
 * and a heredoc's input is replaced by a marker. The turns and calls are found from the replay by
 * what happened there. The preview turn's Projected pane and its Compare show the preview, not the
 * clear, and say the result was cleared later with a link to that turn; results, documents and
 * pickers are named by file or command (call id in the tooltip); a file the agent wrote through a
 * heredoc opens as the command's text, titled by the file.
 * Screenshots go to test-results/inspector/ and are attached to the run.
 *
 * Each test finds the panel on the demo session itself and closes the editors it opened, so any one
 * runs alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Frame } from 'playwright-core';
import { HARNESS_DIR, inspectorFrame, launch, ROOT, waitUntil, type Harness } from './harness';
import { DEMO_TRANSCRIPT, makeDemoWorkspace, ON_ARRIVAL_SETTINGS, type DemoWorkspace } from './demo';

let vs: Harness;
let demo: DemoWorkspace;
const TITLE = basename(DEMO_TRANSCRIPT);
const SHOTS = join(ROOT, 'test-results', 'inspector');
/** The first Read the replay offloads to a preview and clears later (in this session, sync_raw_logs.py, 9,287 chars), and those turns. */
let READ_CALL = '';
let PREVIEW_TURN = 0;
let CLEAR_TURN = 0;
/** The first Bash call whose input (a heredoc that writes sync_raw_logs.py) the replay replaces by a marker, and that turn. */
let HEREDOC_CALL = '';
let HEREDOC_TURN = 0;

/** Finds the turns by what the replay did in them: the test fails here, naming what is missing, if the demo lost it. */
function locateTurns(d: DemoWorkspace): void {
  const decided = d.replayed.decisions;
  const offload = decided.find(
    (x) => x.stage === 'offload' && x.tool === 'Read' && decided.some((y) => y.stage === 'clear' && y.callId === x.callId),
  );
  if (!offload) throw new Error('the demo replay has no Read offloaded to a preview and cleared later');
  READ_CALL = offload.callId;
  PREVIEW_TURN = offload.turn;
  CLEAR_TURN = decided.find((y) => y.stage === 'clear' && y.callId === offload.callId)!.turn;
  const input = decided.find((x) => x.stage === 'input' && x.tool === 'Bash');
  if (!input) throw new Error('the demo replay replaces no Bash input (heredoc) by a marker');
  HEREDOC_CALL = input.callId;
  HEREDOC_TURN = input.turn;
}

async function shot(name: string, annotate: (message: string, attachment: { path: string }) => Promise<unknown>): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  const path = join(SHOTS, `${name}.png`);
  // toasts (git's offer to open the parent repository) would cover the panel
  await vs.run(async ({ vscode }) => {
    await vscode.commands.executeCommand('notifications.clearAll');
  });
  await vs.page.screenshot({ path });
  await annotate(name, { path });
}

beforeAll(async () => {
  demo = await makeDemoWorkspace(join(HARNESS_DIR, 'runs', `turns-workspace-${process.pid}`), ROOT, ON_ARRIVAL_SETTINGS);
  locateTurns(demo);
  vs = await launch({ name: 'turns', workspace: demo.dir });
});

afterAll(async () => {
  await vs?.close();
});

/** The inspector's frame on the demo session, with turn `n` (1-based) chosen and its details shown. */
async function showTurn(n: number): Promise<Frame> {
  const active = await vs.run(({ vscode }) => vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? null);
  if (active !== 'Spillway Inspector') await vs.runCommand('Spillway: Open Inspector');
  const frame = await inspectorFrame(vs.page);
  const head = frame.locator('.session-head h1', { hasText: TITLE });
  if ((await head.count()) === 0) await frame.locator('button.session', { hasText: TITLE }).click();
  await head.waitFor({ timeout: 30_000 });
  // a panel that just opened chooses its first turn once the session has loaded: click until the choice holds
  await waitUntil(
    `turn ${n} to be shown`,
    async () => {
      const now = await frame
        .locator('.details h2')
        .textContent({ timeout: 1_000 })
        .catch(() => null);
      if (now === `Turn ${n}`) return true;
      await frame
        .locator(`.turn[data-turn="${n - 1}"]`)
        .click({ timeout: 2_000 })
        .catch(() => undefined);
      return false;
    },
    30_000,
    500,
  );
  return frame;
}

/** Expands the result (or input) row of `call` among the rows of `kind`, and waits for both sides. */
async function expand(frame: Frame, kind: string, call: string) {
  const row = frame.locator(`li.result[data-kind="${kind}"][data-call="${call}"]`);
  await row.waitFor();
  const head = row.locator('.result-head');
  if ((await head.getAttribute('aria-expanded')) !== 'true') await head.click();
  // a side has loaded once it counts its characters (or says why it cannot be shown)
  await row.locator('.pager-original').locator('.pager-count, .pager-error').first().waitFor();
  await row.locator('.pager-projected').locator('.pager-count, .pager-error').first().waitFor();
  return row;
}

/** Closes every editor tab but the inspector's: what a test opened. */
async function closeOtherTabs(): Promise<void> {
  await vs.run(async ({ vscode }) => {
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.label !== 'Spillway Inspector');
    await vscode.window.tabGroups.close(tabs);
  });
}

/** The diff editor Compare opened: its title and both sides' texts. */
async function openDiff() {
  let diff: { label: string; original: string; modified: string; path: string } | null = null;
  await waitUntil('the diff editor to open', async () => {
    diff = await vs.run(async ({ vscode }) => {
      for (const tab of vscode.window.tabGroups.all.flatMap((g) => g.tabs)) {
        const input = tab.input;
        if (!(input instanceof vscode.TabInputTextDiff) || input.modified.scheme !== 'spillway') continue;
        return {
          label: tab.label,
          original: (await vscode.workspace.openTextDocument(input.original)).getText(),
          modified: (await vscode.workspace.openTextDocument(input.modified)).getText(),
          path: input.modified.path,
        };
      }
      return null;
    });
    return diff !== null;
  });
  return diff!;
}

/** Waits until the diff editor has drawn both sides (for the screenshot). */
async function diffShown(): Promise<void> {
  const sides = vs.page.locator('.monaco-diff-editor .editor.original .view-line, .monaco-diff-editor .editor.modified .view-line');
  await waitUntil('the diff editor to draw its lines', async () => (await sides.count()) > 1);
}

describe('each turn shows what the model was sent in it', () => {
  it('shows in the turn that offloaded a Read its preview, not the later clear, named by its file', async ({ annotate }) => {
    expect(demo.replayed.previewTurns).toContain(PREVIEW_TURN);
    expect(demo.replayed.clearTurns).toContain(CLEAR_TURN);
    expect(CLEAR_TURN).toBeGreaterThan(PREVIEW_TURN);
    const frame = await showTurn(PREVIEW_TURN);
    const row = await expand(frame, 'own', READ_CALL);
    // named by the file it read, the call id in the tooltip
    const name = row.locator('.result-call');
    expect(await name.textContent()).toMatch(/sync_raw_logs\.py$/);
    expect(await name.getAttribute('title')).toContain(`call ${READ_CALL}`);
    // the badge says what the model was sent, in the glossary's word; the stage that made it is its class
    expect(await row.locator('.stage').textContent()).toBe('preview');
    expect(await row.locator('.stage').getAttribute('class')).toContain('stage-offload');
    const projected = row.locator('.pager-projected');
    expect(await projected.getAttribute('aria-label')).toBe(`Projected (what the model was sent in turn ${PREVIEW_TURN})`);
    const text = (await projected.locator('.pager-text').textContent()) ?? '';
    // the preview: the file's start and end with the handle, 1,227 chars, not the 118-char clear notice
    const handle = (await row.getAttribute('data-handle'))!;
    expect(text).toContain(handle);
    expect(text.length).toBeGreaterThan(1_000);
    expect(text).not.toMatch(/cleared/i);
    // and it says the result was cleared later, with a link to that turn
    expect(await row.locator('[data-testid="result-later"]').textContent()).toContain(`cleared in turn ${CLEAR_TURN}`);
    // the row at the top of the panel, its two sides below it
    await row.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shot('preview-turn-projected-shows-the-preview', annotate);
  });

  it("compares the preview turn's result with the preview it was sent there, beside the inspector", async ({ annotate }) => {
    const frame = await showTurn(PREVIEW_TURN);
    const row = await expand(frame, 'own', READ_CALL);
    const pane = (await row.locator('.pager-projected .pager-text').textContent()) ?? '';
    try {
      await row.getByRole('button', { name: 'Compare original and projected' }).click();
      const diff = await openDiff();
      expect(diff.modified).toBe(pane);
      expect(diff.modified).not.toMatch(/cleared/i);
      expect(diff.label).toMatch(new RegExp(`sync_raw_logs\\.py: original ↔ projected \\(offload, turn ${PREVIEW_TURN}\\)`));
      // the original side is the file at its own line numbers, without Read's `N→` prefixes
      expect(diff.original).not.toMatch(/^ *\d+→/m);
      // the marker is named in the document's path; the calls that returned this same file are listed there too
      expect(diff.path).toMatch(/\/projected\/m-[0-9a-f]{12}\//);
      expect(diff.path).toContain(READ_CALL);
      await diffShown();
      await shot('preview-turn-compare-shows-the-preview', annotate);
    } finally {
      await closeOtherTabs();
    }
  });

  it('links the later clear to its turn, which shows and compares the clear notice', async ({ annotate }) => {
    const frame = await showTurn(PREVIEW_TURN);
    const row = await expand(frame, 'own', READ_CALL);
    const preview = (await row.locator('.pager-projected .pager-text').textContent()) ?? '';
    await row.locator('[data-testid="result-later"] button.link').click();
    await frame.locator('.details h2', { hasText: new RegExp(`^Turn ${CLEAR_TURN}$`) }).waitFor();
    const cleared = await expand(frame, 'decided', READ_CALL);
    expect(await cleared.locator('.stage').textContent()).toBe('clear');
    expect(await cleared.locator('.stage').getAttribute('class')).toContain('stage-clear');
    const text = (await cleared.locator('.pager-projected .pager-text').textContent()) ?? '';
    expect(text).not.toBe(preview);
    expect(text.length).toBeLessThan(200);
    expect(text).toContain((await cleared.getAttribute('data-handle'))!);
    try {
      await cleared.getByRole('button', { name: 'Compare original and projected' }).click();
      const diff = await openDiff();
      expect(diff.modified).toBe(text);
      expect(diff.label).toContain(`(clear, turn ${CLEAR_TURN})`);
      await diffShown();
      await shot('clear-turn-shows-the-clear', annotate);
    } finally {
      await closeOtherTabs();
    }
  });

  it('names stored outputs in the pickers by tool and file or command, says input, and lists each marker of an output', async ({
    annotate,
  }) => {
    await vs.runCommand('Spillway: Open Stored Output');
    const rows = vs.page.locator('.quick-input-list .monaco-list-row:visible');
    await rows.first().waitFor({ state: 'visible' });
    const input = vs.page.locator('.quick-input-widget .quick-input-box input');
    await input.fill('sync_raw_logs');
    await waitUntil('the rows of sync_raw_logs.py', async () => (await rows.count()) >= 2);
    const texts = await rows.allTextContents();
    // the Read of the file, with its size and lines, and the heredoc that wrote it, as an input
    expect(
      texts.some((t) => /^Read · .*sync_raw_logs\.py\s*9\.3k chars, [\d,]+ lines/.test(t)),
      texts.join('\n'),
    ).toBe(true);
    // sized as the text it opens as, line by line, not as one line of JSON
    expect(
      texts.some((t) => /^Bash · input · .*sync_raw_logs\.py\s*[\d.]+k chars, [1-9]\d\d+ lines/.test(t)),
      texts.join('\n'),
    ).toBe(true);
    expect(texts.every((t) => !/^\w+ · toolu_/.test(t))).toBe(true);
    await shot('open-stored-output-names-files', annotate);
    await vs.page.keyboard.press('Escape');

    await vs.runCommand('Spillway: Compare Original and Projected');
    await rows.first().waitFor({ state: 'visible' });
    await input.fill('sync_raw_logs');
    await waitUntil('the markers of sync_raw_logs.py', async () => (await rows.count()) >= 2);
    const markers = await rows.allTextContents();
    expect(markers.some((t) => t.startsWith('Read · ') && t.includes(`offload, turn ${PREVIEW_TURN}`))).toBe(true);
    expect(markers.some((t) => t.startsWith('Read · ') && t.includes(`clear, turn ${CLEAR_TURN}`))).toBe(true);
    await shot('compare-picker-lists-each-marker', annotate);
    await vs.page.keyboard.press('Escape');
  });

  it('opens a file the agent wrote through a heredoc as the command with the file in it, titled by the file', async ({ annotate }) => {
    const frame = await showTurn(HEREDOC_TURN);
    const row = await expand(frame, 'input', HEREDOC_CALL);
    expect(await row.locator('.result-call').textContent()).toMatch(/sync_raw_logs\.py$/);
    const original = (await row.locator('.pager-original .pager-text').textContent()) ?? '';
    expect(original.startsWith('cat > "$HOME/Documents/M-Claude/scripts/sync_raw_logs.py"')).toBe(true);
    try {
      await row.getByRole('button', { name: 'Open stored output' }).click();
      let opened: { title: string; path: string; languageId: string; lines: number; first: string } | null = null;
      await waitUntil('the heredoc input to open', async () => {
        opened = await vs.run(({ vscode }) => {
          const e = vscode.window.activeTextEditor;
          if (!e || e.document.uri.scheme !== 'spillway') return null;
          return {
            title: e.document.uri.path.split('/').pop()!,
            path: e.document.uri.path,
            languageId: e.document.languageId,
            lines: e.document.lineCount,
            first: e.document.lineAt(0).text,
          };
        });
        return opened !== null;
      });
      const doc = opened!;
      expect(doc.title).toBe('sync_raw_logs.py');
      expect(doc.languageId).toBe('python');
      expect(doc.lines).toBeGreaterThan(100);
      expect(doc.first).toBe(`cat > "$HOME/Documents/M-Claude/scripts/sync_raw_logs.py" << 'SCRIPT_EOF'`);
      // the tooltip (the path) says it is an input, and of which call
      expect(doc.path).toContain(`/input · ${HEREDOC_CALL}/`);
      await vs.waitForTab('sync_raw_logs.py');
      await shot('heredoc-input-opens-as-text', annotate);
    } finally {
      await closeOtherTabs();
    }
  });
});
