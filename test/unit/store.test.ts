import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { handleFor } from '../../src/engine/handle';
import { SpillwayError, type StoredMeta } from '../../src/engine/types';
import { USED_REFRESH_MS, type OutputStore } from '../../src/store/entry';
import { detached } from '../../src/engine/memory-sink';
import { MemoryStore } from '../../src/store/memory';
import { FileStore, STALE_TEMP_MS } from '../../src/store/store';
import { meta } from '../support/stored-meta';

const DAY = 24 * 60 * 60 * 1000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

/** A clock the test moves by hand. */
function manualClock(start = T0) {
  let now = start;
  return { clock: () => new Date(now), set: (ms: number) => (now = ms), advance: (ms: number) => (now += ms) };
}

function putText(store: OutputStore, text: string, over: Partial<StoredMeta> = {}): string {
  const handle = handleFor(text);
  store.put(handle, text, meta(text, over));
  return handle;
}

function caught(fn: () => unknown): SpillwayError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SpillwayError);
    return error as SpillwayError;
  }
  throw new Error('expected a SpillwayError, nothing was thrown');
}

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-store-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const BAD_HANDLES = [
  '../x',
  'sw_../../etc/passwd',
  '/abs',
  '/etc/passwd',
  'sw_ABCDEF0123456789ABCDEF01',
  '',
  'sw_0123',
  'sw_0123456789abcdef01234567/..',
  'sw_0123456789abcdef0123456\\',
  'sw_0123456789abcdef012345678',
];

// The contract both stores keep, run against each.
describe.each([
  ['FileStore', (clock?: () => Date) => new FileStore(path.join(tmp, 'store'), clock ? { clock } : {})],
  ['MemoryStore', (clock?: () => Date) => new MemoryStore(clock ? { clock } : {})],
] as const)('%s', (_name, make) => {
  it('gives back exactly the text that was put', () => {
    const store = make();
    const text = 'héllo 😀 wörld\r\nline two\n\u0000end';
    expect(store.get(putText(store, text))).toBe(text);
  });

  it('stores the empty output', () => {
    const store = make();
    expect(store.get(putText(store, ''))).toBe('');
  });

  it('refuses a put whose text does not hash to the handle', () => {
    const store = make();
    const error = caught(() => store.put(handleFor('other'), 'text', meta('text')));
    expect(error.code).toBe('handle-mismatch');
    expect(error.message).toContain(handleFor('text'));
    expect(store.list()).toEqual([]);
  });

  it('records sizes measured from the text and the caller’s tool, call, stage, tokens and session', () => {
    const { clock } = manualClock();
    const store = make(clock);
    const text = 'a😀\nb\n';
    const handle = putText(store, text, { session: 's1', stage: 'budget', tool: 'read_file', callId: 'c9', tokens: 3 });
    expect(store.meta(handle)).toMatchObject({
      handle,
      tool: 'read_file',
      callId: 'c9',
      stage: 'budget',
      session: 's1',
      chars: 6,
      bytes: 8,
      lines: 2,
      tokens: 3,
      time: new Date(T0).toISOString(),
      used: new Date(T0).toISOString(),
      calls: [{ tool: 'read_file', callId: 'c9', stage: 'budget', session: 's1', time: new Date(T0).toISOString() }],
    });
    expect(store.meta(handle)?.sha256).toMatch(new RegExp(`^${handle.slice(3)}[0-9a-f]{40}$`));
  });

  it('keeps one entry for an output put twice by the same call', () => {
    const store = make();
    const handle = putText(store, 'same');
    putText(store, 'same');
    expect(store.list()).toHaveLength(1);
    expect(store.meta(handle)?.calls).toHaveLength(1);
  });

  it('lists each call that produced the same output once', () => {
    const store = make();
    const handle = putText(store, 'same', { callId: 'a' });
    putText(store, 'same', { callId: 'b', tool: 'grep' });
    putText(store, 'same', { callId: 'a' });
    expect(store.meta(handle)?.calls.map((c) => [c.tool, c.callId])).toEqual([
      ['bash', 'a'],
      ['grep', 'b'],
    ]);
    expect(store.meta(handle)?.callId).toBe('a');
  });

  it('refreshes the last-used time of a repeated put only once the refresh interval has passed', () => {
    const time = manualClock();
    const store = make(time.clock);
    const handle = putText(store, 'x');
    time.advance(USED_REFRESH_MS - 1);
    putText(store, 'x');
    expect(store.meta(handle)?.used).toBe(new Date(T0).toISOString());
    time.advance(1);
    putText(store, 'x');
    expect(store.meta(handle)?.used).toBe(new Date(T0 + USED_REFRESH_MS).toISOString());
    expect(store.meta(handle)?.time).toBe(new Date(T0).toISOString());
  });

  it('lists entries most recently used first', () => {
    const time = manualClock();
    const store = make(time.clock);
    const a = putText(store, 'a');
    time.advance(1000);
    const b = putText(store, 'b');
    time.advance(1000);
    const c = putText(store, 'c');
    expect(store.list().map((e) => e.handle)).toEqual([c, b, a]);
  });

  it('totals the UTF-8 bytes of the stored outputs', () => {
    const store = make();
    putText(store, 'abc');
    putText(store, '😀');
    putText(store, 'abc');
    expect(store.totalBytes()).toBe(7);
  });

  it('answers has and meta for stored and unknown handles', () => {
    const store = make();
    const handle = putText(store, 'x');
    expect(store.has(handle)).toBe(true);
    expect(store.has(handleFor('y'))).toBe(false);
    expect(store.meta(handleFor('y'))).toBeUndefined();
  });

  it('answers false and undefined for values that are not handles instead of throwing', () => {
    const store = make();
    for (const bad of BAD_HANDLES) {
      expect(store.has(bad)).toBe(false);
      expect(store.meta(bad)).toBeUndefined();
      expect(store.locate(bad)).toBeUndefined();
    }
  });

  it.each(BAD_HANDLES)('refuses %j in get, read and put as not a Spillway handle', (bad) => {
    const store = make();
    for (const call of [() => store.get(bad), () => store.read(bad, { lines: '1:2' }), () => store.put(bad, 'x', meta('x'))]) {
      const error = caught(call);
      expect(error.code).toBe('bad-handle');
      expect(error.message).toContain('is not a Spillway handle');
      expect(error.message).toContain('sw_ followed by 24 lowercase hex digits');
    }
  });

  it('reports a handle that is not stored as not found', () => {
    const store = make();
    const missing = handleFor('never stored');
    const error = caught(() => store.get(missing));
    expect(error.code).toBe('not-found');
    expect(error.message).toMatch(new RegExp(`^no stored output with handle ${missing} in `));
  });

  it('reads part of a stored output', () => {
    const store = make();
    const handle = putText(store, 'one\ntwo\nthree\n');
    expect(store.read(handle, { lines: '2:3' })).toMatchObject({ handle, text: 'two\nthree\n', shown: 'lines 2–3 of 3' });
  });

  it('checks read options before looking the handle up', () => {
    const store = make();
    const error = caught(() => store.read(handleFor('never stored'), { lines: 'x' }));
    expect(error.code).toBe('invalid-input');
  });

  it('prunes outputs unused for longer than maxAgeDays', () => {
    const time = manualClock();
    const store = make(time.clock);
    const old = putText(store, 'old');
    time.set(T0 + 5 * DAY);
    const middle = putText(store, 'middle');
    time.set(T0 + 10 * DAY);
    const fresh = putText(store, 'fresh');
    const result = store.prune({ maxAgeDays: 4, now: new Date(T0 + 10 * DAY) });
    expect(result).toMatchObject({ removed: 2, freedBytes: 3 + 6 });
    expect([store.has(old), store.has(middle), store.has(fresh)]).toEqual([false, false, true]);
  });

  it('keeps an old output that a call produced again recently', () => {
    const time = manualClock();
    const store = make(time.clock);
    const handle = putText(store, 'again');
    time.set(T0 + 9 * DAY);
    putText(store, 'again', { callId: 'later' });
    expect(store.prune({ maxAgeDays: 2, now: new Date(T0 + 10 * DAY) }).removed).toBe(0);
    expect(store.has(handle)).toBe(true);
  });

  it('prunes least recently used outputs first until the total fits maxBytes', () => {
    const time = manualClock();
    const store = make(time.clock);
    const a = putText(store, 'aaaa');
    time.advance(1000);
    const b = putText(store, 'bbbb');
    time.advance(1000);
    const c = putText(store, 'cccc');
    const result = store.prune({ maxBytes: 5 });
    expect(result).toMatchObject({ removed: 2, freedBytes: 8 });
    expect([store.has(a), store.has(b), store.has(c)]).toEqual([false, false, true]);
    expect(store.totalBytes()).toBe(4);
  });

  it('prunes nothing when the store is within its limits', () => {
    const store = make();
    putText(store, 'x');
    expect(store.prune({ maxAgeDays: 30, maxBytes: 1000 })).toMatchObject({ removed: 0, freedBytes: 0 });
  });

  it('refuses negative or fractional retention limits', () => {
    const store = make();
    expect(caught(() => store.prune({ maxBytes: -1 })).message).toMatch(/maxBytes must be a whole number of bytes ≥ 0, got -1/);
    expect(caught(() => store.prune({ maxBytes: 1.5 })).message).toMatch(/maxBytes/);
    expect(caught(() => store.prune({ maxAgeDays: -2 })).message).toMatch(/maxAgeDays must be a number of days ≥ 0, got -2/);
  });

  it('clears every stored output', () => {
    const store = make();
    const handle = putText(store, 'x');
    store.clear();
    expect(store.has(handle)).toBe(false);
    expect(store.list()).toEqual([]);
    expect(store.totalBytes()).toBe(0);
  });
});

describe('FileStore on disk', () => {
  const root = () => path.join(tmp, 'deep', 'store');
  const shardOf = (handle: string) => path.join(root(), 'objects', handle.slice(3, 5));

  it('creates its folder, with parents, on the first put', () => {
    const store = new FileStore(root());
    expect(fs.existsSync(root())).toBe(false);
    putText(store, 'x');
    expect(fs.existsSync(root())).toBe(true);
  });

  it('writes the output as UTF-8 under objects/<two hex digits>/<handle>.txt', () => {
    const store = new FileStore(root());
    const text = 'héllo 😀\r\n';
    const handle = putText(store, text);
    const file = path.join(shardOf(handle), `${handle}.txt`);
    expect(store.locate(handle)).toBe(file);
    expect(path.isAbsolute(file)).toBe(true);
    expect(fs.readFileSync(file).equals(Buffer.from(text, 'utf8'))).toBe(true);
  });

  it('keeps the index entry in a JSON file beside the output', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    const entry = JSON.parse(fs.readFileSync(path.join(shardOf(handle), `${handle}.json`), 'utf8'));
    expect(entry).toEqual(store.meta(handle));
  });

  it('resolves a relative root to an absolute path', () => {
    const store = new FileStore(path.relative(process.cwd(), root()));
    expect(store.root).toBe(root());
  });

  it('does not rewrite an output that is already stored', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    const file = store.locate(handle)!;
    const past = new Date(T0);
    fs.utimesSync(file, past, past);
    putText(store, 'x', { callId: 'other' });
    expect(fs.statSync(file).mtimeMs).toBe(past.getTime());
  });

  it('leaves no temp file behind after a put', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    expect(fs.readdirSync(shardOf(handle)).sort()).toEqual([`${handle}.json`, `${handle}.txt`]);
  });

  it('shares its outputs with another instance on the same folder', () => {
    const handle = putText(new FileStore(root()), 'shared');
    expect(new FileStore(root()).get(handle)).toBe('shared');
  });

  it('ignores a temp file left by an interrupted write and reports it in check', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    const temp = path.join(shardOf(handle), `.${handle}.txt.123.abcdef.tmp`);
    fs.writeFileSync(temp, 'half a wri');
    expect(store.get(handle)).toBe('x');
    expect(store.list().map((e) => e.handle)).toEqual([handle]);
    expect(store.totalBytes()).toBe(1);
    expect(store.check()).toEqual({ indexed: 1, unindexed: [], orphanIndexes: [], tempFiles: [temp] });
  });

  it('serves an output whose index file was truncated, checked against its handle', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'still here');
    const index = path.join(shardOf(handle), `${handle}.json`);
    fs.writeFileSync(index, fs.readFileSync(index, 'utf8').slice(0, 40));
    expect(store.get(handle)).toBe('still here');
    expect(store.has(handle)).toBe(true);
    expect(store.meta(handle)).toBeUndefined();
    expect(store.list()).toEqual([]);
    expect(store.check().unindexed).toEqual([handle]);
  });

  it('ignores an index file whose calls are not call records', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    const index = path.join(shardOf(handle), `${handle}.json`);
    fs.writeFileSync(index, JSON.stringify({ ...store.meta(handle), calls: [null] }));
    expect(store.meta(handle)).toBeUndefined();
    putText(store, 'x');
    expect(store.meta(handle)?.calls).toHaveLength(1);
  });

  it('rewrites a truncated index file on the next put of the same output', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    fs.writeFileSync(path.join(shardOf(handle), `${handle}.json`), '{"handle":');
    putText(store, 'x');
    expect(store.meta(handle)?.handle).toBe(handle);
  });

  it('repairs an output file that lost bytes on disk when the output is put again', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'complete text');
    fs.writeFileSync(store.locate(handle)!, 'compl');
    putText(store, 'complete text');
    expect(store.get(handle)).toBe('complete text');
  });

  it('reports an output changed on disk as corrupt, naming the handle and the file', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'original');
    const file = store.locate(handle)!;
    fs.writeFileSync(file, 'tampered');
    const error = caught(() => store.get(handle));
    expect(error.code).toBe('corrupt');
    expect(error.message).toContain(handle);
    expect(error.message).toContain(file);
  });

  it('reports corruption through read as well', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'original');
    fs.writeFileSync(store.locate(handle)!, 'tampered');
    expect(caught(() => store.read(handle, { lines: '1' })).code).toBe('corrupt');
  });

  it('detects a changed output even when its index file is gone', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'original');
    fs.rmSync(path.join(shardOf(handle), `${handle}.json`));
    fs.writeFileSync(store.locate(handle)!, 'tampered');
    expect(caught(() => store.get(handle)).code).toBe('corrupt');
  });

  it('refuses bad handles without creating or reading anything', () => {
    const outside = path.join(tmp, 'secret.txt');
    fs.writeFileSync(outside, 'do not read');
    const store = new FileStore(root());
    for (const bad of ['../secret.txt', '../../secret', `sw_../../../secret`, outside, '..']) {
      expect(caught(() => store.get(bad)).code).toBe('bad-handle');
      expect(caught(() => store.put(bad, 'x', meta('x'))).code).toBe('bad-handle');
    }
    expect(fs.existsSync(root())).toBe(false);
    expect(fs.readdirSync(tmp)).toEqual(['secret.txt']);
  });

  it('reports not found, not a crash, when the store folder was deleted', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    fs.rmSync(root(), { recursive: true });
    const error = caught(() => store.get(handle));
    expect(error.code).toBe('not-found');
    expect(error.message).toBe(`no stored output with handle ${handle} in ${root()} (the store folder does not exist)`);
    expect(store.has(handle)).toBe(false);
    expect(store.list()).toEqual([]);
    expect(store.totalBytes()).toBe(0);
    expect(store.prune({ maxBytes: 0 })).toEqual({ removed: 0, freedBytes: 0, tempFiles: 0 });
  });

  it('recreates a deleted store folder on the next put', () => {
    const store = new FileStore(root());
    putText(store, 'x');
    fs.rmSync(root(), { recursive: true });
    expect(store.get(putText(store, 'y'))).toBe('y');
  });

  it('prunes temp files older than the stale limit and leaves fresh ones', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    const stale = path.join(shardOf(handle), '.stale.txt.1.aa.tmp');
    const fresh = path.join(shardOf(handle), '.fresh.txt.1.bb.tmp');
    fs.writeFileSync(stale, '');
    fs.writeFileSync(fresh, '');
    const old = new Date(Date.now() - STALE_TEMP_MS - 60_000);
    fs.utimesSync(stale, old, old);
    expect(store.prune({ now: new Date() }).tempFiles).toBe(1);
    expect([fs.existsSync(stale), fs.existsSync(fresh)]).toEqual([false, true]);
    expect(store.get(handle)).toBe('x');
  });

  it('prunes index files whose output is gone', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    fs.rmSync(store.locate(handle)!);
    expect(store.check().orphanIndexes).toEqual([handle]);
    store.prune({});
    expect(fs.existsSync(path.join(shardOf(handle), `${handle}.json`))).toBe(false);
  });

  it('removes the index file and empty shard folder along with a pruned output', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    store.prune({ maxBytes: 0 });
    expect(fs.existsSync(shardOf(handle))).toBe(false);
  });

  it('ages an output without a readable index by its file time', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    fs.rmSync(path.join(shardOf(handle), `${handle}.json`));
    const old = new Date(Date.now() - 40 * DAY);
    fs.utimesSync(store.locate(handle)!, old, old);
    expect(store.prune({ maxAgeDays: 30 }).removed).toBe(1);
  });

  it('leaves files it does not own alone when clearing and pruning', () => {
    const store = new FileStore(root());
    const handle = putText(store, 'x');
    fs.writeFileSync(path.join(root(), 'turns.jsonl'), '{}\n');
    fs.writeFileSync(path.join(shardOf(handle), 'notes.md'), 'mine');
    store.prune({ maxBytes: 0 });
    expect(fs.existsSync(path.join(shardOf(handle), 'notes.md'))).toBe(true);
    store.clear();
    expect(fs.readdirSync(root())).toEqual(['turns.jsonl']);
  });

  it('stores and reads back the same way with durable writes turned off', () => {
    const store = new FileStore(root(), { durable: false });
    const handle = putText(store, 'fast');
    expect(store.get(handle)).toBe('fast');
    expect(fs.readdirSync(shardOf(handle)).sort()).toEqual([`${handle}.json`, `${handle}.txt`]);
  });

  it('refuses an empty store folder name', () => {
    expect(() => new FileStore('')).toThrow(/the store folder must be a path/);
  });
});

describe('detached copies (what the stores keep of the strings the engine hands them)', () => {
  it('are equal to the original, lone surrogates and all', () => {
    for (const s of ['', 'bash', 'call_abc123', 'ü → 漢字 🙂', '\ud800 lone', 'x'.repeat(10_000)]) expect(detached(s)).toBe(s);
  });

  it('are what a store records for the tool, call and session of a put', () => {
    const body = JSON.stringify({ tool: 'bash', callId: 'call_1', session: 's-1' });
    const store = new MemoryStore();
    const text = 'output';
    store.put(handleFor(text), text, { ...meta(text), tool: body.slice(9, 13), callId: body.slice(25, 31), session: body.slice(44, 47) });
    expect(store.meta(handleFor(text))).toMatchObject({ tool: 'bash', callId: 'call_1', session: 's-1' });
  });
});

describe('MemoryStore', () => {
  it('has no file to locate', () => {
    const store = new MemoryStore();
    expect(store.locate(putText(store, 'x'))).toBeUndefined();
  });

  it('says in memory when a handle is not found', () => {
    const missing = handleFor('nope');
    expect(caught(() => new MemoryStore().get(missing)).message).toBe(`no stored output with handle ${missing} in memory`);
  });

  it('keeps unpaired surrogates exactly', () => {
    const store = new MemoryStore();
    const text = 'a\ud800b';
    expect(store.get(putText(store, text))).toBe(text);
  });
});
