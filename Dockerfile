# syntax=docker/dockerfile:1
# es-lock-proxy: the build stage compiles TypeScript and our ZooKeeper addon (native/), which
# links the official C client that the `zookeeper` package builds from its bundled sources
# (python3, make and g++ are needed here only).
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
# npm ci builds the C client (zookeeper's install script), then our addon (our postinstall).
COPY native ./native
COPY scripts/build-native.mjs ./scripts/
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

# Runtime stage: same base image, so the addon built above loads as is (the C client is linked
# into it statically; no toolchain here).
FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/native/build/Release/es_lock_proxy_zk.node ./native/build/Release/es_lock_proxy_zk.node
COPY config ./config
# The dead-letter queue: proxy.deadletter.dir defaults to data/dead-letter, relative to the working
# directory /app. Created and owned by `node` BEFORE the VOLUME line (later changes to a volume path
# are discarded), so a new volume starts writable. Declared a volume so dead letters outlive the
# container even without an explicit mount; mount your own volume there (or at the directory you
# configure instead).
RUN mkdir -p /app/data/dead-letter && chown -R node:node /app/data
VOLUME ["/app/data/dead-letter"]
USER node
# 9201: the Elasticsearch-facing port. 9202: admin (/healthz, /readyz), bound to 127.0.0.1 by default.
EXPOSE 9201
HEALTHCHECK --interval=10s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:9202/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# V8 flags: src/cli/node-flags.ts says which and why (npm start and the bench pass the same).
CMD ["node", "--max-semi-space-size=64", "dist/cli/main.js", "start", "--config", "/app/config/elasticsearch-details.properties"]
