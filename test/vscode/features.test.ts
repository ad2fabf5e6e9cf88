/**
 * Features whose API the running VS Code lacks are not offered (issue 28, point 2), in both real
 * VS Codes the project installs:
 * - code-server 4.100.3 (VS Code 1.100: no language model chat provider API, and an MCP provider API
 *   that refuses Spillway's provider): Add and Manage Language Model are not in the command palette,
 *   and the Spillway log says once what is not offered and why;
 * - code-server 4.139.1 (VS Code 1.139), the one `npm start` runs: the demo workspace loads on its
 *   session in the inspector with every feature offered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HARNESS_DIR, ROOT, ensureChatCodeServer, inspectorFrame, launch, waitUntil, type Harness } from './harness';
import { DEMO_FIXTURE, makeDemoWorkspace } from './demo';
import { sessionName } from '../../src/replay/session-title';
import { filesUnder } from '../support/files';

/** The Spillway output channel's log lines (its own file under the window's logs). */
function spillwayLog(vs: Harness): string {
  return filesUnder(join(vs.userData, 'logs'))
    .filter((f) => /Spillway\.log$/.test(f))
    .map((f) => readFileSync(f, 'utf8'))
    .join('\n');
}

/** The log's one line about features, once the output channel has written it to its file. */
async function featuresLine(vs: Harness): Promise<string[]> {
  return waitUntil('the Spillway log to say which features this VS Code offers', () => {
    const lines = spillwayLog(vs)
      .split('\n')
      .filter((l) => /VS Code \S+(: not offered here| offers every Spillway feature)/.test(l));
    return lines.length ? lines : undefined;
  });
}

/**
 * Whether the command palette offers `title`: first shows a command that is always there (so the
 * palette has loaded its commands), then types `title` and waits until the list has been filtered
 * for it (that row gone): then `title`'s row is there or not. Closes the palette.
 */
async function inPalette(vs: Harness, title: string): Promise<boolean> {
  const always = 'Spillway: Show Log';
  await vs.paletteRow(always);
  await vs.page.locator('.quick-input-widget .quick-input-box input').fill(`>${title}`);
  const widget = vs.page.locator('.quick-input-widget');
  const rows = (text: string) => widget.locator('.quick-input-list .monaco-list-row:visible', { hasText: text }).count();
  let shown = '';
  const answer = await waitUntil(`the palette to answer "${title}"`, async () => {
    if (await rows(title)) return 'offered';
    shown = (await widget.innerText()) ?? '';
    // VS Code 1.100 lists "similar commands" or says "No matching commands" when nothing matches
    if ((await rows(always)) === 0 && /Results|No matching commands/.test(shown)) return 'absent';
    return undefined;
  }).catch((e: unknown) => {
    throw new Error(`${String(e)}; the palette showed: ${JSON.stringify(shown)}`);
  });
  await vs.page.keyboard.press('Escape');
  return answer === 'offered';
}

describe('on VS Code 1.100 (no language model chat provider API)', () => {
  let vs: Harness;
  beforeAll(async () => {
    vs = await launch({ name: 'features-1.100' });
  });
  afterAll(async () => {
    await vs?.close();
  });

  it('does not offer Add or Manage Language Model in the palette, and says once in the log why', async () => {
    expect(await vs.run(({ vscode }) => vscode.version)).toMatch(/^1\.100\./);
    expect(await inPalette(vs, 'Spillway: Add Language Model')).toBe(false);
    expect(await inPalette(vs, 'Spillway: Manage Language Models')).toBe(false);
    // the same palette offers what does not need the API
    expect(await inPalette(vs, 'Spillway: Open Inspector')).toBe(true);
    const lines = await featuresLine(vs);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /VS Code 1\.100\.\d+: not offered here: Copilot models through Spillway \(Add Language Model…, Manage Language Models…\): needs the language model chat provider API of VS Code 1\.104 or later; Spillway's MCP server for the editor's agents: this VS Code refused the MCP server definition provider/,
    );
  });
});

describe('the demo on VS Code 1.139, the one `npm start` runs', () => {
  let vs: Harness;
  beforeAll(async () => {
    ensureChatCodeServer();
    const demo = await makeDemoWorkspace(join(HARNESS_DIR, 'runs', `features-demo-${process.pid}`), ROOT);
    vs = await launch({ name: 'features-1.139', codeServer: 'chat', workspace: demo.dir });
  }, 40 * 60_000);
  afterAll(async () => {
    if (vs) await vs.screenshot('demo-1.139');
    await vs?.close();
  });

  it('opens the inspector on the demo session with every feature offered', async () => {
    expect(await vs.run(({ vscode }) => vscode.version)).toMatch(/^1\.139\./);
    const frame = await inspectorFrame(vs.page);
    await frame.locator('.session-head h1', { hasText: sessionName(join(ROOT, DEMO_FIXTURE)) }).waitFor({ timeout: 30_000 });
    await frame.locator('.timeline .vrow').first().waitFor();
    const lines = await featuresLine(vs);
    expect(lines).toEqual([expect.stringMatching(/^.*VS Code 1\.139\.\d+ offers every Spillway feature: /)]);
    expect(await inPalette(vs, 'Spillway: Add Language Model')).toBe(true);
    expect(await inPalette(vs, 'Spillway: Manage Language Models')).toBe(true);
    expect(spillwayLog(vs)).toContain('registered the MCP server definition provider spillway.mcp');
    expect(spillwayLog(vs)).toContain('registered the spillway language model vendor');
  });
});
