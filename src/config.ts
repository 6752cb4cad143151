import { randomBytes } from 'node:crypto';
import { z } from 'zod';

/** Names of the timeline strategies a deployment can choose with `FEED_STRATEGY`. */
export const feedStrategies = ['fanout-on-read', 'time-buckets', 'sized-buckets', 'cache'] as const;
export type FeedStrategyName = (typeof feedStrategies)[number];

/** Whether materialized timeline entries carry the post text (`embed`) or only point to it (`link`). */
export const timelineContentModes = ['embed', 'link'] as const;
export type TimelineContentMode = (typeof timelineContentModes)[number];

/**
 * How live updates travel between server instances: `change-stream` (default) writes each event to
 * the `live_events` collection and every instance watches it (needs a replica set; a single-node one
 * is fine); `local` keeps events inside one process (one instance only, any MongoDB). Unset, a
 * single server process that starts its own embedded database uses `local` (see main.ts).
 */
export const liveEventModes = ['change-stream', 'local'] as const;
export type LiveEventMode = (typeof liveEventModes)[number];

/** pino's levels, and `silent`, for LOG_LEVEL. */
export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

/** The DATA_DIR value that keeps the embedded database in memory, as the tests run it. */
export const inMemory = ':memory:';

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const environmentSchema = z.object({
  NODE_ENV: z.string().optional(),
  PORT: integer(0, 65535).default(4000),
  HOST: z.string().min(1).default('127.0.0.1'),
  /** Server processes sharing the port (`npm start` forks them); each runs its own live stream and fanout workers. */
  WEB_CONCURRENCY: integer(1, 64).default(1),
  CORS_ORIGINS: z
    .string()
    .transform((list) => list.split(',').map((origin) => origin.trim()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^https?:\/\/[^/\s]+\/?$/, 'must be origins such as https://app.example.com, comma-separated')))
    .default([]),
  MONGODB_URI: z
    .string()
    .regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://')
    .optional(),
  /** Port for `npm run db`; 0 picks a free one. */
  MONGO_STANDIN_PORT: integer(0, 65535).default(27017),
  /** Where the embedded stand-in keeps its data; `:memory:` keeps nothing. */
  DATA_DIR: z.string().min(1).default('./data'),
  JWT_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  JWT_TTL_SECONDS: integer(60, 365 * 24 * 3600).default(7 * 24 * 3600),
  JWT_ISSUER: z.string().min(1).max(200).optional(),
  FEED_STRATEGY: z.enum(feedStrategies).default('fanout-on-read'),
  TIMELINE_CONTENT: z.enum(timelineContentModes).default('embed'),
  // Seconds; fractions allowed so tests can cross bucket boundaries in milliseconds.
  TIMELINE_BUCKET_SPAN: z.coerce.number().min(0.001).max(366 * 24 * 3600).default(86400),
  TIMELINE_READ_BATCH: integer(1, 100).default(2),
  TIMELINE_BUCKET_SIZE: integer(1, 10_000).default(50),
  TIMELINE_CACHE_SIZE: integer(1, 10_000).default(50),
  FOLLOW_BACKFILL: integer(0, 1000).default(20),
  TIMELINE_RETENTION_DAYS: z.coerce.number().min(1).max(36500).default(90),
  // At least a day: a day's FOLLOW group must outlive the day that fills it.
  NOTIFICATION_RETENTION_DAYS: z.coerce.number().min(1).max(36500).default(90),
  MAX_QUERY_DEPTH: integer(2, 50).default(10),
  MAX_QUERY_COST: integer(10, 10_000_000).default(5000),
  MAX_QUERY_COST_ANONYMOUS: integer(10, 10_000_000).default(1000),
  MAX_ALIASES: integer(0, 1000).default(20),
  MAX_MUTATIONS_PER_REQUEST: integer(1, 100).default(5),
  LIVE_EVENTS: z.enum(liveEventModes).optional(),
  LIVE_EVENT_TTL_SECONDS: integer(60, 7 * 24 * 3600).default(3600),
  LIVE_CONNECTION_INIT_TIMEOUT_MS: integer(50, 60_000).default(3000),
  LIVE_MAX_CONNECTIONS_PER_USER: integer(1, 10_000).default(10),
  LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION: integer(1, 1000).default(10),
  LIVE_MAX_QUEUED_EVENTS: integer(1, 1_000_000).default(1000),
  /** Instance groups that split the per-person live events between them (docs/live.md); 1 reads them all. */
  LIVE_GROUPS: integer(1, 64).default(1),
  /** This instance's group, 0 to LIVE_GROUPS - 1. */
  LIVE_GROUP: integer(0, 63).default(0),
  MAX_BODY_BYTES: integer(1024, 10 * 1024 * 1024).default(100 * 1024),
  REQUEST_TIMEOUT_SECONDS: integer(1, 3600).default(30),
  RATE_LIMIT_LOGIN_FAILURES_PER_ADDRESS: integer(1, 1_000_000).default(100),
  RATE_LIMIT_SIGNUPS_PER_ADDRESS: integer(1, 1_000_000).default(20),
  RATE_LIMIT_POSTS_PER_MINUTE: integer(1, 1_000_000).default(60),
  RATE_LIMIT_FOLLOWS_PER_MINUTE: integer(1, 1_000_000).default(120),
  RATE_LIMIT_UPLOADS_PER_HOUR: integer(1, 1_000_000).default(60),
  RATE_LIMIT_REPORTS_PER_HOUR: integer(1, 1_000_000).default(20),
  /** Staff accounts by configuration, comma-separated handles (more are granted with `npm run staff -- grant`). */
  STAFF_HANDLES: z
    .string()
    .transform((list) => list.split(',').map((handle) => handle.trim()).filter(Boolean))
    .optional(),
  MEDIA_MAX_BYTES: integer(1024, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
  MEDIA_MAX_PIXELS: integer(1, 1_000_000_000).default(40_000_000),
  // Hours; fractions allowed so tests can watch an orphan go in seconds.
  MEDIA_ORPHAN_HOURS: z.coerce.number().min(0.0001).max(24 * 365).default(24),
  MEDIA_URL_TTL_SECONDS: integer(10, 7 * 24 * 3600).default(3600),
  /** Where clients reach this server, for media URLs; unset, the address each request came to. */
  MEDIA_PUBLIC_URL: z.string().regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL such as https://api.example.com').optional(),
  GRAPHIQL: z.enum(['true', 'false']).optional(),
  GRAPHQL_EXECUTION: z.enum(['compiled', 'interpreted']).default('compiled'),
  /** Trusted-documents manifests (codegen's persisted-documents.json), comma-separated paths. */
  TRUSTED_DOCUMENTS: z
    .string()
    .transform((list) => list.split(',').map((path) => path.trim()).filter(Boolean))
    .optional(),
  TRUSTED_DOCUMENTS_ONLY: z.enum(['true', 'false']).default('false'),
  FANOUT_BATCH: integer(1, 10_000).default(1000),
  FANOUT_WORKERS: integer(0, 64).default(2),
  FANOUT_CLAIM: integer(1, 1000).default(50),
  FANOUT_MAX_ATTEMPTS: integer(1, 100).default(5),
  // Seconds; fractions allowed so tests can watch a lease expire in well under a second.
  FANOUT_LEASE_SECONDS: z.coerce.number().min(0.05).max(3600).default(10),
  FANOUT_RETRY_SECONDS: z.coerce.number().min(0.01).max(3600).default(2),
  FANOUT_PULL_THRESHOLD: integer(1, 1_000_000_000).default(10_000),
  // Days; fractions allowed so tests can make a reader inactive without waiting a week.
  ACTIVE_READER_DAYS: z.coerce.number().min(0.00001).max(3650).default(7),
  LOG_LEVEL: z.enum(logLevels).default('info'),
  /** A port of its own for /metrics, /livez and /readyz; the worker process serves nothing without it. */
  METRICS_PORT: integer(0, 65535).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().regex(/^https?:\/\/[^\s]+$/, 'must be an http(s) URL such as http://collector:4318').optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(100).default('feed-service'),
  // Seconds; fractions allowed so tests can stop a process in well under a second.
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().min(0.1).max(3600).default(25),
  SHUTDOWN_DELAY_SECONDS: z.coerce.number().min(0).max(600).default(0),
});

type Environment = z.infer<typeof environmentSchema>;

/** Every variable this service reads, for checking deployment files against. */
export const environmentVariables: readonly string[] = Object.keys(environmentSchema.shape);

export interface Config {
  nodeEnv: string | undefined;
  /** Stack traces in error responses: only when NODE_ENV is exactly `development`. */
  isDevelopment: boolean;
  isProduction: boolean;
  port: number;
  /** Interface to listen on: 127.0.0.1 by default, 0.0.0.0 (or ::) to serve other machines. */
  host: string;
  /** Server processes `npm start` runs on the one port. */
  webConcurrency: number;
  /** Web origins allowed to call the API from a browser; outside production, localhost pages too. */
  corsOrigins: string[];
  /** Unset means "start the embedded MongoDB stand-in". */
  mongodbUri: string | undefined;
  /** The embedded stand-in's data directory; null keeps its data in memory only. */
  dataDir: string | null;
  mongoStandInPort: number;
  jwtSecret: Uint8Array;
  /** True when no JWT_SECRET was given: the app then generates one once and keeps it in the database. */
  jwtSecretIsEphemeral: boolean;
  jwtTtlSeconds: number;
  /** Issuer and audience of tokens; null means `feed-service/<database name>`, one per deployment. */
  jwtIssuer: string | null;
  feedStrategy: FeedStrategyName;
  timeline: TimelineOptions;
  /**
   * How long a notification is kept after its newest event; also the span of one post's LIKE or
   * REPOST group, so a group taking members is never one that retention removes.
   */
  notificationRetentionMs: number;
  limits: RequestLimits;
  maxBodyBytes: number;
  /** Longest a client may take to send one request, headers and body. */
  requestTimeoutSeconds: number;
  rateLimits: RateLimitOptions;
  /** Staff accounts named by STAFF_HANDLES; the staff command grants others, recorded on their users. */
  staffHandles: string[];
  /** Serve GraphiQL to browsers: on by default, off in production unless GRAPHIQL=true. */
  graphiql: boolean;
  /** HTTP operations run as graphql-jit compiled functions (the default), or interpreted by graphql-js. */
  compiledExecution: boolean;
  documents: DocumentOptions;
  live: LiveOptions;
  fanout: FanoutOptions;
  media: MediaOptions;
  observability: ObservabilityOptions;
  shutdown: ShutdownOptions;
}

/** Which documents the API runs (api/persistedDocuments.ts, README "Persisted documents"). */
export interface DocumentOptions {
  /** Manifests of trusted documents, by id (`sha256:<hex>`); a request may name one instead of sending it. */
  trustedManifests: string[];
  /** Run nothing but those documents: no other query text, no registering of automatic persisted queries. */
  trustedOnly: boolean;
}

/** Logs, metrics and traces (docs/operations.md, "Running it"). */
export interface ObservabilityOptions {
  logLevel: LogLevel;
  /**
   * Where /metrics, /livez and /readyz are served apart from the API; null serves them on the API
   * port, except /metrics in production, which then has none (it says so at start).
   */
  metricsPort: number | null;
  /** Spans are exported over OTLP/HTTP to this endpoint (`<endpoint>/v1/traces`); null traces nothing. */
  tracing: { endpoint: string; serviceName: string } | null;
}

/** What SIGTERM does (docs/operations.md, "Running it"). */
export interface ShutdownOptions {
  /** /readyz answers 503 this long before the server stops taking connections, so load balancers move away first. */
  delayMs: number;
  /** The process exits by then, whatever is still running. */
  timeoutMs: number;
}

/** Uploaded images (README, "Posts with pictures"). */
export interface MediaOptions {
  /** An upload's bytes, refused while streaming once past this. */
  maxBytes: number;
  /** An image's pixels as its header says them, refused before it is decoded. */
  maxPixels: number;
  /** An upload not attached to a post by then is deleted with its bytes. */
  orphanAfterMs: number;
  /** How long a signed media URL answers. */
  urlTtlSeconds: number;
  /** The origin media URLs name (no trailing slash); null: the one each request came to. */
  publicUrl: string | null;
}

/** Counted in MongoDB, so they hold across instances (see README, "Limits"). */
export interface RateLimitOptions {
  /** Failed log-ins from one client address per hour (any handles). */
  loginFailuresPerAddressPerHour: number;
  signUpsPerAddressPerHour: number;
  postsPerAccountPerMinute: number;
  /** Follows and unfollows together. */
  followsPerAccountPerMinute: number;
  /** Accepted uploads; refused ones count against nothing. */
  uploadsPerAccountPerHour: number;
  /** New reports; asking again about one still open counts against nothing. */
  reportsPerAccountPerHour: number;
}

/** The durable fanout queue and the push/pull split (see docs/fanout.md). */
export interface FanoutOptions {
  /** Recipients per sub-task: one bulk write each. */
  batchSize: number;
  /** Tasks a worker claims at once; small deliveries among them share their reads and writes. */
  claimBatch: number;
  /** Concurrent workers in this process; 0 for an API-only instance. */
  workers: number;
  /** Attempts before a sub-task is parked as dead. */
  maxAttempts: number;
  /** How long a claimed sub-task stays with its worker before another may take it over. */
  leaseMs: number;
  /** First retry delay; doubles with each attempt. */
  retryBaseMs: number;
  /** Authors with more followers than this are pulled at read time instead of pushed. */
  pullThreshold: number;
  /** Followers who have not read their timeline for this long are skipped by fanout. */
  activeReaderMs: number;
}

/** Live timeline updates over graphql-ws (see docs/live.md). */
export interface LiveOptions {
  events: LiveEventMode;
  /** Whether LIVE_EVENTS chose `events`; when it did not, the entry point may choose `local`. */
  eventsChosen: boolean;
  /** How long `live_events` documents are kept (TTL index); only catching-up change streams need them. */
  eventTtlSeconds: number;
  /** A WebSocket that sends no `connection_init` within this time is closed (4408). */
  connectionInitTimeoutMs: number;
  /** Per server instance. */
  maxConnectionsPerUser: number;
  maxSubscriptionsPerConnection: number;
  /** Events waiting for one slow subscriber before its connection is closed (4413). */
  maxQueuedEvents: number;
  /** Which share of the per-person live events this instance reads: group `index` of `count`. */
  group: { index: number; count: number };
}

/** Per-operation limits of the GraphQL API, checked before an operation runs (api/requestLimits.ts). */
export interface RequestLimits {
  maxDepth: number;
  maxAliases: number;
  /** Cost budget of one operation for a signed-in viewer ... */
  maxCost: number;
  /** ... and without a token. */
  maxCostAnonymous: number;
  maxRootMutations: number;
}

/** What every materialized timeline's entries carry: the post itself (embed), or its id (link). */
export interface TimelineEntryOptions {
  content: TimelineContentMode;
}

/** Bucket strategies: buckets fetched per round trip, and the older posts a follow brings. */
interface BucketOptions extends TimelineEntryOptions {
  readBatch: number;
  followBackfill: number;
}

export interface TimeBucketsOptions extends BucketOptions {
  /** The span of time one bucket covers. */
  bucketSpanMs: number;
  /** How long a bucket is kept after the end of its span (TIMELINE_RETENTION_DAYS). */
  retentionMs: number;
}

export interface SizedBucketsOptions extends BucketOptions {
  /** Entries one bucket holds. */
  bucketSize: number;
}

export interface TimelineCacheOptions extends TimelineEntryOptions {
  /** Entries one reader's cache holds. */
  cacheSize: number;
}

/** Every strategy's options, parsed together; each strategy takes its own part. */
export type TimelineOptions = TimeBucketsOptions & SizedBucketsOptions & TimelineCacheOptions;

/**
 * Held in this process by the in-process caches (cache/readThrough.ts): entries per cache, and how
 * long an entry is trusted. Every change drops its entries at once here and, through the change
 * bus, in every other instance; the time limit is only the backstop for an announcement that was
 * lost (a request that died between storing a change and announcing it).
 */
const announcedChangeTtlMs = 60_000;
/** Outboxes change with every post, so a lost announcement is trusted for less. */
const postedChangeTtlMs = 10_000;
export const heldCaches = {
  users: { max: 100_000, ttlMs: announcedChangeTtlMs },
  following: { max: 20_000, ttlMs: announcedChangeTtlMs },
  readerFilters: { max: 20_000, ttlMs: announcedChangeTtlMs },
  posts: { max: 50_000, ttlMs: announcedChangeTtlMs },
  /**
   * Posts' counts, taken in place from every change's announcement. With instance groups a count
   * changes by events another group reads, so each group holds counts for `ttlMsInGroups` only.
   */
  postCounts: { max: 100_000, ttlMs: announcedChangeTtlMs, ttlMsInGroups: 2_000 },
  /** Each kind of a viewer's state (liked, reposted, bookmarked) of the posts their pages showed, per viewer. */
  /** `maxPosts` bounds the posts held of all viewers together, per kind: about 50 MB each. */
  viewerStates: { viewers: 50_000, postsPerViewer: 1_000, maxPosts: 500_000, ttlMs: announcedChangeTtlMs },
  /** `maxPosts` bounds the posts of all outboxes together: about 60 MB at the longest texts. */
  outboxes: { max: 100_000, ttlMs: postedChangeTtlMs, maxPosts: 100_000 },
  /** Each author's pinned post ids (at most 5): every page that shows `pinned` asks for its authors'. */
  pins: { max: 100_000, ttlMs: announcedChangeTtlMs },
  /** `maxMembers` bounds the members of all held lists together (a list holds at most its owner's follows). */
  lists: { max: 10_000, ttlMs: announcedChangeTtlMs, maxMembers: 500_000 },
} as const;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/**
 * Reads and validates the environment. This is the only module that looks at `process.env`;
 * everything else receives a `Config`. Tests pass their own variables instead.
 */
export function loadConfig(environment: NodeJS.ProcessEnv = process.env): Config {
  const parsed = environmentSchema.safeParse(withoutEmptyValues(environment));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const env = parsed.data;
  const isProduction = env.NODE_ENV === 'production';
  const missingInProduction = [
    !env.JWT_SECRET && 'JWT_SECRET: required when NODE_ENV=production',
    !env.MONGODB_URI && 'MONGODB_URI: required when NODE_ENV=production (the embedded stand-in is for development)',
  ].filter((problem): problem is string => typeof problem === 'string');
  if (env.WEB_CONCURRENCY > 1 && env.LIVE_EVENTS === 'local') {
    throw new ConfigError('Invalid configuration:\n  WEB_CONCURRENCY: more than one process needs LIVE_EVENTS=change-stream (local events stay in one process)');
  }
  if (env.LIVE_GROUP >= env.LIVE_GROUPS) {
    throw new ConfigError(`Invalid configuration:\n  LIVE_GROUP: must be below LIVE_GROUPS (${env.LIVE_GROUPS}); groups are numbered from 0`);
  }
  if (env.LIVE_GROUPS > 1 && env.LIVE_EVENTS === 'local') {
    throw new ConfigError('Invalid configuration:\n  LIVE_GROUPS: instance groups need LIVE_EVENTS=change-stream (local events stay in one process)');
  }
  if (env.SHUTDOWN_DELAY_SECONDS >= env.SHUTDOWN_TIMEOUT_SECONDS) {
    throw new ConfigError('Invalid configuration:\n  SHUTDOWN_DELAY_SECONDS: must be shorter than SHUTDOWN_TIMEOUT_SECONDS (the delay is part of it)');
  }
  if (env.TRUSTED_DOCUMENTS_ONLY === 'true' && !env.TRUSTED_DOCUMENTS?.length) {
    throw new ConfigError('Invalid configuration:\n  TRUSTED_DOCUMENTS_ONLY: needs TRUSTED_DOCUMENTS, the manifests of the documents to run');
  }
  if (isProduction && missingInProduction.length > 0) {
    throw new ConfigError(`Invalid configuration:\n  ${missingInProduction.join('\n  ')}`);
  }
  return {
    nodeEnv: env.NODE_ENV,
    isDevelopment: env.NODE_ENV === 'development',
    isProduction,
    port: env.PORT,
    host: env.HOST,
    webConcurrency: env.WEB_CONCURRENCY,
    corsOrigins: env.CORS_ORIGINS,
    mongodbUri: env.MONGODB_URI,
    mongoStandInPort: env.MONGO_STANDIN_PORT,
    dataDir: env.DATA_DIR === inMemory ? null : env.DATA_DIR,
    jwtSecret: env.JWT_SECRET ? new TextEncoder().encode(env.JWT_SECRET) : randomBytes(32),
    jwtSecretIsEphemeral: !env.JWT_SECRET,
    jwtTtlSeconds: env.JWT_TTL_SECONDS,
    jwtIssuer: env.JWT_ISSUER ?? null,
    feedStrategy: env.FEED_STRATEGY,
    timeline: timelineOptions(env),
    notificationRetentionMs: days(env.NOTIFICATION_RETENTION_DAYS),
    limits: limitsOptions(env),
    maxBodyBytes: env.MAX_BODY_BYTES,
    requestTimeoutSeconds: env.REQUEST_TIMEOUT_SECONDS,
    rateLimits: rateLimitsOptions(env),
    staffHandles: env.STAFF_HANDLES ?? [],
    graphiql: env.GRAPHIQL ? env.GRAPHIQL === 'true' : !isProduction,
    compiledExecution: env.GRAPHQL_EXECUTION === 'compiled',
    documents: { trustedManifests: env.TRUSTED_DOCUMENTS ?? [], trustedOnly: env.TRUSTED_DOCUMENTS_ONLY === 'true' },
    live: liveOptions(env),
    fanout: fanoutOptions(env),
    media: {
      maxBytes: env.MEDIA_MAX_BYTES,
      maxPixels: env.MEDIA_MAX_PIXELS,
      orphanAfterMs: Math.round(env.MEDIA_ORPHAN_HOURS * 3600 * 1000),
      urlTtlSeconds: env.MEDIA_URL_TTL_SECONDS,
      publicUrl: env.MEDIA_PUBLIC_URL?.replace(/\/+$/, '') ?? null,
    },
    observability: {
      logLevel: env.LOG_LEVEL,
      metricsPort: env.METRICS_PORT ?? null,
      tracing: env.OTEL_EXPORTER_OTLP_ENDPOINT
        ? { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ''), serviceName: env.OTEL_SERVICE_NAME }
        : null,
    },
    shutdown: {
      delayMs: Math.round(env.SHUTDOWN_DELAY_SECONDS * 1000),
      timeoutMs: Math.round(env.SHUTDOWN_TIMEOUT_SECONDS * 1000),
    },
  };
}

function timelineOptions(env: Environment): TimelineOptions {
  return {
    content: env.TIMELINE_CONTENT,
    bucketSpanMs: Math.round(env.TIMELINE_BUCKET_SPAN * 1000),
    readBatch: env.TIMELINE_READ_BATCH,
    bucketSize: env.TIMELINE_BUCKET_SIZE,
    cacheSize: env.TIMELINE_CACHE_SIZE,
    followBackfill: env.FOLLOW_BACKFILL,
    retentionMs: days(env.TIMELINE_RETENTION_DAYS),
  };
}

const days = (count: number) => Math.round(count * 24 * 3600 * 1000);

function limitsOptions(env: Environment): RequestLimits {
  return {
    maxDepth: env.MAX_QUERY_DEPTH,
    maxCost: env.MAX_QUERY_COST,
    maxCostAnonymous: env.MAX_QUERY_COST_ANONYMOUS,
    maxAliases: env.MAX_ALIASES,
    maxRootMutations: env.MAX_MUTATIONS_PER_REQUEST,
  };
}

function rateLimitsOptions(env: Environment): RateLimitOptions {
  return {
    loginFailuresPerAddressPerHour: env.RATE_LIMIT_LOGIN_FAILURES_PER_ADDRESS,
    signUpsPerAddressPerHour: env.RATE_LIMIT_SIGNUPS_PER_ADDRESS,
    postsPerAccountPerMinute: env.RATE_LIMIT_POSTS_PER_MINUTE,
    followsPerAccountPerMinute: env.RATE_LIMIT_FOLLOWS_PER_MINUTE,
    uploadsPerAccountPerHour: env.RATE_LIMIT_UPLOADS_PER_HOUR,
    reportsPerAccountPerHour: env.RATE_LIMIT_REPORTS_PER_HOUR,
  };
}

function liveOptions(env: Environment): LiveOptions {
  return {
    events: env.LIVE_EVENTS ?? 'change-stream',
    eventsChosen: env.LIVE_EVENTS !== undefined,
    eventTtlSeconds: env.LIVE_EVENT_TTL_SECONDS,
    connectionInitTimeoutMs: env.LIVE_CONNECTION_INIT_TIMEOUT_MS,
    maxConnectionsPerUser: env.LIVE_MAX_CONNECTIONS_PER_USER,
    maxSubscriptionsPerConnection: env.LIVE_MAX_SUBSCRIPTIONS_PER_CONNECTION,
    maxQueuedEvents: env.LIVE_MAX_QUEUED_EVENTS,
    group: { index: env.LIVE_GROUP, count: env.LIVE_GROUPS },
  };
}

function fanoutOptions(env: Environment): FanoutOptions {
  return {
    batchSize: env.FANOUT_BATCH,
    claimBatch: env.FANOUT_CLAIM,
    workers: env.FANOUT_WORKERS,
    maxAttempts: env.FANOUT_MAX_ATTEMPTS,
    leaseMs: Math.round(env.FANOUT_LEASE_SECONDS * 1000),
    retryBaseMs: Math.round(env.FANOUT_RETRY_SECONDS * 1000),
    pullThreshold: env.FANOUT_PULL_THRESHOLD,
    activeReaderMs: Math.round(env.ACTIVE_READER_DAYS * 24 * 3600 * 1000),
  };
}

// `FOO=` in a shell or .env file means "not set", not "set to the empty string".
function withoutEmptyValues(environment: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(environment).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
}
