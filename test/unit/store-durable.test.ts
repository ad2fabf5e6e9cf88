/**
 * Durable before sent (issue 21): a store that writes in the background says when given outputs are
 * on disk (`written`), and `whenStored` waits for every handle a projection's markers point at, so
 * hosts release a projection only then.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine';
import { handleFor } from '../../src/engine/handle';
import { MemorySink } from '../../src/engine/memory-sink';
import { SpillwayError, whenStored } from '../../src/engine/types';
import { FileStore } from '../../src/store/store';
import { meta } from '../support/stored-meta';

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-durable-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

const TEXT = 'line of a long test log\n'.repeat(2_000);

function bigToolCall(text: string) {
  return {
    model: 'm',
    messages: [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'bash', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: text },
    ],
  };
}

describe('FileStore.written', () => {
  it('resolves only once a background put is on disk', async () => {
    const store = new FileStore(tmp, { background: true });
    const h = handleFor(TEXT);
    store.put(h, TEXT, meta(TEXT));
    const file = store.pathFor(h)!;
    expect(fs.existsSync(file), 'a background put returns before it writes').toBe(false);
    await store.written([h]);
    expect(fs.readFileSync(file, 'utf8')).toBe(TEXT);
    expect(store.unflushed).toBe(0);
  });

  it('resolves at once for handles already on disk or never put here', async () => {
    const store = new FileStore(tmp, { background: true });
    const h = handleFor(TEXT);
    store.put(h, TEXT, meta(TEXT));
    await store.flush();
    await expect(store.written([h, handleFor('never put')])).resolves.toBeUndefined();
  });

  it('rejects with the handle and the reason when the output cannot be written', async () => {
    const blocker = path.join(tmp, 'a-file');
    fs.writeFileSync(blocker, 'not a folder');
    const errors: number[] = [];
    const store = new FileStore(path.join(blocker, 'store'), { background: true, retryMs: 1, onWriteError: (_h, _e, n) => errors.push(n) });
    const h = handleFor(TEXT);
    store.put(h, TEXT, meta(TEXT));
    const e = await store.written([h]).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(SpillwayError);
    expect((e as SpillwayError).message).toContain(`could not write stored output ${h}`);
    expect(errors).toEqual([1, 2, 3]);
    expect(store.get(h), 'still readable from memory').toBe(TEXT);
  });

  it('tries an output a failed write kept in memory again, and resolves once it is written', async () => {
    const blocker = path.join(tmp, 'a-file');
    fs.writeFileSync(blocker, 'not a folder');
    const store = new FileStore(path.join(blocker, 'store'), { background: true, retryMs: 1 });
    const h = handleFor(TEXT);
    store.put(h, TEXT, meta(TEXT));
    await expect(store.written([h])).rejects.toThrow(/could not write/);
    fs.rmSync(blocker);
    await store.written([h]);
    expect(fs.readFileSync(store.pathFor(h)!, 'utf8')).toBe(TEXT);
  });

  it('rejects the waiters of outputs the store was cleared of before they were written', async () => {
    const store = new FileStore(tmp, { background: true });
    const h = handleFor(TEXT);
    store.put(h, TEXT, meta(TEXT));
    const waiting = store.written([h]);
    store.clear();
    await expect(waiting).rejects.toThrow(/was cleared before/);
  });
});

describe('whenStored', () => {
  it("waits for every output a projection's markers point at before it resolves", async () => {
    const store = new FileStore(tmp, { background: true });
    const p = createEngine({}, { store }).project(bigToolCall(TEXT), 'openai-chat');
    expect(p.reductions).toHaveLength(1);
    const file = store.pathFor(p.reductions[0]!.handle)!;
    expect(fs.existsSync(file)).toBe(false);
    await whenStored(store, p);
    expect(fs.readFileSync(file, 'utf8')).toBe(TEXT);
  });

  it('resolves at once for a sink that writes inside put', async () => {
    const sink = new MemorySink();
    const p = createEngine({}, { store: sink }).project(bigToolCall(TEXT), 'openai-chat');
    await expect(whenStored(sink, p)).resolves.toBeUndefined();
  });
});
