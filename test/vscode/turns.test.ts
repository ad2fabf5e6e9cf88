/**
 * Each turn shows what the model was sent in that turn, in a real VS Code, on the `npm start` demo
 * under the default settings (a real 64-call Claude Code sub-agent session), where a turn offloads a
 * result to a preview with a handle and a later turn clears the same result. The turns, calls and
 * names are found from the replay and the transcript, by what happened there. The preview turn's
 * Projected pane and its Compare show the preview, not the clear, and say the result was cleared later
 * with a link to that turn; results, documents and pickers are named by file or command (call id in
 * the tooltip).
 *
 * A turn's details list file inputs whatever replaced them (on arrival, or a clear with their call's
 * result: the default); the second part opens another window on a session with a heredoc
 * (`INPUTS_FIXTURE`) under `INPUTS_ON_ARRIVAL`, where the heredoc's input is replaced in a turn of its
 * own: a file the agent wrote through a heredoc opens as the command's text, titled by the file, and
 * the pickers say "input".
 * Screenshots go to test-results/inspector/ and are attached to the run.
 *
 * Each test finds the panel on its session itself and closes the editors it opened, so any one runs
 * alone with -t.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { HARNESS_DIR, inspectorFrame, inspectorSettled, launch, ROOT, waitUntil, type Harness } from './harness';
import { INPUTS_FIXTURE, INPUTS_ON_ARRIVAL, makeDemoWorkspace, type DemoWorkspace } from './demo';
import { callSources, sourceLabel } from '../../src/engine/names';
import { sessionName } from '../../src/replay/session-title';

let vs: Harness;
let demo: DemoWorkspace;

/** What the calls of a JSONL transcript name (file, command, heredoc writes), by call id. */
function sourcesOf(file: string) {
  const lines: unknown[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n'))
    try {
      lines.push(JSON.parse(line));
    } catch {
      /* not a record */
    }
  return callSources(lines);
}

/** The inspector's frame on the window's session, with turn `n` (1-based) chosen and its details shown. */
async function showTurn(n: number): Promise<Frame> {
  // named by its task, project and day (src/replay/session-title.ts), not its file name
  const title = sessionName(demo.replayed.path);
  const active = await vs.run(({ vscode }) => vscode.window.tabGroups.activeTabGroup.activeTab?.label ?? null);
  if (active !== 'Spillway Inspector') await vs.runCommand('Spillway: Open Inspector');
  const frame = await inspectorFrame(vs.page);
  if ((await frame.locator('.session-head h1', { hasText: title }).count()) === 0)
    await frame.locator('button.session', { hasText: title }).click();
  // the session shown with its turn chosen and no open in flight: a click from here holds
  await inspectorSettled(frame, title);
  if ((await frame.locator('.details h2').textContent()) !== `Turn ${n}`) {
    // the timeline is a virtual list: the row of turn n is rendered once scrolled near it
    await frame.locator('.vlist.timeline').evaluate((el, top) => (el.scrollTop = top), Math.max(0, (n - 3) * 44));
    await frame.locator(`.turn[data-turn="${n - 1}"]`).click();
  }
  await frame.locator('.details h2', { hasText: new RegExp(`^Turn ${n}$`) }).waitFor();
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

describe('each turn shows what the model was sent in it (the demo, default settings)', () => {
  /** The first result the replay offloads to a preview (over its cap) and clears later, and those turns. */
  let CALL = '';
  let TOOL = '';
  /** what the row is named by: the file or command its call named, from the transcript */
  let NAME = '';
  let PREVIEW_TURN = 0;
  let CLEAR_TURN = 0;

  beforeAll(async () => {
    // no settings of its own: the demo as `npm start` makes it
    demo = await makeDemoWorkspace(join(HARNESS_DIR, 'runs', `turns-workspace-${process.pid}`), ROOT);
    // the turns, by what the replay did in them: fails here, naming what is missing, if the demo lost it
    const decided = demo.replayed.decisions;
    const offload = decided.find(
      (x) => x.stage === 'offload' && / cap of /.test(x.reason) && decided.some((y) => y.stage === 'clear' && y.callId === x.callId),
    );
    if (!offload) throw new Error('the demo replay has no result offloaded to a preview and cleared later');
    CALL = offload.callId;
    TOOL = offload.tool;
    PREVIEW_TURN = offload.turn;
    CLEAR_TURN = decided.find((y) => y.stage === 'clear' && y.callId === CALL)!.turn;
    const name = sourceLabel(sourcesOf(demo.replayed.path).get(CALL), 'result');
    if (!name) throw new Error(`the call ${CALL} names no file or command in the demo transcript`);
    NAME = name;
    vs = await launch({ name: 'turns', workspace: demo.dir });
  });

  afterAll(async () => {
    await vs?.close();
  });

  it('shows in the turn that offloaded a result its preview, not the later clear, named by its file or command', async ({ annotate }) => {
    expect(demo.replayed.previewTurns).toContain(PREVIEW_TURN);
    expect(demo.replayed.clearTurns).toContain(CLEAR_TURN);
    expect(CLEAR_TURN).toBeGreaterThan(PREVIEW_TURN);
    const frame = await showTurn(PREVIEW_TURN);
    const row = await expand(frame, 'own', CALL);
    // named by the file or command of its call, the call id in the tooltip
    const name = row.locator('.result-call');
    expect(await name.textContent()).toBe(NAME);
    expect(await name.getAttribute('title')).toContain(`call ${CALL}`);
    // the badge says what the model was sent, in the glossary's word; the stage that made it is its class
    expect(await row.locator('.stage').textContent()).toBe('preview');
    expect(await row.locator('.stage').getAttribute('class')).toContain('stage-offload');
    const projected = row.locator('.pager-projected');
    expect(await projected.getAttribute('aria-label')).toBe(`Projected (what the model was sent in turn ${PREVIEW_TURN})`);
    const text = (await projected.locator('.pager-text').textContent()) ?? '';
    // the preview: the output's start and end with the handle (about 1,200 chars), not the ~120-char clear notice
    const handle = (await row.getAttribute('data-handle'))!;
    expect(text).toContain(handle);
    expect(text.length).toBeGreaterThan(500);
    expect(text).not.toMatch(/cleared/i);
    // and it says the result was cleared later, with a link to that turn
    expect(await row.locator('[data-testid="result-later"]').textContent()).toContain(`cleared in turn ${CLEAR_TURN}`);
    // the row at the top of the panel, its two sides below it
    await row.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await vs.reportShot('preview-turn-projected-shows-the-preview', annotate);
  });

  it("compares the preview turn's result with the preview it was sent there, beside the inspector", async ({ annotate }) => {
    const frame = await showTurn(PREVIEW_TURN);
    const row = await expand(frame, 'own', CALL);
    const pane = (await row.locator('.pager-projected .pager-text').textContent()) ?? '';
    try {
      await row.getByRole('button', { name: 'Compare original and projected' }).click();
      const diff = await openDiff();
      expect(diff.modified).toBe(pane);
      expect(diff.modified).not.toMatch(/cleared/i);
      expect(diff.label).toContain(`${NAME}: original ↔ projected (offload, turn ${PREVIEW_TURN})`);
      // the original side is the output as the tool returned it (a file read: at its own line numbers, without Read's `N→` prefixes)
      expect(diff.original.length).toBeGreaterThan(diff.modified.length);
      expect(diff.original).not.toMatch(/^ *\d+→/m);
      // the marker is named in the document's path; the calls that returned this same output are listed there too
      expect(diff.path).toMatch(/\/projected\/m-[0-9a-f]{12}\//);
      expect(diff.path).toContain(CALL);
      await diffShown();
      await vs.reportShot('preview-turn-compare-shows-the-preview', annotate);
    } finally {
      await closeOtherTabs();
    }
  });

  it('links the later clear to its turn, which shows and compares the clear notice', async ({ annotate }) => {
    const frame = await showTurn(PREVIEW_TURN);
    const row = await expand(frame, 'own', CALL);
    const preview = (await row.locator('.pager-projected .pager-text').textContent()) ?? '';
    await row.locator('[data-testid="result-later"] button.link').click();
    await frame.locator('.details h2', { hasText: new RegExp(`^Turn ${CLEAR_TURN}$`) }).waitFor();
    const cleared = await expand(frame, 'decided', CALL);
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
      await vs.reportShot('clear-turn-shows-the-clear', annotate);
    } finally {
      await closeOtherTabs();
    }
  });

  it('names stored outputs in the pickers by tool and file or command, and lists each marker of an output', async ({ annotate }) => {
    const rows = await vs.pickerRows('Spillway: Open Stored Output');
    const all = await rows.allTextContents();
    expect(
      all.every((t) => !/^\w+ · toolu_/.test(t)),
      all.join('\n'),
    ).toBe(true);
    // a command is named by what it does, not by the `cd /Users/…/worktree &&` the demo's agent starts it
    // with (the row's detail keeps the command as written, so typing any of it finds the row)
    expect(all.filter((t) => /^\w+ · \$ cd /.test(t))).toEqual([]);
    // typing what the command does finds it (the picker shows only the first rows until one types)
    const input = vs.page.locator('.quick-input-widget .quick-input-box input');
    await input.fill('go test');
    const goTest = await waitUntil('a row for the go test run', async () => {
      const shown = await rows.allTextContents();
      return shown.some((t) => t.startsWith('Bash · $ go test ./pkg/export')) ? shown : undefined;
    });
    expect(goTest.filter((t) => /^\w+ · \$ cd /.test(t))).toEqual([]);
    // the row of the output (its detail lists the call): named by tool and file or command, with its size and lines
    await input.fill(CALL);
    await waitUntil(`the row of ${CALL}`, async () => (await rows.count()) === 1);
    const text = (await rows.first().textContent()) ?? '';
    expect(text.startsWith(`${TOOL} · `), text).toBe(true);
    expect(text).toContain(NAME);
    expect(text).toMatch(/[\d.]+k chars, [\d,]+ lines?/);
    await vs.reportShot('open-stored-output-names-files', annotate);
    await vs.page.keyboard.press('Escape');

    // through pickerRows, like Open Stored Output's: a pick can be closed under us as it opens (harness.ts)
    await vs.pickerRows('Spillway: Compare Original and Projected');
    await input.fill(CALL);
    await waitUntil(`the markers of ${CALL}`, async () => (await rows.count()) >= 2);
    const markers = await rows.allTextContents();
    expect(markers.some((t) => t.startsWith(`${TOOL} · `) && t.includes(`offload, turn ${PREVIEW_TURN}`))).toBe(true);
    expect(markers.some((t) => t.startsWith(`${TOOL} · `) && t.includes(`clear, turn ${CLEAR_TURN}`))).toBe(true);
    await vs.reportShot('compare-picker-lists-each-marker', annotate);
    await vs.page.keyboard.press('Escape');
  });
});

describe('file inputs replaced on arrival (a non-default mechanism, on a session with a heredoc)', () => {
  /** The first Bash call whose input (a heredoc that writes sync_raw_logs.py) the replay replaces by a marker, and that turn. */
  let HEREDOC_CALL = '';
  let HEREDOC_TURN = 0;

  beforeAll(async () => {
    // this window asks for file inputs on arrival, on a session whose agent wrote a file through a
    // heredoc, to test how an input is shown (named, opened as text, "input" in the pickers)
    demo = await makeDemoWorkspace(join(HARNESS_DIR, 'runs', `turns-inputs-${process.pid}`), ROOT, INPUTS_ON_ARRIVAL, INPUTS_FIXTURE);
    const input = demo.replayed.decisions.find((x) => x.stage === 'input' && x.tool === 'Bash');
    if (!input) throw new Error(`the replay of ${INPUTS_FIXTURE} replaces no Bash input (heredoc) by a marker`);
    HEREDOC_CALL = input.callId;
    HEREDOC_TURN = input.turn;
    vs = await launch({ name: 'turns-inputs', workspace: demo.dir });
  });

  afterAll(async () => {
    await vs?.close();
  });

  it('says input in Open Stored Output, sized as the text it opens as', async ({ annotate }) => {
    const rows = await vs.pickerRows('Spillway: Open Stored Output');
    const input = vs.page.locator('.quick-input-widget .quick-input-box input');
    await input.fill(HEREDOC_CALL);
    await waitUntil(`the row of ${HEREDOC_CALL}`, async () => (await rows.count()) === 1);
    const text = (await rows.first().textContent()) ?? '';
    // the heredoc that wrote the file, as an input, sized line by line, not as one line of JSON
    expect(text).toMatch(/^Bash · input · .*sync_raw_logs\.py\s*[\d.]+k chars, [1-9]\d\d+ lines/);
    await vs.reportShot('open-stored-output-says-input', annotate);
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
      await vs.reportShot('heredoc-input-opens-as-text', annotate);
    } finally {
      await closeOtherTabs();
    }
  });
});
