import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { environmentVariables, loadConfig } from '../../src/config.js';

const root = new URL('../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: unknown;
}

/**
 * Nothing here can pull images, so the deployment files are checked as far as they can be without
 * running them: they parse, name what the operations manual (docs/operations.md) says, and give each process a configuration this
 * service accepts. test/deployment/processes.test.ts runs the same processes without containers.
 */
describe('compose.yaml', () => {
  const compose = parse(read('compose.yaml'), { merge: true }) as { services: Record<string, Service> };
  const { services } = compose;
  const readme = read('README.md');
  const manual = read('docs/operations.md');
  const feedServices = ['api-1', 'api-2', 'worker'];

  it('runs a three-member replica set, two API instances, one worker and Prometheus', () => {
    expect(Object.keys(services).sort()).toEqual(['api-1', 'api-2', 'mongo-1', 'mongo-2', 'mongo-3', 'mongo-init', 'prometheus', 'worker']);
    for (const member of ['mongo-1', 'mongo-2', 'mongo-3']) {
      expect(services[member]!.command).toEqual(['mongod', '--replSet', 'rs0', '--bind_ip_all']);
    }
    const initiate = services['mongo-init']!.command!.join(' ');
    for (const member of ['mongo-1:27017', 'mongo-2:27017', 'mongo-3:27017']) expect(initiate).toContain(member);
    expect(services.worker!.command).toEqual(['node', '--import', 'tsx/esm', 'src/main.ts', 'worker']);
    expect(services['api-1']!.command).toBeUndefined(); // the image's: the API
  });

  it('gives every feed process the settings it needs, all of them variables this service reads and accepts', () => {
    for (const name of feedServices) {
      const environment = services[name]!.environment!;
      expect(environment.MONGODB_URI).toBe('mongodb://mongo-1:27017,mongo-2:27017,mongo-3:27017/feed?replicaSet=rs0');
      expect(environment.JWT_SECRET).toMatch(/^\$\{JWT_SECRET:\?/); // required from the operator, never a default
      expect(environment).toMatchObject({ NODE_ENV: 'production', LIVE_EVENTS: 'change-stream', METRICS_PORT: '9464' });
      expect(Object.keys(environment).filter((variable) => !environmentVariables.includes(variable))).toEqual([]);
      // As compose would substitute them, with a secret given and no collector.
      const substituted = { ...environment, JWT_SECRET: 'x'.repeat(64), OTEL_EXPORTER_OTLP_ENDPOINT: '' };
      expect(() => loadConfig(substituted)).not.toThrow();
      expect(services[name]!.depends_on).toMatchObject({ 'mongo-init': { condition: 'service_completed_successfully' } });
    }
    expect(services['api-1']!.environment!.FANOUT_WORKERS).toBe('0');
    expect(services['api-2']!.environment!.FANOUT_WORKERS).toBe('0');
    expect(Number(services.worker!.environment!.FANOUT_WORKERS)).toBeGreaterThan(0);
  });

  it('has Prometheus scrape every feed process on its METRICS_PORT', () => {
    const prometheus = parse(read('deploy/prometheus.yml')) as { scrape_configs: { static_configs: { targets: string[] }[] }[] };
    const targets = prometheus.scrape_configs.flatMap((job) => job.static_configs.flatMap((config) => config.targets)).sort();
    expect(targets).toEqual(feedServices.map((name) => `${name}:9464`).sort());
  });

  it('is described in the operations manual: each service and each variable it sets', () => {
    expect(manual.indexOf('\n## Running it\n')).toBeGreaterThan(0);
    const operating = manual.slice(manual.indexOf('\n## Running it\n'));
    for (const name of Object.keys(services)) expect(operating, name).toContain(`\`${name}\``);
    const variables = new Set(feedServices.flatMap((name) => Object.keys(services[name]!.environment!)));
    for (const variable of variables) expect(readme + manual, variable).toContain(`\`${variable}\``);
  });
});

describe('Dockerfile', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const final = stages.at(-1)!;

  it('builds in one stage and runs from another with production dependencies only, as a non-root user', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toMatch(/npm ci --omit=dev/);
    expect(final).toMatch(/^COPY --from=dependencies \/app\/node_modules/m);
    expect(final).toMatch(/^USER node$/m);
    // No compiler in the image that runs, nor the package manager.
    expect(final.split('\n')[0]).toMatch(/-slim\b/);
    expect(final).not.toMatch(/apt-get install|build-essential|python3|g\+\+/);
    expect(final).toMatch(/rm -rf .*\/usr\/local\/bin\/npm/);
  });

  it('checks its health on /livez', () => {
    expect(final).toMatch(/^HEALTHCHECK .*\n?.*\/livez/m);
  });
});
