import type { Db } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/config.js';
import { quietLogger, type Logger } from '../../src/logger.js';
import { ChangeStreamEventSource, toDocument } from '../../src/changes/changeStreamEvents.js';
import type { ChangeEvent as LiveEvent } from '../../src/changes/events.js';

// Failures a real deployment can produce but the stand-in cannot be made to: a standalone server,
// and a change stream that dies with an error the driver does not resume from by itself.

type Step = { event: LiveEvent; token: string } | { error: Error };

/** Plays each stream's script, then reports empty batches like an idle server. */
function fakeDatabase(streams: Step[][]) {
  const watchOptions: unknown[] = [];
  const db = {
    collection: () => ({}),
    watch: (_pipeline: unknown, options: unknown) => {
      watchOptions.push(options);
      const script = [...(streams.shift() ?? [])];
      let resumeToken: unknown;
      let closed = false;
      return {
        get resumeToken() {
          return resumeToken;
        },
        get closed() {
          return closed;
        },
        async tryNext() {
          const step = script.shift();
          if (!step) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            return null;
          }
          if ('error' in step) throw step.error;
          resumeToken = { _data: step.token };
          return { _id: resumeToken, operationType: 'insert', ns: { db: 'feed', coll: 'live_events' }, fullDocument: toDocument(step.event) };
        },
        async close() {
          closed = true;
        },
      };
    },
  };
  return { db: db as unknown as Db, watchOptions };
}

function recordingLogger() {
  const errors: string[] = [];
  const logger: Logger = { ...quietLogger, error: (message) => void errors.push(message) };
  return { logger, errors };
}

const withAwait = (options: object) => ({ maxAwaitTimeMS: 250, ...options });
const followed = (followeeId: string): LiveEvent => ({ kind: 'followed', followerId: 'reader', followeeId });

async function eventually(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/** Runs a source over scripted streams until two `followed` events came through, then stops it. */
async function runUntilTwoEvents(streams: Step[][]) {
  const { db, watchOptions } = fakeDatabase(streams);
  const source = new ChangeStreamEventSource(db, 3600);
  const received: string[] = [];
  source.listen((event) => void (event.kind === 'followed' && received.push(event.followeeId)));
  const { logger, errors } = recordingLogger();
  await source.start(logger);
  await eventually(() => received.length === 2);
  await source.stop();
  return { received, watchOptions, source, errors };
}

describe('the change-stream event source', () => {
  it('refuses to start on a server without change streams, and says what to do', async () => {
    const notReplicaSet = Object.assign(new Error('The $changeStream stage is only supported on replica sets'), { code: 40573 });
    const { db } = fakeDatabase([[{ error: notReplicaSet }]]);
    const source = new ChangeStreamEventSource(db, 3600);
    const started = source.start(recordingLogger().logger);
    await expect(started).rejects.toBeInstanceOf(ConfigError);
    await expect(started).rejects.toThrow(/replica set.*LIVE_EVENTS=local/s);
  });

  it('reopens after a failure right after the last event it delivered, and says so', async () => {
    const { received, watchOptions, source, errors } = await runUntilTwoEvents([
      [{ event: followed('a'), token: 't1' }, { error: new Error('connection reset') }],
      [{ event: followed('b'), token: 't2' }],
    ]);

    expect(received).toEqual(['a', 'b']);
    expect(watchOptions).toEqual([{}, { startAfter: { _data: 't1' } }].map(withAwait));
    expect(source.restarts).toBe(1);
    expect(errors).toEqual([expect.stringMatching(/change stream failed; reopening/)]);
  });

  it('gives up on a resume token that keeps failing and continues from now', async () => {
    const historyLost = Object.assign(new Error('resume point no longer in the oplog'), { code: 286 });
    const { received, watchOptions, errors } = await runUntilTwoEvents([
      [{ event: followed('a'), token: 't1' }, { error: new Error('stepdown') }],
      [{ error: historyLost }],
      [{ error: historyLost }],
      [{ event: followed('c'), token: 't9' }],
    ]);

    expect(received).toEqual(['a', 'c']);
    expect(watchOptions).toEqual([{}, { startAfter: { _data: 't1' } }, { startAfter: { _data: 't1' } }, {}].map(withAwait));
    expect(errors.at(-1)).toMatch(/cannot resume the change stream; continuing from now/);
  });
});
