/**
 * Waits `ms` milliseconds. With `wakers`, the wait can be cut short: it adds its own wake-up
 * function to the set while it waits (a stop or new work calls every function there), and takes it
 * out again when the wait ends either way.
 */
export function sleep(ms: number, wakers?: Set<() => void>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      wakers?.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    wakers?.add(done);
  });
}
