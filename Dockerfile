# syntax=docker/dockerfile:1.7
#
# gitops-scaffolder: the HTTP service (`gitops-scaffolder serve`).
#
#   docker build -t ghcr.io/kubeopera/gitops-scaffolder:0.1.0 .
#
# The service only talks to PostgreSQL and the Kubernetes API: it needs neither
# git nor kubectl, so its runtime is distroless (no shell, no package manager,
# uid 65532). The scaffold runs use the runner image (Dockerfile.runner).

ARG NODE_IMAGE=node:20-bookworm-slim
ARG RUNTIME_IMAGE=gcr.io/distroless/nodejs20-debian12:nonroot

# ---- build: compile, then drop the dev dependencies ------------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false \
    npm_config_fund=false \
    npm_config_audit=false
COPY package.json package-lock.json ./
# No install scripts: the only dependency with one is esbuild (dev, used by tsx, not by tsc).
RUN --mount=type=cache,target=/root/.npm npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build \
 && npm prune --omit=dev --ignore-scripts

# ---- runtime ---------------------------------------------------------------------------------
FROM ${RUNTIME_IMAGE}
WORKDIR /app
ENV NODE_ENV=production
# Root-owned and read-only to the process: the code cannot be changed at run time.
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY platform ./platform
COPY schemas ./schemas
USER 65532:65532
EXPOSE 8080
# bin "gitops-scaffolder" of package.json
ENTRYPOINT ["/nodejs/bin/node", "/app/dist/src/main.js"]
CMD ["serve"]
