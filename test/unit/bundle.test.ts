/**
 * The node bundles (issue 14, point 5): minified, and each tokenizer encoding in its own file that
 * loads only when a count with that encoding is made. Checked on the built dist/ (test/setup/build.ts
 * builds it) by running the CLI with a preload that reports which of our files Node loaded.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const DIST = join(__dirname, '../../dist');
const dir = mkdtempSync(join(tmpdir(), 'spillway-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hook = join(dir, 'loaded.js');
writeFileSync(
  hook,
  `process.on('exit', () => { require('fs').writeFileSync(process.env.LOADED_OUT, JSON.stringify(Object.keys(require.cache).filter((f) => f.includes('tokenizer-')).map((f) => require('path').basename(f)))); });`,
);

const big = Array.from({ length: 3000 }, (_, i) => `line ${i} of some output`).join('\n');
const request = JSON.stringify({
  model: 'm',
  messages: [
    { role: 'user', content: 'go' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: big },
  ],
});

function loadedBy(args: string[], input?: string): string[] {
  const out = join(dir, `loaded-${Math.random().toString(36).slice(2)}.json`);
  const r = spawnSync(process.execPath, ['-r', hook, join(DIST, 'cli.js'), ...args], {
    input,
    encoding: 'utf8',
    env: { ...process.env, LOADED_OUT: out, SPILLWAY_STORE: join(dir, 'store') },
  });
  expect(r.status, r.stderr).toBe(0);
  return (JSON.parse(readFileSync(out, 'utf8')) as string[]).sort();
}

describe('tokenizer encodings load on demand, one file each', () => {
  it('the default (o200k_base) loads its own table and not cl100k_base', () => {
    expect(loadedBy(['project'], request)).toEqual(['tokenizer-o200k_base.js']);
  });

  it('cl100k_base loads only its own table', () => {
    const config = join(dir, 'cl100k.json');
    writeFileSync(config, JSON.stringify({ tokenizer: 'cl100k_base' }));
    expect(loadedBy(['project', '--config', config], request)).toEqual(['tokenizer-cl100k_base.js']);
  });

  it('approximate counting, and a projection with nothing to count, load none', () => {
    const config = join(dir, 'approx.json');
    writeFileSync(config, JSON.stringify({ tokenizer: 'approximate' }));
    expect(loadedBy(['project', '--config', config], request)).toEqual([]);
    expect(loadedBy(['--help'])).toEqual([]);
  });

  it('the bundles do not carry the tables themselves, and are minified', () => {
    for (const bundle of ['cli.js', 'extension.js']) {
      const text = readFileSync(join(DIST, bundle), 'utf8');
      // a few of o200k_base's rank-table entries would be there if the table were inlined
      expect(statSync(join(DIST, bundle)).size, bundle).toBeLessThan(1_500_000);
      // minified bundles are long lines: the newlines left are inside template literals (zod's compiled
      // checks carry a few hundred), so the check is the mean line length, not a line count; an
      // unminified bundle averages under 50 characters a line
      const lines = text.split('\n').length;
      expect(text.length / lines, `${bundle}: ${lines} lines, mean length`).toBeGreaterThan(2_000);
    }
    expect(statSync(join(DIST, 'tokenizer-o200k_base.js')).size).toBeGreaterThan(1_000_000);
    expect(statSync(join(DIST, 'tokenizer-cl100k_base.js')).size).toBeGreaterThan(500_000);
  });
});
