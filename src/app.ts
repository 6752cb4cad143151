import type { AddressInfo } from 'node:net';
import type { MongoClientOptions } from 'mongodb';
import { requestContexts } from './api/context.js';
import { createApiServer, type ApiDependencies } from './api/server.js';
import { storedTokenSecret } from './auth/storedSecret.js';
import type { Config } from './config.js';
import { connectDatabase, pingDatabase, type Database } from './db/connect.js';
import { commandsWatched, watchDatabase } from './db/monitoring.js';
import type { Logger } from './logger.js';
import { serveEndpoints, type EndpointServer, type Readiness } from './observability/endpoints.js';
import { reportLive, reportQueue } from './observability/metrics.js';
import { createServices, prepareDatabase, startWorkers, stopWorkers, type Services } from './services.js';
import { noRequest } from './observability/requestScope.js';

export interface RunningApp {
  /** The GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  url: string;
  /** The address and port the server listens on, as the operating system reports them. */
  listeningOn: string;
  port: number;
  /** The port of /metrics, /livez and /readyz apart from the API (METRICS_PORT); null when they are on the API's. */
  endpointsPort: number | null;
  services: Services;
  database: Database;
  /** From now on /readyz answers 503: load balancers stop sending traffic; everything still works. */
  drain(): void;
  /** Drains: in-flight requests finish, WebSockets close (1001), workers finish their task and give back the rest. */
  stop(): Promise<void>;
}

/** How long /readyz waits for the database before it says no. */
const readinessTimeoutMs = 1500;

/** Connects, prepares indexes, and serves the API on `config.port` (0 picks a free port). */
export async function startApp(
  config: Config,
  options: { mongodbUri: string; logger: Logger; mongoClientOptions?: MongoClientOptions },
): Promise<RunningApp> {
  const { logger } = options;
  const database = await connectObserved(options.mongodbUri, logger, options.mongoClientOptions);
  const stopReporting: (() => void)[] = [database.stopWatching];
  let endpoints: EndpointServer | null = null;
  let draining = false;
  try {
    const jwtSecret = config.jwtSecretIsEphemeral ? await storedTokenSecret(database.db) : config.jwtSecret;
    const services = createServices(database.db, { ...config, jwtSecret });
    await prepareDatabase(services);
    await services.live.start(logger);
    startWorkers(services, logger);
    stopReporting.push(
      reportQueue(() => services.fanout.queue.snapshot()),
      reportLive(() => services.live.subscriptionCounts()),
    );
    // Ready: not draining, the database answers, and live events reach this instance's subscribers.
    const readiness = async (): Promise<Readiness> => {
      const databaseAnswers = await pingDatabase(services.db, readinessTimeoutMs);
      const checks = { accepting: !draining, database: databaseAnswers, liveEvents: services.live.eventsFlowing() };
      return { ready: Object.values(checks).every(Boolean), checks };
    };
    const api = await createApiServer(apiDependencies(services, readiness), config, logger).catch(async (error: unknown) => {
      await services.work.stop();
      await services.live.stop();
      throw error;
    });
    await new Promise<void>((resolve, reject) => {
      api.httpServer.once('error', reject);
      api.httpServer.listen(config.port, config.host, () => resolve());
    });
    if (config.observability.metricsPort !== null) endpoints = await serveEndpoints(config.observability.metricsPort, config.host, { readiness });
    const { port, address } = api.httpServer.address() as AddressInfo;
    // A wildcard address serves every interface; this machine reaches it as localhost.
    const host = address === '0.0.0.0' || address === '::' ? 'localhost' : address.includes(':') ? `[${address}]` : address;
    return {
      url: `http://${host}:${port}/graphql`,
      listeningOn: `${address.includes(':') ? `[${address}]` : address}:${port}`,
      port,
      endpointsPort: endpoints?.port ?? null,
      services,
      database,
      drain: () => {
        draining = true;
      },
      stop: async () => {
        draining = true;
        // Requests and tasks finish side by side; live events stop once no request can cause one.
        await Promise.all([api.stop(), stopWorkers(services)]);
        await services.live.stop();
        for (const stop of stopReporting) stop();
        await database.close();
        await endpoints?.close();
      },
    };
  } catch (error) {
    for (const stop of stopReporting) stop();
    await endpoints?.close();
    await database.close();
    throw error;
  }
}

export interface RunningWorker {
  endpointsPort: number | null;
  drain(): void;
  /** The workers finish the task they run and give back the ones they claimed but had not started. */
  stop(): Promise<void>;
}

/**
 * `npm run worker`: fanout workers and follow repairs, no API; several may share one database.
 * With METRICS_PORT it serves /metrics, /livez and /readyz there.
 */
export async function startWorker(config: Config, options: { mongodbUri: string; logger: Logger }): Promise<RunningWorker> {
  const { logger } = options;
  const database = await connectObserved(options.mongodbUri, logger);
  const stopReporting: (() => void)[] = [database.stopWatching];
  let draining = false;
  try {
    const services = createServices(database.db, config);
    await prepareDatabase(services);
    startWorkers(services, logger);
    stopReporting.push(reportQueue(() => services.fanout.queue.snapshot()));
    const readiness = async (): Promise<Readiness> => {
      const checks = { accepting: !draining, database: await pingDatabase(services.db, readinessTimeoutMs) };
      return { ready: Object.values(checks).every(Boolean), checks };
    };
    const endpoints = config.observability.metricsPort === null ? null : await serveEndpoints(config.observability.metricsPort, config.host, { readiness });
    return {
      endpointsPort: endpoints?.port ?? null,
      drain: () => {
        draining = true;
      },
      stop: async () => {
        draining = true;
        await stopWorkers(services);
        for (const stop of stopReporting) stop();
        await database.close();
        await endpoints?.close();
      },
    };
  } catch (error) {
    for (const stop of stopReporting) stop();
    await database.close();
    throw error;
  }
}

/** A connection whose pool, and commands when traced, operators see (db/monitoring.ts). */
async function connectObserved(uri: string, logger: Logger, clientOptions: MongoClientOptions = {}): Promise<Database & { stopWatching: () => void }> {
  const database = await connectDatabase(uri, { ...clientOptions, ...(commandsWatched(logger) ? { monitorCommands: true } : {}) });
  return { ...database, stopWatching: watchDatabase(database.client, logger) };
}

/** The narrow dependencies of the transports, taken from the services. */
function apiDependencies(services: Services, readiness: () => Promise<Readiness>): ApiDependencies {
  return {
    createContext: requestContexts(services),
    authenticate: (authorization) => services.accounts.authenticate(authorization),
    liveConnections: services.live.connections,
    readiness,
    media: {
      authenticate: (authorization) => services.accounts.authenticate(authorization),
      // Uploads are answered outside GraphQL, by the media routes, which send no RateLimit headers.
      countUpload: (owner) => services.rateLimits.upload(owner, noRequest),
      store: (owner, data, alt) => services.media.store(owner, data, alt),
      record: (media, origin) => services.media.record(media, origin),
      verify: (id, variant, expiry, signature) => services.media.urls.verify(id, variant, expiry, signature),
      toServe: (id, variant) => services.media.toServe(id, variant),
      maxBytes: services.media.options.maxBytes,
    },
  };
}
