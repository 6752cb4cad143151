/**
 * cache/ owns the in-process tier in front of MongoDB: a bounded read-through cache with
 * invalidation that discards loads racing it (ReadThroughCache). What to forget, and when, is the
 * change bus's business (changes/staleness.ts).
 */
import { LRUCache } from 'lru-cache';
import { cacheCounters } from '../observability/metrics.js';

export interface CacheStats {
  name: string;
  size: number;
  hits: number;
  misses: number;
  /** Changes the cache was told of: entries dropped, or changed in place. */
  invalidations: number;
}

/** A load under way (see ReadThroughCache.loading). */
interface Load<V> {
  value: Promise<V | undefined>;
  stale: boolean;
}

/**
 * One kind of record held in this process in front of MongoDB (the in-process L1 tier of a
 * multi-tier feed cache, as Weibo's feed architecture layers it): bounded by count, each entry
 * trusted for at most `ttlMs` as a backstop, and dropped at once by `invalidate`, which every
 * change of the record triggers in this process and, through the live event stream, in every other.
 *
 * A load that overlaps an invalidation of its key is returned but not kept: it may have read the
 * document before the change that the invalidation announced. Calls that miss a key while it is
 * being loaded share that load, unless a change of the key came between (it may predate the
 * change). Changes of other keys leave a load alone: under a steady stream of changes (deliveries,
 * follows) a load would otherwise seldom be kept, and every page after it would read again.
 */
export class ReadThroughCache<K extends string, V extends object> {
  private readonly entries: LRUCache<K, V>;
  private hits = 0;
  private misses = 0;
  private invalidations = 0;
  /** The same counts on /metrics (feed_cache_requests_total). */
  private readonly counted: ReturnType<typeof cacheCounters>;
  /**
   * Loads under way, by key: a call missing the same key meanwhile waits for the newest instead of
   * loading again (one that asks more than a held value gives loads beside it, so a key can have
   * several). A change of the key marks all of them stale, and a stale load is not kept.
   */
  private readonly loading = new Map<K, Set<Load<V>>>();

  constructor(
    readonly name: string,
    options: { max: number; ttlMs: number; sized?: { maxSize: number; sizeOf: (value: V) => number } },
  ) {
    this.counted = cacheCounters(name);
    this.entries = new LRUCache<K, V>({
      max: options.max,
      ttl: options.ttlMs,
      ttlAutopurge: false,
      ...(options.sized ? { maxSize: options.sized.maxSize, sizeCalculation: options.sized.sizeOf } : {}),
    });
  }

  /**
   * The values of `keys`, loading the missing ones in one call; absent keys are left out. A held
   * value that cannot answer this call (`usable` says no: it holds less than is asked) is loaded
   * again, and the load replaces it.
   */
  async getMany(keys: readonly K[], load: (missing: K[]) => Promise<Map<K, V>>, usable?: (value: V) => boolean): Promise<Map<K, V>> {
    const found = new Map<K, V>();
    const missing: K[] = [];
    const joined: [K, Promise<V | undefined>][] = [];
    for (const key of keys) {
      const value = this.entries.get(key);
      if (value !== undefined && (!usable || usable(value))) {
        found.set(key, value);
        continue;
      }
      // A load of this key already under way since its last change answers this call too.
      const newest = usable ? undefined : [...(this.loading.get(key) ?? [])].at(-1);
      if (newest) joined.push([key, newest.value]);
      else missing.push(key);
    }
    this.hits += found.size;
    this.misses += missing.length + joined.length;
    if (found.size > 0) this.counted.hit(found.size);
    if (missing.length + joined.length > 0) this.counted.miss(missing.length + joined.length);
    if (missing.length > 0) {
      const loaded = load(missing);
      const loads = new Map<K, Load<V>>();
      for (const key of missing) {
        const value = loaded.then((map) => map.get(key));
        // Its failure is this call's to throw; a call that joined it sees it too.
        value.catch(() => undefined);
        const started = { value, stale: false };
        loads.set(key, started);
        this.loading.set(key, (this.loading.get(key) ?? new Set()).add(started));
      }
      try {
        const map = await loaded;
        for (const [key, value] of map) {
          found.set(key, value);
          const started = loads.get(key);
          if (started && !started.stale) this.entries.set(key, value);
        }
      } finally {
        for (const [key, started] of loads) {
          const under = this.loading.get(key);
          under?.delete(started);
          if (under?.size === 0) this.loading.delete(key);
        }
      }
    }
    for (const [key, value] of joined) {
      const loadedValue = await value;
      if (loadedValue !== undefined) found.set(key, loadedValue);
    }
    return found;
  }

  async get(key: K, load: (key: K) => Promise<V | null>, usable?: (value: V) => boolean): Promise<V | null> {
    // The hit needs no map: a page's hot path.
    const held = this.entries.get(key);
    if (held !== undefined && (!usable || usable(held))) {
      this.hits++;
      this.counted.hit();
      return held;
    }
    const values = await this.getMany(
      [key],
      async ([missing]) => {
        const value = await load(missing!);
        return new Map(value === null ? [] : [[missing!, value]]);
      },
      usable,
    );
    return values.get(key) ?? null;
  }

  /**
   * Replaces a held value with what `change` makes of it (nothing when `key` is not held). Loads in
   * flight are discarded as by `invalidate`: they may have read the record before the change. Counted
   * with the invalidations: either way the cache was told of a change.
   */
  update(key: K, change: (value: V) => V): void {
    this.markStale(key);
    this.invalidations++;
    const held = this.entries.get(key);
    if (held !== undefined) this.entries.set(key, change(held));
  }

  /**
   * Holds a value read elsewhere (a record a page already has), unless the key is held or being
   * loaded: what is held or loading is at least as new.
   */
  hold(key: K, value: V): void {
    if (this.entries.has(key) || this.loading.has(key)) return;
    this.entries.set(key, value);
  }

  invalidate(keys: Iterable<K>): void {
    for (const key of keys) {
      this.invalidations++;
      this.entries.delete(key);
      this.markStale(key);
    }
  }

  clear(): void {
    for (const key of [...this.loading.keys()]) this.markStale(key);
    this.entries.clear();
  }

  stats(): CacheStats {
    return { name: this.name, size: this.entries.size, hits: this.hits, misses: this.misses, invalidations: this.invalidations };
  }

  /** The loads of `key` under way may predate a change: none is kept, and no call joins them. */
  private markStale(key: K): void {
    for (const started of this.loading.get(key) ?? []) started.stale = true;
    this.loading.delete(key);
  }
}
