import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

/**
 * What `npm start` passes to node (its flags and entry point), read from package.json, so what is
 * measured is what is served.
 */
const startArguments: string[] = JSON.parse(readFileSync(`${projectRoot}/package.json`, 'utf8')).scripts.start.split(' ').slice(1);

/** The API as a user runs it (`npm start`'s entry point), in processes of its own, so the load generator never shares its thread. */
export interface ServerProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `src/main.ts` with `environment` added to this process's, and waits until /healthz answers.
 * `nodeArgs` go to Node itself (e.g. `--cpu-prof`).
 */
export async function startServerProcess(environment: Record<string, string>, nodeArgs: readonly string[] = []): Promise<ServerProcess> {
  const port = environment.PORT ? Number(environment.PORT) : await freePort();
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...startArguments], {
    cwd: projectRoot,
    env: { ...process.env, HOST: '127.0.0.1', PORT: String(port), ...environment },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errorOutput = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    errorOutput = (errorOutput + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}/graphql`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the server exited at start (code ${child.exitCode}):\n${errorOutput}`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the server did not answer /healthz within 60 s:\n${errorOutput}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    pid: child.pid!,
    async stop() {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** CPU seconds used so far by `pid` and every process below it (a WEB_CONCURRENCY primary's servers), from /proc. */
export function processTreeCpuSeconds(pid: number): number {
  const ticksPerSecond = 100; // USER_HZ on Linux
  const stats = new Map<number, { parent: number; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the parenthesised command name: state, ppid, …, utime (14th), stime (15th).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      stats.set(Number(entry), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // the process ended meanwhile
    }
  }
  let ticks = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const current = pending.pop()!;
    ticks += stats.get(current)?.ticks ?? 0;
    for (const [child, { parent }] of stats) if (parent === current) pending.push(child);
  }
  return ticks / ticksPerSecond;
}
