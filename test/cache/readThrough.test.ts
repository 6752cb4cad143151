import { describe, expect, it } from 'vitest';
import { ReadThroughCache } from '../../src/cache/readThrough.js';

/** A load that answers when told to, counting the keys it was asked for. */
function slowStore(values: Map<string, { v: number }>) {
  const asked: string[][] = [];
  let release: () => void = () => undefined;
  const load = async (keys: string[]) => {
    asked.push(keys);
    await new Promise<void>((resolve) => (release = resolve));
    return new Map(keys.flatMap((key) => (values.has(key) ? [[key, { ...values.get(key)! }] as const] : [])));
  };
  return { asked, load, release: () => release() };
}

describe('a read-through cache under concurrent misses', () => {
  it('lets callers missing a key while it loads share that load', async () => {
    const cache = new ReadThroughCache<string, { v: number }>('test', { max: 10, ttlMs: 60_000 });
    const store = slowStore(new Map([['a', { v: 1 }]]));
    const first = cache.get('a', async (key) => (await store.load([key])).get(key) ?? null);
    const second = cache.get('a', async (key) => (await store.load([key])).get(key) ?? null);
    await new Promise((resolve) => setTimeout(resolve, 0));
    store.release();
    expect(await Promise.all([first, second])).toEqual([{ v: 1 }, { v: 1 }]);
    expect(store.asked).toEqual([['a']]);
  });

  it('loads again for a caller who comes after a change, and keeps neither stale answer', async () => {
    const values = new Map([['a', { v: 1 }]]);
    const cache = new ReadThroughCache<string, { v: number }>('test', { max: 10, ttlMs: 60_000 });
    const before = slowStore(values);
    const early = cache.get('a', async (key) => (await before.load([key])).get(key) ?? null);
    await new Promise((resolve) => setTimeout(resolve, 0));
    values.set('a', { v: 2 }); // stored, and announced: the early load may have read the old value
    cache.invalidate(['a']);
    const after = slowStore(values);
    const late = cache.get('a', async (key) => (await after.load([key])).get(key) ?? null);
    await new Promise((resolve) => setTimeout(resolve, 0));
    after.release();
    expect(await late).toEqual({ v: 2 });
    expect(after.asked).toEqual([['a']]);
    before.release();
    await early;
    const again = slowStore(values);
    again.release();
    expect(await cache.get('a', async (key) => (await again.load([key])).get(key) ?? null)).toEqual({ v: 2 });
  });

  it('keeps a load that only changes of other keys overlapped, and answers the next call from it', async () => {
    const cache = new ReadThroughCache<string, { v: number }>('test', { max: 10, ttlMs: 60_000 });
    const store = slowStore(new Map([['a', { v: 1 }]]));
    const loading = cache.get('a', async (key) => (await store.load([key])).get(key) ?? null);
    await new Promise((resolve) => setTimeout(resolve, 0));
    cache.invalidate(['b']);
    cache.update('c', (value) => value);
    store.release();
    expect(await loading).toEqual({ v: 1 });
    let loadsAfter = 0;
    expect(await cache.get('a', async () => ({ v: ++loadsAfter }))).toEqual({ v: 1 });
    expect(loadsAfter).toBe(0);
  });

  it('keeps neither of two loads of one key run side by side when the key changes meanwhile', async () => {
    const cache = new ReadThroughCache<string, { v: number }>('test', { max: 10, ttlMs: 60_000 });
    const first = slowStore(new Map([['a', { v: 1 }]]));
    const second = slowStore(new Map([['a', { v: 1 }]]));
    const asksMore = () => false; // as a call that needs more than any held value: it never joins a load
    const one = cache.get('a', async (key) => (await first.load([key])).get(key) ?? null, asksMore);
    await new Promise((resolve) => setTimeout(resolve, 0));
    const two = cache.get('a', async (key) => (await second.load([key])).get(key) ?? null, asksMore);
    await new Promise((resolve) => setTimeout(resolve, 0));
    cache.invalidate(['a']);
    second.release();
    first.release();
    await Promise.all([one, two]);
    let loadsAfter = 0;
    expect(await cache.get('a', async () => ({ v: 10 + ++loadsAfter }))).toEqual({ v: 11 });
  });

  it('fails every caller sharing a load that failed, and loads afresh for the next', async () => {
    const cache = new ReadThroughCache<string, { v: number }>('test', { max: 10, ttlMs: 60_000 });
    let fail!: (error: Error) => void;
    const failing = () => new Promise<{ v: number }>((_, reject) => (fail = reject));
    const first = cache.get('a', failing);
    const second = cache.get('a', async () => ({ v: 9 }));
    fail(new Error('the database went away'));
    await expect(first).rejects.toThrow('the database went away');
    await expect(second).rejects.toThrow('the database went away');
    expect(await cache.get('a', async () => ({ v: 3 }))).toEqual({ v: 3 });
  });
});
