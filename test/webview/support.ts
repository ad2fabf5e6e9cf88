/**
 * Helpers for the webview component tests (jsdom): the DOM APIs jsdom lacks that the toolkit uses,
 * and a stubbed `acquireVsCodeApi` whose messages go to the real InspectorService over synthetic
 * sessions, answering through `window.postMessage` as VS Code does.
 * Import it first in each test file.
 */
import { act, configure } from '@testing-library/react';
import { parseConfig, type SpillwayConfig } from '../../src/engine';

// the machine is shared: give asynchronous queries more than the default second before failing
configure({ asyncUtilTimeout: 5_000 });
import { InspectorService, type InspectorActions } from '../../src/extension/inspector/service';
import { Host, type VsCodeApi } from '../../webview/host';
import { SyntheticSession, SyntheticSource } from '../../bench/inspector-fixture';

if (typeof window !== 'undefined' && !window.matchMedia) {
  (window as unknown as { matchMedia: unknown }).matchMedia = (q: string) => ({
    matches: false,
    media: q,
    onchange: null,
    addListener() {},
    removeListener() {},
    addEventListener() {},
    removeEventListener() {},
    dispatchEvent: () => false,
  });
}

export interface Stub {
  api: VsCodeApi & { sent: unknown[]; state: unknown };
  host: Host;
  service: InspectorService;
  source: SyntheticSource;
  calls: { method: string; args: unknown }[];
  logs: string[];
}

/** A webview Host wired to a real InspectorService holding sessions of the given sizes. */
export function stubHost(sizes: number[] = [40], state: unknown = null): Stub {
  const config = parseConfig({}).config;
  const source = new SyntheticSource();
  for (const n of sizes) source.add(new SyntheticSession(`replay:synthetic-${n}`, n, config, 50_000));
  const calls: Stub['calls'] = [];
  const logs: string[] = [];
  const actions: InspectorActions = {
    config: () => config,
    openStored: async (handle) => calls.push({ method: 'openStored', args: handle }),
    compare: async (handle) => calls.push({ method: 'compare', args: handle }),
    copyHandle: async (handle) => calls.push({ method: 'copyHandle', args: handle }),
    saveCaps: async (caps) => {
      calls.push({ method: 'saveCaps', args: caps });
      return Object.fromEntries(Object.entries(caps).filter(([, v]) => v !== 'default')) as Record<string, number | 'unlimited'>;
    },
    log: (level, line) => logs.push(`${level}: ${line}`),
  };
  const service = new InspectorService([source], actions, (m) => window.dispatchEvent(new MessageEvent('message', { data: m })));
  const api = {
    sent: [] as unknown[],
    state,
    postMessage(m: unknown) {
      api.sent.push(m);
      // asynchronous, like the real channel
      setTimeout(() => void service.receive(JSON.parse(JSON.stringify(m))), 0);
    },
    getState: () => api.state,
    setState: (s: unknown) => {
      api.state = s;
    },
  };
  (globalThis as unknown as { acquireVsCodeApi: () => VsCodeApi }).acquireVsCodeApi = () => api;
  const host = new Host(acquireVsCodeApi());
  return { api, host, service, source, calls, logs };
}

/** Sets a toolkit field's value and fires the event a person's typing would (custom elements have no React value setter). */
export function typeInto(el: Element, value: string, event = 'input') {
  (el as HTMLInputElement).value = value;
  act(() => {
    el.dispatchEvent(new Event(event, { bubbles: true }));
  });
}

/** A host service over `sources` whose messages to the webview are collected in `posted` (no webview). */
export function wiredService(
  sources: ConstructorParameters<typeof InspectorService>[0],
  config: SpillwayConfig,
  progress?: InspectorActions['progress'],
) {
  const posted: { kind: string; method: string; ok?: boolean; error?: string; result?: unknown }[] = [];
  const actions: InspectorActions = {
    config: () => config,
    openStored: async () => undefined,
    compare: async () => undefined,
    copyHandle: async () => undefined,
    saveCaps: async () => ({}),
    log: () => undefined,
    ...(progress ? { progress } : {}),
  };
  const s = new InspectorService(sources, actions, (m) => posted.push(m as never));
  return { s, posted };
}
