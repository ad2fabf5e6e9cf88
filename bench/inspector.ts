/**
 * The inspector's benchmark (`npm run bench:inspector`): time to first render, memory and scrolling
 * for sessions of 100, 1,000 and 10,000 turns, in Chromium, with the BUILT webview bundle talking
 * to the real InspectorService (bench/inspector-fixture.ts). Prints a markdown table.
 *
 * - first render: from navigation start to the first timeline row in the DOM, with the session
 *   restored from the webview state (as after a reload): page load, ready handshake, session list,
 *   `session/open` with every turn summary, React render.
 * - memory: the page's JS heap after a forced garbage collection, and its DOM node count.
 * - scroll: the timeline scrolled ten rows (440 px) per animation frame for 120 frames; the 95th
 *   percentile and the worst frame interval (16.7 ms is 60 frames per second).
 */
import { chromium, type Browser } from 'playwright-core';
import { attachHost, CHROMIUM, CHROMIUM_ARGS, serveInspector } from './inspector-fixture';
import { formatInt } from '../src/engine/format-number';
import { median } from './stats';

const SIZES = [100, 1_000, 10_000];
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SCROLL_FRAMES = 120;

interface Sample {
  firstRenderMs: number;
  /** from the session/open answer arriving to the first row in the DOM: validation and React alone */
  renderMs: number;
  heapMb: number;
  nodes: number;
  scrollP95Ms: number;
  scrollMaxMs: number;
  openMessageKb: number;
}

async function once(browser: Browser, url: string, turns: number): Promise<Sample> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  const id = `replay:synthetic-${turns}`;
  await attachHost(page, [turns]);
  await page.addInitScript((sessionId) => {
    sessionStorage.setItem('spillway-state', JSON.stringify({ sessionId }));
    const w = window as unknown as { __firstRow?: number; __openBytes?: number };
    const mo = new MutationObserver(() => {
      if (w.__firstRow === undefined && document.querySelector('.timeline .vrow')) {
        w.__firstRow = performance.now();
        mo.disconnect();
      }
    });
    document.addEventListener('DOMContentLoaded', () => mo.observe(document.body, { childList: true, subtree: true }));
    window.addEventListener('message', (e) => {
      const m = e.data as { kind?: string; method?: string };
      if (m?.kind === 'response' && m.method === 'session/open') {
        w.__openBytes = JSON.stringify(m).length;
        (w as { __openAt?: number }).__openAt = performance.now();
      }
      if (m?.kind === 'notification' && m.method === 'sessions/changed') (w as { __listAt?: number }).__listAt ??= performance.now();
    });
  }, id);
  await page.goto(`${url}/?theme=dark`);
  await page.waitForFunction(() => (window as unknown as { __firstRow?: number }).__firstRow !== undefined, undefined, { timeout: 60_000 });
  const firstRenderMs = await page.evaluate(() => (window as unknown as { __firstRow: number }).__firstRow);
  const openBytes = await page.evaluate(() => (window as unknown as { __openBytes?: number }).__openBytes ?? 0);
  const openAt = await page.evaluate(() => (window as unknown as { __openAt?: number }).__openAt ?? 0);
  await page.waitForTimeout(300);
  const cdp = await context.newCDPSession(page);
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('Performance.enable');
  const metrics = (await cdp.send('Performance.getMetrics')).metrics;
  const metric = (n: string) => metrics.find((m) => m.name === n)?.value ?? 0;
  const frames = await page.evaluate(async (n) => {
    const el = document.querySelector('.timeline') as HTMLElement;
    // a brisk wheel scroll: ten rows per frame (or the whole list in the frames, when shorter)
    const step = Math.min(440, (el.scrollHeight - el.clientHeight) / n);
    const deltas: number[] = [];
    let last = await new Promise<number>((r) => requestAnimationFrame(r));
    for (let i = 1; i <= n; i++) {
      el.scrollTop = Math.min(el.scrollHeight, step * i);
      const t = await new Promise<number>((r) => requestAnimationFrame(r));
      deltas.push(t - last);
      last = t;
    }
    return deltas;
  }, SCROLL_FRAMES);
  frames.sort((a, b) => a - b);
  await context.close();
  return {
    firstRenderMs,
    renderMs: firstRenderMs - openAt,
    heapMb: metric('JSHeapUsedSize') / 1024 / 1024,
    nodes: metric('Nodes'),
    scrollP95Ms: frames[Math.floor(frames.length * 0.95)]!,
    scrollMaxMs: frames[frames.length - 1]!,
    openMessageKb: openBytes / 1024,
  };
}

async function main(): Promise<void> {
  const server = await serveInspector();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  const rows: string[] = [];
  try {
    await once(browser, server.url, 100); // warm-up: the bundle and the browser's caches
    for (const n of SIZES) {
      const samples: Sample[] = [];
      for (let r = 0; r < RUNS; r++) samples.push(await once(browser, server.url, n));
      const m = (f: (s: Sample) => number) => median(samples.map(f));
      rows.push(
        `| ${formatInt(n)} | ${m((s) => s.firstRenderMs).toFixed(0)} | ${m((s) => s.renderMs).toFixed(0)} | ${m((s) => s.openMessageKb).toFixed(0)} | ${m((s) => s.heapMb).toFixed(1)} | ${m((s) => s.nodes).toFixed(0)} | ${m((s) => s.scrollP95Ms).toFixed(1)} | ${m((s) => s.scrollMaxMs).toFixed(1)} |`,
      );
      process.stderr.write(`${n} turns done\n`);
    }
  } finally {
    await browser.close();
    await server.close();
  }
  const version = (await import('node:child_process')).execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8' }).trim();
  console.log(
    `Made by \`npm run bench:inspector\` on ${new Date().toISOString().slice(0, 10)} (${version}, headless, median of ${RUNS} runs). Each session opens restored from the webview state: page load, ready handshake, the turn summaries in one message, first React render of the windowed timeline. Messages cross a Playwright binding to the host service in Node (bench/inspector-fixture.ts), which adds latency VS Code's own channel does not have; the second column is the webview's own work.\n`,
  );
  console.log(
    '| turns | first render ms (from navigation) | of which: answer received → first row ms | session/open message KB | JS heap MB (after GC) | DOM nodes | scroll p95 frame ms | scroll worst frame ms |',
  );
  console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  for (const r of rows) console.log(r);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
