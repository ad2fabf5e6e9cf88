/**
 * What users install holds nothing test-only (issue 14, point 2): the release .vsix, built by
 * `scripts/package-vsix.mjs` exactly as a release is, is unpacked and searched for the test
 * bridge the real-VS-Code harness uses (test/vscode/bridge/, packaged only with --test-bridge).
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unzip } from '../support/zip';

const ROOT = join(__dirname, '../..');
const NAME = `spillway-release-check-${process.pid}`;
const VSIX = join(ROOT, '.harness', `${NAME}.vsix`);
const STAGE = join(ROOT, '.harness', `package-${NAME}`);
let files: Map<string, Buffer>;
let manifest: { activationEvents: string[]; main: string };

beforeAll(() => {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts/package-vsix.mjs'), VSIX], { cwd: ROOT, encoding: 'utf8', timeout: 170_000 });
  expect(r.status, `package-vsix.mjs failed:\n${r.stdout}\n${r.stderr}`).toBe(0);
  files = unzip(VSIX);
  manifest = JSON.parse(files.get('extension/package.json')!.toString('utf8')) as typeof manifest;
}, 180_000);

afterAll(() => {
  rmSync(VSIX, { force: true });
  rmSync(STAGE, { recursive: true, force: true });
});

/**
 * The one `new Function` allowed: a bundled library's `new Function("return this")`, the old way
 * to find the global object, in the browser bundle only (the webview's CSP forbids eval anyway).
 */
const GLOBAL_LOOKUP = 'new Function("return this")';

describe('the release .vsix', () => {
  it('holds the extension bundle the manifest names, and the webview', () => {
    expect([...files.keys()]).toEqual(
      // cli.js: the extension launches its `mcp` command as the MCP server it registers
      expect.arrayContaining([
        'extension/package.json',
        'extension/dist/extension.js',
        'extension/dist/cli.js',
        'extension/dist/webview.js',
      ]),
    );
    expect(manifest.main).toBe('./dist/extension.js');
  });

  it('holds no source maps, sources or tests', () => {
    const unwanted = [...files.keys()].filter((f) => /\.map$|\.tsx?$|(^|\/)(test|src)\//.test(f));
    expect(unwanted).toEqual([]);
  });

  it('holds no test bridge: no SPILLWAY_TEST_OUT, no testBridge, no spillway.test.run, no eval', () => {
    const found: string[] = [];
    // the code and the manifest (the README describes the bridge, so it names these words)
    const code = [...files].filter(([name]) => /\.(js|cjs|mjs|json)$/.test(name));
    expect(code.map(([n]) => n)).toEqual(expect.arrayContaining(['extension/dist/extension.js', 'extension/package.json']));
    for (const [name, bytes] of code) {
      const text = bytes.toString('utf8');
      for (const needle of ['SPILLWAY_TEST_OUT', 'testBridge', 'registerTestBridge', 'spillway.test.run', 'activated.json']) {
        if (text.includes(needle)) found.push(`${name}: ${needle}`);
      }
      const evals =
        text
          .split(GLOBAL_LOOKUP)
          .join('')
          .match(/new Function\s*\(/g) ?? [];
      if (evals.length) found.push(`${name}: ${evals.length} new Function(`);
      if (name === 'extension/dist/extension.js' && text.includes(GLOBAL_LOOKUP)) found.push(`${name}: ${GLOBAL_LOOKUP}`);
    }
    expect(found).toEqual([]);
  });

  it('activates on exactly the documented events (onStartupFinished only for the proxy setting; see README)', () => {
    expect(manifest.activationEvents).toEqual([
      'onStartupFinished',
      'onFileSystem:spillway',
      'onWebviewPanel:spillway.inspector',
      'onLanguageModelTool:spillway_read_output',
      'onLanguageModelChatProvider:spillway',
    ]);
  });

  it('ships each tokenizer encoding as its own file beside a bundle that does not inline them', () => {
    const size = (f: string) => files.get(f)?.length ?? 0;
    expect(size('extension/dist/tokenizer-o200k_base.js')).toBeGreaterThan(1_000_000);
    expect(size('extension/dist/tokenizer-cl100k_base.js')).toBeGreaterThan(500_000);
    expect(size('extension/dist/extension.js')).toBeLessThan(1_500_000);
  });
});

describe('the test build the harness installs', () => {
  it('does carry the bridge (so the check above would see it if it leaked)', () => {
    const name = `spillway-test-check-${process.pid}`;
    const vsix = join(ROOT, '.harness', `${name}.vsix`);
    try {
      const r = spawnSync(process.execPath, [join(ROOT, 'scripts/package-vsix.mjs'), '--test-bridge', vsix], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 170_000,
      });
      expect(r.status, r.stderr).toBe(0);
      const test = unzip(vsix);
      const bundle = test.get('extension/dist/extension.js')!.toString('utf8');
      expect(bundle).toContain('SPILLWAY_TEST_OUT');
      expect(bundle).toMatch(/new Function\s*\(/);
      expect((JSON.parse(test.get('extension/package.json')!.toString('utf8')) as typeof manifest).activationEvents).toContain(
        'onStartupFinished',
      );
    } finally {
      rmSync(vsix, { force: true });
      rmSync(join(ROOT, '.harness', `package-${name}`), { recursive: true, force: true });
    }
  }, 180_000);
});
