import { spawn, type ChildProcess } from 'node:child_process';

/**
 * `npm start` as a real child process with `environment` laid over this one's (a value of
 * undefined removes a variable): resolves with its GraphQL address once it listens.
 */
export async function startServerProcess(
  environment: Record<string, string | undefined>,
): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const merged: Record<string, string | undefined> = { ...process.env, PORT: '0', HOST: '127.0.0.1', ...environment };
  for (const [name, value] of Object.entries(merged)) if (value === undefined) delete merged[name];
  const child = spawn(process.execPath, ['--import', 'tsx/esm', 'src/main.ts'], { env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on \S+: (http:\/\/\S+\/graphql)/.exec(output);
      if (match) resolve(match[1]!);
    };
    child.stdout!.on('data', read);
    child.stderr!.on('data', read);
    child.once('exit', (code) => reject(new Error(`the server exited with ${code} before listening:\n${output}`)));
  });
  // Everything it wrote so far, stdout and stderr: its log lines.
  return { child, url, output: () => output };
}

/** Resolves once `child` has exited, sending `signal` if it still runs. */
export function stopped(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}
