/**
 * Activation in a real VS Code (issue 14, point 5). The extension activates on startup only so that
 * `spillway.proxy.enabled` can start the proxy without a user action (VS Code has no activation
 * event for a setting's value); with nothing enabled, activation must stay cheap: no tokenizer
 * table loaded, no proxy listening. The time it takes (bundle load + `activate`, from performance
 * marks in the test build) is written to test-results/activation.json for the README.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, ROOT, type Harness } from './harness';
import { anthropicRequest, testLog } from './requests';

let vs: Harness;

beforeAll(async () => {
  vs = await launch({ name: 'activation' });
});

afterAll(async () => {
  await vs?.close();
});

describe('activation', () => {
  it('with nothing enabled, activation loads no tokenizer table and starts no proxy, and its time is recorded', async () => {
    const activated = JSON.parse(readFileSync(join(vs.out, 'activated.json'), 'utf8')) as {
      timing: { loadMs: number; activateMs: number; totalMs: number } | null;
    };
    expect(activated.timing, 'the test build records load and activate times').not.toBeNull();
    const state = await vs.run(({ require, vscode }) => ({
      tokenizers: Object.keys(require.cache).filter((f) => f.includes('tokenizer-')),
      proxyEnabled: vscode.workspace.getConfiguration('spillway').get<boolean>('proxy.enabled') ?? null,
    }));
    expect(state).toEqual({ tokenizers: [], proxyEnabled: false });
    const timing = activated.timing!;
    process.stderr.write(
      `[activation] bundle load ${timing.loadMs.toFixed(1)} ms, activate() ${timing.activateMs.toFixed(1)} ms, total ${timing.totalMs.toFixed(1)} ms\n`,
    );
    mkdirSync(join(ROOT, 'test-results'), { recursive: true });
    writeFileSync(join(ROOT, 'test-results', 'activation.json'), JSON.stringify(timing, null, 2) + '\n');
  });

  it('the first projection loads the o200k_base table and only it', async () => {
    const loaded = await vs.run(
      async ({ api, require }, req) => {
        await api.project(req);
        return Object.keys(require.cache)
          .filter((f) => f.includes('tokenizer-'))
          .map((f) => f.split('/').pop());
      },
      anthropicRequest('bash', 'toolu_activation', testLog(400)),
    );
    expect(loaded).toEqual(['tokenizer-o200k_base.js']);
  });
});
