import { startApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { databaseNameFromUri, defaultDatabaseName } from './db/connect.js';
import { startStandIn, type StandIn } from './db/standIn.js';
import { consoleLogger as logger } from './logger.js';

async function main(): Promise<void> {
  const config = loadConfig();
  if (config.jwtSecretIsEphemeral) {
    logger.warn('JWT_SECRET is not set: using a random secret, so tokens stop working when the server restarts');
  }

  let standIn: StandIn | undefined;
  let mongodbUri = config.mongodbUri;
  if (!mongodbUri) {
    standIn = await startStandIn({ log: logger.info });
    mongodbUri = `${standIn.uri}/${defaultDatabaseName}`;
    logger.info(`MONGODB_URI is not set: started the embedded in-memory MongoDB stand-in at ${mongodbUri} (data is lost on exit)`);
  }

  const app = await startApp(config, { mongodbUri, logger });
  logger.info(
    `serving ${app.url} (GraphiQL in a browser) with FEED_STRATEGY=${config.feedStrategy}, database "${databaseNameFromUri(mongodbUri)}"`,
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info(`${signal} received, shutting down`);
    await app.stop();
    await standIn?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('[feed] failed to start:', error);
  process.exit(1);
});
