import type { MongoClient } from 'mongodb';
import type { Logger } from '../logger.js';
import { reportPool } from '../observability/metrics.js';
import { traceCommands, tracingOn } from '../observability/tracing.js';

/** Whether a client must report its commands: for command spans, or for trace-level log lines. */
export const commandsWatched = (logger: Logger): boolean => tracingOn() || logger.enabled('trace');

/**
 * What operators see of a client: its pools' connections in use and operations waiting for one
 * (from the driver's connection pool events), a span per command when tracing is on, and a
 * trace-level line per command (its name, collection and duration, never a document). The client
 * must have been created with `monitorCommands` when `commandsWatched`. Returns the function that
 * stops reporting the pool.
 */
export function watchDatabase(client: MongoClient, logger: Logger): () => void {
  const pool = { inUse: 0, waiting: 0 };
  client.on('connectionCheckOutStarted', () => (pool.waiting += 1));
  client.on('connectionCheckOutFailed', () => (pool.waiting -= 1));
  client.on('connectionCheckedOut', () => {
    pool.waiting -= 1;
    pool.inUse += 1;
  });
  client.on('connectionCheckedIn', () => (pool.inUse -= 1));
  if (tracingOn()) traceCommands(client);
  if (logger.enabled('trace')) {
    client.on('commandSucceeded', (event) => logger.trace('mongodb command', { command: event.commandName, durationMs: event.duration, server: event.address }));
    client.on('commandFailed', (event) => logger.trace('mongodb command failed', { command: event.commandName, durationMs: event.duration, server: event.address, error: event.failure.name }));
  }
  return reportPool(() => ({ inUse: Math.max(0, pool.inUse), waiting: Math.max(0, pool.waiting) }));
}
