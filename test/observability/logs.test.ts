import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { testDatabaseUri } from '../support/testApp.js';
import { stopped } from '../support/serverProcess.js';
import { startWorkerProcess } from '../support/workerProcess.js';

type LogLine = Record<string, any>;

const environment = {
  JWT_SECRET: 'test-secret-that-is-at-least-32-characters',
  // Deliveries are queued tasks under a materialized strategy, run here by the worker process only.
  FEED_STRATEGY: 'time-buckets',
  FANOUT_WORKERS: '0',
  LIVE_EVENTS: 'change-stream',
};
const password = 'a secret password 123';
const postText = 'A post whose words must never reach a log line';

/**
 * The API with LOG_LEVEL=trace in this process, its lines captured, and `npm run worker` with
 * LOG_LEVEL=trace beside it, its stdout captured: what an operator's log pipeline would get.
 */
describe('log lines', () => {
  let app: RunningApp;
  let worker: ChildProcess;
  const apiLines: string[] = [];
  let workerOutput = '';
  const mongodbUri = testDatabaseUri();
  const parsed = (lines: string[]): LogLine[] => lines.map((line) => JSON.parse(line) as LogLine);
  // Whole lines only: the last may still be arriving.
  const workerLines = (): LogLine[] => workerOutput.split('\n').slice(0, -1).filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as LogLine);

  const send = async (query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const response = await fetch(app.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ query, variables }) });
    return { requestId: response.headers.get('x-request-id'), body: (await response.json()) as any };
  };

  beforeAll(async () => {
    const config = loadConfig({ ...environment, PORT: '0', LOG_LEVEL: 'trace' });
    const logger = createLogger({ level: 'trace', destination: { write: (line: string) => void apiLines.push(...line.split('\n').filter(Boolean)) } });
    app = await startApp(config, { mongodbUri, logger });
    worker = await startWorkerProcess({ ...environment, MONGODB_URI: mongodbUri, FANOUT_WORKERS: '1', LOG_LEVEL: 'trace' });
    worker.stdout!.on('data', (chunk: Buffer) => (workerOutput += chunk.toString()));
  });
  afterAll(async () => {
    if (worker) await stopped(worker, 'SIGTERM');
    await app?.database.db.dropDatabase();
    await app?.stop();
  });

  it('names the request in its own line and in the lines of the tasks it queued, and holds no secret or post text at trace level', async () => {
    const signUp = 'mutation($h: String!, $p: String!) { signUp(handle: $h, password: $p) { token } }';
    const logIn = 'mutation($h: String!, $p: String!) { logIn(handle: $h, password: $p) { token } }';
    const author = (await send(signUp, { h: 'log_author', p: password })).body.data.signUp.token as string;
    const reader = (await send(signUp, { h: 'log_reader', p: password })).body.data.signUp.token as string;
    const loggedIn = (await send(logIn, { h: 'log_author', p: password })).body.data.logIn.token as string;
    const failed = await send(logIn, { h: 'log_author', p: 'a wrong password 456' });
    expect(failed.body.errors[0].extensions.code).toBe('UNAUTHENTICATED');
    await send('mutation { follow(handle: "log_author") { handle } }', {}, { authorization: `Bearer ${reader}` });

    const posted = await send('mutation PostSomething($t: String!) { createPost(text: $t) { id } }', { t: postText }, {
      authorization: `Bearer ${author}`,
      'x-request-id': 'client-chosen-id-42',
    });
    expect(posted.requestId).toBe('client-chosen-id-42');

    // The worker process delivers it into the reader's timeline.
    for (const deadline = Date.now() + 20_000; ; ) {
      const page = await send('{ timeline(first: 5) { edges { node { text } } } }', {}, { authorization: `Bearer ${reader}` });
      if (page.body.data.timeline.edges.some((edge: any) => edge.node.text === postText)) break;
      if (Date.now() > deadline) throw new Error('the worker did not deliver the post');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // The worker's line follows its write: waited for, as a fixed 200 ms sleep can be too short on a loaded machine.
    for (const deadline = Date.now() + 20_000; ; await new Promise((resolve) => setTimeout(resolve, 50))) {
      if (workerLines().some((line) => line.msg === 'task' && line.kind === 'deliver' && line.requestId === 'client-chosen-id-42')) break;
      if (Date.now() > deadline) throw new Error(`the worker logged no delivery for the request:\n${workerOutput}`);
    }

    const api = parsed(apiLines);
    const postLine = api.find((line) => line.msg === 'request' && line.requestId === 'client-chosen-id-42')!;
    expect(postLine).toMatchObject({
      level: 'info',
      method: 'POST',
      route: '/graphql',
      status: 200,
      operationType: 'mutation',
      operationField: 'createPost',
      operationName: 'PostSomething',
      outcome: 'success',
    });
    expect(postLine.accountId).toMatch(/^[0-9a-f-]{36}$/);
    expect(postLine.durationMs).toBeGreaterThan(0);

    const failedLine = api.find((line) => line.msg === 'request' && line.requestId === failed.requestId)!;
    expect(failedLine).toMatchObject({ operationField: 'logIn', outcome: 'client_error', errorCode: 'UNAUTHENTICATED' });

    const tasks = workerLines().filter((line) => line.msg === 'task' && line.requestId === 'client-chosen-id-42');
    expect(tasks.map((line) => line.kind)).toContain('deliver');
    for (const task of tasks) {
      expect(task).toMatchObject({ level: 'info', outcome: 'done', attempt: 1 });
      expect(task.durationMs).toBeGreaterThanOrEqual(0);
    }

    // Trace level was really on: the driver's commands are there, by name only.
    expect(api.some((line) => line.level === 'trace' && line.msg === 'mongodb command')).toBe(true);
    expect(workerLines().some((line) => line.level === 'trace' && line.msg === 'mongodb command')).toBe(true);

    const everything = [...apiLines, workerOutput].join('\n');
    for (const secret of [author, reader, loggedIn, password, 'a wrong password 456', postText, 'Bearer', 'authorization', '$argon2id']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('replaces a malformed X-Request-Id instead of logging it', async () => {
    // Sent over a raw socket: fetch refuses some of these itself. (Node's parser answers 400 to most
    // control characters before any handler runs; a tab gets through.)
    for (const malformed of ['x'.repeat(129), 'tab\tinside', 'two words', 'caf\u00e9']) {
      const replaced = await requestIdAnswered(app.url, malformed);
      expect(replaced).not.toBe(malformed);
      expect(replaced).toMatch(/^[0-9a-f-]{36}$/);
      expect(apiLines.join('\n')).not.toContain(JSON.stringify(malformed).slice(1, -1));
      expect(parsed(apiLines).some((line) => line.requestId === replaced)).toBe(true);
    }
    expect(await requestIdAnswered(app.url, 'trace-1234_ok:A.B')).toBe('trace-1234_ok:A.B');
  });
});

/** The X-Request-Id the server answers a request that sent `requestId` as its own. */
function requestIdAnswered(url: string, requestId: string): Promise<string> {
  const target = new URL(url);
  const body = JSON.stringify({ query: '{ __typename }' });
  return new Promise((resolve, reject) => {
    const socket = connect(Number(target.port), target.hostname, () => {
      socket.write(
        Buffer.concat([
          Buffer.from(`POST ${target.pathname} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\nX-Request-Id: `),
          Buffer.from(requestId, 'latin1'),
          Buffer.from(`\r\n\r\n${body}`),
        ]),
      );
    });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('end', () => {
      const header = /^x-request-id: (.*)$/im.exec(answer);
      if (!answer.startsWith('HTTP/1.1 200') || !header) reject(new Error(`unexpected answer: ${answer.slice(0, 200)}`));
      else resolve(header[1]!.trim());
    });
  });
}
