/**
 * `npm run bench:socialite -- --jar <socialite.jar>`: MongoDB Labs' Socialite, the design this
 * project follows, against this API on the same database server and same-sized data, both over
 * HTTP, the same traffic from the same load generator (timeline reads only, or with `--mix socialite`
 * Socialite's model of reads, posts, follows and unfollows), in alternating rounds. How to build the
 * jar is in docs/benchmark.md.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { FeedStrategyName } from '../src/config.js';
import { connectDatabase, withDatabaseName } from '../src/db/connect.js';
import { seededRandom } from './generate.js';
import { int, list, num } from './options.js';
import { socialiteFieldsTimelineQuery, timelineQuery } from './measure.js';
import { fullTimelinePage } from './pages.js';
import { graphqlOperations, readEveryTimelineOnce, serveStrategy } from './ourApi.js';
import { benchDatabaseServer, loadGraph } from './prepare.js';
import { describeEnvironment } from './report.js';
import { freePort, processTreeCpuSeconds } from './serverProcess.js';
import { FollowTracker, httpClient, namedMix, runTraffic, type MixName, type Operation, type Operations, type Send, type TrafficResult } from './traffic.js';

/** Socialite's feed models that match this project's strategies. */
const socialiteModels: Partial<Record<FeedStrategyName, string>> = {
  'fanout-on-read': 'FanoutOnRead',
  cache: 'FanoutOnWriteToCache',
};

const usage = `Usage: npm run bench:socialite -- --jar <path to socialite-0.0.1-SNAPSHOT.jar> [options]

  --users <n>          users (default 2000)
  --maxfollows <n>     Socialite's loader: most accounts one user follows (default 50); this API's data
                       gets the same mean follows per user as Socialite's loader produced
  --messages <n>       posts per user (default 5)
  --concurrency <n>    connections (default 16)
  --active-users <n>   concurrently active users (default 200)
  --duration <s>       measured seconds per round and side (default 10)
  --rounds <n>         alternating rounds (default 3)
  --strategies <list>  of ${Object.keys(socialiteModels).join(', ')} (default both)
  --mix <name>         reads (timeline reads only; default) or socialite (80 % timeline reads, 10 % posts,
                       5 % follows, 5 % unfollows of accounts the user does not / does follow)
  --fields <which>     what this API's page carries: socialite (each post's id, text, time and
                       author, as Socialite's page; default), client (also a cursor per post and
                       the author's display name) or full (the web client's Timeline query: counts,
                       the viewer's likes, reposts and bookmarks, quoted and replied-to posts)
  --processes <n>      this API's server processes, WEB_CONCURRENCY (default 1); Socialite's Jetty uses every core
  --profile-server <dir>  write this API's server processes' CPU profiles (.cpuprofile) there
  --out <path>         JSON results (default bench/results/socialite-<time>.json)
`;

/** The operations of the mixes this benchmark offers, in the order the report lists them. */
const comparedOperations = ['read', 'post', 'follow', 'unfollow'] as const satisfies readonly Operation[];

interface Side {
  /** Operations per second, all kinds together (pages per second with the reads mix). */
  perSecond: number;
  /** Timeline reads. */
  p50: number;
  p99: number;
  byOperation: Partial<Record<Operation, { perSecond: number; p50: number; p99: number; errors: number }>>;
  errors: number;
  /**
   * Cores used while the side's traffic ran (warm-up included): its server's processes, the
   * database, and this process, the load generator. On a machine the three share, a side whose
   * pages cost the client more leaves its server less.
   */
  cores: { server: number; database: number | null; loadGenerator: number };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    strict: true,
    options: {
      jar: { type: 'string' },
      users: { type: 'string' },
      maxfollows: { type: 'string' },
      messages: { type: 'string' },
      concurrency: { type: 'string' },
      'active-users': { type: 'string' },
      duration: { type: 'string' },
      rounds: { type: 'string' },
      strategies: { type: 'string' },
      processes: { type: 'string' },
      fields: { type: 'string' },
      mix: { type: 'string' },
      'profile-server': { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help || !values.jar) {
    console.error(usage);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const options = {
    jar: resolve(values.jar),
    users: int('users', values.users, 2000, 10),
    maxfollows: int('maxfollows', values.maxfollows, 50, 1),
    messages: int('messages', values.messages, 5, 1),
    concurrency: int('concurrency', values.concurrency, 16, 1),
    activeUsers: int('active-users', values['active-users'], 200, 1),
    duration: num('duration', values.duration, 10, 1),
    rounds: int('rounds', values.rounds, 3, 1),
    strategies: list('strategies', values.strategies, Object.keys(socialiteModels) as FeedStrategyName[]),
    processes: int('processes', values.processes, 1, 1),
    fields: pageFields(values.fields),
    mix: namedMix(values.mix ?? 'reads').name,
    profileDir: values['profile-server'] ? resolve(values['profile-server']) : null,
    out: values.out ?? `bench/results/socialite-${new Date().toISOString().replace(/[:.]/g, '-')}.json`,
  };

  const started = Date.now();
  const server = await benchDatabaseServer();
  const results = [];
  try {
    for (const strategy of options.strategies) results.push(await compare(strategy, server.uri, server.standIn?.pid ?? null, options));
  } finally {
    await server.stop();
  }
  const report = { startedAt: new Date(started).toISOString(), totalSeconds: (Date.now() - started) / 1000, environment: describeEnvironment(server.description), options, results };
  await mkdir(dirname(options.out), { recursive: true });
  await writeFile(options.out, `${JSON.stringify(report, null, 2)}\n`);
  const median = (xs: number[]) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
  const unit = options.mix === 'reads' ? 'pages/s' : 'ops/s';
  const traffic = options.mix === 'reads' ? 'timeline reads only (20 posts a page)' : "Socialite's mix: 80 % timeline reads (20 posts a page), 10 % posts, 5 % follows, 5 % unfollows";
  console.log(`- Machine: ${report.environment.cpu}, ${report.environment.cores} cores; Node ${report.environment.node}; database: ${report.environment.database}`);
  console.log(`- Traffic: ${traffic}, ${options.activeUsers} active users, ${options.concurrency} connections, ${options.duration} s per side and round, ${options.rounds} alternating rounds; this API: ${options.processes} process${options.processes > 1 ? 'es' : ''}, ${{ socialite: "the fields of Socialite's page", client: "a cursor and display name per post", full: "the page people load (the web client's Timeline query)" }[options.fields]}`);
  console.log(`\n| strategy | data (users, follows, posts) | Socialite ${unit} | read p50 / p99 ms | this API ${unit} | read p50 / p99 ms | ratio (median) | ratio per round | failed requests (Socialite, ours) |`);
  console.log('|---|---|--:|--:|--:|--:|--:|---|--:|');
  for (const result of results) {
    const theirs = result.rounds.map((round) => round.socialite);
    const ours = result.rounds.map((round) => round.ours);
    const ratios = result.rounds.map((round) => round.ours.perSecond / round.socialite.perSecond);
    console.log(
      `| ${result.strategy} (Socialite ${result.socialiteModel}) | ${result.data.users.toLocaleString('en-US')}, ${result.data.socialiteFollows.toLocaleString('en-US')} / ${result.data.ourFollows.toLocaleString('en-US')}, ${result.data.posts.toLocaleString('en-US')} ` +
        `| ${median(theirs.map((s) => s.perSecond)).toFixed(0)} | ${median(theirs.map((s) => s.p50)).toFixed(1)} / ${median(theirs.map((s) => s.p99)).toFixed(0)} ` +
        `| ${median(ours.map((s) => s.perSecond)).toFixed(0)} | ${median(ours.map((s) => s.p50)).toFixed(1)} / ${median(ours.map((s) => s.p99)).toFixed(0)} ` +
        `| ${median(ratios).toFixed(2)}× | ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')} ` +
        `| ${theirs.reduce((sum, s) => sum + s.errors, 0)}, ${ours.reduce((sum, s) => sum + s.errors, 0)} |`,
    );
  }
  if (options.mix === 'reads') {
    console.log(`\nThe same pages from a bare node:http server (bench/bareServer.ts) that answers each request with the bytes this API answered it with, under the same traffic after this API's side of each round:\n`);
    // The bare server over Socialite is the most any server answering these bytes could show here:
    // the load generator shares the cores, whatever the server does.
    console.log('| strategy | bare node:http pages/s | this API pages/s | ours ÷ bare (median) | per round | bare ÷ Socialite, per round |');
    console.log('|---|--:|--:|--:|---|---|');
    for (const result of results) {
      const ratios = result.rounds.map((round) => round.ours.perSecond / round.bare!.perSecond);
      const ceilings = result.rounds.map((round) => round.bare!.perSecond / round.socialite.perSecond);
      console.log(
        `| ${result.strategy} | ${median(result.rounds.map((round) => round.bare!.perSecond)).toFixed(0)} | ${median(result.rounds.map((round) => round.ours.perSecond)).toFixed(0)} ` +
          `| ${median(ratios).toFixed(2)}× | ${ratios.map((ratio) => ratio.toFixed(2)).join(', ')} | ${ceilings.map((ratio) => ratio.toFixed(2)).join(', ')} |`,
      );
    }
  }
  if (options.mix !== 'reads') {
    console.log('\nPer operation, median of the rounds: operations per second, p50 / p99 ms, and the ratio of the operations per second (ours ÷ Socialite\'s):\n');
    console.log(`| strategy | operation | Socialite ops/s | p50 / p99 ms | this API ops/s | p50 / p99 ms | ratio | failed (Socialite, ours) |`);
    console.log('|---|---|--:|--:|--:|--:|--:|--:|');
    for (const result of results) {
      for (const op of comparedOperations) {
        const stat = (sides: Side[], pick: (s: NonNullable<Side['byOperation'][Operation]>) => number) =>
          median(sides.flatMap((side) => (side.byOperation[op] ? [pick(side.byOperation[op]!)] : [])));
        const theirs = result.rounds.map((round) => round.socialite);
        const ours = result.rounds.map((round) => round.ours);
        const errors = (sides: Side[]) => sides.reduce((sum, side) => sum + (side.byOperation[op]?.errors ?? 0), 0);
        const ms = (x: number) => (Number.isNaN(x) ? '–' : x < 10 ? x.toFixed(1) : x.toFixed(0));
        console.log(
          `| ${result.strategy} | ${op} | ${stat(theirs, (s) => s.perSecond).toFixed(0)} | ${ms(stat(theirs, (s) => s.p50))} / ${ms(stat(theirs, (s) => s.p99))} ` +
            `| ${stat(ours, (s) => s.perSecond).toFixed(0)} | ${ms(stat(ours, (s) => s.p50))} / ${ms(stat(ours, (s) => s.p99))} ` +
            `| ${(stat(ours, (s) => s.perSecond) / stat(theirs, (s) => s.perSecond)).toFixed(2)}× | ${errors(theirs)}, ${errors(ours)} |`,
        );
      }
    }
  }
  console.log(
    `\nCores while each side ran, median of the rounds (server, database, load generator), and CPU per ${options.mix === 'reads' ? 'page' : 'operation'}: the server's, the database's, both together (what the two sides are compared by) and the load generator's:\n`,
  );
  const per = options.mix === 'reads' ? 'page' : 'op';
  console.log(`| strategy | side | server cores | database cores | load generator cores | server ms/${per} | database ms/${per} | server + database ms/${per} | load generator ms/${per} |`);
  console.log('|---|---|--:|--:|--:|--:|--:|--:|--:|');
  for (const result of results) {
    for (const [name, sides] of [['Socialite', result.rounds.map((round) => round.socialite)], ['this API', result.rounds.map((round) => round.ours)]] as const) {
      // The database's cores are not known when it is not a process of this machine (MONGODB_URI).
      const medianOfKnown = (values: (number | null)[]) => {
        const known = values.filter((value): value is number => value !== null);
        return known.length > 0 ? median(known).toFixed(2) : '–';
      };
      const cores = (pick: (side: Side) => number | null) => medianOfKnown(sides.map(pick));
      const perPage = (pick: (side: Side) => number | null) =>
        medianOfKnown(sides.map((side) => {
          const value = pick(side);
          return value === null ? null : (1000 * value) / side.perSecond;
        }));
      console.log(
        `| ${result.strategy} | ${name} | ${cores((side) => side.cores.server)} | ${cores((side) => side.cores.database)} | ${cores((side) => side.cores.loadGenerator)} ` +
          `| ${perPage((side) => side.cores.server)} | ${perPage((side) => side.cores.database)} ` +
          `| ${perPage((side) => (side.cores.database === null ? null : side.cores.server + side.cores.database))} | ${perPage((side) => side.cores.loadGenerator)} |`,
      );
    }
  }
  console.error(`\nJSON written to ${options.out}`);
}

async function compare(
  strategy: FeedStrategyName,
  baseUri: string,
  databasePid: number | null,
  options: { jar: string; users: number; maxfollows: number; messages: number; concurrency: number; activeUsers: number; duration: number; rounds: number; processes: number; fields: 'socialite' | 'client' | 'full'; mix: MixName; profileDir: string | null },
) {
  const model = socialiteModels[strategy]!;
  const socialiteDatabase = `socialite_${Date.now().toString(36)}`;
  const socialiteUri = withDatabaseName(baseUri, socialiteDatabase);
  const port = await freePort();
  const directory = await mkdtemp(join(tmpdir(), 'socialite-'));
  const configPath = join(directory, 'config.yml');
  await writeFile(
    configPath,
    [
      'http:',
      `  port: ${port}`,
      `  adminPort: ${await freePort()}`,
      // Neither side logs a line per request.
      '  requestLog:',
      '    console:',
      '      enabled: false',
      'logging:',
      '  level: WARN',
      'mongodb:',
      `  default_database_uri: ${socialiteUri}`,
      'services:',
      '  feed_service:',
      `    model: ${model}`,
      ...(model === 'FanoutOnWriteToCache' ? ['    cache_size_limit: 50'] : []),
      '',
    ].join('\n'),
  );
  console.error(`loading Socialite's data (${model})…`);
  await run('java', ['-jar', options.jar, 'load', '--users', String(options.users), '--maxfollows', String(options.maxfollows), '--messages', String(options.messages), '--threads', '4', configPath]);
  const socialiteDb = await connectDatabase(socialiteUri);
  const socialiteFollows = await socialiteDb.db.collection('following').countDocuments();

  // The same sizes for this API: users, mean follows per user, posts per user.
  const ourUri = withDatabaseName(baseUri, `feed_socialite_${Date.now().toString(36)}`);
  const ourDatabase = await connectDatabase(ourUri);
  const graph = await loadGraph(ourDatabase.db, { users: options.users, followsPerUser: socialiteFollows / options.users, zipf: 1, postsPerUser: options.messages, days: 7, seed: 42 });

  const socialite = spawn('java', ['-jar', options.jar, 'server', configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  const { server, world } = await serveStrategy(ourDatabase.db, ourUri, graph, { strategy, mode: 'embed', processes: options.processes, execution: 'compiled', profileDir: options.profileDir });
  const theirClient = httpClient(`http://127.0.0.1:${port}`, options.concurrency);
  const ourClient = httpClient(server.url, options.concurrency);
  // Reads only: every page this API answers is kept, for a bare node:http server to answer with the same bytes.
  const pages = new Map<string, string>();
  const ourSend: Send = async (method, path, headers, body) => {
    const reply = await ourClient.send(method, path, headers, body);
    if (options.mix === 'reads' && reply.status === 200) pages.set(`${headers.authorization ?? ''}\n${body ?? ''}`, reply.body);
    return reply;
  };
  let bare: { child: ChildProcess; client: ReturnType<typeof httpClient> } | null = null;
  try {
    await waitForHttp(`http://127.0.0.1:${port}/users/0/timeline?limit=1`, socialite);
    const socialiteUsers = Array.from({ length: options.users }, (_, i) => String(i));
    const socialiteEdges: (readonly [string, string])[] = [];
    for await (const edge of socialiteDb.db.collection<{ _f: string; _t: string }>('following').find({}, { projection: { _f: 1, _t: 1 } })) {
      socialiteEdges.push([String(edge._f), String(edge._t)]);
    }
    const theirs = socialiteOperations(new FollowTracker(socialiteUsers, socialiteEdges), seededRandom(9));
    const readQuery = { socialite: socialiteFieldsTimelineQuery, client: timelineQuery, full: fullTimelinePage }[options.fields];
    const ours = graphqlOperations(world, seededRandom(9), readQuery);
    await readEveryTimelineOnce('Socialite', socialiteUsers, theirs.read!, theirClient.send, options.concurrency);
    await readEveryTimelineOnce('this API', world.handles, ours.read!, ourSend, options.concurrency);

    const traffic = (users: readonly string[]) => ({
      users,
      activeUsers: options.activeUsers,
      concurrency: options.concurrency,
      targetRate: 0,
      mix: namedMix(options.mix).mix,
      sessionLength: 20,
      seconds: options.duration,
      warmupSeconds: 2,
      random: seededRandom(11),
    });
    const side = async (serverPid: number, run: () => Promise<TrafficResult>): Promise<Side> => {
      const cpu = () => ({ server: processTreeCpuSeconds(serverPid), database: databasePid === null ? 0 : processTreeCpuSeconds(databasePid), loadGenerator: process.cpuUsage() });
      const before = cpu();
      const started = performance.now();
      const result = await run();
      const after = cpu();
      const wall = (performance.now() - started) / 1000;
      const loadGenerator = after.loadGenerator.user + after.loadGenerator.system - before.loadGenerator.user - before.loadGenerator.system;
      return {
        perSecond: result.perSecond,
        p50: result.byOperation.read?.p50 ?? NaN,
        p99: result.byOperation.read?.p99 ?? NaN,
        byOperation: Object.fromEntries(
          Object.entries(result.byOperation).map(([op, stats]) => [op, { perSecond: stats.perSecond, p50: stats.p50, p99: stats.p99, errors: stats.errors }]),
        ),
        errors: result.errors,
        cores: {
          server: (after.server - before.server) / wall,
          database: databasePid === null ? null : (after.database - before.database) / wall,
          loadGenerator: loadGenerator / 1e6 / wall,
        },
      };
    };
    const rounds = [];
    for (let round = 1; round <= options.rounds; round++) {
      const theirResult = await side(socialite.pid!, () => runTraffic(traffic(socialiteUsers), theirs, theirClient.send, () => {}));
      const ourResult = await side(server.pid, () => runTraffic(traffic(world.handles), ours, ourSend, () => {}));
      const unit = options.mix === 'reads' ? 'pages/s' : 'ops/s';
      let bareResult: Side | null = null;
      if (options.mix === 'reads') {
        bare = await restartBareServer(bare, pages, options.concurrency);
        const { child, client } = bare;
        bareResult = await side(child.pid!, () => runTraffic(traffic(world.handles), ours, client.send, () => {}));
      }
      console.error(
        `${strategy} round ${round}: Socialite ${theirResult.perSecond.toFixed(0)} ${unit}, this API ${ourResult.perSecond.toFixed(0)} ${unit}` +
          (bareResult ? `, bare node:http ${bareResult.perSecond.toFixed(0)} ${unit}` : ''),
      );
      rounds.push({ socialite: theirResult, ours: ourResult, bare: bareResult });
    }
    return { strategy, socialiteModel: model, data: { users: options.users, socialiteFollows, ourFollows: graph.edges, posts: graph.posts }, rounds };
  } finally {
    theirClient.close();
    ourClient.close();
    bare?.client.close();
    bare?.child.kill('SIGKILL');
    socialite.kill('SIGKILL');
    await server.stop();
    await socialiteDb.db.dropDatabase().catch(() => {});
    await ourDatabase.db.dropDatabase().catch(() => {});
    await socialiteDb.close();
    await ourDatabase.close();
  }
}

/**
 * Socialite's REST resource (UserResource): GET /users/{id}/timeline, POST /users/{id}/posts?message=,
 * PUT and DELETE /users/{id}/following/{target}. Follows and unfollows pick, as ours do, an account the
 * user does not / does follow, from the same kind of tracker.
 */
function socialiteOperations(followees: FollowTracker, random: () => number): Operations {
  const ok = (status: number) => status >= 200 && status < 300;
  // Parsed as ours are: a client reads the page it asked for.
  const read: NonNullable<Operations['read']> = async (session, send) => {
    const reply = await send('GET', `/users/${session.user}/timeline?limit=20`, {});
    return { ran: 'read', ok: reply.status === 200 && Array.isArray(JSON.parse(reply.body)) };
  };
  return {
    read,
    post: async (session, send) => {
      const message = encodeURIComponent(`workload post by ${session.user} at ${Date.now()}`);
      const reply = await send('POST', `/users/${session.user}/posts?message=${message}`, {}, '');
      return { ran: 'post', ok: ok(reply.status) };
    },
    follow: async (session, send) => {
      const target = followees.pickToFollow(session.user, random);
      if (target === null) return read(session, send);
      const reply = await send('PUT', `/users/${session.user}/following/${target}`, {}, '');
      if (!ok(reply.status)) followees.undo('follow', session.user, target);
      return { ran: 'follow', ok: ok(reply.status) };
    },
    unfollow: async (session, send) => {
      const target = followees.pickToUnfollow(session.user, random);
      if (target === null) return read(session, send);
      const reply = await send('DELETE', `/users/${session.user}/following/${target}`, {});
      if (!ok(reply.status)) followees.undo('unfollow', session.user, target);
      return { ran: 'unfollow', ok: ok(reply.status) };
    },
  };
}

function pageFields(raw: string | undefined): 'socialite' | 'client' | 'full' {
  const fields = list('fields', raw ?? 'socialite', ['socialite', 'client', 'full'] as const);
  if (fields.length !== 1) throw new Error(`--fields: one of socialite, client, full, got "${raw}"`);
  return fields[0]!;
}

/** The bare node:http server (bench/bareServer.ts), started again with the pages kept so far. */
async function restartBareServer(
  running: { child: ChildProcess; client: ReturnType<typeof httpClient> } | null,
  pages: ReadonlyMap<string, string>,
  concurrency: number,
): Promise<{ child: ChildProcess; client: ReturnType<typeof httpClient> }> {
  if (running) {
    running.client.close();
    running.child.kill('SIGKILL');
  }
  const directory = await mkdtemp(join(tmpdir(), 'bare-'));
  const pagesFile = join(directory, 'pages.json');
  await writeFile(pagesFile, JSON.stringify(Object.fromEntries(pages)));
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx/esm', 'bench/bareServer.ts', pagesFile, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolveStart, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('listening') && resolveStart());
    child.once('exit', (code) => reject(new Error(`the bare server exited with ${code}`)));
  });
  return { child, client: httpClient(`http://127.0.0.1:${port}`, concurrency) };
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let errorOutput = '';
    child.stderr.on('data', (chunk: Buffer) => {
      errorOutput = (errorOutput + chunk.toString()).slice(-4000);
    });
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolvePromise() : reject(new Error(`${command} ${args.join(' ')} exited with ${code}:\n${errorOutput}`))));
  });
}

async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`Socialite exited at start (code ${child.exitCode})`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('Socialite did not answer within 60 s');
    await new Promise((resolveWait) => setTimeout(resolveWait, 200));
  }
}

await main();
