# The feed service, as compose.yaml runs it: `docker build -t feed-service .`
#
# Production needs MONGODB_URI (a replica set for LIVE_EVENTS=change-stream) and JWT_SECRET; the
# embedded MongoDB stand-in, which needs Java and Maven, is for development and is not in the image.

# Production dependencies only, installed where a compiler is at hand: argon2 and sharp (with its
# libvips) ship prebuilt binaries for the common platforms; argon2 builds from source on the others.
FROM node:22-bookworm AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# The image that runs: Node and the sources, no compiler, no package manager, not root.
FROM node:22-bookworm-slim
RUN rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack
WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
COPY package.json tsconfig.json schema.graphql ./
COPY src ./src
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=4000 \
    METRICS_PORT=9464
USER node
# 4000: GraphQL over HTTP and WebSocket; 9464: /metrics, /livez and /readyz, for Prometheus and probes only.
EXPOSE 4000 9464
# /livez on METRICS_PORT, which the API and `worker` both serve: restart a process that no longer answers.
HEALTHCHECK --interval=15s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.METRICS_PORT || process.env.PORT}/livez`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The same command as `npm start`, without npm: node forwards SIGTERM to nothing in between.
CMD ["node", "--max-semi-space-size=64", "--import", "tsx/esm", "src/main.ts"]
