import { spawn, type ChildProcess } from 'node:child_process';

/**
 * `npm run worker` as a real child process, as an operator runs it beside the API: resolves once
 * its workers run. Shared by the tests and the benchmarks.
 */
export function startWorkerProcess(environment: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx/esm', 'src/main.ts', 'worker'], {
    env: { ...process.env, ...environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('fanout worker running')) resolve(child);
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`worker exited with ${code} before it ran:\n${output}`)));
  });
}
