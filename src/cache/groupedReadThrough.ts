import { LRUCache } from 'lru-cache';
import { cacheCounters } from '../observability/metrics.js';
import type { CacheStats } from './readThrough.js';

interface Held<V> {
  group: string;
  value: V;
}

interface Load {
  group: string;
  key: string;
  stale: boolean;
}

/**
 * A read-through cache like ReadThroughCache whose entries also belong to a group (a list to its
 * owner), so a change that names only the group (the owner unfollowed someone) drops all its
 * entries. A load that overlaps an invalidation of its key or its group is returned but not kept.
 */
export class GroupedReadThroughCache<V extends object> {
  private readonly entries: LRUCache<string, Held<V>>;
  private readonly groups = new Map<string, Set<string>>();
  private readonly loads = new Set<Load>();
  private hits = 0;
  private misses = 0;
  private invalidations = 0;
  /** The same counts on /metrics (feed_cache_requests_total). */
  private readonly counted: ReturnType<typeof cacheCounters>;

  constructor(
    readonly name: string,
    options: { max: number; ttlMs: number; maxSize: number; sizeOf: (value: V) => number },
  ) {
    this.counted = cacheCounters(name);
    this.entries = new LRUCache<string, Held<V>>({
      max: options.max,
      ttl: options.ttlMs,
      ttlAutopurge: false,
      maxSize: options.maxSize,
      sizeCalculation: (held) => Math.max(1, options.sizeOf(held.value)),
      dispose: (held, key) => this.ungroup(held.group, key),
    });
  }

  /** The held value of `key` when it belongs to `group`, else what `load` gives (null: nothing). */
  async get(group: string, key: string, load: () => Promise<V | null>): Promise<V | null> {
    const held = this.entries.get(key);
    if (held !== undefined && held.group === group) {
      this.hits++;
      this.counted.hit();
      return held.value;
    }
    this.misses++;
    this.counted.miss();
    const pending: Load = { group, key, stale: false };
    this.loads.add(pending);
    try {
      const value = await load();
      if (value !== null && !pending.stale) {
        this.entries.set(key, { group, value });
        let keys = this.groups.get(group);
        if (!keys) this.groups.set(group, (keys = new Set()));
        keys.add(key);
      }
      return value;
    } finally {
      this.loads.delete(pending);
    }
  }

  invalidate(keys: Iterable<string>): void {
    const gone = new Set(keys);
    for (const key of gone) this.entries.delete(key);
    this.invalidations += gone.size;
    for (const pending of this.loads) if (gone.has(pending.key)) pending.stale = true;
  }

  invalidateGroups(groups: Iterable<string>): void {
    const gone = new Set(groups);
    for (const group of gone) {
      for (const key of [...(this.groups.get(group) ?? [])]) this.entries.delete(key);
      this.groups.delete(group);
    }
    this.invalidations += gone.size;
    for (const pending of this.loads) if (gone.has(pending.group)) pending.stale = true;
  }

  clear(): void {
    this.entries.clear();
    this.groups.clear();
    for (const pending of this.loads) pending.stale = true;
  }

  stats(): CacheStats {
    return { name: this.name, size: this.entries.size, hits: this.hits, misses: this.misses, invalidations: this.invalidations };
  }

  private ungroup(group: string, key: string): void {
    const keys = this.groups.get(group);
    if (keys?.delete(key) && keys.size === 0) this.groups.delete(group);
  }
}
