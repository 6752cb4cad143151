import type { ChildProcess } from 'node:child_process';
import { ObjectId } from 'mongodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaDocument } from '../../src/records/media.js';
import { jpeg, png } from '../support/images.js';
import { startServerProcess, stopped } from '../support/serverProcess.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { upload, uploaded } from '../support/uploads.js';
import { apiMediaId, internalHex, internalId } from '../support/ids.js';

/**
 * A server process killed with SIGKILL in the middle of uploads and of deletions of posts with
 * images: whatever it left is invisible (no URL answers, nothing can be attached), every byte it
 * wrote is named by a `media` document, and the sweep deletes all of it. Time is made to pass by
 * moving the recorded times back, as the sweep would see them minutes later.
 */
describe('a crash in the middle of uploads and deletions', () => {
  let app: TestApp;
  let server: { child: ChildProcess; url: string } | null = null;
  let token: string;

  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_UPLOADS_PER_HOUR: '100000' });
    token = await app.signUp('ada');
  });
  afterAll(async () => {
    if (server) await stopped(server.child, 'SIGKILL');
    await app?.stop();
  });

  const startServer = async () =>
    (server = await startServerProcess({
      MONGODB_URI: app.mongodbUri,
      JWT_SECRET: 'test-secret-that-is-at-least-32-characters',
      FANOUT_WORKERS: '0',
      RATE_LIMIT_UPLOADS_PER_HOUR: '100000',
      RATE_LIMIT_POSTS_PER_MINUTE: '100000',
    }));

  const media = () => app.services.media.media;
  const files = () => app.database.db.collection<{ _id: ObjectId; length: number }>('media_bytes.files');
  const chunks = () => app.database.db.collection<{ files_id: ObjectId; n: number; data: { length(): number; buffer: Uint8Array } }>('media_bytes.chunks');

  /** Every file and chunk is named by a media document, and every ready image has all its bytes. */
  async function assertNoUnnamedBytes(): Promise<MediaDocument[]> {
    const docs = await media().find({}).toArray();
    const named = new Set(docs.flatMap((doc) => [doc.variants.full.file, doc.variants.preview.file]).map((id) => id.toHexString()));
    for (const file of await files().find({}).toArray()) expect(named.has(file._id.toHexString())).toBe(true);
    for (const fileId of await chunks().distinct('files_id')) expect(named.has((fileId as ObjectId).toHexString())).toBe(true);
    for (const doc of docs.filter((each) => each.state === 'ready')) {
      for (const variant of [doc.variants.full, doc.variants.preview]) {
        const stored = await chunks().find({ files_id: variant.file }).sort({ n: 1 }).toArray();
        expect(stored.reduce((sum, chunk) => sum + chunk.data.buffer.length, 0)).toBe(variant.bytes);
      }
    }
    return docs;
  }

  /** What no one can see: no URL of it answers, and it cannot be attached. */
  async function assertInvisible(doc: MediaDocument): Promise<void> {
    const url = new URL(app.url).origin + app.services.media.urls.sign(doc._id, 'full').path;
    expect((await fetch(url)).status).toBe(404);
    if (!doc.post) {
      const attach = await app.gql('mutation($media: [ID!]) { createPost(text: "x", media: $media) { id } }', { media: [apiMediaId(doc._id)] }, token);
      expect(attach.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
    }
  }

  /** Runs the sweep, as the workers do every few seconds, until `done` holds. */
  async function sweepUntil(done: () => Promise<boolean>): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!(await done())) {
      if (Date.now() > deadline) throw new Error('the sweep did not finish');
      await app.services.feed.repairStalled();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  const minutesAgo = (minutes: number) => new Date(Date.now() - minutes * 60_000);

  it('leaves an upload killed mid-way invisible, and the sweep deletes its bytes', async () => {
    await startServer();
    const photo = await jpeg(2400, 1800, 95);
    const origin = new URL(server!.url).origin;
    const sending = Array.from({ length: 8 }, () => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(photo)]), 'photo.jpg');
      return fetch(`${origin}/media`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: form }).then(
        (response) => response.status,
        () => 'died with the process',
      );
    });
    // Killed once bytes are being written, with uploads under way.
    while ((await media().countDocuments({ state: 'storing' })) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await stopped(server!.child, 'SIGKILL');
    server = null;
    const outcomes = await Promise.all(sending);
    expect(outcomes).toContain('died with the process');

    const left = await assertNoUnnamedBytes();
    const storing = left.filter((doc) => doc.state === 'storing');
    expect(storing.length).toBeGreaterThan(0);
    for (const doc of storing) await assertInvisible(doc);

    await media().updateMany({ state: 'storing' }, { $set: { at: minutesAgo(10) } });
    await sweepUntil(async () => (await media().countDocuments({ state: 'storing' })) === 0);
    const ready = await assertNoUnnamedBytes();
    expect(await files().countDocuments({})).toBe(ready.length * 2);
  });

  it('leaves the images of posts killed mid-deletion unanswered, and the sweep deletes them', async () => {
    const posts: string[] = [];
    for (let i = 0; i < 8; i++) {
      const ids = await Promise.all([1, 2, 3, 4].map(async () => uploaded(app, token, await png(200, 150))));
      posts.push((await app.gql('mutation($media: [ID!]) { createPost(text: "going", media: $media) { id } }', { media: ids }, token)).data.createPost.id);
    }
    await startServer();
    const url = server!.url;
    const deleting = posts.map((id) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: `mutation { deletePost(id: "${id}") }` }),
      }).then(
        (response) => response.status,
        () => 'died with the process',
      ),
    );
    while ((await media().countDocuments({ state: 'gone' })) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await stopped(server!.child, 'SIGKILL');
    server = null;
    await Promise.all(deleting);

    const left = await assertNoUnnamedBytes();
    for (const doc of left.filter((each) => each.state === 'gone')) await assertInvisible(doc);
    // A deleted post's images never answer; one whose deletion began answers no more.
    const stored = await app.services.content.lookups.existing(posts.map((id) => internalId(id)));
    for (const doc of left.filter((each) => each.post && !stored.has(each.post.toHexString()))) expect(doc.state).toBe('gone');

    await media().updateMany({ state: 'gone' }, { $set: { goneAt: minutesAgo(10) } });
    await sweepUntil(async () => (await media().countDocuments({ state: 'gone' })) === 0);
    await assertNoUnnamedBytes();
    // What the kill left undone, the author finishes by deleting again.
    for (const id of posts.filter((post) => stored.has(internalHex(post)))) {
      const again = await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id }, token);
      expect(again.errors).toBeUndefined();
    }
    expect(await media().countDocuments({ post: { $exists: true } })).toBe(0);
  });

  it('leaves every image claimed by posts killed mid-way either on its stored post or, after the sweep, free to attach again', async () => {
    const ids = await Promise.all(Array.from({ length: 12 }, async () => uploaded(app, token, await png(60, 40))));
    await startServer();
    const url = server!.url;
    const posting = ids.map((id, i) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ query: `mutation { createPost(text: "attach ${i}", media: ["${id}"]) { id } }` }),
      }).then(
        (response) => response.status,
        () => 'died with the process',
      ),
    );
    const claimed = () => media().countDocuments({ _id: { $in: ids.map((id) => internalId(id)) }, post: { $exists: true } });
    while ((await claimed()) === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    await stopped(server!.child, 'SIGKILL');
    server = null;
    await Promise.all(posting);

    await assertNoUnnamedBytes();
    await media().updateMany({ claimedAt: { $exists: true } }, { $set: { claimedAt: minutesAgo(5) } });
    await sweepUntil(async () => (await media().countDocuments({ claimedAt: { $exists: true } })) === 0);
    const docs = await media().find({ _id: { $in: ids.map((id) => internalId(id)) } }).toArray();
    expect(docs).toHaveLength(ids.length);
    const stored = await app.services.content.lookups.getPosts(docs.flatMap((doc) => (doc.post ? [doc.post] : [])));
    for (const doc of docs) {
      if (doc.post) {
        // Attached: its post exists and shows it.
        const post = stored.find((each) => each.id.equals(doc.post!));
        expect(post?.body.media.map((image) => image.id.toHexString())).toEqual([doc._id.toHexString()]);
      } else {
        // Given back: its owner attaches it again.
        const again = await app.gql('mutation($media: [ID!]) { createPost(text: "again", media: $media) { id } }', { media: [apiMediaId(doc._id)] }, token);
        expect(again.errors).toBeUndefined();
      }
    }
  });

  it('gives back images claimed by a post whose request died before storing it', async () => {
    const { body } = await upload(app, token, await jpeg());
    // The state a kill between the claim and the post's insert leaves.
    await app.services.media.claim('ada', [internalHex(body.id)], new ObjectId());
    const attach = await app.gql('mutation($media: [ID!]) { createPost(text: "mine", media: $media) { id } }', { media: [body.id] }, token);
    expect(attach.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    await media().updateMany({ claimedAt: { $exists: true } }, { $set: { claimedAt: minutesAgo(5) } });
    await sweepUntil(async () => (await media().countDocuments({ claimedAt: { $exists: true } })) === 0);
    const retry = await app.gql('mutation($media: [ID!]) { createPost(text: "mine", media: $media) { id } }', { media: [body.id] }, token);
    expect(retry.errors).toBeUndefined();
  });
});
