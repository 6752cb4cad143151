import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';

describe('configuration from the environment', () => {
  it('has working defaults for a development machine', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      mongodbUri: undefined,
      feedStrategy: 'fanout-on-read',
      isDevelopment: false,
      jwtSecretIsEphemeral: true,
      timeline: { content: 'embed', bucketSpanMs: 86_400_000, readBatch: 2, bucketSize: 50, cacheSize: 50, followBackfill: 20 },
    });
    expect(config.jwtSecret.length).toBeGreaterThanOrEqual(32);
  });

  it('requires JWT_SECRET and a real database in production, and turns GraphiQL off there unless asked', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET: required when NODE_ENV=production/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) })).toThrow(
      /MONGODB_URI: required when NODE_ENV=production/,
    );
    const production = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), MONGODB_URI: 'mongodb://db.internal/feed' };
    const config = loadConfig(production);
    expect(config).toMatchObject({ jwtSecretIsEphemeral: false, isProduction: true, graphiql: false });
    expect(loadConfig({ ...production, GRAPHIQL: 'true' }).graphiql).toBe(true);
    expect(loadConfig({}).graphiql).toBe(true);
  });

  it('names every invalid variable at once', () => {
    let error: unknown;
    try {
      loadConfig({ PORT: 'eighty', FEED_STRATEGY: 'magic', JWT_SECRET: 'short', MONGODB_URI: 'postgres://x' });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    for (const name of ['PORT', 'FEED_STRATEGY', 'JWT_SECRET', 'MONGODB_URI']) expect(message).toContain(name);
  });

  it('treats empty variables as unset and accepts fractional bucket spans', () => {
    const config = loadConfig({ PORT: '', MONGODB_URI: '', TIMELINE_BUCKET_SPAN: '0.5' });
    expect(config.port).toBe(4000);
    expect(config.mongodbUri).toBeUndefined();
    expect(config.timeline.bucketSpanMs).toBe(500);
  });

  it('reads how it is watched and stopped: log level, metrics port, tracing endpoint, shutdown times', () => {
    expect(loadConfig({}).observability).toEqual({ logLevel: 'info', metricsPort: null, tracing: null });
    expect(loadConfig({}).shutdown).toEqual({ delayMs: 0, timeoutMs: 25_000 });
    const watched = loadConfig({
      LOG_LEVEL: 'trace',
      METRICS_PORT: '9464',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
      SHUTDOWN_DELAY_SECONDS: '5',
      SHUTDOWN_TIMEOUT_SECONDS: '30',
    });
    expect(watched.observability).toEqual({ logLevel: 'trace', metricsPort: 9464, tracing: { endpoint: 'http://collector:4318', serviceName: 'feed-service' } });
    expect(watched.shutdown).toEqual({ delayMs: 5000, timeoutMs: 30_000 });
    expect(() => loadConfig({ LOG_LEVEL: 'verbose' })).toThrow(/LOG_LEVEL/);
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT: must be an http\(s\) URL/);
    expect(() => loadConfig({ SHUTDOWN_DELAY_SECONDS: '30', SHUTDOWN_TIMEOUT_SECONDS: '30' })).toThrow(/SHUTDOWN_DELAY_SECONDS: must be shorter than SHUTDOWN_TIMEOUT_SECONDS/);
  });

  it('puts an instance in one live group of several, and refuses a group that does not exist', () => {
    expect(loadConfig({}).live.group).toEqual({ index: 0, count: 1 });
    expect(loadConfig({ LIVE_GROUPS: '4', LIVE_GROUP: '3' }).live.group).toEqual({ index: 3, count: 4 });
    expect(() => loadConfig({ LIVE_GROUPS: '4', LIVE_GROUP: '4' })).toThrow(/LIVE_GROUP: must be below LIVE_GROUPS \(4\)/);
    expect(() => loadConfig({ LIVE_GROUPS: '2', LIVE_EVENTS: 'local' })).toThrow(/LIVE_GROUPS: instance groups need LIVE_EVENTS=change-stream/);
  });

  it('reads the limits and lifetimes of images, and refuses what cannot work', () => {
    expect(loadConfig({}).media).toEqual({ maxBytes: 10 * 1024 * 1024, maxPixels: 40_000_000, orphanAfterMs: 24 * 3_600_000, urlTtlSeconds: 3600, publicUrl: null });
    expect(loadConfig({}).rateLimits.uploadsPerAccountPerHour).toBe(60);
    const set = loadConfig({
      MEDIA_MAX_BYTES: '2097152',
      MEDIA_MAX_PIXELS: '1000000',
      MEDIA_ORPHAN_HOURS: '0.5',
      MEDIA_URL_TTL_SECONDS: '600',
      MEDIA_PUBLIC_URL: 'https://api.example.com/',
      RATE_LIMIT_UPLOADS_PER_HOUR: '10',
    });
    expect(set.media).toEqual({ maxBytes: 2_097_152, maxPixels: 1_000_000, orphanAfterMs: 1_800_000, urlTtlSeconds: 600, publicUrl: 'https://api.example.com' });
    expect(set.rateLimits.uploadsPerAccountPerHour).toBe(10);
    expect(() => loadConfig({ MEDIA_MAX_BYTES: '0' })).toThrow(/MEDIA_MAX_BYTES/);
    expect(() => loadConfig({ MEDIA_URL_TTL_SECONDS: '1' })).toThrow(/MEDIA_URL_TTL_SECONDS/);
    expect(() => loadConfig({ MEDIA_PUBLIC_URL: 'api.example.com' })).toThrow(/MEDIA_PUBLIC_URL: must be an http\(s\) URL/);
  });
});
