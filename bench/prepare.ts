import cliProgress from 'cli-progress';
import type { Db } from 'mongodb';
import type { Config } from '../src/config.js';
import { rebuildTimelines } from '../src/feed/rebuild.js';
import { createServices } from '../src/services.js';

export function progressBar(label: string): cliProgress.SingleBar {
  return new cliProgress.SingleBar(
    {
      format: `${label.padEnd(32)} [{bar}] {percentage}% | {value}/{total} | {duration_formatted}`,
      hideCursor: true,
      // When stderr is a file or pipe, a line every 10 s instead of nothing.
      noTTYOutput: true,
      notTTYSchedule: 10_000,
    },
    cliProgress.Presets.shades_classic,
  );
}

/**
 * Builds `config`'s timelines from the loaded posts, before any server starts: at start the app
 * refuses fanout-on-write timelines that were not built for its strategy, so this does what the
 * rebuild command would, on our connection. Returns the seconds it took.
 */
export async function buildTimelines(db: Db, config: Config, label: string, posts: number): Promise<number> {
  const services = createServices(db, config);
  await Promise.all([services.graph.ensureIndexes(), services.content.ensureIndexes(), services.feed.backend.ensureIndexes()]);
  const bar = progressBar(`${label} rebuild`);
  bar.start(posts, 0);
  const started = performance.now();
  await rebuildTimelines(services, (done, total) => {
    bar.setTotal(total);
    bar.update(done);
  });
  bar.stop();
  return (performance.now() - started) / 1000;
}
