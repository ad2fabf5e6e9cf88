/**
 * `spillway.proxy.mode` (issue 21): declared from its zod schema, read back with a clear problem for
 * a bad value, the same modes as the proxy's, and offered as the walkthrough's first step.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { contributes, WALKTHROUGH } from '../../src/extension/pure/contributes';
import type { InspectedValue } from '../../src/extension/pure/settings';
import { PROXY_KEYS, proxyStatus, readProxySettings } from '../../src/extension/proxyConfig';
import { PROXY_MODES } from '../../src/proxy/observe';

const inspectOf =
  (values: Record<string, unknown>) =>
  (key: string): InspectedValue | undefined =>
    key in values ? { globalValue: values[key] } : undefined;

describe('spillway.proxy.mode', () => {
  it('is declared in package.json as project or observe, project by default', () => {
    const props = (contributes().configuration as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(props['spillway.proxy.mode']).toMatchObject({ type: 'string', default: 'project', enum: ['project', 'observe'] });
    expect(String(props['spillway.proxy.mode']!.markdownDescription)).toMatch(/byte for byte/);
  });

  it('offers exactly the modes the proxy has', () => {
    const schema = PROXY_KEYS.find((k) => k.key === 'proxy.mode')!.schema;
    for (const m of PROXY_MODES) expect(schema.safeParse(m).success, m).toBe(true);
    expect(schema.safeParse('off').success).toBe(false);
  });

  it('reads observe, and falls back to project with a problem naming the setting for anything else', () => {
    expect(readProxySettings(inspectOf({ 'proxy.mode': 'observe' })).settings.mode).toBe('observe');
    const r = readProxySettings(inspectOf({ 'proxy.mode': 'watch' }));
    expect(r.settings.mode).toBe('project');
    expect(r.problems).toEqual([{ setting: 'spillway.proxy.mode', message: 'expected "project" or "observe", got "watch"' }]);
  });

  it('is the first step of the walkthrough, with its page in the package', () => {
    const first = WALKTHROUGH.steps[0];
    expect(first.id).toBe('observe');
    expect(first.completionEvents).toEqual(['onSettingChanged:spillway.proxy.mode']);
    const page = fs.readFileSync(join(__dirname, '../..', first.media.markdown), 'utf8');
    expect(page).toMatch(/byte for byte/);
    expect(page).toMatch(/would have saved/);
  });

  it('is shown in the status bar, so observed figures are never mistaken for savings made', () => {
    const state = {
      url: 'http://127.0.0.1:8417',
      port: 8417,
      wantedPort: 8417,
      turns: 0,
      sessions: 0,
      savedTokens: 0,
      openaiUpstream: 'https://api.openai.com/v1',
      anthropicUpstream: 'https://api.anthropic.com',
    };
    expect(proxyStatus({ ...state, observe: true }).text).toBe('$(radio-tower) Spillway proxy :8417 (observe)');
    expect(proxyStatus({ ...state, observe: true }).tooltip).toMatch(/observe mode: requests go upstream unchanged/);
    expect(proxyStatus(state).text).toBe('$(radio-tower) Spillway proxy :8417');
  });
});
