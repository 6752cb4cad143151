import { request as httpRequest } from 'node:http';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gif, jpeg, png, pngBomb, webp, withGpsExif } from '../support/images.js';
import { startTestApp, type TestApp } from '../support/testApp.js';
import { mediaFields, originOf, upload, uploaded } from '../support/uploads.js';
import { liveClient, subscribePostAdded, subscriptionsOpen } from '../live/liveClient.js';
import { internalId } from '../support/ids.js';

describe('uploading images', () => {
  let app: TestApp;
  let ada: string;
  let bea: string;

  beforeAll(async () => {
    app = await startTestApp({ MEDIA_MAX_BYTES: String(2 * 1024 * 1024), MEDIA_MAX_PIXELS: '20000000' });
    ada = await app.signUp('ada');
    bea = await app.signUp('bea');
  });
  afterAll(() => app?.stop());

  it('answers 201 with the stored image: its size upright, alt text, signed URLs and a blurhash', async () => {
    const answer = await upload(app, ada, await withGpsExif(await jpeg(300, 200)), { alt: '  A red square  ' });
    expect(answer.status).toBe(201);
    expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      id: expect.stringMatching(/^[A-Za-z0-9_-]+$/),
      kind: 'IMAGE',
      alt: 'A red square',
      width: 200,
      height: 300,
      url: expect.stringMatching(new RegExp(`^${originOf(app)}/media/[0-9a-f]{24}/full\\?e=\\d+&s=[\\w-]{22}$`)),
      previewUrl: expect.stringMatching(new RegExp(`^${originOf(app)}/media/[0-9a-f]{24}/preview\\?`)),
      blurhash: expect.any(String),
    });
    const none = await upload(app, ada, await png());
    expect(none.body.alt).toBeNull();
  });

  it('serves a photo without its GPS position, EXIF, XMP or comment', async () => {
    const { body } = await upload(app, ada, await withGpsExif());
    for (const url of [body.url, body.previewUrl]) {
      const bytes = Buffer.from(await (await fetch(url)).arrayBuffer());
      const metadata = await sharp(bytes).metadata();
      expect(metadata.exif).toBeUndefined();
      expect(metadata.xmp).toBeUndefined();
      expect(bytes.includes(Buffer.from('Exif', 'latin1'))).toBe(false);
      expect(bytes.includes(Buffer.from('Rue Example', 'latin1'))).toBe(false);
    }
  });

  it('accepts JPEG, PNG, WebP and GIF whatever they are called, and refuses anything else by its content', async () => {
    for (const image of [await jpeg(), await png(), await webp(), await gif()]) {
      expect((await upload(app, ada, image, { filename: 'file.bin', type: 'application/octet-stream' })).status).toBe(201);
    }
    const refusals = [
      { data: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), filename: 'cat.svg', type: 'image/svg+xml' },
      { data: Buffer.from('<html><script>alert(1)</script></html>'), filename: 'cat.jpg', type: 'image/jpeg' },
      { data: Buffer.from('%PDF-1.7\n%...'), filename: 'cat.png', type: 'image/png' },
      { data: Buffer.from('hello, I am text'), filename: 'cat.jpg', type: 'image/jpeg' },
    ];
    for (const { data, filename, type } of refusals) {
      const answer = await upload(app, ada, data, { filename, type });
      expect(answer.status).toBe(415);
      expect(answer.body.errors[0].extensions.code).toBe('UNSUPPORTED_MEDIA_TYPE');
      expect(answer.body.errors[0].message).toMatch(/JPEG, PNG, WebP and GIF/);
    }
    const whole = await jpeg(400, 300);
    const truncated = await upload(app, ada, whole.subarray(0, whole.length / 2));
    expect([truncated.status, truncated.body.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
    const empty = await upload(app, ada, Buffer.alloc(0));
    expect([empty.status, empty.body.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
    const misnamed = await upload(app, ada, await jpeg(), { part: 'image' });
    expect([misnamed.status, misnamed.body.errors[0].extensions.code]).toEqual([400, 'BAD_USER_INPUT']);
  });

  it('refuses a decompression bomb with 413, from its header', async () => {
    const answer = await upload(app, ada, pngBomb(50_000, 50_000), { filename: 'small.png' });
    expect(answer.status).toBe(413);
    expect(answer.body.errors[0].extensions.code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('refuses a file over MEDIA_MAX_BYTES with 413 while it is still being sent', async () => {
    const { port } = new URL(app.url);
    const boundary = 'x-boundary';
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`);
    // No Content-Length: the limit must hold while streaming, not only against a declared size.
    const answer = await new Promise<{ status: number; body: string; sentWhenAnswered: number }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const request = httpRequest(
        { port, path: '/media', method: 'POST', headers: { authorization: `Bearer ${ada}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } },
        (response) => {
          const sentWhenAnswered = sent;
          answered = true;
          let body = '';
          response.on('data', (chunk) => (body += chunk));
          response.on('end', () => {
            resolve({ status: response.statusCode!, body, sentWhenAnswered });
            request.destroy();
          });
        },
      );
      request.on('error', () => {});
      request.write(head);
      const piece = Buffer.alloc(256 * 1024, 0xff);
      const pump = () => {
        // Up to 8 MB, far past the 2 MB limit, unless the answer came first.
        if (sent >= 8 * 1024 * 1024 || request.destroyed || answered) return;
        sent += piece.length;
        // A client on a real link: a piece every 20 ms, so the whole 8 MB would take most of a second.
        if (request.write(piece)) setTimeout(pump, 20);
        else request.once('drain', () => setTimeout(pump, 20));
      };
      pump();
      setTimeout(() => reject(new Error('no answer')), 10_000);
    });
    // Status and body together, so that a failure says what came instead.
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 413, body: expect.stringContaining('"PAYLOAD_TOO_LARGE"') });
    expect(answer.sentWhenAnswered).toBeLessThan(8 * 1024 * 1024);
  });

  it('answers 401 without a valid token', async () => {
    const answer = await upload(app, null, await jpeg());
    expect([answer.status, answer.body.errors[0].extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
    const forged = await upload(app, 'not-a-token', await jpeg());
    expect([forged.status, forged.body.errors[0].extensions.code]).toEqual([401, 'UNAUTHENTICATED']);
  });

  it('serves each URL with its type, length, ETag, private caching within the expiry, nosniff and a sandboxing CSP', async () => {
    const { body } = await upload(app, bea, await jpeg(800, 600));
    const response = await fetch(body.url);
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(response.headers.get('content-type')).toBe('image/jpeg');
    expect(Number(response.headers.get('content-length'))).toBe(bytes.length);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox/);
    const expiry = Number(new URL(body.url).searchParams.get('e'));
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(response.headers.get('cache-control')!)![1]);
    expect(maxAge).toBeGreaterThan(0);
    expect(Date.now() / 1000 + maxAge).toBeLessThanOrEqual(expiry + 1);
    const etag = response.headers.get('etag')!;
    expect(etag).toMatch(/^"[\w-]+"$/);
    const again = await fetch(body.url, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect((await sharp(bytes).metadata()).width).toBe(800);
    const preview = await sharp(Buffer.from(await (await fetch(body.previewUrl)).arrayBuffer())).metadata();
    expect([preview.width, preview.height]).toEqual([400, 300]);
  });

  it('answers 404, the same each time, to a tampered, expired, unsigned or made-up URL', async () => {
    const { body } = await upload(app, bea, await jpeg());
    const url = new URL(body.url);
    const tampered = new URL(url);
    tampered.searchParams.set('s', `${url.searchParams.get('s')!.slice(0, -1)}${url.searchParams.get('s')!.endsWith('A') ? 'B' : 'A'}`);
    const extended = new URL(url);
    extended.searchParams.set('e', String(Number(url.searchParams.get('e')) + 3600));
    const expired = new URL(url);
    expired.searchParams.set('e', String(Math.floor(Date.now() / 1000) - 10));
    const unsigned = `${url.origin}${url.pathname}`;
    const otherImage = body.url.replace(/\/media\/[0-9a-f]{24}\//, '/media/0123456789abcdef01234567/');
    const otherVariant = body.url.replace('/full?', '/preview?');
    const answers = await Promise.all([tampered, extended, expired, unsigned, otherImage, otherVariant].map(async (address) => {
      const response = await fetch(address);
      return { status: response.status, body: await response.text() };
    }));
    expect(new Set(answers.map((answer) => JSON.stringify(answer)))).toEqual(new Set([JSON.stringify({ status: 404, body: '{"errors":[{"message":"Not found","extensions":{"code":"NOT_FOUND"}}]}' })]));
  });

  it('attaches up to 4 of the viewer’s own unattached uploads, in order, and shows them on the post', async () => {
    const ids = [await uploaded(app, ada, await jpeg(), 'one'), await uploaded(app, ada, await png()), await uploaded(app, ada, await webp(), 'three')];
    const created = await app.gql(`mutation($media: [ID!]) { createPost(text: "", media: $media) { id text ${mediaFields} } }`, { media: ids }, ada);
    expect(created.errors).toBeUndefined();
    expect(created.data.createPost.text).toBe('');
    expect(created.data.createPost.media.map((image: any) => [image.id, image.alt])).toEqual([[ids[0], 'one'], [ids[1], null], [ids[2], 'three']]);
    const read = await app.gql(`query($id: ID!) { post(id: $id) { ${mediaFields} } }`, { id: created.data.createPost.id }, bea);
    expect(read.data.post.media.map((image: any) => image.id)).toEqual(ids);
    expect((await fetch(read.data.post.media[0].url)).status).toBe(200);

    const again = await app.gql('mutation($media: [ID!]) { createPost(text: "again", media: $media) { id } }', { media: [ids[0]] }, ada);
    expect(again.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const other = await app.gql('mutation($media: [ID!]) { createPost(text: "mine?", media: $media) { id } }', { media: [await uploaded(app, ada, await jpeg())] }, bea);
    expect(other.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const five = await Promise.all([1, 2, 3, 4, 5].map(async () => uploaded(app, ada, await png())));
    const tooMany = await app.gql('mutation($media: [ID!]) { createPost(text: "five", media: $media) { id } }', { media: five }, ada);
    expect(tooMany.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const empty = await app.gql('mutation { createPost(text: "  ") { id } }', {}, ada);
    expect(empty.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    // The refused posts claimed nothing: the four first of them still attach.
    const four = await app.gql(`mutation($media: [ID!]) { createPost(text: "four", media: $media) { ${mediaFields} } }`, { media: five.slice(0, 4) }, ada);
    expect(four.data.createPost.media).toHaveLength(4);
  });

  it('attaches an upload to one post only, however many race for it', async () => {
    const id = await uploaded(app, ada, await jpeg());
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => app.gql('mutation($media: [ID!]) { createPost(text: $text, media: $media) { id } }'.replace('$text', `"race ${n}"`), { media: [id] }, ada)),
    );
    expect(answers.filter((answer) => answer.data?.createPost).length).toBe(1);
    expect(answers.filter((answer) => answer.errors).map((answer) => answer.errors![0]!.extensions!.code)).toEqual(Array(4).fill('BAD_USER_INPUT'));
  });

  it('changes alt text for the owner only, before and after the post is published', async () => {
    const id = await uploaded(app, ada, await jpeg(), 'first');
    const before = await app.gql('mutation($id: ID!) { updateMedia(id: $id, alt: "second") { id alt url } }', { id }, ada);
    expect(before.data.updateMedia).toMatchObject({ id, alt: 'second' });
    const post = await app.gql(`mutation($media: [ID!]) { createPost(text: "with alt", media: $media) { id ${mediaFields} } }`, { media: [id] }, ada);
    expect(post.data.createPost.media[0].alt).toBe('second');
    const foreign = await app.gql('mutation($id: ID!) { updateMedia(id: $id, alt: "mine") { id } }', { id }, bea);
    expect(foreign.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    const tooLong = await app.gql('mutation($id: ID!, $alt: String) { updateMedia(id: $id, alt: $alt) { id } }', { id, alt: 'x'.repeat(1501) }, ada);
    expect(tooLong.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const after = await app.gql('mutation($id: ID!) { updateMedia(id: $id, alt: "third") { alt } }', { id }, ada);
    expect(after.data.updateMedia.alt).toBe('third');
    const read = await app.gql(`query($id: ID!) { post(id: $id) { ${mediaFields} } }`, { id: post.data.createPost.id }, bea);
    expect(read.data.post.media[0].alt).toBe('third');
    const cleared = await app.gql('mutation($id: ID!) { updateMedia(id: $id, alt: null) { alt } }', { id }, ada);
    expect(cleared.data.updateMedia.alt).toBeNull();
  });
});

describe('who may see an image', () => {
  let app: TestApp;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    app = await startTestApp({ FANOUT_WORKERS: '1' });
    for (const handle of ['ada', 'bea', 'cal']) tokens[handle] = await app.signUp(handle);
    await app.gql('mutation { follow(handle: "ada") { handle } }', {}, tokens.bea);
  });
  afterAll(() => app?.stop());

  it('hands out a followers-only post’s URLs to followers only, and none answers once the post is deleted', async () => {
    const id = await uploaded(app, tokens.ada!, await jpeg(), 'for friends');
    const post = await app.gql(`mutation($media: [ID!]) { createPost(text: "friends only", visibility: FOLLOWERS, media: $media) { id ${mediaFields} } }`, { media: [id] }, tokens.ada);
    const postId = post.data.createPost.id;
    await app.settled();
    const asFollower = await app.gql(`query($id: ID!) { post(id: $id) { ${mediaFields} } timeline { edges { node { id ${mediaFields} } } } }`, { id: postId }, tokens.bea);
    expect(asFollower.data.post.media[0].alt).toBe('for friends');
    expect(asFollower.data.timeline.edges.map((edge: any) => edge.node.id)).toContain(postId);
    const asStranger = await app.gql(
      `query($id: ID!) { post(id: $id) { ${mediaFields} } timeline { edges { node { id } } } user(handle: "ada") { posts { edges { node { id ${mediaFields} } } } } }`,
      { id: postId },
      tokens.cal,
    );
    expect(asStranger.data.post).toBeNull();
    expect(JSON.stringify(asStranger.data)).not.toContain(id);
    const url = asFollower.data.post.media[0].url;
    expect((await fetch(url)).status).toBe(200);
    // A URL without its signature, the only thing a stranger could make of the id, answers nothing.
    expect((await fetch(url.replace(/\?.*$/, ''))).status).toBe(404);

    const deleted = await app.gql('mutation($id: ID!) { deletePost(id: $id) }', { id: postId }, tokens.ada);
    expect(deleted.data.deletePost).toBe(true);
    expect((await fetch(url)).status).toBe(404);
    expect((await fetch(asFollower.data.post.media[0].previewUrl)).status).toBe(404);
    expect(await app.services.media.media.countDocuments({})).toBe(0);
    expect(await app.database.db.collection('media_bytes.chunks').countDocuments({})).toBe(0);
    expect(await app.database.db.collection('media_bytes.files').countDocuments({})).toBe(0);
  });

  it('never gives a followers-only post’s images to a non-follower it mentions: replies, notifications, live updates', async () => {
    const live = liveClient(app, tokens.cal!);
    try {
      const added = subscribePostAdded(live, `subscription { timelinePostAdded { node { id ${mediaFields} } } }`);
      await subscriptionsOpen(app, 1);
      const parent = (await app.gql('mutation { createPost(text: "a public question") { id } }', {}, tokens.ada)).data.createPost.id;
      const id = await uploaded(app, tokens.ada!, await jpeg(), 'private answer');
      const reply = await app.gql(
        `mutation($parent: ID!, $media: [ID!]) { createPost(text: "for my followers, @cal", replyTo: $parent, visibility: FOLLOWERS, media: $media) { id ${mediaFields} } }`,
        { parent, media: [id] },
        tokens.ada,
      );
      expect(reply.data.createPost.media).toHaveLength(1);
      await app.settled();
      const asStranger = await app.gql(
        `query($parent: ID!) { post(id: $parent) { replies { edges { node { id ${mediaFields} } } } } notifications { edges { node { post { id ${mediaFields} } } } } }`,
        { parent },
        tokens.cal,
      );
      expect(asStranger.errors).toBeUndefined();
      expect(JSON.stringify(asStranger.data)).not.toContain(id);
      expect(JSON.stringify(added.results)).not.toContain(id);
      expect(added.results.map((edge: any) => edge.node.id)).not.toContain(reply.data.createPost.id);
      added.stop();
    } finally {
      await live.dispose();
    }
  });

  it('finds an image by node(id) for its uploader and for whoever may see its post, and for no one else', async () => {
    const id = await uploaded(app, tokens.ada!, await jpeg(), 'found by id');
    const node = 'query($id: ID!) { node(id: $id) { id ... on Media { alt url } } }';
    expect((await app.gql(node, { id }, tokens.ada)).data.node).toMatchObject({ id, alt: 'found by id' });
    expect((await app.gql(node, { id }, tokens.bea)).data.node).toBeNull();
    await app.gql('mutation($media: [ID!]) { createPost(text: "for followers", visibility: FOLLOWERS, media: $media) { id } }', { media: [id] }, tokens.ada);
    const asFollower = (await app.gql(node, { id }, tokens.bea)).data.node;
    expect(asFollower).toMatchObject({ id, alt: 'found by id' });
    expect((await fetch(asFollower.url)).status).toBe(200);
    expect((await app.gql(node, { id }, tokens.cal)).data.node).toBeNull();
    expect((await app.gql(node, { id })).data.node).toBeNull();
  });

  it('answers 404 for every image of an account once it is deleted, attached or not, and deletes their bytes', async () => {
    const token = await app.signUp('dan');
    const attached = await upload(app, token, await jpeg());
    const loose = await upload(app, token, await png());
    await app.gql('mutation($media: [ID!]) { createPost(text: "bye", media: $media) { id } }', { media: [attached.body.id] }, token);
    const deletion = await app.gql('mutation { deleteAccount(password: "correct horse battery") }', {}, token);
    expect(deletion.errors).toBeUndefined();
    for (const url of [attached.body.url, attached.body.previewUrl, loose.body.url]) expect((await fetch(url)).status).toBe(404);
    await app.settled();
    expect(await app.services.media.media.countDocuments({ owner: 'dan' })).toBe(0);
  });
});

describe('limits on uploads', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp({ RATE_LIMIT_UPLOADS_PER_HOUR: '2', MEDIA_ORPHAN_HOURS: '0.0003' });
  });
  afterAll(() => app?.stop());

  it('limits uploads per account per hour with 429 and Retry-After, and counts no refused upload', async () => {
    const token = await app.signUp('eve');
    expect((await upload(app, token, Buffer.from('not an image'))).status).toBe(415);
    expect((await upload(app, token, pngBomb())).status).toBe(413);
    expect((await upload(app, token, await jpeg())).status).toBe(201);
    expect((await upload(app, token, await jpeg())).status).toBe(201);
    const limited = await upload(app, token, await jpeg());
    expect(limited.status).toBe(429);
    expect(limited.body.errors[0].extensions.code).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Another account has its own.
    expect((await upload(app, await app.signUp('fay'), await jpeg())).status).toBe(201);
  });

  it('deletes an upload never attached within MEDIA_ORPHAN_HOURS, with its bytes', async () => {
    const token = await app.signUp('gus');
    const { body } = await upload(app, token, await jpeg());
    expect((await fetch(body.url)).status).toBe(200);
    // 0.0003 hours is about a second; the workers' sweep runs every few seconds.
    const deadline = Date.now() + 15_000;
    while ((await app.services.media.media.countDocuments({ _id: internalId(body.id) })) > 0 && Date.now() < deadline) {
      await app.services.feed.repairStalled();
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await fetch(body.url)).status).toBe(404);
    expect(await app.database.db.collection('media_bytes.files').countDocuments({ 'metadata.media': internalId(body.id) })).toBe(0);
    const attach = await app.gql('mutation($media: [ID!]) { createPost(text: "late", media: $media) { id } }', { media: [body.id] }, token);
    expect(attach.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });
});

describe('serving large images to many readers', () => {
  let app: TestApp;

  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.stop());

  it('streams a 10 MB file to 50 slow readers at once without holding it 50 times', async () => {
    const { ObjectId } = await import('mongodb');
    const size = 10 * 1024 * 1024;
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; i += 4) data.writeUInt32LE((i * 2654435761) >>> 0, i);
    // A stored image as large as MEDIA_MAX_BYTES allows an upload to be: its bytes and its document.
    const media = app.services.media;
    const id = new ObjectId();
    const file = new ObjectId();
    await media.bytes.write([{ id: file, filename: `${id.toHexString()}/full`, data, metadata: {} }]);
    const variant = { file, type: 'image/jpeg' as const, bytes: size, width: 2048, height: 2048, etag: 'large' };
    await media.media.insertOne({ _id: id, owner: 'nobody', state: 'ready', at: new Date(), alt: null, width: 2048, height: 2048, blurhash: 'L00000fQfQfQfQfQfQfQfQfQfQfQ', size, variants: { full: variant, preview: variant } });
    const url = new URL(app.url).origin + media.urls.sign(id, 'full').path;

    const { port } = new URL(app.url);
    const { path } = media.urls.sign(id, 'full');
    globalThis.gc?.();
    const before = process.memoryUsage();
    let started = 0;
    const readers = Array.from({ length: 50 }, () => {
      let resume!: () => void;
      const received = new Promise<number>((resolve, reject) => {
        httpRequest({ port, path }, (response) => {
          let length = 0;
          let paused = false;
          response.on('data', (chunk: Buffer) => {
            length += chunk.length;
            // A slow reader: it takes the first bytes, then nothing until told.
            if (!paused) {
              paused = true;
              started++;
              response.pause();
              resume = () => response.resume();
            }
          });
          response.on('end', () => resolve(length));
          response.on('error', reject);
        })
          .on('error', reject)
          .end();
      });
      return { received, resume: () => resume?.() };
    });
    // Every reader has its first bytes and takes no more: what the server holds for them now is what it buffers.
    while (started < readers.length) await new Promise((resolve) => setTimeout(resolve, 20));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const during = process.memoryUsage();
    // Bytes held in buffers, the server's and these readers' together. Resident memory is not the
    // measure: it counts the same buffers again, and heap the collector has not yet returned.
    const held = during.arrayBuffers - before.arrayBuffers;
    if (process.env.SHOW_MEMORY) console.log(`held while 50 readers wait: ${(held / 1024 / 1024).toFixed(0)} MB in buffers, resident grew ${((during.rss - before.rss) / 1024 / 1024).toFixed(0)} MB`);
    // Buffered whole, 50 readers would hold 500 MB; streamed, a few chunks each (about 1 MB a reader).
    expect(held).toBeLessThan(150 * 1024 * 1024);
    for (const reader of readers) reader.resume();
    expect(await Promise.all(readers.map((reader) => reader.received))).toEqual(Array(50).fill(size));
    const whole = Buffer.from(await (await fetch(url)).arrayBuffer());
    expect(whole.equals(data)).toBe(true);
  }, 60_000);
});
