/**
 * A bare `node:http` server for `npm run bench:socialite`: it answers each timeline request with the
 * bytes this API answered it with before (`<pages.json> <port>`: a map from the request's
 * authorization and body to the page), so its rate is what one Node process serves with no GraphQL,
 * no database and no work at all: the ceiling the API's own rate is compared with.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [pagesFile, port] = process.argv.slice(2);
const pages = new Map<string, string>(Object.entries(JSON.parse(readFileSync(pagesFile!, 'utf8')) as Record<string, string>));
const firstPages = new Map<string, string>();
for (const [key, page] of pages) {
  const authorization = key.slice(0, key.indexOf('\n'));
  if (!firstPages.has(authorization)) firstPages.set(authorization, page);
}

const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const authorization = request.headers.authorization ?? '';
    const page = pages.get(`${authorization}\n${Buffer.concat(chunks).toString('utf8')}`) ?? firstPages.get(authorization);
    if (page === undefined) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(page) }).end(page);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port), '127.0.0.1', () => process.stdout.write('listening\n'));
