/**
 * A private store (issue 21): on POSIX everything Spillway writes (outputs, index entries, proxy
 * recordings, projected records, the inspector's archive) is owner-only, and a store an older
 * version left readable by every local user is tightened when it is opened. Real files, real modes.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handleFor } from '../../src/engine/handle';
import { FileStore } from '../../src/store/store';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE, tightenPrivate } from '../../src/store/private';
import { Recorder } from '../../src/proxy/recording';
import { SessionArchive } from '../../src/extension/inspector/archive';
import { startProxy } from '../../src/proxy/server';
import { meta } from '../support/stored-meta';

const posix = process.platform !== 'win32';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-private-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const mode = (p: string) => fs.statSync(p).mode & 0o777;

/** Every entry under `root` (root included) with its permission bits. */
function modes(root: string): Array<{ path: string; dir: boolean; mode: number }> {
  const out: Array<{ path: string; dir: boolean; mode: number }> = [];
  const visit = (p: string) => {
    const st = fs.statSync(p);
    out.push({ path: path.relative(root, p) || '.', dir: st.isDirectory(), mode: st.mode & 0o777 });
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) visit(path.join(p, n));
  };
  visit(root);
  return out;
}

function expectPrivate(root: string): void {
  const all = modes(root);
  expect(all.filter((e) => !e.dir).length, `files under ${root}`).toBeGreaterThan(0);
  for (const e of all)
    expect({ path: e.path, mode: e.mode.toString(8) }).toEqual({
      path: e.path,
      mode: (e.dir ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE).toString(8),
    });
}

const OUTPUT = 'API_TOKEN=sk-live-not-for-others\n'.repeat(200);

describe.runIf(posix)('a private store on POSIX', () => {
  it('writes outputs and index entries 0600 in folders 0700 when writing synchronously', () => {
    const root = path.join(tmp, 'store');
    new FileStore(root).put(handleFor(OUTPUT), OUTPUT, meta(OUTPUT));
    expectPrivate(path.join(root, 'objects'));
  });

  it('writes outputs and index entries 0600 in folders 0700 when writing in the background', async () => {
    const root = path.join(tmp, 'store');
    const store = new FileStore(root, { background: true });
    store.put(handleFor(OUTPUT), OUTPUT, meta(OUTPUT));
    await store.written([handleFor(OUTPUT)]);
    expectPrivate(path.join(root, 'objects'));
  });

  it("writes the proxy's recorded bodies and turns 0600 in folders 0700", async () => {
    const dir = path.join(tmp, 'sessions');
    const rec = new Recorder(dir, { bodies: true });
    const ref = await rec.putBody(Buffer.from(OUTPUT));
    rec.append({
      v: 1,
      session: 's_1',
      turn: 1,
      time: new Date().toISOString(),
      path: '/v1/chat/completions',
      format: 'openai-chat',
      originalBytes: OUTPUT.length,
      projectedBytes: OUTPUT.length,
      reductions: [],
      status: 200,
      durationMs: 1,
      ...(ref ? { requestRef: ref, projectionRef: ref } : {}),
    });
    expectPrivate(dir);
  });

  it("writes the inspector's archive 0600 in folders 0700", () => {
    const dir = path.join(tmp, 'inspector-sessions');
    const archive = new SessionArchive(() => dir);
    const header = { v: 1 as const, origin: 'api', name: 'n', title: 'n', detail: '', created: new Date().toISOString() };
    archive.begin(header);
    archive.append('api', 'n', { summary: {} as never, reductions: [], missed: [] });
    expectPrivate(dir);
  });

  it('tightens an old 0644/0755 store to 0600/0700 and says so in one log line', async () => {
    const root = path.join(tmp, 'store');
    new FileStore(root).put(handleFor(OUTPUT), OUTPUT, meta(OUTPUT));
    for (const e of modes(root)) fs.chmodSync(path.join(root, e.path), e.dir ? 0o755 : 0o644);
    const lines: string[] = [];
    const done = await tightenPrivate([root], (l) => lines.push(l));
    expectPrivate(root);
    expect(done).toEqual({ files: 2, folders: 3 });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/2 file\(s\) set to 0600 and 3 folder\(s\) to 0700/);
  });

  it('leaves a store that is already private alone, without a log line', async () => {
    const root = path.join(tmp, 'store');
    new FileStore(root).put(handleFor(OUTPUT), OUTPUT, meta(OUTPUT));
    const lines: string[] = [];
    expect(await tightenPrivate([root, path.join(tmp, 'missing')], (l) => lines.push(l))).toEqual({ files: 0, folders: 0 });
    expect(lines).toEqual([]);
  });

  it('keeps bits the owner had taken away (a 0400 file stays 0400, not widened to 0600)', async () => {
    const file = path.join(tmp, 'read-only.txt');
    fs.writeFileSync(file, 'x');
    fs.chmodSync(file, 0o444);
    await tightenPrivate([file]);
    expect(mode(file)).toBe(0o400);
  });

  it('does not follow a symbolic link out of the store', async () => {
    const outside = path.join(tmp, 'outside.txt');
    fs.writeFileSync(outside, 'x');
    fs.chmodSync(outside, 0o644);
    fs.mkdirSync(path.join(tmp, 'store'));
    fs.symlinkSync(outside, path.join(tmp, 'store', 'link'));
    await tightenPrivate([path.join(tmp, 'store')]);
    expect(mode(outside)).toBe(0o644);
  });

  it('the proxy tightens an old store and recordings when it starts, in one log line', async () => {
    const root = path.join(tmp, 'store');
    new FileStore(root).put(handleFor(OUTPUT), OUTPUT, meta(OUTPUT));
    const sessions = path.join(tmp, 'sessions');
    fs.mkdirSync(sessions, { mode: 0o755 });
    fs.writeFileSync(path.join(sessions, 's_old.jsonl'), '{}\n', { mode: 0o644 });
    for (const e of modes(root)) fs.chmodSync(path.join(root, e.path), e.dir ? 0o755 : 0o644);
    const lines: string[] = [];
    const proxy = await startProxy({ port: 0, storeDir: root, log: (l) => lines.push(l) });
    await proxy.close();
    expectPrivate(root);
    expectPrivate(sessions);
    expect(lines.filter((l) => l.includes('private to their owner'))).toHaveLength(1);
  });
});
