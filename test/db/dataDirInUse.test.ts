import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { MongoClient } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataDirectoryInUseError, startStandIn, type StandIn } from '../../src/db/standIn.js';

/** `npm run db` as a newcomer runs it, as a real child process; resolves with its exit code and everything it printed. */
function runDb(dataDir: string): Promise<{ code: number | null; output: string }> {
  const environment: Record<string, string | undefined> = { ...process.env, DATA_DIR: dataDir, MONGO_STANDIN_PORT: '0' };
  for (const name of ['MONGODB_URI', 'JWT_SECRET', 'NODE_ENV']) delete environment[name];
  const child = spawn(process.execPath, ['--import', 'tsx/esm', 'src/main.ts', 'db'], { env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolveRun) => child.once('close', (code) => resolveRun({ code, output })));
}

describe('a second server on a data directory that is in use', () => {
  let dataDir: string;
  let first: StandIn;
  let client: MongoClient;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'feed-in-use-'));
    first = await startStandIn({ dataDir });
    client = await MongoClient.connect(first.uri);
    await client.db('feed').collection('notes').insertOne({ _id: 1 as never, text: 'before' });
  }, 120_000);
  afterAll(async () => {
    await client?.close();
    await first?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('npm run db says another server uses the directory and what to do, exits non-zero without a stack trace', async () => {
    const { code, output } = await runDb(dataDir);
    expect(code).not.toBe(0);
    expect(output).toContain(`Another server already uses the data directory ${resolve(dataDir)}`);
    expect(output).toContain('Use the running server');
    expect(output).toContain('stop it first');
    expect(output).toContain('set DATA_DIR to another directory');
    expect(output).not.toMatch(/^\s+at /m); // no stack frames, neither Node's nor java's
    expect(output).not.toContain('java stderr');
  }, 120_000);

  it('startStandIn rejects with a DataDirectoryInUseError, and the first server keeps serving', async () => {
    const second = await startStandIn({ dataDir }).catch((error: unknown) => error);
    expect(second).toBeInstanceOf(DataDirectoryInUseError);
    expect((second as DataDirectoryInUseError).dataDir).toBe(resolve(dataDir));

    const notes = client.db('feed').collection<{ _id: number; text: string }>('notes');
    await notes.insertOne({ _id: 2, text: 'after' });
    expect(await notes.find().sort({ _id: 1 }).toArray()).toEqual([
      { _id: 1, text: 'before' },
      { _id: 2, text: 'after' },
    ]);
  }, 120_000);
});
