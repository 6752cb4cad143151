import type { GraphSizes } from './generate.js';
import { parseArgs } from 'node:util';
import {
  feedStrategies,
  timelineContentModes,
  type FeedStrategyName,
  type TimelineContentMode,
} from '../src/config.js';

export interface BenchOptions extends GraphSizes {
  concurrency: number;
  /** Seconds per load measurement; ignored when `requests` is set. */
  duration: number;
  /** Requests per load measurement instead of a duration. */
  requests: number | null;
  readers: number;
  postSamples: number;
  strategies: FeedStrategyName[];
  modes: TimelineContentMode[];
  /** Whether to add the list page and suggestions rows. */
  lists: boolean;
  /** Where the page-cost server processes write their CPU profiles (.cpuprofile); none when null. */
  profilePages: string | null;
  out: string;
}

// Defaults sized so all 8 strategy × mode runs finish well under ten minutes on a 2-core box
// with the in-memory stand-in, whose collection scans make every non-_id query O(collection).
// Fanout-on-write rebuilds cost deliveries × timeline-collection size there (each delivery's
// update scans the collection), so they grow with users²: at 1,000 users a bucket rebuild takes
// 25-60 s and the whole run about 5 minutes (measured on the 2-core dev box, see docs/benchmark.md).
const defaults = {
  users: 2000,
  followsPerUser: 25,
  zipf: 1,
  postsPerUser: 5,
  days: 7,
  seed: 42,
  concurrency: 16,
  duration: 5,
  readers: 200,
  postSamples: 10,
};

export const usage = `Usage: npm run bench -- [options]

Loads a generated follow graph once, then measures every timeline strategy × content mode on it
through the GraphQL endpoint. MONGODB_URI (if set) is used, in a fresh database dropped at the
end; otherwise the embedded in-memory stand-in is started.

  --users <n>              users to generate (default ${defaults.users})
  --follows-per-user <n>   mean accounts followed per user (default ${defaults.followsPerUser})
  --zipf <s>               Zipf exponent of followee popularity (default ${defaults.zipf})
  --posts-per-user <n>     posts per user, spread over the simulated period (default ${defaults.postsPerUser})
  --days <n>               length of the simulated period in days (default ${defaults.days})
  --seed <n>               PRNG seed; the same seed gives the same data (default ${defaults.seed})
  --concurrency <n>        concurrent connections during load (default ${defaults.concurrency})
  --duration <s>           seconds per load measurement (default ${defaults.duration})
  --requests <n>           requests per load measurement instead of --duration
  --readers <n>            sampled readers (users who follow someone) (default ${defaults.readers})
  --post-samples <n>       posts per author for post latency (default ${defaults.postSamples})
  --strategies <list>      comma list of ${feedStrategies.join(', ')} (default all)
  --modes <list>           comma list of ${timelineContentModes.join(', ')} (default all)
  --no-lists               leave out the list page and suggestions rows
  --profile-pages <dir>    write the CPU profiles of the page-cost server processes there
  --out <path>             JSON results (default bench/results/feed-<iso time>.json)
  --help                   this text
`;

export function parseOptions(argv: string[]): BenchOptions | 'help' {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      users: { type: 'string' },
      'follows-per-user': { type: 'string' },
      zipf: { type: 'string' },
      'posts-per-user': { type: 'string' },
      days: { type: 'string' },
      seed: { type: 'string' },
      concurrency: { type: 'string' },
      duration: { type: 'string' },
      requests: { type: 'string' },
      readers: { type: 'string' },
      'post-samples': { type: 'string' },
      strategies: { type: 'string' },
      modes: { type: 'string' },
      out: { type: 'string' },
      'profile-pages': { type: 'string' },
      'no-lists': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return 'help';

  const users = int('users', values.users, defaults.users, 10);
  return {
    users,
    followsPerUser: num('follows-per-user', values['follows-per-user'], defaults.followsPerUser, 0),
    zipf: num('zipf', values.zipf, defaults.zipf, 0),
    postsPerUser: int('posts-per-user', values['posts-per-user'], defaults.postsPerUser, 1),
    days: num('days', values.days, defaults.days, 0.001),
    seed: int('seed', values.seed, defaults.seed, 0),
    concurrency: int('concurrency', values.concurrency, defaults.concurrency, 1),
    duration: num('duration', values.duration, defaults.duration, 0.1),
    requests: values.requests === undefined ? null : int('requests', values.requests, 0, 1),
    readers: int('readers', values.readers, defaults.readers, 1),
    postSamples: int('post-samples', values['post-samples'], defaults.postSamples, 1),
    strategies: list('strategies', values.strategies, feedStrategies),
    modes: list('modes', values.modes, timelineContentModes),
    lists: !values['no-lists'],
    profilePages: values['profile-pages'] ?? null,
    out: values.out ?? `bench/results/feed-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  };
}

export function num(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min) throw new Error(`--${name} must be a number ≥ ${min}, got "${raw}"`);
  return value;
}

export function int(name: string, raw: string | undefined, fallback: number, min: number): number {
  const value = num(name, raw, fallback, min);
  if (!Number.isInteger(value)) throw new Error(`--${name} must be an integer, got "${raw}"`);
  return value;
}

export function list<T extends string>(name: string, raw: string | undefined, allowed: readonly T[]): T[] {
  if (raw === undefined) return [...allowed];
  const items = raw.split(',').map((item) => item.trim()).filter(Boolean);
  const unknown = items.filter((item) => !(allowed as readonly string[]).includes(item));
  if (unknown.length > 0 || items.length === 0) {
    throw new Error(`--${name}: expected a comma list of ${allowed.join(', ')}, got "${raw}"`);
  }
  return items as T[];
}

/**
 * The options of this process's command line, or null when there is nothing to run: `--help`
 * printed the usage, or a bad option printed what is wrong and set exit code 2.
 */
export function commandLine<T>(parse: (argv: string[]) => T | 'help', usageText: string): T | null {
  let options: T | 'help';
  try {
    options = parse(process.argv.slice(2));
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${usageText}`);
    process.exitCode = 2;
    return null;
  }
  if (options === 'help') {
    console.log(usageText);
    return null;
  }
  return options;
}
