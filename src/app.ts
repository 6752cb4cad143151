import type { AddressInfo } from 'node:net';
import type { MongoClientOptions } from 'mongodb';
import { requestContexts } from './api/context.js';
import { createApiServer, type ApiDependencies } from './api/server.js';
import { storedTokenSecret } from './auth/storedSecret.js';
import type { Config } from './config.js';
import { connectDatabase, pingDatabase, type Database } from './db/connect.js';
import type { Logger } from './logger.js';
import { createServices, prepareDatabase, startWorkers, type Services } from './services.js';

export interface RunningApp {
  /** The GraphQL endpoint, e.g. http://127.0.0.1:4000/graphql. */
  url: string;
  /** The address and port the server listens on, as the operating system reports them. */
  listeningOn: string;
  port: number;
  services: Services;
  database: Database;
  stop(): Promise<void>;
}

/** Connects, prepares indexes, and serves the API on `config.port` (0 picks a free port). */
export async function startApp(
  config: Config,
  options: { mongodbUri: string; logger: Logger; mongoClientOptions?: MongoClientOptions },
): Promise<RunningApp> {
  const database = await connectDatabase(options.mongodbUri, options.mongoClientOptions);
  try {
    const jwtSecret = config.jwtSecretIsEphemeral ? await storedTokenSecret(database.db) : config.jwtSecret;
    const services = createServices(database.db, { ...config, jwtSecret });
    await prepareDatabase(services);
    await services.live.start(options.logger);
    startWorkers(services, options.logger);
    const api = await createApiServer(apiDependencies(services), config, options.logger.error).catch(async (error: unknown) => {
      await services.work.stop();
      await services.live.stop();
      throw error;
    });
    await new Promise<void>((resolve, reject) => {
      api.httpServer.once('error', reject);
      api.httpServer.listen(config.port, config.host, () => resolve());
    });
    const { port, address } = api.httpServer.address() as AddressInfo;
    // A wildcard address serves every interface; this machine reaches it as localhost.
    const host = address === '0.0.0.0' || address === '::' ? 'localhost' : address.includes(':') ? `[${address}]` : address;
    return {
      url: `http://${host}:${port}/graphql`,
      listeningOn: `${address.includes(':') ? `[${address}]` : address}:${port}`,
      port,
      services,
      database,
      stop: async () => {
        await api.stop();
        await services.work.stop();
        await services.live.stop();
        await database.close();
      },
    };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** The narrow dependencies of the transports, taken from the services. */
function apiDependencies(services: Services): ApiDependencies {
  return {
    createContext: requestContexts(services),
    authenticate: (authorization) => services.accounts.authenticate(authorization),
    liveConnections: services.live.connections,
    databaseReachable: (timeoutMs) => pingDatabase(services.db, timeoutMs),
  };
}
