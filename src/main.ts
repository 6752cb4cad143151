/**
 * The one entry point. `npm start` serves the API; `npm run db` runs the embedded database alone
 * (for several server processes to share); `npm run rebuild-timelines` rebuilds the configured
 * strategy's timelines after FEED_STRATEGY changed on a database that has posts.
 */
import cluster from 'node:cluster';
import { resolve } from 'node:path';
import { startApp, startWorker } from './app.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { connectDatabase, databaseNameFromUri, defaultDatabaseName } from './db/connect.js';
import { DataDirectoryInUseError, startStandIn, type StandIn } from './db/standIn.js';
import { rebuildTimelines } from './feed/rebuild.js';
import { createLogger, type Logger } from './logger.js';
import { startTracing, type Tracing } from './observability/tracing.js';
import { shardPlan } from './db/shardPlan.js';
import { createServices } from './services.js';
import { sleep } from './sleep.js';

/** Made once the configuration is read (LOG_LEVEL). */
let logger: Logger;
/** Started before anything connects, when OTEL_EXPORTER_OTLP_ENDPOINT is set. */
let tracing: Tracing | null = null;

const commands: Record<string, (config: Config) => Promise<void>> = {
  serve,
  db,
  worker,
  'fanout-status': fanoutStatus,
  'rebuild-timelines': rebuild,
  'shard-keys': printShardPlan,
  staff,
};

/**
 * `npm run staff -- grant <handle>` (or `revoke <handle>`) makes an account staff, recorded in the
 * audit log; `npm run staff -- list` names the staff and shows the newest audit entries.
 */
async function staff(config: Config): Promise<void> {
  const [, action, handle] = args.filter((arg) => !arg.startsWith('--'));
  if (!(action === 'list' || ((action === 'grant' || action === 'revoke') && handle))) {
    throw new ConfigError('Use: npm run staff -- grant <handle> | revoke <handle> | list');
  }
  const database = await connectTo(config, 'staff');
  try {
    const services = createServices(database.db, config);
    await services.audit.ensureIndexes();
    if (action === 'list') {
      const { configured, granted } = await services.staff.list();
      console.log(`staff by STAFF_HANDLES  ${configured.join(', ') || '-'}`);
      console.log(`staff granted           ${granted.join(', ') || '-'}`);
      for (const entry of await services.audit.newest(20)) {
        console.log(`  ${entry.at.toISOString()}  ${entry.who}  ${entry.what}${entry.action ? ` ${entry.action}` : ''}${entry.account ? ` @${entry.account}` : ''}`);
      }
      return;
    }
    await services.staff.grant(handle!, action === 'grant');
    console.log(`${handle} is ${action === 'grant' ? 'now' : 'no longer'} staff (unless STAFF_HANDLES names them)`);
  } finally {
    await database.close();
  }
}

/** The shard plan (src/db/shardPlan.ts) as JSON: each collection's key, or why it stays on one shard. */
async function printShardPlan(): Promise<void> {
  console.log(JSON.stringify(shardPlan, null, 2));
}

async function serve(config: Config): Promise<void> {
  if (config.webConcurrency > 1 && cluster.isPrimary) return servePrimary(config);
  const { standIn, mongodbUri } = await databaseToServe(config);
  const app = await startApp(standIn ? eventsForOwnDatabase(config) : config, { mongodbUri, logger }).catch(async (error: unknown) => {
    await standIn?.stop();
    throw error;
  });
  logger.info(
    `listening on ${app.listeningOn}: ${app.url}${config.graphiql ? ' (open it in a browser for GraphiQL)' : ''} with FEED_STRATEGY=${config.feedStrategy}, ` +
      `database "${databaseNameFromUri(mongodbUri)}"${cluster.isWorker ? ` (server process ${process.pid})` : ''}`,
  );
  if (app.endpointsPort !== null) logger.info(`/metrics, /livez and /readyz also on port ${app.endpointsPort} (METRICS_PORT)`);
  else if (config.isProduction) logger.warn('/metrics is not served: in production it needs a port of its own, METRICS_PORT');
  onShutdown(config, app.drain, async () => {
    await app.stop();
    await standIn?.stop();
  });
}

/**
 * WEB_CONCURRENCY > 1: this process starts the embedded database if needed and forks that many
 * servers, which share the port (Node's cluster hands out connections) and the database; each runs
 * its own live-event stream and fanout workers, so live updates reach every process's subscribers.
 * A server that dies is replaced.
 */
async function servePrimary(config: Config): Promise<void> {
  const { standIn, mongodbUri } = await databaseToServe(config);
  let stopping = false;
  // The servers read the same environment, plus the database this process chose.
  const fork = () => cluster.fork({ MONGODB_URI: mongodbUri, ...(config.dataDir ? {} : { DATA_DIR: ':memory:' }) });
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    logger.warn(`server process ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`);
    fork();
  });
  for (let i = 0; i < config.webConcurrency; i++) fork();
  logger.info(`running ${config.webConcurrency} server processes on port ${config.port} (WEB_CONCURRENCY)`);
  // Each server process drains on its own when it gets the SIGTERM passed on below.
  onShutdown(config, () => {}, async () => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined);
    await Promise.all(workers.map((worker) => new Promise<void>((resolve) => {
      worker.once('exit', () => resolve());
      worker.process.kill('SIGTERM');
    })));
    await standIn?.stop();
  });
}

/**
 * MONGODB_URI, or the embedded stand-in started here. Said once, by the process that decides it
 * (a forked server process is given MONGODB_URI by its primary).
 */
async function databaseToServe(config: Config): Promise<{ standIn: StandIn | undefined; mongodbUri: string }> {
  if (config.jwtSecretIsEphemeral && cluster.isPrimary) {
    logger.warn('JWT_SECRET is not set: the token secret is generated once and kept in the database (set JWT_SECRET in production)');
  }
  if (config.mongodbUri) return { standIn: undefined, mongodbUri: config.mongodbUri };
  const standIn = await startEmbedded(config);
  const mongodbUri = `${standIn.uri}/${defaultDatabaseName}`;
  logger.info(`MONGODB_URI is not set: started the embedded MongoDB stand-in at ${mongodbUri} ${whereDataLives(config)}`);
  return { standIn, mongodbUri };
}

/**
 * One server process on an embedded database it started itself is the only instance there is (the
 * database listens on a port of its own choosing): its live events need not travel through the
 * database, which saves a write and a change-stream read per change. LIVE_EVENTS=change-stream
 * keeps them there for instances started against it by hand.
 */
function eventsForOwnDatabase(config: Config): Config {
  if (config.live.eventsChosen || cluster.isWorker) return config;
  logger.info('live events stay in this process (LIVE_EVENTS=local: it is the only server on its embedded database)');
  return { ...config, live: { ...config.live, events: 'local' } };
}

async function db(config: Config): Promise<void> {
  const standIn = await startEmbedded(config, config.mongoStandInPort);
  console.log(`MONGODB_URI=${standIn.uri}/${defaultDatabaseName}`);
  logger.info(`MongoDB stand-in running ${whereDataLives(config)}. Ctrl+C to stop.`);
  onShutdown(config, () => {}, () => standIn.stop());
}

function startEmbedded(config: Config, port?: number): Promise<StandIn> {
  return startStandIn({ port, log: (line) => logger.info(line), ...(config.dataDir ? { dataDir: config.dataDir } : {}) });
}

function whereDataLives(config: Config): string {
  return config.dataDir
    ? `keeping its data in ${resolve(config.dataDir)} (DATA_DIR; --in-memory for a throwaway database)`
    : '(in memory: its data is lost when it stops)';
}

/** A worker-only process: fanout workers and follow repairs, no HTTP. Several may share one database. */
async function worker(config: Config): Promise<void> {
  if (!config.mongodbUri) throw new ConfigError('worker needs MONGODB_URI: the embedded database lives inside `npm start` (use `npm run db` to share one)');
  if (config.fanout.workers === 0) throw new ConfigError('npm run worker with FANOUT_WORKERS=0 would do nothing');
  const running = await startWorker(config, { mongodbUri: config.mongodbUri, logger });
  logger.info(
    `fanout worker running ${config.fanout.workers} workers for FEED_STRATEGY=${config.feedStrategy}` +
      (running.endpointsPort === null ? '' : `; /metrics, /livez and /readyz on port ${running.endpointsPort}`),
  );
  onShutdown(config, running.drain, () => running.stop());
}

/** Queue depth, oldest pending age, delivery rate and dead sub-tasks; `--redrive` puts the dead back in line. */
async function fanoutStatus(config: Config): Promise<void> {
  const database = await connectTo(config, 'fanout-status');
  try {
    const { fanout } = createServices(database.db, config);
    if (process.argv.includes('--redrive')) logger.info(`re-drove ${await fanout.queue.redrive()} dead sub-tasks`);
    const status = await fanout.status();
    const age = status.oldestPendingAt ? `${((Date.now() - status.oldestPendingAt.getTime()) / 1000).toFixed(1)} s` : '-';
    console.log(
      [
        `waiting sub-tasks      ${status.waiting}`,
        `running sub-tasks      ${status.running}`,
        `scheduled for later    ${status.scheduled}`,
        `oldest pending age     ${age}`,
        `recipients per second  ${status.recipientsPerSecond.toFixed(1)} (last minute, ${status.subtasksLastMinute} sub-tasks)`,
        `dead sub-tasks         ${status.dead}${status.dead > 0 ? '  (npm run fanout-status -- --redrive)' : ''}`,
      ].join('\n'),
    );
    for (const task of await fanout.queue.dead(20)) {
      console.log(`  dead ${task._id}: ${task.lastError ?? 'no error recorded'}`);
    }
  } finally {
    await database.close();
  }
}

async function connectTo(config: Config, command: string) {
  if (!config.mongodbUri) {
    throw new ConfigError(`${command} needs MONGODB_URI: the embedded database lives inside \`npm start\` (use \`npm run db\` to share one)`);
  }
  return connectDatabase(config.mongodbUri);
}

async function rebuild(config: Config): Promise<void> {
  const database = await connectTo(config, 'rebuild-timelines');
  try {
    const services = createServices(database.db, config);
    await services.feed.backend.ensureIndexes();
    let lastReport = 0;
    const { posts } = await rebuildTimelines(services, (done, total) => {
      if (Date.now() - lastReport > 1000 || done === total) {
        lastReport = Date.now();
        logger.info(`redelivered ${done} of ${total} posts`);
      }
    });
    logger.info(`timelines rebuilt for FEED_STRATEGY=${config.feedStrategy} (${posts} posts redelivered)`);
  } finally {
    await database.close();
  }
}

/**
 * On SIGTERM (or Ctrl+C): /readyz turns 503 at once (`drain`), SHUTDOWN_DELAY_SECONDS later the
 * process stops taking requests and `stop` lets what runs finish; whatever still runs after
 * SHUTDOWN_TIMEOUT_SECONDS is cut short by exiting (a task's lease then runs out, and another
 * worker takes it over).
 */
function onShutdown(config: Config, drain: () => void, stop: () => Promise<void>): void {
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received, shutting down`, { timeoutSeconds: config.shutdown.timeoutMs / 1000 });
    drain();
    const deadline = setTimeout(() => {
      logger.error(`still shutting down after SHUTDOWN_TIMEOUT_SECONDS=${config.shutdown.timeoutMs / 1000}; exiting now`);
      process.exit(1);
    }, config.shutdown.timeoutMs);
    deadline.unref();
    void sleep(config.shutdown.delayMs)
      .then(stop)
      .then(() => tracing?.stop())
      .then(
        () => {
          logger.info('stopped');
          process.exit(0);
        },
        (error: unknown) => {
          logger.error('shutting down failed', error);
          process.exit(1);
        },
      );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

// `npm start -- --in-memory` (or DATA_DIR=:memory:) runs the embedded database without keeping anything.
const args = process.argv.slice(2);
const flags = new Set(args.filter((arg) => arg.startsWith('--')));
const name = args.find((arg) => !arg.startsWith('--')) ?? 'serve';
const command = commands[name];
if (!command) {
  console.error(`Unknown command "${name}". Use one of: ${Object.keys(commands).join(', ')}`);
  process.exit(2);
}
// Inside the promise, so a configuration error is reported like any other start-up failure.
Promise.resolve()
  .then(async () => {
    const unknown = [...flags].filter((flag) => flag !== '--in-memory' && !(name === 'fanout-status' && flag === '--redrive'));
    if (unknown.length > 0) throw new ConfigError(`Unknown option ${unknown.join(', ')}; use --in-memory (and --redrive with fanout-status)`);
    const config = loadConfig();
    // Readable in a terminal during development; JSON lines everywhere else.
    logger = createLogger({ level: config.observability.logLevel, pretty: !config.isProduction && process.stdout.isTTY === true });
    if (config.observability.tracing && (name === 'serve' || name === 'worker')) {
      tracing = await startTracing(config.observability.tracing);
      logger.info(`tracing: spans go to ${config.observability.tracing.endpoint}/v1/traces (OTLP over HTTP)`);
    }
    return command(flags.has('--in-memory') ? { ...config, dataDir: null } : config);
  })
  .catch((error: unknown) => {
    // Situations to explain to whoever started it, not bugs: their message alone, no stack.
    if (error instanceof ConfigError || error instanceof DataDirectoryInUseError) console.error(error.message);
    else if (logger) logger.error(`${name} failed`, error);
    else console.error(`${name} failed:`, error);
    process.exit(1);
  });
