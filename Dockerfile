# Ledgerloop's image: the CLI (worker, codec server) and the downstream services, run from TypeScript through
# bin/register.cjs (esbuild, with a compile cache under /tmp).
#
#   docker build -t ledgerloop:local .
#   docker run --rm ledgerloop:local --help
#
# Used by docker-compose.yml for the worker replicas, the codec server and the wallet service.

# ---- dependencies: native modules (better-sqlite3) may need a compiler when no prebuilt binary fits -------------
FROM node:20-bookworm-slim AS deps
WORKDIR /app
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ ca-certificates \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund

# ---- runtime ------------------------------------------------------------------------------------------------
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=deps /app/node_modules ./node_modules
COPY . .
# /data holds the services' SQLite files (a volume in docker-compose.yml).
RUN mkdir -p /data && chown node:node /data
USER node
ENTRYPOINT ["node", "bin/ledgerloop.cjs"]
CMD ["--help"]
