/**
 * Background store writes (issue 14, point 4): `put` returns before the disk is touched, reads of
 * not-yet-written outputs come from memory, files still go temp-then-rename (output before its
 * entry, outputs in put order), `flush` waits for all of it, and a failed write is reported,
 * retried, and kept readable in memory until a later flush succeeds. Nothing put is ever lost.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { handleFor } from '../../src/engine/handle';
import type { StoredMeta } from '../../src/engine/types';
import { FileStore, WRITE_TRIES } from '../../src/store/store';
import { createEngine } from '../../src/engine/engine';
import { meta } from '../support/stored-meta';

function put(store: FileStore, text: string, over: Partial<StoredMeta> = {}): string {
  const handle = handleFor(text);
  store.put(handle, text, meta(text, over));
  return handle;
}

const files = (root: string) =>
  fs.existsSync(path.join(root, 'objects'))
    ? fs
        .readdirSync(path.join(root, 'objects'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.txt') || f.endsWith('.json'))
        .map((f) => path.basename(f))
        .sort()
    : [];

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-bg-'));
});
afterEach(() => {
  vi.restoreAllMocks();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('background writes', () => {
  it('put returns before anything is on disk, and every read serves the output from memory', async () => {
    const store = new FileStore(tmp, { background: true });
    const text = 'héllo\n'.repeat(1000);
    const h = put(store, text);
    expect(files(tmp), 'files written synchronously by put').toEqual([]);
    expect(store.unflushed).toBe(1);
    expect(store.has(h)).toBe(true);
    expect(store.get(h)).toBe(text);
    expect(store.read(h, { lines: '2:3' }).text).toBe('héllo\nhéllo\n');
    expect(store.locate(h)).toBe(path.join(tmp, 'objects', h.slice(3, 5), `${h}.txt`));
    expect(store.meta(h)).toMatchObject({ handle: h, chars: text.length, bytes: Buffer.byteLength(text), calls: [{ callId: 'call_1' }] });
    expect(store.list().map((e) => e.handle)).toEqual([h]);
    expect(store.totalBytes()).toBe(Buffer.byteLength(text));
    await store.flush();
    expect(store.unflushed).toBe(0);
    expect(files(tmp)).toEqual([`${h}.json`, `${h}.txt`]);
    expect(new FileStore(tmp).get(h), 'a synchronous store reads what the background one wrote').toBe(text);
    expect(new FileStore(tmp).meta(h)).toEqual(store.meta(h));
  });

  it('writes temp file then rename, each output before its index entry, outputs in put order', async () => {
    const renames: string[] = [];
    const real = fs.promises.rename;
    vi.spyOn(fs.promises, 'rename').mockImplementation(async (from, to) => {
      expect(path.basename(String(from))).toMatch(/^\..*\.tmp$/);
      renames.push(path.basename(String(to)));
      return real(from, to);
    });
    const store = new FileStore(tmp, { background: true });
    const handles = ['one', 'two', 'three', 'four'].map((t) => put(store, t.repeat(500)));
    await store.flush();
    expect(renames).toEqual(handles.flatMap((h) => [`${h}.txt`, `${h}.json`]));
    expect(fs.readdirSync(path.join(tmp, 'objects'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('a put of the same output while it is pending or being written is recorded in its entry', async () => {
    const store = new FileStore(tmp, { background: true });
    const text = 'same output '.repeat(100);
    const h = put(store, text, { callId: 'call_1' });
    const writing = store.flush();
    put(store, text, { callId: 'call_2' });
    await writing;
    await store.flush();
    expect(new FileStore(tmp).meta(h)?.calls.map((c) => c.callId)).toEqual(['call_1', 'call_2']);
  });

  it('flush resolves only when everything put so far is on disk', async () => {
    const store = new FileStore(tmp, { background: true });
    const handles = Array.from({ length: 50 }, (_, i) => put(store, `output ${i} `.repeat(200)));
    await store.flush();
    const disk = new FileStore(tmp);
    expect(
      handles.filter((h) => !disk.has(h)),
      'handles missing on disk after flush',
    ).toEqual([]);
  });

  it('a failed write is reported, retried, kept readable in memory, and written by a later flush', async () => {
    const blocker = path.join(tmp, 'blocker');
    fs.writeFileSync(blocker, 'a file where the store folder should be');
    const errors: Array<{ handle: string; attempt: number }> = [];
    const store = new FileStore(blocker, {
      background: true,
      retryMs: 1,
      onWriteError: (handle, _e, attempt) => errors.push({ handle, attempt }),
    });
    const text = 'precious output\n'.repeat(100);
    const h = put(store, text);
    const first = await store.flush();
    expect(first.failed).toEqual([h]);
    expect(errors).toEqual(Array.from({ length: WRITE_TRIES }, (_, i) => ({ handle: h, attempt: i + 1 })));
    expect(store.get(h), 'still readable after the writes failed').toBe(text);
    fs.rmSync(blocker);
    const second = await store.flush();
    expect(second.failed).toEqual([]);
    expect(new FileStore(blocker).get(h)).toBe(text);
  });

  it('the engine projects through a background store without waiting, and every handle reads back after flush', async () => {
    const store = new FileStore(tmp, { background: true });
    const engine = createEngine({ tokenizer: 'approximate' }, { store });
    const out = 'x'.repeat(20_000);
    const request = {
      model: 'm',
      messages: [
        { role: 'user', content: 'go' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: out },
      ],
    };
    const p = engine.project(JSON.stringify(request), 'openai-chat');
    const h = p.reductions[0]!.handle;
    expect(files(tmp)).toEqual([]);
    // projecting the projection still recognises the marker: the pending handle counts as stored
    expect(engine.project(p.request, 'openai-chat').stats.markersSeen).toBe(1);
    await store.flush();
    expect(new FileStore(tmp).get(h)).toBe(out);
  });
});

describe('background prune', () => {
  it('removes what prune would, in slices, and never an output not yet written', async () => {
    let now = Date.parse('2026-01-01T00:00:00Z');
    const clock = () => new Date(now);
    const sync = new FileStore(tmp, { clock });
    const old = Array.from({ length: 150 }, (_, i) => {
      const t = `old ${i} `.repeat(50);
      sync.put(handleFor(t), t, meta(t));
      return handleFor(t);
    });
    now += 40 * 24 * 3600 * 1000;
    const fresh = (() => {
      const t = 'fresh '.repeat(50);
      sync.put(handleFor(t), t, meta(t));
      return handleFor(t);
    })();
    const store = new FileStore(tmp, { clock, background: true });
    const pendingOld = old[0]!;
    // put again (not yet written): in use now, so not pruned even though its file is old
    store.put(pendingOld, sync.get(pendingOld), meta(sync.get(pendingOld), { callId: 'again' }));
    let turns = 0;
    const ticker = setInterval(() => turns++, 0);
    const result = await store.pruneInBackground({ maxAgeDays: 30 });
    clearInterval(ticker);
    expect(result.removed).toBe(old.length - 1);
    expect(store.has(pendingOld)).toBe(true);
    expect(store.has(fresh)).toBe(true);
    expect(old.slice(1).filter((h) => store.has(h))).toEqual([]);
    expect(turns, 'the event loop ran while the prune was in progress').toBeGreaterThan(0);
    await store.flush();
    expect(new FileStore(tmp).get(pendingOld)).toBe(sync.get(pendingOld));
  });
});
