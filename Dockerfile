# Multi-stage build: compile (with the toolchain better-sqlite3 needs), then a slim non-root runtime. One Node version
# for both: better-sqlite3 is built for its ABI, and the build writes V8's code cache (scripts/release/train-code-cache.mjs),
# which another V8 would ignore. Node 24 LTS, the version CI gives the full `npm run test:all` (.ci/test-node24.sh).
ARG NODE_VERSION=24.21.0
FROM node:${NODE_VERSION}-bookworm AS build
WORKDIR /app
# better-sqlite3 12 compiled against the headers of Node 24.19 or newer aborts when the garbage collector frees one of
# its statements (README, Runtime). Its prebuilt addon predates 24.19; should it have to compile, it does so against
# 24.18.1's headers, the same ABI as this Node.
ENV npm_config_target=24.18.1
COPY package.json package-lock.json ./
# The lockfile lists no other platforms' optional builds (see .ci/run), so `npm install`, which honours it, not `npm ci`.
RUN npm install --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY migrations ./migrations
COPY openapi ./openapi
COPY cli ./cli
COPY scripts ./scripts
RUN npm run build && npm prune --omit=dev

FROM node:${NODE_VERSION}-bookworm-slim
ENV NODE_ENV=production PORT=3000 DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# Read at start from the package's folder (src/config/package-root.ts, the folder of package.json), whatever the working
# directory: the GraphQL schema and the form script; the contract, the CLI and the bundle's source map are in dist, the
# docs pages (src/docs/pages) inside the bundle. test/release-copy.e2e-spec.ts starts a copy made by these COPY lines.
COPY src/graphql/schema.graphql ./src/graphql/schema.graphql
COPY src/forms/leads-form.js ./src/forms/leads-form.js
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/api/v1/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/server.mjs"]
