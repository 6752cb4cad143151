/**
 * What uploads cost and what they do to reading: upload throughput of 12-megapixel JPEGs of about
 * 4 MB sent 4 at a time, and timeline p99 with and without those uploads running. One server
 * process (`npm start`'s entry point) on the embedded database, readers and uploaders in this one.
 * `npm run bench:media -- [--seconds 10] [--readers 8] [--port 4950]`.
 */
import sharp from 'sharp';
import { startServerProcess } from './serverProcess.js';

const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const seconds = argument('seconds', 10);
const readerCount = argument('readers', 8);
const uploadConcurrency = 4;

/** A photo-like 4000 × 3000 JPEG: smooth gradients with noise, at the quality that makes it about 4 MB. */
async function photo(): Promise<Buffer> {
  const width = 4000;
  const height = 3000;
  const pixels = Buffer.alloc(width * height * 3);
  let seed = 7;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      const noise = (seed >> 16) % 48;
      const at = (y * width + x) * 3;
      pixels[at] = ((x * 255) / width + noise) & 0xff;
      pixels[at + 1] = ((y * 255) / height + noise) & 0xff;
      pixels[at + 2] = (((x + y) * 128) / width + noise) & 0xff;
    }
  }
  return sharp(pixels, { raw: { width, height, channels: 3 } }).jpeg({ quality: 80 }).toBuffer();
}

const server = await startServerProcess({
  PORT: String(argument('port', 4950)),
  DATA_DIR: ':memory:',
  FEED_STRATEGY: 'cache',
  LOG_LEVEL: 'warn',
  RATE_LIMIT_UPLOADS_PER_HOUR: '1000000',
  RATE_LIMIT_POSTS_PER_MINUTE: '1000000',
  RATE_LIMIT_SIGNUPS_PER_ADDRESS: '1000000',
});
const origin = new URL(server.url).origin;

async function gql(query: string, token?: string): Promise<any> {
  const response = await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query }),
  });
  const body = (await response.json()) as { data?: any; errors?: unknown[] };
  if (body.errors) throw new Error(JSON.stringify(body.errors));
  return body.data;
}

const signUp = async (handle: string) => (await gql(`mutation { signUp(handle: "${handle}", password: "correct horse battery") { token } }`)).signUp.token as string;

function percentile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
}

try {
  const image = await photo();
  const metadata = await sharp(image).metadata();
  const authors = await Promise.all(Array.from({ length: 10 }, (_, i) => signUp(`author_${i}`)));
  const readers = await Promise.all(Array.from({ length: readerCount }, (_, i) => signUp(`reader_${i}`)));
  for (const token of readers) for (let i = 0; i < authors.length; i++) await gql(`mutation { follow(handle: "author_${i}") { handle } }`, token);
  for (let round = 0; round < 5; round++) for (const token of authors) await gql(`mutation { createPost(text: "post ${round}") { id } }`, token);
  const uploader = await signUp('uploader');

  /** Timeline pages read back to back by every reader until `until`: each page's latency. */
  async function readTimelines(until: number): Promise<number[]> {
    const latencies: number[] = [];
    await Promise.all(
      readers.map(async (token) => {
        while (Date.now() < until) {
          const started = performance.now();
          await gql('{ timeline(first: 20) { edges { node { id text author { handle } media { url alt } } } } }', token);
          latencies.push(performance.now() - started);
        }
      }),
    );
    return latencies;
  }

  /** Uploads sent 4 at a time until `until`: each one's latency. */
  async function upload(until: number): Promise<number[]> {
    const latencies: number[] = [];
    await Promise.all(
      Array.from({ length: uploadConcurrency }, async () => {
        while (Date.now() < until) {
          const form = new FormData();
          form.append('file', new Blob([new Uint8Array(image)]), 'photo.jpg');
          const started = performance.now();
          const response = await fetch(`${origin}/media`, { method: 'POST', headers: { authorization: `Bearer ${uploader}` }, body: form });
          if (response.status !== 201) throw new Error(`upload answered ${response.status}: ${await response.text()}`);
          latencies.push(performance.now() - started);
        }
      }),
    );
    return latencies;
  }

  await readTimelines(Date.now() + 2000); // warm-up
  const quiet = await readTimelines(Date.now() + seconds * 1000);
  const until = Date.now() + seconds * 1000;
  const [busy, uploads] = await Promise.all([readTimelines(until), upload(until)]);

  const mb = image.length / 1024 / 1024;
  console.log(`\n${metadata.width} × ${metadata.height} JPEG of ${mb.toFixed(1)} MB, ${uploadConcurrency} uploads at a time; ${readerCount} readers; ${seconds} s each\n`);
  console.log('| | uploads/s | MB/s in | upload p50 / p99 ms | timeline pages/s | timeline p50 / p99 ms |');
  console.log('|---|--:|--:|--:|--:|--:|');
  const row = (name: string, pages: number[], sent: number[]) =>
    console.log(
      `| ${name} | ${sent.length ? (sent.length / seconds).toFixed(1) : '–'} | ${sent.length ? ((sent.length * mb) / seconds).toFixed(1) : '–'} | ${
        sent.length ? `${percentile(sent, 0.5).toFixed(0)} / ${percentile(sent, 0.99).toFixed(0)}` : '–'
      } | ${(pages.length / seconds).toFixed(0)} | ${percentile(pages, 0.5).toFixed(1)} / ${percentile(pages, 0.99).toFixed(1)} |`,
    );
  row('timelines alone', quiet, []);
  row('timelines while uploading', busy, uploads);
} finally {
  await server.stop();
}
