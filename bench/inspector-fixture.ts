/**
 * The inspector outside VS Code, for the browser tests and the benchmark: the BUILT webview bundle
 * (dist/webview.js, dist/webview.css) served from 127.0.0.1 in the same HTML and under the same CSP
 * as in VS Code, with a stub `acquireVsCodeApi` whose messages go, through Playwright, to the real
 * InspectorService holding synthetic sessions of any size. Theme variables for light, dark and
 * high-contrast stand in for the ones VS Code injects.
 */
import { createServer, type Server } from 'node:http';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'playwright-core';
import { parseConfig, type SpillwayConfig } from '../src/engine';
import type { Reduction } from '../src/engine/types';
import { inspectorHtml, newNonce } from '../src/extension/inspector/html';
import { InspectorService, type InspectorActions } from '../src/extension/inspector/service';
import {
  costOf,
  freshFigures,
  Listeners,
  RecordSession,
  toolsOf,
  type InspectorSession,
  type SessionChange,
  type SessionSource,
  type TurnRecord,
} from '../src/extension/inspector/session';
import type { CapChoice, CapValue, SessionInfo, TurnSummary } from '../src/protocol';
import { formatInt } from '../src/engine/format-number';

export const ROOT = resolve(__dirname, '..');
export { CHROMIUM, CHROMIUM_ARGS } from './chromium';

const TOOLS = ['bash', 'read_file', 'grep', 'sql'];

function hex24(n: number): string {
  return n.toString(16).padStart(24, '0');
}

/** A deterministic session of `turns` model calls, each reducing one or two results. */
export class SyntheticSession extends RecordSession {
  info: SessionInfo;
  private readonly originals = new Map<string, { tool: string; size: number; seed: number }>();

  constructor(
    readonly id: string,
    turns: number,
    config: SpillwayConfig,
    bigOutputChars = 200_000,
  ) {
    super({
      store: () => {
        throw new Error('no store');
      },
      config: () => config,
    });
    let base = 2_000;
    for (let i = 0; i < turns; i++) {
      base += 300 + (i % 7) * 150;
      const reductions: Reduction[] = [];
      const k = i % 3 === 0 ? 2 : 1;
      for (let j = 0; j < k; j++) {
        const tool = TOOLS[(i + j) % TOOLS.length]!;
        const handle = `sw_${hex24(i * 4 + j + 1)}`;
        const size = i === 0 && j === 0 ? bigOutputChars : 9_000 + ((i * 37 + j * 11) % 40) * 500;
        this.originals.set(handle, { tool, size, seed: i * 4 + j });
        reductions.push({
          result: j,
          callId: `call_${i}_${j}`,
          tool,
          stage: i % 11 === 10 ? 'clear' : 'offload',
          reason: `${formatInt(size)} chars over ${tool}'s cap of 8,000`,
          originalChars: size,
          projectedChars: 1_500,
          originalTokens: Math.round(size / 4),
          projectedTokens: 380,
          handle,
          fresh: true,
        });
      }
      const saved = reductions.reduce((a, r) => a + r.originalTokens - r.projectedTokens, 0);
      const cached = i > 0 && i % 17 !== 0 ? Math.round(base * 0.9) : 0;
      const summary: TurnSummary = {
        index: i,
        originalTokens: base + saved,
        projectedTokens: base,
        cacheStable: i > 0 && i % 17 !== 0,
        reductions: reductions.length,
        tools: toolsOf(reductions),
        // the turn's own results: the offloaded ones and the small `ls` sent whole (below)
        resultTools: [...new Set([...reductions.filter((r) => r.stage !== 'clear').map((r) => r.tool), 'ls'])].sort(),
        missed: i % 29 === 28 ? 1 : 0,
        toolResults: 3,
        cachedPrefixTokens: cached,
        cost: costOf(base + saved, cached, base, cached),
        ...freshFigures(reductions),
      };
      const missed = summary.missed ? [{ id: `src/module_${i}/handler.ts`, handle: reductions[0]!.handle }] : [];
      // each turn also brings one small result sent whole
      const whole = `ls src/module_${i}\nhandler.ts\nindex.ts\nREADME.md`;
      const own = [
        ...reductions.filter((r) => r.stage !== 'clear').map((r) => ({ callId: r.callId, tool: r.tool, chars: r.originalChars })),
        { callId: `call_${i}_ls`, tool: 'ls', chars: whole.length, tokens: 12, text: whole },
      ];
      this.records.push({ summary, reductions, missed, own } satisfies TurnRecord);
    }
    this.info = {
      id,
      origin: 'replay',
      title: `synthetic ${turns} turns`,
      detail: `a generated session of ${turns} calls`,
      turns,
      modified: new Date(Date.UTC(2026, 0, 1) + turns).toISOString(),
      live: false,
    };
  }

  protected override original(handle: string): string {
    const o = this.originals.get(handle);
    if (!o) throw new Error(`no stored output ${handle}`);
    const lines: string[] = [];
    let n = 0;
    for (let i = 1; n < o.size; i++) {
      const line = `${o.tool} line ${String(i).padStart(6, '0')} of output ${o.seed}: src/module_${o.seed}/handler.ts ok`;
      lines.push(line);
      n += line.length + 1;
    }
    return lines.join('\n').slice(0, o.size);
  }

  /** Each synthetic output is sent as one marker, whichever turn asks. */
  protected override markerAt(_turn: number, handle: string): string | undefined {
    return this.projected(handle);
  }

  protected projected(handle: string): string | undefined {
    const o = this.originals.get(handle);
    if (!o) return undefined;
    return `[spillway: ${o.tool} output offloaded · ${formatInt(o.size)} chars · handle ${handle}]\n${this.original(handle).slice(0, 1_200)}`;
  }

  /** a dry run scales the projection with the cap of the tools involved */
  async dryRun(config: SpillwayConfig): Promise<TurnSummary[]> {
    return this.records.map((r) => {
      let projected = r.summary.projectedTokens;
      for (const red of r.reductions) {
        const cap = config.toolCaps[red.tool];
        if (cap === 'unlimited') projected += red.originalTokens - red.projectedTokens;
        else if (typeof cap === 'number' && cap > 8_000) projected += Math.min(red.originalTokens, cap / 4) - red.projectedTokens;
      }
      const cached = r.summary.cachedPrefixTokens ?? 0;
      return { ...r.summary, projectedTokens: projected, cost: costOf(r.summary.originalTokens, cached, projected, cached) };
    });
  }

  /** adds a turn at the end (for the live tests) */
  append(): TurnSummary {
    const last = this.records[this.records.length - 1]!;
    const summary = { ...last.summary, index: this.records.length };
    this.records.push({ ...last, summary });
    this.info = { ...this.info, turns: this.records.length };
    return summary;
  }
}

export class SyntheticSource implements SessionSource {
  readonly origin = 'replay' as const;
  readonly sessions = new Map<string, SyntheticSession>();
  readonly listeners = new Listeners<SessionChange>();
  add(s: SyntheticSession): void {
    this.sessions.set(s.id, s);
  }
  append(id: string): void {
    const s = this.sessions.get(id)!;
    this.listeners.fire({ sessionId: id, appended: [s.append()] });
  }
  list(): SessionInfo[] {
    return [...this.sessions.values()].map((s) => s.info);
  }
  async open(id: string): Promise<InspectorSession | undefined> {
    return this.sessions.get(id);
  }
  onDidChange(l: (e: SessionChange) => void): () => void {
    return this.listeners.add(l);
  }
  dispose(): void {
    this.listeners.clear();
  }
}

/** Theme variables like the ones VS Code injects into a webview (a subset of Default Light/Dark/High Contrast). */
export const THEMES: Record<string, { bodyClass: string; vars: Record<string, string> }> = {
  light: {
    bodyClass: 'vscode-light',
    vars: {
      'dropdown-background': '#ffffff',
      'dropdown-foreground': '#3b3b3b',
      'dropdown-border': '#cecece',
      'input-border': '#cecece',
      'button-secondaryBackground': '#e5e5e5',
      'button-secondaryForeground': '#3b3b3b',
      foreground: '#3b3b3b',
      'editor-background': '#ffffff',
      'sideBar-background': '#f8f8f8',
      'panel-border': '#e5e5e5',
      focusBorder: '#005fb8',
      descriptionForeground: '#3b3b3b',
      'list-activeSelectionBackground': '#e8e8e8',
      'list-activeSelectionForeground': '#000000',
      'list-hoverBackground': '#f2f2f2',
      'list-inactiveSelectionBackground': '#e4e6f1',
      'badge-background': '#cccccc',
      'badge-foreground': '#3b3b3b',
      'charts-blue': '#1a85ff',
      'charts-orange': '#d18616',
      'charts-green': '#388a34',
      'charts-purple': '#652d90',
      'button-background': '#005fb8',
      'button-foreground': '#ffffff',
      'textLink-foreground': '#005fb8',
      errorForeground: '#a1260d',
      'editorWarning-foreground': '#bf8803',
      'input-background': '#ffffff',
      'input-foreground': '#3b3b3b',
      'font-family': 'system-ui, sans-serif',
      'font-size': '13px',
      'editor-font-family': 'monospace',
    },
  },
  dark: {
    bodyClass: 'vscode-dark',
    vars: {
      'dropdown-background': '#313131',
      'dropdown-foreground': '#cccccc',
      'dropdown-border': '#3c3c3c',
      'input-border': '#3c3c3c',
      'button-secondaryBackground': '#313131',
      'button-secondaryForeground': '#cccccc',
      foreground: '#cccccc',
      'editor-background': '#1f1f1f',
      'sideBar-background': '#181818',
      'panel-border': '#2b2b2b',
      focusBorder: '#0078d4',
      descriptionForeground: '#9d9d9d',
      'list-activeSelectionBackground': '#04395e',
      'list-activeSelectionForeground': '#ffffff',
      'list-hoverBackground': '#2a2d2e',
      'list-inactiveSelectionBackground': '#37373d',
      'badge-background': '#616161',
      'badge-foreground': '#f8f8f8',
      'charts-blue': '#3794ff',
      'charts-orange': '#d18616',
      'charts-green': '#89d185',
      'charts-purple': '#b180d7',
      'button-background': '#0078d4',
      'button-foreground': '#ffffff',
      'textLink-foreground': '#4daafc',
      errorForeground: '#f85149',
      'editorWarning-foreground': '#cca700',
      'input-background': '#313131',
      'input-foreground': '#cccccc',
      'font-family': 'system-ui, sans-serif',
      'font-size': '13px',
      'editor-font-family': 'monospace',
    },
  },
  'high-contrast': {
    bodyClass: 'vscode-high-contrast',
    vars: {
      'dropdown-background': '#000000',
      'dropdown-foreground': '#ffffff',
      'dropdown-border': '#6fc3df',
      'input-border': '#6fc3df',
      'button-secondaryBackground': '#000000',
      'button-secondaryForeground': '#ffffff',
      'button-border': '#6fc3df',
      foreground: '#ffffff',
      'editor-background': '#000000',
      'sideBar-background': '#000000',
      'panel-border': '#6fc3df',
      contrastBorder: '#6fc3df',
      contrastActiveBorder: '#f38518',
      focusBorder: '#f38518',
      descriptionForeground: '#ffffff',
      'list-activeSelectionBackground': '#000000',
      'list-activeSelectionForeground': '#ffffff',
      'list-hoverBackground': '#000000',
      'list-inactiveSelectionBackground': '#000000',
      'badge-background': '#000000',
      'badge-foreground': '#ffffff',
      'charts-blue': '#3794ff',
      'charts-orange': '#d18616',
      'charts-green': '#89d185',
      'charts-purple': '#b180d7',
      'button-background': '#000000',
      'button-foreground': '#ffffff',
      'textLink-foreground': '#21a6ff',
      errorForeground: '#f48771',
      'editorWarning-foreground': '#ffd370',
      'input-background': '#000000',
      'input-foreground': '#ffffff',
      'font-family': 'system-ui, sans-serif',
      'font-size': '13px',
      'editor-font-family': 'monospace',
    },
  },
};

const STUB = `
(() => {
  let state = null;
  try { state = JSON.parse(sessionStorage.getItem('spillway-state') || 'null'); } catch {}
  window.__spillwaySent = [];
  window.acquireVsCodeApi = () => ({
    postMessage: (m) => { window.__spillwaySent.push(m); window.__spillwayPost(m); },
    getState: () => state,
    setState: (s) => { state = s; sessionStorage.setItem('spillway-state', JSON.stringify(s)); },
  });
})();
`;

export interface StubServer {
  url: string;
  server: Server;
  close(): Promise<void>;
}

/** Serves the built bundle with the VS Code HTML; `?theme=light|dark|high-contrast`. */
export async function serveInspector(): Promise<StubServer> {
  const js = readFileSync(join(ROOT, 'dist/webview.js'));
  const css = readFileSync(join(ROOT, 'dist/webview.css'));
  let origin = '';
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const send = (type: string, body: string | Buffer) => {
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    };
    if (url.pathname === '/dist/webview.js') return send('text/javascript', js);
    if (url.pathname === '/dist/webview.css') return send('text/css', css);
    if (url.pathname === '/stub.js') return send('text/javascript', STUB);
    const theme = THEMES[url.pathname.replace(/^\/theme-|\.css$/g, '')];
    if (url.pathname.startsWith('/theme-') && theme) {
      return send(
        'text/css',
        `html { ${Object.entries(theme.vars)
          .map(([k, v]) => `--vscode-${k}: ${v};`)
          .join(' ')} }`,
      );
    }
    if (url.pathname === '/') {
      const name = url.searchParams.get('theme') ?? 'dark';
      const nonce = newNonce();
      let html = inspectorHtml({
        cspSource: origin,
        nonce,
        scriptUri: `${origin}/dist/webview.js`,
        styleUri: `${origin}/dist/webview.css`,
      });
      html = html
        .replace('<link rel="stylesheet"', `<link rel="stylesheet" href="${origin}/theme-${name}.css">\n<link rel="stylesheet"`)
        .replace('<body>', `<body class="${THEMES[name]?.bodyClass ?? 'vscode-dark'}">`)
        .replace(
          `<script nonce="${nonce}" src=`,
          `<script nonce="${nonce}" src="${origin}/stub.js"></script>\n<script nonce="${nonce}" src=`,
        );
      return send('text/html', html);
    }
    res.writeHead(404);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const a = server.address();
  origin = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  return { url: origin, server, close: () => new Promise((r) => server.close(() => r())) };
}

export interface StubHost {
  service: InspectorService;
  source: SyntheticSource;
  saved: Record<string, CapValue>[];
  commands: { method: string; handle: string }[];
  logs: string[];
}

/** Wires a page to a real InspectorService over synthetic sessions. Call before `page.goto`. */
export async function attachHost(page: Page, sizes: readonly number[], extra: readonly SessionSource[] = []): Promise<StubHost> {
  const config = parseConfig({}).config;
  const source = new SyntheticSource();
  for (const n of sizes) source.add(new SyntheticSession(`replay:synthetic-${n}`, n, config));
  const saved: Record<string, CapValue>[] = [];
  const commands: { method: string; handle: string }[] = [];
  const logs: string[] = [];
  let caps: Record<string, CapValue> = {};
  const actions: InspectorActions = {
    config: () => ({ ...config, toolCaps: { ...config.toolCaps, ...caps } }),
    openStored: async (handle) => commands.push({ method: 'openStored', handle }),
    compare: async (handle) => commands.push({ method: 'compare', handle }),
    copyHandle: async (handle) => commands.push({ method: 'copyHandle', handle }),
    saveCaps: async (changes: Record<string, CapChoice>) => {
      const next = { ...caps };
      for (const [t, c] of Object.entries(changes)) {
        if (c === 'default') delete next[t];
        else next[t] = c;
      }
      caps = next;
      saved.push(next);
      return next;
    },
    log: (level, line) => logs.push(`${level}: ${line}`),
  };
  const service = new InspectorService([source, ...extra], actions, (m) => {
    // a JSON string crosses Playwright's protocol far faster than the same object graph
    void page.evaluate((text) => window.postMessage(JSON.parse(text), '*'), JSON.stringify(m)).catch(() => undefined);
  });
  await page.exposeBinding('__spillwayPost', (_src, m: unknown) => void service.receive(m));
  return { service, source, saved, commands, logs };
}
