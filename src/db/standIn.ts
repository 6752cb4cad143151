/**
 * Launcher for the in-memory MongoDB stand-in (mongo-standin/, based on mongo-java-server).
 *
 * - Builds mongo-standin/target/mongo-standin.jar with Maven when it is missing or older than
 *   the pom / Java sources (guarded by a lock file so concurrent starters build only once).
 * - Spawns `java -jar` with a piped stdin that stays open: the stand-in exits when its stdin
 *   reaches EOF, so it never outlives this Node process (even on SIGKILL of the parent).
 * - java runs in its own process group (`detached`), so a terminal Ctrl+C reaches only Node, which
 *   then shuts the stand-in down through `stop()` (SIGTERM) in an orderly way.
 * - Like a server handle, the running child keeps the Node event loop alive until `stop()`.
 * - A data directory already used by another stand-in fails with a `DataDirectoryInUseError`, whose
 *   message says what to do, instead of java's stderr.
 *
 * Only Node built-ins; no environment variables are read here.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, readdir, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface StandIn {
  uri: string;
  /** The java process, for tests that kill it the hard way. */
  pid: number;
  stop(): Promise<void>;
}

export interface StartStandInOptions {
  /** TCP port to listen on; 0 (default) picks a free ephemeral port. */
  port?: number;
  /** Receives progress and diagnostic lines (build notice, java stderr). */
  log?: (line: string) => void;
  /**
   * Keeps the data in this directory across restarts (the stand-in's journal, see
   * mongo-standin/README.md); without it the data lives in memory only.
   */
  dataDir?: string;
}

const STARTUP_TIMEOUT_MS = 60_000;
const STOP_KILL_AFTER_MS = 5_000;
const BUILD_TIMEOUT_MS = 10 * 60_000;
const LOCK_POLL_MS = 250;
/** A lock older than this is considered abandoned even if its pid looks alive. */
const LOCK_STALE_MS = BUILD_TIMEOUT_MS + 60_000;
const STDERR_KEEP_CHARS = 16_384;
/**
 * JVM flags, measured on the dev box (2 vCPUs, JDK 17, spawn -> URI line, median of 16 runs):
 * no flags ~330-390 ms; -XX:+UseSerialGC ~250 ms; adding -XX:TieredStopAtLevel=1 gave no further
 * gain (and would slow long test runs), so only SerialGC is used. An AppCDS archive would save
 * another ~100 ms but needs a generated .jsa kept in sync with the jar: not worth it.
 */
const JVM_FLAGS = ['-XX:+UseSerialGC'];

const URI_LINE = /^MONGODB_URI=(\S+)\s*$/;
/** The stand-in's exit code when another stand-in holds the data directory (MongoStandIn.EXIT_DATA_DIR_IN_USE). */
const EXIT_DATA_DIR_IN_USE = 4;

/**
 * Another stand-in already keeps its data in this directory: typically a second `npm start` or an
 * `npm run db` while one is running. A situation to explain to whoever started it, not a bug, so it
 * prints as its message alone, without a stack trace.
 */
export class DataDirectoryInUseError extends Error {
  override name = 'DataDirectoryInUseError';

  constructor(readonly dataDir: string) {
    super(
      `Another server already uses the data directory ${dataDir}: a MongoDB stand-in started by \`npm start\` or ` +
        '`npm run db` holds its journal.lock, so the directory is in use by another stand-in until that one stops. ' +
        'Use the running server (to share its database, set MONGODB_URI to the URI it printed when it started), ' +
        'stop it first, or set DATA_DIR to another directory (or pass --in-memory) to run a separate one.',
    );
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return this.message;
  }
}

export async function startStandIn(options: StartStandInOptions = {}): Promise<StandIn> {
  const log = options.log ?? (() => {});
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`startStandIn: invalid port ${String(port)}`);
  }

  const root = findRepoRoot();
  const jar = await ensureJar(root, log);
  return launch(jar, port, log, options.dataDir);
}

// ---------------------------------------------------------------------------------------------
// locating the project

function findRepoRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, 'mongo-standin', 'pom.xml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new Error(`startStandIn: could not find mongo-standin/pom.xml in ${start} or any parent directory`);
    }
    dir = parent;
  }
}

// ---------------------------------------------------------------------------------------------
// building the jar

interface Paths {
  moduleDir: string;
  pom: string;
  jar: string;
  lock: string;
}

function paths(root: string): Paths {
  const moduleDir = join(root, 'mongo-standin');
  return {
    moduleDir,
    pom: join(moduleDir, 'pom.xml'),
    jar: join(moduleDir, 'target', 'mongo-standin.jar'),
    lock: join(moduleDir, 'target', '.mongo-standin-build.lock'),
  };
}

async function ensureJar(root: string, log: (line: string) => void): Promise<string> {
  const p = paths(root);
  const deadline = Date.now() + BUILD_TIMEOUT_MS + 60_000;
  for (;;) {
    // A build in progress (by us or anyone else) may be rewriting the jar: wait for it first.
    if (!existsSync(p.lock) && (await isJarFresh(p))) return p.jar;

    await mkdir(dirname(p.lock), { recursive: true });
    const lock = await tryLock(p.lock);
    if (lock) {
      try {
        if (!(await isJarFresh(p))) {
          log('building the MongoDB stand-in (first run only)…');
          const started = Date.now();
          await runMaven(p.pom);
          if (!(await isJarFresh(p))) {
            throw new Error(`startStandIn: Maven finished but ${p.jar} is missing or still older than its sources`);
          }
          log(`MongoDB stand-in built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
        }
        return p.jar;
      } finally {
        await lock.release();
      }
    }

    if (Date.now() > deadline) {
      throw new Error(`startStandIn: timed out waiting for another process to build the stand-in (lock file ${p.lock})`);
    }
    await removeLockIfAbandoned(p.lock);
    await sleep(LOCK_POLL_MS);
  }
}

async function isJarFresh(p: Paths): Promise<boolean> {
  const jarMtime = await mtimeOrNull(p.jar);
  if (jarMtime === null) return false;
  const sourcesMtime = Math.max(
    (await mtimeOrNull(p.pom)) ?? 0,
    await newestMtime(join(p.moduleDir, 'src')),
  );
  return jarMtime >= sourcesMtime;
}

async function mtimeOrNull(file: string): Promise<number | null> {
  try {
    return (await stat(file)).mtimeMs;
  } catch {
    return null;
  }
}

async function newestMtime(dir: string): Promise<number> {
  let newest = 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const full = join(dir, entry.name);
    if (entry.isDirectory()) {
      newest = Math.max(newest, await newestMtime(full));
    } else if (entry.isFile()) {
      newest = Math.max(newest, (await mtimeOrNull(full)) ?? 0);
    }
  }
  return newest;
}

interface Lock {
  release(): Promise<void>;
}

async function tryLock(lockPath: string): Promise<Lock | null> {
  try {
    const handle = await open(lockPath, 'wx');
    try {
      await handle.writeFile(`${process.pid}\n${new Date().toISOString()}\n`);
    } finally {
      await handle.close();
    }
    return {
      release: async () => {
        await unlink(lockPath).catch(() => {});
      },
    };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw err;
  }
}

/** Removes the lock when its owner process is gone (crashed build) or it is far too old. */
async function removeLockIfAbandoned(lockPath: string): Promise<void> {
  let content: string;
  let mtimeMs: number;
  try {
    content = await readFile(lockPath, 'utf8');
    mtimeMs = (await stat(lockPath)).mtimeMs;
  } catch {
    return; // already gone
  }
  const pid = Number.parseInt(content.split('\n')[0] ?? '', 10);
  // An empty file may be a lock that is being written right now: only age can condemn it.
  const ownerGone = Number.isInteger(pid) && pid > 0 && !isProcessAlive(pid);
  const tooOld = Date.now() - mtimeMs > LOCK_STALE_MS || (!Number.isInteger(pid) && Date.now() - mtimeMs > 10_000);
  if (ownerGone || tooOld) {
    await unlink(lockPath).catch(() => {});
  }
}

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function runMaven(pom: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const args = ['-q', '-B', '-f', pom, 'package'];
    let output = '';
    const child = spawn('mvn', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const collect = (chunk: Buffer) => {
      output = keepTail(output + chunk.toString('utf8'), STDERR_KEEP_CHARS);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
    }, BUILD_TIMEOUT_MS);
    child.on('error', (err) => {
      clearTimeout(timer);
      const hint = (err as NodeJS.ErrnoException).code === 'ENOENT' ? ' (is Maven installed and `mvn` on PATH?)' : '';
      reject(new Error(`startStandIn: could not run mvn${hint}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        resolve();
      } else {
        const how = signal ? `was killed by ${signal}` : `exited with code ${String(code)}`;
        reject(new Error(`startStandIn: \`mvn ${args.join(' ')}\` ${how}\n${stripAnsi(output).trim()}`));
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// running the stand-in

/** The java process and what the launcher knows of it: whether it started, exited, or is stopping. */
class JavaProcess {
  readonly child: ChildProcess;
  started = false;
  exited = false;
  /** The end of java's stderr, for the error when it fails to start. */
  stderrTail = '';
  private readonly exit: Promise<void>;
  private stopping: Promise<void> | undefined;

  constructor(jar: string, port: number, dataDir: string | undefined, log: (line: string) => void) {
    const args = [...JVM_FLAGS, '-jar', jar, '--port', String(port), ...(dataDir ? ['--data-dir', resolvePath(dataDir)] : [])];
    this.child = spawn('java', args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.exit = new Promise<void>((resolveExit) => {
      this.child.once('exit', (code, signal) => {
        this.exited = true;
        if (this.started && !this.stopping) log(`MongoDB stand-in exited unexpectedly (${signal ? `signal ${signal}` : `code ${String(code)}`})`);
        resolveExit();
      });
    });
    // Writes to a stdin whose reader is gone must not crash the parent.
    this.child.stdin?.on('error', () => {});
    onLines(this.child.stderr, (line) => {
      this.stderrTail = keepTail(`${this.stderrTail}${line}\n`, STDERR_KEEP_CHARS);
      if (this.started) log(`[mongo-standin] ${line}`);
    });
  }

  /** SIGTERM, then SIGKILL if java has not exited within STOP_KILL_AFTER_MS; the same promise for every caller. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.exited) return;
      const killTimer = setTimeout(() => {
        if (!this.exited) this.child.kill('SIGKILL');
      }, STOP_KILL_AFTER_MS);
      this.child.kill('SIGTERM');
      await this.exit;
      clearTimeout(killTimer);
      this.child.stdin?.destroy();
    })();
    return this.stopping;
  }
}

function launch(jar: string, port: number, log: (line: string) => void, dataDir: string | undefined): Promise<StandIn> {
  const java = new JavaProcess(jar, port, dataDir, log);
  const { child } = java;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (message: string | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!java.exited) child.kill('SIGKILL');
      if (message instanceof Error) return reject(message);
      const stderr = stripAnsi(java.stderrTail).trim();
      reject(new Error(`${message}${stderr ? `\njava stderr:\n${stderr}` : ' (java wrote nothing to stderr)'}`));
    };
    const timer = setTimeout(() => {
      fail(`startStandIn: the MongoDB stand-in did not report its URI within ${STARTUP_TIMEOUT_MS / 1000} s`);
    }, STARTUP_TIMEOUT_MS);

    child.on('error', (err) => {
      const hint = (err as NodeJS.ErrnoException).code === 'ENOENT' ? ' (is Java 17+ installed and `java` on PATH?)' : '';
      fail(`startStandIn: could not run java${hint}: ${err.message}`);
    });
    // 'close' (not 'exit') so that java's last stderr lines are in the error message.
    child.once('close', (code, signal) => {
      if (java.started) return;
      if (code === EXIT_DATA_DIR_IN_USE && dataDir) {
        fail(new DataDirectoryInUseError(resolvePath(dataDir)));
      } else {
        fail(`startStandIn: java exited before reporting its URI (${signal ? `signal ${signal}` : `code ${String(code)}`})`);
      }
    });
    onLines(child.stdout, (line) => {
      const match = java.started ? null : URI_LINE.exec(line);
      if (!match) {
        if (line.trim()) log(`[mongo-standin] ${line}`);
        return;
      }
      java.started = true;
      settled = true;
      clearTimeout(timer);
      resolve({ uri: match[1] as string, pid: child.pid!, stop: () => java.stop() });
    });
  });
}

function onLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  if (!stream) return;
  let buffered = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    buffered += chunk;
    let newline = buffered.indexOf('\n');
    while (newline !== -1) {
      onLine(buffered.slice(0, newline).replace(/\r$/, ''));
      buffered = buffered.slice(newline + 1);
      newline = buffered.indexOf('\n');
    }
  });
  stream.on('end', () => {
    if (buffered) onLine(buffered.replace(/\r$/, ''));
    buffered = '';
  });
}

function keepTail(text: string, max: number): string {
  return text.length > max ? text.slice(text.length - max) : text;
}

function stripAnsi(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-9;]*[A-Za-z]/g, '');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
