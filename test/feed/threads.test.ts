import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { feedStrategies, timelineContentModes } from '../../src/config.js';
import { follow } from '../live/liveClient.js';
import { internalHex } from '../support/ids.js';
import { requestCommands, startTestApp, type TestApp } from '../support/testApp.js';

/**
 * Threads read `content` alone (the reply tree is the same in every timeline strategy and content
 * mode), so one strategy stands for all here.
 */
interface Node {
  id: string;
  parent: number | null;
  depth: number;
  sortKey: string;
  author: string;
  /** Followers-only: its own choice, or narrowed to its parent's. */
  limited: boolean;
}

const replyMutation = 'mutation($text: String!, $replyTo: ID, $visibility: Visibility) { createPost(text: $text, replyTo: $replyTo, visibility: $visibility) { id createdAt } }';

/** A seeded pseudo-random sequence, so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

const pageQuery = `query($id: ID!, $after: String) { post(id: $id) { descendants(first: 50, after: $after) {
  edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } }`;

describe('threads', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};
  const nodes: Node[] = [];
  const authors = ['ada', 'bea', 'cal', 'dan'];

  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_POSTS_PER_MINUTE: '1000000' });
    for (const handle of [...authors, 'eve']) tokens[handle] = await app.signUp(handle);
    // eve reads: she blocked dan, and follows nobody, so followers-only replies are hidden from her.
    await app.gql('mutation { block(handle: "dan") { handle } }', {}, tokens.eve);
    await follow(app, tokens.ada!, 'bea');
  }, 60_000);
  afterAll(() => app?.stop());

  async function reply(author: string, parent: number | null, visibility = 'PUBLIC'): Promise<Node> {
    const replyTo = parent === null ? null : nodes[parent]!.id;
    const answer = await app.gql(replyMutation, { text: `by ${author}`, replyTo, visibility }, tokens[author]);
    expect(answer.errors).toBeUndefined();
    const { id, createdAt } = answer.data.createPost;
    const segment = Date.parse(createdAt).toString(16).padStart(11, '0') + internalHex(id);
    const above = parent === null ? null : nodes[parent]!;
    const node: Node = {
      id,
      parent,
      depth: above ? above.depth + 1 : 0,
      sortKey: above ? above.sortKey + segment : '',
      author,
      limited: (above?.limited ?? false) || visibility === 'FOLLOWERS',
    };
    nodes.push(node);
    return node;
  }

  it('pages a 2,000-reply thread 30 levels deep in reading order, every visible reply once, no page short, one query a page', async () => {
    const next = random(38);
    await reply('ada', null);
    // A spine 30 levels deep, then replies anywhere above depth 30, twenty at a time.
    for (let depth = 1; depth <= 30; depth++) await reply(authors[depth % 3]!, depth - 1);
    while (nodes.length < 2001) {
      const known = nodes.length;
      const batch = Math.min(20, 2001 - known);
      await Promise.all(
        Array.from({ length: batch }, () => {
          let parent = Math.floor(next() * known);
          while (nodes[parent]!.depth >= 30) parent = nodes[parent]!.parent!;
          const roll = next();
          // Only its author (and followers) may see a followers-only post: its author answers it.
          const author = nodes[parent]!.limited ? nodes[parent]!.author : roll < 0.05 ? 'dan' : authors[Math.floor(next() * 3)]!;
          return reply(author, parent, roll > 0.97 ? 'FOLLOWERS' : 'PUBLIC');
        }),
      );
    }
    expect(Math.max(...nodes.map((node) => node.depth))).toBe(30);

    const readAll = async (viewer: string, rootIndex: number, during?: (pageIndex: number) => Promise<void>) => {
      const seen: string[] = [];
      let after: string | null = null;
      for (let pageIndex = 0; ; pageIndex++) {
        let answer: any;
        const commands = await app.commandsDuring(async () => {
          answer = await app.gql(pageQuery, { id: nodes[rootIndex]!.id, after }, tokens[viewer]);
        });
        expect(answer.errors).toBeUndefined();
        const contentReads = requestCommands(commands).filter((command) => (command.command.find ?? command.command.aggregate) === 'content');
        expect(contentReads.length).toBeLessThanOrEqual(2);
        const page = answer.data.post.descendants;
        if (page.pageInfo.hasNextPage) expect(page.edges).toHaveLength(50);
        seen.push(...page.edges.map((edge: any) => edge.node.id));
        if (!page.pageInfo.hasNextPage) return seen;
        after = page.pageInfo.endCursor;
        await during?.(pageIndex);
      }
    };

    // eve blocked dan and follows nobody; ada follows bea. Each reply is judged on its own.
    const sees = (viewer: string, node: Node) =>
      viewer === 'eve' ? node.author !== 'dan' && !node.limited : !node.limited || node.author === viewer || node.author === 'bea';
    const expectedFor = (viewer: string, rootIndex: number) => {
      const root = nodes[rootIndex]!;
      return nodes
        .filter((node) => node.sortKey.startsWith(root.sortKey) && node.sortKey.length > root.sortKey.length && sees(viewer, node))
        .sort((a, b) => (a.sortKey < b.sortKey ? -1 : 1))
        .map((node) => node.id);
    };
    expect(nodes.filter((node) => node.limited).length).toBeGreaterThan(10);
    // The replies' notifications are written by the workers: measure pages once they are done.
    await app.settled();
    expect(await readAll('ada', 0)).toEqual(expectedFor('ada', 0));
    expect(await readAll('eve', 0)).toEqual(expectedFor('eve', 0));
    // Below a post deep in the thread: only its subtree.
    const middle = 5;
    const below = await readAll('eve', middle);
    expect(below).toEqual(expectedFor('eve', middle));
    expect(below.length).toBeGreaterThan(0);

    // Replies arriving while someone pages: nothing seen twice, nothing behind the cursor skipped.
    const before = expectedFor('eve', 0);
    const seen = await readAll('eve', 0, async (pageIndex) => {
      if (pageIndex >= 5) return;
      let parent = Math.floor(next() * 2000);
      while (nodes[parent]!.limited || nodes[parent]!.author === 'dan') parent = nodes[parent]!.parent!;
      await reply('ada', parent);
      await app.settled();
    });
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
    const positions = seen.map((id) => nodes.find((node) => node.id === id)!.sortKey);
    expect([...positions].sort()).toEqual(positions);
  }, 300_000);

  it('pages descendants backwards too: last/before gives the replies just before a cursor, in reading order', async () => {
    const root = (await app.gql(replyMutation, { text: 'a small thread', replyTo: null }, tokens.ada)).data.createPost.id;
    const ids: string[] = [];
    let parent = root;
    for (let index = 0; index < 7; index++) {
      const answer = await app.gql(replyMutation, { text: `step ${index}`, replyTo: index % 2 === 0 ? parent : root }, tokens.bea);
      ids.push(answer.data.createPost.id);
      if (index % 2 === 0) parent = answer.data.createPost.id;
    }
    const page = (variables: Record<string, unknown>) =>
      app.gql('query($id: ID!, $first: Int, $after: String, $last: Int, $before: String) { post(id: $id) { descendants(first: $first, after: $after, last: $last, before: $before) { edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage } } } }', { id: root, ...variables }, tokens.ada);
    const forward = (await page({ first: 50 })).data.post.descendants.edges;
    expect(forward).toHaveLength(7);
    const back: string[] = [];
    let before: string | null = null;
    for (;;) {
      const current: any = (await page({ last: 3, before })).data.post.descendants;
      back.unshift(...current.edges.map((edge: any) => edge.node.id));
      if (!current.pageInfo.hasPreviousPage) break;
      expect(current.edges).toHaveLength(3);
      before = current.edges[0].cursor;
    }
    expect(back).toEqual(forward.map((edge: any) => edge.node.id));
    expect((await page({ first: 2, last: 2 })).errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
  });

  it('answers ancestors root first in one read, ended by a hidden or deleted one', async () => {
    const chain: string[] = [];
    let parent: string | null = null;
    for (const author of ['ada', 'bea', 'dan', 'cal', 'ada']) {
      const answer: any = await app.gql(replyMutation, { text: 'chain', replyTo: parent }, tokens[author]);
      parent = answer.data.createPost.id;
      chain.push(parent!);
    }
    await app.settled();
    const ancestors = async (viewer: string) => {
      let answer: any;
      const commands = await app.commandsDuring(async () => {
        answer = await app.gql('query($id: ID!) { post(id: $id) { ancestors { id } } }', { id: chain.at(-1) }, tokens[viewer]);
      });
      const contentReads = requestCommands(commands).filter((command) => command.command.find === 'content');
      // The post itself, then its whole chain in one read.
      expect(contentReads.map((command) => JSON.stringify(command.command.filter)).length, JSON.stringify(contentReads.map((command) => command.command.filter))).toBeLessThanOrEqual(2);
      return answer.data.post.ancestors.map((post: any) => post.id);
    };
    expect(await ancestors('ada')).toEqual(chain.slice(0, 4));
    // eve blocked dan: the chain ends below him.
    expect(await ancestors('eve')).toEqual(chain.slice(3, 4));
    await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: chain[1] }, tokens.bea);
    await app.settled();
    expect(await ancestors('ada')).toEqual(chain.slice(2, 4));
  });
});

/** The same thread read in every strategy and content mode: threads read `content`, never a timeline, so all agree. */
describe.each(feedStrategies.flatMap((strategy) => timelineContentModes.map((content) => ({ strategy, content }))))(
  'a thread: FEED_STRATEGY=$strategy TIMELINE_CONTENT=$content',
  ({ strategy, content }) => {
    let app: TestApp;
    const tokens: Record<string, string> = {};

    beforeAll(async () => {
      app = await startTestApp({ FEED_STRATEGY: strategy, TIMELINE_CONTENT: content, RATE_LIMIT_POSTS_PER_MINUTE: '100000' });
      for (const handle of ['ada', 'bea', 'eve']) tokens[handle] = await app.signUp(handle);
      await app.gql('mutation { block(handle: "bea") { handle } }', {}, tokens.eve);
    });
    afterAll(() => app?.stop());

    it('pages the reply tree in reading order, full pages, what the reader may see only', async () => {
      const ids: { id: string; parent: number; author: string }[] = [];
      const root = (await app.gql(replyMutation, { text: 'root', replyTo: null }, tokens.ada)).data.createPost.id;
      const idOf = (index: number) => (index < 0 ? root : ids[index]!.id);
      for (let index = 0; index < 30; index++) {
        const parent = index < 3 ? index - 1 : (index * 7) % index;
        const author = index % 4 === 3 ? 'bea' : 'ada';
        const answer = await app.gql(replyMutation, { text: `reply ${index}`, replyTo: idOf(parent) }, tokens[author]);
        ids.push({ id: answer.data.createPost.id, parent, author });
      }
      await app.settled();
      // The oracle: depth first from the root, each level in the order replies were made.
      const order: string[] = [];
      const walk = (parent: number) => {
        ids.forEach((reply, index) => {
          if (reply.parent !== parent) return;
          order.push(reply.id);
          walk(index);
        });
      };
      walk(-1);
      const read = async (viewer: string) => {
        const seen: string[] = [];
        let after: string | null = null;
        for (;;) {
          const answer: any = await app.gql(pageQuery.replace('first: 50', 'first: 4'), { id: root, after }, tokens[viewer]);
          const page = answer.data.post.descendants;
          if (page.pageInfo.hasNextPage) expect(page.edges).toHaveLength(4);
          seen.push(...page.edges.map((edge: any) => edge.node.id));
          if (!page.pageInfo.hasNextPage) return seen;
          after = page.pageInfo.endCursor;
        }
      };
      expect(await read('ada')).toEqual(order);
      const hidden = new Set(ids.filter((reply) => reply.author === 'bea').map((reply) => reply.id));
      expect(await read('eve')).toEqual(order.filter((id) => !hidden.has(id)));
      const deepest = ids.at(-1)!.id;
      const chain = (await app.gql('query($id: ID!) { post(id: $id) { ancestors { id } } }', { id: deepest }, tokens.ada)).data.post.ancestors.map((post: any) => post.id);
      expect(chain[0]).toBe(root);
    });
  },
);

/** Replies written before replies kept their thread place: the next start places them, and the thread shows them. */
describe('a database from before threads, started again', () => {
  let old: TestApp;
  let upgraded: TestApp;
  const tokens: Record<string, string> = {};
  const ids: string[] = [];

  beforeAll(async () => {
    old = await startTestApp({ FANOUT_WORKERS: '0' });
    for (const handle of ['ada', 'bea']) tokens[handle] = await old.signUp(handle);
    let parent: string | null = null;
    for (let index = 0; index < 5; index++) {
      const answer: any = await old.gql(replyMutation, { text: `old ${index}`, replyTo: index === 3 ? ids[0] : parent }, tokens[index % 2 ? 'bea' : 'ada']);
      ids.push(answer.data.createPost.id);
      if (index !== 3) parent = answer.data.createPost.id;
    }
    // As the old code stored them: no thread place, and the migration not yet run.
    await old.database.db.collection('content').updateMany({}, { $unset: { _rt: '', _an: '', _tk: '' } });
    await old.database.db.collection('migrations').deleteMany({ _id: 'thread-places' as never });
    upgraded = await startTestApp({ MONGODB_URI: old.mongodbUri, FANOUT_WORKERS: '0' });
  }, 60_000);
  afterAll(async () => {
    await upgraded?.stop();
    await old?.stop();
  });

  it('places every reply: descendants in reading order, ancestors root first', async () => {
    expect(await upgraded.database.db.collection('content').countDocuments({ '_r._id': { $exists: true }, _rt: { $exists: false } })).toBe(0);
    const below = await upgraded.gql(pageQuery, { id: ids[0], after: null }, tokens.ada);
    // ids: 0 ← 1 ← 2 ← 4, and 3 answers 0 later than 1: depth first, 1's subtree before 3.
    expect(below.data.post.descendants.edges.map((edge: any) => edge.node.id)).toEqual([ids[1], ids[2], ids[4], ids[3]]);
    const above = await upgraded.gql('query($id: ID!) { post(id: $id) { ancestors { id } } }', { id: ids[4] }, tokens.ada);
    expect(above.data.post.ancestors.map((post: any) => post.id)).toEqual([ids[0], ids[1], ids[2]]);
  });
});
