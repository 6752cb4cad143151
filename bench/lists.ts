/**
 * The rows `npm run bench` adds for lists and suggestions, measured once (neither depends on the
 * timeline strategy): a list page of an owner whose list holds every generated user (up to
 * 5,000), and `suggestedFollows` by both of Socialite's ways for the sampled readers. Also used by
 * `npm run bench:suggestions` on a graph of its own.
 */
import type { Db, MongoClient } from 'mongodb';
import type { RunningApp } from '../src/app.js';
import type { SuggestionMethod } from '../src/graph/followSuggestions.js';
import { countCommands, graphql, load, summarize, type LatencySummary, type LoadStats, type Payload } from './measure.js';

export interface ListPageResult {
  members: number;
  firstPage: LoadStats;
  scroll: LoadStats;
  /** Database commands per page once the process holds the list (first page, scroll). */
  commandsPerPage: { firstPage: number; scroll: number };
  /** The first page's, by collection. */
  firstPageCommands: Record<string, number>;
}

export interface SuggestionsResult {
  method: SuggestionMethod;
  served: boolean;
  /** Sequential answers measured (each viewer once per pass). */
  answers: number;
  latency: LatencySummary;
  commandsPerAnswer: number;
}

export const listPageQuery = `query ListPage($id: ID!, $after: String) {
  list(id: $id) {
    timeline(first: 20, after: $after) {
      edges { cursor node { id text createdAt author { handle displayName } } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

/** Sequential pages whose commands are counted. */
const commandSample = 20;

/**
 * Makes `owner` follow `members` and puts them all in one new list, writing the documented layout
 * (each follow edge carries the lists that hold the followee). Returns the list's id.
 */
export async function insertListOwner(app: RunningApp, db: Db, owner: string, members: readonly string[]): Promise<string> {
  await app.services.graph.createUser({ handle: owner, displayName: null, passwordHash: '-' });
  const list = await app.services.lists.create(owner, 'everyone');
  await db.collection('following').insertMany(members.map((member) => ({ _f: owner, _t: member, _g: [list.id] })));
  await db.collection('followers').insertMany(members.map((member) => ({ _f: member, _t: owner })));
  await db.collection('users').updateOne({ _id: owner as never }, { $set: { followingCount: members.length } });
  app.services.graph.invalidateAll();
  return list.id.toHexString();
}

export async function measureListPage(
  app: RunningApp,
  owner: string,
  listId: string,
  members: number,
  loadOptions: { connections: number; duration: number; amount: number | null },
): Promise<ListPageResult> {
  const authorization = `Bearer ${await app.services.accounts.tokenFor(owner)}`;
  const body = (after: string | null) => JSON.stringify({ query: listPageQuery, variables: { id: listId, after } });
  type Page = { list: { timeline: { pageInfo: { endCursor: string | null } } } };
  const first = await graphql<Page>(app.url, authorization, body(null));
  const scrollBody = body(first.data.list.timeline.pageInfo.endCursor);
  const perPage = async (pageBody: string) => {
    await graphql(app.url, authorization, pageBody);
    const counts = await countCommands(app.database.client as MongoClient, async () => {
      for (let i = 0; i < commandSample; i++) await graphql(app.url, authorization, pageBody);
    });
    return Object.fromEntries(Object.entries(counts).map(([name, count]) => [name, count / commandSample]));
  };
  const total = (counts: Record<string, number>) => Object.values(counts).reduce((sum, count) => sum + count, 0);
  const firstPageCommands = await perPage(body(null));
  const commandsPerPage = { firstPage: total(firstPageCommands), scroll: total(await perPage(scrollBody)) };
  const firstPage = await load(app.url, [{ authorization, body: body(null) }], loadOptions);
  const scroll = await load(app.url, [{ authorization, body: scrollBody } satisfies Payload], loadOptions);
  return { members, firstPage, scroll, commandsPerPage, firstPageCommands };
}

/**
 * Each method answers `suggestBy(viewer, 10)` for every viewer, `passes` times, one at a time in
 * this process (no HTTP): a warm-up pass first, so the follow lists and filters are held as in
 * service. Commands are counted over the measured passes.
 */
export async function measureSuggestions(app: RunningApp, viewers: readonly string[], passes: number): Promise<SuggestionsResult[]> {
  const { suggestions } = app.services;
  const results: SuggestionsResult[] = [];
  for (const method of ['queries', 'aggregation'] as const) {
    for (const viewer of viewers) await suggestions.suggestBy(method, viewer, 10);
    const latencies: number[] = [];
    const counts = await countCommands(app.database.client as MongoClient, async () => {
      for (let pass = 0; pass < passes; pass++) {
        for (const viewer of viewers) {
          const started = performance.now();
          await suggestions.suggestBy(method, viewer, 10);
          latencies.push(performance.now() - started);
        }
      }
    });
    const commands = Object.values(counts).reduce((sum, count) => sum + count, 0);
    results.push({ method, served: suggestions.served === method, answers: latencies.length, latency: summarize(latencies), commandsPerAnswer: commands / latencies.length });
  }
  return results;
}

const ms = (x: number) => (Number.isNaN(x) ? '–' : x < 10 ? x.toFixed(1) : x.toFixed(0));
const per = (x: number) => (x < 10 ? x.toFixed(1) : x.toFixed(0));

export function listPageTable(result: ListPageResult): string[] {
  return [
    '| list page | first page p50 / p99 ms | first page req/s | scroll p50 / p99 ms | scroll req/s | commands / page (first, scroll) | first-page commands by collection |',
    '|---|--:|--:|--:|--:|--:|---|',
    `| ${result.members.toLocaleString('en-US')} members | ${ms(result.firstPage.latency.p50)} / ${ms(result.firstPage.latency.p99)} | ` +
      `${Math.round(result.firstPage.requestsPerSecond)} | ${ms(result.scroll.latency.p50)} / ${ms(result.scroll.latency.p99)} | ` +
      `${Math.round(result.scroll.requestsPerSecond)} | ${per(result.commandsPerPage.firstPage)}, ${per(result.commandsPerPage.scroll)} | ` +
      `${Object.entries(result.firstPageCommands).map(([name, count]) => `${name} ${per(count)}`).join(', ')} |`,
  ];
}

export function suggestionsTable(results: readonly SuggestionsResult[], viewers: string): string[] {
  return [
    '| suggestedFollows(first: 10) | viewers | answers | p50 / p99 ms | commands / answer |',
    '|---|---|--:|--:|--:|',
    ...results.map(
      (result) =>
        `| ${result.method === 'queries' ? 'a query, counted in process' : 'one aggregation'}${result.served ? ' (served)' : ''} | ${viewers} | ` +
        `${result.answers} | ${ms(result.latency.p50)} / ${ms(result.latency.p99)} | ${per(result.commandsPerAnswer)} |`,
    ),
  ];
}
