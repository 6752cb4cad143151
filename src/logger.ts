/**
 * Logging: pino's JSON lines on stdout, one object per line, so that whatever collects a
 * container's output can index them. In a terminal outside production the same lines are printed
 * readably (pino-pretty, a development dependency: an image without it writes JSON).
 *
 * What is never logged, at any level: tokens, passwords and their hashes, Authorization headers,
 * post text, media. Callers log ids, kinds, counts and durations; the paths below are censored as a
 * second line of defence, and errors are reduced to their type, code, message and stack, because a
 * driver error can carry the documents it failed to write (a post's text among them).
 */
import { createRequire } from 'node:module';
import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import type { LogLevel } from './config.js';

export type LogFields = Record<string, unknown>;

export interface Logger {
  trace(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, error?: unknown, fields?: LogFields): void;
  /** Whether lines of `level` are written, for callers whose fields cost something to build. */
  enabled(level: 'trace' | 'debug' | 'info'): boolean;
  /**
   * The same lines without the censoring pass, for the one line per request and per task, whose
   * fields the caller builds itself from ids, names, numbers and codes: the pass cost a tenth of a
   * warm page's CPU, and there is nothing in those fields for it to find.
   */
  vetted: Pick<Logger, 'debug' | 'info'>;
}

export interface LoggerOptions {
  level: LogLevel;
  /** Where lines go; stdout when not given. */
  destination?: DestinationStream;
  /** Print readably (a terminal in development) when pino-pretty is installed. */
  pretty?: boolean;
}

/** Field names whose values never reach a log line, wherever they appear (one level deep). */
const secretFields = ['password', 'currentPassword', 'newPassword', 'passwordHash', 'token', 'authorization', 'cookie', 'text', 'media'];
const censored = [...secretFields, ...secretFields.map((field) => `*.${field}`), 'headers.authorization', 'headers.cookie'];

export function createLogger(options: LoggerOptions): Logger {
  const destination = options.destination ?? (options.pretty ? prettyStream() : undefined) ?? pino.destination({ dest: 1, sync: true });
  const settings = {
    level: options.level,
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    // `level: "info"` rather than 30: readable by people and by log pipelines alike.
    formatters: { level: (label: string) => ({ level: label }) },
    serializers: { err: errorFields },
  };
  const logger = pino({ ...settings, redact: { paths: censored, censor: '[redacted]' } }, destination);
  return fromPino(logger, pino(settings, destination));
}

function fromPino(logger: Pino, unredacted: Pino): Logger {
  return {
    trace: (message, fields) => logger.trace(fields ?? {}, message),
    debug: (message, fields) => logger.debug(fields ?? {}, message),
    info: (message, fields) => logger.info(fields ?? {}, message),
    warn: (message, fields) => logger.warn(fields ?? {}, message),
    error: (message, error, fields) => logger.error(error === undefined ? (fields ?? {}) : { ...fields, err: error }, message),
    enabled: (level) => logger.isLevelEnabled(level),
    vetted: {
      debug: (message, fields) => unredacted.debug(fields ?? {}, message),
      info: (message, fields) => unredacted.info(fields ?? {}, message),
    },
  };
}

/** pino-pretty when it is installed (a development dependency), else nothing: plain JSON then. */
function prettyStream(): DestinationStream | undefined {
  try {
    const pretty = createRequire(import.meta.url)('pino-pretty') as (options: object) => DestinationStream;
    return pretty({ colorize: true, sync: true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss.l' });
  } catch {
    return undefined;
  }
}

/**
 * What an error says in a log line: its type, code, message and stack, never its other fields (a
 * MongoDB bulk write error carries the documents it failed to write).
 */
function errorFields(error: unknown): LogFields {
  if (!(error instanceof Error)) return { message: String(error) };
  const { code, codeName } = error as { code?: unknown; codeName?: unknown };
  const cause = error.cause instanceof Error ? { cause: errorFields(error.cause) } : {};
  return {
    type: error.name,
    message: error.message,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    ...(typeof codeName === 'string' ? { codeName } : {}),
    stack: error.stack,
    ...cause,
  };
}

/** For tests: errors on stderr, nothing else. */
export const quietLogger: Logger = createLogger({ level: 'error', destination: pino.destination({ dest: 2, sync: true }) });
