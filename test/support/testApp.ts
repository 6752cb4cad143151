import { randomBytes } from 'node:crypto';
import type { CommandStartedEvent } from 'mongodb';
import { inject } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.js';
import { sweepQuery, withDatabaseName } from '../../src/db/connect.js';
import { loadConfig } from '../../src/config.js';
import { quietLogger } from '../../src/logger.js';

export { withDatabaseName };

export interface GraphQLResponse<T = any> {
  status: number;
  data?: T;
  errors?: { message: string; extensions?: { code?: string; stacktrace?: unknown; [detail: string]: unknown }; path?: unknown[] }[];
}

export interface TestApp extends RunningApp {
  /** POSTs one operation to /graphql, as a browser-less client would. */
  gql<T = any>(query: string, variables?: Record<string, unknown>, token?: string): Promise<GraphQLResponse<T>>;
  /** Signs a user up through the API and returns their token. */
  signUp(handle: string, password?: string): Promise<string>;
  /** Database commands the app sends while `action` runs. */
  commandsDuring(action: () => Promise<unknown>): Promise<CommandStartedEvent[]>;
  /**
   * The commands of `action` once this process holds what it reads: live events of earlier
   * changes can still be arriving and invalidating, so `action` is repeated (a few times at most)
   * until a run reads none of `held` from the database.
   */
  warmCommandsDuring(action: () => Promise<unknown>, held: readonly string[]): Promise<CommandStartedEvent[]>;
  /** The database URI this app uses; pass it as MONGODB_URI to start a second instance on it. */
  mongodbUri: string;
  /** Resolves once the fanout queue has no waiting or running sub-task: followers' timelines are up to date. */
  settled(timeoutMs?: number): Promise<void>;
}

/**
 * The commands a request sent, out of all those seen while it ran: meanwhile the fanout workers
 * poll their queue and the live path's change stream polls the database (a getMore names its
 * collection apart: `$cmd.aggregate` for a database-wide stream), and those are not the request's.
 */
export function requestCommands(commands: readonly CommandStartedEvent[]): CommandStartedEvent[] {
  return commands.filter((command) => {
    const collection = command.commandName === 'getMore' ? command.command.collection : command.command[command.commandName];
    return collection !== 'fanout_tasks' && collection !== 'live_events' && collection !== '$cmd.aggregate';
  });
}

/** A request's commands as "find timeline_cache": the command and the collection it names. */
export function requestCommandNames(commands: readonly CommandStartedEvent[]): string[] {
  return requestCommands(commands).map((command) => `${command.commandName} ${command.command[command.commandName]}`);
}

/**
 * `ok(handle, query, variables)`: the data of an operation sent with `handle`'s token, throwing
 * its errors. `app` is read when called, so it can be started in a `beforeAll`.
 */
export function answersAs(app: () => TestApp, tokens: Record<string, string>) {
  return async (handle: string, query: string, variables: Record<string, unknown> = {}): Promise<any> => {
    const result = await app().gql(query, variables, tokens[handle]);
    if (result.errors) throw new Error(JSON.stringify(result.errors));
    return result.data;
  };
}

/** A fresh database name per app, so test files never see each other's data. */
export function testDatabaseUri(): string {
  return withDatabaseName(inject('mongoServerUri'), `feed_test_${randomBytes(5).toString('hex')}`);
}

export async function startTestApp(environment: Record<string, string> = {}): Promise<TestApp> {
  const config = loadConfig({
    PORT: '0',
    JWT_SECRET: 'test-secret-that-is-at-least-32-characters',
    // Tests sign up, post and follow from one address far faster than people do; the rate limit
    // tests set the real limits again.
    RATE_LIMIT_SIGNUPS_PER_ADDRESS: '100000',
    RATE_LIMIT_POSTS_PER_MINUTE: '100000',
    RATE_LIMIT_FOLLOWS_PER_MINUTE: '100000',
    ...environment,
  });
  // An app given MONGODB_URI shares a database another app made, and leaves dropping it to that app.
  const ownsDatabase = environment.MONGODB_URI === undefined;
  const mongodbUri = environment.MONGODB_URI ?? testDatabaseUri();
  const app = await startApp(config, {
    mongodbUri,
    logger: quietLogger,
    mongoClientOptions: { monitorCommands: true },
  });
  let recording: CommandStartedEvent[] | null = null;
  // The fanout workers' repair sweep runs every few seconds beside the requests under test; its queries are not theirs.
  app.database.client.on('commandStarted', (event) => {
    if (event.command.comment !== sweepQuery.comment) recording?.push(event);
  });

  const gql: TestApp['gql'] = async (query, variables, token) => {
    const response = await fetch(app.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ query, variables }),
    });
    return { status: response.status, ...((await response.json()) as object) };
  };

  const commandsDuring: TestApp['commandsDuring'] = async (action) => {
    recording = [];
    try {
      await action();
      return recording;
    } finally {
      recording = null;
    }
  };

  return {
    ...app,
    mongodbUri,
    gql,
    async signUp(handle, password = 'correct horse battery') {
      const result = await gql(
        'mutation($handle: String!, $password: String!) { signUp(handle: $handle, password: $password) { token } }',
        { handle, password },
      );
      if (!result.data) throw new Error(`signUp ${handle} failed: ${JSON.stringify(result.errors)}`);
      return result.data.signUp.token as string;
    },
    async settled(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!(await app.services.fanout.queue.isDrained())) {
        if (Date.now() > deadline) {
          // What is left, and why it waits: the failure says which work never finished.
          const left = await app.services.fanout.queue.tasks.find({}, { projection: { payload: 0 } }).limit(10).toArray();
          throw new Error(`fanout queue not drained after ${timeoutMs} ms: ${JSON.stringify(left)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    async warmCommandsDuring(action, held) {
      let commands: CommandStartedEvent[] = [];
      for (let attempt = 0; attempt < 10; attempt++) {
        commands = await commandsDuring(action);
        if (!commands.some((command) => held.includes(command.command[command.commandName]))) return commands;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return commands;
    },
    commandsDuring,
    async stop() {
      // Against a real MongoDB the test databases would otherwise pile up. Live updates stop
      // first: dropping the database would invalidate their change stream.
      await app.services.live.stop();
      if (ownsDatabase) await app.database.db.dropDatabase();
      await app.stop();
    },
  };
}
