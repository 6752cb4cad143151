/**
 * `npm run example:web`: serves the reference web client on its own origin (default
 * http://localhost:4100) next to the API, which it starts as `npm start` does (same environment,
 * default port 4000) unless `--api <url>` names one already running. The page reaches the API
 * across origins, as a deployed web app would; in development the API allows any localhost origin.
 *
 * esbuild bundles the client's TypeScript on the first request and keeps the result: no build step,
 * no watcher, no bundler configuration.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = dirname(fileURLToPath(import.meta.url));
const repository = join(root, '..', '..');

export interface WebClientServer {
  /** Where the client is served, e.g. http://localhost:4100/. */
  url: string;
  server: Server;
  stop(): Promise<void>;
}

/** Serves the client for the API at `apiUrl` on `port` (0 picks one). */
export async function serveWebClient(apiUrl: string, port: number, host = 'localhost'): Promise<WebClientServer> {
  let bundle: Promise<string> | null = null;
  const script = () =>
    (bundle ??= build({
      entryPoints: [join(root, 'src', 'main.ts')],
      bundle: true,
      format: 'esm',
      target: 'es2022',
      write: false,
      minify: true,
      // Apollo Client's development checks read process.env.NODE_ENV.
      define: { 'process.env.NODE_ENV': '"production"' },
      logLevel: 'silent',
    }).then((result) => result.outputFiles[0]!.text));

  const server = createServer(async (request, response) => {
    try {
      const path = new URL(request.url ?? '/', 'http://localhost').pathname;
      if (path === '/main.js') return send(response, 'text/javascript', await script());
      if (path === '/favicon.svg' || path === '/favicon.ico') return send(response, 'image/svg+xml', await readFile(join(root, 'favicon.svg'), 'utf8'));
      if (path === '/style.css') return send(response, 'text/css', await readFile(join(root, 'style.css'), 'utf8'));
      if (path === '/' || path === '/index.html') {
        const html = await readFile(join(root, 'index.html'), 'utf8');
        const config = `<script>window.FEED_API_URL = ${JSON.stringify(apiUrl).replace(/</g, '\\u003c')};</script>`;
        return send(response, 'text/html; charset=utf-8', html.replace('</head>', `${config}\n  </head>`));
      }
      response.writeHead(404).end('not found');
    } catch (error) {
      response.writeHead(500, { 'content-type': 'text/plain' }).end(String(error));
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const { port: actual } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${actual}/`,
    server,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function send(response: import('node:http').ServerResponse, type: string, body: string): void {
  response.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' }).end(body);
}

/** The API this example starts stopped before it listened; it has said why on stderr. */
class ApiDidNotStart extends Error {
  constructor(code: number | null) {
    super(
      `the API exited (code ${String(code)}) before it listened; its reason is above. If one is already ` +
        'running (npm start), point the client at it: npm run example:web -- --api http://localhost:4000/graphql',
    );
  }
}

/**
 * `npm start` as a child process; resolves with its GraphQL URL once it listens. It knows the
 * client's trusted documents (unless TRUSTED_DOCUMENTS says otherwise), so the client's hashes are
 * found at once instead of learned as automatic persisted queries.
 */
function startApi(): Promise<{ child: ChildProcess; url: string }> {
  const env = { TRUSTED_DOCUMENTS: join(root, 'src', 'gql', 'persisted-documents.json'), ...process.env };
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], { cwd: repository, env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      output += chunk.toString();
      const match = /listening on \S+: (http:\/\/\S+\/graphql)/.exec(output);
      if (match) resolve({ child, url: match[1]! });
    });
    child.once('exit', (code) => reject(new ApiDidNotStart(code)));
  });
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { port: { type: 'string', default: '4100' }, api: { type: 'string' } } });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`--port must be 0 to 65535, not ${values.port}`);
  const api = values.api ? { child: null, url: values.api } : await startApi();
  const web = await serveWebClient(api.url, port);
  console.log(`reference web client on ${web.url} (API ${api.url}); Ctrl+C stops both`);
  const stop = () => {
    api.child?.kill('SIGTERM');
    void web.stop().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((error: unknown) => {
    // What went wrong is already said; a stack trace would only bury it.
    console.error(error instanceof ApiDidNotStart ? `web client: ${error.message}` : error);
    process.exit(1);
  });
}
