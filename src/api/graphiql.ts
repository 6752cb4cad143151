/**
 * Self-hosted GraphiQL IDE for `GET /graphql` (browser navigation).
 *
 * Why this shape:
 * - Apollo's default landing page pulls its UI from a CDN; this page must work
 *   with NO request leaving the machine. `@graphql-yoga/render-graphiql` ships a
 *   prebuilt, self-contained GraphiQL 5 bundle (React, Monaco editor + its web
 *   workers, CSS, favicon) as plain strings, so everything is inlined into one
 *   HTML document: no extra routes, no static-file serving, no front-end build.
 * - We do not use that package's `renderGraphiQL()` because it JSON-serialises
 *   its options, so it cannot take a custom fetcher. Its default fetcher speaks
 *   SSE for subscriptions and would never put the headers tab's Authorization
 *   into graphql-ws `connectionParams`. Instead we reuse its asset strings
 *   (`@graphql-yoga/render-graphiql/graphiql`) and pass our own fetcher:
 *     - queries/mutations: `POST` JSON to the endpoint with the headers tab's
 *       headers (`Content-Type: application/json` also satisfies Apollo's CSRF
 *       prevention);
 *     - subscriptions: graphql-ws client (protocol `graphql-transport-ws`),
 *       same path, ws:/wss: derived from `location`, with
 *       `connectionParams: { authorization }` taken from the headers tab.
 *   The graphql-ws browser client is the UMD build shipped inside the
 *   `graphql-ws` package the server already depends on (about 10 kB), so the
 *   client always matches the server's protocol version.
 *
 * The page is about 9 MB of inline JS/CSS; it is built once per option set and
 * cached in memory. It uses inline <script>/<style> and blob: web workers, so a
 * Content-Security-Policy (e.g. helmet) must be relaxed for this response.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import {
  css,
  editorWorkerService,
  favicon,
  graphqlWorker,
  js as graphiqlBundle,
  jsonWorker,
} from '@graphql-yoga/render-graphiql/graphiql';

export interface GraphiqlPageOptions {
  /** GraphQL endpoint, absolute or relative to the page (e.g. `/graphql`). */
  endpoint: string;
  /** Browser tab title and logo text. */
  title?: string;
}

// `umd/` is not in graphql-ws's package "exports", so resolve the package root
// through its exported package.json and read the file directly.
const require = createRequire(import.meta.url);
const graphqlWsClientUmd = readFileSync(
  join(dirname(require.resolve('graphql-ws/package.json')), 'umd', 'graphql-ws.min.js'),
  'utf8',
);

/** Make a string safe inside an HTML text node / attribute. */
function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** JSON for embedding in a <script>: `<` escaped so data can never close the tag. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

/**
 * Browser-side glue (plain ES2020, runs after the GraphiQL bundle and the
 * graphql-ws UMD, which define the `YogaGraphiQL` and `graphqlWs` globals).
 * `__CONFIG__` is replaced with `{ endpoint, titleHtml, defaultQuery }`.
 */
const bootScript = String.raw`
(function () {
  var config = __CONFIG__;
  var httpUrl = new URL(config.endpoint, location.href);
  var wsUrl = new URL(httpUrl.href);
  wsUrl.protocol = httpUrl.protocol === 'https:' ? 'wss:' : 'ws:';

  // Monaco loads its workers from blob: URLs made from the inlined sources.
  function workerUrl(source) {
    return URL.createObjectURL(new Blob([source], { type: 'application/javascript' }));
  }
  var workers = {
    editorWorkerService: workerUrl(__EDITOR_WORKER__),
    json: workerUrl(__JSON_WORKER__),
    graphql: workerUrl(__GRAPHQL_WORKER__),
  };
  self.MonacoEnvironment = {
    globalAPI: false,
    getWorkerUrl: function (_moduleId, label) { return workers[label]; },
  };

  function headerValue(headers, name) {
    if (!headers) return undefined;
    for (var key in headers) {
      if (key.toLowerCase() === name && headers[key] != null) return String(headers[key]);
    }
    return undefined;
  }

  // Operation type of the operation GraphiQL is about to run, from the query
  // text itself (GraphiQL's documentAST can lag behind the editor). Collects
  // the text of each top-level definition before its selection set, skipping
  // strings, comments and bracketed parts (variables, directive arguments).
  function isSubscription(query, operationName) {
    var src = String(query || '').replace(/"""[\s\S]*?"""|"(?:[^"\\\n]|\\.)*"|#[^\n\r]*/g, ' ');
    var heads = [], head = '', depth = 0;
    for (var i = 0; i < src.length; i++) {
      var c = src[i];
      if (c === '{' || c === '(' || c === '[') {
        if (depth === 0 && c === '{') { heads.push(head); head = ''; }
        depth++;
      } else if (c === '}' || c === ')' || c === ']') depth--;
      else if (depth === 0) head += c;
    }
    var ops = heads
      .map(function (h) { return /^\s*(query|mutation|subscription|fragment)?\s*([_A-Za-z][_0-9A-Za-z]*)?/.exec(h); })
      .filter(function (m) { return m[1] !== 'fragment'; })
      .map(function (m) { return { type: m[1] || 'query', name: m[2] }; });
    var op = operationName
      ? ops.find(function (o) { return o.name === operationName; })
      : ops[0];
    return !!op && op.type === 'subscription';
  }

  function errorResult(message) {
    return { errors: [{ message: message }] };
  }

  async function httpFetch(params, headers) {
    var response = await fetch(httpUrl.href, {
      method: 'POST',
      credentials: 'same-origin',
      headers: Object.assign(
        { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
        headers || {},
      ),
      body: JSON.stringify(params),
    });
    var text = await response.text();
    try {
      return JSON.parse(text);
    } catch (_e) {
      return errorResult('HTTP ' + response.status + ': ' + text.slice(0, 500));
    }
  }

  // One graphql-ws client per subscription: the socket opens with the token
  // currently in the headers tab and closes when the subscription ends.
  async function* wsSubscribe(params, headers) {
    var authorization = headerValue(headers, 'authorization');
    var client = graphqlWs.createClient({
      url: wsUrl.href,
      lazy: true,
      retryAttempts: 0,
      connectionParams: authorization ? { authorization: authorization } : {},
    });
    try {
      for await (var result of client.iterate(params)) yield result;
    } catch (err) {
      // graphql-ws throws a CloseEvent (e.g. 4403 Forbidden) or an error list.
      var message = err && err.code
        ? 'WebSocket closed ' + err.code + (err.reason ? ': ' + err.reason : '')
        : Array.isArray(err) ? err.map(function (e) { return e.message; }).join('; ')
        : String((err && err.message) || err);
      yield errorResult(message);
    } finally {
      client.dispose();
    }
  }

  function fetcher(params, opts) {
    var headers = (opts && opts.headers) || {};
    return isSubscription(params.query, params.operationName)
      ? wsSubscribe(params, headers)
      : httpFetch(params, headers);
  }

  YogaGraphiQL.renderYogaGraphiQL(document.getElementById('root'), {
    title: config.titleHtml,
    defaultQuery: config.defaultQuery,
    fetcher: fetcher,
  });
})();
`;

const cache = new Map<string, string>();

/** Full HTML document for the GraphiQL IDE; no external resources. */
export function graphiqlPage(options: GraphiqlPageOptions): string {
  const title = options.title ?? 'GraphiQL';
  const key = JSON.stringify([options.endpoint, title]);
  const cached = cache.get(key);
  if (cached !== undefined) return cached;

  // Function replacers: the inlined sources contain `$` sequences that a
  // string replacement would interpret.
  // Our own welcome text replaces Yoga's (which would show `titleHtml`'s
  // entities verbatim); YogaGraphiQL renders `title` as HTML in the logo.
  const defaultQuery = [
    `# ${title}`,
    '#',
    '# Run: Ctrl-Enter. Autocomplete: Ctrl-Space.',
    '# Auth: in the Headers tab enter {"Authorization": "Bearer <token>"};',
    '# it is sent as an HTTP header and, for subscriptions, as the',
    '# graphql-ws connectionParams { "authorization": "Bearer <token>" }.',
    '',
    '{',
    '  __typename',
    '}',
    '',
  ].join('\n');
  const config = { endpoint: options.endpoint, titleHtml: escapeHtml(title), defaultQuery };
  const boot = bootScript
    .replace('__CONFIG__', () => scriptJson(config))
    .replace('__EDITOR_WORKER__', () => scriptJson(editorWorkerService))
    .replace('__JSON_WORKER__', () => scriptJson(jsonWorker))
    .replace('__GRAPHQL_WORKER__', () => scriptJson(graphqlWorker));

  const html = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="${favicon}" />
    <style>${css}</style>
  </head>
  <body id="body" class="no-focus-outline">
    <noscript>You need to enable JavaScript to use GraphiQL.</noscript>
    <div id="root"></div>
    <script>${graphiqlBundle}</script>
    <script>${graphqlWsClientUmd}</script>
    <script>${boot}</script>
  </body>
</html>
`;
  cache.set(key, html);
  return html;
}
