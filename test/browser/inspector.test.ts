/**
 * The BUILT inspector bundle (dist/webview.js + dist/webview.css) in real Chromium, in the HTML and
 * CSP VS Code loads it with, talking to the real InspectorService over synthetic sessions
 * (bench/inspector-fixture.ts). Screenshots per theme go to test-results/.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { MemoryStore } from '../../src/store';
import { parseConfig } from '../../src/engine';
import { readTranscript } from '../../src/replay/readers';
import { replay } from '../../src/replay/replay';
import { sessionName } from '../../src/replay/session-title';
import { collectMarkers, ReplaySource } from '../../src/extension/inspector/replaySource';
import { DEMO_FIXTURE } from '../vscode/demo';
import {
  attachHost,
  CHROMIUM,
  CHROMIUM_ARGS,
  ROOT,
  serveInspector,
  THEMES,
  type StubHost,
  type StubServer,
} from '../../bench/inspector-fixture';

const ARTIFACTS = join(ROOT, 'test-results');
let server: StubServer;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  server = await serveInspector();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

async function openPage(theme = 'dark', sizes = [120, 10_000], width = 1280): Promise<{ page: Page; host: StubHost; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 860 } });
  // Playwright's 30 s for an action was too little on a loaded 2-core machine (the session list took longer)
  page.setDefaultTimeout(90_000);
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().includes('favicon') && !/status of 404/.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  const host = await attachHost(page, sizes);
  await page.goto(`${server.url}/?theme=${theme}`);
  return { page, host, problems };
}

async function openSession(page: Page, turns: number) {
  await page.locator('button.session', { hasText: `synthetic ${turns} turns` }).click();
  await page.locator('.timeline .vrow').first().waitFor();
}

describe('the inspector bundle in Chromium', () => {
  it('loads under the strict CSP with no errors and lists the sessions after the ready handshake', async () => {
    const { page, host, problems } = await openPage();
    await page.locator('button.session').first().waitFor();
    expect(await page.locator('button.session').count()).toBe(2);
    const sent = await page.evaluate(() =>
      (window as unknown as { __spillwaySent: { method: string }[] }).__spillwaySent.map((m) => m.method),
    );
    expect(sent[0]).toBe('webview/ready');
    expect(host.service.isReady).toBe(true);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('opens a 10,000-turn session with only a window of rows in the DOM, and scrolls to the end', async () => {
    const { page, problems } = await openPage();
    await openSession(page, 10_000);
    const rows = await page.locator('.timeline .vrow').count();
    expect(rows).toBeGreaterThan(5);
    expect(rows).toBeLessThan(80);
    await page.locator('.timeline').evaluate((el) => (el.scrollTop = el.scrollHeight));
    await page.locator('.vrow [data-turn="9999"]').waitFor();
    expect(await page.locator('[data-testid="chart-original"]').count()).toBe(1);
    expect(problems).toEqual([]);
    await page.close();
  });

  it('is driven by the keyboard: Tab reaches the timeline, arrows and End move, the details follow', async () => {
    const { page } = await openPage();
    await openSession(page, 120);
    await page.locator('.details h2', { hasText: 'Turn 1' }).waitFor();
    const timeline = page.locator('.timeline');
    // the selected session keeps a visible focus ring
    await page.keyboard.press('Tab'); // keyboard modality, as a person tabbing
    await page.locator('button.session.selected').focus();
    const ring = await page
      .locator('button.session.selected')
      .evaluate((el) => getComputedStyle(el).outlineWidth + ' ' + getComputedStyle(el).outlineStyle);
    expect(ring).toBe('2px solid');
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await timeline.evaluate((el) => document.activeElement === el);
    }
    expect(reached).toBe(true);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.locator('.details h2', { hasText: 'Turn 3' }).waitFor();
    expect(await timeline.getAttribute('aria-activedescendant')).toBe('turn-2');
    await page.keyboard.press('End');
    await page.locator('.details h2', { hasText: 'Turn 120' }).waitFor();
    await page.keyboard.press('Home');
    await page.locator('.details h2', { hasText: 'Turn 1' }).waitFor();
    // a result expands from the keyboard too
    await page.locator('.result-head').first().focus();
    await page.keyboard.press('End');
    expect(await page.evaluate(() => document.activeElement?.closest('.result')?.getAttribute('data-kind'))).toBe('whole');
    await page.keyboard.press('Home');
    await page.keyboard.press('Enter');
    await page.locator('.pager-original .pager-text').waitFor();
    await page.close();
  });

  it('shows the original a page at a time and the projection beside it', async () => {
    const { page, host } = await openPage();
    await openSession(page, 120);
    await page.locator('.result-head').first().click();
    const original = page.locator('.pager-original');
    await original.locator('.pager-text').waitFor();
    await expect.poll(async () => (await original.locator('.pager-text').textContent())?.length ?? 0).toBe(16 * 1024);
    expect(await original.locator('.pager-count').textContent()).toMatch(/16,384 of 200,000 chars/);
    await original.getByRole('button', { name: /Show more/ }).click();
    await expect.poll(async () => (await original.locator('.pager-text').textContent())?.length ?? 0).toBe(32 * 1024);
    expect(await page.locator('.pager-projected .pager-text').textContent()).toMatch(/^\[spillway: /);
    await page.getByRole('button', { name: 'Open stored output' }).click();
    await expect.poll(() => host.commands.map((c) => c.method)).toContain('openStored');
    await page.close();
  });

  it('filters by tool, searches, dry-runs a cap and saves it', async () => {
    const { page, host } = await openPage();
    await openSession(page, 120);
    await page.getByRole('button', { name: /Caps per tool/ }).click();
    const field = page.getByLabel('New cap for bash');
    await field.click();
    await page.keyboard.type('unlimited');
    await page.locator('[data-testid="dry-totals"]').waitFor();
    expect(await page.locator('[data-testid="chart-dry"]').count()).toBe(1);
    await page.getByRole('button', { name: 'Save caps to settings' }).click();
    await expect.poll(() => host.saved.length).toBe(1);
    expect(host.saved[0]).toEqual({ bash: 'unlimited' });
    await page.getByLabel('Search tool results').click();
    await page.keyboard.type('module_7/');
    await page.locator('[data-testid="filter-count"]').waitFor();
    expect(await page.locator('[data-testid="filter-count"]').textContent()).toMatch(/^\d+ of 120 turns/);
    await page.close();
  });

  it('drops an invalid message from the host and keeps working', async () => {
    const { page, host } = await openPage();
    await page.locator('button.session').first().waitFor();
    await page.evaluate(() => window.postMessage({ kind: 'notification', method: 'sessions/changed', params: { sessions: 'nope' } }, '*'));
    await expect.poll(() => host.logs.join('\n')).toMatch(/dropped an invalid message from the host/);
    expect(await page.locator('button.session').count()).toBe(2);
    await page.close();
  });

  it('keeps the chosen turn when the host shows the same session again, and says when it is busy (aria-busy)', async () => {
    const { page, host } = await openPage('dark', [30]);
    await openSession(page, 30);
    await page.locator('main.main[aria-busy="false"]').waitFor();
    const initial = (await page.locator('.details h2').textContent()) ?? '';
    const target = initial === 'Turn 3' ? 4 : 3;
    await page.locator(`.timeline .turn[data-turn="${target - 1}"]`).click();
    await page.locator('.details h2', { hasText: new RegExp(`^Turn ${target}$`) }).waitFor();
    // the host's showSession for the session shown (VS Code's answer to openOnStartup, arriving after
    // the panel's own open): watched through aria-busy going true, then false
    await page.evaluate(() => {
      const main = document.querySelector('main.main')!;
      let busy = false;
      (window as unknown as { reopened: Promise<void> }).reopened = new Promise<void>((resolve) =>
        new MutationObserver(() => {
          if (main.getAttribute('aria-busy') === 'true') busy = true;
          else if (busy) resolve();
        }).observe(main, { attributes: true, attributeFilter: ['aria-busy'] }),
      );
    });
    host.service.notify('host/showSession', { sessionId: 'replay:synthetic-30' });
    await page.evaluate(() => (window as unknown as { reopened: Promise<void> }).reopened);
    expect(await page.locator('.details h2').textContent()).toBe(`Turn ${target}`);
    await page.close();
  });

  it('shows new turns as they are recorded', async () => {
    const { page, host } = await openPage('dark', [30]);
    await openSession(page, 30);
    host.source.append('replay:synthetic-30');
    await page.locator('.totals', { hasText: '31 turns' }).waitFor();
    await page.close();
  });

  it('selects the turn under the pointer when the chart is clicked, and the marks lead to their turns', async () => {
    const { page } = await openPage();
    await openSession(page, 120);
    const chart = page.locator('[data-testid="chart"]');
    const box = (await chart.boundingBox())!;
    // about three quarters of the way along: turn 90 of 120 (columns are turns here)
    await chart.click({ position: { x: box.width * (89 / 119), y: box.height / 2 } });
    await page.locator('.details h2', { hasText: 'Turn 90' }).waitFor();
    expect(await page.locator('.timeline').getAttribute('aria-activedescendant')).toBe('turn-89');
    // clears are marked and reachable by keyboard; the filter lists only them
    await page.getByRole('button', { name: 'Clears: turn 11', exact: true }).click();
    await page.locator('.details h2', { hasText: 'Turn 11' }).waitFor();
    await page.locator('[data-testid="chart-mode"] label', { hasText: 'Cumulative cost' }).click();
    expect(await chart.getAttribute('data-mode')).toBe('cost');
    await page.close();
  });

  for (const [width, height] of [
    [1000, 800],
    [700, 800],
  ] as const) {
    it(`brings a clicked turn's details into view at ${width}×${height} (screenshot in test-results/)`, async () => {
      const { page } = await openPage('dark', [120, 10_000], width);
      await page.setViewportSize({ width, height });
      await openSession(page, 120);
      const inView = () =>
        page.locator('[data-testid="details-anchor"]').evaluate((el) => {
          const r = el.getBoundingClientRect();
          return r.top < window.innerHeight - 40 && r.bottom > 0;
        });
      // the arrows only select (the list stays where it is); a click brings the details up
      await page.locator('.timeline .vrow').nth(3).click();
      await page.locator('.details h2', { hasText: /^Turn 4$/ }).waitFor();
      await expect.poll(inView).toBe(true);
      await page.screenshot({ path: join(ARTIFACTS, `inspector-turn-in-view-${width}x${height}.png`) });
      // the session list shows every session, none clipped
      const clipped = await page.evaluate(() => {
        const list = document.querySelector('.sessions')!;
        return [...list.querySelectorAll('button.session')].some((b) => b.scrollHeight > b.clientHeight + 1);
      });
      expect(clipped).toBe(false);
      await page.close();
    });
  }

  /** The monospace columns a pane's text holds a line: its text box's width over the width of one character of its font. */
  const paneColumns = (page: Page) =>
    page.evaluate(() => {
      const columns = (sel: string) => {
        const pre = document.querySelector<HTMLElement>(`${sel} .pager-text`)!;
        const probe = document.createElement('span');
        probe.textContent = 'x'.repeat(100);
        probe.style.position = 'absolute';
        probe.style.visibility = 'hidden';
        probe.style.whiteSpace = 'pre';
        pre.appendChild(probe);
        const char = probe.getBoundingClientRect().width / 100;
        probe.remove();
        const cs = getComputedStyle(pre);
        return Math.floor((pre.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight)) / char);
      };
      const box = (s: string) => document.querySelector(s)!.getBoundingClientRect();
      const o = box('.pager-original');
      const p = box('.pager-projected');
      return {
        original: columns('.pager-original'),
        projected: columns('.pager-projected'),
        details: Math.round(box('.details').width),
        originalWidth: Math.round(o.width),
        sideBySide: Math.abs(o.top - p.top) < 2 && p.left > o.right,
      };
    });

  // issue 28 gave the details the width; issue 36: each pane holds 80 columns of code, side by side where both fit, else one above the other
  it('puts original and projected side by side only where each holds 80 columns, else stacks them at full width (screenshots in test-results/)', async () => {
    for (const [width, height, sideBySide] of [
      [2200, 1000, true],
      [1600, 1000, false],
      [1000, 800, false],
    ] as const) {
      for (const theme of ['dark', 'light']) {
        const { page, problems } = await openPage(theme, [120, 10_000], width);
        await page.setViewportSize({ width, height });
        await openSession(page, 120);
        await page.locator('.result-head').first().click();
        await page.locator('.pager-projected .pager-text').waitFor();
        const m = await paneColumns(page);
        expect(m.sideBySide, `side by side at ${width} px`).toBe(sideBySide);
        expect(m.original).toBeGreaterThanOrEqual(80);
        expect(m.projected).toBeGreaterThanOrEqual(80);
        // stacked, each pane takes the details' whole width
        if (!sideBySide) expect(m.originalWidth).toBeGreaterThan(m.details - 40);
        expect(await page.locator('.timeline').evaluate((el) => Math.round(el.getBoundingClientRect().width))).toBeLessThanOrEqual(
          width > 1100 ? 300 : width,
        );
        await page.screenshot({ path: join(ARTIFACTS, `inspector-details-${width}-${theme}.png`) });
        expect(problems).toEqual([]);
        await page.close();
      }
    }
  });

  // issue 36: VS Code at 1600×1000 with the Explorer open leaves the panel about 1250 × 900; at 1000×800, about 650 × 700
  for (const [width, height] of [
    [1250, 900],
    [650, 700],
  ] as const) {
    it(`gives the turn being read the room in a ${width}×${height} panel: 80-column panes, the header scrolls away, the glossary over the content (screenshots in test-results/)`, async () => {
      const { page, problems } = await openPage('dark', [120, 10_000], width);
      await page.setViewportSize({ width, height });
      await openSession(page, 120);
      const timelineBox = () =>
        page.locator('.timeline').evaluate((el) => {
          const r = el.getBoundingClientRect();
          return { width: Math.round(r.width), height: Math.round(r.height) };
        });
      // the glossary opens over the content: the timeline keeps its size
      const before = await timelineBox();
      await page.locator('[data-testid="glossary"] summary').click();
      await page.locator('.glossary-body').waitFor();
      expect(await timelineBox()).toEqual(before);
      const over = await page.evaluate(() => {
        const g = document.querySelector('.glossary-body')!.getBoundingClientRect();
        const c = document.querySelector('.chart')!.getBoundingClientRect();
        return g.bottom > c.top && g.top < c.bottom && getComputedStyle(document.querySelector('.glossary-body')!).position === 'absolute';
      });
      expect(over, 'the glossary lies over the chart').toBe(true);
      await page.screenshot({ path: join(ARTIFACTS, `inspector-glossary-${width}x${height}.png`) });
      await page.keyboard.press('Escape');
      await page.locator('.glossary-body').waitFor({ state: 'hidden' });

      // a dry run: the caps' explanation does not take the timeline's room either
      await page.getByRole('button', { name: /Caps per tool/ }).click();
      await page.getByLabel('New cap for bash').click();
      await page.keyboard.type('unlimited');
      await page.locator('[data-testid="dry-totals"]').waitFor();
      expect((await timelineBox()).width).toBe(before.width);

      // a result opened to be read: 80 columns of code in each pane, stacked at these widths
      await page.locator('.result-head').first().click();
      await page.locator('.pager-projected .pager-text').waitFor();
      const m = await paneColumns(page);
      expect(m.sideBySide).toBe(false);
      expect(m.original).toBeGreaterThanOrEqual(80);
      expect(m.projected).toBeGreaterThanOrEqual(80);
      if (width > 1100) {
        // the header, chart and caps have scrolled away: the toolbar at the top, the timeline and details fill the panel under it
        await expect
          .poll(() => page.locator('.toolbar').evaluate((el) => Math.round(el.getBoundingClientRect().top)))
          .toBeLessThanOrEqual(1);
        const t = await timelineBox();
        expect(t.height).toBeGreaterThan(height - 120);
        expect(await page.locator('.session-head').evaluate((el) => el.getBoundingClientRect().bottom)).toBeLessThanOrEqual(0);
      }
      await page.screenshot({ path: join(ARTIFACTS, `inspector-reading-${width}x${height}.png`) });
      expect(problems).toEqual([]);
      await page.close();
    });
  }

  it('draws the chart in colours told apart and the top savings as circles, and the timeline marks whole and readable, at 650 px', async () => {
    const { page } = await openPage('light', [120, 10_000], 650);
    await page.setViewportSize({ width: 650, height: 700 });
    await openSession(page, 120);
    // a mark that does not fit is left out whole, never cut mid-word ("✎ 1 inp")
    const clipped = await page.evaluate(() => {
      const out: string[] = [];
      for (const marks of document.querySelectorAll('.turn-marks')) {
        const box = marks.getBoundingClientRect();
        for (const m of marks.querySelectorAll<HTMLElement>('.mark')) {
          const r = m.getBoundingClientRect();
          const shown = r.top < box.bottom - 1;
          if (shown && r.right > box.right + 1) out.push(m.textContent ?? '');
        }
      }
      return out;
    });
    expect(clipped).toEqual([]);
    // "cache ✓" at 11 px reads at 4.5:1 at least
    const contrast = await page.evaluate(() => {
      const lum = (c: string) => {
        const [r, g, b] = c
          .match(/\d+/g)!
          .slice(0, 3)
          .map((v) => {
            const x = Number(v) / 255;
            return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
          });
        return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
      };
      const mark = document.querySelector('.mark-stable')!;
      const a = lum(getComputedStyle(mark).color);
      const b = lum(getComputedStyle(document.body).backgroundColor);
      return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
    });
    expect(contrast).toBeGreaterThanOrEqual(4.5);
    const m = await page.evaluate(() => {
      const rgb = (sel: string) => getComputedStyle(document.querySelector(sel)!).backgroundColor.match(/\d+/g)!.slice(0, 3).map(Number);
      const o = rgb('.key-original');
      const x = rgb('.key-missed');
      const circles = [...document.querySelectorAll('[data-testid="chart-mark-savings"] circle')].map((c) => {
        const r = c.getBoundingClientRect();
        return [Math.round(r.width), Math.round(r.height)];
      });
      return { distance: Math.hypot(o[0]! - x[0]!, o[1]! - x[1]!, o[2]! - x[2]!), circles };
    });
    // 209,134,22 against 191,136,3 was 26 apart
    expect(m.distance).toBeGreaterThan(100);
    expect(m.circles.length).toBeGreaterThan(0);
    for (const [w, h] of m.circles) expect(Math.abs(w! - h!)).toBeLessThanOrEqual(1);
    await page.close();
  });

  // every width in every theme: nothing may stick out of the panel
  for (const width of [1600, 900, 450]) {
    for (const theme of Object.keys(THEMES)) {
      it(`renders at ${width} px in the ${theme} theme with nothing overflowing (screenshot in test-results/)`, async () => {
        const { page, problems } = await openPage(theme, [120, 10_000], width);
        await openSession(page, 120);
        await page.getByRole('button', { name: /Caps per tool/ }).click();
        await page.locator('.result-head').first().click();
        await page.locator('.pager-projected .pager-text').waitFor();
        const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
        expect(bg).toBe({ light: 'rgb(255, 255, 255)', dark: 'rgb(31, 31, 31)', 'high-contrast': 'rgb(0, 0, 0)' }[theme]);
        const overflowing = await page.evaluate(() => {
          const limit = document.documentElement.clientWidth;
          const out: string[] = [];
          for (const el of document.querySelectorAll<HTMLElement>('body *')) {
            const r = el.getBoundingClientRect();
            if (r.width === 0 || r.height === 0) continue;
            if (r.right > limit + 1 || r.left < -1)
              out.push(`${el.tagName.toLowerCase()}.${el.className} ${Math.round(r.left)}..${Math.round(r.right)}`);
          }
          if (document.documentElement.scrollWidth > limit)
            out.push(`page scrolls sideways: ${document.documentElement.scrollWidth} > ${limit}`);
          return out;
        });
        expect(overflowing).toEqual([]);
        await page.screenshot({ path: join(ARTIFACTS, `inspector-${width}-${theme}.png`) });
        expect(problems).toEqual([]);
        await page.close();
      });
    }
  }

  it('shows the npm start demo under the default settings (the README screenshot, test-results/inspector-demo.png)', async () => {
    const file = join(ROOT, DEMO_FIXTURE);
    const config = parseConfig({}).config;
    const store = new MemoryStore();
    const t = await readTranscript(file);
    const source = new ReplaySource({ store: () => store, config: () => config });
    const marks = collectMarkers();
    const result = replay(t, { config, store, detail: true, onProjection: marks.onProjection });
    source.add(file, t, result, 1, '2026-11-23T09:00:00Z', true, marks.markers);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await attachHost(page, [], [source]);
    await page.goto(`${server.url}/?theme=dark`);
    // it opens on its own on the session (named by its task, project and day, not its file), on the turn whose outputs became previews and saved the most
    await page.locator('.session-head h1', { hasText: sessionName(file) }).waitFor();
    await page.locator('main.main[aria-busy="false"]').waitFor();
    await page.locator('.details h2').waitFor();
    expect(await page.locator('[data-testid="story"]').textContent()).toMatch(/outputs? became previews? with a handle, .* cleared/);
    expect(await page.locator('.result[data-kind="own"] .stage-offload').count()).toBeGreaterThan(0);
    // what the request still sent whole, and why the clear stage left it: one folded line that opens to every reason
    const held = page.locator('[data-testid="held-summary"]');
    expect(await held.locator('summary').textContent()).toMatch(
      /^Sent whole in this request: \d+ results?, [\d.]+k? tokens?\. Why the clear stage left (it|them): [a-z]/,
    );
    expect(await held.locator('[data-testid="held-reason"]').first().isVisible()).toBe(false);
    await held.locator('summary').click();
    await held.locator('[data-testid="held-reason"]').first().waitFor();
    expect(await held.locator('[data-testid="held-reason"]').count()).toBeGreaterThan(0);
    await held.locator('summary').click();
    await page.locator('.result[data-kind="own"] .result-head').first().click();
    await page.locator('.pager-projected .pager-text').waitFor();
    // the result opened scrolled the header away (the turn being read gets the room): the README's picture shows it all
    await page.locator('main.main').evaluate((el) => (el.scrollTop = 0));
    await page.screenshot({ path: join(ARTIFACTS, 'inspector-demo.png') });
    // the turn it opened on, the sentence and the last turn's line docs/inspector.md quotes from the demo are the demo's
    const doc = readFileSync(join(ROOT, 'docs/inspector.md'), 'utf8').replace(/\s+/g, ' ');
    const opened = (await page.locator('.details h2').textContent())!.trim();
    expect(doc.includes(`saved the most, ${opened.toLowerCase()}:`), `docs/inspector.md's caption does not say it opens on ${opened}`).toBe(
      true,
    );
    const story = (await page.locator('[data-testid="story"]').textContent())!.trim();
    expect(doc.includes(`*"${story}"*`), `docs/inspector.md does not quote the demo's sentence: ${story}`).toBe(true);
    await page.locator('.timeline').focus();
    await page.keyboard.press('End');
    await page.locator('.details h2', { hasText: `Turn ${t.calls.length}` }).waitFor();
    const last = (await page.locator('[data-testid="held-summary"] summary').textContent())!.trim();
    expect(doc.includes(`(the demo's last turn: \`${last}\`)`), `docs/inspector.md does not quote the demo's last turn: ${last}`).toBe(
      true,
    );
    await page.close();
  });

  it('shows the real long Claude Code session (test-results/inspector-long-session.png)', async () => {
    const file = join(ROOT, 'test/fixtures/sessions/long/claude-code/session-share__general-tool-calls.jsonl');
    // file inputs replaced on arrival (the default leaves them to a clear), so that more turns reduce
    // something; it opens on the turn that saved the most. The markers each turn sent are kept as the
    // panel keeps them (collectMarkers): a clear's marker is not found by projecting its turn again alone
    const config = parseConfig({ 'inputs.when': 'arrival' }).config;
    const store = new MemoryStore();
    const t = await readTranscript(file);
    const source = new ReplaySource({ store: () => store, config: () => config });
    const marks = collectMarkers();
    const result = replay(t, { config, store, detail: true, onProjection: marks.onProjection });
    source.add(file, t, result, 1, '2026-11-23T09:00:00Z', true, marks.markers);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await attachHost(page, [], [source]);
    await page.goto(`${server.url}/?theme=dark`);
    // it opens on its own on the most recent session, on the turn that saved the most
    await page
      .locator('.session-head h1', { hasText: sessionName(file) })
      .waitFor()
      .catch(async (e) => {
        await page.screenshot({ path: join(ARTIFACTS, 'inspector-long-session-failed.png') });
        throw e;
      });
    await page.locator('.details h2').waitFor();
    expect(await page.locator('.details h2').textContent()).not.toBe('Turn 1');
    // the headline: the cost with read-backs, in dollars at the session's own model
    expect(await page.locator('[data-testid="totals-cost"]').textContent()).toMatch(
      /^Input cost \$[\d,.]+ → \$[\d,.]+ [−+±][\d.]+% with read-backs \([−+±][\d.]+% before\)$/,
    );
    // the first reduced result of the turn (a result sent whole has no projected side to page)
    await page.locator('li.result:not(.whole) .result-head').first().click();
    await page.locator('.pager-projected .pager-text').waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'inspector-long-session.png') });
    await page.close();
  });
});
