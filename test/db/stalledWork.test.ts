import { describe, expect, it } from 'vitest';
import { Backoff, finishEach, stalledSince } from '../../src/db/stalledWork.js';

describe('stalled work', () => {
  it('counts what was finished, not what another caller took first', async () => {
    const seen: number[] = [];
    const finished = await finishEach([1, 2, 3, 4], async (n) => {
      seen.push(n);
      return n % 2 === 0 ? false : undefined;
    });
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(finished).toBe(2);
  });

  it('calls an intent stalled once it is older than the limit', () => {
    const before = Date.now();
    const since = stalledSince(30_000).getTime();
    expect(since).toBeGreaterThanOrEqual(before - 30_000);
    expect(since).toBeLessThanOrEqual(Date.now() - 30_000);
  });

  it('backs off from 2 ms up to 50 ms', async () => {
    const backoff = new Backoff();
    const started = Date.now();
    for (let i = 0; i < 3; i++) await backoff.wait();
    // 2 + 4 + 8 ms, far below five seconds even on a loaded machine. At least 10: the first timer counts from the
    // loop's clock, which can be older than `started` (more so on a loaded machine); the 4 and 8 ms still tell growth from none.
    expect(Date.now() - started).toBeGreaterThanOrEqual(10);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});
