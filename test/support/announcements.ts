import { randomBytes } from 'node:crypto';
import { changed } from '../../src/changes/events.js';
import type { TestApp } from './testApp.js';

/**
 * Resolves once `listener` has heard and acted on everything `publisher` announced before this
 * call, the announcements of fanout work queued by then included. Event-driven, not timed: once the
 * queue is drained, a marker is announced last, and the change stream hands every instance the
 * events in the order they were stored; an instance's listeners run one after another, each to its
 * end, so when the marker arrives every earlier change has been applied there. The timeout is
 * generous, as only a broken change stream ever needs it; tests then read once, with no deadline.
 */
export async function heardEverything(publisher: TestApp, listener: TestApp = publisher, timeoutMs = 30_000): Promise<void> {
  await publisher.settled(timeoutMs);
  // A user no one has: every instance forgets it, which changes nothing.
  const marker = `marker_${randomBytes(6).toString('hex')}`;
  let heard = false;
  const stop = listener.services.changes.listen((event) => {
    if (event.kind === 'changed' && event.users.includes(marker)) heard = true;
  });
  try {
    await publisher.services.changes.publish(changed({ users: [marker] }));
    for (const deadline = Date.now() + timeoutMs; !heard; await new Promise((resolve) => setTimeout(resolve, 5))) {
      if (Date.now() > deadline) throw new Error(`an announcement made ${timeoutMs} ms ago has not arrived`);
    }
  } finally {
    stop();
  }
}
