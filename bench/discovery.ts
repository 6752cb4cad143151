/**
 * `npm run bench:discovery`: tag pages and post searches over a large `content` (default 1,000,000
 * posts by 10,000 authors: Latin words drawn Zipf-like from 5,000, one post in five Chinese, three
 * in ten with one to three of 500 tags), each page asked `--answers` times through the API, one
 * at a time; and `createPost`'s cost with and without the discovery index and its trend counting.
 * Markdown to stdout. See docs/discovery.md.
 */
import { parseArgs } from 'node:util';
import type { CommandStartedEvent } from 'mongodb';
import { startApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { discoveryIndex } from '../src/content/discoveryScans.js';
import { connectDatabase, withDatabaseName } from '../src/db/connect.js';
import { quietLogger } from '../src/logger.js';
import { newBody, newPostId, toStoredPost } from '../src/records/posts.js';
import { seededRandom } from './generate.js';
import { summarize } from './measure.js';
import { benchDatabaseServer } from './prepare.js';

const { values } = parseArgs({ options: { posts: { type: 'string' }, authors: { type: 'string' }, answers: { type: 'string' } } });
const postCount = Number(values.posts ?? 1_000_000);
const authorCount = Number(values.authors ?? 10_000);
const answers = Number(values.answers ?? 50);

const random = seededRandom(7);
const zipf = (n: number) => Math.floor(random() ** 3 * n);
const syllables = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ze', 'pa', 'qu', 'do'];
const words = Array.from({ length: 5000 }, (_, i) => syllables[i % 12]! + syllables[Math.floor(i / 12) % 12]! + syllables[Math.floor(i / 144) % 12]! + (i >= 1728 ? syllables[Math.floor(i / 1728) % 12]! : ''));
const hanzi = '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处队南给色光门即保治北造百规热领七海口东导器压志世金增争济阶油思术极交受联什认六共权收证改清己美再采转更单风切打白教速花带安场身车例真务具万每目至达走积示议声报斗完类八离华名确才科张信马节话米整空元况今集温传土许步群广石记需段研界拉林律叫且究观越织装影算低持音众书布复容儿须际商非验连断深难近矿千周委素技备半办青省列习响约支般史感劳便团往酸历市克何除消构府称太准精值号率族维划选标写存候毛亲快效斯院查江型眼王按格养易置派层片始却专状育厂京识适属圆包火住调满县局照参红细引听该铁价严';
const chineseText = () => Array.from({ length: 20 + zipf(60) }, () => hanzi[zipf(hanzi.length)]).join('');
const tags = Array.from({ length: 500 }, (_, i) => `topic${i}`);

function postText(): string {
  const text = random() < 0.2 ? chineseText() : Array.from({ length: 6 + Math.floor(random() * 20) }, () => words[zipf(words.length)]).join(' ');
  if (random() >= 0.3) return text;
  const count = 1 + Math.floor(random() * 3);
  return `${text} ${Array.from({ length: count }, () => `#${tags[zipf(tags.length)]}`).join(' ')}`;
}

const server = await benchDatabaseServer();
const uri = withDatabaseName(server.uri, `feed_bench_discovery_${Date.now().toString(36)}`);
const database = await connectDatabase(uri);
try {
  const db = database.db;
  const handles = Array.from({ length: authorCount }, (_, i) => `author_${i}`);
  const now = Date.now();
  await db.collection('users').insertMany(
    handles.map((handle) => ({ _id: handle as never, accountId: handle, displayName: null, passwordHash: '-', createdAt: new Date(now), followerCount: 0, followingCount: 0 })),
  );
  const config = loadConfig({ PORT: '0', JWT_SECRET: 'bench-secret-that-is-at-least-32-characters', LIVE_EVENTS: 'local', FANOUT_WORKERS: '0' });
  const app = await startApp(config, { mongodbUri: uri, logger: quietLogger, mongoClientOptions: { monitorCommands: true } });
  try {
    const content = app.services.content.content;
    console.error(`loading ${postCount.toLocaleString('en-US')} posts…`);
    const loadStarted = performance.now();
    for (let done = 0; done < postCount; ) {
      const batch = Array.from({ length: Math.min(5000, postCount - done) }, (_, i) => {
        const authorId = handles[zipf(handles.length)]!;
        const createdAt = new Date(now - (postCount - done - i) * 1000);
        return toStoredPost({ id: newPostId(authorId), authorId, createdAt, pulled: false, replyTo: null, repostOf: null, body: newBody(postText()) });
      });
      await content.insertMany(batch, { ordered: false });
      done += batch.length;
      if (done % 100_000 === 0) console.error(`  ${done.toLocaleString('en-US')} (${((performance.now() - loadStarted) / 1000).toFixed(0)} s)`);
    }

    const token = (await gql('mutation { signUp(handle: "bench_reader", password: "correct horse battery") { token } }')).signUp.token as string;
    async function gql(query: string, variables: Record<string, unknown> = {}, bearer?: string) {
      const response = await fetch(app.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(bearer ? { authorization: `Bearer ${bearer}` } : {}) },
        body: JSON.stringify({ query, variables }),
      });
      const result = (await response.json()) as { data?: any; errors?: unknown };
      if (result.errors) throw new Error(JSON.stringify(result.errors));
      return result.data;
    }
    const page = 'edges { cursor node { id text author { handle } } } pageInfo { hasNextPage endCursor }';
    const cases: { label: string; query: string; variables: Record<string, unknown> }[] = [
      { label: 'tagTimeline, most used tag', query: `query($t: String!) { tagTimeline(tag: $t, first: 20) { ${page} } }`, variables: { t: tags[0] } },
      { label: 'tagTimeline, a rare tag', query: `query($t: String!) { tagTimeline(tag: $t, first: 20) { ${page} } }`, variables: { t: tags[499] } },
      { label: 'searchPosts, a common word', query: `query($q: String!) { searchPosts(query: $q, first: 20) { ${page} } }`, variables: { q: words[0] } },
      { label: 'searchPosts, a rare word', query: `query($q: String!) { searchPosts(query: $q, first: 20) { ${page} } }`, variables: { q: words[4000] } },
      { label: 'searchPosts, two common words', query: `query($q: String!) { searchPosts(query: $q, first: 20) { ${page} } }`, variables: { q: `${words[0]} ${words[1]}` } },
      { label: 'searchPosts, two Chinese characters', query: `query($q: String!) { searchPosts(query: $q, first: 20) { ${page} } }`, variables: { q: hanzi.slice(0, 2) } },
    ];
    const commands: CommandStartedEvent[] = [];
    app.database.client.on('commandStarted', (event) => commands.push(event));
    console.log(`## Discovery, ${new Date().toISOString().slice(0, 10)}: ${postCount.toLocaleString('en-US')} posts by ${authorCount.toLocaleString('en-US')} authors, ${server.description}\n`);
    console.log('| page (20 posts, signed in) | found | p50 ms | p99 ms | content queries per page |');
    console.log('|---|---:|---:|---:|---:|');
    for (const { label, query, variables } of cases) {
      const samples: number[] = [];
      let found = 0;
      commands.length = 0;
      for (let i = 0; i < answers; i++) {
        const started = performance.now();
        const data = await gql(query, variables, token);
        samples.push(performance.now() - started);
        found = (Object.values(data)[0] as { edges: unknown[] }).edges.length;
      }
      const queries = commands.filter((command) => command.commandName === 'find' && command.command.find === 'content').length / answers;
      const { p50, p99 } = summarize(samples);
      console.log(`| ${label} | ${found} | ${p50.toFixed(1)} | ${p99.toFixed(1)} | ${queries.toFixed(1)} |`);
    }

    // createPost: commands and latency of an untagged and a tagged post, with the discovery index and without it.
    const writer = (await gql('mutation { signUp(handle: "bench_writer", password: "correct horse battery") { token } }')).signUp.token as string;
    const posting = async (text: string) => {
      const samples: number[] = [];
      commands.length = 0;
      for (let i = 0; i < answers; i++) {
        const started = performance.now();
        await gql('mutation($text: String!) { createPost(text: $text) { id } }', { text: `${text} ${i}` }, writer);
        samples.push(performance.now() - started);
      }
      return { p50: summarize(samples).p50, commands: commands.filter((command) => command.commandName !== 'getMore').length / answers };
    };
    const latin = words.slice(0, 40).join(' ');
    const chinese = hanzi.slice(0, 200);
    const rows: string[] = [];
    for (const indexed of [true, false]) {
      if (!indexed) await content.dropIndex(discoveryIndex);
      for (const [label, text] of [
        ['40 words, no tag', latin],
        ['200 Chinese characters, no tag', chinese],
        ['40 words, 2 tags', `${latin} #${tags[0]} #${tags[1]}`],
      ] as const) {
        const { p50, commands: perPost } = await posting(text);
        rows.push(`| ${indexed ? 'with' : 'without'} the discovery index | ${label} | ${perPost.toFixed(1)} | ${p50.toFixed(1)} |`);
      }
    }
    console.log('\n| createPost (fanout on read, rate limit on) | text | commands | p50 ms |');
    console.log('|---|---|---:|---:|');
    console.log(rows.join('\n'));
  } finally {
    await app.stop();
  }
} finally {
  await database.db.dropDatabase().catch(() => {});
  await database.close();
  await server.stop();
}
